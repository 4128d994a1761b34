import { StoreUnavailable } from '../../domain/errors';
import { type Instant, earlierOf } from '../../domain/holds';
import { type Batch, type BatchPiece, hasStockLeft, piecesAvailable } from '../../domain/model';
import type { SkuStock, StockRead } from '../../domain/ports';
import { type Spread } from './batches';
import { heldBoundFields } from './held-bounds';
import { PIECES_RANGE, type StoredPiece, gatherWrites, parsePieceItem, pieceShares, piecePartitions, piecesOfBatchRange, spreadWrites } from './pieces';
import { type Cancellation, type ConflictRetryPolicy, type StoreCalls, fullJitter } from './store-calls';
import type { World } from './world';

/*
 * A hot SKU's batches spread over pieces (docs/capacity.md, "A hot SKU: its batch spread over
 * pieces"): reading a spread batch with its pieces, spreading a batch that allocations keep meeting
 * on, and gathering a batch back. The repository (batch-repository.ts) calls these; the pieces, their
 * writes and the choice of the pieces a take goes to are pieces.ts's.
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
/** The spread batches whose pieces one process remembers: far more than a sale makes hot at once. */
const MAX_KNOWN_SPREADS = 256;
/**
 * Reads of a SKU's stock that a spread or a gather may cut in two before the read gives up (503).
 * Each read after the first waits a backoff first, as a transaction cancelled for a conflict does:
 * a batch spread by takes that keep meeting and gathered by a change can be cut over and over by
 * requests in flight, and a read at once would meet the same ones.
 */
const MAX_SPREAD_READS = 4;

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

/** A batch item as read, with these of its pieces: their units counted in its `available`, their held units in its `held`. */
const withTheirPieces = (batch: Batch, pieces: readonly BatchPiece[], spreadId: string): Batch => {
  // The item's own count goes too: the pieces' may take it to none (units counted on the item, ended on a piece).
  const { held: own = 0, ...item } = batch;
  const held = own + pieces.reduce((sum, { held: some }) => sum + some, 0);
  return {
    ...item,
    spreadId,
    available: batch.available + pieces.reduce((sum, { available }) => sum + available, 0),
    ...(held > 0 ? { held } : {}),
    pieces: pieces
      .map(({ piece, available, held: some, heldFrom, heldTakes }) => ({ piece, available, held: some, ...heldBoundFields({ heldFrom, heldTakes }) }))
      .sort((a, b) => a.piece - b.piece),
  };
};

/** The pieces among these that belong to the batch's spread (a piece of another spread is a gather and a spread ago). */
const piecesOfSpread = (pieces: readonly StoredPiece[], batch: Batch, spread: Spread): StoredPiece[] =>
  pieces.filter((piece) => piece.ref === batch.ref && piece.spreadId === spread.spreadId);

/**
 * A spread's pieces as a settled read counts them (SpreadBatches.withPieces): each as first read, with
 * the units given back to it by the second read counted in (available, and no longer held). Between
 * its two reads a piece's units only fell (takes) or rose by what it was given back, so this is never
 * less than it held at any moment between them: a refusal on it is one the batch earned then. The
 * first read alone could miss exactly the units a refusal must count, and the second alone too (given
 * back before the items were read, taken after); a count above what the piece holds now only makes a
 * take from it fail its condition, and the take reads again. Undefined when a piece is gone (gathered).
 */
const countedWithGivenBack = (first: readonly StoredPiece[], second: readonly StoredPiece[]): StoredPiece[] | undefined => {
  const counted: StoredPiece[] = [];
  for (const piece of first) {
    const now = second.find(({ piece: number }) => number === piece.piece);
    if (!now || now.givenBack < piece.givenBack) return undefined;
    const since = now.givenBack - piece.givenBack;
    // Its bound the lower of the two reads': a take between them may have lowered it, a give-back raised it.
    const heldFrom = earlierOf(piece.heldFrom, now.heldFrom);
    const bounded = heldFrom === piece.heldFrom ? piece : { ...piece, heldFrom };
    counted.push(since === 0 ? bounded : { ...bounded, available: piece.available + since, held: piece.held - since, givenBack: now.givenBack });
  }
  return counted;
};

