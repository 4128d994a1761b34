import type { Adjustment, CountBasis } from './adjustments';
import type { HeldUnits, Hold, Instant } from './holds';
import type { FileRefusal, ImportCheck, ImportChunk, ImportChunkClaim, ImportRecord, ImportRowsRead, RowError } from './imports';
import type { Location } from './locations';
import type { Allocation, Batch, LineMove, ListedLine, OrderLine, Part, Placement, RoutedAllocation } from './model';
import type { BatchCount } from './place-counts';
import type { Routing } from './routing';
import type { LineShipped, Shipment } from './shipments';
import type { HistoryPage, HistoryRequest } from './stock-history';
import type { ListRequest, ListedSkus, SkuList } from './stock-listings';
import type { Transfer } from './transfers';
import type { ConditionalWrite, AddBatchResult, LocationRevision, StoredLocation, HoldPlacement, SaveHoldResult, ConfirmHoldResult, ExpiredHoldsCursor, ExpiredHolds, HoldEnding, HoldToEnd, BatchChangeWrite, SaveAllocationResult, MoveAllocationsResult, SaveAllocationsResult, SaveTransferResult, SaveShipmentResult, StockRead, SkuStock, ExpiredUnits, CountedGiveBacks } from './port-outcomes';

/** What the port is handed and answers, for the modules that name them from here. */
export * from './port-outcomes';

/**
 * Where batches and allocated lines live. Each method is atomic, and the invariants (stock never
 * below zero, a batch reference exists once, a line is allocated once) are the repository's to
 * guard at the moment of writing, since a read made before the write can be stale by then.
 * Methods throw StoreUnavailable when the store cannot answer.
 */
