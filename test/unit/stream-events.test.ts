import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { type DomainEvent, eventSchemas } from '../../domain/events';
import { type ChangeRecord, eventsOfRecord } from '../../functions/events/stream-events';
import { lineRemovalWrites } from '../../functions/store/line-changes';
import { newLineWrite, outOfStockItem } from '../../functions/store/lines';
import { systemWorld } from '../../functions/store/world';
import { activeHold, endedHold, changeRecord } from '../support/stream-records';
import recorded from './fixtures/stream-records.json';

/*
 * Stream records as DynamoDB Local wrote them while the service ran, before there were locations
 * (so every batch reads as at `default`), in the shape Lambda delivers
 * (ApproximateCreationDateTime in epoch seconds): batches shelf-1 (10, on the shelf) and ship-1
 * (5, due 2026-12-01) of LAMP; o1 allocates 8 and o2 2, emptying shelf-1; o3 asks 50 (out of
 * stock) and an unknown SKU (no event); shelf-1 shrinks to 8, moving o2 to ship-1; ship-1's eta
 * changes, then it shrinks to 0, taking o2 off with nowhere to go; o1 is cancelled; batch sofa-1 of
 * SOFA is added and order o4 takes a SOFA and a LAMP.
 */
const records = (recorded as unknown as DynamoDBStreamEvent).Records as ChangeRecord[];
const recordAt = (sequenceNumber: number) => records.find((record) => Number(record.dynamodb?.SequenceNumber) === sequenceNumber)!;

/** An event without what changes from run to run (its id and time), to compare with what the story says. */
const withoutIdentity = ({ name, detail }: DomainEvent) => {
  const { id, time, ...fields } = detail;
  return { name, ...fields };
};

