import { createHash } from 'node:crypto';
import type { HeldLine, HeldSource, HeldUnits, Hold, HoldStatus, Instant } from '../../domain/holds';
import { type Allocation, type Batch, type BatchPiece, type OrderLine, hasStockLeft } from '../../domain/model';
import { activeHoldsIndex, linesByBatchIndex, partitionKeyPrefix, tableKeySchema, timeToLiveAttribute } from './table';

/*
 * The DynamoDB adapter's knowledge of the table's keys, the one place that has it: what each item
 * looks like, for the repository (batch-repository.ts) that writes and reads them, and for the
 * stream consumer and the tools that read items without the repository, so that those carry no
 * DynamoDB client.
 *
 * The table's items (one table, keys `pk`/`sk` as tableKeySchema names them):
 *   known SKU        pk SKU#<sku>       sk STOCK         sku        (written with the SKU's first batch)
 *   batch with stock pk SKU#<sku>       sk STOCK#<ref>   ref, sku, qty, available, eta, heldUnits
 *   exhausted batch  pk SKU#<sku>       sk EMPTY#<ref>   ref, sku, qty, available, eta
 *   spread batch     pk SKU#<sku>       sk STOCK#<ref>   as a batch with stock, and pieces, spreadId, spreadAt
 *   piece of a batch pk PIECES#<k>#<sku> sk PIECE#<ref>#<n>  ref, sku, piece n, available, heldUnits, givenBack, spreadId, takenAt
 *                                                         (k = n mod PIECE_PARTITIONS)
 *   held units       pk SKU#<sku>, or the partition of the piece they came from
 *                                       sk HELD#<len>:<ref>#<heldUntil>#<digest of holdid>#<source>
 *                                                         holdid, ref, sku, qty, sourceQty, heldUntil, piece, spreadId, sources
 *   batch reference  pk BATCHREF#<ref>  sk BATCHREF      ref, sku, qty, eta, changedAt
 *                                                         (makes a ref unique across SKUs)
 *   allocated line   pk ORDER#<orderid> sk LINE#<sku>    orderid, sku, qty, batchref,
 *                                                         lineBatch LINES<shard>#<batchref>, allocatedAt, movedAt
 *   deallocation     pk ORDER#<orderid> sk DEALLOCATED#<sku>#<noticeId>
 *                                                         orderid, sku, qty, batchref, reason, deallocatedAt
 *   out of stock     pk ORDER#<orderid> sk OUTOFSTOCK#<sku>#<noticeId>
 *                                                         orderid, sku, qty, refusedAt
 *   hold             pk HOLD#<holdid>   sk HOLD         holdid, lines [{sku, qty, batchref}], status,
 *                                                         heldUntil, placedAt, extendedAt, endedAt, expiresAt
 * A hold's units on a batch are an item of their own ("held units"), one for each item they were
 * taken from (the batch's own units, or a piece), beside that item, sorted by expiry under the batch;
 * the item they came from counts them (`heldUnits`), and its `available` counts neither those units
 * nor its lines'. So placing a hold writes its record, its units' records and the items it takes
 * from, and no write of a hold reads or changes another hold: nothing grows with the holds on a
 * batch (docs/architecture.md, "Holds"). A batch is in the stock range while it has units no line
 * holds (available or held: hasStockLeft), so that a batch whose every unit is held is still read
 * by allocations, which give back the units of expired holds when they need them (lazy expiry,
 * domain/holds.ts). Giving a hold's units back is deleting their record, on condition that it
 * exists: only one write can do it.
 * A hold's record says what it holds and until when (`heldUntil`: `expiresAt` is the table's time
 * to live, which deletes an ended hold's record two days after it ended). Its status is the one last
 * written; whether an active hold has expired is a matter of `heldUntil` and the time (statusAt).
 * A batch's `available` is below zero only while a change that lowered its qty still has lines to
 * move off it: it then sits out of the stock range, where no allocation reads it, until the lines
 * are moved (domain/services.ts, changeBatch). Its lines are found through the sparse index
 * linesByBatch (functions/store/table.ts) on `lineBatch`, newest `allocatedAt` first: an index, not
 * a copy of each line under the batch, because that copy would be one more item in every
 * allocation's transaction (2 WCU), where the index costs 1 WCU and the allocation keeps 2 items.
 * `eta` is absent for a batch in stock (a condition cannot compare with NULL everywhere; absence it can).
 *
 * A hot SKU's batch may be spread (docs/capacity.md, "A hot SKU"): part of its `available` moved
 * into `pieces` pieces, each an item of its own in one of PIECE_PARTITIONS partitions past the SKU's
 * own, so that allocations take from different items (no TransactionConflict between them) and
 * different partitions (past one partition's write ceiling). Then the batch's available units are
 * its item's `available` and its pieces', and `qty` = that + its lines' + its holds'. The batch item
 * names its spread (`spreadId`) and the number of its pieces, which are written and removed with
 * it in one transaction, so a read of the item and then of the pieces tells a whole spread from one
 * that a write came between. A spread batch stays in the stock range until it is gathered (its
 * pieces' units given back to its item), however few units are left, so that allocations read it.
 *
 * Events (functions/events/stream-events.ts) come from the table's stream, so only what committed
 * is announced. An item's own fields must say what happened, hence three choices here:
 * - the batch reference holds the batch's qty and eta, and a change of the batch updates it in the
 *   same transaction: the batch item itself moves between keys whenever its stock crosses zero,
 *   which a stream shows as a removal and an insertion that look the same for an allocation and a
 *   change; the reference's own insertion and modification are BatchAdded and BatchChanged;
 * - a removed line's record cannot tell a cancellation from a change of its batch, so each removal
 *   writes a deallocation notice with its reason in the same transaction;
 * - a refusal for lack of stock changes nothing, so it writes an out-of-stock notice.
 * A hold's record needs no notice: its insertion is its placing, and each modification of an active
 * record says by its new status or `heldUntil` what it was; each write records its own time with it
 * (`placedAt`, `extendedAt`, `endedAt`).
 * Notices sit in the order's partition, next to its lines (a stream orders the records of one
 * partition key's items), and carry `expiresAt`: DynamoDB's time to live deletes them after a day,
 * long after the stream (24 h retention) has carried them.
 *
 * Allocating reads one key range of the SKU's partition, `STOCK` and `STOCK#...`: the known-SKU item
 * and the batches that still have stock. The allocation that takes a batch's last unit moves it to
 * `EMPTY#<ref>` in the same transaction, so a SKU's exhausted batches, years of them, are never read
 * again by an allocation, and its cost stays flat (docs/capacity.md). The known-SKU item tells
 * "Invalid sku" from "Out of stock" when every batch is exhausted, in the same read. The domain sorts
 * the batches by preference, so the sort key need not encode it. An order's lines share a partition,
 * ready for reading an order's allocations. `type` names each item's kind for whoever reads the
 * table without this code (the console, a Scan, a stream record).
 */

