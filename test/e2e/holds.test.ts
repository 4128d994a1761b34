import { describe, expect, it } from 'vitest';
import { uniqueId } from '../support/dynamodb';
import { serviceForTheseTests } from '../support/local-service';
import { fetchDocumented } from './documented';

// Holds through checkout (docs/api.md, "Holds"), every route's statuses over HTTP, against the
// service as `npm start` runs it, on the system clock: expiry here waits out a one-second hold.
// test/integration/hold-routes.test.ts judges expiry to the millisecond on a clock the test sets.

const baseUrlOf = serviceForTheseTests('holds');

const send = async (method: string, path: string, body?: unknown) => {
  const response = await fetchDocumented(`${baseUrlOf()}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) };
};

/** A SKU of its own with one batch in stock of `qty`. */
const stockOf = async (qty: number) => {
  const sku = uniqueId('sku');
  const ref = uniqueId('batch');
  const added = await fetchDocumented(`${baseUrlOf()}/add_batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ref, sku, qty, eta: null }),
  });
  expect(added.status).toBe(201);
  return { sku, ref };
};

const ISO_UTC_MILLISECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('POST /holds over HTTP', () => {
  it('answers 201 with the hold, its expiry in ISO 8601 UTC with milliseconds, and its lines sorted by sku, each with its location', async () => {
    const lamp = await stockOf(5);
    const chair = await stockOf(5);
    const holdid = uniqueId('cart');
    const before = Date.now();
    const { status, body } = await send('POST', '/holds', { holdid, lines: [{ sku: lamp.sku, qty: 2 }, { sku: chair.sku, qty: 1 }] });
    expect(status).toBe(201);
    expect(body).toEqual({
      holdid,
      status: 'active',
      expires_at: expect.stringMatching(ISO_UTC_MILLISECONDS),
      lines: [
        { sku: lamp.sku, qty: 2, batchref: lamp.ref, location: 'default' },
        { sku: chair.sku, qty: 1, batchref: chair.ref, location: 'default' },
      ].sort((a, b) => (a.sku < b.sku ? -1 : 1)),
    });
    const lasts = Date.parse(String(body?.expires_at)) - before;
    expect(lasts).toBeGreaterThanOrEqual(900_000);
    expect(lasts).toBeLessThan(960_000);
  });

  it('shows the held units apart on the batch and the stock, and takes them from what is available', async () => {
    const { sku, ref } = await stockOf(5);
    await send('POST', '/holds', { holdid: uniqueId('cart'), lines: [{ sku, qty: 2 }] });
    expect((await send('GET', `/batches/${ref}`)).body).toMatchObject({ qty: 5, allocated: 0, held: 2, available: 3 });
    expect((await send('GET', `/skus/${sku}/stock`)).body).toMatchObject({ in_stock: 3, held: 2, batches: [{ ref, qty: 5, held: 2, available: 3, eta: null }] });
  });

  it('answers 200 with the same body to a repeat while the hold is active, without extending it', async () => {
    const { sku } = await stockOf(5);
    const request = { holdid: uniqueId('cart'), lines: [{ sku, qty: 2 }], ttl_seconds: 60 };
    const placed = await send('POST', '/holds', request);
    const repeated = await send('POST', '/holds', request);
    expect(repeated).toEqual({ status: 200, body: placed.body });
  });

  it('answers 409 for a holdid used with other lines, and for one that has ended', async () => {
    const { sku } = await stockOf(5);
    const holdid = uniqueId('cart');
    await send('POST', '/holds', { holdid, lines: [{ sku, qty: 2 }] });
    expect(await send('POST', '/holds', { holdid, lines: [{ sku, qty: 3 }] })).toEqual({
      status: 409,
      body: { message: `Hold ${holdid} already exists with other lines`, code: 'hold_exists' },
    });
    await send('DELETE', `/holds/${holdid}`);
    expect(await send('POST', '/holds', { holdid, lines: [{ sku, qty: 2 }] })).toEqual({
      status: 409,
      body: { message: `Hold ${holdid} has ended (released): a holdid is used once`, code: 'hold_ended' },
    });
  });

  it('answers 400 naming every line that cannot be held, and holds nothing', async () => {
    const { sku, ref } = await stockOf(1);
    const scarce = await stockOf(1);
    const holdid = uniqueId('cart');
    const { status, body } = await send('POST', '/holds', {
      holdid,
      lines: [{ sku, qty: 1 }, { sku: scarce.sku, qty: 2 }, { sku: 'never-added', qty: 1 }],
    });
    expect(status).toBe(400);
    expect(body).toEqual({
      message: `Cannot place hold ${holdid}`, code: 'hold_refused',
      lines: expect.arrayContaining([
        { sku: scarce.sku, reason: 'out_of_stock' },
        { sku: 'never-added', reason: 'unknown_sku' },
      ]),
    });
    expect((await send('GET', `/batches/${ref}`)).body).toMatchObject({ held: 0, available: 1 });
    expect((await send('GET', `/holds/${holdid}`)).status).toBe(404);
  });

  it('answers 400 for a ttl_seconds out of bounds', async () => {
    const { sku } = await stockOf(1);
    for (const ttl_seconds of [0, 86_401, 1.5]) {
      const { status, body } = await send('POST', '/holds', { holdid: uniqueId('cart'), lines: [{ sku, qty: 1 }], ttl_seconds });
      expect(status).toBe(400);
      expect(body?.issues).toEqual([expect.objectContaining({ path: 'ttl_seconds' })]);
    }
  });
});

