import { type HeldSource, earlierOf } from '../../domain/holds';
import { type Batch, type BatchPiece, hasStockLeft, piecesAvailable } from '../../domain/model';
import { availableWrites, batchChangeWrites, batchFieldsAre, batchItem, batchWithStockKey, etaAsRead, etaChangedAsRead, heldUnitsAre } from './batches';
import { heldBoundBelow, heldBoundKept, heldTakesAre, parseHeldBound } from './held-bounds';
import { type Condition, ITEM_IS_NEW, and, withValues } from './conditions';
import { isAt, isNumber, isText, itemKey } from './fields';
import type { TransactWriteItem } from './store-calls';
import { partitionKeyPrefix } from './table';
import type { World } from './world';

/*
 * The pieces of a hot SKU's spread batch (docs/capacity.md, "A hot SKU: its batch spread over
 * pieces"; items.ts, "The table's items"): their keys, items and parser, and the writes of a spread
 * batch, each with the condition that guards its invariant: spreading a batch's units over pieces,
 * taking from a piece or from the batch's own units, changing a spread batch in place, and gathering
 * it back. And writesOf, the one place that tells a spread batch's writes from those of a batch kept
 * whole (batches.ts): a request's take, give-back or change is made by the one it picks, so that
 * neither kind's writes branch on the other. spread-batches.ts reads, spreads and gathers with these.
 */

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

export type StoredPieceItem = { readonly kind: 'piece'; readonly piece: StoredPiece };

/** A piece read back through its key. */
export const parsePieceItem = (item: Record<string, unknown>): StoredPieceItem | undefined => {
  const { ref, sku, piece, available, heldUnits, spreadId, takenAt } = item;
  if (!isText(ref) || !isText(sku)) return undefined;
  // A piece's count of held units may be below zero: only the sum over the batch's items means
  // anything (held-units.ts); a piece spread before holds were counted on pieces has none.
  const piecesHeld = heldUnits === undefined || isNumber(heldUnits);
  const bound = parseHeldBound(item);
  if (isNumber(piece) && isNumber(available) && piecesHeld && bound && isText(spreadId) && (takenAt === undefined || isText(takenAt)) && isAt(item, pieceKey(sku, ref, piece))) {
    const givenBack = isNumber(item.givenBack) ? item.givenBack : 0;
    return { kind: 'piece', piece: { sku, ref, piece, available, held: isNumber(heldUnits) ? heldUnits : 0, ...bound, givenBack, spreadId, ...(isText(takenAt) ? { takenAt } : {}) } };
  }
  return undefined;
};

/**
 * A spread batch's own units (its item's `available`) changed by `delta`. A spread batch stays in the
 * stock range whatever it has left, so the write is in place, on condition that the batch is still
 * spread (a gathered one may belong out of the range, which the read did not see) and, for a take,
 * that its own units cover it: "stock never goes below zero", however the pieces stand. A take for a
 * hold expiring at `heldUntil` counts the units as held on the item, and keeps its bound (heldBoundKept).
 */
const spreadItemWrite = (tableName: string, batch: Batch, delta: number, heldUntil?: string): TransactWriteItem => {
  const own: Condition = { ConditionExpression: 'attribute_exists(pieces) AND available >= :bound', ExpressionAttributeValues: { ':bound': Math.max(0, -delta) } };
  const bound = heldUntil === undefined ? undefined : heldBoundKept(batch, batch.heldFrom, heldUntil);
  // A take from the batch's own units names the eta it was chosen by, as a take from a batch kept whole does.
  const conditions = [own, ...(delta < 0 ? [etaAsRead(batch)] : []), ...(bound ? [bound.condition] : [])];
  return {
    Update: {
      TableName: tableName,
      Key: batchWithStockKey(batch.sku, batch.ref),
      UpdateExpression: 'SET available = available + :delta' + (bound ? `, heldUnits = if_not_exists(heldUnits, :noneHeld) - :delta, ${bound.set}` : ''),
      ...withValues(and(...conditions), { ':delta': delta, ...(bound ? { ':noneHeld': 0 } : {}) }),
    },
  };
};

/**
 * `qty` taken from one piece of a spread batch, on condition that the piece has it: "stock never goes
 * below zero", piece by piece. A piece gathered meanwhile has no `available`, and the condition fails.
 * A take for a hold expiring at `heldUntil` counts the units as held on the piece, and keeps its bound
 * (heldBoundKept).
 */
