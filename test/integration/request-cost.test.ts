import { LINE_SHARDS } from '../../functions/store/lines';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createBatchesHandler } from '../../functions/batches';
import { createAllocationsHandler } from '../../functions/allocations';
import { measureAllocateUnderHolds, measureHolds } from '../../tools/bench/hold-cost';
import { measurePatchMoving } from '../../tools/bench/patch-cost';
import { meterRequestCost, skuWithHistory } from '../../tools/bench/request-cost';
import { type TestTable, createTestTable, uniqueId } from '../support/dynamodb';
import { lambdaContext, postEvent } from '../support/events';
import { captureTelemetry } from '../support/telemetry';

/*
 * What one request costs the store, counted rather than timed: the calls the handler makes and the
 * capacity DynamoDB Local reports for them. Its read units follow DynamoDB's rules (4 KB per unit
 * for a strongly consistent read); its write units for a transaction are not DynamoDB's bill of 2
 * units per item, so only the calls of a write are compared here (docs/capacity.md has the bill).
 */

let table: TestTable;

beforeAll(async () => {
  table = await createTestTable();
});

afterAll(() => table.drop());

afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * Handlers over one repository, as a Lambda instance keeps it, that has routed a request already: it
 * keeps the locations for 30 s, so the calls measured are those of every request but a process's
 * first in each 30 s (its read of the locations is measured on its own below).
 */
const meteredHandlers = async () => {
  const meter = meterRequestCost(table.documentClient);
  const repository = table.repository({ sender: meter.sender });
  const allocate = createAllocationsHandler(repository);
  await allocate(postEvent('/allocate', { orderid: uniqueId('order'), sku: uniqueId('never-added'), qty: 1 }), lambdaContext());
  meter.takeCalls();
  return { meter, allocate, addBatch: createBatchesHandler(repository) };
};

/** A metered sender that also counts the most calls it had in flight at once: reads sent in one round overlap. */
const meteredWithConcurrency = () => {
  const meter = meterRequestCost(table.documentClient);
  let inFlight = 0;
  let most = 0;
  const sender = {
    send: (async (command: never, options?: object) => {
      most = Math.max(most, ++inFlight);
      try {
        return await meter.sender.send(command, options);
      } finally {
        inFlight--;
      }
    }) as typeof meter.sender.send,
  };
  return { meter, sender, mostInFlight: () => most };
};

const batchInStock = async (qty: number) => {
  const batch = { ref: uniqueId('batch'), sku: uniqueId('sku'), qty, available: qty, eta: null };
  await table.repository().addBatch(batch);
  // A shipment too, so the query has more than one batch to return.
  await table.repository().addBatch({ ...batch, ref: uniqueId('shipment'), eta: '2030-01-01' });
  return batch;
};

describe('what a change of the units on hand costs the store', () => {
  it('ships a whole line in 1 GetItem, 1 Query, 1 BatchGetItem and 1 transaction; adjusts in 3 reads and 1 transaction; counts with 2 reads more', async () => {
    const meter = meterRequestCost(table.documentClient);
    const repository = table.repository({ sender: meter.sender });
    const batches = createBatchesHandler(repository);
    const [sku, ref, orderid] = [uniqueId('sku'), uniqueId('batch'), uniqueId('order')];
    await batches(postEvent('/add_batch', { ref, sku, qty: 10, eta: null }), lambdaContext());
    await createAllocationsHandler(repository)(postEvent('/allocate', { orderid, sku, qty: 2 }), lambdaContext());
    const countedAt = new Date(Date.now() - 60_000).toISOString();
    const operations = async (event: Parameters<typeof batches>[0]) => {
      meter.takeCalls();
      expect((await batches(event, lambdaContext())).statusCode).toBe(201);
      return meter.takeCalls().map(({ operation }) => operation).sort();
    };

    // The shipment's record (a repeat answers it), the order's lines, and each batch a line ships from.
    expect(await operations(postEvent('/shipments', { shipmentid: uniqueId('parcel'), orderid, lines: [{ sku, qty: 2 }] }))).toEqual(['BatchGetItem', 'GetItem', 'Query', 'TransactWriteItems']);
    // The adjustment's record, the batch (its reference, then its two keys).
    expect(await operations(postEvent('/adjustments', { adjustmentid: uniqueId('found'), ref, reason: 'found', delta: 1 }))).toEqual(['BatchGetItem', 'GetItem', 'GetItem', 'TransactWriteItems']);
    // And the batch's last count (its reference) and its shipped records since the count.
    expect(await operations(postEvent('/adjustments', { adjustmentid: uniqueId('count'), ref, reason: 'counted', qty: 9, counted_at: countedAt }))).toEqual([
      'BatchGetItem',
      'GetItem',
      'GetItem',
      'GetItem',
      'Query',
      'TransactWriteItems',
    ]);
  });
});

