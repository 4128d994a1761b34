import { createHash } from 'node:crypto';
import type { HeldLine, HeldSource, HeldUnits, Hold } from '../../domain/holds';
import { batchWithStockKey, skuPartition } from './batches';
import { type Condition, ITEM_IS_NEW, and, withValues } from './conditions';
import { PK, isAt, isNumber, isText, itemKey } from './fields';
import { PIECE_PARTITIONS, pieceKey, piecePartitions, takeKey } from './pieces';
import { HOT_BATCH_ATTEMPTS_FACTOR, type KnownPieces } from './spread-batches';
import { type Cancellation, type ConflictRetryPolicy, type StoreCalls, type TransactWriteItem } from './store-calls';
import type { World } from './world';

/*
 * Held units (docs/architecture.md, "Holds"; items.ts, "The table's items"): the records of a hold's
 * units, one per hold per batch per item the units came from, and the counts of held units on the
 * batch's items; their keys, items and parser, and their writes, each with the condition that guards
 * its invariant (the hold's own record is holds.ts's, which builds a hold's writes from these). A
 * batch's held units are the sum of its items' counts: its own item's, and its pieces' while it is
 * spread. Units taken from the batch's own item are counted there. Units taken from a piece are
 * counted on the pieces of its spread, on any one of them: a piece's count alone means nothing and
 * may go below zero, so the write that ends a hold picks a piece as a take does (at random, one no
 * write of this process is on) rather than meet every other write on the one its units came from. A
 * gather moves its pieces' counts to the batch item, so a write that finds a spread's piece gone (its
 * condition fails there) is made again with the batch item in its place: spreads are never made
 * again under the same id.
 */

/** The sort keys of a batch's held units: its ref behind its length, so that no ref's keys begin another's. */
const HELD_RANGE = 'HELD#';
export const heldOnBatchRange = (ref: string) => `${HELD_RANGE}${ref.length}:${ref}#`;

/** The item a hold's units came from: the batch's own units (SKU partition), or a piece (its partition). */
const heldUnitsPartition = (sku: string, { piece }: HeldSource) => (piece === undefined ? skuPartition(sku) : (piecePartitions(sku)[piece % PIECE_PARTITIONS] as string));

/** The partitions a batch's held units may be in: its SKU's and its SKU's piece partitions. */
export const heldUnitsPartitions = (sku: string) => [skuPartition(sku), ...piecePartitions(sku)];

/**
 * One hold's units on one batch, from one item: under the batch, by expiry. The holdid goes in as its
 * digest, so that a sort key of the longest ref and holdid stays within DynamoDB's 1,024 bytes.
 */
export const heldUnitsKey = (sku: string, ref: string, { holdid, expiresAt }: Pick<HeldUnits, 'holdid' | 'expiresAt'>, source: HeldSource) =>
  itemKey(heldUnitsPartition(sku, source), `${heldOnBatchRange(ref)}${expiresAt}#${createHash('sha256').update(holdid).digest('base64url')}#${source.piece ?? 'own'}`);

/**
 * A record of held units as stored: the hold's units on the batch (`units`, all its sources'), and
 * this record's share (`source`). Each record names every source of the line (`sources`), so that
 * one record found tells every record of the hold on the batch, which are given back together.
 */
export interface StoredHeldUnits {
  readonly units: HeldUnits;
  readonly sku: string;
  readonly ref: string;
  readonly source: HeldSource;
  readonly sources: readonly HeldSource[];
}

/** A source as a record stores it: in the records of held units, and in the lines of a hold's record. */
export const sourceFields = ({ qty, piece, spreadId, of }: HeldSource) => (piece === undefined ? { qty } : { qty, piece, spreadId, ...(of === undefined ? {} : { of }) });

const heldUnitsItem = ({ units: { holdid, qty, expiresAt }, sku, ref, source, sources }: StoredHeldUnits) => ({
  ...heldUnitsKey(sku, ref, { holdid, expiresAt }, source),
  type: 'HeldUnits',
  holdid,
  sku,
  ref,
  qty,
  heldUntil: expiresAt,
  sourceQty: source.qty,
  ...(source.piece === undefined ? {} : { piece: source.piece, spreadId: source.spreadId }),
  sources: sources.map(sourceFields),
});

/** Where a held line's units are: as placed, or, for a hold written before its lines named them, the batch's own units. */
export const sourcesOf = (line: HeldLine): readonly HeldSource[] => line.sources ?? [{ qty: line.qty }];

