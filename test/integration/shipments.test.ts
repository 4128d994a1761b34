import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkInvariants } from '../../tools/invariants';
import { type HandlerService, serviceOver } from '../reliability/support/service';
import { type TestTable, createTestTable, uniqueId } from '../support/dynamodb';
import { routeEvent } from '../support/events';

/*
 * Shipments (docs/api.md, "Shipments"), through the handlers over DynamoDB Local: units of an
 * order's lines leave their batches in one transaction, their batches' `qty` falls and their
 * `available` stays, and what the lines shipped stays out of every later cancel and move; every
 * state judged by `npm run check`'s invariants.
 */

let table: TestTable;
let service: HandlerService;
beforeAll(async () => {
  table = await createTestTable();
  service = serviceOver(table.repository());
  for (const [id, priority] of [['paris', 0], ['lyon', 1]] as const) {
    expect((await invoke('PUT /locations/{id}', { pathParameters: { id }, body: { name: id, priority, serves: ['*'] } })).status).toBe(201);
  }
});
afterAll(() => table.drop());

const invoke = (routeKey: string, options: Parameters<typeof routeEvent>[1]) => service.invoke(routeEvent(routeKey, options));
const ship = (body: Record<string, unknown>) => invoke('POST /shipments', { body });
const batchOf = async (ref: string) => (await invoke('GET /batches/{ref}', { pathParameters: { ref } })).body as { qty: number; allocated: number; available: number };
const orderOf = async (orderid: string) => (await invoke('GET /allocations/{orderid}', { pathParameters: { orderid } })).body;
const cancel = (orderid: string, sku: string) => invoke('DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid, sku } });
const expectNoViolations = async () => expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);

/** A SKU with batches of these sizes, in stock, at the locations named: refs sort in the order given. */
const stocked = async (batches: readonly (readonly [number, string])[]) => {
  const sku = uniqueId('LAMP');
  const refs: string[] = [];
  for (const [index, [qty, location]] of batches.entries()) {
    const ref = `${index}-${uniqueId('batch')}`;
    expect((await service.addBatch({ ref, sku, qty, eta: null, location })).status).toBe(201);
    refs.push(ref);
  }
  return { sku, refs };
};

