import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DocumentSender } from '../../functions/store/store-calls';
import { checkInvariants } from '../../tools/invariants';
import { type HandlerService, serviceOver } from '../reliability/support/service';
import { type TestTable, createTestTable, uniqueId } from '../support/dynamodb';
import { routeEvent } from '../support/events';

/*
 * Adjustments (docs/api.md, "Adjustments"), through the handlers over DynamoDB Local: a batch's units
 * on hand set or changed for a reason, a count applied as of its time (the units shipped since it
 * taken off), compare and set, holds and lines making room as a PATCH makes it; every state judged by
 * `npm run check`'s invariants. The clock is the table's own: counts are taken a moment before now.
 */

let table: TestTable;
let service: HandlerService;
/** The service an hour behind: batches added through it were there long before the counts, which then count them as they were. */
let anHourAgo: HandlerService;
beforeAll(async () => {
  table = await createTestTable();
  service = serviceOver(table.repository());
  anHourAgo = serviceOver(table.repository({ clock: () => Date.now() - 3_600_000 }));
});
afterAll(() => table.drop());

const invoke = (routeKey: string, options: Parameters<typeof routeEvent>[1]) => service.invoke(routeEvent(routeKey, options));
const adjust = (body: Record<string, unknown>) => invoke('POST /adjustments', { body });
const batchOf = async (ref: string) => (await invoke('GET /batches/{ref}', { pathParameters: { ref } })).body as { qty: number; allocated: number; held: number; available: number };
const expectNoViolations = async () => expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

const stocked = async (qty: number) => {
  const [sku, ref] = [uniqueId('LAMP'), uniqueId('batch')];
  expect((await anHourAgo.addBatch({ ref, sku, qty, eta: null })).status).toBe(201);
  return { sku, ref };
};

describe('an adjustment', () => {
  it("sets or changes a batch's units for its reason, answering the qty before and after", async () => {
    const { ref } = await stocked(10);
    const id = uniqueId('adj');

    expect(await adjust({ adjustmentid: id, ref, reason: 'damaged', delta: -2 })).toMatchObject({
      status: 201,
      body: { adjustmentid: id, ref, reason: 'damaged', before: 10, after: 8, reallocated: [] },
    });
    expect(await adjust({ adjustmentid: uniqueId('adj'), ref, reason: 'received', qty: 30 })).toMatchObject({ status: 201, body: { before: 8, after: 30 } });
    expect(await batchOf(ref)).toMatchObject({ qty: 30, available: 30 });
    await expectNoViolations();
  });

  it('answers a repeat as stored, changing nothing more, and another adjustment under its id with 409', async () => {
    const { ref } = await stocked(10);
    const body = { adjustmentid: uniqueId('adj'), ref, reason: 'found', delta: 3, note: 'behind the shelf' };
    const first = await adjust(body);

    expect(await adjust(body)).toEqual({ ...first, status: 200 });
    expect(await adjust({ ...body, delta: 4 })).toMatchObject({ status: 409, body: { code: 'adjustment_exists' } });
    expect(await adjust({ ...body, note: 'elsewhere' })).toMatchObject({ status: 409, body: { code: 'adjustment_exists' } });
    expect((await batchOf(ref)).qty).toBe(13);
  });

  it('applies to the qty the caller read, and otherwise changes nothing and says what the batch has', async () => {
    const { ref } = await stocked(10);
    expect(await adjust({ adjustmentid: uniqueId('adj'), ref, reason: 'correction', qty: 12, expected_qty: 9 })).toMatchObject({
      status: 409,
      body: { code: 'qty_changed', qty: 10 },
    });
    expect(await adjust({ adjustmentid: uniqueId('adj'), ref, reason: 'correction', qty: 12, expected_qty: 10 })).toMatchObject({ status: 201, body: { after: 12 } });
    expect(await adjust({ adjustmentid: uniqueId('adj'), ref, reason: 'correction', qty: 12, expected_qty: 0 })).toMatchObject({ status: 409, body: { qty: 12 } });
  });

  it('refuses a delta that takes more than the batch has, naming it', async () => {
    const { ref } = await stocked(3);
    expect(await adjust({ adjustmentid: uniqueId('adj'), ref, reason: 'lost', delta: -4 })).toMatchObject({
      status: 400,
      body: { code: 'validation_failed', issues: [{ path: 'delta' }] },
    });
    expect((await batchOf(ref)).qty).toBe(3);
  });

  it('ends holds first and then moves the newest lines, as a PATCH does, when it leaves fewer units than they take', async () => {
    const { sku, ref } = await stocked(10);
    const room = uniqueId('batch');
    expect((await service.addBatch({ ref: room, sku, qty: 10, eta: '2027-01-01' })).status).toBe(201);
    const [older, newer] = [uniqueId('order'), uniqueId('order')];
    await service.allocate({ orderid: older, sku, qty: 4 });
    await service.allocate({ orderid: newer, sku, qty: 3 });
    expect((await invoke('POST /holds', { body: { holdid: uniqueId('cart'), lines: [{ sku, qty: 2 }] } })).status).toBe(201);

    const answer = await adjust({ adjustmentid: uniqueId('adj'), ref, reason: 'damaged', qty: 5 });

    expect(answer).toMatchObject({ status: 201, body: { before: 10, after: 5, reallocated: [{ orderid: newer, sku, qty: 3, from: ref, batchref: room }] } });
    expect(await batchOf(ref)).toMatchObject({ qty: 5, allocated: 4, held: 0, available: 1 });
    await expectNoViolations();
  });
});

