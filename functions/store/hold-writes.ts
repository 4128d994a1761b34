import type { HeldLine, HeldSource, Hold, Instant } from '../../domain/holds';
import type { Batch } from '../../domain/model';
import type { HoldEnding } from '../../domain/ports';
import { type Condition, ITEM_IS_NEW, and, withValues } from './conditions';
import {
  ACTIVE_HOLD_SHARD,
  PK,
  batchWithStockKey,
  heldUnitsItem,
  heldUnitsKey,
  holdEndedFields,
  holdItem,
  holdKey,
  pieceKey,
  sourcesOf,
} from './items';
import type { TransactWriteItem } from './store-calls';
import { timeToLiveAttribute } from './table';

/*
 * The writes of holds (docs/architecture.md, "Holds"), each with the condition that guards its
 * invariant: a hold's record; its units' records, one per item the units came from; and the counts
 * of held units on the batch's items. A batch's held units are the sum of its items' counts: its own
 * item's, and its pieces' while it is spread. Units taken from the batch's own item are counted
 * there. Units taken from a piece are counted on the pieces of its spread, on any one of them: a
 * piece's count alone means nothing and may go below zero, so the write that ends a hold picks a
 * piece as a take does (at random, one no write of this process is on) rather than meet every other
 * write on the one its units came from. A gather moves its pieces' counts to the batch item, so a
 * write that finds a spread's piece gone (its condition fails there) is made again with the batch
 * item in its place: spreads are never made again under the same id.
 */

/** Where a write counts held units of a spread batch: on the batch item for the spreads found gathered, else on the piece picked. */
export interface CountPlaces {
  readonly gathered: ReadonlySet<string>;
  /** A piece of the source's spread, on the batch `ref`. */
  pieceFor(ref: string, source: HeldSource): number;
}

