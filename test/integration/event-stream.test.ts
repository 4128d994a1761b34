import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeleteTableCommand, DescribeTableCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type DomainEvent, eventSchemas } from '../../domain/events';
import { confirmHold, endExpiredHold, extendHold, placeHold, releaseHold } from '../../domain/hold-services';
import { changeBatch } from '../../domain/batch-changes';
import { addBatch } from '../../domain/services';
import { DynamoDbBatchRepository } from '../../functions/store/batch-repository';
import { createDynamoDbClient } from '../../functions/store/client';
import { tableStreamViewType, timeToLiveAttribute } from '../../functions/store/table';
import { type DynamoDbLocal, freePort, startDynamoDbLocal } from '../../local/dynamodb-local';
import { type StreamStart, followTableEvents } from '../../local/event-stream';
import { ensureTable } from '../../local/table';
import { type HandlerService, serviceOver } from '../reliability/support/service';
import { createTableAsFirstReleased, createTestTable, dynamoDbEndpoint, type TestTable, uniqueId } from '../support/dynamodb';
import { routeEvent } from '../support/events';

// The local server's events, read from the table's stream on the run's DynamoDB Local with the
// code the Lambda consumer uses, after the real handlers' writes.

let table: TestTable;
let service: HandlerService;

beforeAll(async () => {
  table = await createTestTable();
  service = serviceOver(table.repository());
});
afterAll(() => table.drop());

interface Following {
  /** What was handed on so far, in order. */
  readonly events: DomainEvent[];
  /** Resolves once an event satisfies `condition`; by then every change committed before that event's has been handed on too. */
  until(condition: (event: DomainEvent) => boolean): Promise<void>;
  stop(): Promise<void>;
}

const follow = async (tableName: string, from?: StreamStart, endpoint = dynamoDbEndpoint()): Promise<Following> => {
  const events: DomainEvent[] = [];
  const stream = await followTableEvents({ tableName, endpoint, from, onEvent: (event) => {
      events.push(event);
    },
  });
  return {
    events,
    until: async (condition) => {
      while (!events.some(condition)) await sleep(20);
    },
    stop: () => stream.stop(),
  };
};

/**
 * A batch of a SKU of its own, added last: DynamoDB Local keeps one shard, so once its BatchAdded
 * is handed on, so is every event of what committed before it.
 */
const addMarker = async () => {
  const ref = uniqueId('marker');
  expect((await service.addBatch({ ref, sku: uniqueId('MARKER'), qty: 1, eta: null })).status).toBe(201);
  return (event: DomainEvent) => event.name === 'BatchAdded' && event.detail.ref === ref;
};

/** Whose events these are: a hold's (holdid), a shipment's (shipmentid), an import's (importid), a line's (orderid and sku), a batch's (ref), or a location's. */
const keyOf = ({ detail }: DomainEvent) => {
  if ('holdid' in detail) return detail.holdid;
  if ('importid' in detail) return detail.importid;
  if ('shipmentid' in detail) return detail.shipmentid;
  if ('orderid' in detail) return `${detail.orderid} ${detail.sku}`;
  return 'ref' in detail ? detail.ref : detail.location;
};

/** Each key's events in the order handed on, without what differs on every run (id, version, time). */
const byKey = (events: readonly DomainEvent[]) => {
  const keyed: Record<string, unknown[]> = {};
  for (const event of events) {
    const { id, version, time, ...fields } = event.detail;
    (keyed[keyOf(event)] ??= []).push({ name: event.name, ...fields });
  }
  return keyed;
};

const patchBatch = async (ref: string, body: unknown) =>
  expect((await service.invoke(routeEvent('PATCH /batches/{ref}', { pathParameters: { ref }, body }))).status).toBe(200);

