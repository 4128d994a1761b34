import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkInvariants } from '../../tools/invariants';
import { type HandlerService, serviceOver } from '../reliability/support/service';
import { type TestTable, createTestTable, uniqueId } from '../support/dynamodb';
import { routeEvent } from '../support/events';

/*
 * Lines split over batches (docs/api.md, "Split lines"), through the handlers over DynamoDB Local:
 * the parts taken in one transaction, read back, repeated, cancelled, and moved by a change of their
 * batch; every state judged by `npm run check`'s invariants.
 */

let table: TestTable;
let service: HandlerService;
beforeAll(async () => {
  table = await createTestTable();
  service = serviceOver(table.repository());
  for (const [id, priority] of [['paris', 0], ['lyon', 1]] as const) {
    const answer = await service.invoke(routeEvent('PUT /locations/{id}', { pathParameters: { id }, body: { name: id, priority, serves: ['*'] } }));
    expect(answer.status).toBe(201);
  }
});
afterAll(() => table.drop());

const invoke = (routeKey: string, options: Parameters<typeof routeEvent>[1]) => service.invoke(routeEvent(routeKey, options));
const available = async (ref: string) => ((await invoke('GET /batches/{ref}', { pathParameters: { ref } })).body as { available: number }).available;
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

describe('a line split over batches', () => {
  it('takes its parts from several batches at one place in one write, and reads back as allocated', async () => {
    const { sku, refs } = await stocked([[20, 'paris'], [20, 'paris'], [25, 'lyon']]);
    const orderid = uniqueId('order');
    const answer = await service.allocate({ orderid, sku, qty: 30, split: 'batches' });
    expect(answer.status).toBe(201);
    expect(answer.body).toEqual({ parts: [{ batchref: refs[0], location: 'paris', qty: 20 }, { batchref: refs[1], location: 'paris', qty: 10 }] });
    expect([await available(refs[0]!), await available(refs[1]!), await available(refs[2]!)]).toEqual([0, 10, 25]);
    expect(await invoke('GET /allocations/{orderid}', { pathParameters: { orderid } })).toMatchObject({
      status: 200,
      body: { orderid, lines: [{ sku, qty: 30, parts: [{ batchref: refs[0], location: 'paris', qty: 20 }, { batchref: refs[1], location: 'paris', qty: 10 }] }] },
    });
    await expectNoViolations();
  });

  it('answers a repeat with the same parts, taking no stock, and one with another split with 409', async () => {
    const { sku, refs } = await stocked([[2, 'paris'], [3, 'lyon']]);
    const line = { orderid: uniqueId('order'), sku, qty: 4, split: 'locations' };
    const first = await service.allocate(line);
    expect(first.status).toBe(201);
    expect(await service.allocate(line)).toMatchObject({ status: 200, body: first.body });
    expect(await service.allocate({ ...line, split: 'batches' })).toMatchObject({ status: 409, body: { code: 'split_otherwise' } });
    expect(await service.allocate({ orderid: line.orderid, sku, qty: 4 })).toMatchObject({ status: 409, body: { code: 'split_otherwise' } });
    expect([await available(refs[0]!), await available(refs[1]!)]).toEqual([0, 1]);
  });

  it('goes whole, naming its batch and one part, when one batch in stock can take it', async () => {
    const { sku, refs } = await stocked([[5, 'paris'], [9, 'paris']]);
    expect(await service.allocate({ orderid: uniqueId('order'), sku, qty: 7, split: 'batches' })).toMatchObject({
      status: 201,
      body: { batchref: refs[1], location: 'paris', parts: [{ batchref: refs[1], location: 'paris', qty: 7 }] },
    });
  });

  it('is refused out of stock when no place holds it with `batches`, and allocated over places with `locations`', async () => {
    const { sku } = await stocked([[3, 'paris'], [3, 'lyon']]);
    expect(await service.allocate({ orderid: uniqueId('order'), sku, qty: 5, split: 'batches' })).toMatchObject({ status: 400, body: { code: 'out_of_stock' } });
    expect((await service.allocate({ orderid: uniqueId('order'), sku, qty: 5, split: 'locations' })).status).toBe(201);
    await expectNoViolations();
  });

  it('gives every part back when cancelled', async () => {
    const { sku, refs } = await stocked([[4, 'paris'], [4, 'paris']]);
    const orderid = uniqueId('order');
    expect((await service.allocate({ orderid, sku, qty: 6, split: 'batches' })).status).toBe(201);
    expect((await invoke('DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid, sku } })).status).toBe(204);
    expect([await available(refs[0]!), await available(refs[1]!)]).toEqual([4, 4]);
    expect((await invoke('GET /allocations/{orderid}', { pathParameters: { orderid } })).status).toBe(404);
    await expectNoViolations();
  });
});

describe('a change of a batch under a part', () => {
  it('moves the part to another batch at its place, joining the part there', async () => {
    const { sku, refs } = await stocked([[4, 'paris'], [4, 'paris'], [3, 'paris']]);
    const orderid = uniqueId('order');
    expect((await service.allocate({ orderid, sku, qty: 6, split: 'batches' })).body).toMatchObject({ parts: [{ batchref: refs[0], qty: 4 }, { batchref: refs[1], qty: 2 }] });
    // The second batch gets room for the first's part; then the first falls to nothing.
    expect((await invoke('PATCH /batches/{ref}', { pathParameters: { ref: refs[1]! }, body: { qty: 10 } })).status).toBe(200);
    const changed = await invoke('PATCH /batches/{ref}', { pathParameters: { ref: refs[0]! }, body: { qty: 0 } });
    expect(changed).toMatchObject({ status: 200, body: { reallocated: [{ orderid, sku, qty: 4, from: refs[0], batchref: refs[1] }] } });
    expect((await invoke('GET /allocations/{orderid}', { pathParameters: { orderid } })).body).toEqual({
      orderid,
      lines: [{ sku, qty: 6, batchref: refs[1], location: 'paris', parts: [{ batchref: refs[1], location: 'paris', qty: 6 }] }],
    });
    expect([await available(refs[1]!), await available(refs[2]!)]).toEqual([4, 3]);
    await expectNoViolations();
  });

  it('takes the whole line out of its order when no batch its split allows can take the part', async () => {
    const { sku, refs } = await stocked([[4, 'paris'], [4, 'paris'], [6, 'lyon']]);
    const orderid = uniqueId('order');
    expect((await service.allocate({ orderid, sku, qty: 7, split: 'batches' })).body).toMatchObject({ parts: [{ batchref: refs[0], qty: 4 }, { batchref: refs[1], qty: 3 }] });
    const changed = await invoke('PATCH /batches/{ref}', { pathParameters: { ref: refs[1]! }, body: { qty: 0 } });
    expect(changed).toMatchObject({ status: 200, body: { reallocated: [{ orderid, sku, qty: 7, from: refs[1], batchref: null }] } });
    expect((await invoke('GET /allocations/{orderid}', { pathParameters: { orderid } })).status).toBe(404);
    expect([await available(refs[0]!), await available(refs[1]!), await available(refs[2]!)]).toEqual([4, 0, 6]);
    await expectNoViolations();
  });

  it('refuses a cancel that read the line before a part moved, whatever it read of the batches since: nothing is given back twice', async () => {
    const { sku, refs } = await stocked([[4, 'paris'], [4, 'paris'], [3, 'paris']]);
    const orderid = uniqueId('order');
    expect((await service.allocate({ orderid, sku, qty: 6, split: 'batches' })).status).toBe(201);
    const repository = table.repository();
    const readBefore = await repository.allocationOf(orderid, sku);
    expect((await invoke('PATCH /batches/{ref}', { pathParameters: { ref: refs[1]! }, body: { qty: 10 } })).status).toBe(200);
    expect((await invoke('PATCH /batches/{ref}', { pathParameters: { ref: refs[0]! }, body: { qty: 0 } })).status).toBe(200);
    // The batches of the parts it read, read after the move: only the line's own condition knows it moved.
    const batchesNow = await Promise.all([refs[0]!, refs[1]!].map(async (ref) => (await repository.batch(ref, sku))!));
    expect(await repository.cancelAllocation(readBefore!, batchesNow)).toBe('changed');
    await expectNoViolations();
    expect((await invoke('DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid, sku } })).status).toBe(204);
    expect([await available(refs[0]!), await available(refs[1]!)]).toEqual([0, 10]);
    await expectNoViolations();
  });
});
