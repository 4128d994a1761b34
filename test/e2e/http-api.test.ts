import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OPENAPI_FILE } from '../../tools/openapi';
import { uniqueId } from '../support/dynamodb';
import { serviceForTheseTests } from '../support/local-service';
import { fetchDocumented, sendRawDocumented } from './documented';

// The service as `npm start` runs it, over HTTP, against the run's DynamoDB Local; every test
// makes its own SKUs, refs and order ids, so the tests never see each other's stock.

const baseUrlOf = serviceForTheseTests('e2e');

const post = (path: string, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  fetchDocumented(`${baseUrlOf()}${path}`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });

const addBatch = async (batch: { ref: string; sku: string; qty: number; eta: string | null }) => {
  const response = await post('/add_batch', batch);
  expect(response.status).toBe(201);
  return batch;
};

interface ErrorBody {
  message: string;
  issues?: Array<{ path: string; message: string }>;
}

const expectJsonError = async (response: Response, status: number): Promise<ErrorBody> => {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await response.json()) as ErrorBody;
  expect(typeof body.message).toBe('string');
  return body;
};

describe('POST /add_batch over HTTP', () => {
  it('answers 201 with the plain word OK', async () => {
    const response = await post('/add_batch', { ref: uniqueId('batch'), sku: uniqueId('sku'), qty: 10, eta: null });
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await response.text()).toBe('OK');
  });

  it('answers 200 with the plain word OK to the same batch sent again', async () => {
    const batch = await addBatch({ ref: uniqueId('batch'), sku: uniqueId('sku'), qty: 10, eta: null });
    const response = await post('/add_batch', batch);
    expect({ status: response.status, body: await response.text() }).toEqual({ status: 200, body: 'OK' });
  });

  it('answers 409 for a reference that exists with another batch', async () => {
    const batch = await addBatch({ ref: uniqueId('batch'), sku: uniqueId('sku'), qty: 10, eta: null });
    const body = await expectJsonError(await post('/add_batch', { ...batch, qty: 11 }), 409);
    expect(body.message).toBe(`Batch ${batch.ref} already exists`);
  });

  it('answers 400 with the issues for a batch out of bounds', async () => {
    const response = await post('/add_batch', { ref: uniqueId('batch'), sku: uniqueId('sku'), qty: -1, eta: '2026-02-30' });
    const body = await expectJsonError(response, 400);
    expect(body.issues?.map((issue) => issue.path).sort()).toEqual(['eta', 'qty']);
  });
});

describe('POST /allocate over HTTP', () => {
  it('allocates to the in-stock batch before an earlier shipment, then answers a repeat with 200', async () => {
    const sku = uniqueId('sku');
    const inStock = await addBatch({ ref: uniqueId('in-stock'), sku, qty: 100, eta: null });
    await addBatch({ ref: uniqueId('shipment'), sku, qty: 100, eta: '2026-01-02' });
    const line = { orderid: uniqueId('order'), sku, qty: 10 };

    const first = await post('/allocate', line);
    expect(first.status).toBe(201);
    expect(await first.json()).toEqual({ batchref: inStock.ref, location: 'default' });

    const repeat = await post('/allocate', line);
    expect(repeat.status).toBe(200);
    expect(await repeat.json()).toEqual({ batchref: inStock.ref, location: 'default' });
  });

  it('prefers the earliest shipment when nothing is in stock', async () => {
    const sku = uniqueId('sku');
    await addBatch({ ref: uniqueId('later'), sku, qty: 100, eta: '2027-06-01' });
    const earliest = await addBatch({ ref: uniqueId('earliest'), sku, qty: 100, eta: '2027-01-01' });
    const response = await post('/allocate', { orderid: uniqueId('order'), sku, qty: 1 });
    expect(await response.json()).toEqual({ batchref: earliest.ref, location: 'default' });
  });

  it('answers 409 for the same line with another qty', async () => {
    const batch = await addBatch({ ref: uniqueId('batch'), sku: uniqueId('sku'), qty: 100, eta: null });
    const line = { orderid: uniqueId('order'), sku: batch.sku, qty: 10 };
    await post('/allocate', line);
    await expectJsonError(await post('/allocate', { ...line, qty: 11 }), 409);
  });

  it('answers 400 "Out of stock" when no batch can take the line', async () => {
    const batch = await addBatch({ ref: uniqueId('batch'), sku: uniqueId('sku'), qty: 5, eta: null });
    const body = await expectJsonError(await post('/allocate', { orderid: uniqueId('order'), sku: batch.sku, qty: 6 }), 400);
    expect(body).toEqual({ message: `Out of stock for sku ${batch.sku}`, code: 'out_of_stock', reason: 'out_of_stock' });
  });

  it('answers 400 "Invalid sku" for a SKU never added', async () => {
    const sku = uniqueId('sku');
    const body = await expectJsonError(await post('/allocate', { orderid: uniqueId('order'), sku, qty: 1 }), 400);
    expect(body).toEqual({ message: `Invalid sku ${sku}`, code: 'unknown_sku' });
  });
});

