import { randomUUID } from 'node:crypto';
import type { BatchRepository } from '../../domain/ports';
import { addBatch } from '../../domain/services';
import { allocateOrder } from '../../domain/order-services';
import { type RequestCostMeter, unitsOf } from './request-cost';
import { median } from './stats';

export interface OrderCost {
  readonly lines: number;
  readonly medianMilliseconds: number;
  /** Read and write units of one order as DynamoDB Local reports them, and its store calls. */
  readonly readUnits: number;
  readonly writeUnits: number;
  readonly calls: number;
}

/** Enough orders of each size for a median that one slow moment does not move. */
const ORDERS_PER_SIZE = 15;

/**
 * Whole orders of `lines` lines, each line a SKU of its own with stock to spare, allocated one
 * after the other the way the allocations handler does (domain/order-services.ts, allocateOrder): the
 * median time of one order, and the units and calls of one.
 */
export const measureOrders = async (repository: BatchRepository, meter: RequestCostMeter, lines: number): Promise<OrderCost> => {
  const skus = Array.from({ length: lines }, () => `sku-${randomUUID()}`);
  for (const sku of skus) await addBatch({ ref: `${sku}-batch`, sku, qty: 1_000_000, eta: null }, repository);
  const milliseconds: number[] = [];
  let calls = meter.takeCalls();
  for (let index = 0; index < ORDERS_PER_SIZE; index++) {
    meter.takeCalls();
    const startedAt = performance.now();
    await allocateOrder({ orderid: `order-${randomUUID()}`, lines: skus.map((sku) => ({ sku, qty: 1 })) }, repository);
    milliseconds.push(performance.now() - startedAt);
    calls = meter.takeCalls();
  }
  return {
    lines,
    medianMilliseconds: median(milliseconds),
    readUnits: unitsOf(calls, ['Query']),
    writeUnits: unitsOf(calls, ['TransactWriteItems']),
    calls: calls.length,
  };
};
