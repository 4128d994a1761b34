import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { HeldLine, HeldSource, Hold, Instant } from '../../domain/holds';
import { type Allocation, type Batch, type Part, type Placement, locationOf, takesOf } from '../../domain/model';
import type { HoldPlacement, SaveAllocationResult, SaveAllocationsResult, SaveHoldResult } from '../../domain/ports';
import { heldUnitsPuts } from './held-units';
import { newHoldWrite } from './holds';
import { parseStoredItem, storedLine } from './items';
import { newLineWrite, newSplitLineWrite, partWrite } from './lines';
import { type PieceTake, piecesToTake, writesOf } from './pieces';
import {
  CONFLICTS_BEFORE_SPREAD,
  HOT_BATCH_ATTEMPTS_FACTOR,
  type KnownPieces,
  type SpreadBatches,
  canSpread,
  linesHeldTogether,
} from './spread-batches';
import { type Cancellation, type ConflictRetryPolicy, type DocumentSender, MAX_TRANSACTION_ITEMS, StoreCalls, type TransactWriteItem } from './store-calls';
import type { TakeGroups } from './take-groups';
import type { World } from './world';

/*
 * The writes of takes of stock, for the repository (batch-repository.ts): an allocation's (each
 * placement's take and its line) and a hold's (each line's take, its units' records and the hold's
 * record), in one transaction, from a batch kept whole or from a spread batch's pieces
 * (docs/capacity.md, "A hot SKU"; writesOf in pieces.ts makes each take's writes as its batch's
 * kind does), and what a cancellation of it says: a line or a hold already stored, a batch that can
 * no longer take its line, or one to read again. A batch kept whole that keeps meeting conflicts is
 * spread from here, by holds as by allocations, and a process's allocations that wait for one
 * spread batch share a transaction (take-groups.ts).
 */

/** Units taken from a batch, and what records them: a line, or a hold's units (`heldUntil`: the hold's expiry; counted as held where they are taken). */
interface Take {
  readonly batch: Batch;
  readonly qty: number;
  readonly heldUntil?: string;
  /** The items that record the take, given where its units came from. */
  readonly records: (sources: readonly HeldSource[]) => TransactWriteItem[];
}

/**
 * A transaction of takes, sent: saved (with where each take's units came from), cancelled, or to be
 * read again; or not sent, since it needs more than a transaction's items with every batch whole.
 */
type SentTakes =
  | { readonly outcome: 'saved'; readonly sources: readonly HeldSource[][] }
  | { readonly outcome: 'read-again' }
  | { readonly outcome: 'too-many-writes'; readonly writes: number }
  | { readonly outcome: 'cancelled'; readonly cancellation: Cancellation; readonly recordsAt: readonly number[]; readonly more: (cancellation: Cancellation) => Promise<'read-again' | 'batch-changed'> };

/** What a take waiting in a group comes to: its own outcome, or `alone` when the group's transaction met a conflict, and the take is sent on its own. */
export type GroupedTakeOutcome = SaveAllocationsResult | { readonly outcome: 'alone' };

/** The lines already stored where a transaction put new ones: a cancellation's reasons stand at their items' places, and a failed line put carries the stored line. */
export const existingLines = (cancellation: Cancellation, linePuts: readonly number[]): Allocation[] =>
  linePuts.flatMap((index) => {
    const reason = cancellation[index];
    return reason?.Code === 'ConditionalCheckFailed' && reason.Item ? [storedLine(unmarshall(reason.Item))] : [];
  });

/**
 * A batch kept whole when read, whose write failed its condition: the item as it stood then says
 * whether the batch may still take `qty` (spread meanwhile, or changed otherwise but not short of
 * it), or not (another request took its stock).
 */
