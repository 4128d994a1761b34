import { type HeldLine, type Hold, type HoldStatus, type Instant, linesOfHold } from '../../domain/holds';
import { type Batch, hasStockLeft } from '../../domain/model';
import type { HoldEnding, HoldToEnd } from '../../domain/ports';
import { batchMoveWrites, batchWithStockKey } from './batches';
import { BOUND_OF_OLDER_HOLDS, heldBoundOf, heldBoundWrite } from './held-bounds';
import { type Condition, ITEM_IS_NEW, and, withValues } from './conditions';
import { PK, isAt, isText, itemKey, shardOf } from './fields';
import {
  type CountPlaces,
  type HoldWrites,
  type PieceCountWrite,
  givingBackWrites,
  heldUnitsConfirmationWrites,
  heldUnitsPuts,
  heldUnitsRemovals,
  parseSources,
  sourceFields,
  sourcesOf,
} from './held-units';
import { newLineWrite, newSplitLineWrite, partWrite } from './lines';
import { parseRouting, routingFields } from './routing-fields';
import { MAX_TRANSACTION_ITEMS, type TransactWriteItem } from './store-calls';
import { activeHoldsIndex, partitionKeyPrefix, timeToLiveAttribute } from './table';

/*
 * Holds (docs/architecture.md, "Holds"; items.ts, "The table's items"): a hold's record, listed in
 * the active holds' index while it is active; its key, item and parser, the index's shards, and the
 * writes of a hold, each with the condition that guards its invariant: placing its record, and
 * ending, extending and confirming it, which write its record together with the records and counts
 * of its units (held-units.ts: the records of a hold's units, one per batch per item they came from,
 * and where their counts are written).
 */

export const holdKey = (holdid: string) => itemKey(`${partitionKeyPrefix.hold}${holdid}`, 'HOLD');

/** An ended hold's record stays readable at least a day, as the contract promises; its time to live is two. */
const ENDED_HOLD_LIFETIME_SECONDS = 2 * 24 * 60 * 60;

/** A hold's record as placing it at `placedAt` writes it: active until its expiresAt, with the routing its request named. */
const holdItem = ({ holdid, lines, expiresAt, routing }: Hold, placedAt: Instant) => ({
  ...holdKey(holdid),
  type: 'Hold',
  holdid,
  lines: lines.map(({ sku, qty, batchref, location, sources, split }) => ({
    sku,
    qty,
    batchref,
    ...(location === undefined ? {} : { location }),
    ...(sources ? { sources: sources.map(sourceFields) } : {}),
    ...(split ? { split } : {}),
  })),
  ...routingFields(routing),
  status: 'active',
  heldUntil: expiresAt,
  [ACTIVE_HOLD_SHARD]: activeHoldShardOf(holdid),
  placedAt: new Date(placedAt).toISOString(),
});

/** The attribute that lists an active hold in the active holds' index; ending the hold removes it. */
export const ACTIVE_HOLD_SHARD = activeHoldsIndex.partitionKey.name;

/** The shards of the active holds' index, each queried by the sweeper. */
export const activeHoldShards = Array.from({ length: activeHoldsIndex.shards }, (_, shard) => `${partitionKeyPrefix.activeHolds}${shard}`);

/** A holdid's shard: the same for every write of the hold, spread evenly over holdids. */
const activeHoldShardOf = (holdid: string): string => activeHoldShards[shardOf(holdid, activeHoldShards.length)] as string;

/** What ending a hold writes on its record besides its status: when, and the record's time to live (timeToLiveAttribute). */
const holdEndedFields = (endedAt: Instant) => ({
  endedAt: new Date(endedAt).toISOString(),
  timeToLive: Math.floor(endedAt / 1000) + ENDED_HOLD_LIFETIME_SECONDS,
});

/** `extendedAt`: when it was last extended; `endedAt`: when it ended, if it has. */
export type StoredHoldItem = { readonly kind: 'hold'; readonly hold: Hold; readonly placedAt: string; readonly extendedAt?: string; readonly endedAt?: string };