describe('a count', () => {
  it('is applied as of when it was taken: the units shipped from the batch since are taken off it', async () => {
    const { sku, ref } = await stocked(50);
    const orderid = uniqueId('order');
    await service.allocate({ orderid, sku, qty: 5 });
    const countedAt = ago(60_000);
    expect((await invoke('POST /shipments', { body: { shipmentid: uniqueId('parcel'), orderid, lines: [{ sku, qty: 3 }] } })).status).toBe(201);

    const answer = await adjust({ adjustmentid: uniqueId('count'), ref, reason: 'counted', qty: 47, counted_at: countedAt });

    expect(answer).toMatchObject({ status: 201, body: { reason: 'counted', before: 47, after: 44 } });
    expect(await batchOf(ref)).toMatchObject({ qty: 44, allocated: 2, available: 42 });
    await expectNoViolations();
  });

  it('takes nothing off for a shipment made before it was taken', async () => {
    const { sku, ref } = await stocked(50);
    const orderid = uniqueId('order');
    await service.allocate({ orderid, sku, qty: 5 });
    expect((await invoke('POST /shipments', { body: { shipmentid: uniqueId('parcel'), orderid, lines: [{ sku, qty: 3 }] } })).status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 5));

    expect(await adjust({ adjustmentid: uniqueId('count'), ref, reason: 'counted', qty: 40, counted_at: new Date().toISOString() })).toMatchObject({ status: 201, body: { after: 40 } });
  });

  it('older than the last count applied to the batch changes nothing, and one in the future is refused', async () => {
    const { ref } = await stocked(20);
    expect((await adjust({ adjustmentid: uniqueId('count'), ref, reason: 'counted', qty: 18, counted_at: ago(1_000) })).status).toBe(201);

    expect(await adjust({ adjustmentid: uniqueId('count'), ref, reason: 'counted', qty: 15, counted_at: ago(60_000) })).toMatchObject({ status: 409, body: { code: 'stale_count' } });
    expect(await adjust({ adjustmentid: uniqueId('count'), ref, reason: 'counted', qty: 15, counted_at: new Date(Date.now() + 3_600_000).toISOString() })).toMatchObject({
      status: 400,
      body: { issues: [{ path: 'counted_at' }] },
    });
    expect((await batchOf(ref)).qty).toBe(18);
  });

  it('applies on top of it every change of the batch since it was taken: a transfer out, a receipt, a PATCH', async () => {
    const { sku, ref } = await stocked(10);
    expect((await invoke('PUT /locations/{id}', { pathParameters: { id: 'lyon' }, body: { name: 'lyon', priority: 1, serves: ['*'] } })).status).toBeLessThan(300);
    const countedAt = ago(60_000);
    const transferid = uniqueId('transfer');
    expect((await invoke('POST /transfers', { body: { transferid, sku, qty: 4, from: 'default', to: 'lyon', eta: '2030-01-01' } })).status).toBe(201);
    expect((await adjust({ adjustmentid: uniqueId('adj'), ref, reason: 'received', delta: 5 })).status).toBe(201);
    expect((await invoke('PATCH /batches/{ref}', { pathParameters: { ref }, body: { qty: 12 } })).status).toBe(200);

    // 10 on the shelf a minute ago; since, 4 left for Lyon, 5 came, and a correction set 12 over 11.
    expect(await adjust({ adjustmentid: uniqueId('count'), ref, reason: 'counted', qty: 10, counted_at: countedAt })).toMatchObject({ status: 201, body: { before: 12, after: 12 } });
    expect((await batchOf(transferid)).qty).toBe(4);
    await expectNoViolations();
  });

  it('taken now makes an older count stale, as one that names its time does', async () => {
    const { ref } = await stocked(10);
    const older = ago(60_000);
    expect((await adjust({ adjustmentid: uniqueId('count'), ref, reason: 'counted', qty: 7 })).status).toBe(201);
    expect(await adjust({ adjustmentid: uniqueId('count'), ref, reason: 'counted', qty: 12, counted_at: older })).toMatchObject({ status: 409, body: { code: 'stale_count' } });
    expect((await batchOf(ref)).qty).toBe(7);
  });

  it('and a shipment whose write meets it: the shipment, stamped before the count, is recorded again after it, its units taken once', async () => {
    const { sku, ref } = await stocked(10);
    const orderid = uniqueId('order');
    await service.allocate({ orderid, sku, qty: 4 });
    const stamped = Date.now() - 2_000;
    let counted: unknown;
    // The shipment's transaction in flight, stamped before the count's moment: the count arrives and is applied first.
    const sender: DocumentSender = {
      send: (async (command: { input: unknown; constructor: { name: string } }, options?: object) => {
        if (command.constructor.name === 'TransactWriteCommand' && JSON.stringify(command.input).includes('SHIPMENT#') && counted === undefined) {
          counted = (await adjust({ adjustmentid: uniqueId('count'), ref, reason: 'counted', qty: 8, counted_at: new Date(stamped + 1_000).toISOString() })).body;
        }
        return table.documentClient.send(command as never, options);
      }) as DocumentSender['send'],
    };
    let clockReads = 0;
    const shipper = serviceOver(table.repository({ sender, clock: () => (clockReads++ === 0 ? stamped : Date.now()) }));

    const shipped = await shipper.invoke(routeEvent('POST /shipments', { body: { shipmentid: uniqueId('parcel'), orderid, lines: [{ sku, qty: 2 }] } }));

    expect(counted).toMatchObject({ before: 10, after: 8 });
    expect(shipped.status).toBe(201);
    expect(Date.parse((shipped.body as { shipped_at: string }).shipped_at)).toBeGreaterThan(stamped + 1_000);
    expect(await batchOf(ref)).toMatchObject({ qty: 6, allocated: 2 });
    await expectNoViolations();
  });

  it('applies the units a batch was added with after it was taken, as any change since', async () => {
    const [sku, ref] = [uniqueId('LAMP'), uniqueId('batch')];
    const countedAt = ago(60_000);
    expect((await service.addBatch({ ref, sku, qty: 50, eta: null })).status).toBe(201);
    expect(await adjust({ adjustmentid: uniqueId('count'), ref, reason: 'counted', qty: 0, counted_at: countedAt })).toMatchObject({ status: 201, body: { before: 50, after: 50 } });
  });

  it('counts every change after its moment, though two of them, one each side of its read of the changes, leave the qty as it read it', async () => {
    const { sku, ref } = await stocked(10);
    const orderid = uniqueId('order');
    await service.allocate({ orderid, sku, qty: 4 });
    const countedAt = ago(60_000);
    let reads = 0;
    // Around the count's Query of the batch's changes: 3 units ship before it, 3 are found after it.
    const sender: DocumentSender = {
      send: (async (command: { input: unknown; constructor: { name: string } }, options?: object) => {
        const isChangesRead = command.constructor.name === 'QueryCommand' && JSON.stringify(command.input).includes('CHANGE#');
        if (isChangesRead && reads === 0) expect((await invoke('POST /shipments', { body: { shipmentid: uniqueId('parcel'), orderid, lines: [{ sku, qty: 3 }] } })).status).toBe(201);
        const answer = await table.documentClient.send(command as never, options);
        if (isChangesRead && reads++ === 0) expect((await adjust({ adjustmentid: uniqueId('found'), ref, reason: 'found', delta: 3 })).status).toBe(201);
        return answer;
      }) as DocumentSender['send'],
    };
    const counter = serviceOver(table.repository({ sender }));

    const counted = await counter.invoke(routeEvent('POST /adjustments', { body: { adjustmentid: uniqueId('count'), ref, reason: 'counted', qty: 10, counted_at: countedAt } }));

    // 10 counted, 3 shipped and 3 found since.
    expect(counted).toMatchObject({ status: 201, body: { after: 10 } });
    expect((await batchOf(ref)).qty).toBe(10);
    await expectNoViolations();
  });

  it('answers a repeat written another way as the same count: one moment, one count', async () => {
    const { ref } = await stocked(20);
    const counted = { adjustmentid: uniqueId('count'), ref, reason: 'counted', qty: 19, counted_at: `${ago(1_000).slice(0, 19)}Z` };
    expect((await adjust(counted)).status).toBe(201);
    expect((await adjust({ ...counted, counted_at: counted.counted_at.replace('Z', '+00:00') })).status).toBe(200);
  });
});