const pieceTakeWrite = (tableName: string, batch: Batch, piece: number, qty: number, takenAt: string, heldUntil?: string): TransactWriteItem => {
  const read = batch.pieces?.find(({ piece: number }) => number === piece);
  const bound = heldUntil === undefined ? undefined : heldBoundKept(batch, read?.heldFrom, heldUntil);
  // A hold's units name their spread, where they are counted: a piece of a later spread at the same key is not it.
  const hasIt: Condition = { ConditionExpression: 'available >= :qty' + (bound ? ' AND spreadId = :spreadId' : ''), ExpressionAttributeValues: {} };
  return {
    Update: {
      TableName: tableName,
      Key: pieceKey(batch.sku, batch.ref, piece),
      UpdateExpression: 'SET available = available - :qty, takenAt = :takenAt' + (bound ? `, heldUnits = if_not_exists(heldUnits, :noneHeld) + :qty, ${bound.set}` : ''),
      ...withValues(bound ? and(hasIt, bound.condition) : hasIt, { ':qty': qty, ':takenAt': takenAt, ...(bound ? { ':spreadId': batch.spreadId, ':noneHeld': 0 } : {}) }),
    },
  };
};

/** What each of `pieces` new pieces gets of `moved` units: as even a share as whole units allow. */
export const pieceShares = (moved: number, pieces: number): BatchPiece[] =>
  Array.from({ length: pieces }, (_, piece) => ({ piece, available: Math.floor(moved / pieces) + (piece < moved % pieces ? 1 : 0), held: 0 }));

/**
 * Spreads `moved` of a batch's own units over `pieces` new pieces, as found whole with at least that
 * many. The batch item's condition guards "a batch is spread once at a time" (not spread already)
 * and "stock never goes below zero" (it still has the units moved); each piece is new. The units
 * move, so `qty` = own + pieces' + lines' + holds' holds through it; held units stay counted where
 * they are.
 */
export const spreadWrites = (tableName: string, batch: Batch, moved: number, pieces: number, spreadId: string, spreadAt: string): TransactWriteItem[] => [
  {
    Update: {
      TableName: tableName,
      Key: batchWithStockKey(batch.sku, batch.ref),
      UpdateExpression: 'SET available = available - :moved, pieces = :pieces, spreadId = :spreadId, spreadAt = :spreadAt',
      ConditionExpression: 'attribute_not_exists(pieces) AND available >= :moved',
      ExpressionAttributeValues: { ':moved': moved, ':pieces': pieces, ':spreadId': spreadId, ':spreadAt': spreadAt },
    },
  },
  ...pieceShares(moved, pieces).map(
    ({ piece, available }): TransactWriteItem => ({
      Put: { TableName: tableName, Item: pieceItem({ sku: batch.sku, ref: batch.ref, piece, available, spreadId }), ConditionExpression: ITEM_IS_NEW },
    }),
  ),
];

/**
 * A spread batch gathered back: each piece removed on condition that it holds what was read (its
 * units, its held units, and its count of holds' takes, so its bound too), and the sums given to the
 * batch item, which stops being spread: from then on the item counts the held units that holds took
 * from its pieces, and its bound is the lowest of theirs and its own (held-bounds.ts, "Bounds of held
 * units"), one take more counted. The batch item's condition guards "pieces go back once" (still
 * spread into as many pieces) and, when the batch is left with no stock, "the stock range holds
 * exactly the batches with stock left": the item, exactly as read, then moves out of it.
 */