const mayStillTake = (cancellation: Cancellation, wholeBatches: readonly [number, Batch][], batch: Batch, qty: number): boolean => {
  const at = wholeBatches.find(([, whole]) => whole === batch)?.[0];
  const reason = at === undefined ? undefined : cancellation[at];
  if (reason?.Code !== 'ConditionalCheckFailed' || !reason.Item) return false;
  const stored = parseStoredItem(unmarshall(reason.Item));
  return stored.kind === 'batch' && (stored.spread !== undefined || stored.batch.available >= qty);
};

/** A spread batch as a gather leaves it, kept whole, its units all its own: what its take would write then. */
const keptWhole = ({ pieces: _, spreadId: __, ...batch }: Batch): Batch => batch;

export class AllocationSaves {
  constructor(
    private readonly calls: StoreCalls,
    private readonly client: DocumentSender,
    private readonly tableName: string,
    private readonly conflictRetry: ConflictRetryPolicy,
    private readonly spreads: SpreadBatches,
    private readonly knownPieces: KnownPieces,
    private readonly takeGroups: TakeGroups<Placement, GroupedTakeOutcome>,
    private readonly world: World,
  ) {}

  /**
   * Takes each placement's qty from its batch and records its line, all of them or none
   * (BatchRepository.saveAllocations): a take from a spread batch waits in its process's group while
   * TAKES_IN_FLIGHT_PER_BATCH are in flight on that batch (TakeGroups); anything else is one
   * transaction of its own.
   */
  async save(placements: readonly Placement[]): Promise<SaveAllocationsResult> {
    const beingSpread = placements.flatMap(takesOf).find(({ batch }) => !batch.pieces && this.knownPieces.isBeingSpread(batch.ref));
    if (beingSpread) {
      await this.spreads.spread(beingSpread.batch);
      return { outcome: 'read-again' };
    }
    const [placement] = placements;
    if (placements.length > 1 || placement?.parts || !placement?.batch.pieces) return this.saveInOneTransaction(placements);
    const { allocation, batch } = placement;
    const grouped = await this.calls.waitFor(
      this.takeGroups.take(
        batch.ref,
        `${allocation.orderid}#${allocation.sku}`,
        placement,
        () => this.saveInOneTransaction(placements),
        (takes) => this.saveGroupedTakes(takes),
      ),
    );
    return grouped.outcome === 'alone' ? this.saveInOneTransaction(placements) : grouped;
  }

  /**
   * Takes from one spread batch that waited together, in one transaction: their summed qty taken as
   * one take (piecesToTake) and a put per line, for as many of them as the batch as read holds
   * together; the others are sent on their own. Sent once, by no request's deadline (each waits for
   * it within its own). A line already stored answers `lines-exist`; a piece that held less than
   * remembered makes the batch forgotten and every other take read again; any other cancellation (a
   * conflict, throttling) sends each other take on its own, as if it had never waited.
   */
  private async saveGroupedTakes(waiting: readonly Placement[]): Promise<GroupedTakeOutcome[]> {
    const [first] = waiting;
    if (!first) return [];
    const { batch } = first;
    const held = linesHeldTogether(batch, waiting.map(({ allocation }) => allocation.qty));
    const takes = waiting.slice(0, held);
    const alone = waiting.slice(held).map((): GroupedTakeOutcome => ({ outcome: 'alone' }));
    if (takes.length === 0) return alone;
    const allocatedAt = new Date(this.world.now()).toISOString();
    const qty = takes.reduce((sum, { allocation }) => sum + allocation.qty, 0);
    const take = writesOf(batch).take(this.tableName, batch, qty, allocatedAt, (key) => this.knownPieces.isBeingTaken(key), this.world);
    const linePuts = takes.map((_, index) => take.items.length + index);
    const items = [...take.items, ...takes.map(({ allocation }) => newLineWrite(this.tableName, allocation, allocatedAt, batch))];
    const taken = this.knownPieces.takingFrom(take.pieces.map(({ key }) => key));
    let cancellation: Cancellation | undefined;
    try {
      // A conflict or throttling answers its cancellation rather than a retry (`next` sends nothing
      // instead), and each take then goes on its own with a single take's retries.
      const once = { next: () => undefined, maxAttempts: 2 };
      cancellation = await new StoreCalls(this.client, this.conflictRetry, this.world).transactWrite(items, once);
    } finally {
      taken();
    }
    if (!cancellation) return [...takes.map((): GroupedTakeOutcome => ({ outcome: 'saved' })), ...alone];
    const short = take.items.some((_, at) => cancellation[at]?.Code === 'ConditionalCheckFailed');
    if (short) this.knownPieces.forget(batch.ref);
    const outcomes = linePuts.map((at): GroupedTakeOutcome => {
      const [existing] = existingLines(cancellation, [at]);
      if (existing) return { outcome: 'lines-exist', existing: [existing] };
      return short ? { outcome: 'read-again' } : { outcome: 'alone' };
    });
    return [...outcomes, ...alone];
  }