export type StoredHeldUnitsItem = { readonly kind: 'held-units'; readonly held: StoredHeldUnits };

/** A record of a hold's units on a batch, read back through its key. */
export const parseHeldUnitsItem = (item: Record<string, unknown>): StoredHeldUnitsItem | undefined => {
  const { ref, sku, qty, holdid, heldUntil, piece, spreadId, sourceQty } = item;
  if (isText(ref) && isText(sku)) {
    const sources = parseSources(item.sources);
    if (isText(holdid) && isNumber(qty) && isNumber(sourceQty) && isText(heldUntil) && sources && (piece === undefined || (isNumber(piece) && isText(spreadId)))) {
      const source: HeldSource = isNumber(piece) && isText(spreadId) ? { qty: sourceQty, piece, spreadId } : { qty: sourceQty };
      const held: StoredHeldUnits = { units: { holdid, qty, expiresAt: heldUntil }, sku, ref, source, sources };
      if (isAt(item, heldUnitsKey(sku, ref, held.units, source))) return { kind: 'held-units', held };
    }
  }
  return undefined;
};

/** Sources as a record stores them (sourceFields), or undefined when one is not a source. */
export const parseSources = (value: unknown): HeldSource[] | undefined => {
  if (!Array.isArray(value)) return undefined;
  const sources: HeldSource[] = [];
  for (const source of value) {
    const { qty, piece, spreadId, of } = (source ?? {}) as Record<string, unknown>;
    if (typeof qty !== 'number') return undefined;
    if (piece === undefined && spreadId === undefined) sources.push({ qty });
    else if (typeof piece === 'number' && typeof spreadId === 'string' && (of === undefined || typeof of === 'number')) {
      sources.push({ qty, piece, spreadId, ...(typeof of === 'number' ? { of } : {}) });
    } else return undefined;
  }
  return sources;
};

/** Where a write counts held units of a spread batch: on the batch item for the spreads found gathered, else on the piece picked. */
export interface CountPlaces {
  readonly gathered: ReadonlySet<string>;
  /** A piece of the source's spread, on the batch `ref`. */
  pieceFor(ref: string, source: HeldSource): number;
}

/**
 * Places for sizing a write of holds before it is sent: each spread's counts on a piece of their
 * own, so that no two spreads' counts fold into one write. As sent (sendHoldWrites), a spread's
 * counts go to one piece, or to the batch item (two spreads picking one piece, a gathered spread),
 * so what is sent is never more items than this sizes, whichever pieces are picked.
 */