/** A batch kept whole with units enough to make two pieces or more; a smaller one sells out before a spread would pay. */
export const canSpread = (batch: Batch) => !batch.pieces && unitsToSpread(batch.available) >= 2;

/**
 * What this process knows of the spread batches' pieces, shared by its requests
 * (DynamoDbBatchRepository.withDeadline).
 *
 * Their units as last read, or as written when it spread one, so that an allocation takes from a
 * piece without reading the pieces first: 1 Query + 1 transaction, as for a batch kept whole. A
 * number remembered may be above what its piece holds (takes since), and a take then fails on it (and
 * the batch is forgotten, so that the next allocation reads every piece); or below (a hold ended
 * since gave its units back to the piece), so a refusal, or a line passed over to a batch the rule
 * prefers less, never rests on remembered pieces (BatchRepository.stockOf). A batch is forgotten as
 * well GATHER_AFTER_MS after it was read, and the read that follows sees whether the sale is over.
 *
 * And the pieces its takes are writing now, which a take avoids while another piece can take its
 * line, and the batches it is spreading now, which its other requests wait for rather than take from
 * or spread again: the requests of one process (`npm start` runs many at once) do not meet each
 * other there.
 */
export class KnownPieces {
  private readonly byRef = new Map<string, { readonly spreadId: string; readonly pieces: readonly BatchPiece[]; readonly readAt: Instant }>();
  private readonly takesInFlight = new Map<string, number>();
  private readonly spreadsInFlight = new Map<string, Promise<void>>();

  remember(ref: string, spreadId: string, pieces: readonly BatchPiece[], readAt: Instant): void {
    this.byRef.delete(ref);
    this.byRef.set(ref, { spreadId, pieces, readAt });
    const [oldest] = this.byRef.keys();
    if (this.byRef.size > MAX_KNOWN_SPREADS && oldest !== undefined) this.byRef.delete(oldest);
  }

  /** The pieces of this spread as last read, unless that was GATHER_AFTER_MS ago or more. */
  of(ref: string, spread: Spread, now: Instant): readonly BatchPiece[] | undefined {
    const known = this.byRef.get(ref);
    return known && known.spreadId === spread.spreadId && now - known.readAt < GATHER_AFTER_MS ? known.pieces : undefined;
  }

  /** A take from the batch's pieces failed its condition: what this process knows of them is past. */
  forget(ref: string): void {
    this.byRef.delete(ref);
  }

  isBeingTaken(key: string): boolean {
    return this.takesInFlight.has(key);
  }

  /** Whether this process is spreading the batch now: a take from it waits for the spread rather than compete with it. */
  isBeingSpread(ref: string): boolean {
    return this.spreadsInFlight.has(ref);
  }

  /** Runs `spread` unless this process is spreading the batch already, and then answers that spread. */
  spreadOnce(ref: string, spread: () => Promise<void>): Promise<void> {
    const running = this.spreadsInFlight.get(ref);
    if (running) return running;
    const started = spread().finally(() => this.spreadsInFlight.delete(ref));
    this.spreadsInFlight.set(ref, started);
    return started;
  }

  /** Marks the pieces (keys of takeKey) as being taken until the function answered is called. */
  takingFrom(keys: readonly string[]): () => void {
    for (const key of keys) this.takesInFlight.set(key, (this.takesInFlight.get(key) ?? 0) + 1);
    return () => {
      for (const key of keys) {
        const left = (this.takesInFlight.get(key) ?? 1) - 1;
        if (left > 0) this.takesInFlight.set(key, left);
        else this.takesInFlight.delete(key);
      }
    };
  }
}

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

/**
 * How many of these lines, from the first, a spread batch as read holds together: a group's take is
 * one take of their summed qty, which piecesToTake places only while the batch holds it.
 */
export const linesHeldTogether = (batch: Batch, qtys: readonly number[]): number => {
  let sum = 0;
  const first = qtys.findIndex((qty) => (sum += qty) > batch.available);
  return first === -1 ? qtys.length : first;
};

