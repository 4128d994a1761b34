import { describe, expect, it } from 'vitest';
import { createAllocationClient } from '../../client/index';
import { uniqueId } from '../support/dynamodb';
import { serviceForTheseTests } from '../support/local-service';
import { fetchRequestDocumented } from './documented';

/*
 * Split lines as `npm start` serves them, over HTTP, through the typed client (docs/api.md, "Split
 * lines"): lines, orders and holds split over batches and locations, read back, repeated, cancelled,
 * confirmed and moved by a change of their batch, every unit accounted for on its batch after each
 * step. The parts are judged by the rule (fewest places, then fewest parts, in stock first), not by
 * which of two equal batches a tie picks.
 */

const baseUrlOf = serviceForTheseTests('e2e-split');
const client = () => createAllocationClient({ baseUrl: baseUrlOf(), fetch: fetchRequestDocumented });

interface Part {
  readonly batchref: string;
  readonly location: string;
  readonly qty: number;
}
interface Line {
  readonly sku: string;
  readonly qty: number;
  readonly batchref?: string;
  readonly location?: string;
  readonly parts?: readonly Part[];
}

const answered = ({ data, error, response }: { data?: unknown; error?: unknown; response: Response }) => ({ status: response.status, body: (response.ok ? data : error) as Record<string, unknown> });

const addBatch = async (ref: string, sku: string, qty: number, location: string, eta: string | null = null) => {
  const { response } = await client().POST('/add_batch', { body: { ref, sku, qty, eta, location }, parseAs: 'text' });
  expect(response.status).toBe(201);
};

/** Every unit of each batch accounted for: on the lines known to be on it, held, or available. */
const expectAccounted = async (refs: readonly string[], lines: readonly Line[], held: Record<string, number> = {}) => {
  for (const ref of refs) {
    const batch = answered(await client().GET('/batches/{ref}', { params: { path: { ref } } })).body as { qty: number; allocated: number; held: number; available: number };
    const onLines = lines
      .flatMap((line): { batchref?: string; qty: number }[] => [...(line.parts ?? [{ batchref: line.batchref, qty: line.qty }])])
      .filter(({ batchref }) => batchref === ref)
      .reduce((sum, { qty }) => sum + qty, 0);
    expect({ ref, allocated: batch.allocated, held: batch.held, total: batch.allocated + batch.held + batch.available }).toEqual({ ref, allocated: onLines, held: held[ref] ?? 0, total: batch.qty });
  }
};

/** How many places and parts a line's answer takes, and its units. */
const shape = (line: Line) => {
  const parts = line.parts ?? [{ batchref: line.batchref as string, location: line.location as string, qty: line.qty }];
  return { places: new Set(parts.map(({ location }) => location)).size, parts: parts.length, units: parts.reduce((sum, { qty }) => sum + qty, 0) };
};

let places: { paris: string; lyon: string };