export const PK = tableKeySchema.partitionKey.name;
export const SK = tableKeySchema.sortKey.name;

/** The sort keys of a SKU's partition that an allocation reads: the known-SKU item and batches with stock. */
export const STOCK_RANGE = 'STOCK';

const itemKey = (partition: string, sort: string) => ({ [PK]: partition, [SK]: sort });
export const skuPartition = (sku: string) => `${partitionKeyPrefix.sku}${sku}`;
const knownSkuKey = (sku: string) => itemKey(skuPartition(sku), STOCK_RANGE);
export const batchWithStockKey = (sku: string, ref: string) => itemKey(skuPartition(sku), `${STOCK_RANGE}#${ref}`);
export const exhaustedBatchKey = (sku: string, ref: string) => itemKey(skuPartition(sku), `EMPTY#${ref}`);
/** Where a batch lives: in the SKU's stock range while it has stock or is spread, out of it once it has none. */
export const batchKey = (batch: Batch) =>
  batch.pieces !== undefined || hasStockLeft(batch) ? batchWithStockKey(batch.sku, batch.ref) : exhaustedBatchKey(batch.sku, batch.ref);

/**
 * The partition keys a SKU's pieces are spread over. Four: at 2 WCU a transactional write of a
 * piece, they take 2,000 allocations/s on AWS when DynamoDB places them on four partitions, 500
 * when on one (docs/capacity.md, "How far it goes"), and a spread SKU's read of its pieces stays at
 * four small Queries.
 */
