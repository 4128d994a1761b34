import type { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { DynamoDBRecord } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AllocationContended, StoreUnavailable } from '../../domain/errors';
import { createAllocationsHandler } from '../../functions/allocations';
import { createBatchesHandler } from '../../functions/batches';
import { routeKeys } from '../../functions/http/route-keys';
import { createPublishEventsHandler } from '../../functions/publish-events';
import { CAUSE_DIMENSION, METRICS_NAMESPACE, OPERATION_DIMENSION, SERVICE_NAME, unavailableCauses } from '../../functions/telemetry-names';
import { type RouteEventOptions, lambdaContext, routeEvent } from '../support/events';
import { FakeRepository } from '../support/fake-repository';
import { type CapturedTelemetry, captureTelemetry } from '../support/telemetry';
import { allocatedLine } from '../support/stream-records';

/*
 * The metrics each request and each batch of stream records publishes, read back from the
 * embedded-metric-format entries the functions write: a count per entry, under `service` and the
 * operation, and for a 503 under its cause too. What the adapter counts of the store's own work
 * (retried transactions, lost races) is in test/integration/store-faults.test.ts, against DynamoDB.
 */

let telemetry: CapturedTelemetry;
beforeEach(() => {
  telemetry = captureTelemetry();
});
afterEach(() => telemetry.restore());

const under = (operation: string, extra: Record<string, string> = {}) => ({ service: SERVICE_NAME, [OPERATION_DIMENSION]: operation, ...extra });

/** The handlers over a shop with lamps on the shelf and on a ship, sofas on the shelf, and no chairs. */
const shop = async () => {
  const repository = new FakeRepository();
  await repository.addBatch({ ref: 'lamp-shelf', sku: 'LAMP', qty: 10, available: 10, eta: null });
  await repository.addBatch({ ref: 'lamp-ship', sku: 'LAMP', qty: 10, available: 10, eta: '2027-03-01' });
  await repository.addBatch({ ref: 'sofa-shelf', sku: 'SOFA', qty: 2, available: 2, eta: null });
  const batches = createBatchesHandler(repository);
  const allocations = createAllocationsHandler(repository);
  const send = async (routeKey: string, options: RouteEventOptions, context = lambdaContext()) => {
    const handler = (routeKeys.batches as readonly string[]).includes(routeKey) ? batches : allocations;
    return (await handler(routeEvent(routeKey, options), context)).statusCode;
  };
  return { repository, send };
};

