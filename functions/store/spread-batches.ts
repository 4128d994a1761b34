import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { StoreUnavailable } from '../../domain/errors';
import { type Instant, batchAsStored } from '../../domain/holds';
import { type Batch, hasStockLeft, piecesAvailable } from '../../domain/model';
import { gatherWrites, spreadWrites } from './spread-writes';
import { PIECES_RANGE, PK, SK, type Spread, type StoredItem, type StoredPiece, parseStoredItem, pieceKey, piecePartitions, piecesOfBatchRange } from './items';
import type { Cancellation, ConflictRetryPolicy, DocumentSender, StoreCalls } from './store-calls';

/*
 * A hot SKU's batches spread over pieces (docs/capacity.md, "A hot SKU: its batch spread over
 * pieces"): reading a spread batch with its pieces, spreading a batch that allocations keep meeting
 * on, choosing the pieces a take goes to, and gathering a batch back. The repository
 * (batch-repository.ts) calls these; the items and their conditions are in items.ts and
 * spread-writes.ts.
 */

/** How long a spread batch goes without a take before a read of its SKU gathers it back: the sale is over. */
export const GATHER_AFTER_MS = 2 * 60_000;
/**
 * The pieces one spread makes, a multiple of the piece partitions. Takes pick a piece at random, so
 * the pieces must far outnumber the takes in flight for few of them to meet; at 100 a second each
 * (AWS, 10 ms transactions), 64 pieces carry 6,400 allocations/s. More would cost each spread and
 * gather more (a transaction of one item per piece, and the batch item: 100 at most).
 */
export const PIECES_PER_SPREAD = 64;
/**
 * Cancellations by a conflict on a batch kept whole, within one allocation, that make the batch
 * spread: two in a row, the second after a backoff, say the item is rarely free, not that two
 * requests met once.
 */
export const CONFLICTS_BEFORE_SPREAD = 2;
/**
 * A take from a spread batch meets other pieces at each attempt, and a spread waits for a moment
 * between the takes of a busy batch item: each may make this many times the policy's attempts.
 */
export const HOT_BATCH_ATTEMPTS_FACTOR = 3;
/** The pieces a take reads of a spread batch: enough to find one that holds a line, and few to read. */
const PIECES_READ_FOR_A_TAKE = 8;

/** No take from these pieces of a spread for GATHER_AFTER_MS, nor the spread itself: the sale is over. */
const hasCooled = (spread: Spread, pieces: readonly StoredPiece[] = [], now: Instant): boolean => {
  const lastTakeAt = pieces.reduce((latest, { takenAt }) => (takenAt !== undefined && takenAt > latest ? takenAt : latest), spread.spreadAt);
  return Date.parse(lastTakeAt) <= now - GATHER_AFTER_MS;
};

/**
 * What a spread moves of a batch's own units: all but a share the size of a piece's and at least 8,
 * which stays on the batch item, so that the takes that commit between the read and the spread
 * leave its condition met. Those units go to lines that no piece can take whole, and to the last.
 */
const unitsToSpread = (own: number) => own - Math.max(8, Math.floor(own / (PIECES_PER_SPREAD + 1)));

/** A batch item as read, with these of its pieces: their units counted in its `available`. */
const withTheirPieces = (batch: Batch, pieces: readonly StoredPiece[]): Batch => ({
  ...batch,
  available: batch.available + pieces.reduce((sum, { available }) => sum + available, 0),
  pieces: pieces.map(({ piece, available }) => ({ piece, available })).sort((a, b) => a.piece - b.piece),
});

/** The pieces among these items that belong to the batch's spread (a piece of another spread is a gather and a spread ago). */
const piecesOfSpread = (items: readonly StoredItem[], batch: Batch, spread: Spread): StoredPiece[] =>
  items.flatMap((stored) => (stored.kind === 'piece' && stored.piece.ref === batch.ref && stored.piece.spreadId === spread.spreadId ? [stored.piece] : []));

