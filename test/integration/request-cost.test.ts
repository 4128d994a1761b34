import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAddBatchHandler } from '../../functions/add-batch';
import { createAllocateHandler } from '../../functions/allocate';
import { meterRequestCost } from '../../tools/bench/request-cost';
import { type TestTable, createTestTable, uniqueId } from '../support/dynamodb';
import { lambdaContext, postEvent } from '../support/events';

/*
 * What one request costs the store, counted rather than timed: the calls the handler makes and the
 * capacity DynamoDB Local reports for them. DynamoDB Local reports 1 unit per item written in a
 * transaction; DynamoDB bills transactional writes double (docs/capacity.md).
 */

let table: TestTable;

beforeAll(async () => {
  table = await createTestTable();
});

afterAll(() => table.drop());

afterEach(() => {
  vi.restoreAllMocks();
});

const meteredHandlers = () => {
  const meter = meterRequestCost(table.documentClient);
  const repository = table.repository({ sender: meter.sender });
  return { meter, allocate: createAllocateHandler(repository), addBatch: createAddBatchHandler(repository) };
};

const batchInStock = async (qty: number) => {
  const batch = { ref: uniqueId('batch'), sku: uniqueId('sku'), qty, available: qty, eta: null };
  await table.repository().addBatch(batch);
  // A shipment too, so the query has more than one batch to return.
  await table.repository().addBatch({ ...batch, ref: uniqueId('shipment'), eta: '2030-01-01' });
  return batch;
};

describe('the store work of one request on the happy path', () => {
  it('adds a batch with a single transaction writing the batch and its reference', async () => {
    const { meter, addBatch } = meteredHandlers();

    const result = await addBatch(postEvent('/add_batch', { ref: uniqueId('batch'), sku: uniqueId('sku'), qty: 10, eta: null }), lambdaContext());

    expect(result.statusCode).toBe(201);
    expect(meter.takeCalls()).toEqual([{ operation: 'TransactWriteItems', capacityUnits: 2 }]);
  });

  it('allocates with one consistent query of the SKU and one transaction, and no other call', async () => {
    const batch = await batchInStock(10);
    const { meter, allocate } = meteredHandlers();

    const result = await allocate(postEvent('/allocate', { orderid: uniqueId('order'), sku: batch.sku, qty: 2 }), lambdaContext());

    expect(result.statusCode).toBe(201);
    expect(meter.takeCalls()).toEqual([
      { operation: 'Query', capacityUnits: 1 },
      { operation: 'TransactWriteItems', capacityUnits: 2 },
    ]);
  });

  it('writes one request-log line per request', async () => {
    const batch = await batchInStock(10);
    const { allocate, addBatch } = meteredHandlers();
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);

    await addBatch(postEvent('/add_batch', { ref: uniqueId('batch'), sku: batch.sku, qty: 5, eta: null }), lambdaContext());
    await allocate(postEvent('/allocate', { orderid: uniqueId('order'), sku: batch.sku, qty: 1 }), lambdaContext());

    expect(log).toHaveBeenCalledTimes(2);
  });
});