export const gatherWrites = (tableName: string, batch: Batch): TransactWriteItem[] => {
  const pieces = batch.pieces ?? [];
  const sum = piecesAvailable(batch);
  const heldSum = pieces.reduce((total, { held }) => total + held, 0);
  const pieceRemovals = pieces.map(
    ({ piece, available, held, heldTakes }): TransactWriteItem => ({
      Delete: {
        TableName: tableName,
        Key: pieceKey(batch.sku, batch.ref, piece),
        ...and(
          { ConditionExpression: 'available = :available', ExpressionAttributeValues: { ':available': available } },
          heldUnitsAre(held),
          heldTakesAre(heldTakes),
        ),
      },
    }),
  );
  const piecesBound = pieces.map(({ heldFrom }) => heldFrom).reduce(earlierOf, undefined);
  const { pieces: _, ...whole } = batch;
  const own = { ...whole, available: batch.available - sum, held: (batch.held ?? 0) - heldSum };
  const heldFrom = earlierOf(batch.heldFrom, piecesBound);
  const gathered = {
    ...own,
    available: own.available + sum,
    held: batch.held ?? 0,
    ...(heldFrom === undefined ? {} : { heldFrom, heldTakes: (batch.heldTakes ?? 0) + 1 }),
  };
  const stillSpread = { ConditionExpression: 'pieces = :pieces', ExpressionAttributeValues: { ':pieces': pieces.length } };
  if (!hasStockLeft(gathered)) {
    return [
      ...pieceRemovals,
      { Delete: { TableName: tableName, Key: batchWithStockKey(batch.sku, batch.ref), ...and(batchFieldsAre(own), stillSpread) } },
      { Put: { TableName: tableName, Item: batchItem(gathered), ConditionExpression: ITEM_IS_NEW } },
    ];
  }
  // With no pieces' units to add, what keeps it in the range is its own units or held units, as read.
  const keepsStock =
    sum > 0 || heldSum > 0 ? [] : (own.held ?? 0) > 0 ? [heldUnitsAre(own.held)] : [{ ConditionExpression: 'available > :none', ExpressionAttributeValues: { ':none': 0 } }];
  // The pieces' bound goes to the item as a hold's take expiring then would keep it.
  const bound = piecesBound === undefined ? undefined : heldBoundBelow(batch.heldFrom, piecesBound);
  return [
    ...pieceRemovals,
    {
      Update: {
        TableName: tableName,
        Key: batchWithStockKey(batch.sku, batch.ref),
        UpdateExpression:
          'SET available = available + :sum, heldUnits = if_not_exists(heldUnits, :noneHeld) + :heldSum' + (bound ? `, ${bound.set}` : '') + ' REMOVE pieces, spreadId, spreadAt',
        ...withValues(and(stillSpread, ...keepsStock, ...(bound ? [bound.condition] : [])), { ':sum': sum, ':heldSum': heldSum, ':noneHeld': 0 }),
      },
    },
  ];
};

/**
 * A spread batch's new qty and eta, in place, its own units taking the change of `available`: on
 * condition that it is still spread and they cover a fall ("stock never goes below zero"); a fall
 * they do not cover is made on the batch gathered first (the repository's to see to).
 */
const spreadBatchChangeWrite = (tableName: string, batch: Batch, changed: Batch): TransactWriteItem => {
  const delta = changed.available - batch.available;
  const { ConditionExpression, ExpressionAttributeValues } = etaChangedAsRead(batch, changed, {
    ConditionExpression: 'qty = :qty AND attribute_exists(pieces) AND available >= :fall',
    ExpressionAttributeValues: { ':qty': batch.qty, ':fall': Math.max(0, -delta) },
  });
  return {
    Update: {
      TableName: tableName,
      Key: batchWithStockKey(batch.sku, batch.ref),
      UpdateExpression: 'SET qty = :newQty, available = available + :delta' + (changed.eta === null ? ' REMOVE eta' : ', eta = :newEta'),
      ConditionExpression,
      ExpressionAttributeValues: {
        ...ExpressionAttributeValues,
        ':newQty': changed.qty,
        ':delta': delta,
        ...(changed.eta === null ? {} : { ':newEta': changed.eta }),
      },
    },
  };
};

/** By the world's chance (world.ts): a simulated run picks the same pieces for its seed. */
const pickAtRandom = <Item>(items: readonly Item[], world: Pick<World, 'random'>): Item => items[Math.floor(world.random() * items.length)] as Item;

/** A piece of a batch, as a take's writes name it. */
export const takeKey = (ref: string, piece: number) => `${ref}#${piece}`;

/**
 * Where a take of `qty` from a spread batch goes: [piece, qty] pairs, piece undefined for the batch's
 * own units. One piece that holds it whole, at random, and one not busy while there is one.
 */
export const piecesToTake = (batch: Batch, qty: number, isBusy: (key: string) => boolean, world: Pick<World, 'random'>): [number | undefined, number][] => {
  const pieces = batch.pieces ?? [];
  const fitting = pieces.filter(({ available }) => available >= qty);
  if (fitting.length > 0) {
    const free = fitting.filter(({ piece }) => !isBusy(takeKey(batch.ref, piece)));
    return [[pickAtRandom(free.length > 0 ? free : fitting, world).piece, qty]];
  }
  const own = batch.available - piecesAvailable(batch);
  if (own >= qty) return [[undefined, qty]];
  // No one item holds it: no false "out of stock" when the batch as a whole does.
  const takes: [number | undefined, number][] = own > 0 ? [[undefined, own]] : [];
  let left = qty - Math.max(own, 0);
  for (const { piece, available } of [...pieces].sort((a, b) => b.available - a.available)) {
    if (left <= 0 || available <= 0) break;
    takes.push([piece, Math.min(available, left)]);
    left -= Math.min(available, left);
  }
  return takes;
};

