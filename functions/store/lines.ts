import { createHash } from 'node:crypto';
import type { Instant } from '../../domain/holds';
import { DEFAULT_LOCATION_ID } from '../../domain/locations';
import { type Allocation, type Batch, type LineMove, type LinePart, type OrderLine, type Part, type ShippedUnits, type Split, locationOf } from '../../domain/model';
import type { Destination, Routing } from '../../domain/routing';
import { availableWrites, locationField } from './batches';
import { ITEM_IS_NEW } from './conditions';
import { PK, isAt, isNumber, isText, itemKey, shardOf } from './fields';
import { parseRouting, routingFields } from './routing-fields';
import type { TransactWriteItem } from './store-calls';
import { linesByBatchIndex, partitionKeyPrefix, timeToLiveAttribute } from './table';
import type { World } from './world';

/*
 * Order lines and their notices (items.ts, "The table's items"): an order's allocated lines, in its
 * partition and, through the sparse index linesByBatch, under their batch; and the notices a removed
 * line or a refusal for lack of stock leaves for its event. Their keys, items and parser, and their
 * writes, each with the condition that guards its invariant, with the moves of a batch's lines to
 * other batches (a change that lowers its qty).
 */

export const orderPartition = (orderid: string) => `${partitionKeyPrefix.order}${orderid}`;
/** The sort keys of an order's partition that hold its lines (the rest are notices). */
export const LINES_RANGE = 'LINE#';
export const lineKey = (orderid: string, sku: string) => itemKey(orderPartition(orderid), `${LINES_RANGE}${sku}`);
/** DynamoDB's bound on a sort key, in bytes of UTF-8. */
const MAX_SORT_KEY_BYTES = 1_024;

/**
 * A part of a split line, beside its line (the SKU's length first, so that no SKU and batch reference
 * make another's key). A SKU and a ref of the longest ids (128 characters of 4 bytes each) pass
 * DynamoDB's 1,024 bytes: such a part's key is a digest of the two instead (`PART#H:`, which no
 * length begins), while every key that fits stays as parts were always written.
 */
const partKey = (orderid: string, sku: string, batchref: string) => {
  const plain = `PART#${sku.length}:${sku}#${batchref}`;
  if (Buffer.byteLength(plain, 'utf8') <= MAX_SORT_KEY_BYTES) return itemKey(orderPartition(orderid), plain);
  return itemKey(orderPartition(orderid), `PART#H:${createHash('sha256').update(`${sku}\u0000${batchref}`).digest('base64url')}`);
};
const deallocationKey = (orderid: string, sku: string, noticeId: string) => itemKey(orderPartition(orderid), `DEALLOCATED#${sku}#${noticeId}`);
const outOfStockKey = (orderid: string, sku: string, noticeId: string) => itemKey(orderPartition(orderid), `OUTOFSTOCK#${sku}#${noticeId}`);
export const LINE_BATCH = linesByBatchIndex.partitionKey.name;
export const ALLOCATED_AT = linesByBatchIndex.sortKey.name;

/**
 * A batch's lines are spread over this many partitions of the linesByBatch index, by order and SKU:
 * each line writes its entry (1 WCU) to one of them, so that a hot batch's lines are not bound by
 * one index partition's 1,000 WCU/s (docs/capacity.md, "How far it goes"). A shard's key begins
 * `LINES<shard>#`, which no key without shards (`LINES#<ref>`, written before) can equal, whatever
 * characters a ref holds.
 */
export const LINE_SHARDS = 4;

/** The index partition of a line on the batch `batchref`. */
const lineBatchOf = ({ orderid, sku, batchref }: Allocation) =>
  `${partitionKeyPrefix.linesOfBatch}${shardOf(`${orderid}\u0000${sku}`, LINE_SHARDS)}#${batchref}`;

/** Where a line written before the index was sharded is listed; read with the shards until no such line is left. */
const unshardedLinesOfBatch = (ref: string) => `${partitionKeyPrefix.linesOfBatch}#${ref}`;

