import type { Instant } from '../../domain/holds';
import type { Allocation, Batch, LineMove, OrderLine } from '../../domain/model';
import type { Destination, Routing } from '../../domain/routing';
import { availableWrites, locationField } from './batches';
import { ITEM_IS_NEW } from './conditions';
import { isAt, isNumber, isText, itemKey, shardOf } from './fields';
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
  /** `location`: the batch's the line left, absent at `default` and on a notice written before notices recorded it. */
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
  const { [LINE_BATCH]: lineBatch, [ALLOCATED_AT]: allocatedAt, orderid, sku, qty, batchref, movedAt, reason, deallocatedAt, refusedAt, noticeId, location } = item;
  if (!isText(orderid) || !isText(sku) || !isNumber(qty) || (location !== undefined && !isText(location))) return undefined;
  const line: OrderLine = { orderid, sku, qty };
  const at = locationField({ location });
  const listed = isText(batchref) && isText(lineBatch) && listsLinesOf(lineBatch, batchref);
  const routed = parseRouting(item);
  if (isText(batchref) && listed && isText(allocatedAt) && (movedAt === undefined || isText(movedAt)) && routed) {
    if (isAt(item, lineKey(orderid, sku))) return { kind: 'line', allocation: { ...line, batchref }, allocatedAt, ...(movedAt ? { movedAt } : {}), ...at, ...routed };
  }
  if (isText(noticeId) && isText(batchref) && isText(deallocatedAt) && DEALLOCATION_REASONS.includes(reason)) {
    if (isAt(item, deallocationKey(orderid, sku, noticeId))) {
      return { kind: 'deallocation', allocation: { ...line, batchref }, reason: reason as DeallocationReason, deallocatedAt, ...at };
    }
  }
  if (isText(noticeId) && isText(refusedAt) && isAt(item, outOfStockKey(orderid, sku, noticeId))) {
    const destination = parseDestination(item.destination);
    if (item.destination !== undefined && !destination) return undefined;
    return { kind: 'out-of-stock', line, refusedAt, ...(destination ? { destination } : {}), ...(isText(location) ? { location } : {}) };
  }
  return undefined;
};

/** A refusal's destination as its notice holds it: a country, and its position when the request gave one. */
const parseDestination = (value: unknown): Destination | undefined => {
  const { country, position } = (value ?? {}) as Record<string, unknown>;
  if (!isText(country)) return undefined;
  if (position === undefined) return { country };
  const { lat, lng } = (position ?? {}) as Record<string, unknown>;
  return isNumber(lat) && isNumber(lng) ? { country, position: { lat, lng } } : undefined;
};

/** Guards "the stock a line gives back is the stock it held": the line is still as it was read. */
const LINE_IS_AS_READ = 'batchref = :batchref AND qty = :lineQty';
const lineAsRead = ({ batchref, qty }: Allocation) => ({ ':batchref': batchref, ':lineQty': qty });

/**
 * A new line on a batch at `at`, with the routing it records, on condition that the order has none
 * for its SKU; a failure carries the line there. It names its batch's location as the batch's items
 * do (absent for `default`), for its events: a stream record of a line tells nothing of its batch.
 */
export const newLineWrite = (tableName: string, allocation: Allocation, allocatedAt: string, at: Pick<Batch, 'location'>): TransactWriteItem => ({
  Put: {
    TableName: tableName,
    Item: {
      ...lineKey(allocation.orderid, allocation.sku),
      type: 'Line',
      orderid: allocation.orderid,
      sku: allocation.sku,
      qty: allocation.qty,
      batchref: allocation.batchref,
      ...routingFields(allocation.routing),
      ...locationField(at),
      [LINE_BATCH]: lineBatchOf(allocation),
      [ALLOCATED_AT]: allocatedAt,
    },
    ConditionExpression: ITEM_IS_NEW,
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  },
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
      ConditionExpression: LINE_IS_AS_READ,
      ExpressionAttributeNames: { '#location': 'location' },
      ExpressionAttributeValues: {
        ':to': to.ref,
        ':lines': lineBatchOf({ ...allocation, batchref: to.ref }),
        ':movedAt': new Date(now).toISOString(),
        ...(location === undefined ? {} : { ':location': location }),
        ...lineAsRead(allocation),
      },
    },
  };
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
  const { orderid, sku, qty, batchref } = allocation;
  const notice = noticeFields(now, world);
  return [
    {
      Delete: {
        TableName: tableName,
        Key: lineKey(orderid, sku),
        ConditionExpression: LINE_IS_AS_READ,
        ExpressionAttributeValues: lineAsRead(allocation),
      },
    },
    {
      Put: {
        TableName: tableName,
        Item: { ...deallocationKey(orderid, sku, notice.noticeId), type: 'Deallocation', orderid, sku, qty, batchref, ...locationField(from), reason, deallocatedAt: new Date(now).toISOString(), ...notice },
      },
    },
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