describe("the local server's events", () => {
  it("announces each committed change once, in order per line and per batch, and nothing for an unknown SKU", async () => {
    const following = await follow(table.tableName);
    const [lamp, chair] = [uniqueId('LAMP'), uniqueId('CHAIR')];
    const [shelf, shipment, chairs] = [uniqueId('shelf'), uniqueId('shipment'), uniqueId('chairs')];
    const [kept, moved, refused, ordered] = [uniqueId('kept'), uniqueId('moved'), uniqueId('refused'), uniqueId('ordered')];

    expect((await service.addBatch({ ref: shelf, sku: lamp, qty: 10, eta: null })).status).toBe(201);
    expect((await service.addBatch({ ref: shipment, sku: lamp, qty: 10, eta: '2027-01-15' })).status).toBe(201);
    expect((await service.allocate({ orderid: kept, sku: lamp, qty: 4 })).body).toEqual({ batchref: shelf, location: 'default' });
    expect((await service.allocate({ orderid: moved, sku: lamp, qty: 3 })).body).toEqual({ batchref: shelf, location: 'default' });
    // 7 on a shelf of 4: the newest line moves to the shipment.
    await patchBatch(shelf, { qty: 4 });
    // No batch has room for it now: it leaves its order.
    await patchBatch(shipment, { qty: 0 });
    expect((await service.invoke(routeEvent('DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid: kept, sku: lamp } }))).status).toBe(204);
    expect((await service.allocate({ orderid: refused, sku: lamp, qty: 100 })).status).toBe(400);
    expect((await service.addBatch({ ref: chairs, sku: chair, qty: 5, eta: null })).status).toBe(201);
    const order = { orderid: ordered, lines: [{ sku: lamp, qty: 1 }, { sku: chair, qty: 2 }] };
    expect((await service.invoke(routeEvent('POST /orders', { body: order }))).status).toBe(201);
    expect((await service.allocate({ orderid: uniqueId('unknown'), sku: uniqueId('NO-SUCH-SKU'), qty: 1 })).status).toBe(400);
    const isMarker = await addMarker();
    await following.until(isMarker);
    await following.stop();

    const events = following.events.filter((event) => !isMarker(event));
    expect(byKey(events)).toEqual({
      [shelf]: [
        { name: 'BatchAdded', ref: shelf, sku: lamp, qty: 10, eta: null, location: 'default', actor: 'anonymous' },
        { name: 'BatchChanged', ref: shelf, sku: lamp, qty: 4, eta: null, location: 'default', reason: 'correction', actor: 'anonymous' },
      ],
      [shipment]: [
        { name: 'BatchAdded', ref: shipment, sku: lamp, qty: 10, eta: '2027-01-15', location: 'default', actor: 'anonymous' },
        { name: 'BatchChanged', ref: shipment, sku: lamp, qty: 0, eta: '2027-01-15', location: 'default', reason: 'correction', actor: 'anonymous' },
      ],
      [chairs]: [{ name: 'BatchAdded', ref: chairs, sku: chair, qty: 5, eta: null, location: 'default', actor: 'anonymous' }],
      [`${kept} ${lamp}`]: [
        { name: 'Allocated', orderid: kept, sku: lamp, qty: 4, batchref: shelf, location: 'default' },
        { name: 'Deallocated', orderid: kept, sku: lamp, qty: 4, batchref: shelf, location: 'default', reason: 'cancelled' },
      ],
      [`${moved} ${lamp}`]: [
        { name: 'Allocated', orderid: moved, sku: lamp, qty: 3, batchref: shelf, location: 'default' },
        { name: 'Deallocated', orderid: moved, sku: lamp, qty: 3, batchref: shelf, location: 'default', reason: 'reallocated' },
        { name: 'Allocated', orderid: moved, sku: lamp, qty: 3, batchref: shipment, location: 'default' },
        { name: 'Deallocated', orderid: moved, sku: lamp, qty: 3, batchref: shipment, location: 'default', reason: 'reallocated' },
      ],
      [`${refused} ${lamp}`]: [{ name: 'OutOfStock', orderid: refused, sku: lamp, qty: 100 }],
      [`${ordered} ${lamp}`]: [{ name: 'Allocated', orderid: ordered, sku: lamp, qty: 1, batchref: shelf, location: 'default' }],
      [`${ordered} ${chair}`]: [{ name: 'Allocated', orderid: ordered, sku: chair, qty: 2, batchref: chairs, location: 'default' }],
    });
    for (const { name, detail } of events) expect(() => eventSchemas[name].parse(detail)).not.toThrow();
    expect(new Set(events.map(({ detail }) => detail.id)).size).toBe(events.length);
  });

  it("announces a split line's parts one event each: allocated, a part moved, then the line leaving", async () => {
    const following = await follow(table.tableName);
    const lamp = uniqueId('LAMP');
    const [first, second, third] = [uniqueId('a-shelf'), uniqueId('b-shelf'), uniqueId('c-shelf')];
    const [moved, cancelled] = [uniqueId('moved'), uniqueId('cancelled')];
    for (const [ref, qty] of [[first, 4], [second, 4], [third, 2]] as const) expect((await service.addBatch({ ref, sku: lamp, qty, eta: null })).status).toBe(201);
    expect((await service.allocate({ orderid: moved, sku: lamp, qty: 6, split: 'batches' })).status).toBe(201);
    await patchBatch(second, { qty: 10 });
    // The part of 4 on the first batch joins the line's part on the second.
    await patchBatch(first, { qty: 0 });
    expect((await service.allocate({ orderid: cancelled, sku: lamp, qty: 5, split: 'locations' })).status).toBe(201);
    expect((await service.invoke(routeEvent('DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid: cancelled, sku: lamp } }))).status).toBe(204);
    const isMarker = await addMarker();
    await following.until(isMarker);
    await following.stop();

    const events = following.events.filter((event) => !isMarker(event) && 'orderid' in event.detail);
    const part = (orderid: string, batchref: string, qty: number, lineQty: number, split: string) => ({ orderid, sku: lamp, qty, batchref, location: 'default', line_qty: lineQty, split });
    expect(byKey(events)).toEqual({
      [`${moved} ${lamp}`]: [
        { name: 'Allocated', ...part(moved, first, 4, 6, 'batches') },
        { name: 'Allocated', ...part(moved, second, 2, 6, 'batches') },
        { name: 'Deallocated', ...part(moved, first, 4, 6, 'batches'), reason: 'reallocated' },
        { name: 'Allocated', ...part(moved, second, 4, 6, 'batches') },
      ],
      [`${cancelled} ${lamp}`]: [
        { name: 'Allocated', ...part(cancelled, second, 4, 5, 'locations') },
        { name: 'Allocated', ...part(cancelled, third, 1, 5, 'locations') },
        { name: 'Deallocated', ...part(cancelled, second, 4, 5, 'locations'), reason: 'cancelled' },
        { name: 'Deallocated', ...part(cancelled, third, 1, 5, 'locations'), reason: 'cancelled' },
      ],
    });
    for (const { name, detail } of events) expect(() => eventSchemas[name].parse(detail)).not.toThrow();
  });

  it("announces a part placed again over several batches as its Deallocated, then an Allocated of the units each batch took", async () => {
    const following = await follow(table.tableName);
    const lamp = uniqueId('LAMP');
    const [first, second, third] = [uniqueId('a-shelf'), uniqueId('b-shelf'), uniqueId('c-shelf')];
    const orderid = uniqueId('order');
    for (const [ref, qty] of [[first, 4], [second, 4], [third, 3]] as const) expect((await service.addBatch({ ref, sku: lamp, qty, eta: null })).status).toBe(201);
    expect((await service.allocate({ orderid, sku: lamp, qty: 6, split: 'batches' })).status).toBe(201);
    // No batch left can take the part of 4 whole: 2 join the line's part on the second, 2 go to the third, in its place.
    await patchBatch(first, { qty: 0 });
    const isMarker = await addMarker();
    await following.until(isMarker);
    await following.stop();

    const events = following.events.filter((event) => !isMarker(event) && 'orderid' in event.detail);
    const part = (batchref: string, qty: number) => ({ orderid, sku: lamp, qty, batchref, location: 'default', line_qty: 6, split: 'batches' });
    expect(byKey(events)).toEqual({
      [`${orderid} ${lamp}`]: [
        { name: 'Allocated', ...part(first, 4) },
        { name: 'Allocated', ...part(second, 2) },
        { name: 'Deallocated', ...part(first, 4), reason: 'reallocated' },
        { name: 'Allocated', ...part(third, 2) },
        { name: 'Allocated', ...part(second, 2) },
      ],
    });
    for (const { name, detail } of events) expect(() => eventSchemas[name].parse(detail)).not.toThrow();
  });

  it('announces a shipment as Shipped and a BatchChanged of each batch it left, and a line that shipped by the units it holds when they move or are cancelled', async () => {
    const following = await follow(table.tableName);
    const [lamp, vase] = [uniqueId('LAMP'), uniqueId('VASE')];
    const [shelf, room, first, second] = [uniqueId('a-shelf'), uniqueId('b-room'), uniqueId('a-vases'), uniqueId('b-vases')];
    const orderid = uniqueId('order');
    const shipmentid = uniqueId('parcel');
    for (const [ref, sku, qty] of [[shelf, lamp, 10], [room, lamp, 10], [first, vase, 2], [second, vase, 3]] as const) {
      expect((await service.addBatch({ ref, sku, qty, eta: null })).status).toBe(201);
    }
    expect((await service.allocate({ orderid, sku: lamp, qty: 5 })).status).toBe(201);
    expect((await service.allocate({ orderid, sku: vase, qty: 4, split: 'batches' })).status).toBe(201);
    const shipped = await service.invoke(routeEvent('POST /shipments', { body: { shipmentid, orderid, lines: [{ sku: lamp, qty: 2 }, { sku: vase, qty: 3 }] } }));
    expect(shipped.status).toBe(201);
    // The lamp line's 3 units left move to the other batch; the vase line's last unit is cancelled.
    await patchBatch(shelf, { qty: 2 });
    expect((await service.invoke(routeEvent('DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid, sku: vase } }))).status).toBe(204);
    const isMarker = await addMarker();
    await following.until(isMarker);
    await following.stop();

    const events = following.events.filter((event) => !isMarker(event));
    const vasePart = (batchref: string, qty: number) => ({ orderid, sku: vase, qty, batchref, location: 'default', line_qty: 4, split: 'batches' });
    expect(byKey(events)).toMatchObject({
      [shipmentid]: [
        {
          name: 'Shipped',
          shipmentid,
          orderid,
          location: 'default',
          lines: [
            { sku: lamp, qty: 2, parts: [{ batchref: shelf, qty: 2 }] },
            { sku: vase, qty: 3, parts: [{ batchref: first, qty: 2 }, { batchref: second, qty: 1 }] },
          ],
        },
      ],
      [shelf]: [
        { name: 'BatchAdded', qty: 10 },
        { name: 'BatchChanged', qty: 8, reason: 'shipped' },
        { name: 'BatchChanged', qty: 2, reason: 'correction' },
      ],
      [first]: [{ name: 'BatchAdded', qty: 2 }, { name: 'BatchChanged', qty: 0, reason: 'shipped' }],
      [second]: [{ name: 'BatchAdded', qty: 3 }, { name: 'BatchChanged', qty: 2, reason: 'shipped' }],
      [`${orderid} ${lamp}`]: [
        { name: 'Allocated', orderid, sku: lamp, qty: 5, batchref: shelf },
        { name: 'Deallocated', orderid, sku: lamp, qty: 3, batchref: shelf, reason: 'reallocated' },
        { name: 'Allocated', orderid, sku: lamp, qty: 3, batchref: room },
      ],
      [`${orderid} ${vase}`]: [
        { name: 'Allocated', ...vasePart(first, 2) },
        { name: 'Allocated', ...vasePart(second, 2) },
        { name: 'Deallocated', ...vasePart(second, 1), reason: 'cancelled' },
      ],
    });
    expect(byKey(events)[`${orderid} ${lamp}`]).toHaveLength(3);
    expect(byKey(events)[`${orderid} ${vase}`]).toHaveLength(3);
    for (const { name, detail } of events) expect(() => eventSchemas[name].parse(detail)).not.toThrow();
  });

  it("announces a split hold's parts on its events, and its confirm as an Allocated for each part", async () => {
    const following = await follow(table.tableName);
    const lamp = uniqueId('LAMP');
    const [first, second] = [uniqueId('a-shelf'), uniqueId('b-shelf')];
    const [holdid, orderid] = [uniqueId('cart'), uniqueId('order')];
    for (const ref of [first, second]) expect((await service.addBatch({ ref, sku: lamp, qty: 4, eta: null })).status).toBe(201);
    expect((await service.invoke(routeEvent('POST /holds', { body: { holdid, split: 'batches', lines: [{ sku: lamp, qty: 6 }] } }))).status).toBe(201);
    expect((await service.invoke(routeEvent('POST /holds/{holdid}/confirm', { pathParameters: { holdid }, body: { orderid } }))).status).toBe(201);
    const isMarker = await addMarker();
    await following.until(isMarker);
    await following.stop();

    const events = following.events.filter((event) => !isMarker(event) && ('holdid' in event.detail || 'orderid' in event.detail));
    const heldPart = (batchref: string, qty: number) => ({ sku: lamp, qty, batchref, location: 'default', line_qty: 6, split: 'batches' });
    const lines = [heldPart(first, 4), heldPart(second, 2)];
    const byName = (name: string) =>
      events
        .filter((event) => event.name === name)
        .map(({ detail }) => {
          const { id, version, time, ...fields } = detail as Record<string, unknown>;
          delete fields.expires_at;
          return fields;
        });
    expect(byName('HoldPlaced')).toEqual([{ holdid, lines }]);
    expect(byName('HoldConfirmed')).toEqual([{ holdid, lines, orderid }]);
    expect(byName('Allocated')).toEqual([
      { orderid, ...heldPart(first, 4) },
      { orderid, ...heldPart(second, 2) },
    ]);
    for (const { name, detail } of events) expect(() => eventSchemas[name].parse(detail)).not.toThrow();
  });

  it("announces a hold's life at the times of the clock that judged each change, and a hold a shrinking batch ends as released", async () => {
    const following = await follow(table.tableName);
    const start = Date.parse('2030-01-01T10:00:00.000Z');
    let now = start;
    const at = (seconds: number) => new Date(start + seconds * 1000).toISOString();
    const repository = table.repository({ clock: () => now });
    const sku = uniqueId('LAMP');
    const ref = uniqueId('shelf');
    const [confirmed, released, expired, shrunk] = [uniqueId('kept'), uniqueId('released'), uniqueId('expired'), uniqueId('shrunk')];
    const orderid = uniqueId('order');
    const heldOn = (qty: number) => [{ sku, qty, batchref: ref, location: 'default' }];
    expect((await addBatch({ ref, sku, qty: 10, eta: null }, repository)).created).toBe(true);

    await placeHold({ holdid: confirmed, lines: [{ sku, qty: 2 }], ttlSeconds: 60 }, repository);
    now = start + 10_000;
    await extendHold(confirmed, 120, repository);
    now = start + 20_000;
    await confirmHold(confirmed, orderid, repository);
    await placeHold({ holdid: released, lines: [{ sku, qty: 1 }], ttlSeconds: 60 }, repository);
    now = start + 21_000;
    expect(await releaseHold(released, repository)).toBe('released');
    await placeHold({ holdid: expired, lines: [{ sku, qty: 1 }], ttlSeconds: 5 }, repository);
    now = start + 31_000;
    expect(await endExpiredHold(expired, repository)).toBe(true);
    await placeHold({ holdid: shrunk, lines: [{ sku, qty: 3 }], ttlSeconds: 60 }, repository);
    // 10 units, 2 of them the confirmed hold's line and 3 held: at 3, the hold gives way to the line.
    await changeBatch(ref, { qty: 3 }, repository);
    const isMarker = await addMarker();
    await following.until(isMarker);
    await following.stop();

    /** The hold's events as handed on, with their times, without their ids. */
    const eventsOfHold = (holdid: string) =>
      following.events
        .filter(({ detail }) => 'holdid' in detail && detail.holdid === holdid)
        .map(({ name, detail: { id, version, ...fields } }) => ({ name, ...fields }));
    expect(eventsOfHold(confirmed)).toEqual([
      { name: 'HoldPlaced', time: at(0), holdid: confirmed, expires_at: at(60), lines: heldOn(2) },
      { name: 'HoldExtended', time: at(10), holdid: confirmed, expires_at: at(130), lines: heldOn(2) },
      { name: 'HoldConfirmed', time: at(20), holdid: confirmed, expires_at: at(130), lines: heldOn(2), orderid },
    ]);
    const allocated = following.events.find(({ name, detail }) => name === 'Allocated' && detail.orderid === orderid);
    expect(allocated?.detail).toMatchObject({ time: at(20), orderid, sku, qty: 2, batchref: ref });
    expect(eventsOfHold(released)).toEqual([
      { name: 'HoldPlaced', time: at(20), holdid: released, expires_at: at(80), lines: heldOn(1) },
      { name: 'HoldReleased', time: at(21), holdid: released, expires_at: at(80), lines: heldOn(1), reason: 'released' },
    ]);
    expect(eventsOfHold(expired)).toEqual([
      { name: 'HoldPlaced', time: at(21), holdid: expired, expires_at: at(26), lines: heldOn(1) },
      { name: 'HoldReleased', time: at(31), holdid: expired, expires_at: at(26), lines: heldOn(1), reason: 'expired' },
    ]);
    expect(eventsOfHold(shrunk)).toEqual([
      { name: 'HoldPlaced', time: at(31), holdid: shrunk, expires_at: at(91), lines: heldOn(3) },
      { name: 'HoldReleased', time: at(31), holdid: shrunk, expires_at: at(91), lines: heldOn(3), reason: 'released' },
    ]);
  });

  it("announces an import's rows as their own routes' changes, nothing for a row that changed nothing, and ImportCompleted once, not for its repeat", async () => {
    const following = await follow(table.tableName);
    const sku = uniqueId('SHELF');
    const [kept, recounted] = [uniqueId('kept'), uniqueId('recounted')];
    expect((await service.addBatch({ ref: kept, sku, qty: 5, eta: null })).status).toBe(201);
    const importid = uniqueId('feed');
    const feed = { importid, rows: [{ ref: kept, sku, qty: 5, eta: null }, { ref: recounted, sku, qty: 3, eta: null }, { ref: recounted, sku, qty: 4, eta: null }] };
    expect((await service.invoke(routeEvent('POST /imports', { body: feed }))).status).toBe(201);
    expect((await service.invoke(routeEvent('POST /imports', { body: feed }))).status).toBe(200);
    const isMarker = await addMarker();
    await following.until(isMarker);
    await following.stop();

    const events = following.events.filter((event) => !isMarker(event));
    const counts = { total: 3, done: 3, applied: 2, unchanged: 1, conflicted: 0, stale: 0, invalid: 0, failed: 0 };
    expect(byKey(events)).toEqual({
      [kept]: [{ name: 'BatchAdded', ref: kept, sku, qty: 5, eta: null, location: 'default', actor: 'anonymous' }],
      [recounted]: [
        { name: 'BatchAdded', ref: recounted, sku, qty: 3, eta: null, location: 'default', actor: 'anonymous' },
        { name: 'BatchChanged', ref: recounted, sku, qty: 4, eta: null, location: 'default', reason: 'counted', actor: 'anonymous' },
      ],
      [importid]: [{ name: 'ImportCompleted', importid, status: 'completed', dry_run: false, ...counts }],
    });
    for (const { name, detail } of events) expect(() => eventSchemas[name].parse(detail)).not.toThrow();
  });

  it("turns every record of a batch once held into its events, and reports no error", async () => {
    // Ending a batch's last hold leaves its `held` map empty, which DynamoDB Local's stream writes
    // without its type: the release and the next change of the batch carry one each.
    const report = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const following = await follow(table.tableName);
    try {
      const sku = uniqueId('LAMP');
      const ref = uniqueId('shelf');
      const holdid = uniqueId('cart');
      expect((await service.addBatch({ ref, sku, qty: 10, eta: null })).status).toBe(201);
      const hold = { holdid, lines: [{ sku, qty: 2 }], ttl_seconds: 600 };
      expect((await service.invoke(routeEvent('POST /holds', { body: hold }))).status).toBe(201);
      expect((await service.invoke(routeEvent('DELETE /holds/{holdid}', { pathParameters: { holdid } }))).status).toBe(204);
      await patchBatch(ref, { qty: 8 });
      const isMarker = await addMarker();
      await following.until(isMarker);

      const events = following.events.filter((event) => !isMarker(event));
      expect(events.map((event) => [event.name, keyOf(event)])).toEqual([
        ['BatchAdded', ref],
        ['HoldPlaced', holdid],
        ['HoldReleased', holdid],
        ['BatchChanged', ref],
      ]);
      expect(report.mock.calls).toEqual([]);
    } finally {
      await following.stop();
      report.mockRestore();
    }
  });

  it('hands on the same events with the same ids each time the same records are read', async () => {
    const sku = uniqueId('DESK');
    const ref = uniqueId('desk');
    expect((await service.addBatch({ ref, sku, qty: 3, eta: null })).status).toBe(201);
    expect((await service.allocate({ orderid: uniqueId('order'), sku, qty: 2 })).status).toBe(201);
    await patchBatch(ref, { qty: 1 });
    const isMarker = await addMarker();

    const readFromTheStart = async () => {
      const following = await follow(table.tableName, 'TRIM_HORIZON');
      await following.until(isMarker);
      await following.stop();
      return following.events.slice(0, following.events.findIndex(isMarker) + 1);
    };
    const first = await readFromTheStart();
    const second = await readFromTheStart();

    expect(first.map(({ name }) => name)).toEqual(expect.arrayContaining(['BatchAdded', 'Allocated', 'BatchChanged', 'Deallocated']));
    expect(second).toEqual(first);
  });

  it('reports an event its receiver throws on, and hands on the next ones', async () => {
    const refused: DomainEvent[] = [];
    const handedOn: DomainEvent[] = [];
    const report = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const stream = await followTableEvents({
      tableName: table.tableName,
      endpoint: table.endpoint,
      onEvent: (event) => {
        if (refused.length === 0) {
          refused.push(event);
          throw new Error('receiver down');
        }
        handedOn.push(event);
      },
    });
    try {
      const first = await addMarker();
      const second = await addMarker();
      while (!handedOn.some(second)) await sleep(20);
      expect(refused.some(first)).toBe(true);
      expect(report).toHaveBeenCalledWith(expect.stringContaining('receiver down'));
    } finally {
      await stream.stop();
      report.mockRestore();
    }
  });
});

describe('a table made before its events', () => {
  // A DynamoDB Local of its own: adding an index to a table with items waits on what else the
  // instance serves, and behind the run's shared one it passed 60 s twice in full runs (1.5 s alone).
  let store: DynamoDbLocal;
  beforeAll(async () => {
    store = await startDynamoDbLocal();
  }, 60_000);
  afterAll(() => store?.stop());

  it('gets its stream and its time to live, keeps what it holds, and announces its changes from then on', async () => {
    const { endpoint } = store;
    const tableName = uniqueId('before-events');
    const client = createDynamoDbClient(endpoint);
    await createTableAsFirstReleased(client, tableName);
    const repository = new DynamoDbBatchRepository(DynamoDBDocumentClient.from(client), tableName);
    const before = { ref: uniqueId('before'), sku: uniqueId('LAMP'), qty: 5, available: 5, eta: null };
    await repository.addBatch(before);
    try {
      await ensureTable(client, tableName);

      const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
      expect(Table?.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: tableStreamViewType });
      const { TimeToLiveDescription } = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
      expect(TimeToLiveDescription).toEqual({ TimeToLiveStatus: 'ENABLED', AttributeName: timeToLiveAttribute });
      expect(await repository.batch(before.ref)).toEqual(before);

      const following = await follow(tableName, 'TRIM_HORIZON', endpoint);
      const after = { ...before, ref: uniqueId('after') };
      await repository.addBatch(after);
      await following.until((event) => event.name === 'BatchAdded' && event.detail.ref === after.ref);
      await following.stop();
      expect(following.events.map(({ name }) => name)).toEqual(['BatchAdded']);
    } finally {
      await client.send(new DeleteTableCommand({ TableName: tableName }));
      client.destroy();
    }
  }, 90_000);
});

describe('a stream that stops answering', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'allocations-event-stream-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('is reported once, and read again from where it stood once its DynamoDB is back', async () => {
    const port = await freePort();
    let store = await startDynamoDbLocal({ dataDir, port });
    const client = createDynamoDbClient(store.endpoint);
    const tableName = uniqueId('restarted');
    await ensureTable(client, tableName);
    const repository = new DynamoDbBatchRepository(DynamoDBDocumentClient.from(client), tableName);
    const batch = (ref: string) => ({ ref, sku: 'LAMP', qty: 1, available: 1, eta: null });
    const report = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const following = await follow(tableName, 'LATEST', store.endpoint);
    try {
      await repository.addBatch(batch('before-the-outage'));
      await following.until((event) => event.name === 'BatchAdded');
      await store.stop();
      const outageReports = () => report.mock.calls.filter(([line]) => String(line).includes('Cannot read the stream'));
      while (outageReports().length === 0) await sleep(20);

      store = await startDynamoDbLocal({ dataDir, port });
      await repository.addBatch(batch('after-the-outage'));
      await following.until((event) => event.name === 'BatchAdded' && event.detail.ref === 'after-the-outage');

      expect(following.events.map((event) => event.name === 'BatchAdded' && event.detail.ref)).toEqual(['before-the-outage', 'after-the-outage']);
      expect(outageReports()).toHaveLength(1);
    } finally {
      await following.stop();
      report.mockRestore();
      client.destroy();
      await store.stop();
    }
    // Two starts of DynamoDB Local, each seconds of JVM start-up.
  }, 60_000);
});
