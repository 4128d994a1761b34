import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lineKey } from '../../functions/store/lines';
import { checkInvariants } from '../../tools/invariants';
import { type HandlerService, serviceOver } from '../reliability/support/service';
import { type TestTable, createTestTable, uniqueId } from '../support/dynamodb';
import { routeEvent } from '../support/events';

/*
 * Lines and holds that record their routing (docs/api.md, "Repeats and routing"), through the
 * handlers over DynamoDB Local: what a line's item records, a hold's lines' locations, a hold's
 * routing carried onto the lines of its order, repeats judged by it, and a PATCH that moves each
 * line only where its routing allows.
 */

let table: TestTable;
let service: HandlerService;
beforeAll(async () => {
  table = await createTestTable();
  service = serviceOver(table.repository());
  for (const [id, serves] of [['paris', ['FR']], ['berlin', ['DE']]] as const) {
    const answer = await service.invoke(routeEvent('PUT /locations/{id}', { pathParameters: { id }, body: { name: id, priority: 0, serves } }));
    expect(answer.status).toBe(201);
  }
});
afterAll(() => table.drop());

const invoke = (routeKey: string, options: Parameters<typeof routeEvent>[1]) => service.invoke(routeEvent(routeKey, options));
const storedLineItem = async (orderid: string, sku: string) =>
  (await table.documentClient.send(new GetCommand({ TableName: table.tableName, Key: lineKey(orderid, sku), ConsistentRead: true }))).Item;
const toFrance = { country: 'FR', position: { lat: 48.8566, lng: 2.3522 } };

/** A SKU with a batch at each location: `a-berlin` first by its ref, `b-paris` after. */
const stocked = async (qty = 5) => {
  const sku = uniqueId('LAMP');
  const refs = { berlin: uniqueId('a-berlin'), paris: uniqueId('b-paris') };
  for (const [location, ref] of Object.entries(refs)) expect((await service.addBatch({ ref, sku, qty, eta: null, location })).status).toBe(201);
  return { sku, refs };
};

describe('a line allocated', () => {
  it('records the routing its request named, and a line whose request named none records none', async () => {
    const { sku, refs } = await stocked();
    const [routed, plain] = [uniqueId('order'), uniqueId('order')];
    expect(await service.allocate({ orderid: routed, sku, qty: 1, destination: toFrance, location: 'paris' })).toMatchObject({ status: 201, body: { batchref: refs.paris } });
    expect(await service.allocate({ orderid: plain, sku, qty: 1 })).toMatchObject({ status: 201, body: { batchref: refs.berlin } });
    expect((await storedLineItem(routed, sku))?.routing).toEqual({ destination: toFrance, location: 'paris' });
    expect(await storedLineItem(plain, sku)).not.toHaveProperty('routing');
  });

  it('answers a repeat that names the same routing with 200, and one that names another with 409, taking no stock', async () => {
    const { sku, refs } = await stocked();
    const line = { orderid: uniqueId('order'), sku, qty: 2, destination: toFrance };
    expect(await service.allocate(line)).toMatchObject({ status: 201, body: { batchref: refs.paris, location: 'paris' } });
    expect(await service.allocate(line)).toMatchObject({ status: 200, body: { batchref: refs.paris, location: 'paris' } });
    expect(await service.allocate({ ...line, destination: { country: 'FR' } })).toMatchObject({
      status: 409,
      body: { message: `Order ${line.orderid} already has a line for sku ${sku} with another destination or location`, code: 'routed_otherwise' },
    });
    const order = { orderid: line.orderid, lines: [{ sku, qty: 2 }] };
    expect(await invoke('POST /orders', { body: { ...order, destination: toFrance } })).toMatchObject({ status: 200 });
    expect(await invoke('POST /orders', { body: order })).toMatchObject({ status: 409, body: { lines: [{ sku }] } });
    expect(await invoke('GET /batches/{ref}', { pathParameters: { ref: refs.paris } })).toMatchObject({ body: { available: 3 } });
  });
});

