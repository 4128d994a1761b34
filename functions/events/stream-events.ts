import { unmarshall } from '@aws-sdk/util-dynamodb';
import { type DomainEvent, domainEvent } from '../../domain/events';
import { type Hold, requestedLines } from '../../domain/holds';
import { type Allocation, type LinePart, orderedQtyOf } from '../../domain/model';
import { DEFAULT_LOCATION_ID, type Location } from '../../domain/locations';
import { shippedQtyOf } from '../../domain/shipments';
import type { Transfer } from '../../domain/transfers';
import type { BatchDescription } from '../store/batches';
import { type StoredItem, parseStoredItem } from '../store/items';

/** An item image as a stream record carries it: DynamoDB's attribute-value JSON ({"S": "..."}, {"N": "1"}). */
export type StreamImage = Record<string, unknown>;

/**
 * The parts of a DynamoDB stream record the events come from; both a Lambda event's record and the
 * DynamoDB Streams API's record have this shape.
 */
export interface ChangeRecord {
  readonly eventID?: string;
  readonly eventName?: 'INSERT' | 'MODIFY' | 'REMOVE' | (string & {});
  readonly dynamodb?: {
    readonly SequenceNumber?: string;
    readonly NewImage?: StreamImage;
    readonly OldImage?: StreamImage;
  };
}

/** EventBridge's `source` of every event this service publishes. */
export const EVENT_SOURCE = 'allocation';

const stored = (image: StreamImage | undefined): StoredItem | undefined =>
  image && parseStoredItem(unmarshall(image as Parameters<typeof unmarshall>[0]));

/**
 * The events one committed change produces, in order; none for a change no consumer is told of
 * (a batch's stock moving between its keys or into and out of its pieces, a line's removal, whose notice speaks for it, a
 * notice or an ended hold's record expiring). Each id is the record's eventID and the event's
 * place in it: a stream delivers a record with the same eventID every time, so a redelivered event
 * carries the same id.
 */
export const eventsOfRecord = (record: ChangeRecord): DomainEvent[] => {
  const { eventID, eventName, dynamodb } = record;
  if (!eventID) throw new Error('A stream record without an eventID cannot give its events stable ids');
  const before = stored(dynamodb?.OldImage);
  const after = stored(dynamodb?.NewImage);
  return changesOf(eventName, before, after).map(([name, fields], position) =>
    domainEvent(name, { id: `${eventID}-${position}`, ...fields } as never),
  );
};

/** An event's name and its fields but the id, which the record's identity gives. */
type Change = { [Name in DomainEvent['name']]: [Name, Omit<Extract<DomainEvent, { name: Name }>['detail'], 'id' | 'version'>] }[DomainEvent['name']];

const changesOf = (eventName: ChangeRecord['eventName'], before: StoredItem | undefined, after: StoredItem | undefined): Change[] => {
  if (eventName === 'INSERT' && after) return insertionChanges(after);
  if (eventName === 'MODIFY' && before && after) return modificationChanges(before, after);
  return [];
};