/** A hold's record, read back through its key. */
export const parseHoldItem = (item: Record<string, unknown>): StoredHoldItem | undefined => {
  const { holdid, heldUntil, lines, status, orderid, placedAt, extendedAt, endedAt } = item;
  if (isText(holdid) && isAt(item, holdKey(holdid))) {
    const heldLines = parseHeldLines(lines);
    const routed = parseRouting(item);
    const times = isText(placedAt) && [extendedAt, endedAt].every((time) => time === undefined || isText(time));
    if (heldLines && routed && HOLD_STATUSES.includes(status) && isText(heldUntil) && (orderid === undefined || isText(orderid)) && times) {
      const hold: Hold = { holdid, lines: heldLines, status: status as HoldStatus, expiresAt: heldUntil, ...(isText(orderid) ? { orderid } : {}), ...routed };
      return { kind: 'hold', hold, placedAt, ...(isText(extendedAt) ? { extendedAt } : {}), ...(isText(endedAt) ? { endedAt } : {}) };
    }
  }
  return undefined;
};

const HOLD_STATUSES: readonly unknown[] = ['active', 'confirmed', 'released', 'expired'] satisfies HoldStatus[];

const parseHeldLines = (value: unknown): HeldLine[] | undefined => {
  if (!Array.isArray(value)) return undefined;
  const lines: HeldLine[] = [];
  for (const line of value) {
    const { sku, qty, batchref, location, sources, split } = (line ?? {}) as Record<string, unknown>;
    if (typeof sku !== 'string' || typeof qty !== 'number' || typeof batchref !== 'string') return undefined;
    if (location !== undefined && !isText(location)) return undefined;
    if (split !== undefined && split !== 'batches' && split !== 'locations') return undefined;
    const parsed = sources === undefined ? undefined : parseSources(sources);
    if (sources !== undefined && !parsed) return undefined;
    lines.push({ sku, qty, batchref, ...(location === undefined ? {} : { location }), ...(parsed ? { sources: parsed } : {}), ...(split === undefined ? {} : { split }) });
  }
  return lines;
};

