import { describe, expect, it } from 'vitest';
import { createAllocationClient } from '../../client/index';
import { uniqueId } from '../support/dynamodb';
import { serviceForTheseTests } from '../support/local-service';
import { fetchDocumented, fetchRequestDocumented } from './documented';

// POST /orders as `npm start` serves it, over HTTP, against the run's DynamoDB Local, through the
// typed client (client/, docs/client.md), so that the client cannot drift from the API. Each test makes
// its own SKUs and order ids, so no test sees another's stock.

const baseUrlOf = serviceForTheseTests('e2e-orders');

interface Batch {
  readonly ref: string;
  readonly sku: string;
  readonly qty: number;
  readonly eta: string | null;
}

interface OrderLine {
  readonly sku: string;
  readonly qty: number;
}

const client = () => createAllocationClient({ baseUrl: baseUrlOf(), fetch: fetchRequestDocumented });

const post = (path: string, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  fetchDocumented(`${baseUrlOf()}${path}`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });

const postOrder = (orderid: string, lines: readonly OrderLine[]) => client().POST('/orders', { body: { orderid, lines: [...lines] } });

const addBatch = async (batch: Batch): Promise<Batch> => {
  const { data, response } = await client().POST('/add_batch', { body: batch, parseAs: 'text' });
  expect({ status: response.status, data }).toEqual({ status: 201, data: 'OK' });
  return batch;
};

/** SKUs that sort in the order of their letters, whatever the random part shared by all of them. */
const skusNamed = (...letters: string[]) => {
  const prefix = uniqueId('sku');
  return letters.map((letter) => `${prefix}-${letter}`);
};

/** The body of a 2xx answer, or the error of another, with the status it came with. */
const answered = ({ data, error, response }: { data?: unknown; error?: unknown; response: Response }) => ({
  status: response.status,
  body: response.ok ? data : error,
});

const stockOf = async (sku: string) => {
  const answer = answered(await client().GET('/skus/{sku}/stock', { params: { path: { sku } } }));
  expect(answer.status).toBe(200);
  return answer.body;
};

const allocationsOf = (orderid: string) => client().GET('/allocations/{orderid}', { params: { path: { orderid } } });

const expectNoAllocations = async (orderid: string) =>
  expect(answered(await allocationsOf(orderid))).toEqual({ status: 404, body: { message: `Order ${orderid} has no allocations`, code: 'unknown_order' } });

/** An order's lines as POST /orders answers them: each with its batch's location, `default` for every batch here (GET /allocations shows none yet). */
const atDefault = <Body extends { lines: readonly object[] }>(body: Body) => ({ ...body, lines: body.lines.map((line) => ({ ...line, location: 'default' })) });