describe("the HTTP handlers' metrics", () => {
  it('count an allocated line under its operation, and nothing for the repeat of it', async () => {
    const { send } = await shop();
    const line = { orderid: 'o1', sku: 'LAMP', qty: 2 };

    expect(await send('POST /allocate', { body: line })).toBe(201);
    expect(await send('POST /allocate', { body: line })).toBe(200);

    expect(telemetry.metrics).toEqual([
      expect.objectContaining({ namespace: METRICS_NAMESPACE, dimensions: under('POST /allocate'), counts: { LinesAllocated: 1 }, units: ['Count'] }),
    ]);
  });

  it('count an order and the lines it newly allocated, not those it repeated', async () => {
    const { send } = await shop();
    expect(await send('POST /allocate', { body: { orderid: 'o1', sku: 'LAMP', qty: 2 } })).toBe(201);
    telemetry.clear();
    const order = { orderid: 'o1', lines: [{ sku: 'LAMP', qty: 2 }, { sku: 'SOFA', qty: 1 }] };

    expect(await send('POST /orders', { body: order })).toBe(201);
    expect(await send('POST /orders', { body: order })).toBe(200);

    expect(telemetry.metrics).toEqual([expect.objectContaining({ dimensions: under('POST /orders'), counts: { OrdersAllocated: 1, LinesAllocated: 1 } })]);
  });

  it('count a refusal for lack of stock and one for an unknown SKU, and each refused line of an order', async () => {
    const { send } = await shop();

    expect(await send('POST /allocate', { body: { orderid: 'o1', sku: 'SOFA', qty: 3 } })).toBe(400);
    expect(await send('POST /allocate', { body: { orderid: 'o1', sku: 'CHAIR', qty: 1 } })).toBe(400);
    const order = { orderid: 'o2', lines: [{ sku: 'LAMP', qty: 11 }, { sku: 'SOFA', qty: 3 }, { sku: 'CHAIR', qty: 1 }] };
    expect(await send('POST /orders', { body: order })).toBe(400);

    expect(telemetry.metrics.map(({ dimensions, counts }) => ({ dimensions, counts }))).toEqual([
      { dimensions: under('POST /allocate'), counts: { OutOfStock: 1 } },
      { dimensions: under('POST /allocate'), counts: { InvalidSku: 1 } },
      { dimensions: under('POST /orders'), counts: { OutOfStock: 2, InvalidSku: 1 } },
    ]);
  });

  it('count the lines a change of a batch moved off it', async () => {
    const { send } = await shop();
    for (const orderid of ['o1', 'o2', 'o3']) expect(await send('POST /allocate', { body: { orderid, sku: 'LAMP', qty: 3 } })).toBe(201);
    telemetry.clear();

    expect(await send('PATCH /batches/{ref}', { pathParameters: { ref: 'lamp-shelf' }, body: { qty: 4 } })).toBe(200);
    expect(await send('PATCH /batches/{ref}', { pathParameters: { ref: 'lamp-shelf' }, body: { qty: 4 } })).toBe(200);

    expect(telemetry.metrics).toEqual([expect.objectContaining({ dimensions: under('PATCH /batches/{ref}'), counts: { LinesReallocated: 2 } })]);
  });

  it('count the holds a change of a batch ended to make room: the expired as expired, the active as released', async () => {
    const { repository, send } = await shop();
    const hold = (holdid: string, ttlSeconds: number) => send('POST /holds', { body: { holdid, lines: [{ sku: 'SOFA', qty: 1 }], ttl_seconds: ttlSeconds } });
    expect([await hold('cart-1', 60), await hold('cart-2', 600)]).toEqual([201, 201]);
    repository.now += 120_000;
    telemetry.clear();

    expect(await send('PATCH /batches/{ref}', { pathParameters: { ref: 'sofa-shelf' }, body: { qty: 0 } })).toBe(200);

    expect(telemetry.metrics).toEqual([expect.objectContaining({ dimensions: under('PATCH /batches/{ref}'), counts: { HoldsExpired: 1, HoldsReleased: 1 } })]);
  });

  it('count a hold that a repeat of POST /holds, an extension or a confirm found expired and ended, as expired, once', async () => {
    const { repository, send } = await shop();
    const body = (holdid: string) => ({ holdid, lines: [{ sku: 'SOFA', qty: 1 }], ttl_seconds: 60 });
    for (const holdid of ['cart-1', 'cart-2']) expect(await send('POST /holds', { body: body(holdid) })).toBe(201);
    expect(await send('POST /holds', { body: { ...body('cart-3'), lines: [{ sku: 'LAMP', qty: 1 }] } })).toBe(201);
    repository.now += 120_000;
    telemetry.clear();
    const endingRequests = [
      ['POST /holds', { body: body('cart-1') }],
      ['PATCH /holds/{holdid}', { pathParameters: { holdid: 'cart-2' }, body: { ttl_seconds: 60 } }],
      ['POST /holds/{holdid}/confirm', { pathParameters: { holdid: 'cart-3' }, body: { orderid: 'order-1' } }],
    ] as const;

    // Each twice: the repeat finds the hold ended, and ends nothing.
    for (const [routeKey, options] of [...endingRequests, ...endingRequests]) expect(await send(routeKey, options)).toBe(409);

    expect(telemetry.metrics).toEqual(
      endingRequests.map(([routeKey]) => expect.objectContaining({ dimensions: under(routeKey), counts: { HoldsExpired: 1 } })),
    );
  });

  it('count the holds a change of a batch ended in its own write, as expired or released, once each', async () => {
    const { repository, send } = await shop();
    expect(await send('POST /holds', { body: { holdid: 'cart-1', lines: [{ sku: 'SOFA', qty: 1 }], ttl_seconds: 60 } })).toBe(201);
    expect(await send('POST /holds', { body: { holdid: 'cart-2', lines: [{ sku: 'SOFA', qty: 1 }], ttl_seconds: 600 } })).toBe(201);
    repository.now += 120_000;
    telemetry.clear();

    expect(await send('PATCH /batches/{ref}', { pathParameters: { ref: 'sofa-shelf' }, body: { qty: 0 } })).toBe(200);

    expect(telemetry.metrics).toEqual([
      expect.objectContaining({ dimensions: under('PATCH /batches/{ref}'), counts: expect.objectContaining({ HoldsExpired: 1, HoldsReleased: 1 }) }),
    ]);
  });

  it('publish nothing for a request with nothing to count', async () => {
    const { send } = await shop();

    expect(await send('GET /batches/{ref}', { pathParameters: { ref: 'lamp-shelf' } })).toBe(200);
    expect(await send('GET /skus/{sku}/stock', { pathParameters: { sku: 'CHAIR' } })).toBe(404);
    expect(await send('POST /add_batch', { body: { ref: 'chair-1', sku: 'CHAIR', qty: 1, eta: null } })).toBe(201);
    expect(await send('POST /allocate', { body: { orderid: 'o1', sku: 'LAMP', qty: 0 } })).toBe(400);

    expect(telemetry.metrics).toEqual([]);
    expect(telemetry.other).toEqual([]);
  });

  const nearlyOutOfTime = () => ({ ...lambdaContext(), getRemainingTimeInMillis: () => 50 });

  it.each([
    ['StoreUnavailable', lambdaContext, (repository: FakeRepository) => {
      repository.stockOf = async () => {
        throw new StoreUnavailable('The store did not answer');
      };
    }],
    ['AllocationContended', lambdaContext, (repository: FakeRepository) => {
      repository.saveAllocation = async () => ({ outcome: 'batch-changed' });
    }],
    ['FunctionTimeout', nearlyOutOfTime, (repository: FakeRepository) => {
      repository.stockOf = () => new Promise(() => {});
    }],
  ] as const)('count a 503 as Unavailable under its operation and its cause, %s, in an entry of its own', async (cause, context, breakStore) => {
    const { repository, send } = await shop();
    breakStore(repository);

    expect(await send('POST /allocate', { body: { orderid: 'o1', sku: 'LAMP', qty: 1 } }, context())).toBe(503);

    expect(telemetry.metrics).toEqual([
      expect.objectContaining({ dimensions: under('POST /allocate', { [CAUSE_DIMENSION]: cause }), counts: { Unavailable: 1 } }),
    ]);
    expect(unavailableCauses).toContain(cause);
  });

  it('count a change of a batch that kept being changed under it as Unavailable, BatchContended', async () => {
    const { repository, send } = await shop();
    repository.changeBatch = async () => ({ outcome: 'changed' });

    expect(await send('PATCH /batches/{ref}', { pathParameters: { ref: 'lamp-shelf' }, body: { qty: 4 } })).toBe(503);

    expect(telemetry.metrics).toEqual([
      expect.objectContaining({ dimensions: under('PATCH /batches/{ref}', { [CAUSE_DIMENSION]: 'BatchContended' }), counts: { Unavailable: 1 } }),
    ]);
  });

  it('never put an identifier in a metric: no dimension but service, operation and cause, and no SKU, order or batch anywhere', async () => {
    const { repository, send } = await shop();
    await send('POST /allocate', { body: { orderid: 'order-secret', sku: 'LAMP', qty: 2 } });
    await send('POST /orders', { body: { orderid: 'order-secret', lines: [{ sku: 'SOFA', qty: 9 }, { sku: 'CHAIR', qty: 1 }] } });
    await send('PATCH /batches/{ref}', { pathParameters: { ref: 'lamp-shelf' }, body: { qty: 0 } });
    repository.stockOf = async () => {
      throw new AllocationContended('LAMP', 8);
    };
    await send('POST /allocate', { body: { orderid: 'order-secret', sku: 'LAMP', qty: 1 } });

    expect(telemetry.metrics).toHaveLength(4);
    for (const { dimensions, raw } of telemetry.metrics) {
      expect(Object.keys(dimensions).every((name) => ['service', OPERATION_DIMENSION, CAUSE_DIMENSION].includes(name))).toBe(true);
      expect(JSON.stringify(raw)).not.toMatch(/order-secret|LAMP|SOFA|CHAIR|lamp-shelf/);
    }
  });
});

