import { randomUUID } from 'node:crypto';
import type { BatchRepository } from '../../domain/ports';
import { changeBatch } from '../../domain/batch-changes';
import { addBatch, allocate } from '../../domain/services';
import { type RequestCostMeter, unitsOf } from './request-cost';

export interface PatchCost {
  readonly linesMoved: number;
  readonly milliseconds: number;
  /** The store calls of the PATCH, by operation. */
  readonly calls: Readonly<Record<string, number>>;
  /** Read and write units as DynamoDB Local reports them, per line moved. */
  readonly readUnitsPerLine: number;
  readonly writeUnitsPerLine: number;
}

/**
 * A batch holding `lines` lines of 1 unit, and a second batch with room for all of them; then one
 * PATCH to qty 0, which moves every line to the second batch. Timed and metered from the change's
 * first read to its answer, the way the batches handler runs it (domain/batch-changes.ts, changeBatch).
 */
export const measurePatchMoving = async (repository: BatchRepository, meter: RequestCostMeter, lines: number): Promise<PatchCost> => {
  const sku = `sku-${randomUUID()}`;
  const shrinking = `${sku}-shrinking`;
  await addBatch({ ref: shrinking, sku, qty: lines, eta: null }, repository);
  for (let index = 0; index < lines; index++) await allocate({ orderid: `order-${randomUUID()}`, sku, qty: 1 }, repository);
  await addBatch({ ref: `${sku}-room`, sku, qty: lines, eta: '2030-01-01' }, repository);

  meter.takeCalls();
  const startedAt = performance.now();
  const { reallocated } = await changeBatch(shrinking, { qty: 0 }, repository);
  const milliseconds = performance.now() - startedAt;
  const calls = meter.takeCalls();
  if (reallocated.length !== lines) throw new Error(`The PATCH moved ${reallocated.length} lines, not ${lines}`);

  return {
    linesMoved: reallocated.length,
    milliseconds,
    calls: Object.fromEntries([...Map.groupBy(calls, ({ operation }) => operation)].map(([operation, some]) => [operation, some.length])),
    readUnitsPerLine: unitsOf(calls, ['Query', 'GetItem', 'BatchGetItem']) / lines,
    writeUnitsPerLine: unitsOf(calls, ['TransactWriteItems']) / lines,
  };
};