/** A hold's record, placed at `now`, on condition that its holdid was never used; a failure carries the record there. */
export const newHoldWrite = (tableName: string, hold: Hold, now: Instant): TransactWriteItem => ({
  Put: { TableName: tableName, Item: holdItem(hold, now), ConditionExpression: ITEM_IS_NEW, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' },
});

/**
 * The hold's record ended at `now` as `status` (for a confirm, to the order `orderid`), on `condition`:
 * its status, when it ended and its time to live (holdEndedFields). Only a confirm writes orderid: the
 * sweeper, which ends holds as expired, may write only the attributes of table.ts's holdEndingAttributes.
 */
const endedHoldWrite = (
  tableName: string,
  hold: Hold,
  { status, orderid }: { readonly status: HoldEnding | 'confirmed'; readonly orderid?: string },
  now: Instant,
  condition: Condition,
): TransactWriteItem => {
  const ended = holdEndedFields(now);
  return {
    Update: {
      TableName: tableName,
      Key: holdKey(hold.holdid),
      // Ended, it leaves the active holds' index.
      UpdateExpression: `SET #status = :status${orderid === undefined ? '' : ', orderid = :orderid'}, endedAt = :endedAt, #ttl = :ttl REMOVE ${ACTIVE_HOLD_SHARD}`,
      ...withValues(condition, { ':status': status, ...(orderid === undefined ? {} : { ':orderid': orderid }), ':endedAt': ended.endedAt, ':ttl': ended.timeToLive }),
      ExpressionAttributeNames: { '#status': 'status', '#ttl': timeToLiveAttribute },
    },
  };
};

/** The hold's end on its record, on condition that it is active and as read, and its time has (not) passed at `now`. */
const holdEndWrite = (tableName: string, hold: Hold, ending: HoldEnding, now: Instant): TransactWriteItem =>
  endedHoldWrite(tableName, hold, { status: ending }, now, {
    // Guards "a hold ends once, one way".
    ConditionExpression: `#status = :active AND heldUntil = :heldUntil AND heldUntil ${ending === 'released' ? '>' : '<='} :now`,
    ExpressionAttributeValues: { ':active': 'active', ':heldUntil': hold.expiresAt, ':now': new Date(now).toISOString() },
  });

/**
 * Holds ended together, each as `ending` says, their units given back on the batches named
 * (`givenBackOn`): on its other batches a request gave them back once the hold expired.
 */
export const holdEndWrites = (
  tableName: string,
  ending: readonly { readonly hold: Hold; readonly ending: HoldEnding; readonly givenBackOn: readonly string[] }[],
  now: Instant,
  places: CountPlaces,
  countedOn?: string,
): HoldWrites => {
  const records = ending.map(({ hold, ending: how }) => holdEndWrite(tableName, hold, how, now));
  const given = ending.map(({ hold, givenBackOn }) => ({ hold, lines: hold.lines.filter(({ batchref }) => givenBackOn.includes(batchref)) }));
  const back = givingBackWrites(tableName, given, places, records.length, countedOn);
  return { items: [...records, ...back.items], pieces: back.pieces };
};

/**
 * A change of the batch `batchref` (`change`: its writes) and the holds it ends, in one transaction:
 * their units on this batch leave its count in the change's own write, and their records go with it.
 */
export const batchChangeHoldEndWrites = (
  tableName: string,
  change: readonly TransactWriteItem[],
  batchref: string,
  ending: readonly HoldToEnd[],
  now: Instant,
  places: CountPlaces,
): HoldWrites => {
  const withThisBatch = ending.map((toEnd) => ({ ...toEnd, givenBackOn: [batchref, ...toEnd.givenBackOn] }));
  const writes = holdEndWrites(tableName, withThisBatch, now, places, batchref);
  return { items: [...change, ...writes.items], pieces: writes.pieces.map((piece) => ({ ...piece, at: piece.at + change.length })) };
};

/** Guards "a hold changes only while it is active, as read": its status, its expiry, and the time has not passed it. */
const holdLastsAsRead = (hold: Hold, now: Instant) => ({
  ConditionExpression: '#status = :active AND heldUntil = :heldUntil AND heldUntil > :now',
  ExpressionAttributeValues: { ':active': 'active', ':heldUntil': hold.expiresAt, ':now': new Date(now).toISOString() },
});

/**
 * The hold's new expiry, on its record (with the time of the extension, for HoldExtended) and on its
 * units' records, which sort by expiry: each deleted, on condition that it is there, and put again
 * under its new key; an expiry that does not move keeps their keys, and only checks they are there
 * (a transaction may touch an item once). No count changes. An expiry moved earlier keeps the bound
 * of each of its batches (held-bounds.ts, "Bounds of held units") on the batch's item, which a batch
 * that holds units has in the stock range: `keep` it, or `lower` it for the batches named in
 * `lowered`. Where each of those writes stands in the items, by batch.
 */
export const holdExtensionWrites = (
  tableName: string,
  hold: Hold,
  expiresAt: string,
  now: Instant,
  lowered: ReadonlySet<string> = new Set(),
): { readonly items: TransactWriteItem[]; readonly boundsAt: ReadonlyMap<number, string> } => {
  const items: TransactWriteItem[] = [
    {
      Update: {
        TableName: tableName,
        Key: holdKey(hold.holdid),
        UpdateExpression: 'SET heldUntil = :newHeldUntil, extendedAt = :extendedAt',
        ...withValues(holdLastsAsRead(hold, now), { ':newHeldUntil': expiresAt, ':extendedAt': new Date(now).toISOString() }),
        ExpressionAttributeNames: { '#status': 'status' },
      },
    },
  ];
  const boundsAt = new Map<number, string>();
  for (const line of hold.lines) {
    if (expiresAt === hold.expiresAt) {
      items.push(...heldUnitsRemovals(tableName, hold, line).map(({ Delete }): TransactWriteItem => ({ ConditionCheck: Delete as NonNullable<TransactWriteItem['ConditionCheck']> })));
      continue;
    }
    items.push(...heldUnitsRemovals(tableName, hold, line), ...heldUnitsPuts(tableName, { ...hold, expiresAt }, line, sourcesOf(line)));
    if (expiresAt > hold.expiresAt) continue;
    // An item with no bound may count holds placed before bounds, of any expiry: it gets the least.
    const bound = heldBoundWrite(lowered.has(line.batchref) ? 'lower' : 'keep', heldBoundOf(expiresAt), BOUND_OF_OLDER_HOLDS);
    boundsAt.set(items.length, line.batchref);
    items.push({
      Update: {
        TableName: tableName,
        Key: batchWithStockKey(line.sku, line.batchref),
        UpdateExpression: `SET ${bound.set}`,
        ...and({ ConditionExpression: `attribute_exists(${PK})`, ExpressionAttributeValues: {} }, bound.condition),
      },
    });
  }
  return { items, boundsAt };
};

/** The hold's record, confirmed to the order, on condition that it lasts at `now` as read. */
const holdConfirmationWrite = (tableName: string, hold: Hold, orderid: string, now: Instant): TransactWriteItem =>
  // Guards "a hold ends once, one way": against its release, its expiry and another confirm.
  endedHoldWrite(tableName, hold, { status: 'confirmed', orderid }, now, holdLastsAsRead(hold, now));

/**
 * A hold confirmed to the order at `now`: its record, and for each held line the order's line, which
 * records the hold's routing (where each line's put stands: a failure there carries a line already
 * stored), a split line with its parts' items, and its units (each part's) become the line's. A batch
 * kept whole, as read (`batches`), that the confirm leaves with no units but its lines' moves out of
 * the stock range in the same transaction.
 */
export const holdConfirmWrites = (
  tableName: string,
  hold: Hold,
  orderid: string,
  now: Instant,
  places: CountPlaces,
  batches?: readonly Batch[],
  leftInRange: ReadonlySet<string> = new Set(),
): HoldWrites & { readonly linePuts: readonly number[]; readonly leftEmpty: readonly Batch[] } => {
  const confirmedAt = new Date(now).toISOString();
  const items: TransactWriteItem[] = [holdConfirmationWrite(tableName, hold, orderid, now)];
  const pieces: PieceCountWrite[] = [];
  const linePuts: number[] = [];
  const emptied: string[] = [];
  const leftEmpty: Batch[] = [];
  for (const line of linesOfHold(hold, orderid)) {
    linePuts.push(items.length);
    const { location, ...allocation } = line;
    if (line.split) items.push(newSplitLineWrite(tableName, allocation, line.split, confirmedAt), ...line.split.parts.map((part) => partWrite(tableName, allocation, part, confirmedAt)));
    // At its batch's location: as read, when it was, or as the hold noted it.
    else items.push(newLineWrite(tableName, allocation, confirmedAt, batches?.find(({ ref }) => ref === line.batchref) ?? { location }));
  }
  for (const line of hold.lines) {
    const { qty, batchref } = line;
    const found = batches?.find(({ ref }) => ref === batchref);
    const left = found && !found.pieces ? withoutHeldUnits(found, qty) : undefined;
    // A batch kept whole that the confirm leaves with no units but its lines' moves out of the stock range.
    const empties = found !== undefined && left !== undefined && !hasStockLeft(left);
    const movesOut = empties && !leftInRange.has(batchref);
    if (empties) emptied.push(batchref);
    if (empties && !movesOut) leftEmpty.push(left);
    const held = heldUnitsConfirmationWrites(tableName, hold, line, places, items.length, { countedOn: movesOut ? batchref : undefined, mayEmpty: empties && !movesOut });
    items.push(...held.items, ...(movesOut ? batchMoveWrites(tableName, found, left) : []));
    pieces.push(...held.pieces);
  }
  // A move is one item more than a count: past 100 items, the last batches emptied stay in the stock
  // range empty, and the caller moves them out after the confirm (BatchRepository.confirmHold).
  const over = items.length - MAX_TRANSACTION_ITEMS;
  if (over > 0 && emptied.length > leftInRange.size) {
    return holdConfirmWrites(tableName, hold, orderid, now, places, batches, new Set(emptied.slice(-Math.min(emptied.length, leftInRange.size + over))));
  }
  return { items, pieces, linePuts, leftEmpty };
};

/** A batch as the confirm of these units leaves it: fewer held. */
const withoutHeldUnits = (batch: Batch, qty: number): Batch => {
  const { held: _, ...rest } = batch;
  const left = (batch.held ?? 0) - qty;
  return { ...rest, ...(left > 0 ? { held: left } : {}) };
};