  /** The placements' takes and records in one transaction: a whole line's take and record, or a split line's takes with their records (splitLineTakes). */
  private async saveInOneTransaction(placements: readonly Placement[]): Promise<SaveAllocationsResult> {
    const allocatedAt = new Date(this.world.now()).toISOString();
    const { takes, firstTakes } = this.placementTakes(placements, allocatedAt);
    const sent = await this.sendTakes(takes, allocatedAt);
    if (sent.outcome === 'too-many-writes') return { ...sent, maxWrites: MAX_TRANSACTION_ITEMS };
    if (sent.outcome !== 'cancelled') return { outcome: sent.outcome === 'saved' ? 'saved' : 'read-again' };
    // Each line's item is the first record of its first take.
    const existing = existingLines(sent.cancellation, firstTakes.map((take) => sent.recordsAt[take] as number));
    if (existing.length > 0) return { outcome: 'lines-exist', existing };
    return { outcome: await sent.more(sent.cancellation) };
  }

  /** Each placement's takes (a whole line's one, a split line's one a part), and where each placement's first take is among them. */
  private placementTakes(placements: readonly Placement[], allocatedAt: string): { readonly takes: Take[]; readonly firstTakes: number[] } {
    const takes: Take[] = [];
    const firstTakes: number[] = [];
    for (const { allocation, batch, parts } of placements) {
      firstTakes.push(takes.length);
      if (parts) takes.push(...this.splitLineTakes(allocation, parts, allocatedAt));
      else takes.push({ batch, qty: allocation.qty, records: () => [newLineWrite(this.tableName, allocation, allocatedAt, batch)] });
    }
    return { takes, firstTakes };
  }

  /**
   * The writes save() would send these placements in, counted as it counts them before it sends:
   * more than a transaction's items, it would refuse them as too many (BatchRepository.allocationWrites).
   */
  writesOf(placements: readonly Placement[]): { readonly writes: number; readonly maxWrites: number } {
    const takenAt = new Date(this.world.now()).toISOString();
    const { takes } = this.placementTakes(placements, takenAt);
    const { writes } = this.writesNeeded(takes, (some) => this.takesWrites(some, takenAt, () => false), (built) => built.items.length);
    return { writes, maxWrites: MAX_TRANSACTION_ITEMS };
  }

  /**
   * The items the takes need in one transaction, as `build` makes them and `most` counts them: as the
   * batches stand, or, when that is more than a transaction holds, as they would be once the batches
   * whose takes span pieces were gathered whole (`spanning`), which is what a transaction of them may
   * hold at best.
   */
  private writesNeeded<Built>(takes: readonly Take[], build: (some: readonly Take[]) => Built, most: (built: Built) => number): { readonly writes: number; readonly spanning: readonly Take[] } {
    const asRead = most(build(takes));
    if (asRead <= MAX_TRANSACTION_ITEMS) return { writes: asRead, spanning: [] };
    const spanning = takes.filter(({ qty, batch }) => batch.pieces && piecesToTake(batch, qty, () => false, this.world).length > 1);
    return { writes: spanning.length === 0 ? asRead : most(build(takes.map((take) => (spanning.includes(take) ? { ...take, batch: keptWhole(take.batch) } : take)))), spanning };
  }