describe('GET, PATCH and DELETE /holds/{holdid} over HTTP', () => {
  it('reads a hold, and answers 404 for a holdid never used', async () => {
    const { sku } = await stockOf(5);
    const placed = await send('POST', '/holds', { holdid: uniqueId('cart'), lines: [{ sku, qty: 1 }] });
    expect(await send('GET', `/holds/${placed.body?.holdid}`)).toEqual({ status: 200, body: placed.body });
    const unknown = uniqueId('cart');
    expect(await send('GET', `/holds/${unknown}`)).toEqual({ status: 404, body: { message: `Hold ${unknown} not found`, code: 'unknown_hold' } });
  });

  it('sets a new expiry from now with PATCH, and refuses to extend a hold that has ended', async () => {
    const { sku } = await stockOf(5);
    const holdid = uniqueId('cart');
    await send('POST', '/holds', { holdid, lines: [{ sku, qty: 1 }], ttl_seconds: 60 });
    const before = Date.now();
    const extended = await send('PATCH', `/holds/${holdid}`, { ttl_seconds: 3_600 });
    expect(extended.status).toBe(200);
    expect(Date.parse(String(extended.body?.expires_at)) - before).toBeGreaterThanOrEqual(3_600_000);
    expect((await send('GET', `/holds/${holdid}`)).body?.expires_at).toBe(extended.body?.expires_at);
    await send('DELETE', `/holds/${holdid}`);
    expect(await send('PATCH', `/holds/${holdid}`, { ttl_seconds: 60 })).toEqual({
      status: 409,
      body: { message: `Hold ${holdid} was released: only an active hold can be extended`, code: 'hold_ended' },
    });
    expect((await send('PATCH', `/holds/${uniqueId('cart')}`, { ttl_seconds: 60 })).status).toBe(404);
  });

  it('releases with DELETE, its stock back at once; a repeat is 204 too; an unknown holdid 404', async () => {
    const { sku, ref } = await stockOf(2);
    const holdid = uniqueId('cart');
    await send('POST', '/holds', { holdid, lines: [{ sku, qty: 2 }] });
    expect(await send('DELETE', `/holds/${holdid}`)).toEqual({ status: 204, body: undefined });
    expect((await send('GET', `/batches/${ref}`)).body).toMatchObject({ held: 0, available: 2 });
    expect((await send('GET', `/holds/${holdid}`)).body?.status).toBe('released');
    expect((await send('DELETE', `/holds/${holdid}`)).status).toBe(204);
    expect((await send('DELETE', `/holds/${uniqueId('cart')}`)).status).toBe(404);
  });
});