describe('POST /orders over HTTP', () => {
  it('answers 201 with every line and its batch sorted by sku, then 200 with the same body to a repeat that takes no more stock', async () => {
    const [bed, chair, desk] = skusNamed('A-BED', 'B-CHAIR', 'C-DESK') as [string, string, string];
    const bedShipment = await addBatch({ ref: uniqueId('bed-ship'), sku: bed, qty: 10, eta: '2027-05-01' });
    const bedShelf = await addBatch({ ref: uniqueId('bed-shelf'), sku: bed, qty: 10, eta: null });
    const chairShelf = await addBatch({ ref: uniqueId('chair-shelf'), sku: chair, qty: 4, eta: null });
    const deskLater = await addBatch({ ref: uniqueId('desk-later'), sku: desk, qty: 10, eta: '2027-09-01' });
    const deskEarliest = await addBatch({ ref: uniqueId('desk-earliest'), sku: desk, qty: 10, eta: '2027-03-01' });
    const orderid = uniqueId('order');
    const expected = {
      orderid,
      lines: [
        { sku: bed, qty: 2, batchref: bedShelf.ref },
        { sku: chair, qty: 4, batchref: chairShelf.ref },
        { sku: desk, qty: 1, batchref: deskEarliest.ref },
      ],
    };

    const lines = [
      { sku: desk, qty: 1 },
      { sku: bed, qty: 2 },
      { sku: chair, qty: 4 },
    ];
    expect(answered(await postOrder(orderid, lines))).toEqual({ status: 201, body: atDefault(expected) });
    expect(answered(await postOrder(orderid, lines))).toEqual({ status: 200, body: atDefault(expected) });

    expect(answered(await allocationsOf(orderid))).toEqual({ status: 200, body: atDefault(expected) });
    expect(await stockOf(bed)).toMatchObject({ in_stock: 8, incoming: bedShipment.qty });
    expect(await stockOf(chair)).toMatchObject({ in_stock: 0, incoming: 0 });
    expect(await stockOf(desk)).toMatchObject({ in_stock: 0, incoming: deskLater.qty + deskEarliest.qty - 1 });
  });

  it('allocates an order of 25 lines, each emptying its batch, in one go', async () => {
    const skus = skusNamed(...Array.from({ length: 25 }, (_, index) => String(index).padStart(2, '0')));
    const batches = await Promise.all(skus.map((sku) => addBatch({ ref: uniqueId('last-units'), sku, qty: 3, eta: null })));
    const orderid = uniqueId('order');

    expect(answered(await postOrder(orderid, batches.map(({ sku, qty }) => ({ sku, qty }))))).toEqual({
      status: 201,
      body: { orderid, lines: batches.map(({ sku, qty, ref }) => ({ sku, qty, batchref: ref, location: 'default' })) },
    });
    for (const sku of skus) expect(await stockOf(sku)).toMatchObject({ in_stock: 0, batches: [] });
  });

  it('answers 400 naming every line that cannot be allocated, unknown sku and out of stock together, and allocates none of the order', async () => {
    const [lamp, rug, sofa, table] = skusNamed('A-LAMP', 'B-RUG', 'C-SOFA', 'D-TABLE') as [string, string, string, string];
    await addBatch({ ref: uniqueId('lamp'), sku: lamp, qty: 10, eta: null });
    await addBatch({ ref: uniqueId('rug'), sku: rug, qty: 2, eta: null });
    await addBatch({ ref: uniqueId('table'), sku: table, qty: 10, eta: '2027-01-01' });
    const before = await Promise.all([lamp, rug, table].map(stockOf));
    const orderid = uniqueId('order');

    const response = await postOrder(orderid, [
      { sku: lamp, qty: 1 },
      { sku: rug, qty: 3 },
      { sku: sofa, qty: 1 },
      { sku: table, qty: 1 },
    ]);
    expect(answered(response)).toEqual({
      status: 400,
      body: {
        message: `Cannot allocate order ${orderid}`, code: 'order_refused',
        lines: [
          { sku: rug, reason: 'out_of_stock' },
          { sku: sofa, reason: 'unknown_sku' },
        ],
      },
    });

    await expectNoAllocations(orderid);
    expect(await Promise.all([lamp, rug, table].map(stockOf))).toEqual(before);
  });

  it('answers 409 with the quantities the order already has, and changes nothing', async () => {
    const [lamp, rug, sofa] = skusNamed('A-LAMP', 'B-RUG', 'C-SOFA') as [string, string, string];
    const lampBatch = await addBatch({ ref: uniqueId('lamp'), sku: lamp, qty: 20, eta: null });
    const rugBatch = await addBatch({ ref: uniqueId('rug'), sku: rug, qty: 20, eta: null });
    await addBatch({ ref: uniqueId('sofa'), sku: sofa, qty: 20, eta: null });
    const orderid = uniqueId('order');
    const allocated = {
      orderid,
      lines: [
        { sku: lamp, qty: 2, batchref: lampBatch.ref },
        { sku: rug, qty: 3, batchref: rugBatch.ref },
      ],
    };
    const first = await postOrder(orderid, [
      { sku: lamp, qty: 2 },
      { sku: rug, qty: 3 },
    ]);
    expect(answered(first)).toEqual({ status: 201, body: atDefault(allocated) });
    const stockBefore = await Promise.all([lamp, rug, sofa].map(stockOf));

    const response = await postOrder(orderid, [
      { sku: sofa, qty: 1 },
      { sku: rug, qty: 4 },
      { sku: lamp, qty: 5 },
    ]);
    expect(answered(response)).toEqual({
      status: 409,
      body: {
        message: `Order ${orderid} already has lines with other quantities`, code: 'line_exists',
        lines: [
          { sku: lamp, qty: 2 },
          { sku: rug, qty: 3 },
        ],
      },
    });

    expect(answered(await allocationsOf(orderid))).toEqual({ status: 200, body: atDefault(allocated) });
    expect(await Promise.all([lamp, rug, sofa].map(stockOf))).toEqual(stockBefore);
  });

  it('shows the order’s lines, cancels one of them, and allocates that line again when the order is repeated', async () => {
    const [lamp, rug] = skusNamed('A-LAMP é', 'B-RUG/rond') as [string, string];
    const lampBatch = await addBatch({ ref: uniqueId('lamp'), sku: lamp, qty: 5, eta: null });
    const rugBatch = await addBatch({ ref: uniqueId('rug'), sku: rug, qty: 5, eta: null });
    const orderid = `${uniqueId('order')}/n°1`;
    const lines = [
      { sku: rug, qty: 2 },
      { sku: lamp, qty: 1 },
    ];
    const whole = {
      orderid,
      lines: [
        { sku: lamp, qty: 1, batchref: lampBatch.ref },
        { sku: rug, qty: 2, batchref: rugBatch.ref },
      ],
    };
    expect(answered(await postOrder(orderid, lines))).toEqual({ status: 201, body: atDefault(whole) });
    expect(answered(await allocationsOf(orderid))).toEqual({ status: 200, body: atDefault(whole) });

    const cancel = await client().DELETE('/allocations/{orderid}/{sku}', { params: { path: { orderid, sku: rug } } });
    expect(answered(cancel)).toEqual({ status: 204, body: undefined });
    expect(answered(await allocationsOf(orderid))).toEqual({ status: 200, body: atDefault({ orderid, lines: whole.lines.slice(0, 1) }) });
    expect(await stockOf(rug)).toMatchObject({ in_stock: 5 });
    expect(await stockOf(lamp)).toMatchObject({ in_stock: 4 });

    expect(answered(await postOrder(orderid, lines))).toEqual({ status: 201, body: atDefault(whole) });
    expect(answered(await allocationsOf(orderid))).toEqual({ status: 200, body: atDefault(whole) });
    expect(await stockOf(rug)).toMatchObject({ in_stock: 3 });
    expect(await stockOf(lamp)).toMatchObject({ in_stock: 4 });
  });
});