describe('a shipment', () => {
  it("takes its units off the line and its batch's qty, leaving the batch's available as it was", async () => {
    const { sku, refs } = await stocked([[10, 'paris']]);
    const orderid = uniqueId('order');
    expect((await service.allocate({ orderid, sku, qty: 4 })).status).toBe(201);
    const shipmentid = uniqueId('parcel');

    const answer = await ship({ shipmentid, orderid, lines: [{ sku, qty: 3 }] });

    expect(answer).toMatchObject({ status: 201, body: { shipmentid, orderid, location: 'paris', lines: [{ sku, qty: 3, parts: [{ batchref: refs[0], qty: 3 }] }] } });
    expect(await batchOf(refs[0]!)).toMatchObject({ qty: 7, allocated: 1, available: 6 });
    expect(await orderOf(orderid)).toEqual({ orderid, lines: [{ sku, qty: 4, batchref: refs[0], location: 'paris', shipped: 3 }] });
    expect(await invoke('GET /shipments/{shipmentid}', { pathParameters: { shipmentid } })).toMatchObject({ status: 200, body: answer.body });
    await expectNoViolations();
  });

  it('ships every one of many orders sent at once from one batch, each with the qty it left in the history', async () => {
    const { sku, refs } = await stocked([[100, 'paris']]);
    const orders = Array.from({ length: 20 }, () => uniqueId('order'));
    for (const orderid of orders) expect((await service.allocate({ orderid, sku, qty: 1 })).status).toBe(201);

    const answers = await Promise.all(orders.map((orderid) => ship({ shipmentid: uniqueId('parcel'), orderid, lines: [{ sku, qty: 1 }] })));

    expect(answers.map(({ status }) => status)).toEqual(orders.map(() => 201));
    expect(await batchOf(refs[0]!)).toMatchObject({ qty: 80, allocated: 0, available: 80 });
    const { entries } = (await invoke('GET /skus/{sku}/history', { pathParameters: { sku }, queryStringParameters: { limit: '100' } })).body as { entries: { kind: string; qty_after: number }[] };
    expect(entries.filter(({ kind }) => kind === 'shipped').map(({ qty_after }) => qty_after).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, index) => 80 + index));
    await expectNoViolations();
    // Each of the 20 writes of one batch loses its round to the others and backs off, one commit at a
    // time: 18 s beside another file on two cores, and half as long again on a loaded one.
  }, 120_000);

  it('answers a repeat as stored, shipping nothing more, and another shipment under its id with 409', async () => {
    const { sku, refs } = await stocked([[10, 'paris']]);
    const orderid = uniqueId('order');
    await service.allocate({ orderid, sku, qty: 4 });
    const shipment = { shipmentid: uniqueId('parcel'), orderid, location: 'paris', lines: [{ sku, qty: 2 }] };
    const first = await ship(shipment);

    expect(await ship(shipment)).toEqual({ ...first, status: 200 });
    const { location: _, ...named } = shipment;
    expect((await ship(named)).status).toBe(200);
    expect(await ship({ ...shipment, lines: [{ sku, qty: 1 }] })).toMatchObject({ status: 409, body: { code: 'shipment_exists' } });
    expect(await batchOf(refs[0]!)).toMatchObject({ qty: 8, allocated: 2, available: 6 });
  });

  it('ships nothing when a line has fewer unshipped units at the place than asked, and names it with what it has there', async () => {
    const { sku, refs } = await stocked([[10, 'paris'], [10, 'lyon']]);
    const other = (await stocked([[5, 'paris']])).sku;
    const orderid = uniqueId('order');
    await service.allocate({ orderid, sku, qty: 2 });
    await service.allocate({ orderid, sku: other, qty: 1 });

    const answer = await ship({ shipmentid: uniqueId('parcel'), orderid, location: 'paris', lines: [{ sku: other, qty: 1 }, { sku, qty: 3 }] });

    expect(answer).toMatchObject({ status: 409, body: { code: 'too_few_unshipped', location: 'paris', lines: [{ sku, qty: 3, unshipped: 2 }] } });
    expect(await batchOf(refs[0]!)).toMatchObject({ qty: 10, allocated: 2 });
    expect(await ship({ shipmentid: uniqueId('parcel'), orderid, location: 'lyon', lines: [{ sku, qty: 1 }] })).toMatchObject({
      status: 409,
      body: { lines: [{ sku, qty: 1, unshipped: 0 }] },
    });
    expect((await orderOf(orderid)) as object).not.toMatchObject({ lines: [{ shipped: expect.anything() }] });
  });

  it("ships a split line from its parts at the place, in their order, and a part shipped whole leaves the line's parts", async () => {
    const { sku, refs } = await stocked([[4, 'paris'], [4, 'paris'], [4, 'lyon']]);
    const orderid = uniqueId('order');
    expect((await service.allocate({ orderid, sku, qty: 10, split: 'locations' })).status).toBe(201);

    const answer = await ship({ shipmentid: uniqueId('parcel'), orderid, location: 'paris', lines: [{ sku, qty: 5 }] });

    expect(answer.body).toMatchObject({ lines: [{ sku, qty: 5, parts: [{ batchref: refs[0], qty: 4 }, { batchref: refs[1], qty: 1 }] }] });
    expect((await orderOf(orderid)) as object).toEqual({
      orderid,
      lines: [
        {
          sku,
          qty: 10,
          parts: [
            { batchref: refs[1], location: 'paris', qty: 4, shipped: 1 },
            { batchref: refs[2], location: 'lyon', qty: 2 },
            { batchref: refs[0], location: 'paris', qty: 4, shipped: 4 },
          ],
          shipped: 5,
        },
      ],
    });
    expect([(await batchOf(refs[0]!)).qty, (await batchOf(refs[1]!)).qty, (await batchOf(refs[2]!)).qty]).toEqual([0, 3, 4]);
    await expectNoViolations();
  });

  it('needs a location when the order has unshipped units at several, and takes the one place they are at otherwise', async () => {
    const { sku } = await stocked([[3, 'paris'], [3, 'lyon']]);
    const orderid = uniqueId('order');
    await service.allocate({ orderid, sku, qty: 5, split: 'locations' });

    expect(await ship({ shipmentid: uniqueId('parcel'), orderid, lines: [{ sku, qty: 1 }] })).toMatchObject({
      status: 400,
      body: { code: 'validation_failed', issues: [{ path: 'location' }] },
    });
    expect((await ship({ shipmentid: uniqueId('parcel'), orderid, location: 'paris', lines: [{ sku, qty: 3 }] })).status).toBe(201);
    expect(await ship({ shipmentid: uniqueId('parcel'), orderid, lines: [{ sku, qty: 2 }] })).toMatchObject({ status: 201, body: { location: 'lyon' } });
    await expectNoViolations();
  });

  it('ships from a batch every unit of which its lines hold, which allocations no longer read, and the stock levels count on hand until then', async () => {
    const { sku, refs } = await stocked([[5, 'paris'], [3, 'lyon']]);
    const orderid = uniqueId('order');
    await service.allocate({ orderid, sku, qty: 5 });
    const levels = async () => (await invoke('GET /skus/{sku}/stock', { pathParameters: { sku } })).body as { locations: object[] };
    expect(await levels()).toMatchObject({
      in_stock: 3,
      on_hand: 8,
      committed: 5,
      locations: [{ location: 'paris', in_stock: 0, on_hand: 5, committed: 5 }, { location: 'lyon', in_stock: 3, on_hand: 3, committed: 0 }],
    });

    expect((await ship({ shipmentid: uniqueId('parcel'), orderid, lines: [{ sku, qty: 5 }] })).status).toBe(201);

    expect(await batchOf(refs[0]!)).toMatchObject({ qty: 0, allocated: 0, available: 0 });
    expect(await levels()).toMatchObject({ in_stock: 3, on_hand: 3, committed: 0, locations: [{ location: 'lyon' }] });
    expect((await levels()).locations).toHaveLength(1);
    await expectNoViolations();
  });
});