const insertionChanges = (after: StoredItem): Change[] => {
  switch (after.kind) {
    case 'line':
      return after.allocation.split
        ? partsOfLine(after.allocation, after.allocation.split.parts).map((part) => ['Allocated', { time: after.allocatedAt, ...part }])
        : [['Allocated', { time: after.allocatedAt, ...lineFields(after.allocation), location: locationOf(after) }]];
    case 'deallocation':
      return after.allocation.split
        ? partsOfLine(after.allocation, after.allocation.split.parts).map((part) => ['Deallocated', { time: after.deallocatedAt, ...part, reason: after.reason }])
        : [['Deallocated', { time: after.deallocatedAt, ...lineFields(after.allocation), location: locationOf(after), reason: after.reason }]];
    case 'out-of-stock': {
      const { line, refusedAt, destination, location } = after;
      return [['OutOfStock', { time: refusedAt, sku: line.sku, orderid: line.orderid, qty: line.qty, ...(destination ? { destination } : {}), ...(location ? { location } : {}) }]];
    }
    case 'batch-reference':
      return after.description ? [['BatchAdded', batchFields(after, after.description)]] : [];
    case 'hold':
      return after.hold.status === 'active' ? [['HoldPlaced', { time: after.placedAt, ...holdFields(after.hold) }]] : [];
    case 'location':
      return [['LocationChanged', locationFields(after)]];
    case 'transfer':
      return [['TransferCreated', { time: after.createdAt, ...transferFields(after.transfer) }]];
    case 'shipment': {
      const { shipmentid, orderid, location, shippedAt, lines } = after.shipment;
      const shippedLines = lines.map(({ sku, qty, parts }) => ({ sku, qty, parts: parts.map((part) => ({ batchref: part.batchref, qty: part.qty })) }));
      return [['Shipped', { time: shippedAt, shipmentid, orderid, location, lines: shippedLines, ...(after.actor === undefined ? {} : { actor: after.actor }) }]];
    }
    default:
      return [];
  }
};

const modificationChanges = (before: StoredItem, after: StoredItem): Change[] => {
  // A shipment changes a line too (Shipped speaks for it), and so does the removal of a line that
  // shipped units, which stays holding none (its notice's Deallocated speaks for it); neither moves it.
  if (before.kind === 'line' && after.kind === 'line' && (shippedQtyOf(before.allocation) !== shippedQtyOf(after.allocation) || after.allocation.qty === 0)) return [];
  if (before.kind === 'line' && after.kind === 'line' && before.allocation.split && after.allocation.split) {
    return movedParts(before.allocation, before.allocation.split.parts, after.allocation.split.parts, after.movedAt ?? after.allocatedAt);
  }
  if (before.kind === 'line' && after.kind === 'line' && before.allocation.batchref !== after.allocation.batchref) {
    // Only a change of its batch moves a line; a move without its time would be a write this code does not make.
    const time = after.movedAt ?? after.allocatedAt;
    return [
      ['Deallocated', { time, ...lineFields(before.allocation), location: locationOf(before), reason: 'reallocated' }],
      ['Allocated', { time, ...lineFields(after.allocation), location: locationOf(after) }],
    ];
  }
  if (before.kind === 'batch-reference' && after.kind === 'batch-reference' && after.description) {
    const { qty, eta } = after.description;
    if (before.description?.qty === qty && before.description.eta === eta) return [];
    return [['BatchChanged', batchFields(after, after.description)]];
  }
  if (before.kind === 'hold' && after.kind === 'hold' && before.hold.status === 'active') return holdChanges(before.hold, after);
  if (before.kind === 'transfer' && after.kind === 'transfer' && before.transfer.status === 'active' && after.transfer.status === 'cancelled') {
    return [['TransferCancelled', { time: after.cancelledAt ?? after.createdAt, ...transferFields(after.transfer) }]];
  }
  if (before.kind === 'import' && after.kind === 'import' && before.record.status === 'running' && (after.record.status === 'completed' || after.record.status === 'failed')) {
    const { importid, status, dryRun, counts, finishedAt, startedAt } = after.record;
    return [['ImportCompleted', { time: finishedAt ?? startedAt, importid, status, dry_run: dryRun, ...counts }]];
  }
  // Every write of a location changes it: a PUT of the same location writes nothing (domain/location-services.ts).
  if (after.kind === 'location') return [['LocationChanged', locationFields(after)]];
  return [];
};

/**
 * What became of an active hold: extended, or ended one of three ways. Every write that extends or
 * ends a hold records its time; one without would be a write this code does not make.
 */
const holdChanges = (before: Hold, after: Extract<StoredItem, { kind: 'hold' }>): Change[] => {
  const { hold } = after;
  const fields = holdFields(hold);
  const endedAt = after.endedAt ?? after.placedAt;
  if (hold.status === 'active') {
    return hold.expiresAt === before.expiresAt ? [] : [['HoldExtended', { time: after.extendedAt ?? after.placedAt, ...fields }]];
  }
  if (hold.status === 'confirmed') return hold.orderid ? [['HoldConfirmed', { time: endedAt, ...fields, orderid: hold.orderid }]] : [];
  return [['HoldReleased', { time: endedAt, ...fields, reason: hold.status }]];
};