export const sizingPlaces = (): CountPlaces => {
  let next = 0;
  return { gathered: new Set(), pieceFor: () => next++ };
};

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
export const heldUnitsRemovals = (tableName: string, hold: Hold, line: HeldLine, expiresAt = hold.expiresAt): TransactWriteItem[] =>
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
const countWrites = (tableName: string, changes: readonly CountChange[], places: CountPlaces, offset: number, mayEmpty = false) => {
  const targets = new Map<string, CountTarget & { piece?: number }>();
  // One piece a spread: the counts of one transaction go to one write of each spread they are on.
  const pieceOfSpread = new Map<string, number>();
  for (const change of changes) {
    const { line, source } = change;
    const onPiece = source.piece !== undefined && source.spreadId !== undefined && !places.gathered.has(source.spreadId);
    const spread = `${line.batchref}\u0000${source.spreadId}`;
    const picked = onPiece ? (pieceOfSpread.get(spread) ?? places.pieceFor(line.batchref, source)) : undefined;
    if (picked !== undefined) pieceOfSpread.set(spread, picked);
    // Two spreads of the batch (one gathered since) may pick one piece's key, whose write is conditioned
    // on one spread: the later one's units go to the batch item, which counts a gathered spread's; were
    // they the current spread's, the earlier write's spread is the gathered one, and both fail at once.
    const other = picked === undefined ? undefined : targets.get(JSON.stringify(pieceKey(line.sku, line.batchref, picked)))?.spreadId;
    const piece = other !== undefined && other !== source.spreadId ? undefined : picked;
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
      if (back === 0 && !mayEmpty) {
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

/** Expired holds' units on a batch given back, as the records of them found there name the holds. */
export const expiredUnitsGivenBackWrites = (tableName: string, records: readonly StoredHeldUnits[], places: CountPlaces): HoldWrites => {
  // Each hold as its records on the batch name it: every source of its line there, given back together.
  const given = records.map(({ units: { holdid, qty, expiresAt }, sku, ref, sources }) => ({
    hold: { holdid, expiresAt, status: 'active' as const, lines: [{ sku, qty, batchref: ref, sources }] },
    lines: [{ sku, qty, batchref: ref, sources }],
  }));
  return givingBackWrites(tableName, given, places);
};

/**
 * A held line's units become its line's: its records deleted, its counts lowered, `available`
 * unchanged. A batch kept whole that this leaves with no units but its lines' leaves the stock
 * range: the caller moves it (`countedOn`: its move writes the count), or the count's condition fails.
 */
export const heldUnitsConfirmationWrites = (
  tableName: string,
  hold: Hold,
  line: HeldLine,
  places: CountPlaces,
  offset: number,
  { countedOn, mayEmpty = false }: { readonly countedOn?: string; readonly mayEmpty?: boolean } = {},
): HoldWrites => {
  const removals = heldUnitsRemovals(tableName, hold, line);
  if (countedOn === line.batchref) return { items: removals, pieces: [] };
  const counts = countWrites(tableName, sourcesOf(line).map((source) => ({ line, source, back: 0 })), places, offset + removals.length, mayEmpty);
  return { items: [...removals, ...counts.items], pieces: counts.pieces };
};

/** Whether a cancellation failed at a piece's count: its spread was gathered, and the write goes to the batch item. */
const gatheredSpreadsIn = (reasons: readonly { Code?: string }[], pieces: readonly PieceCountWrite[]): string[] =>
  pieces.filter(({ at }) => reasons[at]?.Code === 'ConditionalCheckFailed').map(({ spreadId }) => spreadId);

/**
 * A write of holds' units (`build`, given where to count them on spread batches), sent as a take
 * from a spread batch is: the pieces it writes are busy for this process's takes while it is in
 * flight, and a conflict on one goes at once to another piece of its spread, any of which counts
 * its units as well: picked by the world's chance, so that a simulated run picks alike for its seed.
 * Made again with the batch item in place of a piece whose condition failed: its spread was
 * gathered, and the item counts its held units from then on. The writes last sent, and the reasons
 * of a cancellation by anything else, when there is one.
 */
export const sendHoldWrites = async <Writes extends HoldWrites>(
  calls: StoreCalls,
  known: KnownPieces,
  conflictRetry: ConflictRetryPolicy,
  world: Pick<World, 'random'>,
  build: (places: CountPlaces) => Writes,
): Promise<{ writes: Writes; cancellation?: Cancellation }> => {
  const gathered = new Set<string>();
  const met = new Set<string>();
  const places: CountPlaces = {
    gathered,
    pieceFor: (ref, { piece, of }) => {
      const pieces = Array.from({ length: of ?? 0 }, (_, index) => index);
      const free = pieces.filter((index) => !met.has(takeKey(ref, index)) && !known.isBeingTaken(takeKey(ref, index)));
      const fresh = pieces.filter((index) => !met.has(takeKey(ref, index)));
      const among = free.length > 0 ? free : fresh;
      return among.length > 0 ? (among[Math.floor(world.random() * among.length)] as number) : (piece as number);
    },
  };
  for (;;) {
    let writes = build(places);
    let written = known.takingFrom(writes.pieces.map(({ ref, piece }) => takeKey(ref, piece)));
    const next = (reasons: Cancellation) => {
      for (const { at, ref, piece } of writes.pieces) if (reasons[at]?.Code === 'TransactionConflict') met.add(takeKey(ref, piece));
      const onPiecesOnly = reasons.every((reason, index) => reason.Code !== 'TransactionConflict' || writes.pieces.some(({ at }) => at === index));
      written();
      writes = build(places);
      written = known.takingFrom(writes.pieces.map(({ ref, piece }) => takeKey(ref, piece)));
      return { items: writes.items, atOnce: onPiecesOnly && !reasons.some(({ Code }) => Code === 'ThrottlingError') };
    };
    const patiently = writes.pieces.length > 0 ? { next, maxAttempts: conflictRetry.maxAttempts * HOT_BATCH_ATTEMPTS_FACTOR } : undefined;
    let cancellation: Cancellation | undefined;
    try {
      cancellation = await calls.transactWrite(writes.items, patiently);
    } finally {
      written();
    }
    if (!cancellation) return { writes };
    const found = gatheredSpreadsIn(cancellation, writes.pieces).filter((spreadId) => !gathered.has(spreadId));
    if (found.length === 0) return { writes, cancellation };
    for (const spreadId of found) gathered.add(spreadId);
  }
};