describe('what a line shipped', () => {
  it('stays when the line is cancelled: the cancel gives back only the other units, and a repeat of it answers 204', async () => {
    const { sku, refs } = await stocked([[10, 'paris']]);
    const orderid = uniqueId('order');
    await service.allocate({ orderid, sku, qty: 6 });
    await ship({ shipmentid: uniqueId('parcel'), orderid, lines: [{ sku, qty: 2 }] });

    expect((await cancel(orderid, sku)).status).toBe(204);
    expect((await cancel(orderid, sku)).status).toBe(204);

    expect(await batchOf(refs[0]!)).toMatchObject({ qty: 8, allocated: 0, available: 8 });
    expect(await orderOf(orderid)).toEqual({ orderid, lines: [{ sku, qty: 2, batchref: refs[0], location: 'paris', shipped: 2 }] });
    await expectNoViolations();
  });

  it('leaves nothing to cancel once the line shipped whole: 409', async () => {
    const { sku } = await stocked([[10, 'paris'], [10, 'lyon']]);
    const orderid = uniqueId('order');
    await service.allocate({ orderid, sku, qty: 5, split: 'locations' });
    await ship({ shipmentid: uniqueId('parcel'), orderid, lines: [{ sku, qty: 5 }] });

    expect(await cancel(orderid, sku)).toMatchObject({ status: 409, body: { code: 'line_shipped' } });
    await expectNoViolations();
  });

  it('never moves with a PATCH of its batch: only the units not yet shipped go to another batch', async () => {
    const { sku, refs } = await stocked([[10, 'paris'], [10, 'paris']]);
    const orderid = uniqueId('order');
    await service.allocate({ orderid, sku, qty: 10 });
    await ship({ shipmentid: uniqueId('parcel'), orderid, lines: [{ sku, qty: 4 }] });

    const changed = await invoke('PATCH /batches/{ref}', { pathParameters: { ref: refs[0]! }, body: { qty: 2 } });

    expect(changed).toMatchObject({ status: 200, body: { qty: 2, allocated: 0, available: 2, reallocated: [{ orderid, sku, qty: 6, from: refs[0], batchref: refs[1] }] } });
    expect(await batchOf(refs[1]!)).toMatchObject({ qty: 10, allocated: 6, available: 4 });
    expect(await orderOf(orderid)).toEqual({ orderid, lines: [{ sku, qty: 10, batchref: refs[1], location: 'paris', shipped: 4 }] });
    await expectNoViolations();
  });

  it("is kept when a PATCH leaves no batch for the rest: the line stays as what it shipped, the rest given back", async () => {
    const { sku, refs } = await stocked([[10, 'paris']]);
    const orderid = uniqueId('order');
    await service.allocate({ orderid, sku, qty: 6, split: 'batches' });
    await ship({ shipmentid: uniqueId('parcel'), orderid, lines: [{ sku, qty: 2 }] });

    const changed = await invoke('PATCH /batches/{ref}', { pathParameters: { ref: refs[0]! }, body: { qty: 1 } });

    expect(changed).toMatchObject({ status: 200, body: { qty: 1, allocated: 0, reallocated: [{ orderid, sku, qty: 4, batchref: null }] } });
    expect(await orderOf(orderid)).toMatchObject({ lines: [{ sku, qty: 2, shipped: 2 }] });
    expect(await cancel(orderid, sku)).toMatchObject({ status: 409, body: { code: 'line_shipped' } });
    await expectNoViolations();
  });

  it('counts toward a repeat of its allocation, which answers 200 as before', async () => {
    const { sku, refs } = await stocked([[10, 'paris']]);
    const orderid = uniqueId('order');
    await service.allocate({ orderid, sku, qty: 3 });
    await ship({ shipmentid: uniqueId('parcel'), orderid, lines: [{ sku, qty: 3 }] });

    expect(await service.allocate({ orderid, sku, qty: 3 })).toMatchObject({ status: 200, body: { batchref: refs[0] } });
    expect(await service.allocate({ orderid, sku, qty: 1 })).toMatchObject({ status: 409, body: { code: 'line_exists' } });
  });
});