describe("the stream consumer's metrics", () => {

  /** An EventBridge that refuses every entry of order `refusedOrder`, every time. */
  const busRefusing = (refusedOrder: string) => ({
    send: async (command: PutEventsCommand) => ({
      $metadata: {},
      Entries: (command.input.Entries ?? []).map((entry, index) =>
        JSON.parse(entry.Detail ?? '{}').orderid === refusedOrder ? { ErrorCode: 'InternalFailure' } : { EventId: `id-${index}` },
      ),
    }),
  });

  const consume = (sender: ReturnType<typeof busRefusing>, records: DynamoDBRecord[]) =>
    createPublishEventsHandler({ eventBusName: 'bus', sender, wait: async () => undefined })({ Records: records }, lambdaContext());

  it('count the events put on the bus and those that were not, under PublishEvents, and log the failed record as an error', async () => {
    const { batchItemFailures } = await consume(busRefusing('o2'), [allocatedLine(1), allocatedLine(2), allocatedLine(3)]);

    expect(batchItemFailures).toEqual([{ itemIdentifier: '1002' }]);
    expect(telemetry.metrics).toEqual([expect.objectContaining({ dimensions: under('PublishEvents'), counts: { EventsPublished: 2, EventsFailed: 1 } })]);
    expect(telemetry.entries).toEqual([
      expect.objectContaining({ level: 'ERROR', records: 3, events: 3, failed: [{ sequenceNumber: '1002', reason: 'InternalFailure' }] }),
    ]);
  });

  it('count no failure when every event got on the bus', async () => {
    await consume(busRefusing('none'), [allocatedLine(1), allocatedLine(2)]);

    expect(telemetry.metrics).toEqual([expect.objectContaining({ dimensions: under('PublishEvents'), counts: { EventsPublished: 2 } })]);
  });
});

describe('the log level on Lambda', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it("is POWERTOOLS_LOG_LEVEL's, not Lambda's filter's, so that a sampled invocation's DEBUG lines are written", async () => {
    vi.resetModules();
    vi.stubEnv('AWS_LAMBDA_LOG_LEVEL', 'DEBUG');
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'WARN');
    const { logger } = await import('../../functions/telemetry');
    expect(logger.getLevelName()).toBe('WARN');
    expect(process.env.AWS_LAMBDA_LOG_LEVEL).toBe('DEBUG');
  });
});