/** A piece's write in a take: where it stands among the take's items, which piece (takeKey), of which batch. */
export interface PieceTake {
  readonly at: number;
  readonly key: string;
  readonly ref: string;
}

/**
 * A take's writes: its items, where its units come from (what a hold's records name), where each
 * piece's write stands, and where the write of a batch kept whole stands (`wholeAt`): a conflict
 * there may make the batch spread, and a failed condition there returns the item, which says
 * whether the batch could still take the line (allocation-saves.ts).
 */
export interface TakeWrites {
  readonly items: TransactWriteItem[];
  readonly sources: HeldSource[];
  readonly pieces: PieceTake[];
  readonly wholeAt?: number;
}

/** What a request writes on a batch as it read it: a take of its units, a give-back, a change of its qty and eta. */
export interface BatchWrites {
  /**
   * `qty` taken at `takenAt`, for a line or, with `heldUntil`, for a hold expiring then (counted as
   * held where taken); a piece that `isBusy` says another write is on is left while another can take
   * the line, and the piece is picked by the world's chance.
   */
  take(tableName: string, batch: Batch, qty: number, takenAt: string, isBusy: (key: string) => boolean, world: Pick<World, 'random'>, heldUntil?: string): TakeWrites;
  /** `qty` given back by a line cancelled. */
  giveBack(tableName: string, batch: Batch, qty: number): TransactWriteItem[];
  /** Its new qty and eta (and the held units of the holds the change ends). */
  change(tableName: string, batch: Batch, changed: Batch): TransactWriteItem[];
}

/** The write, with the item as it stood returned in the cancellation when its condition fails. */
const returningItemOnFailure = (item: TransactWriteItem): TransactWriteItem => {
  if (item.Update) return { Update: { ...item.Update, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } };
  if (item.Delete) return { Delete: { ...item.Delete, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } };
  return item;
};

/** A batch kept whole: its item's `available` (batches.ts), all of its units from it. */
const wholeBatch: BatchWrites = {
  take: (tableName, batch, qty, _takenAt, _isBusy, _world, heldUntil) => ({
    items: availableWrites(tableName, batch, -qty, heldUntil).map(returningItemOnFailure),
    sources: [{ qty }],
    pieces: [],
    wholeAt: 0,
  }),
  giveBack: (tableName, batch, qty) => availableWrites(tableName, batch, qty),
  change: batchChangeWrites,
};

/**
 * A spread batch: a take from one of its pieces picked at random among those that hold the line
 * whole (piecesToTake), else from its own units, else from as many pieces as it takes; a give-back
 * and a change to its own units. The batch as read must hold a take: a take of less than its lines
 * would oversell.
 */
const spreadBatch: BatchWrites = {
  take: (tableName, batch, qty, takenAt, isBusy, world, heldUntil) => {
    const items: TransactWriteItem[] = [];
    const pieces: PieceTake[] = [];
    const sources: HeldSource[] = [];
    const placed = piecesToTake(batch, qty, isBusy, world);
    if (placed.reduce((sum, [, pieceQty]) => sum + pieceQty, 0) !== qty) {
      throw new Error(`A take of ${qty} from batch ${batch.ref}, which holds ${batch.available} as read`);
    }
    for (const [piece, pieceQty] of placed) {
      if (piece === undefined) {
        items.push(spreadItemWrite(tableName, batch, -pieceQty, heldUntil));
        sources.push({ qty: pieceQty });
      } else {
        pieces.push({ at: items.length, key: takeKey(batch.ref, piece), ref: batch.ref });
        items.push(pieceTakeWrite(tableName, batch, piece, pieceQty, takenAt, heldUntil));
      }
    }
    // The units taken from pieces are one source, however many pieces they came from: any piece of the
    // spread counts them (held-units.ts), so ending them is one record and one count, not one each.
    const [firstPiece] = placed.flatMap(([piece]) => (piece === undefined ? [] : [piece]));
    const fromPieces = placed.reduce((sum, [piece, pieceQty]) => (piece === undefined ? sum : sum + pieceQty), 0);
    if (firstPiece !== undefined) sources.push({ qty: fromPieces, piece: firstPiece, spreadId: batch.spreadId, of: batch.pieces?.length });
    return { items, sources, pieces };
  },
  giveBack: (tableName, batch, qty) => [spreadItemWrite(tableName, batch, qty)],
  change: (tableName, batch, changed) => [spreadBatchChangeWrite(tableName, batch, changed)],
};

/** The one place that tells a spread batch's writes from those of a batch kept whole: chosen once, by the batch as read. */
export const writesOf = (batch: Batch): BatchWrites => (batch.pieces ? spreadBatch : wholeBatch);