/**
 * Whether an index key lists a line of the batch: read by its shape, whatever shard it names, so
 * that a line written with another number of shards (an earlier or a later version) is still a line.
 */
const listsLinesOf = (lineBatch: string, batchref: string): boolean => {
  const sharded = /^(\d*)#/.exec(lineBatch.slice(partitionKeyPrefix.linesOfBatch.length));
  return lineBatch.startsWith(partitionKeyPrefix.linesOfBatch) && sharded !== null && lineBatch.slice(partitionKeyPrefix.linesOfBatch.length + sharded[0].length) === batchref;
};

/** Every index partition that lists the batch's lines. */
export const linesOfBatch = (ref: string): string[] => [
  ...Array.from({ length: LINE_SHARDS }, (_, shard) => `${partitionKeyPrefix.linesOfBatch}${shard}#${ref}`),
  unshardedLinesOfBatch(ref),
];

/** Why a line left its batch: its order cancelled it, or a change of the batch took it off. */
export type DeallocationReason = 'cancelled' | 'reallocated';
const DEALLOCATION_REASONS: readonly unknown[] = ['cancelled', 'reallocated'] satisfies DeallocationReason[];

/** Notices live a day: the stream, which carries their insertion, keeps records for 24 hours. */
const NOTICE_LIFETIME_SECONDS = 24 * 60 * 60;

/**
 * The id and the time to live of a notice written at `now`. The id is drawn from the world
 * (world.ts), so that a simulated run names its notices alike for its seed.
 */
const noticeFields = (now: Instant, world: Pick<World, 'newId'>) => ({
  noticeId: world.newId(),
  [timeToLiveAttribute]: Math.floor(now / 1000) + NOTICE_LIFETIME_SECONDS,
});

/**
 * A refusal's notice, written at `refusedAt`, names where the request allowed the line to come from,
 * when it said: its OutOfStock then speaks of there alone.
 */
export const outOfStockItem = ({ orderid, sku, qty }: OrderLine, refusedAt: Instant, world: Pick<World, 'newId'>, { destination, location }: Routing = {}) => {
  const notice = noticeFields(refusedAt, world);
  return {
    ...outOfStockKey(orderid, sku, notice.noticeId),
    type: 'OutOfStock',
    orderid,
    sku,
    qty,
    ...(destination ? { destination: { country: destination.country, ...(destination.position ? { position: { lat: destination.position.lat, lng: destination.position.lng } } : {}) } } : {}),
    ...(location === undefined ? {} : { location }),
    refusedAt: new Date(refusedAt).toISOString(),
    ...notice,
  };
};

/** A line, a deallocation notice or an out-of-stock notice, as read back. */
export type StoredLineItem =
  /**
   * `movedAt`: when a change of its batch last moved it; `location`: its batch's, absent at `default`
   * and on a line written before lines recorded it; `routing`: what its request named
   * (Allocation.routing, routing-fields.ts), apart from `allocation`, the line as its events carry it.
   */
  | {
      readonly kind: 'line';
      readonly allocation: Allocation;
      readonly allocatedAt: string;
      readonly movedAt?: string;
      readonly location?: string;
      readonly routing?: Routing;
    }
  /** A split line's part (`allocation`: its qty on `batchref`), which lists the line under that batch; the line's own item names its parts. */
  | { readonly kind: 'line-part'; readonly allocation: Allocation; readonly allocatedAt: string; readonly location?: string }
  /**
   * `location`: the batch's the line left, absent at `default` and on a notice written before notices
   * recorded it; a split line's notice names its split and its parts (`allocation.split`), each with its location.
   */
  | {
      readonly kind: 'deallocation';
      readonly allocation: Allocation;
      readonly reason: DeallocationReason;
      readonly deallocatedAt: string;
      readonly location?: string;
    }
  /** `destination`, `location`: what the refused request said of where its line may come from, when it said so. */
  | { readonly kind: 'out-of-stock'; readonly line: OrderLine; readonly refusedAt: string; readonly destination?: Destination; readonly location?: string };