/** Every item of a partition, or of its sort keys that begin with a prefix (the repository's paged Query). */
type PartitionQuery = (partition: string, sortKeyPrefix?: string) => Promise<Record<string, unknown>[]>;

export class SpreadBatches {
  constructor(
    private readonly calls: StoreCalls,
    private readonly tableName: string,
    private readonly conflictRetry: ConflictRetryPolicy,
    private readonly world: Pick<World, 'now' | 'newId' | 'random' | 'sleep'>,
    private readonly queryPartition: PartitionQuery,
    private readonly known: KnownPieces,
  ) {}

  /**
   * A SKU's stock as `readRange` finds its stock range (whether the SKU is known, and its batches
   * with stock, spread ones without their pieces), spread batches with their pieces: for a take, as
   * this process knows them, when it knows every one; else read, with those cooled gathered back.
   */
  async stock(sku: string, readRange: () => Promise<{ known: boolean; found: FoundBatch[] }>, { forTake = false, settled = false, writesNothing = false }: StockRead): Promise<SkuStock> {
    for (let read = 0; read < MAX_SPREAD_READS; read++) {
      await this.backOff(read);
      const { known, found } = await readRange();
      const remembered = forTake && !settled ? this.withKnownPieces(found) : undefined;
      if (remembered) return { known, batches: remembered };
      const batches = await this.withPieces(sku, found, async () => (await readRange()).found, { settled });
      if (batches) return { known, batches: writesNothing ? batches.map(({ batch }) => batch) : await this.gatheredWhenCooled(batches) };
    }
    throw new StoreUnavailable(`The spread batches of sku ${sku} kept changing while read`);
  }

  /** The batch whose item `readItem` finds, with its pieces if it is spread; undefined when it finds none. */
  async batch(sku: string, ref: string, readItem: () => Promise<FoundBatch | undefined>): Promise<Batch | undefined> {
    for (let read = 0; read < MAX_SPREAD_READS; read++) {
      await this.backOff(read);
      const found = await readItem();
      if (!found) return undefined;
      const readAgain = async () => {
        const again = await readItem();
        return again ? [again] : [];
      };
      const batches = await this.withPieces(sku, [found], readAgain, { ref });
      if (batches?.length === 0) return undefined;
      const [withPieces] = batches ?? [];
      if (withPieces) return withPieces.batch;
    }
    throw new StoreUnavailable(`Batch ${ref} kept being spread or gathered while read`);
  }

  /** Before a read that the one before it found cut in two (MAX_SPREAD_READS). */
  private async backOff(read: number): Promise<void> {
    if (read > 0) await this.world.sleep(fullJitter(this.conflictRetry, read, this.world));
  }

  /**
   * For a take: the batches found, spread ones with their pieces as this process knows them
   * (KnownPieces), or undefined when it does not know one of them, and the caller reads every piece.
   */
  private withKnownPieces(found: readonly FoundBatch[]): Batch[] | undefined {
    const now = this.world.now();
    const batches: Batch[] = [];
    for (const { batch, spread } of found) {
      const pieces = spread && this.known.of(batch.ref, spread, now);
      if (spread && !pieces) return undefined;
      batches.push(pieces && spread ? withTheirPieces(batch, pieces, spread.spreadId) : batch);
    }
    return batches;
  }

