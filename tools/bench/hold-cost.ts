import { randomUUID } from 'node:crypto';
import type { BatchRepository } from '../../domain/ports';
import { addBatch } from '../../domain/services';
import { createAllocationsHandler } from '../../functions/allocations';
import type { HttpResult } from '../../functions/http/route';
import { lambdaContext, postEvent, routeEvent } from '../../test/support/events';
import { type RequestCostMeter, type StoreCall, unitsOf } from './request-cost';
import { median } from './stats';

export interface HoldCost {
  /** `place`: POST /holds; `confirm`: POST /holds/{holdid}/confirm, of a hold placed just before. */
  readonly action: 'place' | 'confirm';
  readonly lines: number;
  readonly medianMilliseconds: number;
  /** Read and write units of one request as DynamoDB Local reports them, and its store calls by operation. */
  readonly readUnits: number;
  readonly writeUnits: number;
  readonly calls: Readonly<Record<string, number>>;
}

/** An allocate on a SKU whose one batch carries holds, some of them expired, as the handler makes it. */
export interface AllocateUnderHolds {
  readonly activeHolds: number;
  readonly expiredHolds: number;
  readonly calls: StoreCall[];
}

/** Enough requests of each kind for a median that one slow moment does not move. */
const REQUESTS_PER_SIZE = 15;

const READS = ['GetItem', 'Query', 'BatchGetItem'];
const WRITES = ['TransactWriteItems'];

const expectStatus = (result: HttpResult, statusCode: number, what: string) => {
  if (result.statusCode !== statusCode) throw new Error(`${what} answered ${result.statusCode}: ${result.body}`);
};

const byOperation = (calls: readonly StoreCall[]): Record<string, number> =>
  Object.fromEntries([...Map.groupBy(calls, ({ operation }) => operation)].map(([operation, some]) => [operation, some.length]));

/** SKUs of their own, each with one batch in stock that no hold of the bench empties. */
const skusInStock = async (repository: BatchRepository, count: number): Promise<string[]> => {
  const skus = Array.from({ length: count }, () => `sku-${randomUUID()}`);
  for (const sku of skus) await addBatch({ ref: `${sku}-batch`, sku, qty: 1_000_000, eta: null }, repository);
  return skus;
};

/**
 * Holds of `lines` lines (each line a SKU of its own, its batch with stock to spare), placed one
 * after the other through the allocations handler, then each confirmed to an order of its own: the
 * median time of one request of each, and the units and calls of one. A confirm that leaves its
 * batch with stock is the one-round case (docs/api.md, "Holds", Cost).
 */
export const measureHolds = async (repository: BatchRepository, meter: RequestCostMeter, lines: number): Promise<HoldCost[]> => {
  const handler = createAllocationsHandler(repository);
  const skus = await skusInStock(repository, lines);
  const holdids = Array.from({ length: REQUESTS_PER_SIZE }, () => `cart-${randomUUID()}`);

  const measure = async (action: HoldCost['action'], request: (holdid: string) => Promise<HttpResult>, status: number): Promise<HoldCost> => {
    const milliseconds: number[] = [];
    let calls: StoreCall[] = [];
    for (const holdid of holdids) {
      meter.takeCalls();
      const startedAt = performance.now();
      expectStatus(await request(holdid), status, `${action} hold`);
      milliseconds.push(performance.now() - startedAt);
      calls = meter.takeCalls();
    }
    return { action, lines, medianMilliseconds: median(milliseconds), readUnits: unitsOf(calls, READS), writeUnits: unitsOf(calls, WRITES), calls: byOperation(calls) };
  };

  const place = await measure(
    'place',
    (holdid) => handler(postEvent('/holds', { holdid, lines: skus.map((sku) => ({ sku, qty: 1 })), ttlSeconds: 600 }), lambdaContext()),
    201,
  );
  const confirm = await measure(
    'confirm',
    (holdid) =>
      handler(routeEvent('POST /holds/{holdid}/confirm', { pathParameters: { holdid }, body: { orderid: `order-${randomUUID()}` } }), lambdaContext()),
    201,
  );
  return [place, confirm];
};

/**
 * A SKU whose one batch carries `activeHolds` holds still running and `expiredHolds` whose time has
 * passed with nothing run since (placed by a repository whose clock is an hour behind): then one
 * allocate of it through the allocations handler, which takes free units and reads none of the
 * holds. Its store calls.
 */
export const measureAllocateUnderHolds = async (
  repository: BatchRepository,
  repositoryAnHourAgo: BatchRepository,
  meter: RequestCostMeter,
  { activeHolds, expiredHolds }: { activeHolds: number; expiredHolds: number },
): Promise<AllocateUnderHolds> => {
  const [sku = ''] = await skusInStock(repository, 1);
  const hold = (placer: BatchRepository, ttlSeconds: number) => async () =>
    expectStatus(
      await createAllocationsHandler(placer)(postEvent('/holds', { holdid: `cart-${randomUUID()}`, lines: [{ sku, qty: 1 }], ttlSeconds }), lambdaContext()),
      201,
      'place hold',
    );
  for (let index = 0; index < expiredHolds; index++) await hold(repositoryAnHourAgo, 60)();
  for (let index = 0; index < activeHolds; index++) await hold(repository, 3_600)();

  meter.takeCalls();
  const allocate = createAllocationsHandler(repository);
  expectStatus(await allocate(postEvent('/allocate', { orderid: `order-${randomUUID()}`, sku, qty: 1 }), lambdaContext()), 201, 'allocate');
  const calls = meter.takeCalls();
  // The case measured is the one meant: a batch with free units is taken from without reading its holds,
  // so the expired holds' units stay counted until a request needs them or the sweeper ends them.
  const left = (await repository.batch(`${sku}-batch`, sku))?.held ?? 0;
  if (left !== activeHolds + expiredHolds) throw new Error(`The batch counts ${left} held units after the allocate, not ${activeHolds + expiredHolds}`);
  return { activeHolds, expiredHolds, calls };
};