describe('the error table of the contract, over HTTP', () => {
  it('answers 400 for a body that is not valid JSON', async () => {
    await expectJsonError(await post('/allocate', '{"orderid":'), 400);
  });

  it('answers 400 with an issue per field for a line with wrong types', async () => {
    const body = await expectJsonError(await post('/allocate', { orderid: 7, sku: null, qty: '1' }), 400);
    expect(body.issues?.map((issue) => issue.path)).toEqual(['orderid', 'sku', 'qty']);
  });

  it('answers 415 for a body sent as another media type', async () => {
    await expectJsonError(await post('/allocate', '{}', { 'content-type': 'text/plain' }), 415);
  });

  it('answers 415 for a Content-Type sent twice, which API Gateway joins into one that is not JSON', async () => {
    const answer = await sendRawDocumented(baseUrlOf(), {
      method: 'POST',
      path: '/add_batch',
      headers: ['Content-Type', 'application/json', 'Content-Type', 'application/json'],
      body: JSON.stringify({ ref: uniqueId('batch'), sku: uniqueId('sku'), qty: 1, eta: null }),
    });
    expect(answer.status).toBe(415);
    expect(JSON.parse(answer.text)).toEqual({ message: 'Content-Type must be application/json', code: 'unsupported_media_type' });
  });

  it('answers the handler’s 413 for a body over 16 KiB', async () => {
    const body = await expectJsonError(await post('/add_batch', { padding: 'x'.repeat(20 * 1024) }), 413);
    expect(body).toEqual({ message: 'Request body is larger than 16384 bytes', code: 'body_too_large' });
  });

  it('answers API Gateway’s 413 for a body over the 6 MiB Lambda accepts', async () => {
    const body = await expectJsonError(await post('/add_batch', 'x'.repeat(6 * 1024 * 1024 + 1)), 413);
    expect(body).toEqual({ message: 'Request Entity Too Large' });
  });

  it('answers 400 for a body that is not UTF-8', async () => {
    const response = await fetchDocumented(`${baseUrlOf()}/allocate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.concat([Buffer.from('{"orderid": "'), Buffer.from([0xff]), Buffer.from('", "sku": "LAMP", "qty": 1}')]),
    });
    const body = await expectJsonError(response, 400);
    expect(body).toEqual({ message: 'Request body is not valid UTF-8', code: 'malformed_json' });
  });

  it('measures the body in the bytes sent, not in what they decode to', async () => {
    // 16 KiB of bytes that are not UTF-8: within the limit, and not JSON either.
    const response = await fetchDocumented(`${baseUrlOf()}/allocate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new Uint8Array(16 * 1024).fill(0xff),
    });
    expect(response.status).toBe(400);
  });

  it('answers 404 for an unknown path', async () => {
    await expectJsonError(await post('/allocations', {}), 404);
  });

  it.each(['/x/../allocate', '/./allocate', '//allocate', '/allocate/'])(
    'answers 404 for %s: API Gateway matches the path as sent, unresolved',
    async (path) => {
      const answer = await sendRawDocumented(baseUrlOf(), {
        method: 'POST',
        path,
        headers: ['Content-Type', 'application/json'],
        body: JSON.stringify({ orderid: uniqueId('order'), sku: uniqueId('sku'), qty: 1 }),
      });
      expect(answer.status).toBe(404);
      expect(JSON.parse(answer.text)).toEqual({ message: 'Not Found' });
    },
  );

  it('answers 405 with Allow for a known path and another method', async () => {
    const response = await fetchDocumented(`${baseUrlOf()}/allocate`);
    await expectJsonError(response, 405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});

describe('the routes with path parameters, over HTTP', () => {
  const url = (...segments: string[]) => `${baseUrlOf()}/${segments.map(encodeURIComponent).join('/')}`;
  const patch = (ref: string, body: unknown) =>
    fetchDocumented(url('batches', ref), { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('reads, cancels and changes through every route, with ids percent-encoded in the path', async () => {
    const sku = `${uniqueId('lampe')} à poser`;
    const batch = await addBatch({ ref: `${uniqueId('lot')}/été`, sku, qty: 10, eta: null });
    const [kept, cancelled] = [{ orderid: uniqueId('order'), sku, qty: 3 }, { orderid: uniqueId('order'), sku, qty: 4 }];
    for (const line of [kept, cancelled]) expect((await post('/allocate', line)).status).toBe(201);

    const order = await fetchDocumented(url('allocations', kept.orderid));
    expect(order.status).toBe(200);
    expect(await order.json()).toEqual({ orderid: kept.orderid, lines: [{ sku, qty: 3, batchref: batch.ref, location: 'default' }] });

    const cancel = await fetchDocumented(url('allocations', cancelled.orderid, sku), { method: 'DELETE' });
    expect(cancel.status).toBe(204);
    expect(cancel.headers.get('content-type')).toBeNull();
    expect(await cancel.text()).toBe('');

    const status = await fetchDocumented(url('batches', batch.ref));
    expect(await status.json()).toEqual({ ...batch, allocated: 3, held: 0, available: 7, location: 'default' });

    const stock = await fetchDocumented(url('skus', sku, 'stock'));
    expect(await stock.json()).toEqual({
      sku,
      in_stock: 7,
      incoming: 0,
      held: 0,
      next_eta: null,
      on_hand: 10,
      committed: 3,
      batches: [{ ref: batch.ref, qty: 10, held: 0, available: 7, eta: null }],
      locations: [{ location: 'default', in_stock: 7, incoming: 0, held: 0, next_eta: null, on_hand: 10, committed: 3 }],
    });

    const emptied = await patch(batch.ref, { qty: 0 });
    expect(emptied.status).toBe(200);
    expect(await emptied.json()).toMatchObject({
      qty: 0,
      available: 0,
      reallocated: [{ orderid: kept.orderid, sku, qty: 3, from: batch.ref, batchref: null }],
    });
    await expectJsonError(await fetchDocumented(url('allocations', kept.orderid)), 404);
  });

  it('moves a line to the batch the rule picks when its batch shrinks, and answers a repeat of the change with nothing to move', async () => {
    const sku = uniqueId('sku');
    const shrinking = await addBatch({ ref: uniqueId('shelf'), sku, qty: 10, eta: null });
    const shipment = await addBatch({ ref: uniqueId('shipment'), sku, qty: 10, eta: '2027-01-01' });
    const [older, newer] = [{ orderid: uniqueId('order'), sku, qty: 4 }, { orderid: uniqueId('order'), sku, qty: 5 }];
    for (const line of [older, newer]) expect((await post('/allocate', line)).status).toBe(201);

    const shrunk = await patch(shrinking.ref, { qty: 6 });
    expect(shrunk.status).toBe(200);
    expect(await shrunk.json()).toEqual({
      ...shrinking,
      qty: 6,
      allocated: 4,
      held: 0,
      available: 2,
      location: 'default',
      reallocated: [{ ...newer, from: shrinking.ref, batchref: shipment.ref }],
    });
    const repeat = await patch(shrinking.ref, { qty: 6 });
    expect(repeat.status).toBe(200);
    expect(await repeat.json()).toMatchObject({ qty: 6, allocated: 4, reallocated: [] });
    expect(await (await fetchDocumented(url('allocations', newer.orderid))).json()).toEqual({
      orderid: newer.orderid,
      lines: [{ sku, qty: 5, batchref: shipment.ref, location: 'default' }],
    });
  });

  it.each([
    ['GET /batches/{ref}', (id: string) => fetchDocumented(url('batches', id)), (id: string) => `Batch ${id} not found`, 'unknown_batch'],
    ['PATCH /batches/{ref}', (id: string) => patch(id, { qty: 1 }), (id: string) => `Batch ${id} not found`, 'unknown_batch'],
    ['GET /allocations/{orderid}', (id: string) => fetchDocumented(url('allocations', id)), (id: string) => `Order ${id} has no allocations`, 'unknown_order'],
    [
      'DELETE /allocations/{orderid}/{sku}',
      (id: string) => fetchDocumented(url('allocations', id, id), { method: 'DELETE' }),
      (id: string) => `Order ${id} has no line for sku ${id}`,
      'unknown_line',
    ],
    ['GET /skus/{sku}/stock', (id: string) => fetchDocumented(url('skus', id, 'stock')), (id: string) => `Invalid sku ${id}`, 'unknown_sku'],
  ])('%s answers 404 with its message and code for what was never added', async (_route, send, message, code) => {
    const id = uniqueId('never-added');
    const body = await expectJsonError(await send(id), 404);
    expect(body).toEqual({ message: message(id), code });
  });

  it.each([
    ['GET /batches/{ref}', 'ref', () => fetchDocumented(url('batches', ' '))],
    ['PATCH /batches/{ref}', 'ref', () => patch(' ', { qty: 1 })],
    ['GET /allocations/{orderid}', 'orderid', () => fetchDocumented(url('allocations', ' '))],
    ['DELETE /allocations/{orderid}/{sku}', 'orderid', () => fetchDocumented(url('allocations', ' ', 'LAMP'), { method: 'DELETE' })],
    ['DELETE /allocations/{orderid}/{sku}', 'sku', () => fetchDocumented(url('allocations', 'order-1', ' '), { method: 'DELETE' })],
    ['GET /skus/{sku}/stock', 'sku', () => fetchDocumented(url('skus', ' ', 'stock'))],
  ])('%s answers 400 naming %s when it breaks an identifier rule', async (_route, parameter, send) => {
    const body = await expectJsonError(await send(), 400);
    expect(body).toEqual({ message: 'Invalid request', code: 'validation_failed', issues: [{ path: parameter, message: `${parameter} must not be blank` }] });
  });

  it('answers 400 "Bad Request" for a parameter that does not percent-decode', async () => {
    const body = await expectJsonError(await fetchDocumented(`${baseUrlOf()}/batches/%FF`), 400);
    expect(body).toEqual({ message: 'Bad Request' });
  });

  it.each([
    ['POST', '/batches/batch-1', 'GET, PATCH'],
    ['DELETE', '/allocations/order-1', 'GET'],
    ['GET', '/allocations/order-1/LAMP', 'DELETE'],
    ['PATCH', '/skus/LAMP/stock', 'GET'],
    ['POST', '/openapi.json', 'GET'],
  ])('answers %s %s with 405 and the methods of the path in Allow', async (method, path, allow) => {
    const response = await fetchDocumented(`${baseUrlOf()}${path}`, { method });
    const body = await expectJsonError(response, 405);
    expect(body).toEqual({ message: 'Method Not Allowed' });
    expect(response.headers.get('allow')).toBe(allow);
  });

  it('answers 415 for a PATCH whose body is not JSON', async () => {
    const response = await fetchDocumented(url('batches', 'batch-1'), { method: 'PATCH', headers: { 'content-type': 'text/plain' }, body: 'qty=1' });
    await expectJsonError(response, 415);
  });

  it('answers 400 for a PATCH with neither qty nor eta, naming the field it does not take, and changes nothing', async () => {
    const batch = await addBatch({ ref: uniqueId('batch'), sku: uniqueId('sku'), qty: 10, eta: null });
    const body = await expectJsonError(await patch(batch.ref, { sku: 'other' }), 400);
    expect(body).toEqual({
      message: 'Invalid request body', code: 'validation_failed',
      issues: [
        { path: 'sku', message: 'sku is not a field of this route' },
        { path: '', message: 'the body must have qty or eta, or both' },
      ],
    });
    expect(await (await fetchDocumented(url('batches', batch.ref))).json()).toEqual({ ...batch, allocated: 0, held: 0, available: 10, location: 'default' });
  });
});

describe('GET /openapi.json over HTTP', () => {
  it('answers the committed document as it is, as JSON that a client must fetch again before using a copy it kept', async () => {
    const response = await fetchDocumented(`${baseUrlOf()}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(await response.text()).toBe(readFileSync(OPENAPI_FILE, 'utf8'));
  });
});
