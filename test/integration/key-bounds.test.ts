import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkInvariants } from '../../tools/invariants';
import { type HandlerService, serviceOver } from '../reliability/support/service';
import { type TestTable, createTestTable } from '../support/dynamodb';
import { routeEvent } from '../support/events';

/*
 * Every key the store builds from ids, at the longest ids docs/api.md allows: 128 characters of 4
 * bytes each (512 bytes of UTF-8) for a SKU, a ref, an orderid, a holdid and a transferid, and 64
 * for a location's id. DynamoDB refuses a sort key past 1,024 bytes (a partition key past 2,048):
 * each route that writes a kind of item runs here against DynamoDB Local, and `npm run check` reads
 * the table back whole.
 */

const EMOJI = '\u{1F4E6}';
/** The longest id: 125 emoji and a tail of 3 that tells the ids apart. */
const longest = (tail: string) => `${EMOJI.repeat(125)}${tail.padEnd(3, '-').slice(0, 3)}`;

let table: TestTable;
let service: HandlerService;
const invoke = (routeKey: string, options: Parameters<typeof routeEvent>[1]) => service.invoke(routeEvent(routeKey, options));

const location = 'L'.repeat(64);
/** The longest SKU of all: 128 emoji, 512 bytes. */
const sku = EMOJI.repeat(128);
const [first, second, third] = [longest('b1'), longest('b2'), longest('b3')];

beforeAll(async () => {
  table = await createTestTable();
  service = serviceOver(table.repository());
  expect((await invoke('PUT /locations/{id}', { pathParameters: { id: location }, body: { name: 'far', priority: 0, serves: ['*'] } })).status).toBe(201);
  for (const ref of [first, second]) expect((await service.addBatch({ ref, sku, qty: 10, eta: null, location })).status).toBe(201);
  expect((await service.addBatch({ ref: third, sku, qty: 20, eta: null })).status).toBe(201);
});
afterAll(() => table.drop());

describe('the keys of the longest ids', () => {
  it('hold a split line, a split order, a hold and its confirm, a cancel, a move, a transfer, and read back whole', async () => {
    const split = await invoke('POST /allocate', { body: { orderid: longest('o1'), sku, qty: 15, location, split: 'batches' } });
    expect(split).toMatchObject({ status: 201, body: { parts: [{ batchref: first, qty: 10 }, { batchref: second, qty: 5 }] } });
    expect((await invoke('POST /allocate', { body: { orderid: longest('o1'), sku, qty: 15, location, split: 'batches' } })).status).toBe(200);

    expect((await invoke('POST /orders', { body: { orderid: longest('o2'), lines: [{ sku, qty: 2 }], location, split: 'batches' } })).status).toBe(201);

    const holdid = longest('h1');
    expect((await invoke('POST /holds', { body: { holdid, lines: [{ sku, qty: 3 }], location, split: 'batches' } })).status).toBe(201);
    expect((await invoke('POST /holds/{holdid}/confirm', { pathParameters: { holdid }, body: { orderid: longest('o3') } })).status).toBe(201);

    expect((await invoke('DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid: longest('o1'), sku } })).status).toBe(204);
    expect((await invoke('POST /allocate', { body: { orderid: longest('o4'), sku, qty: 4 } })).status).toBe(201);
    // The batch the first lines are on shrinks: its newest lines move, parts and whole lines.
    expect((await invoke('PATCH /batches/{ref}', { pathParameters: { ref: first }, body: { qty: 1 } })).status).toBe(200);

    const transferid = longest('t1');
    expect((await invoke('POST /transfers', { body: { transferid, sku, qty: 2, from: 'default', to: location, eta: '2027-01-01' } })).status).toBe(201);
    expect((await invoke('DELETE /transfers/{transferid}', { pathParameters: { transferid } })).status).toBe(204);

    for (const orderid of [longest('o2'), longest('o3'), longest('o4')]) {
      expect((await invoke('GET /allocations/{orderid}', { pathParameters: { orderid } })).status).toBe(200);
    }
    expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
  });
});