/** A hold's record, placed at `now`, on condition that its holdid was never used; a failure carries the record there. */
export const newHoldWrite = (tableName: string, hold: Hold, now: Instant): TransactWriteItem => ({
  Put: { TableName: tableName, Item: holdItem(hold, now), ConditionExpression: ITEM_IS_NEW, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' },
});

/** The records of a held line's units, one per source, each new. */
export const heldUnitsPuts = (tableName: string, hold: Hold, line: HeldLine, sources: readonly HeldSource[]): TransactWriteItem[] =>
  sources.map((source) => ({
    Put: {
      TableName: tableName,
      Item: heldUnitsItem({ units: { holdid: hold.holdid, qty: line.qty, expiresAt: hold.expiresAt }, sku: line.sku, ref: line.batchref, source, sources }),
      ConditionExpression: ITEM_IS_NEW,
    },
  }));

/** Guards "a hold's units go back, or to a line, once": only the write that deletes their record does it. */
const heldUnitsRemovals = (tableName: string, hold: Hold, line: HeldLine, expiresAt = hold.expiresAt): TransactWriteItem[] =>
  sourcesOf(line).map((source) => ({
    Delete: { TableName: tableName, Key: heldUnitsKey(line.sku, line.batchref, { holdid: hold.holdid, expiresAt }, source), ConditionExpression: `attribute_exists(${PK})` },
  }));

/** A held line's units leaving their count: `back` of them to `available`, the rest to a line. */
interface CountChange {
  readonly line: HeldLine;
  readonly source: HeldSource;
  readonly back: number;
}

/** Where a count change is written, and what the items there must be. */
interface CountTarget {
  readonly key: Record<string, string>;
  readonly spreadId?: string;
  readonly changes: CountChange[];
}

/** A piece's write in a transaction: at which place, of which spread (a failure there says the spread was gathered), and which piece. */
export interface PieceCountWrite {
  readonly at: number;
  readonly spreadId: string;
  readonly ref: string;
  readonly piece: number;
}

/**
 * The counts of held units given up by these changes, one write per item they are counted on: a
 * transaction may write an item once. On a piece, on condition that its spread lasts; on the batch
 * item, on condition that it counts them (no piece of their spread is left, and it counts as many)
 * and, when units go to a line rather than back, that the batch keeps units no line holds or stays
 * spread ("the stock range holds exactly the batches with stock left"; a confirm that empties it
 * moves it instead).
 */
const countWrites = (tableName: string, changes: readonly CountChange[], places: CountPlaces, offset: number) => {
  const targets = new Map<string, CountTarget & { piece?: number }>();
  // One piece a spread: the counts of one transaction go to one write of each spread they are on.
  const pieceOfSpread = new Map<string, number>();
  for (const change of changes) {
    const { line, source } = change;
    const onPiece = source.piece !== undefined && source.spreadId !== undefined && !places.gathered.has(source.spreadId);
    const spread = `${line.batchref}\u0000${source.spreadId}`;
    const piece = onPiece ? (pieceOfSpread.get(spread) ?? places.pieceFor(line.batchref, source)) : undefined;
    if (piece !== undefined) pieceOfSpread.set(spread, piece);
    const key = piece !== undefined ? pieceKey(line.sku, line.batchref, piece) : batchWithStockKey(line.sku, line.batchref);
    const id = JSON.stringify(key);
    const target: CountTarget & { piece?: number } = targets.get(id) ?? { key, ...(piece !== undefined ? { spreadId: source.spreadId as string, piece } : {}), changes: [] };
    target.changes.push(change);
    targets.set(id, target);
  }
  const items: TransactWriteItem[] = [];
  const pieces: PieceCountWrite[] = [];
  for (const { key, spreadId, piece, changes: some } of targets.values()) {
    const [{ line }] = some as [CountChange];
    const held = some.reduce((sum, { source }) => sum + source.qty, 0);
    const back = some.reduce((sum, { back: units }) => sum + units, 0);
    const conditions: Condition[] = [];
    if (spreadId !== undefined && piece !== undefined) {
      pieces.push({ at: offset + items.length, spreadId, ref: line.batchref, piece });
      conditions.push({ ConditionExpression: 'spreadId = :spreadId', ExpressionAttributeValues: { ':spreadId': spreadId } });
    } else {
      conditions.push({ ConditionExpression: 'heldUnits >= :held', ExpressionAttributeValues: {} });
      const spreads = [...new Set(some.flatMap(({ source }) => (source.spreadId === undefined ? [] : [source.spreadId])))];
      spreads.forEach((gone, index) =>
        conditions.push({ ConditionExpression: `(attribute_not_exists(spreadId) OR spreadId <> :gone${index})`, ExpressionAttributeValues: { [`:gone${index}`]: gone } }),
      );
      if (back === 0) {
        conditions.push({ ConditionExpression: '(available > :none OR heldUnits > :held OR attribute_exists(pieces))', ExpressionAttributeValues: { ':none': 0 } });
      }
    }
    // A piece given units back counts them for good, so that a settled read sees it happen (spread-batches.ts).
    const givenBack = back > 0 && piece !== undefined ? ', givenBack = if_not_exists(givenBack, :noneHeld) + :back' : '';
    items.push({
      Update: {
        TableName: tableName,
        Key: key,
        UpdateExpression: 'SET heldUnits = if_not_exists(heldUnits, :noneHeld) - :held' + (back > 0 ? ', available = available + :back' : '') + givenBack,
        ...withValues(and(...conditions), { ':held': held, ':noneHeld': 0, ...(back > 0 ? { ':back': back } : {}) }),
      },
    });
  }
  return { items, pieces };
};

/** Writes and where their piece writes stand, for a caller to tell a gathered spread from a lost race. */
export interface HoldWrites {
  readonly items: TransactWriteItem[];
  readonly pieces: readonly PieceCountWrite[];
}

/**
 * The units of these holds' lines given back: each line's records deleted and its units back to
 * `available` where they are counted. `countedOn`, when given, is a batch whose count the caller's
 * own write of that batch changes (a change of its qty), so only its records are written here.
 */
export const givingBackWrites = (
  tableName: string,
  given: readonly { readonly hold: Hold; readonly lines: readonly HeldLine[] }[],
  places: CountPlaces,
  offset = 0,
  countedOn?: string,
): HoldWrites => {
  const removals = given.flatMap(({ hold, lines }) => lines.flatMap((line) => heldUnitsRemovals(tableName, hold, line)));
  const changes = given.flatMap(({ lines }) =>
    lines.filter(({ batchref }) => batchref !== countedOn).flatMap((line) => sourcesOf(line).map((source) => ({ line, source, back: source.qty }))),
  );
  const counts = countWrites(tableName, changes, places, offset + removals.length);
  return { items: [...removals, ...counts.items], pieces: counts.pieces };
};

/** The hold's end on its record, on condition that it is active and as read, and its time has (not) passed at `now`. */
export const holdEndWrite = (tableName: string, hold: Hold, ending: HoldEnding, now: Instant): TransactWriteItem => {
  const ended = holdEndedFields(now);
  return {
    Update: {
      TableName: tableName,
      Key: holdKey(hold.holdid),
      // Ended, it leaves the active holds' index.
      UpdateExpression: `SET #status = :ending, endedAt = :endedAt, #ttl = :ttl REMOVE ${ACTIVE_HOLD_SHARD}`,
      // Guards "a hold ends once, one way".
      ConditionExpression: `#status = :active AND heldUntil = :heldUntil AND heldUntil ${ending === 'released' ? '>' : '<='} :now`,
      ExpressionAttributeNames: { '#status': 'status', '#ttl': timeToLiveAttribute },
      ExpressionAttributeValues: {
        ':ending': ending,
        ':endedAt': ended.endedAt,
        ':ttl': ended.timeToLive,
        ':active': 'active',
        ':heldUntil': hold.expiresAt,
        ':now': new Date(now).toISOString(),
      },
    },
  };
};

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

/** Guards "a hold changes only while it is active, as read": its status, its expiry, and the time has not passed it. */
const holdLastsAsRead = (hold: Hold, now: Instant) => ({
  ConditionExpression: '#status = :active AND heldUntil = :heldUntil AND heldUntil > :now',
  ExpressionAttributeValues: { ':active': 'active', ':heldUntil': hold.expiresAt, ':now': new Date(now).toISOString() },
});

/**
 * The hold's new expiry, on its record (with the time of the extension, for HoldExtended) and on its
 * units' records, which sort by expiry: each deleted, on condition that it is there, and put again
 * under its new key; an expiry that does not move keeps their keys, and only checks they are there
 * (a transaction may touch an item once). No count changes.
 */
export const holdExtensionWrites = (tableName: string, hold: Hold, expiresAt: string, now: Instant): TransactWriteItem[] => [
  {
    Update: {
      TableName: tableName,
      Key: holdKey(hold.holdid),
      UpdateExpression: 'SET heldUntil = :newHeldUntil, extendedAt = :extendedAt',
      ...withValues(holdLastsAsRead(hold, now), { ':newHeldUntil': expiresAt, ':extendedAt': new Date(now).toISOString() }),
      ExpressionAttributeNames: { '#status': 'status' },
    },
  },
  ...hold.lines.flatMap((line) =>
    expiresAt === hold.expiresAt
      ? heldUnitsRemovals(tableName, hold, line).map(({ Delete }): TransactWriteItem => ({ ConditionCheck: Delete as NonNullable<TransactWriteItem['ConditionCheck']> }))
      : [...heldUnitsRemovals(tableName, hold, line), ...heldUnitsPuts(tableName, { ...hold, expiresAt }, line, sourcesOf(line))],
  ),
];

/** The hold's record, confirmed to the order, on condition that it lasts at `now` as read. */
export const holdConfirmationWrite = (tableName: string, hold: Hold, orderid: string, now: Instant): TransactWriteItem => {
  const ended = holdEndedFields(now);
  return {
    Update: {
      TableName: tableName,
      Key: holdKey(hold.holdid),
      UpdateExpression: `SET #status = :confirmed, orderid = :orderid, endedAt = :endedAt, #ttl = :ttl REMOVE ${ACTIVE_HOLD_SHARD}`,
      // Guards "a hold ends once, one way": against its release, its expiry and another confirm.
      ...withValues(holdLastsAsRead(hold, now), { ':confirmed': 'confirmed', ':orderid': orderid, ':endedAt': ended.endedAt, ':ttl': ended.timeToLive }),
      ExpressionAttributeNames: { '#status': 'status', '#ttl': timeToLiveAttribute },
    },
  };
};

/**
 * A held line's units become its line's: its records deleted, its counts lowered, `available`
 * unchanged. A batch kept whole that this leaves with no units but its lines' leaves the stock
 * range: the caller moves it (`countedOn`: its move writes the count), or the count's condition fails.
 */
export const heldUnitsConfirmationWrites = (tableName: string, hold: Hold, line: HeldLine, places: CountPlaces, offset: number, countedOn?: string): HoldWrites => {
  const removals = heldUnitsRemovals(tableName, hold, line);
  if (countedOn === line.batchref) return { items: removals, pieces: [] };
  const counts = countWrites(tableName, sourcesOf(line).map((source) => ({ line, source, back: 0 })), places, offset + removals.length);
  return { items: [...removals, ...counts.items], pieces: counts.pieces };
};

/** Whether a cancellation failed at a piece's count: its spread was gathered, and the write goes to the batch item. */
export const gatheredSpreadsIn = (reasons: readonly { Code?: string }[], pieces: readonly PieceCountWrite[]): string[] =>
  pieces.filter(({ at }) => reasons[at]?.Code === 'ConditionalCheckFailed').map(({ spreadId }) => spreadId);

/** A batch as the confirm of these units leaves it: fewer held. */
export const withoutHeldUnits = (batch: Batch, qty: number): Batch => {
  const { held: _, ...rest } = batch;
  const left = (batch.held ?? 0) - qty;
  return { ...rest, ...(left > 0 ? { held: left } : {}) };
};