/** What a line's event says of it: its record's routing and split stay out. */
const lineFields = ({ orderid, sku, qty, batchref }: Allocation) => ({ orderid, sku, qty, batchref });

/** What each part's event says of a split line: the part's units, batch and location, the line's qty and split. */
const partsOfLine = (line: Allocation, parts: readonly LinePart[]) =>
  parts.map(({ batchref, qty: partQty, location }) => ({
    orderid: line.orderid,
    sku: line.sku,
    qty: partQty,
    batchref,
    location,
    line_qty: orderedQtyOf(line),
    ...(line.split ? { split: line.split.split } : {}),
  }));

/**
 * A change of a split line's parts, batch by batch: the units that left a batch (Deallocated, as
 * `reallocated`: only a change of a batch moves a part) before those that came to one (Allocated).
 */
const movedParts = (line: Allocation, before: readonly LinePart[], after: readonly LinePart[], time: string): Change[] => {
  const qtyOn = (parts: readonly LinePart[], batchref: string) => parts.find((part) => part.batchref === batchref)?.qty ?? 0;
  const left = before.flatMap((part) => (qtyOn(after, part.batchref) < part.qty ? [{ ...part, qty: part.qty - qtyOn(after, part.batchref) }] : []));
  const came = after.flatMap((part) => (qtyOn(before, part.batchref) < part.qty ? [{ ...part, qty: part.qty - qtyOn(before, part.batchref) }] : []));
  return [
    ...partsOfLine(line, left).map((part): Change => ['Deallocated', { time, ...part, reason: 'reallocated' }]),
    ...partsOfLine(line, came).map((part): Change => ['Allocated', { time, ...part }]),
  ];
};

const holdFields = ({ holdid, expiresAt, lines }: Hold) => {
  const lineQty = new Map(requestedLines(lines).map(({ sku, qty }) => [sku, qty]));
  return {
    holdid,
    expires_at: expiresAt,
    // A split line's parts, each on its batch, with the line's qty and split.
    lines: lines.map(({ sku, qty, batchref, location, split }) => ({
      sku,
      qty,
      batchref,
      location: location ?? DEFAULT_LOCATION_ID,
      ...(split ? { line_qty: lineQty.get(sku), split } : {}),
    })),
  };
};

/**
 * The location an item records of its batch: absent, `default`, as the batch's own items have it, and
 * as an item written before it recorded its batch's location reads (docs/events.md says which).
 */
const locationOf = ({ location }: { readonly location?: string }): string => location ?? DEFAULT_LOCATION_ID;

const locationFields = ({ location, changedAt }: { location: Location; changedAt: string }) => {
  const { id, name, priority, serves, active, position, handlingDays, transitDays } = location;
  return {
    time: changedAt,
    location: id,
    name,
    priority,
    serves: [...serves],
    active,
    ...(position ? { position: { lat: position.lat, lng: position.lng } } : {}),
    ...(handlingDays === undefined ? {} : { handling_days: handlingDays }),
    ...(transitDays === undefined ? {} : { transit_days: { ...transitDays } }),
  };
};

const transferFields = ({ transferid, sku, qty, from, to, eta, fromBatchref }: Transfer) => ({ transferid, sku, qty, from, to, eta, from_batchref: fromBatchref, ref: transferid });

const batchFields = ({ ref, sku }: { ref: string; sku: string }, { qty, eta, changedAt, location, reason, actor }: BatchDescription) => ({
  time: changedAt,
  ref,
  sku,
  qty,
  eta,
  location: locationOf({ location }),
  ...(reason === undefined ? {} : { reason }),
  ...(actor === undefined ? {} : { actor }),
});