describe('turning stream records into events', () => {
  it('tells the story of the recorded run, event by event, in commit order', () => {
    const events = records.flatMap(eventsOfRecord).map(withoutIdentity);
    expect(events).toEqual([
      { name: 'BatchAdded', version: 1, ref: 'shelf-1', sku: 'LAMP', qty: 10, eta: null, location: 'default' },
      { name: 'BatchAdded', version: 1, ref: 'ship-1', sku: 'LAMP', qty: 5, eta: '2026-12-01', location: 'default' },
      { name: 'Allocated', version: 1, orderid: 'o1', sku: 'LAMP', qty: 8, batchref: 'shelf-1', location: 'default' },
      { name: 'Allocated', version: 1, orderid: 'o2', sku: 'LAMP', qty: 2, batchref: 'shelf-1', location: 'default' },
      { name: 'OutOfStock', version: 1, sku: 'LAMP', orderid: 'o3', qty: 50 },
      { name: 'BatchChanged', version: 1, ref: 'shelf-1', sku: 'LAMP', qty: 8, eta: null, location: 'default' },
      { name: 'Deallocated', version: 1, orderid: 'o2', sku: 'LAMP', qty: 2, batchref: 'shelf-1', location: 'default', reason: 'reallocated' },
      { name: 'Allocated', version: 1, orderid: 'o2', sku: 'LAMP', qty: 2, batchref: 'ship-1', location: 'default' },
      { name: 'BatchChanged', version: 1, ref: 'ship-1', sku: 'LAMP', qty: 5, eta: '2026-12-24', location: 'default' },
      { name: 'BatchChanged', version: 1, ref: 'ship-1', sku: 'LAMP', qty: 0, eta: '2026-12-24', location: 'default' },
      { name: 'Deallocated', version: 1, orderid: 'o2', sku: 'LAMP', qty: 2, batchref: 'ship-1', location: 'default', reason: 'reallocated' },
      { name: 'Deallocated', version: 1, orderid: 'o1', sku: 'LAMP', qty: 8, batchref: 'shelf-1', location: 'default', reason: 'cancelled' },
      { name: 'BatchAdded', version: 1, ref: 'sofa-1', sku: 'SOFA', qty: 3, eta: null, location: 'default' },
      { name: 'Allocated', version: 1, orderid: 'o4', sku: 'SOFA', qty: 1, batchref: 'sofa-1', location: 'default' },
      { name: 'Allocated', version: 1, orderid: 'o4', sku: 'LAMP', qty: 1, batchref: 'shelf-1', location: 'default' },
    ]);
  });

  it('gives each event a shape its published schema accepts', () => {
    for (const event of records.flatMap(eventsOfRecord)) {
      expect(eventSchemas[event.name].safeParse(event.detail).success, JSON.stringify(event)).toBe(true);
    }
  });

  it('gives the same ids to the events of a record read twice, from its eventID and their place in it', () => {
    const moved = recordAt(14);
    expect(eventsOfRecord(moved)).toEqual(eventsOfRecord(structuredClone(moved)));
    expect(eventsOfRecord(moved).map(({ detail }) => detail.id)).toEqual([`${moved.eventID}-0`, `${moved.eventID}-1`]);
    const ids = records.flatMap(eventsOfRecord).map(({ detail }) => detail.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('announces an allocation when its line is inserted, at the time the line was allocated', () => {
    const inserted = recordAt(7);
    const [allocated] = eventsOfRecord(inserted);
    expect(allocated?.name).toBe('Allocated');
    expect(allocated?.detail.time).toBe((inserted.dynamodb?.NewImage as { allocatedAt: { S: string } }).allocatedAt.S);
  });

  it('announces a line moved to another batch as a deallocation from the old batch, then an allocation to the new', () => {
    expect(eventsOfRecord(recordAt(14)).map(withoutIdentity)).toEqual([
      { name: 'Deallocated', version: 1, orderid: 'o2', sku: 'LAMP', qty: 2, batchref: 'shelf-1', location: 'default', reason: 'reallocated' },
      { name: 'Allocated', version: 1, orderid: 'o2', sku: 'LAMP', qty: 2, batchref: 'ship-1', location: 'default' },
    ]);
  });

  it("announces a removed line by its notice's insertion, which knows the reason, not by the line's removal", () => {
    expect(recordAt(25).eventName).toBe('REMOVE');
    expect(eventsOfRecord(recordAt(25))).toEqual([]);
    expect(eventsOfRecord(recordAt(26)).map(withoutIdentity)).toEqual([
      { name: 'Deallocated', version: 1, orderid: 'o1', sku: 'LAMP', qty: 8, batchref: 'shelf-1', location: 'default', reason: 'cancelled' },
    ]);
  });

  it('announces a refusal for lack of stock from its notice', () => {
    expect(eventsOfRecord(recordAt(11)).map(withoutIdentity)).toEqual([{ name: 'OutOfStock', version: 1, sku: 'LAMP', orderid: 'o3', qty: 50 }]);
  });

  it('announces nothing when a notice expires', () => {
    const notice = recordAt(26);
    const expired: ChangeRecord = { ...notice, eventID: 'expired', eventName: 'REMOVE', dynamodb: { OldImage: notice.dynamodb?.NewImage } };
    expect(eventsOfRecord(expired)).toEqual([]);
  });

  it('announces nothing for stock moving within the SKU or a batch moving between its keys', () => {
    for (const sequenceNumber of [1, 3, 6, 8, 9, 13, 15, 16]) expect(eventsOfRecord(recordAt(sequenceNumber))).toEqual([]);
  });

  it('announces a change of a batch only when its qty or eta changed', () => {
    const changed = recordAt(17);
    const unchanged: ChangeRecord = { ...changed, dynamodb: { OldImage: changed.dynamodb?.NewImage, NewImage: changed.dynamodb?.NewImage } };
    expect(eventsOfRecord(changed).map(({ name }) => name)).toEqual(['BatchChanged']);
    expect(eventsOfRecord(unchanged)).toEqual([]);
  });

  it('announces nothing for an item it does not know', () => {
    const stranger: ChangeRecord = { eventID: 'x', eventName: 'INSERT', dynamodb: { NewImage: { pk: { S: 'OTHER#1' }, sk: { S: 'X' }, qty: { N: '1' } } } };
    expect(eventsOfRecord(stranger)).toEqual([]);
  });

  it('refuses a record without an eventID, which could not give its events stable ids', () => {
    expect(() => eventsOfRecord({ ...recordAt(7), eventID: undefined })).toThrow(/eventID/);
  });
});

describe("turning a hold's record into events", () => {
  const lines = [
    { sku: 'LAMP', qty: 2, batchref: 'b1', location: 'default' },
    { sku: 'SOFA', qty: 1, batchref: 's1', location: 'lyon' },
  ];
  const extendedHold = { ...activeHold, heldUntil: { S: '2026-11-23T10:30:00.000Z' }, extendedAt: { S: '2026-11-23T10:05:00.000Z' } };

  it('announces a hold placed when its record is inserted, at the time it was placed, with its lines and expiry', () => {
    expect(eventsOfRecord(changeRecord(1, 'INSERT', undefined, activeHold))).toEqual([
      {
        name: 'HoldPlaced',
        detail: { id: 'event-1-0', version: 1, time: '2026-11-23T10:00:00.000Z', holdid: 'cart-1', expires_at: '2026-11-23T10:15:00.000Z', lines },
      },
    ]);
  });

  it('announces an extension when an active hold keeps its status and its expiry moves, at the time of the extension, with the new expiry', () => {
    expect(eventsOfRecord(changeRecord(2, 'MODIFY', activeHold, extendedHold))).toEqual([
      {
        name: 'HoldExtended',
        detail: { id: 'event-2-0', version: 1, time: '2026-11-23T10:05:00.000Z', holdid: 'cart-1', expires_at: '2026-11-23T10:30:00.000Z', lines },
      },
    ]);
  });

  it.each(['released', 'expired'] as const)('announces a hold ended as %s as HoldReleased with that reason, at the time it ended', (status) => {
    const ended = endedHold(status, '2026-11-23T10:20:00.000Z', { heldUntil: extendedHold.heldUntil, extendedAt: extendedHold.extendedAt });
    expect(eventsOfRecord(changeRecord(3, 'MODIFY', extendedHold, ended))).toEqual([
      {
        name: 'HoldReleased',
        detail: {
          id: 'event-3-0',
          version: 1,
          time: '2026-11-23T10:20:00.000Z',
          holdid: 'cart-1',
          expires_at: '2026-11-23T10:30:00.000Z',
          lines,
          reason: status,
        },
      },
    ]);
  });

  it('announces a confirmed hold as HoldConfirmed with its order, at the time it ended', () => {
    const confirmed = endedHold('confirmed', '2026-11-23T10:10:00.000Z', { orderid: { S: 'order-9' } });
    expect(eventsOfRecord(changeRecord(4, 'MODIFY', activeHold, confirmed))).toEqual([
      {
        name: 'HoldConfirmed',
        detail: {
          id: 'event-4-0',
          version: 1,
          time: '2026-11-23T10:10:00.000Z',
          holdid: 'cart-1',
          expires_at: '2026-11-23T10:15:00.000Z',
          lines,
          orderid: 'order-9',
        },
      },
    ]);
  });

  it('gives each hold event a shape its published schema accepts', () => {
    const records = [
      changeRecord(1, 'INSERT', undefined, activeHold),
      changeRecord(2, 'MODIFY', activeHold, extendedHold),
      changeRecord(3, 'MODIFY', activeHold, endedHold('expired', '2026-11-23T10:20:00.000Z')),
      changeRecord(4, 'MODIFY', activeHold, endedHold('confirmed', '2026-11-23T10:10:00.000Z', { orderid: { S: 'order-9' } })),
    ];
    const events = records.flatMap(eventsOfRecord);
    expect(events.map(({ name }) => name)).toEqual(['HoldPlaced', 'HoldExtended', 'HoldReleased', 'HoldConfirmed']);
    for (const event of events) expect(eventSchemas[event.name].safeParse(event.detail).success, JSON.stringify(event)).toBe(true);
  });

  it("announces nothing when an active hold's record is written without a new expiry, an ended one's is written again, or its record expires", () => {
    const released = endedHold('released', '2026-11-23T10:10:00.000Z');
    expect(eventsOfRecord(changeRecord(5, 'MODIFY', activeHold, { ...activeHold }))).toEqual([]);
    expect(eventsOfRecord(changeRecord(6, 'MODIFY', released, endedHold('released', '2026-11-23T10:11:00.000Z')))).toEqual([]);
    expect(eventsOfRecord(changeRecord(7, 'REMOVE', released))).toEqual([]);
  });
});

describe("turning a batch's reference into BatchAdded", () => {
  it("names the location its reference names, and default when it names none", () => {
    const reference = (ref: string, fields: Record<string, unknown> = {}) => ({
      pk: { S: `BATCHREF#${ref}` },
      sk: { S: 'BATCHREF' },
      type: { S: 'BatchReference' },
      ref: { S: ref },
      sku: { S: 'LAMP' },
      qty: { N: '4' },
      changedAt: { S: '2026-11-23T10:00:00.000Z' },
      ...fields,
    });
    const added = [changeRecord(3, 'INSERT', undefined, reference('b1', { location: { S: 'lyon' }, eta: { S: '2027-01-01' } })), changeRecord(4, 'INSERT', undefined, reference('b2'))];
    expect(added.flatMap(eventsOfRecord).map(({ detail: { id, time, version, ...fields } }) => fields)).toEqual([
      { ref: 'b1', sku: 'LAMP', qty: 4, eta: '2027-01-01', location: 'lyon' },
      { ref: 'b2', sku: 'LAMP', qty: 4, eta: null, location: 'default' },
    ]);
  });
});

describe('the location of the batch an event is about, from the items as the store writes them', () => {
  const line = { orderid: 'o1', sku: 'LAMP', qty: 2, batchref: 'l1' };
  type Image = Parameters<typeof changeRecord>[3];
  const image = (item: Record<string, unknown>) => marshall(item, { removeUndefinedValues: true }) as unknown as Image;
  const lineAt = (location?: string) => image(newLineWrite('table', line, '2026-11-23T10:00:00.000Z', location ? { location } : {}).Put?.Item ?? {});
  const fieldsOf = (record: ChangeRecord) => eventsOfRecord(record).map(({ name, detail: { id, time, version, ...fields } }) => ({ name, ...fields }));

  it('names the location a line records of its batch, and default for a line that records none', () => {
    expect(fieldsOf(changeRecord(1, 'INSERT', undefined, lineAt('lyon')))).toEqual([{ name: 'Allocated', ...line, location: 'lyon' }]);
    expect(lineAt()).not.toHaveProperty('location');
    expect(fieldsOf(changeRecord(2, 'INSERT', undefined, lineAt()))).toEqual([{ name: 'Allocated', ...line, location: 'default' }]);
  });

  it('names the location a line left and the one it went to when a change of its batch moves it', () => {
    const { location: _, ...atDefault } = lineAt('lyon') as Record<string, unknown>;
    const moved: Parameters<typeof changeRecord>[3] = { ...atDefault, batchref: { S: 'd1' }, lineBatch: { S: 'LINES0#d1' }, movedAt: { S: '2026-11-23T10:05:00.000Z' } };
    expect(fieldsOf(changeRecord(3, 'MODIFY', lineAt('lyon'), moved))).toEqual([
      { name: 'Deallocated', ...line, location: 'lyon', reason: 'reallocated' },
      { name: 'Allocated', ...line, batchref: 'd1', location: 'default' },
    ]);
  });

  it("names the location of the batch a removed line left, which its notice records from the batch as read", () => {
    const notice = lineRemovalWrites('table', line, 'cancelled', { location: 'lyon' }, Date.now(), systemWorld)[1]?.Put?.Item;
    expect(fieldsOf(changeRecord(4, 'INSERT', undefined, image(notice ?? {})))).toEqual([{ name: 'Deallocated', ...line, location: 'lyon', reason: 'cancelled' }]);
  });

  it('names the batch location a change leaves in place on its reference', () => {
    const reference = (qty: number) => ({
      pk: { S: 'BATCHREF#l1' },
      sk: { S: 'BATCHREF' },
      type: { S: 'BatchReference' },
      ref: { S: 'l1' },
      sku: { S: 'LAMP' },
      qty: { N: String(qty) },
      location: { S: 'lyon' },
      changedAt: { S: '2026-11-23T10:00:00.000Z' },
    });
    expect(fieldsOf(changeRecord(5, 'MODIFY', reference(4), reference(3)))).toEqual([{ name: 'BatchChanged', ref: 'l1', sku: 'LAMP', qty: 3, eta: null, location: 'lyon' }]);
  });

  it('names the destination and the location a refused request was limited to, and neither for one limited to nothing', () => {
    const refused = { orderid: 'o2', sku: 'LAMP', qty: 5 };
    const atCounter = image(outOfStockItem(refused, Date.now(), systemWorld, { location: 'nantes' }));
    const toParis = image(outOfStockItem(refused, Date.now(), systemWorld, { destination: { country: 'FR', position: { lat: 48.86, lng: 2.35 } } }));
    const anywhere = image(outOfStockItem(refused, Date.now(), systemWorld));
    expect([atCounter, toParis, anywhere].flatMap((item, n) => fieldsOf(changeRecord(6 + n, 'INSERT', undefined, item)))).toEqual([
      { name: 'OutOfStock', sku: 'LAMP', orderid: 'o2', qty: 5, location: 'nantes' },
      { name: 'OutOfStock', sku: 'LAMP', orderid: 'o2', qty: 5, destination: { country: 'FR', position: { lat: 48.86, lng: 2.35 } } },
      { name: 'OutOfStock', sku: 'LAMP', orderid: 'o2', qty: 5 },
    ]);
    for (const event of [atCounter, toParis, anywhere].flatMap((item, n) => eventsOfRecord(changeRecord(9 + n, 'INSERT', undefined, item)))) {
      expect(eventSchemas[event.name].safeParse(event.detail).success, JSON.stringify(event)).toBe(true);
    }
  });
});

describe("turning a location's item into events", () => {
  /** A location's item as PUT /locations/{id} writes it. */
  const lyonItem = (revision: number, fields: Record<string, unknown> = {}) => ({
    pk: { S: 'LOCATIONS' },
    sk: { S: 'lyon' },
    type: { S: 'Location' },
    id: { S: 'lyon' },
    name: { S: 'Lyon' },
    priority: { N: '10' },
    serves: { L: [{ S: 'FR' }, { S: 'BE' }] },
    active: { BOOL: true },
    position: { M: { lat: { N: '45.76' }, lng: { N: '4.84' } } },
    revision: { N: String(revision) },
    changedAt: { S: `2026-11-23T10:0${revision}:00.000Z` },
    ...fields,
  });
  const lyon = { location: 'lyon', name: 'Lyon', priority: 10, serves: ['FR', 'BE'], active: true, position: { lat: 45.76, lng: 4.84 } };

  it('announces a location created as LocationChanged, whole, at the time it was written', () => {
    expect(eventsOfRecord(changeRecord(1, 'INSERT', undefined, lyonItem(1)))).toEqual([
      { name: 'LocationChanged', detail: { id: 'event-1-0', version: 1, time: '2026-11-23T10:01:00.000Z', ...lyon } },
    ]);
  });

  it('announces a location replaced as LocationChanged, as it is now: without the position the replacement removed', () => {
    const { position: _, ...replaced } = lyonItem(2, { active: { BOOL: false } });
    const { position: __, ...withoutPosition } = lyon;
    expect(eventsOfRecord(changeRecord(2, 'MODIFY', lyonItem(1), replaced))).toEqual([
      { name: 'LocationChanged', detail: { id: 'event-2-0', version: 1, time: '2026-11-23T10:02:00.000Z', ...withoutPosition, active: false } },
    ]);
  });

  it('gives a LocationChanged a shape its published schema accepts', () => {
    for (const event of eventsOfRecord(changeRecord(1, 'INSERT', undefined, lyonItem(1)))) {
      expect(eventSchemas[event.name].safeParse(event.detail).success, JSON.stringify(event)).toBe(true);
    }
  });
});

describe("a transfer's record", () => {
  const made = {
    pk: { S: 'TRANSFER#t1' },
    sk: { S: 'TRANSFER' },
    type: { S: 'Transfer' },
    transferid: { S: 't1' },
    sku: { S: 'LAMP' },
    qty: { N: '4' },
    fromLocation: { S: 'default' },
    toLocation: { S: 'lyon' },
    eta: { S: '2027-03-01' },
    fromBatchref: { S: 'b1' },
    status: { S: 'active' },
    createdAt: { S: '2026-11-23T10:00:00.000Z' },
  };
  const cancelled = { ...made, status: { S: 'cancelled' }, cancelledAt: { S: '2026-11-23T11:00:00.000Z' }, expiresAt: { N: '1764068400' } };
  const fields = { version: 1, transferid: 't1', sku: 'LAMP', qty: 4, from: 'default', to: 'lyon', eta: '2027-03-01', from_batchref: 'b1', ref: 't1' };

  it('is TransferCreated when inserted, at its createdAt, and TransferCancelled when it turns cancelled, at its cancelledAt', () => {
    expect(eventsOfRecord(changeRecord(1, 'INSERT', undefined, made) as ChangeRecord)).toEqual([
      { name: 'TransferCreated', detail: { id: 'event-1-0', time: '2026-11-23T10:00:00.000Z', ...fields } },
    ]);
    expect(eventsOfRecord(changeRecord(2, 'MODIFY', made, cancelled) as ChangeRecord)).toEqual([
      { name: 'TransferCancelled', detail: { id: 'event-2-0', time: '2026-11-23T11:00:00.000Z', ...fields } },
    ]);
  });

  it('says nothing when its record expires', () => {
    expect(eventsOfRecord(changeRecord(3, 'REMOVE', cancelled) as ChangeRecord)).toEqual([]);
  });
});

describe("an import's record", () => {
  const counts = { total: 3, done: 3, applied: 2, unchanged: 0, conflicted: 1, stale: 0, invalid: 0, failed: 0 };
  const running = { pk: 'IMPORT#feed-1', sk: 'IMPORT', type: 'Import', importid: 'feed-1', dryRun: false, validateFirst: true, digest: 'd', status: 'running', ...counts, done: 2, applied: 1, startedAt: '2026-11-23T10:00:00.000Z' };
  const completed = { ...running, ...counts, status: 'completed', finishedAt: '2026-11-23T10:00:02.000Z' };
  const image = (item: Record<string, unknown>) => marshall(item) as unknown as Parameters<typeof changeRecord>[3];

  it('is ImportCompleted with its counts when it ends, at its finishedAt, and nothing while its chunks count', () => {
    expect(eventsOfRecord(changeRecord(1, 'INSERT', undefined, image(running)) as ChangeRecord)).toEqual([]);
    expect(eventsOfRecord(changeRecord(2, 'MODIFY', image(running), image({ ...running, done: 3 })) as ChangeRecord)).toEqual([]);
    expect(eventsOfRecord(changeRecord(3, 'MODIFY', image(running), image(completed)) as ChangeRecord)).toEqual([
      { name: 'ImportCompleted', detail: { id: 'event-3-0', version: 1, time: '2026-11-23T10:00:02.000Z', importid: 'feed-1', status: 'completed', dry_run: false, ...counts } },
    ]);
  });
});
