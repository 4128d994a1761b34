import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCursorOf } from '../../domain/stock-listings';
import { skuListsIndex } from '../../functions/store/table';
import { checkInvariants } from '../../tools/invariants';
import { type HandlerService, serviceOver } from '../reliability/support/service';
import { type TestTable, createTestTable, repositoryAt, uniqueId } from '../support/dynamodb';
import { routeEvent } from '../support/events';

/*
 * The lists of SKUs (docs/api.md, "Listings"), through the handlers over DynamoDB Local: every SKU,
 * and a location's, each with its levels as GET /skus/{sku}/stock reads them; pages that list each
 * SKU once whatever changes between them; what a page costs; what a page refuses. A table of their
 * own, so that the lists hold only what these tests add.
 */

let table: TestTable;
let service: HandlerService;
beforeAll(async () => {
  table = await createTestTable();
  service = serviceOver(table.repository());
});
afterAll(() => table.drop());

type Listed = { sku: string } & Record<string, unknown>;
type ListPage = { skus: Listed[]; cursor?: string; location?: string };

const invoke = (routeKey: string, options: Parameters<typeof routeEvent>[1]) => service.invoke(routeEvent(routeKey, options));
const withQuery = (query: Record<string, string>) => (Object.keys(query).length > 0 ? { queryStringParameters: query } : {});
const listSkus = (query: Record<string, string> = {}) => invoke('GET /skus', withQuery(query));
const listLocation = (id: string, query: Record<string, string> = {}) => invoke('GET /locations/{id}/stock', { pathParameters: { id }, ...withQuery(query) });

/** Every page of a list, `limit` at a time, and what `between` does after each page. */
const allPages = async (list: (query: Record<string, string>) => ReturnType<typeof listSkus>, limit: number, between: () => Promise<void> = async () => {}) => {
  const pages: ListPage[] = [];
  let cursor: string | undefined;
  do {
    const answer = await list({ limit: String(limit), ...(cursor === undefined ? {} : { cursor }) });
    expect(answer.status).toBe(200);
    const page = answer.body as ListPage;
    expect(page.skus.length).toBeLessThanOrEqual(limit);
    pages.push(page);
    cursor = page.cursor;
    await between();
  } while (cursor !== undefined);
  return pages;
};
const skusOf = (pages: readonly ListPage[]) => pages.flatMap(({ skus }) => skus.map(({ sku }) => sku));

const addBatch = async (body: Record<string, unknown>) => expect((await invoke('POST /add_batch', { body })).status).toBe(201);
const locationNamed = async (id: string) => {
  expect((await invoke('PUT /locations/{id}', { pathParameters: { id }, body: { name: id, priority: 1, serves: ['*'] } })).status).toBeLessThan(300);
};
const stockOf = async (sku: string, location?: string) => {
  const answer = await invoke('GET /skus/{sku}/stock', { pathParameters: { sku }, ...withQuery(location === undefined ? {} : { location }) });
  expect(answer.status).toBe(200);
  const { in_stock, incoming, held, next_eta, on_hand, committed } = answer.body as Record<string, number>;
  return { sku, on_hand, committed, held, available: (in_stock as number) + (incoming as number), in_stock, incoming, next_eta };
};

