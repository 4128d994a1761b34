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
  /** How long placing the `activeHolds` holds took, or trying to, this many at a time at first (seedActiveHolds). */
  readonly seedSeconds: number;
  readonly seedsInFlight: number;
  /** Requests of each kind measured; `place` twice as many, one hold confirmed and one released each time. */
  readonly requests: number;
  /** Why the batch could not be given them all, when it could not: then nothing was measured. */
  readonly failed?: string;
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

/** Holds placed at once on the batch of CostUnderActiveHolds, at first (seedActiveHolds). */
const SEEDS_IN_FLIGHT = 32;
/**
 * Room for 10,000 holds at the 130 a second DynamoDB Local takes on this 2-core machine when they
 * meet nothing (~77 s), and three times that on a loaded hour (47 a second), within a bound on what
 * a store that cannot take them costs the bench's time.
 */
const SEED_TIME_LIMIT_MS = 240_000;

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

type AllocationsHandler = ReturnType<typeof createAllocationsHandler>;

/**
 * `count` active holds of 1 unit for an hour on the SKU's one batch, SEEDS_IN_FLIGHT at a time at
 * first. A store that keeps holds apart takes them in parallel; one whose holds meet on the batch's
 * item answers 503 to all but one of those that race, so a seeder answered 503 leaves its hold to
 * the others and stops, down to one: such a store is seeded a hold at a time rather than racing
 * itself. A hold answered 503 is sent again with its holdid, so that one whose write committed all
 * the same is answered as a repeat. Answers why not, and how many were placed, at the first other
 * answer, or once SEED_TIME_LIMIT_MS has passed.
 */
const seedActiveHolds = async (handler: AllocationsHandler, sku: string, count: number): Promise<string | undefined> => {
  const deadline = performance.now() + SEED_TIME_LIMIT_MS;
  const answered503: object[] = [];
  let started = 0;
  let placed = 0;
  let seeders = SEEDS_IN_FLIGHT;
  let failure: string | undefined;
  const nextHold = () =>
    answered503.pop() ?? (started < count ? { holdid: `seed-${started++}-${randomUUID()}`, lines: [{ sku, qty: 1 }], ttlSeconds: 3_600 } : undefined);
  const seeder = async () => {
    for (let body = nextHold(); body && failure === undefined; body = nextHold()) {
      if (performance.now() > deadline) failure = `not done in ${SEED_TIME_LIMIT_MS / 1000} s`;
      else {
        const result = await handler(postEvent('/holds', body), lambdaContext());
        if (result.statusCode === 201 || result.statusCode === 200) placed++;
        else if (result.statusCode !== 503) failure ??= `place hold answered ${result.statusCode}: ${result.body}`;
        else {
          answered503.push(body);
          if (seeders > 1) break;
        }
      }
    }
    seeders--;
  };
  await Promise.all(Array.from({ length: SEEDS_IN_FLIGHT }, seeder));
  return failure && `${placed} of ${count} holds placed: ${failure}`;
};

/**
 * A SKU whose one batch carries `activeHolds` holds of 1 unit, lasting an hour: then, in turn, a
 * hold of 1 unit placed and confirmed, one placed and released, and an allocate of 1, each through
 * the allocations handler, so that every request measured meets the batch with `activeHolds` holds
 * (and its own). The median time of each, and the units and calls of one. GET /batches/{ref} must
 * read the seeded holds' units still held afterwards: the case measured is the one meant.
 */
export const measureUnderActiveHolds = async (repository: BatchRepository, meter: RequestCostMeter, activeHolds: number): Promise<CostUnderActiveHolds> => {
  const handler = createAllocationsHandler(repository);
  const [sku = ''] = await skusInStock(repository, 1);
  const startedAt = performance.now();
  const failed = await seedActiveHolds(handler, sku, activeHolds);
  const seedSeconds = (performance.now() - startedAt) / 1000;
  const measured = { activeHolds, seedSeconds, seedsInFlight: SEEDS_IN_FLIGHT, requests: REQUESTS_PER_SIZE };
  if (failed) return { ...measured, failed, costs: [] };

  const requests = {
    place: timedRequests(meter, 'place hold', 201),
    confirm: timedRequests(meter, 'confirm hold', 201),
    release: timedRequests(meter, 'release hold', 204),
    allocate: timedRequests(meter, 'allocate', 201),
  };
  const place = (holdid: string) => () => handler(postEvent('/holds', { holdid, lines: [{ sku, qty: 1 }], ttlSeconds: 600 }), lambdaContext());
  for (let round = 0; round < REQUESTS_PER_SIZE; round++) {
    const confirmed = `cart-${randomUUID()}`;
    await requests.place.time(place(confirmed));
    const confirm = { pathParameters: { holdid: confirmed }, body: { orderid: `order-${randomUUID()}` } };
    await requests.confirm.time(() => handler(routeEvent('POST /holds/{holdid}/confirm', confirm), lambdaContext()));
    const released = `cart-${randomUUID()}`;
    await requests.place.time(place(released));
    await requests.release.time(() => handler(routeEvent('DELETE /holds/{holdid}', { pathParameters: { holdid: released } }), lambdaContext()));
    await requests.allocate.time(() => handler(postEvent('/allocate', { orderid: `order-${randomUUID()}`, sku, qty: 1 }), lambdaContext()));
  }

  const read = await createBatchesHandler(repository)(routeEvent('GET /batches/{ref}', { pathParameters: { ref: `${sku}-batch` } }), lambdaContext());
  expectStatus(read, 200, 'GET /batches/{ref}');
  const { held } = JSON.parse(read.body ?? '{}') as { held: number };
  if (held !== activeHolds) throw new Error(`The batch holds ${held} units after the requests, not the ${activeHolds} of its seeded holds`);
  return {
    ...measured,
    costs: (['place', 'confirm', 'release', 'allocate'] as const).map((action) => ({ action, ...requests[action].cost() })),
  };
};