export const PIECE_PARTITIONS = 4;
/** The sort keys of a piece partition that hold pieces, and of one batch's pieces. */
export const PIECES_RANGE = 'PIECE#';
export const piecesOfBatchRange = (ref: string) => `${PIECES_RANGE}${ref}#`;
/** The partition key holds the partition's number before the SKU, so that no SKU's name can make it another SKU's. */
export const piecePartitions = (sku: string) => Array.from({ length: PIECE_PARTITIONS }, (_, k) => `${partitionKeyPrefix.piece}${k}#${sku}`);
export const pieceKey = (sku: string, ref: string, piece: number) =>
  itemKey(piecePartitions(sku)[piece % PIECE_PARTITIONS] as string, `${piecesOfBatchRange(ref)}${piece}`);

/** A spread batch's mark on its item: which spread it is, of how many pieces, since when. */
export interface Spread {
  readonly spreadId: string;
  readonly pieces: number;
  readonly spreadAt: string;
}

/**
 * A piece as stored: its share of the batch's units, the units holds took from it (`held`, stored as
 * `heldUnits`), the spread it belongs to, and when an allocation last took from it.
 */
export interface StoredPiece extends BatchPiece {
  readonly sku: string;
  readonly ref: string;
  readonly spreadId: string;
  /** Every unit holds ended have given back to it, which only grows: a settled read compares it (spread-batches.ts). */
  readonly givenBack: number;
  readonly takenAt?: string;
}

/** A new piece: no hold has taken from it yet. */
export const pieceItem = ({ sku, ref, piece, available, spreadId }: Omit<StoredPiece, 'held' | 'givenBack'>) => ({
  ...pieceKey(sku, ref, piece),
  type: 'BatchPiece',
  sku,
  ref,
  piece,
  available,
  heldUnits: 0,
  spreadId,
});

/** The sort keys of a batch's held units: its ref behind its length, so that no ref's keys begin another's. */
export const HELD_RANGE = 'HELD#';
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

const sourceFields = ({ qty, piece, spreadId, of }: HeldSource) => (piece === undefined ? { qty } : { qty, piece, spreadId, ...(of === undefined ? {} : { of }) });