/** A line, a deallocation notice or an out-of-stock notice, read back through its key. */
export const parseLineItem = (item: Record<string, unknown>): StoredLineItem | undefined => {
  const { [LINE_BATCH]: lineBatch, [ALLOCATED_AT]: allocatedAt, orderid, sku, qty, batchref, movedAt, reason, deallocatedAt, refusedAt, noticeId, location, cancelledAt } = item;
  if (!isText(orderid) || !isText(sku) || !isNumber(qty) || (location !== undefined && !isText(location))) return undefined;
  const line: OrderLine = { orderid, sku, qty };
  const at = locationField({ location });
  const shipped = parseShipped(item.shipped);
  if (!shipped || (cancelledAt !== undefined && !isText(cancelledAt))) return undefined;
  // A line that holds no unit (it shipped them all, or shipped some and gave back the rest) is listed under no batch.
  const settled = qty === 0 && shipped.length > 0 && lineBatch === undefined;
  const shippedFields = { ...(shipped.length > 0 ? { shipped } : {}), ...(isText(cancelledAt) ? { cancelled: true as const } : {}) };
  const listed = isText(batchref) && ((isText(lineBatch) && listsLinesOf(lineBatch, batchref)) || settled);
  const routed = parseRouting(item);
  if (isText(batchref) && listed && isText(allocatedAt) && (movedAt === undefined || isText(movedAt)) && routed) {
    if (isAt(item, lineKey(orderid, sku))) return { kind: 'line', allocation: { ...line, batchref, ...shippedFields }, allocatedAt, ...(movedAt ? { movedAt } : {}), ...at, ...routed };
    if (!settled && shipped.length === 0 && isAt(item, partKey(orderid, sku, batchref))) return { kind: 'line-part', allocation: { ...line, batchref }, allocatedAt, ...at };
  }
  const split = parseSplit(item.split, item.parts, qty, shipped.length > 0);
  if (split && lineBatch === undefined && isText(allocatedAt) && (movedAt === undefined || isText(movedAt)) && routed && isAt(item, lineKey(orderid, sku))) {
    const first = (split.parts[0] ?? shipped[0]) as LinePart;
    return {
      kind: 'line',
      allocation: { ...line, batchref: first.batchref, split, ...shippedFields },
      allocatedAt,
      ...(movedAt ? { movedAt } : {}),
      ...locationField(first),
      ...routed,
    };
  }
  if (isText(noticeId) && isText(batchref) && isText(deallocatedAt) && DEALLOCATION_REASONS.includes(reason) && (item.parts === undefined || split)) {
    if (isAt(item, deallocationKey(orderid, sku, noticeId))) {
      return { kind: 'deallocation', allocation: { ...line, batchref, ...(split ? { split } : {}), ...(shipped.length > 0 ? { shipped } : {}) }, reason: reason as DeallocationReason, deallocatedAt, ...at };
    }
  }
  if (isText(noticeId) && isText(refusedAt) && isAt(item, outOfStockKey(orderid, sku, noticeId))) {
    const destination = parseDestination(item.destination);
    if (item.destination !== undefined && !destination) return undefined;
    return { kind: 'out-of-stock', line, refusedAt, ...(destination ? { destination } : {}), ...(isText(location) ? { location } : {}) };
  }
  return undefined;
};

const SPLITS: readonly unknown[] = ['batches', 'locations'] satisfies Split[];

/**
 * A split line's `split` and `parts` as its item holds them: parts on distinct batches, whose qtys
 * sum to the line's; none only for a line that shipped units and holds none.
 */
const parseSplit = (split: unknown, parts: unknown, qty: number, hasShipped = false) => {
  const parsed = Array.isArray(parts) && parts.length === 0 && qty === 0 && hasShipped ? [] : parseParts(parts, qty);
  return SPLITS.includes(split) && parsed ? { split: split as Exclude<Split, 'none'>, parts: parsed } : undefined;
};