describe('a hold', () => {
  it("names each line's location in every answer, and its routing goes onto the lines of its order", async () => {
    const { sku, refs } = await stocked();
    const hold = { holdid: uniqueId('cart'), lines: [{ sku, qty: 1 }], location: 'paris' };
    const lines = [{ sku, qty: 1, batchref: refs.paris, location: 'paris' }];
    expect(await invoke('POST /holds', { body: hold })).toMatchObject({ status: 201, body: { lines } });
    expect(await invoke('POST /holds', { body: hold })).toMatchObject({ status: 200, body: { lines } });
    expect(await invoke('GET /holds/{holdid}', { pathParameters: { holdid: hold.holdid } })).toMatchObject({ status: 200, body: { lines } });
    expect(await invoke('POST /holds', { body: { ...hold, location: 'berlin' } })).toMatchObject({
      status: 409,
      body: { message: `Hold ${hold.holdid} already exists with another destination or location`, code: 'routed_otherwise' },
    });
    const orderid = uniqueId('order');
    expect(await invoke('POST /holds/{holdid}/confirm', { pathParameters: { holdid: hold.holdid }, body: { orderid } })).toMatchObject({ status: 201 });
    expect((await storedLineItem(orderid, sku))?.routing).toEqual({ location: 'paris' });
    expect(await service.allocate({ orderid, sku, qty: 1 })).toMatchObject({ status: 409 });
    expect(await service.allocate({ orderid, sku, qty: 1, location: 'paris' })).toMatchObject({ status: 200, body: { batchref: refs.paris } });
  });
});

describe('a PATCH that moves lines', () => {
  it('moves each line only to a batch its routing allows, and a line none can take leaves its order', async () => {
    const { sku, refs } = await stocked(2);
    const shrinking = uniqueId('shrinking');
    expect((await service.addBatch({ ref: shrinking, sku, qty: 4, eta: null, location: 'paris' })).status).toBe(201);
    // Two lines fill `b-paris` (before `shrinking` by ref), and a third goes to `shrinking`.
    const [toFrance1, pickup1, pickup2] = [uniqueId('order'), uniqueId('order'), uniqueId('order')];
    for (const [orderid, routing] of [[toFrance1, { destination: toFrance }], [pickup1, { location: 'paris' }]] as const) {
      expect(await invoke('POST /orders', { body: { orderid, lines: [{ sku, qty: 1 }], ...routing } })).toMatchObject({ status: 201 });
    }
    expect(await service.allocate({ orderid: pickup2, sku, qty: 1, location: 'paris' })).toMatchObject({ status: 201 });
    const onShrinking = async () => (await invoke('GET /batches/{ref}', { pathParameters: { ref: shrinking } })).body;
    expect(await onShrinking()).toMatchObject({ allocated: 1 });
    const changed = await invoke('PATCH /batches/{ref}', { pathParameters: { ref: refs.paris }, body: { qty: 0 } });
    expect(changed).toMatchObject({ status: 200 });
    // The two lines on b-paris: each to the Paris batch left, and never to Berlin's, first by ref, which has room.
    expect((changed.body as { reallocated: { batchref: string | null }[] }).reallocated.map(({ batchref }) => batchref)).toEqual([shrinking, shrinking]);
    expect(await invoke('GET /batches/{ref}', { pathParameters: { ref: refs.berlin } })).toMatchObject({ body: { available: 2 } });
    // Moved, they keep their routing: with no batch at Paris left, each leaves its order, and Berlin's keeps its room.
    const emptied = await invoke('PATCH /batches/{ref}', { pathParameters: { ref: shrinking }, body: { qty: 0 } });
    expect((emptied.body as { reallocated: { batchref: string | null }[] }).reallocated.map(({ batchref }) => batchref)).toEqual([null, null, null]);
    expect(await invoke('GET /batches/{ref}', { pathParameters: { ref: refs.berlin } })).toMatchObject({ body: { available: 2 } });
    expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
  });
});