export const heldUnitsItem = ({ units: { holdid, qty, expiresAt }, sku, ref, source, sources }: StoredHeldUnits) => ({
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

export const batchReferenceKey = (ref: string) => itemKey(`${partitionKeyPrefix.batchReference}${ref}`, 'BATCHREF');
export const orderPartition = (orderid: string) => `${partitionKeyPrefix.order}${orderid}`;
/** The sort keys of an order's partition that hold its lines (the rest are notices). */
export const LINES_RANGE = 'LINE#';
export const lineKey = (orderid: string, sku: string) => itemKey(orderPartition(orderid), `${LINES_RANGE}${sku}`);
export const deallocationKey = (orderid: string, sku: string, noticeId: string) => itemKey(orderPartition(orderid), `DEALLOCATED#${sku}#${noticeId}`);
const outOfStockKey = (orderid: string, sku: string, noticeId: string) => itemKey(orderPartition(orderid), `OUTOFSTOCK#${sku}#${noticeId}`);
export const holdKey = (holdid: string) => itemKey(`${partitionKeyPrefix.hold}${holdid}`, 'HOLD');
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

const shardOf = (text: string, shards: number): number => {
  let hash = 0;
  for (const character of text) hash = (hash * 31 + (character.codePointAt(0) ?? 0)) >>> 0;
  return hash % shards;
};

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

/** An item of the table as this adapter and the tools that read the whole table see it. */
export type StoredItem =
  /**
   * `inStockRange`: where it is stored, which should be where it has stock (the invariant check
   * compares them). A spread batch's `available` is its item's own, without its pieces'.
   */
  | { readonly kind: 'batch'; readonly batch: Batch; readonly inStockRange: boolean; readonly spread?: Spread }
  | { readonly kind: 'piece'; readonly piece: StoredPiece }
  | { readonly kind: 'held-units'; readonly held: StoredHeldUnits }
  | { readonly kind: 'known-sku'; readonly sku: string }
  /** `qty`, `eta` and `changedAt` are absent from references written before the batch's events existed. */
  | { readonly kind: 'batch-reference'; readonly ref: string; readonly sku: string; readonly description?: BatchDescription }
  /** `movedAt`: when a change of its batch last moved it. */
  | { readonly kind: 'line'; readonly allocation: Allocation; readonly allocatedAt: string; readonly movedAt?: string }
  | {
      readonly kind: 'deallocation';
      readonly allocation: Allocation;
      readonly reason: DeallocationReason;
      readonly deallocatedAt: string;
    }
  | { readonly kind: 'out-of-stock'; readonly line: OrderLine; readonly refusedAt: string }
  /** `extendedAt`: when it was last extended; `endedAt`: when it ended, if it has. */
  | { readonly kind: 'hold'; readonly hold: Hold; readonly placedAt: string; readonly extendedAt?: string; readonly endedAt?: string }
  /** Its key is not the one the adapter would write for its attributes, or an attribute is missing. */
  | { readonly kind: 'unrecognized'; readonly pk: string; readonly sk: string };

/** Why a line left its batch: its order cancelled it, or a change of the batch took it off. */
export type DeallocationReason = 'cancelled' | 'reallocated';
const DEALLOCATION_REASONS: readonly unknown[] = ['cancelled', 'reallocated'] satisfies DeallocationReason[];

/** What a batch reference says of its batch, as of the batch's last change: `changedAt`. */
export interface BatchDescription {
  readonly qty: number;
  readonly eta: string | null;
  readonly changedAt: string;
}

/**
 * Reads an item back through the same key functions that wrote it, so the key layout stays known
 * to this module alone: an item is a batch only if its key is one of the two keys of a batch of its
 * sku and ref.
 */
export const parseStoredItem = (item: Record<string, unknown>): StoredItem => {
  const { [PK]: pk, [SK]: sk, [LINE_BATCH]: lineBatch, [ALLOCATED_AT]: allocatedAt, ref, sku, qty, available, eta, orderid, batchref } = item;
  const { movedAt, changedAt, reason, deallocatedAt, refusedAt, noticeId, heldUnits, holdid, lines, status, heldUntil } = item;
  const { placedAt, extendedAt, endedAt, pieces, spreadId, spreadAt, piece, takenAt } = item;
  const hasKey = (key: ReturnType<typeof itemKey>) => key[PK] === pk && key[SK] === sk;
  const isText = (value: unknown): value is string => typeof value === 'string';
  const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

  if (isText(ref) && isText(sku)) {
    // A `held` attribute is a map of holds written before held units were records of their own: an
    // empty one (what giving back its last entry left) holds nothing, any other is not read.
    const counted = heldUnits === undefined || (isNumber(heldUnits) && heldUnits >= 0);
    const noOldHolds = item.held === undefined || (typeof item.held === 'object' && item.held !== null && Object.keys(item.held).length === 0);
    if (isNumber(qty) && isNumber(available) && (eta === undefined || isText(eta)) && counted && noOldHolds) {
      const batch: Batch = { ref, sku, qty, available, eta: eta ?? null, ...(isNumber(heldUnits) && heldUnits > 0 ? { held: heldUnits } : {}) };
      const inStockRange = hasKey(batchWithStockKey(sku, ref));
      const spread = isNumber(pieces) && isText(spreadId) && isText(spreadAt) ? { spread: { pieces, spreadId, spreadAt } } : {};
      const wholeOrSpread = pieces === undefined || 'spread' in spread;
      if (wholeOrSpread && (inStockRange || hasKey(exhaustedBatchKey(sku, ref)))) return { kind: 'batch', batch, inStockRange, ...spread };
    }
    // A piece's count of held units may be below zero: only the sum over the batch's items means
    // anything (hold-writes.ts); a piece spread before holds were counted on pieces has none.
    const piecesHeld = heldUnits === undefined || isNumber(heldUnits);
    if (isNumber(piece) && isNumber(available) && piecesHeld && isText(spreadId) && (takenAt === undefined || isText(takenAt)) && hasKey(pieceKey(sku, ref, piece))) {
      const givenBack = isNumber(item.givenBack) ? item.givenBack : 0;
      return { kind: 'piece', piece: { sku, ref, piece, available, held: isNumber(heldUnits) ? heldUnits : 0, givenBack, spreadId, ...(isText(takenAt) ? { takenAt } : {}) } };
    }
    const sources = parseSources(item.sources);
    const { sourceQty } = item;
    if (isText(holdid) && isNumber(qty) && isNumber(sourceQty) && isText(heldUntil) && sources && (piece === undefined || (isNumber(piece) && isText(spreadId)))) {
      const source: HeldSource = isNumber(piece) && isText(spreadId) ? { qty: sourceQty, piece, spreadId } : { qty: sourceQty };
      const held: StoredHeldUnits = { units: { holdid, qty, expiresAt: heldUntil }, sku, ref, source, sources };
      if (hasKey(heldUnitsKey(sku, ref, held.units, source))) return { kind: 'held-units', held };
    }
    if (hasKey(batchReferenceKey(ref))) {
      const described = isNumber(qty) && (eta === undefined || isText(eta)) && isText(changedAt);
      return { kind: 'batch-reference', ref, sku, ...(described ? { description: { qty, eta: eta ?? null, changedAt } } : {}) };
    }
  }
  if (isText(sku) && hasKey(knownSkuKey(sku))) return { kind: 'known-sku', sku };
  if (isText(holdid) && hasKey(holdKey(holdid))) {
    const heldLines = parseHeldLines(lines);
    const times = isText(placedAt) && [extendedAt, endedAt].every((time) => time === undefined || isText(time));
    if (heldLines && HOLD_STATUSES.includes(status) && isText(heldUntil) && (orderid === undefined || isText(orderid)) && times) {
      const hold: Hold = { holdid, lines: heldLines, status: status as HoldStatus, expiresAt: heldUntil, ...(isText(orderid) ? { orderid } : {}) };
      return { kind: 'hold', hold, placedAt, ...(isText(extendedAt) ? { extendedAt } : {}), ...(isText(endedAt) ? { endedAt } : {}) };
    }
  }
  if (isText(orderid) && isText(sku) && isNumber(qty)) {
    const line: OrderLine = { orderid, sku, qty };
    const listed = isText(batchref) && isText(lineBatch) && listsLinesOf(lineBatch, batchref);
    if (isText(batchref) && listed && isText(allocatedAt) && (movedAt === undefined || isText(movedAt))) {
      if (hasKey(lineKey(orderid, sku))) return { kind: 'line', allocation: { ...line, batchref }, allocatedAt, ...(movedAt ? { movedAt } : {}) };
    }
    if (isText(noticeId) && isText(batchref) && isText(deallocatedAt) && DEALLOCATION_REASONS.includes(reason)) {
      if (hasKey(deallocationKey(orderid, sku, noticeId))) {
        return { kind: 'deallocation', allocation: { ...line, batchref }, reason: reason as DeallocationReason, deallocatedAt };
      }
    }
    if (isText(noticeId) && isText(refusedAt) && hasKey(outOfStockKey(orderid, sku, noticeId))) return { kind: 'out-of-stock', line, refusedAt };
  }
  return { kind: 'unrecognized', pk: String(pk), sk: String(sk) };
};

/** The line stored at a line's key. */
export const storedLine = (item: Record<string, unknown>): Allocation => {
  const stored = parseStoredItem(item);
  if (stored.kind !== 'line') throw new Error(`Item at the key of a line is not a line: ${JSON.stringify(stored)}`);
  return stored.allocation;
};

const HOLD_STATUSES: readonly unknown[] = ['active', 'confirmed', 'released', 'expired'] satisfies HoldStatus[];

const parseHeldLines = (value: unknown): HeldLine[] | undefined => {
  if (!Array.isArray(value)) return undefined;
  const lines: HeldLine[] = [];
  for (const line of value) {
    const { sku, qty, batchref, sources } = (line ?? {}) as Record<string, unknown>;
    if (typeof sku !== 'string' || typeof qty !== 'number' || typeof batchref !== 'string') return undefined;
    const parsed = sources === undefined ? undefined : parseSources(sources);
    if (sources !== undefined && !parsed) return undefined;
    lines.push({ sku, qty, batchref, ...(parsed ? { sources: parsed } : {}) });
  }
  return lines;
};

const parseSources = (value: unknown): HeldSource[] | undefined => {
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

/** Where a held line's units are: as placed, or, for a hold written before its lines named them, the batch's own units. */
export const sourcesOf = (line: HeldLine): readonly HeldSource[] => line.sources ?? [{ qty: line.qty }];

/** An ended hold's record stays readable at least a day, as the contract promises; its time to live is two. */
const ENDED_HOLD_LIFETIME_SECONDS = 2 * 24 * 60 * 60;

/** A hold's record as placing it at `placedAt` writes it: active until its expiresAt. */
export const holdItem = ({ holdid, lines, expiresAt }: Hold, placedAt: Instant) => ({
  ...holdKey(holdid),
  type: 'Hold',
  holdid,
  lines: lines.map(({ sku, qty, batchref, sources }) => ({ sku, qty, batchref, ...(sources ? { sources: sources.map(sourceFields) } : {}) })),
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
export const holdEndedFields = (endedAt: Instant) => ({
  endedAt: new Date(endedAt).toISOString(),
  timeToLive: Math.floor(endedAt / 1000) + ENDED_HOLD_LIFETIME_SECONDS,
});

/** A batch as the table holds it. */
export const batchItem = (batch: Batch) => {
  const { ref, sku, qty, available, eta, held = 0 } = batch;
  return { ...batchKey(batch), type: 'Batch', ref, sku, qty, available, ...(eta === null ? {} : { eta }), ...(held > 0 ? { heldUnits: held } : {}) };
};

export const knownSkuItem = (sku: string) => ({ ...knownSkuKey(sku), type: 'Sku', sku });

export const now = () => new Date().toISOString();

/** A batch reference's copy of its batch's qty and eta, for the batch's events. */
export const batchDescription = ({ qty, eta }: Batch) => ({ qty, ...(eta === null ? {} : { eta }), changedAt: now() });

/** Notices live a day: the stream, which carries their insertion, keeps records for 24 hours. */
const NOTICE_LIFETIME_SECONDS = 24 * 60 * 60;
export const noticeFields = () => {
  const noticeId = crypto.randomUUID();
  return { noticeId, [timeToLiveAttribute]: Math.floor(Date.now() / 1000) + NOTICE_LIFETIME_SECONDS };
};

export const outOfStockItem = ({ orderid, sku, qty }: OrderLine) => {
  const notice = noticeFields();
  return { ...outOfStockKey(orderid, sku, notice.noticeId), type: 'OutOfStock', orderid, sku, qty, refusedAt: now(), ...notice };
};

/** What the Query of a SKU's stock range reads, for a stub store to answer as the table would. */
export const stockRangeItems = (sku: string, batches: readonly Batch[]) => [knownSkuItem(sku), ...batches.map(batchItem)];
