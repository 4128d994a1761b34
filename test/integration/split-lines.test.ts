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

  it('places the part again over the batches left at its place when no one of them can take it: 20 off a batch that fell to 5, to the 10 and 15 beside it', async () => {
    const { sku, refs } = await stocked([[20, 'paris'], [20, 'paris'], [15, 'paris']]);
    const orderid = uniqueId('order');
    expect((await service.allocate({ orderid, sku, qty: 30, split: 'batches' })).body).toMatchObject({ parts: [{ batchref: refs[0], qty: 20 }, { batchref: refs[1], qty: 10 }] });
    await expectNoViolations();
    const changed = await invoke('PATCH /batches/{ref}', { pathParameters: { ref: refs[0]! }, body: { qty: 5 } });
    expect(changed).toMatchObject({
      status: 200,
      body: {
        available: 5,
        reallocated: [
          { orderid, sku, qty: 10, from: refs[0], batchref: refs[1] },
          { orderid, sku, qty: 10, from: refs[0], batchref: refs[2] },
        ],
      },
    });
    await expectNoViolations();
    expect((await invoke('GET /allocations/{orderid}', { pathParameters: { orderid } })).body).toEqual({
      orderid,
      lines: [{ sku, qty: 30, parts: [{ batchref: refs[2], location: 'paris', qty: 10 }, { batchref: refs[1], location: 'paris', qty: 20 }] }],
    });
    expect([await available(refs[0]!), await available(refs[1]!), await available(refs[2]!)]).toEqual([5, 0, 5]);
    // The line is listed under the batches it is on now, and no longer under the one it left.
    expect((await invoke('PATCH /batches/{ref}', { pathParameters: { ref: refs[0]! }, body: { qty: 0 } })).body).toMatchObject({ reallocated: [] });
    expect((await invoke('PATCH /batches/{ref}', { pathParameters: { ref: refs[2]! }, body: { qty: 0 } })).body).toMatchObject({
      reallocated: [{ orderid, sku, qty: 30, from: refs[2], batchref: null }],
    });
    expect([await available(refs[1]!), await available(refs[2]!)]).toEqual([20, 0]);
    await expectNoViolations();
  });

  it('takes the whole line out of its order when the batches left at its place cannot hold the part, though a batch elsewhere could', async () => {
    const { sku, refs } = await stocked([[20, 'paris'], [20, 'paris'], [5, 'paris'], [25, 'lyon']]);
    const orderid = uniqueId('order');
    expect((await service.allocate({ orderid, sku, qty: 30, split: 'batches' })).body).toMatchObject({ parts: [{ batchref: refs[0], qty: 20 }, { batchref: refs[1], qty: 10 }] });
    const changed = await invoke('PATCH /batches/{ref}', { pathParameters: { ref: refs[0]! }, body: { qty: 5 } });
    expect(changed).toMatchObject({ status: 200, body: { reallocated: [{ orderid, sku, qty: 30, from: refs[0], batchref: null }] } });
    expect((await invoke('GET /allocations/{orderid}', { pathParameters: { orderid } })).status).toBe(404);
    expect(await Promise.all(refs.map(available))).toEqual([5, 20, 5, 25]);
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

describe('split lines on a spread batch', () => {
  it('take parts from its pieces, alone, in an order and in a hold, and give them back, as whole lines do', async () => {
    const { sku, refs } = await stocked([[30, 'paris'], [6, 'paris']]);
    const repository = table.repository();
    await repository.spreadBatch(refs[0]!, sku);
    expect((await repository.batch(refs[0]!, sku))?.pieces).toBeDefined();
    const [alone, ordered, holdid] = [uniqueId('order'), uniqueId('order'), uniqueId('hold')];
    // The line alone takes 20 of the spread batch's 30, from its pieces; the order the 10 left there and 2 of the other batch.
    expect(await service.allocate({ orderid: alone, sku, qty: 20, split: 'batches' })).toMatchObject({ status: 201, body: { batchref: refs[0], parts: [{ batchref: refs[0], qty: 20 }] } });
    const order = await invoke('POST /orders', { body: { orderid: ordered, split: 'batches', lines: [{ sku, qty: 12 }] } });
    expect(order).toMatchObject({ status: 201, body: { lines: [{ sku, parts: [{ batchref: refs[0], qty: 10 }, { batchref: refs[1], qty: 2 }] }] } });
    expect((await invoke('POST /holds', { body: { holdid, split: 'batches', lines: [{ sku, qty: 4 }] } })).status).toBe(201);
    expect(await Promise.all(refs.map(available))).toEqual([0, 0]);
    await expectNoViolations();
    expect((await invoke('DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid: ordered, sku } })).status).toBe(204);
    expect((await invoke('DELETE /holds/{holdid}', { pathParameters: { holdid } })).status).toBe(204);
    expect((await invoke('DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid: alone, sku } })).status).toBe(204);
    expect(await Promise.all(refs.map(available))).toEqual([30, 6]);
    await expectNoViolations();
  });
});

describe('an order whose lines may be split', () => {
  it("takes every line's parts with the order's one write, at the place its other line comes from, and reads back as allocated", async () => {
    const lamps = await stocked([[20, 'paris'], [20, 'paris'], [15, 'lyon'], [15, 'lyon']]);
    const vases = await stocked([[5, 'lyon']]);
    const orderid = uniqueId('order');
    const order = { orderid, split: 'batches', lines: [{ sku: lamps.sku, qty: 30 }, { sku: vases.sku, qty: 2, split: 'none' }] };
    const answer = await invoke('POST /orders', { body: order });
    const lamp = { sku: lamps.sku, qty: 30, parts: [{ batchref: lamps.refs[2], location: 'lyon', qty: 15 }, { batchref: lamps.refs[3], location: 'lyon', qty: 15 }] };
    const vase = { sku: vases.sku, qty: 2, batchref: vases.refs[0], location: 'lyon' };
    const lines = [lamp, vase].sort((a, b) => (a.sku < b.sku ? -1 : 1));
    expect(answer).toMatchObject({ status: 201, body: { orderid, lines } });
    expect(await invoke('POST /orders', { body: order })).toMatchObject({ status: 200, body: { orderid, lines } });
    expect(await invoke('GET /allocations/{orderid}', { pathParameters: { orderid } })).toMatchObject({ status: 200, body: { orderid, lines } });
    expect(await Promise.all([...lamps.refs, ...vases.refs].map(available))).toEqual([20, 20, 0, 0, 3]);
    await expectNoViolations();
  });

  it('refuses a repeat with another split, naming the line, and gives every part back when the line is cancelled', async () => {
    const { sku, refs } = await stocked([[3, 'paris'], [3, 'lyon']]);
    const orderid = uniqueId('order');
    expect((await invoke('POST /orders', { body: { orderid, lines: [{ sku, qty: 5, split: 'locations' }] } })).status).toBe(201);
    expect(await invoke('POST /orders', { body: { orderid, split: 'batches', lines: [{ sku, qty: 5 }] } })).toMatchObject({
      status: 409,
      body: { code: 'split_otherwise', lines: [{ sku }] },
    });
    expect((await invoke('DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid, sku } })).status).toBe(204);
    expect([await available(refs[0]!), await available(refs[1]!)]).toEqual([3, 3]);
    await expectNoViolations();
  });

  it('answers a repeat whose first answer was lost with the same parts, though the stock left would need too many writes for it', async () => {
    // Each line first takes two boxes of 5; its repeat, planned on the stock left, would take ten of 1: 124 writes.
    const skus = await Promise.all(Array.from({ length: 4 }, () => stocked([[5, 'paris'], [5, 'paris'], ...Array.from({ length: 10 }, () => [1, 'paris'] as const)])));
    const body = { orderid: uniqueId('order'), split: 'batches', lines: skus.map(({ sku }) => ({ sku, qty: 10 })) };
    const first = await invoke('POST /orders', { body });
    expect(first.status).toBe(201);
    expect(await invoke('POST /orders', { body })).toMatchObject({ status: 200, body: first.body });
    await expectNoViolations();
  });

  it('plans only the lines an order adds: one line there already, five new ones fit one transaction', async () => {
    // Six lines of six parts, each emptying its batch, would be 114 writes; the five new ones are 95.
    // The first SKU has stock for its line twice over, so that a plan of every line would place it again.
    const skus = await Promise.all(Array.from({ length: 6 }, (_, index) => stocked(Array.from({ length: index === 0 ? 12 : 6 }, () => [1, 'paris'] as const))));
    const orderid = uniqueId('order');
    expect((await invoke('POST /orders', { body: { orderid, split: 'batches', lines: [{ sku: skus[0]!.sku, qty: 6 }] } })).status).toBe(201);
    const more = await invoke('POST /orders', { body: { orderid, split: 'batches', lines: skus.map(({ sku }) => ({ sku, qty: 6 })) } });
    expect(more.status).toBe(201);
    expect((more.body as { lines: unknown[] }).lines).toHaveLength(6);
    await expectNoViolations();
  });

  it('adds a line split over places to an order, the place its line comes from counted once', async () => {
    const rugs = await stocked([[5, 'lyon']]);
    const lamps = await stocked([[8, 'lyon'], [10, 'paris']]);
    const orderid = uniqueId('order');
    expect((await invoke('POST /orders', { body: { orderid, lines: [{ sku: rugs.sku, qty: 1 }] } })).status).toBe(201);
    // The rug's line is there, at Lyon, whose 8 lamps alone do not hold 15: Paris's parcel is added,
    // and the parts come in the one-line preference.
    const more = await invoke('POST /orders', { body: { orderid, lines: [{ sku: rugs.sku, qty: 1 }, { sku: lamps.sku, qty: 15, split: 'locations' }] } });
    const lamp = { sku: lamps.sku, qty: 15, parts: [{ batchref: lamps.refs[1], location: 'paris', qty: 10 }, { batchref: lamps.refs[0], location: 'lyon', qty: 5 }] };
    const rug = { sku: rugs.sku, qty: 1, batchref: rugs.refs[0], location: 'lyon' };
    expect(more).toMatchObject({ status: 201, body: { lines: [lamp, rug].sort((a, b) => (a.sku < b.sku ? -1 : 1)) } });
    await expectNoViolations();
  });

  it('refuses an order too large for one transaction even with its spread batches gathered at once, gathering none', async () => {
    // A part takes all of a spread batch, across its pieces; kept whole, the order would still be 114 writes.
    const skus = await Promise.all(Array.from({ length: 6 }, (_, index) => stocked(index === 0 ? [[20, 'paris'], ...Array.from({ length: 5 }, () => [1, 'paris'] as const)] : Array.from({ length: 6 }, () => [1, 'paris'] as const))));
    const hot = skus[0]!;
    await table.repository().spreadBatch(hot.refs[0]!, hot.sku);
    expect((await table.repository().batch(hot.refs[0]!, hot.sku))?.pieces).toBeDefined();
    const answer = await invoke('POST /orders', { body: { orderid: uniqueId('order'), split: 'batches', lines: skus.map(({ sku }, index) => ({ sku, qty: index === 0 ? 25 : 6 })) } });
    expect(answer).toMatchObject({ status: 400, body: { code: 'too_many_parts' } });
    expect((await table.repository().batch(hot.refs[0]!, hot.sku))?.pieces).toBeDefined();
    await expectNoViolations();
  });

  it('refuses with 400, writing nothing, an order whose parts need more writes than one transaction holds', async () => {
    // Lines of six parts, each emptying its batch (a take, the batch's move, a record): 19 writes a line.
    const skus = await Promise.all(Array.from({ length: 6 }, () => stocked(Array.from({ length: 6 }, () => [1, 'paris'] as const))));
    const orderid = uniqueId('order');
    const answer = await invoke('POST /orders', { body: { orderid, split: 'batches', lines: skus.map(({ sku }) => ({ sku, qty: 6 })) } });
    expect(answer).toMatchObject({ status: 400, body: { code: 'too_many_parts', message: `Order ${orderid} needs 114 writes in one transaction, more than 100: allow fewer lines a split, or send fewer lines` } });
    expect((await invoke('GET /allocations/{orderid}', { pathParameters: { orderid } })).status).toBe(404);
    expect(await Promise.all(skus.flatMap(({ refs }) => refs).map(available))).toEqual(Array.from({ length: 36 }, () => 1));
    const fits = await invoke('POST /orders', { body: { orderid, split: 'batches', lines: skus.slice(0, 5).map(({ sku }) => ({ sku, qty: 6 })) } });
    expect(fits.status).toBe(201);
    await expectNoViolations();
  });
});

describe('a hold whose lines may be split', () => {
  it('holds a split line as its parts, extends them, and confirms them onto the same parts', async () => {
    const lamps = await stocked([[20, 'paris'], [20, 'paris']]);
    const rugs = await stocked([[5, 'paris']]);
    const holdid = uniqueId('hold');
    const body = { holdid, split: 'batches', lines: [{ sku: lamps.sku, qty: 30 }, { sku: rugs.sku, qty: 2, split: 'none' }], ttl_seconds: 60 };
    const lamp = { sku: lamps.sku, qty: 30, parts: [{ batchref: lamps.refs[0], location: 'paris', qty: 20 }, { batchref: lamps.refs[1], location: 'paris', qty: 10 }] };
    const rug = { sku: rugs.sku, qty: 2, batchref: rugs.refs[0], location: 'paris' };
    const lines = [lamp, rug].sort((a, b) => (a.sku < b.sku ? -1 : 1));
    expect(await invoke('POST /holds', { body })).toMatchObject({ status: 201, body: { holdid, status: 'active', lines } });
    expect(await invoke('POST /holds', { body })).toMatchObject({ status: 200, body: { holdid, lines } });
    expect(await invoke('POST /holds', { body: { ...body, split: 'locations' } })).toMatchObject({ status: 409, body: { code: 'split_otherwise' } });
    expect(await invoke('PATCH /holds/{holdid}', { pathParameters: { holdid }, body: { ttl_seconds: 120 } })).toMatchObject({ status: 200, body: { lines } });
    expect(await invoke('GET /holds/{holdid}', { pathParameters: { holdid } })).toMatchObject({ status: 200, body: { lines } });
    await expectNoViolations();
    const orderid = uniqueId('order');
    expect(await invoke('POST /holds/{holdid}/confirm', { pathParameters: { holdid }, body: { orderid } })).toMatchObject({ status: 201, body: { orderid, lines } });
    expect(await invoke('GET /allocations/{orderid}', { pathParameters: { orderid } })).toMatchObject({ status: 200, body: { orderid, lines } });
    expect(await Promise.all([...lamps.refs, ...rugs.refs].map(available))).toEqual([0, 10, 3]);
    await expectNoViolations();
    expect((await invoke('DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid, sku: lamps.sku } })).status).toBe(204);
    expect(await Promise.all(lamps.refs.map(available))).toEqual([20, 20]);
    await expectNoViolations();
  });

  it('gives every part back when released', async () => {
    const { sku, refs } = await stocked([[3, 'paris'], [3, 'lyon']]);
    const holdid = uniqueId('hold');
    expect((await invoke('POST /holds', { body: { holdid, lines: [{ sku, qty: 5, split: 'locations' }] } })).status).toBe(201);
    expect(await Promise.all(refs.map(available))).toEqual([0, 1]);
    expect((await invoke('DELETE /holds/{holdid}', { pathParameters: { holdid } })).status).toBe(204);
    expect(await Promise.all(refs.map(available))).toEqual([3, 3]);
    await expectNoViolations();
  });

  it('refuses with 400, holding nothing, a hold whose parts, or their confirm, need more writes than one transaction holds', async () => {
    const skus = await Promise.all(Array.from({ length: 6 }, () => stocked(Array.from({ length: 6 }, () => [1, 'paris'] as const))));
    const holdid = uniqueId('hold');
    const answer = await invoke('POST /holds', { body: { holdid, split: 'batches', lines: skus.map(({ sku }) => ({ sku, qty: 6 })) } });
    expect(answer).toMatchObject({ status: 400, body: { code: 'too_many_parts' } });
    expect((await invoke('GET /holds/{holdid}', { pathParameters: { holdid } })).status).toBe(404);
    expect(await Promise.all(skus.flatMap(({ refs }) => refs).map(available))).toEqual(Array.from({ length: 36 }, () => 1));
    await expectNoViolations();
  });
});