  /**
   * A split line's takes, one a part from its batch, and its records: the line's item with the first
   * part's take, and each part's item with its own.
   */
  private splitLineTakes(allocation: Allocation, parts: readonly Part[], allocatedAt: string): Take[] {
    const split = allocation.split;
    if (!split) throw new Error(`Line ${allocation.orderid}/${allocation.sku} is not split`);
    // The line's parts are what it takes, each at its batch's location.
    const lineParts = parts.map(({ batch, qty }) => ({ batchref: batch.ref, qty, location: locationOf(batch) }));
    return parts.map(({ batch, qty }, index) => ({
      batch,
      qty,
      records: () => [
        ...(index === 0 ? [newSplitLineWrite(this.tableName, allocation, { split: split.split, parts: lineParts }, allocatedAt)] : []),
        ...lineParts.slice(index, index + 1).map((part) => partWrite(this.tableName, allocation, part, allocatedAt)),
      ],
    }));
  }

  /**
   * Takes each part's qty from its batch and records the split line, its item with the first part's
   * take and each part's item with its own, all or none, in one transaction of its own
   * (BatchRepository.saveSplitLine): a part from a spread batch is taken from its pieces as a
   * line's take is, without waiting in its batch's group, whose transaction carries whole lines.
   */
  async saveSplitLine(allocation: Allocation, parts: readonly Part[]): Promise<SaveAllocationResult> {
    const beingSpread = parts.find(({ batch }) => !batch.pieces && this.knownPieces.isBeingSpread(batch.ref));
    if (beingSpread) {
      await this.spreads.spread(beingSpread.batch);
      return { outcome: 'read-again' };
    }
    const allocatedAt = new Date(this.world.now()).toISOString();
    const sent = await this.sendTakes(this.splitLineTakes(allocation, parts, allocatedAt), allocatedAt);
    // At most MAX_PARTS_PER_LINE parts of 3 writes each, and the line's: far within a transaction.
    if (sent.outcome === 'too-many-writes') throw new Error(`A split line of ${sent.writes} writes`);
    if (sent.outcome !== 'cancelled') return { outcome: sent.outcome === 'saved' ? 'saved' : 'read-again' };
    const [existing] = existingLines(sent.cancellation, sent.recordsAt.slice(0, 1));
    if (existing) return { outcome: 'line-exists', existing };
    return { outcome: await sent.more(sent.cancellation) };
  }

