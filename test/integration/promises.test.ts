import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { placeHold } from '../../domain/hold-services';
import { locationById, putLocation } from '../../domain/location-services';
import { allocateOrder } from '../../domain/order-services';
import { promiseCart } from '../../domain/promise-services';
import { addBatch } from '../../domain/services';
import { createAllocationsHandler } from '../../functions/allocations';
import { meterRequestCost } from '../../tools/bench/request-cost';
import { type TestTable, createTestTable, repositoryAt, uniqueId } from '../support/dynamodb';
import { lambdaContext, postEvent } from '../support/events';

/*
 * Promises against DynamoDB Local (docs/api.md, "Promises"): the order's planning on the store's
 * own reads, expired holds' units counted from their records, and nothing written.
 */

const NOW = Date.parse('2026-12-04T10:00:00.000Z');

let table: TestTable;
beforeAll(async () => {
  table = await createTestTable();
});
afterAll(() => table.drop());

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'BatchWriteItem']);

describe('a promise over the store', () => {
  it("counts an expired hold's units as free from its records, writes nothing, and the order then takes what it promised", async () => {
    const [sku, shelf, shipment] = [uniqueId('sku'), uniqueId('shelf'), uniqueId('shipment')];
    const setup = repositoryAt(table, NOW).repository;
    await addBatch({ ref: shelf, sku, qty: 3, eta: null }, setup);
    await addBatch({ ref: shipment, sku, qty: 10, eta: '2027-01-15' }, setup);
    const { hold } = await placeHold({ holdid: uniqueId('cart'), lines: [{ sku, qty: 3 }], ttlSeconds: 60 }, setup);

    const later = repositoryAt(table, NOW + 120_000);
    const promise = await promiseCart({ lines: [{ sku, qty: 2 }] }, later.repository);

    expect(later.calls.filter((call) => WRITES.has(call))).toEqual([]);
    expect(promise.parcels).toEqual([{ location: 'default', shipsOn: '2026-12-04', lines: [{ sku, qty: 2, parts: [{ batchref: shelf, qty: 2, eta: null }] }] }]);
    expect((await later.repository.stillHeldOn(hold)).length).toBe(1);

    const { lines } = await allocateOrder({ orderid: uniqueId('order'), lines: [{ sku, qty: 2 }] }, repositoryAt(table, NOW + 120_000).repository);
    expect(lines.map(({ batchref }) => batchref)).toEqual([shelf]);
  });

  it('counts more expired holds on a batch than one give-back frees, as the order frees them over its rounds', async () => {
    const [sku, ref] = [uniqueId('sku'), uniqueId('batch')];
    const setup = repositoryAt(table, NOW).repository;
    await addBatch({ ref, sku, qty: 45, eta: null }, setup);
    for (let hold = 0; hold < 45; hold++) await placeHold({ holdid: uniqueId('cart'), lines: [{ sku, qty: 1 }], ttlSeconds: 60 }, setup);

    const later = repositoryAt(table, NOW + 120_000);
    const promise = await promiseCart({ lines: [{ sku, qty: 45 }] }, later.repository);
    expect(later.calls.filter((call) => WRITES.has(call))).toEqual([]);
    expect(promise.refused).toEqual([]);
    const { lines } = await allocateOrder({ orderid: uniqueId('order'), lines: [{ sku, qty: 45 }] }, repositoryAt(table, NOW + 120_000).repository);
    expect(lines.map(({ batchref }) => batchref)).toEqual([ref]);
  });

  it("answers a line the store's stock cannot hold with the most its split could take", async () => {
    const sku = uniqueId('sku');
    const repository = repositoryAt(table, NOW).repository;
    await addBatch({ ref: uniqueId('batch'), sku, qty: 4, eta: null }, repository);
    await addBatch({ ref: uniqueId('batch'), sku, qty: 5, eta: '2027-01-15' }, repository);

    expect((await promiseCart({ lines: [{ sku, qty: 12, split: 'batches' }] }, repository)).refused).toEqual([{ sku, reason: 'out_of_stock', promisableQty: 9 }]);
  });

  it("keeps a location's handling and transit days, and ships and arrives by them", async () => {
    const [id, sku] = [uniqueId('place').replace(/[^A-Za-z0-9_-]/g, ''), uniqueId('sku')];
    const repository = repositoryAt(table, NOW).repository;
    await putLocation({ id, name: 'Grenoble', priority: 0, serves: ['*'], handlingDays: 2, transitDays: { FR: 1, '*': 5 } }, repository);
    expect(await locationById(id, repository)).toMatchObject({ handlingDays: 2, transitDays: { FR: 1, '*': 5 } });
    await addBatch({ ref: uniqueId('batch'), sku, qty: 4, eta: null, location: id }, repository);

    const promise = await promiseCart({ lines: [{ sku, qty: 1 }] }, repositoryAt(table, NOW).repository, { destination: { country: 'DE' } });
    expect([promise.shipsOn, promise.arrivesBy]).toEqual(['2026-12-06', '2026-12-11']);
  });
});

describe('the store work of a promise', () => {
  it("makes an order's reads, each SKU's and the locations' at once, and no write", async () => {
    const skus = [uniqueId('sku'), uniqueId('sku')];
    for (const sku of skus) await addBatch({ ref: uniqueId('batch'), sku, qty: 5, eta: null }, table.repository());
    const meter = meterRequestCost(table.documentClient);
    const handler = createAllocationsHandler(table.repository({ sender: meter.sender }));

    const promised = await handler(postEvent('/promises', { lines: skus.map((sku) => ({ sku, qty: 1 })) }), lambdaContext());
    const promiseCalls = meter.takeCalls().map(({ operation }) => operation);
    const ordered = await handler(postEvent('/orders', { orderid: uniqueId('order'), lines: skus.map((sku) => ({ sku, qty: 1 })) }), lambdaContext());
    const orderCalls = meter.takeCalls().map(({ operation }) => operation);

    expect([promised.statusCode, ordered.statusCode]).toEqual([200, 201]);
    // The locations read on the process's first request (kept 30 s after), so the order reads only the stock.
    expect(promiseCalls).toEqual(['Query', 'Query', 'Query']);
    expect(orderCalls).toEqual(['Query', 'Query', 'TransactWriteItems']);
  });
});