describe('the store work of one request on the happy path', () => {
  it('adds a batch with a single transaction writing the batch, its reference and its known SKU', async () => {
    const { meter, addBatch } = await meteredHandlers();

    const result = await addBatch(postEvent('/add_batch', { ref: uniqueId('batch'), sku: uniqueId('sku'), qty: 10, eta: null }), lambdaContext());

    expect(result.statusCode).toBe(201);
    expect(meter.takeCalls()).toEqual([{ operation: 'TransactWriteItems', capacityUnits: expect.any(Number) }]);
  });

  it.each([
    ['a line that leaves stock in its batch', 2],
    ['a line that takes the last units of its batch, moving it out of the stock range', 10],
  ])('allocates %s with one consistent query and one transaction, and no other call', async (_, qty) => {
    const batch = await batchInStock(10);
    const { meter, allocate } = await meteredHandlers();

    const result = await allocate(postEvent('/allocate', { orderid: uniqueId('order'), sku: batch.sku, qty }), lambdaContext());

    expect(result.statusCode).toBe(201);
    expect(meter.takeCalls()).toEqual([
      { operation: 'Query', capacityUnits: 1 },
      { operation: 'TransactWriteItems', capacityUnits: expect.any(Number) },
    ]);
  });

  it('allocates a line split over a batch in stock and a shipment with one consistent query and one transaction, and no other call', async () => {
    const batch = await batchInStock(10);
    const { meter, allocate } = await meteredHandlers();

    const result = await allocate(postEvent('/allocate', { orderid: uniqueId('order'), sku: batch.sku, qty: 15, split: 'batches' }), lambdaContext());

    expect(result.statusCode).toBe(201);
    expect(JSON.parse(String(result.body)).parts).toHaveLength(2);
    expect(meter.takeCalls()).toEqual([
      { operation: 'Query', capacityUnits: 1 },
      { operation: 'TransactWriteItems', capacityUnits: expect.any(Number) },
    ]);
  });

  it("reads the locations with the SKU's stock, at the same time, on a process's first allocation, and not again within 30 s", async () => {
    const batch = await batchInStock(10);
    const { meter, sender, mostInFlight } = meteredWithConcurrency();
    const allocate = createAllocationsHandler(table.repository({ sender }));

    expect((await allocate(postEvent('/allocate', { orderid: uniqueId('order'), sku: batch.sku, qty: 1 }), lambdaContext())).statusCode).toBe(201);
    expect(meter.takeCalls().map(({ operation }) => operation)).toEqual(['Query', 'Query', 'TransactWriteItems']);
    expect(mostInFlight()).toBe(2);
    expect((await allocate(postEvent('/allocate', { orderid: uniqueId('order'), sku: batch.sku, qty: 1 }), lambdaContext())).statusCode).toBe(201);
    expect(meter.takeCalls().map(({ operation }) => operation)).toEqual(['Query', 'TransactWriteItems']);
  });

  it('reads as much for a SKU with 200 exhausted batches as for one with 1', async () => {
    const readUnitsOfAllocate = async (exhaustedBatches: number) => {
      const sku = await skuWithHistory(table.repository(), exhaustedBatches);
      // Handlers made once the history is: its making may outlast the 30 s they keep the locations.
      const { meter, allocate } = await meteredHandlers();
      expect((await allocate(postEvent('/allocate', { orderid: uniqueId('order'), sku, qty: 1 }), lambdaContext())).statusCode).toBe(201);
      return meter.takeCalls().find(({ operation }) => operation === 'Query')?.capacityUnits;
    };

    expect(await readUnitsOfAllocate(1)).toBe(1);
    expect(await readUnitsOfAllocate(200)).toBe(1);
    // 200 batches made and exhausted: half a minute alone, minutes beside another file on a loaded machine.
  }, 240_000);

  it('writes one request-log entry per request, and one metric entry for the allocation', async () => {
    const batch = await batchInStock(10);
    const { allocate, addBatch } = await meteredHandlers();
    const telemetry = captureTelemetry();

    await addBatch(postEvent('/add_batch', { ref: uniqueId('batch'), sku: batch.sku, qty: 5, eta: null }), lambdaContext());
    await allocate(postEvent('/allocate', { orderid: uniqueId('order'), sku: batch.sku, qty: 1 }), lambdaContext());

    expect(telemetry.entries.map(({ message, route }) => [message, route])).toEqual([
      ['Request', 'POST /add_batch'],
      ['Request', 'POST /allocate'],
    ]);
    expect(telemetry.metrics.map(({ counts }) => counts)).toEqual([{ LinesAllocated: 1 }]);
  });
});