/** A line's shipped units as its item holds them: absent, or units of distinct batches, each more than none. */
const parseShipped = (shipped: unknown): ShippedUnits[] | undefined => {
  if (shipped === undefined) return [];
  if (!Array.isArray(shipped) || shipped.length === 0) return undefined;
  const parsed = shipped.map((units) => {
    const { batchref, qty, location } = (units ?? {}) as Record<string, unknown>;
    return isText(batchref) && isNumber(qty) && qty > 0 && (location === undefined || isText(location)) ? { batchref, qty, location: location ?? DEFAULT_LOCATION_ID } : undefined;
  });
  if (parsed.some((units) => units === undefined)) return undefined;
  const found = parsed as ShippedUnits[];
  return new Set(found.map(({ batchref }) => batchref)).size === found.length ? found : undefined;
};

const parseParts = (parts: unknown, qty: number): LinePart[] | undefined => {
  if (!Array.isArray(parts) || parts.length === 0) return undefined;
  const parsed = parts.map((part) => {
    const { batchref, qty: partQty, location } = (part ?? {}) as Record<string, unknown>;
    return isText(batchref) && isNumber(partQty) && partQty > 0 && (location === undefined || isText(location))
      ? { batchref, qty: partQty, location: location ?? DEFAULT_LOCATION_ID }
      : undefined;
  });
  if (parsed.some((part) => part === undefined)) return undefined;
  const found = parsed as LinePart[];
  const distinct = new Set(found.map(({ batchref }) => batchref)).size === found.length;
  return distinct && found.reduce((sum, part) => sum + part.qty, 0) === qty ? found : undefined;
};

/** A split line's parts as its items hold them: a location at `default` absent, as a batch's. */
const partsField = (parts: readonly LinePart[]) => parts.map(({ batchref, qty, location }) => ({ batchref, qty, ...locationField({ location }) }));

/** A refusal's destination as its notice holds it: a country, and its position when the request gave one. */
const parseDestination = (value: unknown): Destination | undefined => {
  const { country, position } = (value ?? {}) as Record<string, unknown>;
  if (!isText(country)) return undefined;
  if (position === undefined) return { country };
  const { lat, lng } = (position ?? {}) as Record<string, unknown>;
  return isNumber(lat) && isNumber(lng) ? { country, position: { lat, lng } } : undefined;
};

/**
 * Guards "the stock a line gives back is the stock it held": the line is still as it was read, a
 * whole line on its batch, a split line with its parts.
 */
const lineAsRead = ({ batchref, qty, split }: Allocation) =>
  split
    ? { ConditionExpression: 'qty = :lineQty AND parts = :parts', ExpressionAttributeValues: { ':lineQty': qty, ':parts': partsField(split.parts) } }
    : { ConditionExpression: 'batchref = :batchref AND qty = :lineQty', ExpressionAttributeValues: { ':batchref': batchref, ':lineQty': qty } };

/**
 * What every new line's item holds, and its put on condition that the order has no line for its
 * SKU; a failure carries the line there.
 */
const newLinePut = (tableName: string, allocation: Allocation, allocatedAt: string, fields: Record<string, unknown>): TransactWriteItem => ({
  Put: {
    TableName: tableName,
    Item: {
      ...lineKey(allocation.orderid, allocation.sku),
      type: 'Line',
      orderid: allocation.orderid,
      sku: allocation.sku,
      qty: allocation.qty,
      ...routingFields(allocation.routing),
      [ALLOCATED_AT]: allocatedAt,
      ...fields,
    },
    ConditionExpression: ITEM_IS_NEW,
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  },
});

/**
 * A new line on a batch at `at`, with the routing it records. It names its batch's location as the
 * batch's items do (absent for `default`), for its events: a stream record of a line tells nothing
 * of its batch.
 */