describe('POST /holds/{holdid}/confirm over HTTP', () => {
  it("turns the held lines into the order's, on the same batches, and answers a repeat 200", async () => {
    const { sku, ref } = await stockOf(3);
    const holdid = uniqueId('cart');
    const orderid = uniqueId('order');
    await send('POST', '/holds', { holdid, lines: [{ sku, qty: 2 }] });
    const confirmed = await send('POST', `/holds/${holdid}/confirm`, { orderid });
    expect(confirmed).toEqual({ status: 201, body: { orderid, lines: [{ sku, qty: 2, batchref: ref, location: 'default' }] } });
    expect(await send('POST', `/holds/${holdid}/confirm`, { orderid })).toEqual({ status: 200, body: confirmed.body });
    expect((await send('GET', `/allocations/${orderid}`)).body).toEqual(confirmed.body);
    expect((await send('GET', `/batches/${ref}`)).body).toMatchObject({ qty: 3, allocated: 2, held: 0, available: 1 });
    expect((await send('GET', `/holds/${holdid}`)).body).toMatchObject({ status: 'confirmed', orderid });
  });

  it('takes exactly the held units, even the last ones of a batch, and the lines behave like any other', async () => {
    const { sku, ref } = await stockOf(2);
    const holdid = uniqueId('cart');
    const orderid = uniqueId('order');
    await send('POST', '/holds', { holdid, lines: [{ sku, qty: 2 }] });
    expect((await send('POST', '/allocate', { orderid: uniqueId('order'), sku, qty: 1 })).status).toBe(400);
    expect((await send('POST', `/holds/${holdid}/confirm`, { orderid })).status).toBe(201);
    expect((await send('GET', `/skus/${sku}/stock`)).body).toMatchObject({ in_stock: 0, held: 0, batches: [] });
    expect((await send('DELETE', `/allocations/${orderid}/${sku}`)).status).toBe(204);
    expect((await send('GET', `/batches/${ref}`)).body).toMatchObject({ allocated: 0, held: 0, available: 2 });
  });

  it('answers 409 naming why, with nothing changed: confirmed to another order, released, or a SKU the order has', async () => {
    const { sku } = await stockOf(5);
    const [first, released, clashing] = [uniqueId('cart'), uniqueId('cart'), uniqueId('cart')];
    const orderid = uniqueId('order');
    for (const holdid of [first, released, clashing]) await send('POST', '/holds', { holdid, lines: [{ sku, qty: 1 }] });
    await send('POST', `/holds/${first}/confirm`, { orderid });
    const other = uniqueId('order');
    expect(await send('POST', `/holds/${first}/confirm`, { orderid: other })).toEqual({
      status: 409,
      body: { message: `Hold ${first} was confirmed to order ${orderid}: only an active hold can be confirmed`, code: 'hold_ended' },
    });
    await send('DELETE', `/holds/${released}`);
    expect((await send('POST', `/holds/${released}/confirm`, { orderid: other })).body).toEqual({
      message: `Hold ${released} was released: only an active hold can be confirmed`, code: 'hold_ended',
    });
    expect(await send('POST', `/holds/${clashing}/confirm`, { orderid })).toEqual({
      status: 409,
      body: { message: `Hold ${clashing} cannot be confirmed: order ${orderid} already has a line for sku ${sku}`, code: 'line_exists' },
    });
    expect((await send('GET', `/holds/${clashing}`)).body?.status).toBe('active');
    expect(await send('DELETE', `/holds/${first}`)).toEqual({
      status: 409,
      body: { message: `Hold ${first} was confirmed to order ${orderid}: cancel the order's lines instead`, code: 'hold_ended' },
    });
    expect((await send('POST', `/holds/${uniqueId('cart')}/confirm`, { orderid })).status).toBe(404);
  });
});

describe('a hold that expires, over HTTP', () => {
  it('reads expired once its time has passed, its units free for a sale, and can be neither extended nor confirmed', async () => {
    const { sku, ref } = await stockOf(1);
    const holdid = uniqueId('cart');
    const { body } = await send('POST', '/holds', { holdid, lines: [{ sku, qty: 1 }], ttl_seconds: 1 });
    await new Promise((resolve) => setTimeout(resolve, Date.parse(String(body?.expires_at)) - Date.now() + 50));
    expect((await send('GET', `/holds/${holdid}`)).body?.status).toBe('expired');
    expect((await send('PATCH', `/holds/${holdid}`, { ttl_seconds: 60 })).status).toBe(409);
    expect((await send('POST', `/holds/${holdid}/confirm`, { orderid: uniqueId('order') })).status).toBe(409);
    expect(await send('POST', '/allocate', { orderid: uniqueId('order'), sku, qty: 1 })).toEqual({ status: 201, body: { batchref: ref, location: 'default' } });
    expect((await send('DELETE', `/holds/${holdid}`)).status).toBe(204);
  });
});