/** A batch kept whole with units enough to make two pieces or more; a smaller one sells out before a spread would pay. */
export const canSpread = (batch: Batch) => !batch.pieces && unitsToSpread(batchAsStored(batch).available) >= 2;

const pickAtRandom = <Item>(items: readonly Item[]): Item => items[Math.floor(Math.random() * items.length)] as Item;

/** A batch item as read, with its spread if it has one. */
export interface FoundBatch {
  readonly batch: Batch;
  readonly spread?: Spread;
}

/** A batch as read with its pieces, and its spread and pieces as stored, for a spread one. */
interface ReadBatch {
  readonly batch: Batch;
  readonly spread?: Spread;
  readonly pieces?: readonly StoredPiece[];
}

/** Where a take of `qty` from a spread batch goes: [piece, qty] pairs, piece undefined for the batch's own units. */
export const piecesToTake = (batch: Batch, qty: number, busyPieces: ReadonlySet<string>): [number | undefined, number][] => {
  const pieces = batch.pieces ?? [];
  const fitting = pieces.filter(({ available }) => available >= qty);
  if (fitting.length > 0) {
    const free = fitting.filter(({ piece }) => !busyPieces.has(`${batch.ref}#${piece}`));
    return [[pickAtRandom(free.length > 0 ? free : fitting).piece, qty]];
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

/** Every item of a partition, or of its sort keys that begin with a prefix (the repository's paged Query). */
type PartitionQuery = (partition: string, sortKeyPrefix?: string) => Promise<Record<string, unknown>[]>;

export class SpreadBatches {
  constructor(
    private readonly calls: StoreCalls,
    private readonly client: DocumentSender,
    private readonly tableName: string,
    private readonly conflictRetry: ConflictRetryPolicy,
    private readonly currentTime: () => Instant,
    private readonly queryPartition: PartitionQuery,
  ) {}

  /**
   * For a take of `qty`: the batches found, spread ones with only a few of their pieces, read from a
   * place in one piece partition picked at random (one small Query a batch instead of one per
   * partition), when one of those pieces can take `qty` whole. Undefined when one cannot, or a gather
   * came between the reads (the pieces read are not of the spread its item names): the caller reads
   * every piece.
   */
  async withSomePieces(sku: string, found: readonly FoundBatch[], qty: number): Promise<Batch[] | undefined> {
    const batches: Batch[] = [];
    for (const { batch, spread } of found) {
      if (!spread) {
        batches.push(batch);
        continue;
      }
      const from = pieceKey(sku, batch.ref, Math.floor(Math.random() * spread.pieces));
      const { Items } = await this.calls.call((options) =>
        this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: `${PK} = :partition AND begins_with(${SK}, :prefix)`,
            ExpressionAttributeValues: { ':partition': from[PK], ':prefix': piecesOfBatchRange(batch.ref) },
            ExclusiveStartKey: from,
            Limit: PIECES_READ_FOR_A_TAKE,
            ConsistentRead: true,
          }),
          options,
        ),
      );
      const some = piecesOfSpread((Items ?? []).map(parseStoredItem), batch, spread);
      if (!some.some(({ available }) => available >= qty) || hasCooled(spread, some, this.currentTime())) return undefined;
      batches.push(withTheirPieces(batch, some));
    }
    return batches;
  }

  /**
   * The batches found, spread ones with their pieces (read after their items, in one Query per piece
   * partition): undefined when a spread or a gather came between the two reads, which the spread's
   * id and its number of pieces tell, and the caller reads again. Pieces only lose units between the
   * reads (to takes, which are real), so the sum never shows units a batch does not have.
   */
  async withPieces(sku: string, found: readonly FoundBatch[], ref?: string): Promise<ReadBatch[] | undefined> {
    if (found.every(({ spread }) => !spread)) return found.map(({ batch }) => ({ batch }));
    const partitions = await Promise.all(piecePartitions(sku).map((partition) => this.queryPartition(partition, ref === undefined ? PIECES_RANGE : piecesOfBatchRange(ref))));
    const pieces = partitions.flat().map(parseStoredItem);
    const read: ReadBatch[] = [];
    for (const { batch, spread } of found) {
      if (!spread) {
        read.push({ batch });
        continue;
      }
      const own = piecesOfSpread(pieces, batch, spread);
      if (own.length !== spread.pieces) return undefined;
      read.push({ batch: withTheirPieces(batch, own), spread, pieces: own });
    }
    return read;
  }

  /**
   * The batches, with the spread ones that have cooled (no take for GATHER_AFTER_MS) or have nothing
   * left in their pieces gathered back, when that write wins; one that loses stays as read.
   */
  async gatheredWhenCooled(batches: readonly ReadBatch[]): Promise<Batch[]> {
    const gathered = await Promise.all(
      batches.map(async ({ batch, spread, pieces }) => {
        if (!batch.pieces || !spread || (piecesAvailable(batch) > 0 && !hasCooled(spread, pieces, this.currentTime()))) return [batch];
        if (!(await this.gather(batch))) return [batch];
        const { pieces: _, ...whole } = batch;
        // Gathered with nothing left, it has left the stock range.
        return hasStockLeft(whole) ? [whole] : [];
      }),
    );
    return gathered.flat();
  }

  /**
   * Gathers a spread batch back whole; false when it was no longer as read, or the store would not
   * take the write now. Its pieces are busy while allocations take from them, so it retries a
   * conflict as patiently as a spread.
   */
  async gather(batch: Batch): Promise<boolean> {
    const items = gatherWrites(this.tableName, batch);
    const patiently = { next: () => ({ items, atOnce: false }), maxAttempts: this.conflictRetry.maxAttempts * HOT_BATCH_ATTEMPTS_FACTOR };
    try {
      return (await this.calls.transactWrite(items, patiently)) === undefined;
    } catch (error) {
      if (error instanceof StoreUnavailable) return false;
      throw error;
    }
  }

  /**
   * Spreads a batch kept whole that allocations keep meeting on (spreadWrites): another allocation
   * may have spread it first, or taken from it since it was read, and then the write fails and
   * nothing is spread this time.
   */
  async spread(batch: Batch): Promise<void> {
    const moved = unitsToSpread(batchAsStored(batch).available);
    const pieces = Math.min(PIECES_PER_SPREAD, moved);
    const spreadAt = new Date(this.currentTime()).toISOString();
    const items = spreadWrites(this.tableName, batch, moved, pieces, crypto.randomUUID(), spreadAt);
    // A conflict on the batch item alone waits for a moment between its takes; one on a piece means
    // that another spread has made them, and is being taken from: nothing is left to do.
    const onlyOnTheBatch = (reasons: Cancellation) => reasons.every((reason, index) => index === 0 || reason.Code !== 'TransactionConflict');
    const patiently = {
      next: (reasons: Cancellation) => (onlyOnTheBatch(reasons) ? { items, atOnce: false } : undefined),
      maxAttempts: this.conflictRetry.maxAttempts * HOT_BATCH_ATTEMPTS_FACTOR,
    };
    try {
      await this.calls.transactWrite(items, patiently);
    } catch (error) {
      if (!(error instanceof StoreUnavailable)) throw error;
    }
  }

  /**
   * Whether the batches are all kept whole; the spread ones are gathered first, and the caller reads
   * them again: a write of a batch's qty, holds or lines, unlike a take or a give-back of units, is
   * made on the batch whole, so that its conditions are those of a batch that is not spread.
   */
  async keptWhole(batches: readonly Batch[]): Promise<boolean> {
    const spread = batches.filter(({ pieces }) => pieces !== undefined);
    await Promise.all(spread.map((batch) => this.gather(batch)));
    return spread.length === 0;
  }
}