export const newLineWrite = (tableName: string, allocation: Allocation, allocatedAt: string, at: Pick<Batch, 'location'>): TransactWriteItem =>
  newLinePut(tableName, allocation, allocatedAt, { batchref: allocation.batchref, ...locationField(at), [LINE_BATCH]: lineBatchOf(allocation) });

/**
 * A new split line (`allocation.split`). It names its parts, each on its batch and at that batch's
 * location, and is listed under no batch: each part's item lists it (partWrite), in the same
 * transaction, so that a batch's lines are found through the index whichever way they are split.
 */
export const newSplitLineWrite = (tableName: string, allocation: Allocation, split: NonNullable<Allocation['split']>, allocatedAt: string): TransactWriteItem =>
  newLinePut(tableName, allocation, allocatedAt, { split: split.split, parts: partsField(split.parts) });

/**
 * A split line's part on its batch, listed under it in linesByBatch with the line's allocation time:
 * written and removed only with its line, whose condition guards both (the line as read names it).
 */
export const partWrite = (tableName: string, { orderid, sku }: Allocation, { batchref, qty, location }: LinePart, allocatedAt: string): TransactWriteItem => ({
  Put: {
    TableName: tableName,
    Item: {
      ...partKey(orderid, sku, batchref),
      type: 'LinePart',
      orderid,
      sku,
      qty,
      batchref,
      ...locationField({ location }),
      [LINE_BATCH]: lineBatchOf({ orderid, sku, qty, batchref }),
      [ALLOCATED_AT]: allocatedAt,
    },
  },
});

const partRemoval = (tableName: string, { orderid, sku }: Allocation, { batchref }: LinePart): TransactWriteItem => ({
  Delete: { TableName: tableName, Key: partKey(orderid, sku, batchref) },
});

/** The line put on another batch, `to`, and at its location, at `now`, on condition that it is still as read. */
const lineMoveWrite = (tableName: string, allocation: Allocation, to: Batch, now: Instant): TransactWriteItem => {
  const { location } = locationField(to);
  return {
    Update: {
      TableName: tableName,
      Key: lineKey(allocation.orderid, allocation.sku),
      // The line keeps its allocation time: it was allocated then, and moved now.
      UpdateExpression: `SET batchref = :to, ${LINE_BATCH} = :lines, movedAt = :movedAt${location === undefined ? ' REMOVE #location' : ', #location = :location'}`,
      ConditionExpression: lineAsRead(allocation).ConditionExpression,
      ExpressionAttributeNames: { '#location': 'location' },
      ExpressionAttributeValues: {
        ':to': to.ref,
        ':lines': lineBatchOf({ ...allocation, batchref: to.ref }),
        ':movedAt': new Date(now).toISOString(),
        ...(location === undefined ? {} : { ':location': location }),
        ...lineAsRead(allocation).ExpressionAttributeValues,
      },
    },
  };
};

/**
 * A line that shipped units gives back the others and stays, as what it shipped: it holds no unit,
 * is listed under no batch (a change of its batch has nothing of it to move), and a cancel marks it
 * (`cancelledAt`), so that a repeat of the cancel finds it done. On condition that it is as read.
 */
const lineEmptiedWrite = (tableName: string, allocation: Allocation, reason: DeallocationReason, now: Instant): TransactWriteItem => {
  const asRead = lineAsRead(allocation);
  const cancelled = reason === 'cancelled';
  return {
    Update: {
      TableName: tableName,
      Key: lineKey(allocation.orderid, allocation.sku),
      UpdateExpression: `SET qty = :none${allocation.split ? ', parts = :noParts' : ''}${cancelled ? ', cancelledAt = :cancelledAt' : ''} REMOVE ${LINE_BATCH}`,
      ConditionExpression: asRead.ConditionExpression,
      ExpressionAttributeValues: {
        ...asRead.ExpressionAttributeValues,
        ':none': 0,
        ...(allocation.split ? { ':noParts': [] } : {}),
        ...(cancelled ? { ':cancelledAt': new Date(now).toISOString() } : {}),
      },
    },
  };
};

