import { randomUUID } from 'node:crypto';
import type { BatchRepository } from '../../domain/ports';
import { addBatch } from '../../domain/services';
import { createAllocationsHandler } from '../../functions/allocations';
import { createBatchesHandler } from '../../functions/batches';
import type { HttpResult } from '../../functions/http/route';
import { lambdaContext, postEvent, routeEvent } from '../../test/support/events';
import { type RequestCostMeter, type StoreCall, unitsOf } from './request-cost';
import { median } from './stats';

/** The median time of requests of one kind, and what the last of them cost the store. */
export interface RequestsCost {
  readonly medianMilliseconds: number;
  /** Read and write units of one request as DynamoDB Local reports them, and its store calls by operation. */
  readonly readUnits: number;
  readonly writeUnits: number;
  readonly calls: Readonly<Record<string, number>>;
}

export interface HoldCost extends RequestsCost {
  /** `place`: POST /holds; `confirm`: POST /holds/{holdid}/confirm, of a hold placed just before. */
  readonly action: 'place' | 'confirm';
  readonly lines: number;
}

/**
 * Requests on one batch that carries `activeHolds` holds besides: a hold of one line on it placed,
 * confirmed, released (DELETE /holds/{holdid}), and an allocate of 1 from it.
 */
export interface CostUnderActiveHolds {
  readonly activeHolds: number;
  /** How long storing the `activeHolds` holds took (storeActiveHolds). */
  readonly seedSeconds: number;
  /** Requests of each kind measured; `place` twice as many, one hold confirmed and one released each time. */
  readonly requests: number;
  readonly costs: readonly (RequestsCost & { readonly action: 'place' | 'confirm' | 'release' | 'allocate' })[];
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

/** Requests of one kind, timed one by one, `status` expected of each: their median time, and the units and calls of the last. */
const timedRequests = (meter: RequestCostMeter, what: string, status: number) => {
  const milliseconds: number[] = [];
  let calls: StoreCall[] = [];
  return {
    time: async (request: () => Promise<HttpResult>) => {
      meter.takeCalls();
      const startedAt = performance.now();
      expectStatus(await request(), status, what);
      milliseconds.push(performance.now() - startedAt);
      calls = meter.takeCalls();
    },
    cost: (): RequestsCost => ({
      medianMilliseconds: median(milliseconds),
      readUnits: unitsOf(calls, READS),
      writeUnits: unitsOf(calls, WRITES),
      calls: byOperation(calls),
    }),
  };
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
    const requests = timedRequests(meter, `${action} hold`, status);
    for (const holdid of holdids) await requests.time(() => request(holdid));
    return { action, lines, ...requests.cost() };
  };

  const place = await measure(
    'place',
    (holdid) => handler(postEvent('/holds', { holdid, lines: skus.map((sku) => ({ sku, qty: 1 })), ttl_seconds: 600 }), lambdaContext()),
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
      await createAllocationsHandler(placer)(postEvent('/holds', { holdid: `cart-${randomUUID()}`, lines: [{ sku, qty: 1 }], ttl_seconds: ttlSeconds }), lambdaContext()),
      201,
      'place hold',
    );
  for (let index = 0; index < expiredHolds; index++) await hold(repositoryAnHourAgo, 60)();
  for (let index = 0; index < activeHolds; index++) await hold(repository, 3_600)();

  // A warm process, which read the locations it routes by within 30 s, as every allocation but one in 30 s finds it.
  await repository.routingLocations();
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

/**
 * For each count, a SKU whose one batch carries that many active holds of 1 unit, lasting an hour,
 * stored by `storeHolds` (tools/bench/stored-holds.ts). Then, round after round, on each batch in
 * turn: a hold of 1 unit placed and confirmed, one placed and released, and an allocate of 1, each
 * through the allocations handler, so that every request measured meets its batch with its holds
 * (and its own). The rounds take the batches in turn so that a slower moment of a shared machine
 * falls on both alike. The median time of each, and the units and calls of one. GET /batches/{ref}
 * must read the stored holds' units still held afterwards: the case measured is the one meant.
 */
export const measureUnderActiveHolds = async (
  repository: BatchRepository,
  meter: RequestCostMeter,
  activeHoldCounts: readonly number[],
  storeHolds: (batch: { sku: string; ref: string }, holdids: string[], expiresAt: string) => Promise<void>,
): Promise<CostUnderActiveHolds[]> => {
  const handler = createAllocationsHandler(repository);
  const skus = await skusInStock(repository, activeHoldCounts.length);
  const batches = [];
  for (const [index, activeHolds] of activeHoldCounts.entries()) {
    const sku = skus[index] as string;
    const startedAt = performance.now();
    const holdids = Array.from({ length: activeHolds }, () => `seed-${randomUUID()}`);
    await storeHolds({ sku, ref: `${sku}-batch` }, holdids, new Date(Date.now() + 3_600_000).toISOString());
    const requests = {
      place: timedRequests(meter, 'place hold', 201),
      confirm: timedRequests(meter, 'confirm hold', 201),
      release: timedRequests(meter, 'release hold', 204),
      allocate: timedRequests(meter, 'allocate', 201),
    };
    batches.push({ sku, activeHolds, seedSeconds: (performance.now() - startedAt) / 1000, requests });
  }

  for (let round = 0; round < REQUESTS_PER_SIZE; round++) {
    for (const { sku, requests } of batches) {
      const place = (holdid: string) => () => handler(postEvent('/holds', { holdid, lines: [{ sku, qty: 1 }], ttl_seconds: 600 }), lambdaContext());
      const confirmed = `cart-${randomUUID()}`;
      await requests.place.time(place(confirmed));
      const confirm = { pathParameters: { holdid: confirmed }, body: { orderid: `order-${randomUUID()}` } };
      await requests.confirm.time(() => handler(routeEvent('POST /holds/{holdid}/confirm', confirm), lambdaContext()));
      const released = `cart-${randomUUID()}`;
      await requests.place.time(place(released));
      await requests.release.time(() => handler(routeEvent('DELETE /holds/{holdid}', { pathParameters: { holdid: released } }), lambdaContext()));
      await requests.allocate.time(() => handler(postEvent('/allocate', { orderid: `order-${randomUUID()}`, sku, qty: 1 }), lambdaContext()));
    }
  }

  const readBatch = createBatchesHandler(repository);
  for (const { sku, activeHolds } of batches) {
    const read = await readBatch(routeEvent('GET /batches/{ref}', { pathParameters: { ref: `${sku}-batch` } }), lambdaContext());
    expectStatus(read, 200, 'GET /batches/{ref}');
    const { held } = JSON.parse(read.body ?? '{}') as { held: number };
    if (held !== activeHolds) throw new Error(`The batch holds ${held} units after the requests, not the ${activeHolds} of its stored holds`);
  }
  return batches.map(({ activeHolds, seedSeconds, requests }) => ({
    activeHolds,
    seedSeconds,
    requests: REQUESTS_PER_SIZE,
    costs: (['place', 'confirm', 'release', 'allocate'] as const).map((action) => ({ action, ...requests[action].cost() })),
  }));
};
