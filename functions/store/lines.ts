import { createHash } from 'node:crypto';
import type { Instant } from '../../domain/holds';
import { DEFAULT_LOCATION_ID } from '../../domain/locations';
import type { Allocation, Batch, LinePart, OrderLine, ShippedUnits, Split } from '../../domain/model';
import type { Destination, Routing } from '../../domain/routing';
import { locationField } from './batches';
import { ITEM_IS_NEW } from './conditions';
import { isAt, isNumber, isText, itemKey, shardOf } from './fields';
import { parseRouting, routingFields } from './routing-fields';
import type { TransactWriteItem } from './store-calls';
import { linesByBatchIndex, partitionKeyPrefix, timeToLiveAttribute } from './table';
import type { World } from './world';

/*
 * Order lines and their notices (items.ts, "The table's items"): an order's allocated lines, in its
 * partition and, through the sparse index linesByBatch, under their batch; and the notices a removed
 * line or a refusal for lack of stock leaves for its event. Their keys, items and parser, and the
 * writes of new lines; the writes that change a line already written (a shipment, a cancel, a move)
 * are line-changes.ts's.
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
export const partKey = (orderid: string, sku: string, batchref: string) => {
  const plain = `PART#${sku.length}:${sku}#${batchref}`;
  if (Buffer.byteLength(plain, 'utf8') <= MAX_SORT_KEY_BYTES) return itemKey(orderPartition(orderid), plain);
  return itemKey(orderPartition(orderid), `PART#H:${createHash('sha256').update(`${sku}\u0000${batchref}`).digest('base64url')}`);
};
export const deallocationKey = (orderid: string, sku: string, noticeId: string) => itemKey(orderPartition(orderid), `DEALLOCATED#${sku}#${noticeId}`);
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
export const lineBatchOf = ({ orderid, sku, batchref }: Allocation) =>
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
export const noticeFields = (now: Instant, world: Pick<World, 'newId'>) => ({
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
export const partsField = (parts: readonly LinePart[]) => parts.map(({ batchref, qty, location }) => ({ batchref, qty, ...locationField({ location }) }));

/** A refusal's destination as its notice holds it: a country, and its position when the request gave one. */
const parseDestination = (value: unknown): Destination | undefined => {
  const { country, position } = (value ?? {}) as Record<string, unknown>;
  if (!isText(country)) return undefined;
  if (position === undefined) return { country };
  const { lat, lng } = (position ?? {}) as Record<string, unknown>;
  return isNumber(lat) && isNumber(lng) ? { country, position: { lat, lng } } : undefined;
};

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

