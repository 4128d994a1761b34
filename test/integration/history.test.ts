import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkInvariants } from '../../tools/invariants';
import { type HandlerService, serviceOver } from '../reliability/support/service';
import { type TestTable, createTestTable, uniqueId } from '../support/dynamodb';
import { routeEvent } from '../support/events';

/*
 * The history of on-hand stock (docs/api.md, "History"), through the handlers over DynamoDB Local:
 * each change of a batch's qty (a batch added, arrived, shipped, adjusted, transferred, a transfer
 * cancelled, a PATCH) listed newest first with the qty it left and who made it; pages that list each
 * entry once; what a page refuses.
 */

let table: TestTable;
let service: HandlerService;
/** The service an hour behind: what it adds is there before anything the tests do now. */
let anHourAgo: HandlerService;
beforeAll(async () => {
  table = await createTestTable();
  service = serviceOver(table.repository());
  anHourAgo = serviceOver(table.repository({ clock: () => Date.now() - 3_600_000 }));
});
afterAll(() => table.drop());

const WAREHOUSE = 'arn:aws:sts::123456789012:assumed-role/warehouse/picker-1';

/** A request as API Gateway's IAM authorizer passes it on: signed by the warehouse's role. */
const signedEvent = (routeKey: string, options: Parameters<typeof routeEvent>[1]) => {
  const event = routeEvent(routeKey, options);
  return { ...event, requestContext: { ...event.requestContext, authorizer: { iam: { userArn: WAREHOUSE } } } } as typeof event;
};
const invoke = (routeKey: string, options: Parameters<typeof routeEvent>[1]) => service.invoke(signedEvent(routeKey, options));
const history = async (sku: string, query: Record<string, string> = {}) =>
  invoke('GET /skus/{sku}/history', { pathParameters: { sku }, ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}) });
const entriesOf = async (sku: string, query: Record<string, string> = {}) => {
  const answer = await history(sku, query);
  expect(answer.status).toBe(200);
  return (answer.body as { entries: Record<string, unknown>[] }).entries;
};

const locationNamed = async (id: string) => {
  expect((await invoke('PUT /locations/{id}', { pathParameters: { id }, body: { name: id, priority: 1, serves: ['*'] } })).status).toBeLessThan(300);
};