/** A line's shipped units as its item holds them: a location at `default` absent, as a batch's. */
const shippedField = (shipped: readonly ShippedUnits[]) => shipped.map(({ batchref, qty, location }) => ({ batchref, qty, ...locationField({ location }) }));

/**
 * A line as a shipment leaves it (`after`: fewer units held, more shipped), on condition that it is
 * as read (`before`): two shipments, or a shipment and a move or a cancel, never both count the
 * same units. A line left with none is listed under no batch; a split line's part items follow its
 * parts (the line's condition guards them): a part's qty lowered, or the part removed once shipped whole.
 */
export const lineShipWrites = (tableName: string, before: Allocation, after: Allocation): TransactWriteItem[] => {
  const asRead = lineAsRead(before);
  const settled = after.qty === 0;
  const line: TransactWriteItem = {
    Update: {
      TableName: tableName,
      Key: lineKey(before.orderid, before.sku),
      UpdateExpression: `SET qty = :qtyLeft, shipped = :shipped${after.split ? ', parts = :partsLeft' : ''}${settled && !before.split ? ` REMOVE ${LINE_BATCH}` : ''}`,
      ConditionExpression: asRead.ConditionExpression,
      ExpressionAttributeValues: {
        ...asRead.ExpressionAttributeValues,
        ':qtyLeft': after.qty,
        ':shipped': shippedField(after.shipped ?? []),
        ...(after.split ? { ':partsLeft': partsField(after.split.parts) } : {}),
      },
    },
  };
  const partWrites = (before.split?.parts ?? []).flatMap((part): TransactWriteItem[] => {
    const left = after.split?.parts.find(({ batchref }) => batchref === part.batchref);
    if (left?.qty === part.qty) return [];
    const Key = partKey(before.orderid, before.sku, part.batchref);
    if (!left) return [{ Delete: { TableName: tableName, Key } }];
    // Guards "a part's item exists only with its part": an update would otherwise make one.
    return [{ Update: { TableName: tableName, Key, UpdateExpression: 'SET qty = :partLeft', ConditionExpression: `attribute_exists(${PK})`, ExpressionAttributeValues: { ':partLeft': left.qty } } }];
  });
  return [line, ...partWrites];
};

/**
 * The line's removal from its batch, `from`, at `now`, and, in the same transaction, the notice that
 * says why it left (for Deallocated) and where from: the batch's location as read, whatever the line
 * records.
 */
export const lineRemovalWrites = (
  tableName: string,
  allocation: Allocation,
  reason: DeallocationReason,
  from: Pick<Batch, 'location'>,
  now: Instant,
  world: Pick<World, 'newId'>,
): TransactWriteItem[] => {
  const { orderid, sku, qty, batchref, split } = allocation;
  const notice = noticeFields(now, world);
  // A split line's notice names its parts, each where its line records it.
  const where = split ? { ...locationField(split.parts[0] ?? {}), split: split.split, parts: partsField(split.parts) } : locationField(from);
  return [
    allocation.shipped ? lineEmptiedWrite(tableName, allocation, reason, now) : { Delete: { TableName: tableName, Key: lineKey(orderid, sku), ...lineAsRead(allocation) } },
    ...(split?.parts ?? []).map((part) => partRemoval(tableName, allocation, part)),
    {
      Put: {
        TableName: tableName,
        Item: {
          ...deallocationKey(orderid, sku, notice.noticeId),
          type: 'Deallocation',
          orderid,
          sku,
          qty,
          batchref,
          ...where,
          // What the line shipped, so that its event names the qty it was allocated.
          ...(allocation.shipped ? { shipped: shippedField(allocation.shipped) } : {}),
          reason,
          deallocatedAt: new Date(now).toISOString(),
          ...notice,
        },
      },
    },
  ];
};

/**
 * The part of a split line on `from` moved at `now` to the parts `to` names (each joining the line's
 * part on its batch, when it has one; the others in the moved part's place, in their order), on
 * condition that the line is as read: its item names its new parts, the part items follow, and the
 * batches' stock moves by the units each gives or takes (availableWrites, each as read). At most
 * MAX_PARTS_PER_LINE batches take units, so that it stays well within a transaction's 100 items.
 */