  /**
   * Sets aside each placement's qty for the hold and records it, all or none: the takes of an
   * allocation, counted as held where they are taken, each line's units recorded where they came
   * from (one record per piece or the batch's own units), and the hold's record, which names them.
   */
  async saveHold(hold: Hold, placements: readonly HoldPlacement[], placedAt: Instant): Promise<SaveHoldResult> {
    // As an allocation's: a batch this process is spreading is waited for, not met on its item.
    const beingSpread = placements.find(({ batch }) => !batch.pieces && this.knownPieces.isBeingSpread(batch.ref));
    if (beingSpread) {
      await this.spreads.spread(beingSpread.batch);
      return { outcome: 'read-again' };
    }
    const takes = placements.map(({ line, batch }) => ({
      batch,
      qty: line.qty,
      heldUntil: hold.expiresAt,
      records: (sources: readonly HeldSource[]) => heldUnitsPuts(this.tableName, hold, line, sources),
    }));
    // The record notes, of each line (or part: a split line's are on batches of their own), where its
    // units are taken from (its batch's location the line carries).
    const placementOf = ({ sku, batchref }: HeldLine) => placements.findIndex(({ line }) => line.sku === sku && line.batchref === batchref);
    const withSources = (sources: readonly HeldSource[][]): Hold => ({ ...hold, lines: hold.lines.map((line) => ({ ...line, sources: sources[placementOf(line)] ?? [] })) });
    // What ends the hold must fit one transaction too: a confirm, its largest write, is the record, a
    // put per line and per part of a split line, and per source its record's deletion and at most one count.
    const lineItems = new Set(placements.map(({ line }) => line.sku)).size + placements.filter(({ line }) => line.split).length;
    const confirmWrites = (sources: readonly HeldSource[][]) => 1 + lineItems + 2 * sources.flat().length;
    const sent = await this.sendTakes(takes, new Date(placedAt).toISOString(), (sources) => [newHoldWrite(this.tableName, withSources(sources), placedAt)], confirmWrites);
    if (sent.outcome === 'too-many-writes') return { ...sent, maxWrites: MAX_TRANSACTION_ITEMS };
    if (sent.outcome !== 'cancelled') return { outcome: sent.outcome === 'saved' ? 'saved' : 'read-again' };
    // The hold's record is the last item: a failed put there carries the hold stored under its holdid.
    const holdReason = sent.cancellation.at(-1);
    if (holdReason?.Code === 'ConditionalCheckFailed' && holdReason.Item) {
      const existing = parseStoredItem(unmarshall(holdReason.Item));
      if (existing.kind !== 'hold') throw new Error(`Item at the key of a hold is not a hold: ${JSON.stringify(existing)}`);
      return { outcome: 'hold-exists', existing: existing.hold };
    }
    return { outcome: await sent.more(sent.cancellation) };
  }

  /**
   * The takes in one transaction, and `finish`'s items after them (given where each take's units
   * came from), retried as a take is: a conflict on a piece goes to another piece, and a batch kept
   * whole that keeps meeting conflicts is spread, after which the caller reads again. A cancellation
   * comes with where each take's records stand, and `more`, which says what it means for the stock
   * once the caller has seen to its own records. `laterWrites`: the writes a later transaction of
   * these takes will need (a hold's confirm), which must fit one too.
   */
  private async sendTakes(
    takes: readonly Take[],
    takenAt: string,
    finish: (sources: readonly HeldSource[][]) => TransactWriteItem[] = () => [],
    laterWrites: (sources: readonly HeldSource[][]) => number = () => 0,
  ): Promise<SentTakes> {
    const busyPieces = new Set<string>();
    const isBusy = (key: string) => busyPieces.has(key) || this.knownPieces.isBeingTaken(key);
    const build = (some: readonly Take[] = takes) => {
      const built = this.takesWrites(some, takenAt, isBusy);
      return { ...built, items: [...built.items, ...finish(built.sources)] };
    };
    const most = (built: ReturnType<typeof build>) => Math.max(built.items.length, laterWrites(built.sources));
    let writes = build();
    if (most(writes) > MAX_TRANSACTION_ITEMS) {
      const { writes: needed, spanning } = this.writesNeeded(takes, build, most);
      if (needed > MAX_TRANSACTION_ITEMS) return { outcome: 'too-many-writes', writes: needed };
      return this.gathered(spanning);
    }
    let taken = this.knownPieces.takingFrom(writes.pieces.map(({ key }) => key));
    let hot: Batch | undefined;
    const next = (reasons: Cancellation, attempt: number) => {
      const conflicted = (index: number) => reasons[index]?.Code === 'TransactionConflict';
      for (const { at, key } of writes.pieces) if (conflicted(at)) busyPieces.add(key);
      const spreadsNow = (ref: string) => attempt >= CONFLICTS_BEFORE_SPREAD || this.knownPieces.isBeingSpread(ref);
      hot = writes.wholeBatches.find(([index, batch]) => conflicted(index) && canSpread(batch) && spreadsNow(batch.ref))?.[1];
      if (hot) return undefined;
      const throttled = reasons.some((reason) => reason.Code === 'ThrottlingError');
      const onPiecesOnly = reasons.every((reason, index) => reason.Code !== 'TransactionConflict' || writes.pieces.some(({ at }) => at === index));
      taken();
      writes = build();
      taken = this.knownPieces.takingFrom(writes.pieces.map(({ key }) => key));
      // A conflict on a piece goes to a piece not yet met busy at once; one on a batch item, throttling,
      // or every piece read met busy, waits.
      return { items: writes.items, atOnce: onPiecesOnly && !throttled && writes.pieces.every(({ key }) => !busyPieces.has(key)) };
    };
    const spread = takes.some(({ batch }) => batch.pieces);
    const maxAttempts = this.conflictRetry.maxAttempts * (spread ? HOT_BATCH_ATTEMPTS_FACTOR : 1);
    let cancellation: Cancellation | undefined;
    try {
      cancellation = await this.calls.transactWrite(writes.items, { next, maxAttempts });
    } finally {
      taken();
    }
    if (!cancellation) return { outcome: 'saved', sources: writes.sources };
    const sent = writes;
    const more = async (reasons: Cancellation): Promise<'read-again' | 'batch-changed'> => {
      for (const { at, ref } of sent.pieces) if (reasons[at]?.Code === 'ConditionalCheckFailed') this.knownPieces.forget(ref);
      if (hot) {
        await this.spreads.spread(hot);
        return 'read-again';
      }
      this.calls.raceLost(reasons);
      return takes.some(({ batch, qty }) => batch.pieces || mayStillTake(reasons, sent.wholeBatches, batch, qty)) ? 'read-again' : 'batch-changed';
    };
    return { outcome: 'cancelled', cancellation, recordsAt: writes.recordsAt, more };
  }