  /**
   * The batches found, spread ones with their pieces: read in one Query per piece partition, then
   * their items read again (`readAgain`), whose counts are the ones used. Takes only lower a piece's
   * units, and a cancel gives its units back to the item, read last: a give-back to the item between
   * the two reads is counted. A hold ended meanwhile gives its units back to a piece, which the read
   * may have passed: then the sum can be below what the batch had at any one moment. So a read that a
   * refusal, or a line passed over to a batch the rule prefers less, rests on (`settled`) reads the
   * pieces once more, and counts each piece as first read plus what it was given back by the second
   * read (each piece counts what it was ever given back, `givenBack`, which only grows): never less
   * than the piece held when the items were read, so the batch's count is never less than it had at
   * that moment (countedWithGivenBack). Undefined when a spread or a gather came between the reads,
   * which the spread's id and its number of pieces tell, and the caller reads again.
   */
  private async withPieces(
    sku: string,
    found: readonly FoundBatch[],
    readAgain: () => Promise<readonly FoundBatch[]>,
    { ref, settled = false }: { readonly ref?: string; readonly settled?: boolean } = {},
  ): Promise<ReadBatch[] | undefined> {
    if (found.every(({ spread }) => !spread)) return found.map(({ batch }) => ({ batch }));
    const readPieces = async () =>
      (await Promise.all(piecePartitions(sku).map((partition) => this.queryPartition(partition, ref === undefined ? PIECES_RANGE : piecesOfBatchRange(ref)))))
        .flat()
        .flatMap((item) => parsePieceItem(item)?.piece ?? []);
    const pieces = await readPieces();
    const items = (await readAgain()).map(({ batch, spread }) => ({ batch, spread, own: spread && piecesOfSpread(pieces, batch, spread) }));
    if (items.some(({ spread, own }) => spread && own?.length !== spread.pieces)) return undefined;
    const again = settled && items.some(({ spread }) => spread) ? await readPieces() : undefined;
    const read: ReadBatch[] = [];
    for (const { batch, spread, own } of items) {
      if (!spread || !own) {
        read.push({ batch });
        continue;
      }
      const counted = again ? countedWithGivenBack(own, piecesOfSpread(again, batch, spread)) : own;
      if (!counted) return undefined;
      read.push({ batch: withTheirPieces(batch, counted, spread.spreadId), spread, pieces: counted });
    }
    for (const { batch, spread, pieces: own } of read) if (spread && own) this.known.remember(batch.ref, spread.spreadId, own, this.world.now());
    return read;
  }

  /**
   * The batches, with the spread ones that have cooled (no take for GATHER_AFTER_MS), or have nothing
   * left in their pieces and no held units counted on them, gathered back, when that write wins; one
   * that loses stays as read. A sale whose every unit is held keeps its batch spread: its holds end on
   * the pieces, not all on the batch item.
   */
  private async gatheredWhenCooled(batches: readonly ReadBatch[]): Promise<Batch[]> {
    const gathered = await Promise.all(
      batches.map(async ({ batch, spread, pieces }) => {
        const spent = piecesAvailable(batch) === 0 && (batch.pieces ?? []).reduce((sum, { held }) => sum + held, 0) === 0;
        if (!batch.pieces || !spread || (!spent && !hasCooled(spread, pieces, this.world.now()))) return [batch];
        if (!(await this.gather(batch))) return [batch];
        const { pieces: _, spreadId: __, ...whole } = batch;
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
   * nothing is spread this time. While this process spreads a batch, its other requests that would
   * spread it wait for that spread (within their own deadlines) instead of competing with it.
   */
  async spread(batch: Batch): Promise<void> {
    await this.calls.waitFor(this.known.spreadOnce(batch.ref, () => this.spreadNow(batch)));
  }

  private async spreadNow(batch: Batch): Promise<void> {
    const moved = unitsToSpread(batch.available);
    const pieces = Math.min(PIECES_PER_SPREAD, moved);
    const now = this.world.now();
    const spreadId = this.world.newId();
    const items = spreadWrites(this.tableName, batch, moved, pieces, spreadId, new Date(now).toISOString());
    // A conflict on the batch item alone waits for a moment between its takes; one on a piece means
    // that another spread has made them, and is being taken from: nothing is left to do.
    const onlyOnTheBatch = (reasons: Cancellation) => reasons.every((reason, index) => index === 0 || reason.Code !== 'TransactionConflict');
    const patiently = {
      next: (reasons: Cancellation) => (onlyOnTheBatch(reasons) ? { items, atOnce: false } : undefined),
      maxAttempts: this.conflictRetry.maxAttempts * HOT_BATCH_ATTEMPTS_FACTOR,
    };
    try {
      const cancellation = await this.calls.transactWrite(items, patiently);
      if (!cancellation) this.known.remember(batch.ref, spreadId, pieceShares(moved, pieces), now);
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