export const partMoveWrites = (tableName: string, line: Allocation, from: Batch, to: readonly Part[], now: Instant, allocatedAt: string): TransactWriteItem[] => {
  const split = line.split;
  const moving = split?.parts.find(({ batchref }) => batchref === from.ref);
  if (!split || !moving) throw new Error(`Line ${line.orderid}/${line.sku} has no part on batch ${from.ref} to move`);
  // The units placed again are the part's, no more, no fewer, on batches other than the one they leave: else the caller erred.
  if (to.reduce((sum, { qty }) => sum + qty, 0) !== moving.qty || to.some(({ batch }) => batch.ref === from.ref)) {
    throw new Error(`Line ${line.orderid}/${line.sku} moves ${moving.qty} units off batch ${from.ref} to other parts than its own`);
  }
  const heldOn = (batchref: string) => split.parts.find((part) => part.batchref === batchref)?.qty ?? 0;
  const arrived = to.map(({ batch, qty }) => ({ batchref: batch.ref, qty: heldOn(batch.ref) + qty, location: locationOf(batch) }));
  const joining = (part: LinePart) => arrived.find(({ batchref }) => batchref === part.batchref);
  const added = arrived.filter(({ batchref }) => heldOn(batchref) === 0);
  const parts = split.parts.flatMap((part) => (part === moving ? added : [joining(part) ?? part]));
  const asRead = lineAsRead(line);
  return [
    {
      Update: {
        TableName: tableName,
        Key: lineKey(line.orderid, line.sku),
        UpdateExpression: 'SET parts = :moved, movedAt = :movedAt',
        ConditionExpression: asRead.ConditionExpression,
        ExpressionAttributeValues: { ...asRead.ExpressionAttributeValues, ':moved': partsField(parts), ':movedAt': new Date(now).toISOString() },
      },
    },
    partRemoval(tableName, line, moving),
    ...arrived.map((part) => partWrite(tableName, line, part, allocatedAt)),
    ...availableWrites(tableName, from, moving.qty),
    ...to.flatMap(({ batch, qty }) => availableWrites(tableName, batch, -qty)),
  ];
};

/**
 * Lines taken off `from` at `now`, each put on its batch (or removed from its order, with its notice)
 * on condition that it is as read, and each batch's `available` changed once, by the sum of what the
 * moves give it or take from it: a transaction may not touch one item twice. Each batch's write is
 * availableWrites', on the batch as found before the moves: in place on condition that the sum
 * leaves it on its side of the stock range, or moved across the edge when the sum takes it there.
 */
export const lineMovesWrites = (
  tableName: string,
  from: Batch,
  moves: readonly LineMove[],
  batches: readonly Batch[],
  now: Instant,
  world: Pick<World, 'newId'>,
): TransactWriteItem[] => {
  const qtyOf = (some: readonly LineMove[]) => some.reduce((sum, { line }) => sum + line.qty, 0);
  const batchOf = (ref: string) => {
    const batch = batches.find((found) => found.ref === ref);
    // A line put on a batch whose stock the write did not take would be a line on no stock.
    if (!batch) throw new Error(`Moving lines to batch ${ref}, which was not read`);
    return batch;
  };
  const takes = [...new Set(moves.flatMap(({ to }) => (to === null ? [] : [to])))].map((ref) =>
    availableWrites(tableName, batchOf(ref), -qtyOf(moves.filter(({ to }) => to === ref))),
  );
  return [
    ...moves.flatMap(({ line, to }) =>
      to === null ? lineRemovalWrites(tableName, line, 'reallocated', from, now, world) : [lineMoveWrite(tableName, line, batchOf(to), now)],
    ),
    ...availableWrites(tableName, from, qtyOf(moves)),
    ...takes.flat(),
  ];
};