describe("a SKU's history", () => {
  it('lists every change of on-hand stock newest first, each with the qty it left, its reference and who made it', async () => {
    const [sku, ref, orderid] = [uniqueId('LAMP'), uniqueId('batch'), uniqueId('order')];
    expect((await anHourAgo.invoke(signedEvent('POST /add_batch', { body: { ref, sku, qty: 10, eta: '2026-01-01' } }))).status).toBe(201);
    expect((await invoke('PATCH /batches/{ref}', { pathParameters: { ref }, body: { eta: null } })).status).toBe(200);
    expect((await invoke('POST /allocate', { body: { orderid, sku, qty: 3 } })).status).toBe(201);
    const shipmentid = uniqueId('shipment');
    expect((await invoke('POST /shipments', { body: { shipmentid, orderid, lines: [{ sku, qty: 2 }] } })).status).toBe(201);
    const adjustmentid = uniqueId('adj');
    expect((await invoke('POST /adjustments', { body: { adjustmentid, ref, reason: 'damaged', delta: -1 } })).status).toBe(201);
    expect((await invoke('PATCH /batches/{ref}', { pathParameters: { ref }, body: { qty: 9 } })).status).toBe(200);

    const actor = WAREHOUSE;
    expect(await entriesOf(sku)).toEqual([
      { at: expect.any(String), kind: 'patched', reason: 'correction', batchref: ref, location: 'default', delta: 2, qty_after: 9, actor },
      { at: expect.any(String), kind: 'adjusted', reason: 'damaged', batchref: ref, location: 'default', delta: -1, qty_after: 7, reference: adjustmentid, actor },
      { at: expect.any(String), kind: 'shipped', reason: 'shipped', batchref: ref, location: 'default', delta: -2, qty_after: 8, reference: shipmentid, actor },
      { at: expect.any(String), kind: 'arrived', reason: 'correction', batchref: ref, location: 'default', delta: 0, qty_after: 10, actor },
      { at: expect.any(String), kind: 'added', reason: 'received', batchref: ref, location: 'default', delta: 10, qty_after: 10, actor },
    ]);
    await expect(checkInvariants(table.documentClient, table.tableName)).resolves.toEqual([]);
  });

  it("lists a transfer's take, its incoming batch, and both sides of its cancel, each at its location", async () => {
    const [sku, ref, transferid] = [uniqueId('LAMP'), uniqueId('batch'), uniqueId('transfer')];
    const [from, to] = [uniqueId('from'), uniqueId('to')];
    await locationNamed(from);
    await locationNamed(to);
    expect((await anHourAgo.invoke(signedEvent('POST /add_batch', { body: { ref, sku, qty: 10, eta: null, location: from } }))).status).toBe(201);
    expect((await invoke('POST /transfers', { body: { transferid, sku, qty: 4, from, to, eta: '2027-01-01' } })).status).toBe(201);
    expect((await invoke('DELETE /transfers/{transferid}', { pathParameters: { transferid } })).status).toBe(204);

    const kinds = (await entriesOf(sku)).map(({ kind, batchref, location, delta, qty_after, reference }) => ({ kind, batchref, location, delta, qty_after, reference }));
    expect(kinds.slice(0, 2)).toEqual(
      expect.arrayContaining([
        { kind: 'transfer_cancelled', batchref: ref, location: from, delta: 4, qty_after: 10, reference: transferid },
        { kind: 'transfer_cancelled', batchref: transferid, location: to, delta: -4, qty_after: 0, reference: transferid },
      ]),
    );
    expect(kinds.slice(2, 4)).toEqual(
      expect.arrayContaining([
        { kind: 'transferred_out', batchref: ref, location: from, delta: -4, qty_after: 6, reference: transferid },
        { kind: 'transferred_in', batchref: transferid, location: to, delta: 4, qty_after: 4, reference: transferid },
      ]),
    );
    expect(kinds.slice(4)).toEqual([{ kind: 'added', batchref: ref, location: from, delta: 10, qty_after: 10, reference: undefined }]);
    expect((await entriesOf(sku, { location: to })).map(({ kind }) => kind)).toEqual(['transfer_cancelled', 'transferred_in']);
  });

  it('lists a count at the moment it was counted, below the changes made since', async () => {
    const [sku, ref, orderid] = [uniqueId('LAMP'), uniqueId('batch'), uniqueId('order')];
    expect((await anHourAgo.addBatch({ ref, sku, qty: 10, eta: null })).status).toBe(201);
    const countedAt = new Date(Date.now() - 60_000).toISOString();
    expect((await invoke('POST /allocate', { body: { orderid, sku, qty: 2 } })).status).toBe(201);
    expect((await invoke('POST /shipments', { body: { shipmentid: uniqueId('shipment'), orderid, lines: [{ sku, qty: 2 }] } })).status).toBe(201);
    const adjustmentid = uniqueId('count');
    expect(await invoke('POST /adjustments', { body: { adjustmentid, ref, reason: 'counted', qty: 7, counted_at: countedAt } })).toMatchObject({ status: 201, body: { after: 5 } });

    expect((await entriesOf(sku)).map(({ kind, at, delta, qty_after }) => ({ kind, at, delta, qty_after }))).toEqual([
      { kind: 'shipped', at: expect.any(String), delta: -2, qty_after: 8 },
      { kind: 'adjusted', at: countedAt, delta: -3, qty_after: 5 },
      { kind: 'added', at: expect.any(String), delta: 10, qty_after: 10 },
    ]);
  });

  it('records an arrival once when two are sent at once, and a batch taken off the shelf by its eta', async () => {
    const [sku, ref] = [uniqueId('LAMP'), uniqueId('batch')];
    expect((await invoke('POST /add_batch', { body: { ref, sku, qty: 4, eta: '2027-01-01' } })).status).toBe(201);
    const arrivals = await Promise.all([1, 2, 3].map(() => invoke('PATCH /batches/{ref}', { pathParameters: { ref }, body: { eta: null } })));
    expect(arrivals.map(({ status }) => status)).toEqual([200, 200, 200]);
    expect((await invoke('PATCH /batches/{ref}', { pathParameters: { ref }, body: { eta: '2027-02-01' } })).status).toBe(200);

    expect((await entriesOf(sku)).map(({ kind, delta, qty_after }) => [kind, delta, qty_after])).toEqual([
      ['patched', 0, 4],
      ['arrived', 0, 4],
      ['added', 4, 4],
    ]);
  });

  it('names the local server as `local` and an unsigned caller as `anonymous`', async () => {
    const [sku, ref] = [uniqueId('LAMP'), uniqueId('batch')];
    const local = routeEvent('POST /add_batch', { body: { ref, sku, qty: 1, eta: null } });
    expect((await service.invoke({ ...local, requestContext: { ...local.requestContext, apiId: 'local' } })).status).toBe(201);
    expect((await service.invoke(routeEvent('PATCH /batches/{ref}', { pathParameters: { ref }, body: { qty: 2 } }))).status).toBe(200);
    expect((await entriesOf(sku)).map(({ actor }) => actor)).toEqual(['anonymous', 'local']);
  });

  it('pages newest first, each entry once, while new changes are written', async () => {
    const [sku, ref] = [uniqueId('LAMP'), uniqueId('batch')];
    expect((await invoke('POST /add_batch', { body: { ref, sku, qty: 100, eta: null } })).status).toBe(201);
    for (let delta = 1; delta <= 6; delta++) {
      expect((await invoke('POST /adjustments', { body: { adjustmentid: uniqueId('adj'), ref, reason: 'found', delta } })).status).toBe(201);
    }
    const first = await history(sku, { limit: '3' });
    const { entries: page1, cursor } = first.body as { entries: { delta: number }[]; cursor: string };
    expect(page1.map(({ delta }) => delta)).toEqual([6, 5, 4]);
    expect((await invoke('POST /adjustments', { body: { adjustmentid: uniqueId('adj'), ref, reason: 'found', delta: 7 } })).status).toBe(201);

    const second = await history(sku, { limit: '3', cursor });
    const { entries: page2, cursor: next } = second.body as { entries: { delta: number }[]; cursor?: string };
    expect(page2.map(({ delta }) => delta)).toEqual([3, 2, 1]);
    const third = await history(sku, { limit: '3', ...(next ? { cursor: next } : {}) });
    expect((third.body as { entries: { delta: number }[]; cursor?: string }).entries.map(({ delta }) => delta)).toEqual([100]);
    expect((third.body as { cursor?: string }).cursor).toBeUndefined();
  });

  it('pages at one location past the changes at others', async () => {
    const sku = uniqueId('LAMP');
    const elsewhere = uniqueId('store');
    await locationNamed(elsewhere);
    const [here, there] = [uniqueId('batch'), uniqueId('batch')];
    expect((await invoke('POST /add_batch', { body: { ref: here, sku, qty: 500, eta: null } })).status).toBe(201);
    expect((await invoke('POST /add_batch', { body: { ref: there, sku, qty: 500, eta: null, location: elsewhere } })).status).toBe(201);
    for (let round = 0; round < 3; round++) {
      expect((await invoke('POST /adjustments', { body: { adjustmentid: uniqueId('adj'), ref: here, reason: 'found', delta: 1 } })).status).toBe(201);
    }
    const listed: string[] = [];
    let cursor: string | undefined;
    do {
      const answer = await history(sku, { location: elsewhere, limit: '1', ...(cursor ? { cursor } : {}) });
      expect(answer.status).toBe(200);
      const body = answer.body as { entries: { batchref: string }[]; cursor?: string };
      listed.push(...body.entries.map(({ batchref }) => batchref));
      cursor = body.cursor;
    } while (cursor);
    expect(listed).toEqual([there]);
  });

  it('refuses a cursor it did not make, a limit out of bounds, an unknown SKU and an unknown location', async () => {
    const [sku, ref] = [uniqueId('LAMP'), uniqueId('batch')];
    expect((await invoke('POST /add_batch', { body: { ref, sku, qty: 1, eta: null } })).status).toBe(201);
    for (const cursor of ['not-a-cursor', Buffer.from('["a","b"]').toString('base64url'), '%%%']) {
      expect(await history(sku, { cursor })).toMatchObject({ status: 400, body: { code: 'validation_failed', issues: [{ path: 'cursor' }] } });
    }
    for (const limit of ['0', '101', '1.5', 'ten']) {
      expect(await history(sku, { limit })).toMatchObject({ status: 400, body: { issues: [{ path: 'limit' }] } });
    }
    expect(await history(uniqueId('NONE'))).toMatchObject({ status: 404, body: { code: 'unknown_sku' } });
    expect(await history(sku, { location: 'nowhere-at-all' })).toMatchObject({ status: 404, body: { code: 'unknown_location' } });
  });
});