export interface BatchRepository {
  /**
   * Adds the batch unless one with its reference exists, whatever its SKU, and only if the location
   * it names is stored (a batch at `default`, named or not, needs none stored): one write, which
   * checks the location without reading it.
   */
  addBatch(batch: Batch, addedBy?: string): Promise<AddBatchResult>;
  /** The import row that added the batch (`addedBy` of addBatch), when one did (strongly consistent). */
  batchAddedBy(ref: string): Promise<string | undefined>;
  /** Every location stored, in no particular order (the built-in `default` only once replaced). Strongly consistent. */
  locations(): Promise<Location[]>;
  /**
   * Every location stored, for routing a request's lines: as read at most ROUTING_LOCATIONS_MAX_AGE_MS
   * ago, so that the store may keep them in the process rather than read their one partition for
   * every allocation (docs/capacity.md, "Locations read by routing"). A location written through the
   * same process is read anew. When `naming` names a location they lack (made since), they are read
   * anew, unless they were read a moment ago (a second, so that requests naming a location that does
   * not exist do not read them each).
   */
  routingLocations(naming?: readonly string[]): Promise<Location[]>;
  /** The location stored under `id`, as of now (strongly consistent); undefined when none is (the built-in `default` is not, until replaced). */
  location(id: string): Promise<StoredLocation | undefined>;
  /**
   * Stores the location whole, in one write: replacing the one read (`replacing`, its revision), on
   * condition that it is still stored as read, or, without `replacing`, on condition that none is
   * stored under its id. `changed` when the condition failed, and nothing was written.
   */
  saveLocation(location: Location, replacing?: LocationRevision): Promise<ConditionalWrite>;
  /**
   * The SKU's stock as of now (a strongly consistent read). For a take (`forTake`), a batch whose
   * stock the store keeps in pieces (Batch.pieces) may be found with its pieces as last read: a take
   * that finds less answers batch-changed, and the next read counts them again. Units given back to
   * its pieces since (a hold's) are not counted then, nor always by a plain read of its pieces, which
   * are many items read one by one: a refusal, or a line passed over to a batch the rule prefers less
   * (passesOverSpread), rests on a `settled` read, whose count of every batch is never less than it
   * had at one moment (units given back while it reads are counted in, not waited out).
   */
  stockOf(sku: string, options?: StockRead): Promise<SkuStock>;
  /**
   * The SKU's batches out of the stock range that still have units on hand (`qty` above 0): every one
   * of them its lines' (or owed to them, while a change that lowered its qty has lines to move).
   * Strongly consistent; what it reads grows with the SKU's exhausted batches, those that shipped
   * every unit among them, so only a read of the stock levels asks it (or a count at a place),
   * never a take. `emptied`: those with no unit left too, which the same read finds.
   */
  exhaustedBatchesOf(sku: string, options?: { readonly emptied?: boolean }): Promise<Batch[]>;
  /** Whether a batch of the SKU was ever added. Strongly consistent. */
  skuKnown(sku: string): Promise<boolean>;
  /**
   * A page of the SKU's changes of on-hand stock (domain/stock-history.ts), newest first, `limit` at
   * most, only those at `request.location` when it names one, after `request.after` when it names a
   * position. A page may hold fewer than `limit` while more remain (`next`): what one page reads is
   * bounded. Eventually consistent: a change is listed a moment after its write.
   */
  stockHistory(sku: string, request: HistoryRequest): Promise<HistoryPage>;
  /**
   * A page of the list's SKUs (domain/stock-listings.ts), `limit` at most, after `request.after` when
   * it names a position: each SKU once across the pages, in the store's order, whatever changes
   * between them. A page may hold fewer than `limit` while more remain (`next`). Eventually
   * consistent: a SKU is listed a moment after the write that made it known there.
   */
  listedSkus(list: SkuList, request: ListRequest): Promise<ListedSkus>;
  allocationOf(orderid: string, sku: string): Promise<Allocation | undefined>;
  /**
   * Takes `allocation.qty` from `batch`, as it was read, and records the line, both or neither.
   * Answers batch-changed when the batch can no longer take the line, read-again when it is no
   * longer as read but may still take it.
   */
  saveAllocation(allocation: Allocation, batch: Batch): Promise<SaveAllocationResult>;
  /**
   * Takes each part's qty from its batch, as it was read, and records the split line (`allocation`,
   * whose `split` names the parts), all or none: one transaction. Answers as saveAllocation does.
   */
  saveSplitLine(allocation: Allocation, parts: readonly Part[]): Promise<SaveAllocationResult>;
  /**
   * Takes each placement's qty from its batch, or each of a split line's parts from its own, and
   * records its line (and a split line's parts), all of them or none: one transaction. The placements
   * are of different SKUs, so of different batches.
   */
  saveAllocations(placements: readonly Placement[]): Promise<SaveAllocationsResult>;
  /**
   * The writes saveAllocations would send these placements in, as it counts them before it sends,
   * and the most one transaction holds: past it, saveAllocations answers `too-many-writes`. Reads
   * and writes nothing: what a promise weighs its plan by (domain/promise-services.ts).
   */
  allocationWrites(placements: readonly Placement[]): { readonly writes: number; readonly maxWrites: number };
  /**
   * Records that these lines were refused for lack of stock, so the refusal is announced (OutOfStock),
   * with where their request allowed them to come from (`routing`'s `destination` and `location`,
   * when it named them): a refusal at one place says nothing of the stock elsewhere. Never rejects:
   * a refusal is answered whether or not it could be recorded.
   */
  recordOutOfStock(lines: readonly OrderLine[], routing?: Routing): Promise<void>;
  /**
   * The batch as of now (strongly consistent), wherever its stock puts it. `sku`, when the caller
   * knows the batch's SKU, saves looking it up.
   */
  batch(ref: string, sku?: string): Promise<Batch | undefined>;
  /** Every line of the order, as of now, in no particular order. */
  allocationsOf(orderid: string): Promise<Allocation[]>;
  /**
   * The order's lines as allocationsOf reads them, each with its batch's location as the line
   * records it (`default` for one that records none: at `default`, or written before lines recorded
   * it). Strongly consistent.
   */
  locatedLinesOf(orderid: string): Promise<RoutedAllocation[]>;
  /**
   * Up to `limit` of the lines on the batch, most recently allocated first. Read through an index
   * that may lag a write by a moment: a line listed may have left since (its move then answers
   * `changed`), and one allocated a moment ago may be missing. The batch's own stock is never stale.
   * A split line is listed on each batch it has a part on, by that part (ListedLine).
   */
  linesOn(ref: string, limit: number): Promise<ListedLine[]>;
  /** Removes the line and gives each part's qty back to its batch (`batches`, as read, one per part in the order of its parts), all or none. */
  cancelAllocation(allocation: Allocation, batches: readonly Batch[]): Promise<ConditionalWrite>;
  /**
   * Moves the part of the split line on `from` (both as read) to the parts `to` names (each batch as
   * read, their qtys summing to the part's), each joining the line's part on its batch if it has
   * one, or, with `to` null, removes the whole line from its order and gives every part back
   * (`others`: the batches of its other parts, as read), with its notice: one write, `changed` when
   * the line or a batch is no longer as read, and then nothing was written.
   */
  moveLinePart(line: Allocation, from: Batch, to: readonly Part[] | null, others: readonly Batch[]): Promise<ConditionalWrite>;
  /**
   * Writes `changed` (a new qty, eta and available) over `batch`, as it was read, and ends `ending`
   * at `now` in the same write: `changed` no longer records them, and their units on it are
   * available. When their ends and the change pass one write, nothing is written, and the answer
   * says how many of the last of them fit with it. An `adjustment` is recorded in the same write, new
   * (an adjustmentid is used once), its reason the batch's (a PATCH's: `correction`), and a count's
   * time the batch's last count, on condition that no later count was applied since its basis was
   * read and that the batch recorded no change since `changesRead` (CountBasis). The change of qty is
   * recorded too, for the counts (at a count's own moment), on condition that no count taken at or
   * after its moment was applied.
   */
  changeBatch(batch: Batch, changed: Batch, ending?: readonly HoldToEnd[], now?: Instant, adjustment?: Adjustment, changesRead?: number): Promise<BatchChangeWrite>;
  /** The adjustment as stored (strongly consistent). */
  adjustment(adjustmentid: string): Promise<Adjustment | undefined>;
  /**
   * What a count of batch `ref` taken at `countedAt` rests on: the time of the last count applied to
   * the batch, and what its changes of qty after `countedAt` add up to (within COUNT_WINDOW_MS of
   * now). Strongly consistent; a change after this read changes the batch's qty, which the count's
   * write is conditioned on.
   */
  countBasis(ref: string, countedAt: string): Promise<CountBasis>;
  /**
   * Writes the first of the moves of lines off `from` (planLineMoves), as many as one write carries
   * and at least one, all of them or none: each line put on its batch or removed from its order,
   * and each batch's stock changed once, by what those moves give it or take from it. `from` and
   * `batches` (every batch a move goes to) are as found before these moves. Answers how many moves
   * it wrote, or `changed` when a line or a batch is no longer as read, and nothing was written.
   */
  moveAllocations(from: Batch, moves: readonly LineMove[], batches: readonly Batch[]): Promise<MoveAllocationsResult>;
  /**
   * Records the hold, active until its `expiresAt`, and sets aside each placement's qty on its
   * batch: all or nothing, one transaction. Each line's units are a record of their own, and the
   * batch's count of held units grows by them: no other hold is read or written.
   */
  saveHold(hold: Hold, placements: readonly HoldPlacement[]): Promise<SaveHoldResult>;
  /**
   * The holds' units recorded on the batch (as of now, strongly consistent): those that expired at or
   * before `expiredBy`, earliest first, or every one, latest expiry first; up to `limit`.
   */
  heldOn(batch: Batch, which: { readonly expiredBy: Instant } | { readonly latestFirst: true }, limit: number): Promise<HeldUnits[]>;
  /**
   * Gives back on the batch the units of holds recorded on it that have expired at `now`, earliest
   * first, until at least `atLeast` units are back or none is left, as many as one write carries;
   * the holds themselves stay as they are, for their release or the sweeper to end. Answers the
   * units of the expired holds it found, given back by its write or, a moment before, by another
   * request's: 0 when none had expired, and the batch as read stands.
   */
  freeExpiredHolds(batch: Batch, now: Instant, atLeast: number): Promise<number>;
  /**
   * What freeExpiredHolds would give back on the batch now, with the same arguments, read the same
   * way and written nowhere, once the give-backs `after` counted had been made: what a promise counts
   * as free (domain/promise-services.ts).
   */
  expiredUnitsOn(batch: Batch, now: Instant, atLeast: number, after?: CountedGiveBacks): Promise<ExpiredUnits>;
  /** The batches (refs) on which the hold's units are still recorded: not yet given back. */
  stillHeldOn(hold: Hold): Promise<string[]>;
  /** The hold as last written (strongly consistent); its status at a given moment is statusAt's to say. */
  hold(holdid: string): Promise<Hold | undefined>;
  /**
   * Ends the active hold, as read: `released` while it lasts at `now`, `expired` once it has not.
   * Gives back its units on the batches named (`givenBackOn`, refs), where they must still be
   * recorded; on its other batches a request gave them back once the hold expired. One write:
   * `changed` when the hold or one of those records is no longer as read, and then nothing was written.
   */
  endHold(hold: Hold, ending: HoldEnding, now: Instant, givenBackOn: readonly string[]): Promise<ConditionalWrite>;
  /**
   * Moves the active hold's expiry, as read, to `expiresAt`: on its record and on its units' record
   * on each of its batches, on condition that it still lasts at `now`. One write.
   */
  extendHold(hold: Hold, expiresAt: string, now: Instant): Promise<ConditionalWrite>;
  /**
   * Turns the active hold's lines into lines of the order, on the same batches, and ends the hold
   * as confirmed, on condition that it lasts at `now`: its units go from held to allocated, so no
   * batch's `available` changes. One write. A batch that the hold leaves with no units but its
   * lines' moves out of the stock range: `batches` (as read now, one per line) lets the write do
   * so; without them, such a batch answers `changed`.
   */
  confirmHold(hold: Hold, orderid: string, now: Instant, batches?: readonly Batch[]): Promise<ConfirmHoldResult>;
  /**
   * The holdids of up to `limit` holds still active whose expiry is at or before `before`, earliest
   * first, from the start of the listing or from where the page of `from` (with the same `before`)
   * left off: paging on lists each such hold once, whether or not the holds of earlier pages have
   * ended meanwhile. Read through an index that lags writes by a moment: a hold ended a moment ago
   * may be listed (ending it again finds it ended), one that expired a moment ago may be missing.
   */
  expiredHolds(before: Instant, limit: number, from?: ExpiredHoldsCursor): Promise<ExpiredHolds>;
  /** The transfer as last written (strongly consistent); a cancelled one until its record expires. */
  transfer(transferid: string): Promise<Transfer | undefined>;
  /**
   * Makes the transfer, all of it or nothing, in one write: `qty` taken from `source`, as read, on the
   * condition a line's take has (its qty and available both fall: the units leave it), the incoming
   * batch added at `to` (incomingBatchOf), and the transfer recorded, on condition that its transferid
   * is new. A source batch the store keeps in pieces is gathered first, and answers read-again.
   */
  saveTransfer(transfer: Transfer, source: Batch): Promise<SaveTransferResult>;
  /**
   * Cancels the active transfer, as read, in one write: its qty given back to `source` (its qty and
   * available both rise), the incoming batch and its reference removed on condition that nothing was
   * taken from it (as `incoming` was read: a shipment whose qty is still the transfer's, all of it
   * available, none held), and the transfer recorded as cancelled. `changed` when any of that no longer
   * holds, and nothing was written. An incoming batch the store keeps in pieces (a sale of it spread
   * it, and its lines were cancelled since) is gathered first, and answers `changed`, to be read again.
   * `incoming-changed` when a write changed the incoming batch since the transfer made it (received,
   * or a PATCH), whatever it reads now: its units are that batch's, never the transfer's to take back.
   */
  cancelTransfer(transfer: Transfer, source: Batch, incoming: Batch): Promise<ConditionalWrite | 'incoming-changed'>;
  /** The shipment as stored (strongly consistent). */
  shipment(shipmentid: string): Promise<Shipment | undefined>;
  /**
   * Records the shipment and ships its units, all or nothing, in one write: each line as `after`
   * says, on condition that it is still as read (`before`), and each batch a part left (`batches`,
   * as read, wherever their stock puts them) its `qty` lowered by the units shipped from it, its
   * `available` unchanged (the units were the line's). The shipmentid must be new.
   */
  saveShipment(shipment: Shipment, lines: readonly LineShipped[], batches: readonly Batch[]): Promise<SaveShipmentResult>;
  /** Stores the import unless one with its importid exists: answers that one instead (strongly consistent), or nothing when this one was stored. */
  createImport(record: ImportRecord): Promise<ImportRecord | undefined>;
  /** The import as stored, its counts as its checks and chunks recorded them (strongly consistent). */
  importRecord(importid: string): Promise<ImportRecord | undefined>;
  /** Runs the import awaiting its file from `startedAt`, its file `file`; answers the import as it stands after, begun by this call or another. */
  beginImport(importid: string, file: string, startedAt: string): Promise<ImportRecord>;
  /** Whether the import's check of the rows from `firstRow` is recorded (strongly consistent). */
  importCheckRecorded(importid: string, firstRow: number): Promise<boolean>;
  /** Records the check and adds its rows to the import's total and its refusals to `refused`, in one write, once. The import must be running. */
  recordImportCheck(importid: string, check: ImportCheck): Promise<void>;
  /** What the rows of a chunk judge first, for these refs and change ids, in one read (domain/imports.ts, ImportRowsRead; strongly consistent). */
  importRowsRead(refs: readonly string[], changeIds: readonly string[]): Promise<ImportRowsRead>;
  /**
   * Claims the import's chunk of the rows from `firstRow` for this send, from any send that claimed
   * it before: answers the claim, or nothing when the chunk is recorded (strongly consistent).
   */
  claimImportChunk(importid: string, firstRow: number): Promise<ImportChunkClaim | undefined>;
  /**
   * This repository for the rows of a claimed chunk: each batch it adds or changes is written only
   * while the claim holds (the chunk neither claimed since by another send nor recorded), in the
   * write's own transaction; else ImportChunkTaken, with nothing of that write made.
   */
  forImportChunk(claim: ImportChunkClaim): BatchRepository;
  /**
   * Records the chunk and adds its outcomes to the import's counts, in one write, once, while the
   * claim holds: answers whether it did. A chunk recorded before, or claimed since, is left as it
   * is, and counted once. The import must be running.
   */
  recordImportChunk(claim: ImportChunkClaim, chunk: ImportChunk): Promise<boolean>;
  /** The counts of batches that the import's row, a count at a place, was planned to make (domain/place-counts.ts), once saved (strongly consistent). */
  placeCount(importid: string, row: number): Promise<readonly BatchCount[] | undefined>;
  /**
   * Saves what the import's row, a count at a place, is to make of its batches, unless a plan was
   * saved for the row before: answers the plan saved, this one or the one before. On a claimed
   * chunk's repository, only while the claim holds (else ImportChunkTaken, nothing saved).
   */
  savePlaceCount(importid: string, row: number, counts: readonly BatchCount[]): Promise<readonly BatchCount[]>;
  /** Ends the running import as failed, before any row was applied: its file refused as `refusal` says, or else its refused rows counted as invalid. */
  failImport(importid: string, finishedAt: string, refusal?: FileRefusal): Promise<void>;
  /** Ends the running import as completed, once every row of it is done. */
  completeImport(importid: string, finishedAt: string): Promise<void>;
  /** The first `limit` rows of the import that did not apply, by row number, from `fromRow` on. */
  importErrors(importid: string, limit: number, fromRow?: number): Promise<RowError[]>;
  /** The import's recorded chunks, by first row, from the one that holds `fromRow` (or the first after it), at most `limit`, each with its rows' errors. */
  importChunks(importid: string, fromRow: number, limit: number): Promise<ImportChunk[]>;
  /** The moment the rules of holds are judged at (domain/holds.ts): the system clock, or one a test sets. */
  currentTime(): Instant;
  /**
   * This repository for one request that must be answered by a deadline: once `deadline` aborts,
   * no call starts and a call in flight is abandoned, with StoreUnavailable. `observer`, when given,
   * hears what the store did for the request beyond what the answers show. `actor` is who makes the
   * request: every change of stock it writes names them (LOCAL_ACTOR when none is given).
   */
  withDeadline(deadline: AbortSignal, observer?: StoreObserver, actor?: string): BatchRepository;
}

/**
 * The store's work that its answers do not show, for a request's metrics and log: the rules never
 * read it, so a repository may tell it nothing.
 */
export interface StoreObserver {
  /** The store cancelled a transaction for a conflict with another or for throttling (these codes), and it is sent again. */
  transactionRetried(cancellationCodes: readonly string[]): void;
  /** A conditional write found what it was read against changed (another request got there first); nothing was written. */
  raceLost(): void;
}