describe('the store work of a whole order', () => {
  it('reads each SKU once and the locations, all at the same time, and writes the order in one transaction', async () => {
    const batches = await Promise.all([batchInStock(5), batchInStock(5), batchInStock(5)]);
    const { meter, sender, mostInFlight } = meteredWithConcurrency();
    const repository = table.repository({ sender });
    const order = { orderid: uniqueId('order'), lines: batches.map(({ sku }) => ({ sku, qty: 1 })) };

    const result = await createAllocationsHandler(repository)(postEvent('/orders', order), lambdaContext());

    expect(result.statusCode).toBe(201);
    // And the locations, with them, on the process's first request (kept 30 s after).
    expect(meter.takeCalls().map(({ operation }) => operation)).toEqual(['Query', 'Query', 'Query', 'Query', 'TransactWriteItems']);
    expect(mostInFlight()).toBe(4);
  });

  it('writes an order with split lines in the same one transaction, after the same reads', async () => {
    const [first, second] = await Promise.all([batchInStock(10), batchInStock(5)]);
    const { meter, sender } = meteredWithConcurrency();
    const repository = table.repository({ sender });
    const order = { orderid: uniqueId('order'), split: 'batches', lines: [{ sku: first!.sku, qty: 15 }, { sku: second!.sku, qty: 1 }] };

    const result = await createAllocationsHandler(repository)(postEvent('/orders', order), lambdaContext());

    expect(result.statusCode).toBe(201);
    expect(JSON.parse(String(result.body)).lines.map(({ parts }: { parts: unknown[] }) => parts.length).sort()).toEqual([1, 2]);
    expect(meter.takeCalls().map(({ operation }) => operation)).toEqual(['Query', 'Query', 'Query', 'TransactWriteItems']);
  });
});

describe('the store work of a PATCH that moves many lines', () => {
  it('reads the lines once per hundred and moves them in as few transactions as 100 items a transaction allow', async () => {
    const meter = meterRequestCost(table.documentClient);

    const cost = await measurePatchMoving(table.repository({ sender: meter.sender }), meter, 100);

    expect(cost.linesMoved).toBe(100);
    // The batch read by reference at the start (its SKU, then its two keys) and again at the end;
    // the index once for the hundred lines (each of its partitions for the batch: LINE_SHARDS
    // shards and the one of lines written before it was sharded) and the SKU's stock once; the
    // change itself, then the moves: 98 lines and their two batches, then the last 2 lines and the
    // batch with room, which they empty (moved out of the stock range, 2 items).
    expect(cost.calls).toEqual({ GetItem: 1, BatchGetItem: 2, Query: LINE_SHARDS + 1 + 1, TransactWriteItems: 3 });
  }, 60_000);
});

describe('the store work of a hold, as the bench measures it', () => {
  it('places a hold in one read round (its record, each SKU) and one transaction, and confirms it in one read and one transaction', async () => {
    const meter = meterRequestCost(table.documentClient);

    const [place, confirm] = await measureHolds(table.repository({ sender: meter.sender }), meter, 3);

    expect(place).toMatchObject({ action: 'place', lines: 3, calls: { GetItem: 1, Query: 3, TransactWriteItems: 1 } });
    expect(confirm).toMatchObject({ action: 'confirm', lines: 3, calls: { GetItem: 1, TransactWriteItems: 1 } });
    expect(Object.keys(place?.calls ?? {})).toHaveLength(3);
    expect(Object.keys(confirm?.calls ?? {})).toHaveLength(2);
  }, 60_000);

  it('allocates on a batch carrying active and expired holds with one consistent query and one transaction, and no other call', async () => {
    const meter = meterRequestCost(table.documentClient);
    const anHourAgo = table.repository({ sender: meter.sender, clock: () => Date.now() - 3_600_000 });

    const cost = await measureAllocateUnderHolds(table.repository({ sender: meter.sender }), anHourAgo, meter, { activeHolds: 2, expiredHolds: 2 });

    expect(cost.calls).toEqual([
      { operation: 'Query', capacityUnits: 1 },
      { operation: 'TransactWriteItems', capacityUnits: expect.any(Number) },
    ]);
  });
});