describe('POST /orders refusing a body, over HTTP', () => {
  const expectInvalidBody = async (sent: Promise<{ data?: unknown; error?: unknown; response: Response }>, issues: Array<{ path: string; message: string }>) =>
    expect(answered(await sent)).toEqual({ status: 400, body: { message: 'Invalid request body', code: 'validation_failed', issues } });

  /** The answer of a request the typed client would not send, read as JSON. */
  const jsonOf = async (response: Response, status: number): Promise<unknown> => {
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    return response.json();
  };

  it('answers 400 for an order with no lines', async () => {
    await expectInvalidBody(postOrder(uniqueId('order'), []), [{ path: 'lines', message: 'lines must be an array of 1 to 25 lines {sku, qty}, each sku once' }]);
  });

  it('answers 400 for an order of 26 lines, and allocates none of them', async () => {
    const skus = skusNamed(...Array.from({ length: 26 }, (_, index) => String(index).padStart(2, '0')));
    await Promise.all(skus.map((sku) => addBatch({ ref: uniqueId('batch'), sku, qty: 10, eta: null })));
    const orderid = uniqueId('order');

    await expectInvalidBody(postOrder(orderid, skus.map((sku) => ({ sku, qty: 1 }))), [{ path: 'lines', message: 'lines must be an array of 1 to 25 lines {sku, qty}, each sku once' }]);
    await expectNoAllocations(orderid);
  });

  it('answers 400 naming the index of a line that repeats the sku of an earlier one, and allocates none of them', async () => {
    const [lamp, rug, sofa] = skusNamed('A-LAMP', 'B-RUG', 'C-SOFA') as [string, string, string];
    for (const sku of [lamp, rug, sofa]) await addBatch({ ref: uniqueId('batch'), sku, qty: 10, eta: null });
    const orderid = uniqueId('order');

    const sent = postOrder(orderid, [
      { sku: lamp, qty: 1 },
      { sku: rug, qty: 1 },
      { sku: sofa, qty: 1 },
      { sku: rug, qty: 2 },
    ]);
    await expectInvalidBody(sent, [{ path: 'lines.3.sku', message: 'lines.3.sku must not repeat the sku of an earlier line' }]);
    await expectNoAllocations(orderid);
  });

  it('answers 415 for an order sent as text/plain', async () => {
    const response = await post('/orders', JSON.stringify({ orderid: uniqueId('order'), lines: [{ sku: 'LAMP', qty: 1 }] }), {
      'content-type': 'text/plain',
    });
    expect(await jsonOf(response, 415)).toEqual({ message: 'Content-Type must be application/json', code: 'unsupported_media_type' });
  });

  it('answers 405 with Allow: POST to a GET of /orders', async () => {
    const response = await fetchDocumented(`${baseUrlOf()}/orders`);
    expect(await jsonOf(response, 405)).toEqual({ message: 'Method Not Allowed' });
    expect(response.headers.get('allow')).toBe('POST');
  });
});