  /**
   * The takes of an order or a hold that do not fit one transaction, or a hold whose confirm would
   * not, that fit once the batches of those that span pieces are kept whole (`spanning`): near a
   * sale's end a take from a spread batch that no one piece holds spans its own units and many small
   * pieces, up to 65 items. Those batches are gathered, so that each take is one write of a batch
   * kept whole (two when it empties the batch), and the order is read again. The process forgets
   * their pieces first: a gather is made on condition that each piece holds what was read, which
   * pieces remembered (never less than they hold) may fail, and the next round then reads them. A
   * gather that loses to a take in flight leaves the batch spread, and the next round tries again;
   * the rounds are bounded by the service (then 503). Takes that would not fit even so (an order of
   * many split lines, each part a take and a record) are answered too large at once, gathering nothing.
   */
  private async gathered(spanning: readonly Take[]): Promise<{ readonly outcome: 'read-again' }> {
    for (const { batch } of spanning) this.knownPieces.forget(batch.ref);
    await Promise.all(spanning.map(({ batch }) => this.spreads.gather(batch)));
    return { outcome: 'read-again' };
  }

  /**
   * Each take and its records, the take's writes as its batch's kind makes them (writesOf; a spread
   * batch's leave the pieces `isBusy` names, met busy in this request or being written by this
   * process's takes, while others can take the line). Where each take's records, each whole batch's
   * write and each piece's write stand in the items, and where each take's units come from.
   */
  private takesWrites(takes: readonly Take[], takenAt: string, isBusy: (key: string) => boolean) {
    const items: TransactWriteItem[] = [];
    const recordsAt: number[] = [];
    const wholeBatches: [number, Batch][] = [];
    const pieces: PieceTake[] = [];
    const sources: HeldSource[][] = [];
    for (const { batch, qty, heldUntil, records } of takes) {
      const take = writesOf(batch).take(this.tableName, batch, qty, takenAt, isBusy, this.world, heldUntil);
      if (take.wholeAt !== undefined) wholeBatches.push([items.length + take.wholeAt, batch]);
      pieces.push(...take.pieces.map((piece) => ({ ...piece, at: items.length + piece.at })));
      items.push(...take.items);
      sources.push(take.sources);
      recordsAt.push(items.length);
      items.push(...records(take.sources));
    }
    return { items, recordsAt, wholeBatches, pieces, sources };
  }
}