describe('the lists of SKUs', () => {
  const skus = Array.from({ length: 7 }, (_, index) => uniqueId(`SKU${index}`));
  const lyon = uniqueId('lyon').replaceAll(/[^A-Za-z0-9_-]/g, '-');

  beforeAll(async () => {
    await locationNamed(lyon);
    for (const [index, sku] of skus.entries()) await addBatch({ ref: uniqueId('batch'), sku, qty: 10 + index, eta: null });
    // Two of them at Lyon too, one of those only as a shipment.
    await addBatch({ ref: uniqueId('batch'), sku: skus[0], qty: 4, eta: null, location: lyon });
    await addBatch({ ref: uniqueId('batch'), sku: skus[1], qty: 6, eta: '2027-03-01', location: lyon });
    expect((await invoke('POST /allocate', { body: { orderid: uniqueId('order'), sku: skus[0], qty: 3 } })).status).toBe(201);
    expect((await invoke('POST /holds', { body: { holdid: uniqueId('hold'), lines: [{ sku: skus[2], qty: 2 }] } })).status).toBe(201);
  });

  it('lists every SKU once, in pages of any size, each with the levels its stock read answers', async () => {
    const expected = await Promise.all(skus.map((sku) => stockOf(sku)));
    for (const limit of [1, 2, 3, 100]) {
      const pages = await allPages(listSkus, limit);
      expect(skusOf(pages).sort()).toEqual([...skus].sort());
      expect(pages.flatMap((page) => page.skus).sort((a, b) => (a.sku < b.sku ? -1 : 1))).toEqual([...expected].sort((a, b) => (a.sku < b.sku ? -1 : 1)));
    }
  });

  it("lists a location's SKUs with their levels there: a shipment's among them", async () => {
    const [page] = await allPages((query) => listLocation(lyon, query), 100);
    expect(page?.location).toBe(lyon);
    expect(page?.skus.sort((a, b) => (a.sku < b.sku ? -1 : 1))).toEqual(await Promise.all([skus[0], skus[1]].map((sku) => stockOf(sku as string, lyon))));
    expect(page?.skus.find(({ sku }) => sku === skus[1])).toMatchObject({ on_hand: 0, in_stock: 0, incoming: 6, available: 6, next_eta: '2027-03-01' });
  });

  it("lists a transfer's destination's SKU while its units are on their way", async () => {
    const [sku, ref, paris] = [uniqueId('TRANSFERRED'), uniqueId('batch'), uniqueId('paris').replaceAll(/[^A-Za-z0-9_-]/g, '-')];
    await locationNamed(paris);
    await addBatch({ ref, sku, qty: 5, eta: null });
    expect((await invoke('POST /transfers', { body: { transferid: uniqueId('transfer'), sku, qty: 2, from: 'default', to: paris, eta: '2027-01-10' } })).status).toBe(201);
    expect((await listLocation(paris)).body).toEqual({ location: paris, skus: [{ sku, on_hand: 0, committed: 0, held: 0, available: 2, in_stock: 0, incoming: 2, next_eta: '2027-01-10' }] });
  });

  it('lists each SKU once while stock changes and SKUs are added between its pages', async () => {
    const before = skusOf(await allPages(listSkus, 100));
    const added: string[] = [];
    const pages = await allPages(listSkus, 2, async () => {
      const sku = uniqueId('ADDED');
      added.push(sku);
      await addBatch({ ref: uniqueId('batch'), sku, qty: 1, eta: null });
      await addBatch({ ref: uniqueId('batch'), sku: skus[3], qty: 1, eta: null });
      expect((await invoke('POST /allocate', { body: { orderid: uniqueId('order'), sku: skus[4], qty: 1 } })).status).toBe(201);
    });
    const listed = skusOf(pages);
    expect(new Set(listed).size).toBe(listed.length);
    // Every SKU there from first page to last is listed; one added meanwhile is, or is not, as it falls before or after the cursor.
    expect(listed).toEqual(expect.arrayContaining(before));
    expect(listed.filter((sku) => !before.includes(sku)).every((sku) => added.includes(sku))).toBe(true);
  });

  it("reads a page from the list's index, one query for each of its shards at most, and each SKU's stock: never a scan", async () => {
    const { repository, calls } = repositoryAt(table, Date.now());
    const pages = await allPages((query) => serviceOver(repository).invoke(routeEvent('GET /skus', withQuery(query))), 3);
    expect(calls).not.toContain('Scan');
    const perSku = calls.filter((call) => call === 'Query').length - pages.length * skuListsIndex.shards;
    expect(perSku).toBeLessThanOrEqual(skusOf(pages).length * 3);
  });

  it('answers a location that does not exist with 404, and refuses a bad limit, a cursor it did not make, or another parameter', async () => {
    expect((await listLocation('nowhere')).status).toBe(404);
    expect((await listLocation('nowhere')).body).toEqual({ message: 'Location nowhere not found', code: 'unknown_location' });
    const refusals = [
      [{ limit: '0' }, 'limit'],
      [{ limit: '101' }, 'limit'],
      [{ limit: '1.5' }, 'limit'],
      [{ cursor: 'not a cursor' }, 'cursor'],
      [{ cursor: Buffer.from('["x"]').toString('base64url') }, 'cursor'],
      [{ cursor: Buffer.from('[-1,"LAMP"]').toString('base64url') }, 'cursor'],
      [{ sku: 'LAMP' }, 'sku'],
    ] as const;
    for (const [query, path] of refusals) {
      for (const answer of [await listSkus(query), await listLocation('default', query)]) {
        expect(answer.status).toBe(400);
        expect(answer.body).toMatchObject({ code: 'validation_failed', issues: [{ path }] });
      }
    }
    expect((await listSkus({ cursor: listCursorOf({ part: 999, sku: 'ZZZ' }) })).body).toEqual({ skus: [] });
  });

  it('leaves every batch listed at its location', async () => {
    expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
  });
});