describe('split lines, as a client sees them over HTTP', () => {
  it('creates the places the lines come from', async () => {
    places = { paris: uniqueId('paris'), lyon: uniqueId('lyon') };
    for (const [id, priority] of [[places.paris, 0], [places.lyon, 1]] as const) {
      expect((await client().PUT('/locations/{id}', { params: { path: { id } }, body: { name: id, priority, serves: ['*'] } })).response.status).toBe(201);
    }
  });

  it('splits a line over batches at one place, answers a repeat alike, refuses another split, and gives every part back on a cancel', async () => {
    const sku = uniqueId('LAMP');
    const refs = [uniqueId('p1'), uniqueId('p2'), uniqueId('l1'), uniqueId('ship')];
    await addBatch(refs[0]!, sku, 20, places.paris);
    await addBatch(refs[1]!, sku, 20, places.paris);
    await addBatch(refs[2]!, sku, 25, places.lyon);
    await addBatch(refs[3]!, sku, 50, places.paris, '2031-01-01');
    const orderid = uniqueId('order');
    const line = { orderid, sku, qty: 30, split: 'batches' as const };
    const first = answered(await client().POST('/allocate', { body: line }));
    expect(first.status).toBe(201);
    // In stock, at one place: Paris's two boxes, not the shipment that could take it whole.
    expect(shape({ sku, qty: 30, ...first.body })).toEqual({ places: 1, parts: 2, units: 30 });
    expect((first.body.parts as Part[]).every(({ location }) => location === places.paris)).toBe(true);
    expect(answered(await client().POST('/allocate', { body: line }))).toEqual({ status: 200, body: first.body });
    expect(answered(await client().POST('/allocate', { body: { ...line, split: 'locations' } })).body.code).toBe('split_otherwise');
    const read = answered(await client().GET('/allocations/{orderid}', { params: { path: { orderid } } }));
    expect(read.body.lines).toEqual([{ sku, qty: 30, ...first.body }]);
    await expectAccounted(refs, read.body.lines as Line[]);
    expect((await client().DELETE('/allocations/{orderid}/{sku}', { params: { path: { orderid, sku } } })).response.status).toBe(204);
    await expectAccounted(refs, []);
  });

  it('splits an order\'s line over places when no one place holds it, and moves a part off a batch that shrinks', async () => {
    const [lamp, rug] = [uniqueId('LAMP'), uniqueId('RUG')];
    const refs = [uniqueId('p1'), uniqueId('l1'), uniqueId('l2'), uniqueId('rug')];
    await addBatch(refs[0]!, lamp, 10, places.paris);
    await addBatch(refs[1]!, lamp, 10, places.lyon);
    await addBatch(refs[2]!, lamp, 10, places.lyon);
    await addBatch(refs[3]!, rug, 5, places.lyon);
    const orderid = uniqueId('order');
    const order = { orderid, split: 'locations' as const, lines: [{ sku: lamp, qty: 25 }, { sku: rug, qty: 1 }] };
    const placed = answered(await client().POST('/orders', { body: order }));
    expect(placed.status).toBe(201);
    const lines = placed.body.lines as Line[];
    expect(lines.map(shape)).toEqual(
      [
        { sku: lamp, shape: { places: 2, parts: 3, units: 25 } },
        { sku: rug, shape: { places: 1, parts: 1, units: 1 } },
      ]
        .sort((a, b) => (a.sku < b.sku ? -1 : 1))
        .map(({ shape: expected }) => expected),
    );
    expect(answered(await client().POST('/orders', { body: order }))).toEqual({ status: 200, body: placed.body });
    await expectAccounted(refs, lines);
    // Lyon's second box is broken: its part goes to no other batch that has room, so the line leaves its order.
    const changed = answered(await client().PATCH('/batches/{ref}', { params: { path: { ref: refs[2]! } }, body: { qty: 0 } }));
    expect(changed.status).toBe(200);
    const after = answered(await client().GET('/allocations/{orderid}', { params: { path: { orderid } } }));
    expect((after.body.lines as Line[]).map(({ sku }) => sku)).toEqual([rug]);
    await expectAccounted(refs, after.body.lines as Line[]);
  });

  it('holds a split line as its parts, and confirms it onto the same parts', async () => {
    const sku = uniqueId('DESK');
    const refs = [uniqueId('p1'), uniqueId('p2')];
    await addBatch(refs[0]!, sku, 4, places.paris);
    await addBatch(refs[1]!, sku, 4, places.paris);
    const holdid = uniqueId('cart');
    const held = answered(await client().POST('/holds', { body: { holdid, lines: [{ sku, qty: 6, split: 'batches' }] } }));
    expect(held.status).toBe(201);
    const [line] = held.body.lines as [Line];
    expect(shape(line)).toEqual({ places: 1, parts: 2, units: 6 });
    await expectAccounted(refs, [], Object.fromEntries((line.parts ?? []).map(({ batchref, qty }) => [batchref, qty])));
    const orderid = uniqueId('order');
    const confirmed = answered(await client().POST('/holds/{holdid}/confirm', { params: { path: { holdid } }, body: { orderid } }));
    expect(confirmed).toEqual({ status: 201, body: { orderid, lines: [line] } });
    await expectAccounted(refs, [line]);
    const stock = answered(await client().GET('/skus/{sku}/stock', { params: { path: { sku } } }));
    expect(stock.body).toMatchObject({ in_stock: 2, held: 0 });
  });
});
