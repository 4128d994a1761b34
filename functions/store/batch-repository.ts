import { BatchGetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { HeldUnits, Hold, Instant } from '../../domain/holds';
import { type Adjustment, type CountBasis, countTimeOf } from '../../domain/adjustments';
import { type FileRefusal, type ImportCheck, type ImportChunk, type ImportChunkClaim, ImportChunkTaken, type ImportRecord, type ImportRowsRead, type RowError } from '../../domain/imports';
import type { BatchCount } from '../../domain/place-counts';
import type { LineShipped, Shipment } from '../../domain/shipments';
import type { Transfer } from '../../domain/transfers';
import { DEFAULT_LOCATION_ID, type Location } from '../../domain/locations';
import { type Allocation, type Batch, type LineMove, type ListedLine, type OrderLine, type Part, type Placement, type RoutedAllocation, hasStockLeft, locationOf, piecesAvailable } from '../../domain/model';
import type {
  AddBatchResult,
  BatchChangeWrite,
  BatchRepository,
  ConditionalWrite,
  ConfirmHoldResult,
  ExpiredHolds,
  ExpiredHoldsCursor,
  ExpiredUnits,
  CountedGiveBacks,
  HoldEnding,
  HoldPlacement,
  HoldToEnd,
  LocationRevision,
  MoveAllocationsResult,
  SaveAllocationResult,
  SaveAllocationsResult,
  SaveHoldResult,
  SaveShipmentResult,
  SaveTransferResult,
  SkuStock,
  StockRead,
  StoreObserver,
  StoredLocation,
} from '../../domain/ports';
import type { Routing } from '../../domain/routing';
import { type HistoryPage, type HistoryRequest, LOCAL_ACTOR } from '../../domain/stock-history';
import type { ListRequest, ListedSkus, SkuList } from '../../domain/stock-listings';
import { describeError, logger } from '../telemetry';
import { AllocationSaves, type GroupedTakeOutcome } from './allocation-saves';
import { ADDED_BY, CHANGE_COUNT, COUNTED_AT, EXHAUSTED_RANGE, STOCK_RANGE, batchDescriptionWrite, locationField, emptiedBatchMoveWrites, batchReferenceKey, batchWithStockKey, exhaustedBatchKey, knownSkuKey, newBatchWrites, skuPartition } from './batches';
import { type CountPlaces, sizingPlaces } from './held-units';
import { HoldGiveBacks, type HeldOnBatch } from './hold-give-backs';
import { HoldSaves } from './hold-saves';
import { importRowsRead } from './import-reads';
import { batchChangeHoldEndWrites } from './holds';
import { locatedLine, parseStoredItem, storedLine } from './items';
import { LocationReads, RoutingLocations } from './location-reads';
import { locationExistsCheck } from './locations';
import { LINES_RANGE, lineKey, orderPartition, outOfStockItem } from './lines';
import { LineWrites } from './line-writes';
import { writesOf } from './pieces';
import { type FoundBatch, KnownPieces, SpreadBatches, canSpread } from './spread-batches';
import { type ConflictRetryPolicy, type DocumentSender, MAX_TRANSACTION_ITEMS, StoreCalls, type TransactWriteItem, defaultConflictRetryPolicy } from './store-calls';
import { saveShipment, shipmentKey } from './shipments';
import { listedSkusPage } from './sku-lists';
import { type StockChange, changesSince, stockChangeWrite, stockHistoryPage } from './stock-changes';
import { adjustmentKey, adjustmentWrite } from './adjustments';
import { ImportWrites } from './imports';
import { TableReads } from './table-reads';
import { TakeGroups } from './take-groups';
import { TransferSaves, transferKey } from './transfers';
import { type World, systemWorld } from './world';

/*
 * The DynamoDB adapter of the repository port (domain/ports.ts): each method reads, decides and
 * writes; the items it writes, each with the condition that guards it, are their kind's module's
 * (batches.ts, pieces.ts, lines.ts, holds.ts, held-units.ts, locations.ts), a take's transaction is
 * allocation-saves.ts's, the reading, spreading and gathering of spread batches is
 * spread-batches.ts's, the locations' reads and the list kept for routing location-reads.ts's, the
 * reads of held units and the give-back of expired holds hold-give-backs.ts's, a hold's ending,
 * extension and confirm hold-saves.ts's, a transfer's transfers.ts's, and the reads every kind
 * shares table-reads.ts's. The time it reads and writes, the chance behind its picks and
 * backoffs, the ids it draws and its waits all come from its world (world.ts), handed on to each of
 * these, so that the simulator fixes a whole run by its seed.
 *
 * Capacity: an allocate costs one strongly consistent Query (1 RCU while the SKU has fewer than about
 * twenty batches with stock, however many are exhausted) and one transaction of two small writes
 * (2 x 2 WCU), three (6 WCU) when it empties the batch, plus 1 WCU for the line's index entry.
 * Every allocation of one SKU kept whole writes items in the same partition, so one hot SKU tops
 * out near 1,000 WCU/s / 2 WCU per batch update ~ 500 allocations/s, fewer when requests collide on
 * one batch item (TransactionConflict, retried by store-calls.ts).
 *
 * A hot SKU (docs/capacity.md, "A hot SKU", and spread-batches.ts): an allocation whose transaction
 * keeps meeting TransactionConflict on a batch item spreads that batch's units over pieces, and from
 * then on takes each line from a piece picked at random among those that hold it whole, so that
 * allocations meet each other on 64 items in 4 partitions instead of one. An allocation takes from
 * the pieces as this process last read them (KnownPieces), so it reads no more than for a batch kept
 * whole; other reads, and an allocation that does not know them, read all of them in one Query per
 * piece partition: costs paid only by a spread SKU. A read that finds a spread batch cooled (no take
 * for GATHER_AFTER_MS), or with nothing left in its pieces and no held units on them, gathers it
 * back. Holds take from pieces as allocations do, and end on them; a fall of the qty past the batch's
 * own units, a change that ends holds and the moves of lines gather it first.
 */

/** A batch's units outside its pieces: all of them for a batch kept whole. */
const ownUnits = (batch: Batch): number => batch.available - piecesAvailable(batch);

const firstBatch = (items: readonly Record<string, unknown>[]): (FoundBatch & { readonly inStockRange: boolean }) | undefined => {
  const stored = items.map(parseStoredItem).find((item) => item.kind === 'batch');
  return stored && { batch: stored.batch, inStockRange: stored.inStockRange, ...(stored.spread ? { spread: stored.spread } : {}) };
};

export class DynamoDbBatchRepository implements BatchRepository {
  private readonly calls: StoreCalls;
  private readonly spreads: SpreadBatches;
  private readonly allocations: AllocationSaves;
  private readonly reads: TableReads;
  private readonly storedLocations: LocationReads;
  private readonly holdGiveBacks: HoldGiveBacks;
  private readonly holds: HoldSaves;
  private readonly transfers: TransferSaves;
  private readonly lines: LineWrites;
  private readonly imports: ImportWrites;

  constructor(
    private readonly client: DocumentSender,
    private readonly tableName: string,
    private readonly conflictRetry: ConflictRetryPolicy = defaultConflictRetryPolicy,
    private readonly deadline?: AbortSignal,
    private readonly observer?: StoreObserver,
    private readonly world: World = systemWorld,
    private readonly knownPieces = new KnownPieces(),
    private readonly takeGroups = new TakeGroups<Placement, GroupedTakeOutcome>(),
    private readonly routing = new RoutingLocations(world),
    /** Who the changes of stock it writes are made by (domain/stock-history.ts). */
    private readonly actor = LOCAL_ACTOR,
    /** The claim on a chunk of an import's rows that each batch it adds or changes is written under (forImportChunk). */
    private readonly claim?: ImportChunkClaim,
  ) {
    this.calls = new StoreCalls(client, conflictRetry, world, deadline, observer);
    this.reads = new TableReads(this.calls, client, tableName);
    this.storedLocations = new LocationReads(this.reads, this.calls, tableName, routing);
    this.holdGiveBacks = new HoldGiveBacks(this.calls, this.reads, client, tableName, conflictRetry, knownPieces, world);
    this.holds = new HoldSaves(this.calls, this.reads, tableName, conflictRetry, knownPieces, world);
    const queryPartition = (partition: string, prefix?: string) => this.reads.partition(partition, prefix);
    this.spreads = new SpreadBatches(this.calls, tableName, conflictRetry, world, queryPartition, knownPieces);
    this.allocations = new AllocationSaves(this.calls, client, tableName, conflictRetry, this.spreads, knownPieces, takeGroups, world);
    this.transfers = new TransferSaves(this.calls, tableName, this.spreads, actor);
    this.lines = new LineWrites(this.calls, client, this.reads, tableName, this.spreads, world);
    this.imports = new ImportWrites(this.calls, this.reads, tableName);
  }

  withDeadline(deadline: AbortSignal, observer?: StoreObserver, actor = this.actor): DynamoDbBatchRepository {
    return new DynamoDbBatchRepository(this.client, this.tableName, this.conflictRetry, deadline, observer, this.world, this.knownPieces, this.takeGroups, this.routing, actor, this.claim);
  }

  forImportChunk(claim: ImportChunkClaim): DynamoDbBatchRepository {
    return new DynamoDbBatchRepository(this.client, this.tableName, this.conflictRetry, this.deadline, this.observer, this.world, this.knownPieces, this.takeGroups, this.routing, this.actor, claim);
  }

  /** The condition a write of a chunk's rows carries, last: that the claim on the chunk still holds. */
  private claimCondition(): TransactWriteItem[] {
    return this.claim ? [this.imports.claimHolds(this.claim)] : [];
  }

  /** A write of a chunk's rows refused: ImportChunkTaken when it was for the claim (read again, strongly consistent). */
  private async refuseUnlessClaimed(): Promise<void> {
    if (this.claim && !(await this.imports.claimStillHolds(this.claim))) throw new ImportChunkTaken(this.claim.importid, this.claim.firstRow);
  }

  currentTime(): Instant {
    return this.world.now();
  }

  async addBatch(batch: Batch, addedBy?: string): Promise<AddBatchResult> {
    const { ref } = batch;
    const location = locationOf(batch);
    // The built-in `default` needs no item; any other location is checked in the batch's own transaction, last.
    const locationCheck = location === DEFAULT_LOCATION_ID ? [] : [locationExistsCheck(this.tableName, location)];
    const now = this.currentTime();
    // Its units arrived with it: the change a count taken before it applies (stock-changes.ts), and its history's first entry.
    const added = stockChangeWrite(
      this.tableName,
      { ref, sku: batch.sku, ...locationField(batch), kind: 'added', delta: batch.qty, qtyAfter: batch.qty, reason: 'received', at: new Date(now).toISOString(), actor: this.actor },
      'added',
    );
    const writes = [...newBatchWrites(this.tableName, batch, now, this.actor, addedBy === undefined ? {} : { addedBy }), added, ...locationCheck];
    const cancellation = await this.calls.transactWrite([...writes, ...this.claimCondition()]);
    if (!cancellation) return { outcome: 'added' };
    if (!cancellation.some((reason) => reason.Code === 'ConditionalCheckFailed')) {
      throw new Error(`Batch transaction cancelled: ${cancellation.map((reason) => reason.Code).join(', ')}`);
    }
    await this.refuseUnlessClaimed();
    // Refused first, whatever else failed: a batch cannot be at a place that does not exist.
    if (locationCheck.length > 0 && cancellation[writes.length - 1]?.Code === 'ConditionalCheckFailed') return { outcome: 'unknown-location' };
    // A batch and its reference are only ever written together, so the reference names the batch in the way.
    const existing = await this.batch(ref);
    if (!existing) throw new Error(`Batch ${ref} exists and cannot be read`);
    return { outcome: 'exists', existing };
  }

  locations(): Promise<Location[]> {
    return this.storedLocations.all();
  }

  routingLocations(naming?: readonly string[]): Promise<Location[]> {
    return this.storedLocations.forRouting(naming);
  }

  location(id: string): Promise<StoredLocation | undefined> {
    return this.storedLocations.one(id);
  }

  saveLocation(location: Location, replacing?: LocationRevision): Promise<ConditionalWrite> {
    return this.storedLocations.save(location, this.currentTime(), replacing);
  }

  async stockOf(sku: string, read: StockRead = {}): Promise<SkuStock> {
    return this.spreads.stock(sku, () => this.stockRange(sku), read);
  }

  /** The SKU's stock range: whether the SKU is known, and its batches with stock, spread ones without their pieces. */
  private async stockRange(sku: string): Promise<{ known: boolean; found: FoundBatch[] }> {
    let known = false;
    const found: FoundBatch[] = [];
    for (const item of await this.reads.partition(skuPartition(sku), STOCK_RANGE)) {
      const stored = parseStoredItem(item);
      if (stored.kind === 'known-sku') known = true;
      else if (stored.kind === 'batch') found.push({ batch: stored.batch, ...(stored.spread ? { spread: stored.spread } : {}) });
      else throw new Error(`Item in the stock range of sku ${sku} is not a batch: ${JSON.stringify(stored)}`);
    }
    return { known, found };
  }

  async exhaustedBatchesOf(sku: string, { emptied = false }: { readonly emptied?: boolean } = {}): Promise<Batch[]> {
    return (await this.reads.partition(skuPartition(sku), EXHAUSTED_RANGE)).flatMap((item) => {
      const stored = parseStoredItem(item);
      if (stored.kind !== 'batch') throw new Error(`Item in the exhausted range of sku ${sku} is not a batch: ${JSON.stringify(stored)}`);
      return emptied || stored.batch.qty > 0 ? [stored.batch] : [];
    });
  }

  async allocationOf(orderid: string, sku: string): Promise<Allocation | undefined> {
    const item = await this.reads.item(lineKey(orderid, sku));
    return item && storedLine(item);
  }

  async saveAllocation(allocation: Allocation, batch: Batch): Promise<SaveAllocationResult> {
    const result = await this.saveAllocations([{ allocation, batch }]);
    // One whole line is a take and a record, 3 writes at most.
    if (result.outcome === 'too-many-writes') throw new Error(`A line of ${result.writes} writes`);
    if (result.outcome !== 'lines-exist') return result;
    const [existing] = result.existing;
    if (!existing) throw new Error('A cancelled allocation named no existing line');
    return { outcome: 'line-exists', existing };
  }

  async saveAllocations(placements: readonly Placement[]): Promise<SaveAllocationsResult> {
    return this.allocations.save(placements);
  }

  allocationWrites(placements: readonly Placement[]): { readonly writes: number; readonly maxWrites: number } {
    return this.allocations.writesOf(placements);
  }

  saveSplitLine(allocation: Allocation, parts: readonly Part[]): Promise<SaveAllocationResult> {
    return this.allocations.saveSplitLine(allocation, parts);
  }

  async saveHold(hold: Hold, placements: readonly HoldPlacement[]): Promise<SaveHoldResult> {
    return this.allocations.saveHold(hold, placements, this.currentTime());
  }

  heldOn(batch: Batch, which: HeldOnBatch, limit: number): Promise<HeldUnits[]> {
    return this.holdGiveBacks.heldOn(batch, which, limit);
  }

  freeExpiredHolds(batch: Batch, now: Instant, atLeast: number): Promise<number> {
    return this.holdGiveBacks.freeExpired(batch, now, atLeast);
  }

  expiredUnitsOn(batch: Batch, now: Instant, atLeast: number, after?: CountedGiveBacks): Promise<ExpiredUnits> {
    return this.holdGiveBacks.expiredUnits(batch, now, atLeast, after);
  }

  stillHeldOn(hold: Hold): Promise<string[]> {
    return this.holdGiveBacks.stillHeldOn(hold);
  }

  expiredHolds(before: Instant, limit: number, from?: ExpiredHoldsCursor): Promise<ExpiredHolds> {
    return this.holdGiveBacks.expiredHolds(before, limit, from);
  }

  hold(holdid: string): Promise<Hold | undefined> {
    return this.holds.hold(holdid);
  }

  endHold(hold: Hold, ending: HoldEnding, now: Instant, givenBackOn: readonly string[]): Promise<ConditionalWrite> {
    return this.holds.end(hold, ending, now, givenBackOn);
  }

  extendHold(hold: Hold, expiresAt: string, now: Instant): Promise<ConditionalWrite> {
    return this.holds.extend(hold, expiresAt, now);
  }

  confirmHold(hold: Hold, orderid: string, now: Instant, batches?: readonly Batch[]): Promise<ConfirmHoldResult> {
    return this.holds.confirm(hold, orderid, now, batches);
  }

  async transfer(transferid: string): Promise<Transfer | undefined> {
    const item = await this.reads.item(transferKey(transferid));
    const stored = item && parseStoredItem(item);
    return stored?.kind === 'transfer' ? stored.transfer : undefined;
  }

  saveTransfer(transfer: Transfer, source: Batch): Promise<SaveTransferResult> {
    return this.transfers.save(transfer, source, this.currentTime());
  }

  cancelTransfer(transfer: Transfer, source: Batch, incoming: Batch): Promise<ConditionalWrite | 'incoming-changed'> {
    return this.transfers.cancel(transfer, source, incoming, this.currentTime());
  }

  async adjustment(adjustmentid: string): Promise<Adjustment | undefined> {
    const item = await this.reads.item(adjustmentKey(adjustmentid));
    const stored = item && parseStoredItem(item);
    return stored?.kind === 'adjustment' ? stored.adjustment : undefined;
  }

  async countBasis(ref: string, countedAt: string): Promise<CountBasis> {
    // The count of changes first: one recorded after it makes the count's write fail, whether or not the Query below saw it.
    const item = await this.reads.item(batchReferenceKey(ref));
    const { changedSince, cameSince } = await changesSince(this.reads, ref, countedAt);
    const lastCountedAt = item?.[COUNTED_AT];
    const changesRead = item?.[CHANGE_COUNT];
    return { ...(typeof lastCountedAt === 'string' ? { lastCountedAt } : {}), changedSince, changesRead: typeof changesRead === 'number' ? changesRead : 0, ...(cameSince ? { cameSince } : {}) };
  }

  createImport(record: ImportRecord): Promise<ImportRecord | undefined> {
    return this.imports.create(record);
  }

  importRecord(importid: string): Promise<ImportRecord | undefined> {
    return this.imports.record(importid);
  }

  beginImport(importid: string, file: string, startedAt: string): Promise<ImportRecord> {
    return this.imports.begin(importid, file, startedAt);
  }

  importCheckRecorded(importid: string, firstRow: number): Promise<boolean> {
    return this.imports.checkRecorded(importid, firstRow);
  }

  recordImportCheck(importid: string, check: ImportCheck): Promise<void> {
    return this.imports.recordCheck(importid, check);
  }

  importRowsRead(refs: readonly string[], changeIds: readonly string[]): Promise<ImportRowsRead> {
    return importRowsRead(this.calls, this.client, this.tableName, refs, changeIds);
  }

  claimImportChunk(importid: string, firstRow: number): Promise<ImportChunkClaim | undefined> {
    return this.imports.claimChunk(importid, firstRow, this.world.newId());
  }

  recordImportChunk(claim: ImportChunkClaim, chunk: ImportChunk): Promise<boolean> {
    return this.imports.recordChunk(claim, chunk);
  }

  placeCount(importid: string, row: number): Promise<readonly BatchCount[] | undefined> {
    return this.imports.placeCount(importid, row);
  }

  async savePlaceCount(importid: string, row: number, counts: readonly BatchCount[]): Promise<readonly BatchCount[]> {
    if (await this.imports.savePlaceCount(importid, row, counts, this.claimCondition())) return counts;
    await this.refuseUnlessClaimed();
    const saved = await this.imports.placeCount(importid, row);
    if (!saved) throw new Error(`The count at a place of import ${importid}'s row ${row} was refused as planned, and then not found`);
    return saved;
  }

  failImport(importid: string, finishedAt: string, refusal?: FileRefusal): Promise<void> {
    return this.imports.fail(importid, finishedAt, refusal);
  }

  completeImport(importid: string, finishedAt: string): Promise<void> {
    return this.imports.complete(importid, finishedAt);
  }

  importErrors(importid: string, limit: number, fromRow?: number): Promise<RowError[]> {
    return this.imports.errors(importid, limit, fromRow);
  }

  importChunks(importid: string, fromRow: number, limit: number): Promise<ImportChunk[]> {
    return this.imports.chunks(importid, fromRow, limit);
  }

  async shipment(shipmentid: string): Promise<Shipment | undefined> {
    const item = await this.reads.item(shipmentKey(shipmentid));
    const stored = item && parseStoredItem(item);
    return stored?.kind === 'shipment' ? stored.shipment : undefined;
  }

  saveShipment(shipment: Shipment, lines: readonly LineShipped[], batches: readonly Batch[]): Promise<SaveShipmentResult> {
    return saveShipment(this.calls, this.tableName, shipment, lines, batches, this.actor, () => this.currentTime());
  }

  async recordOutOfStock(lines: readonly OrderLine[], routing?: Routing): Promise<void> {
    const refusedAt = this.currentTime();
    const puts = lines.map((line) => ({ TableName: this.tableName, Item: outOfStockItem(line, refusedAt, this.world, routing) }));
    try {
      // One line, one put; an order's lines, one transaction: either way one call on the refusal's path.
      if (puts.length === 1) await this.calls.call((options) => this.client.send(new PutCommand(puts[0]!), options));
      else if (puts.length > 1) await this.calls.transactWrite(puts.map((Put) => ({ Put })));
    } catch (error) {
      // The refusal is answered all the same: its notice is worth less than a 400 turned into a 503.
      // An error all the same: subscribers will miss that OutOfStock event.
      logger.error({ message: 'OutOfStock not recorded', lines, cause: describeError(error) });
    }
  }

  async batch(ref: string, sku?: string): Promise<Batch | undefined> {
    const skuOfBatch = sku ?? (await this.skuOfBatch(ref));
    return skuOfBatch === undefined ? undefined : this.spreads.batch(skuOfBatch, ref, () => this.batchItem(ref, skuOfBatch));
  }

  /**
   * The batch spread over pieces, as takes that keep meeting on its item spread it (docs/capacity.md,
   * "A hot SKU"), on their read of the SKU's stock (which gathers a cooled spread back first): the
   * simulator (tools/simulate) stands in with it for takes that its runs do not send; no function
   * calls it. A batch spread already, or with too few units to spread, is left as it is, as is one
   * whose gather or spread loses a race.
   */
  async spreadBatch(ref: string, sku: string): Promise<void> {
    const batch = (await this.stockOf(sku)).batches.find((found) => found.ref === ref);
    if (batch && canSpread(batch)) await this.spreads.spread(batch);
  }

  private async batchItem(ref: string, sku: string): Promise<FoundBatch | undefined> {
    const found = await this.storedBatchItem(ref, sku);
    // A batch kept whole in the stock range with nothing left is one a confirm emptied and was cut
    // off before moving out (HoldSaves.confirm). Every write addresses a batch at the key its stock says
    // (batchKey), which it is not at, so it is moved now, exactly as read; lost to another write,
    // it is read as that write left it.
    if (found?.inStockRange && found.spread === undefined && !hasStockLeft(found.batch)) {
      await this.calls.conditionalWrite(emptiedBatchMoveWrites(this.tableName, found.batch));
      return this.storedBatchItem(ref, sku);
    }
    return found;
  }

  private async storedBatchItem(ref: string, sku: string): Promise<(FoundBatch & { readonly inStockRange: boolean }) | undefined> {
    // The batch is at one of its two keys, whichever side of zero its stock is. A BatchGetItem is
    // isolated from a transaction item by item only, so while one moves the batch between its keys
    // it can find neither; a transactional read, serialized with that move, settles it.
    const keys = [batchWithStockKey(sku, ref), exhaustedBatchKey(sku, ref)];
    const { Responses } = await this.calls.call((options) =>
      this.client.send(new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } } }), options),
    );
    const read = firstBatch(Responses?.[this.tableName] ?? []);
    if (read) return read;
    const settled = await this.calls.transactGet(keys.map((Key) => ({ Get: { TableName: this.tableName, Key } })));
    return firstBatch(settled.flatMap((item) => (item ? [item] : [])));
  }

  async skuKnown(sku: string): Promise<boolean> {
    return (await this.reads.item(knownSkuKey(sku))) !== undefined;
  }

  stockHistory(sku: string, request: HistoryRequest): Promise<HistoryPage> {
    return stockHistoryPage(this.calls, this.client, this.tableName, sku, request, this.currentTime());
  }

  listedSkus(list: SkuList, request: ListRequest): Promise<ListedSkus> {
    return listedSkusPage(this.calls, this.client, this.tableName, list, request);
  }

  async allocationsOf(orderid: string): Promise<Allocation[]> {
    return (await this.reads.partition(orderPartition(orderid), LINES_RANGE)).map(storedLine);
  }

  async locatedLinesOf(orderid: string): Promise<RoutedAllocation[]> {
    return (await this.reads.partition(orderPartition(orderid), LINES_RANGE)).map(locatedLine);
  }

  linesOn(ref: string, limit: number): Promise<ListedLine[]> {
    return this.lines.linesOn(ref, limit);
  }

  cancelAllocation(allocation: Allocation, batches: readonly Batch[]): Promise<ConditionalWrite> {
    return this.lines.cancel(allocation, batches);
  }

  moveLinePart(line: Allocation, from: Batch, to: readonly Part[] | null, others: readonly Batch[]): Promise<ConditionalWrite> {
    return this.lines.movePart(line, from, to, others);
  }

  async changeBatch(
    batch: Batch,
    changed: Batch,
    ending: readonly HoldToEnd[] = [],
    now = this.currentTime(),
    adjustment?: Adjustment,
    changesRead = 0,
  ): Promise<BatchChangeWrite> {
    // A spread batch's own units take a change that does not lower its stock past them and ends no
    // hold; else it is gathered first.
    const fall = batch.available - changed.available;
    if ((fall > ownUnits(batch) || ending.length > 0) && !(await this.spreads.keptWhole([batch]))) return { outcome: 'changed' };
    const countedAt = adjustment && countTimeOf(adjustment);
    // A count's change happened at its moment: a later count applies only the changes after its own.
    const at = countedAt ?? new Date(now).toISOString();
    const reason = adjustment?.reason ?? 'correction';
    const arrived = batch.eta !== null && changed.eta === null;
    const stockChange: StockChange = {
      ref: batch.ref,
      sku: batch.sku,
      ...locationField(batch),
      kind: arrived ? 'arrived' : adjustment ? 'adjusted' : 'patched',
      delta: changed.qty - batch.qty,
      qtyAfter: changed.qty,
      reason,
      ...(adjustment ? { reference: adjustment.adjustmentid } : {}),
      at,
      actor: this.actor,
    };
    const change = [
      batchDescriptionWrite(this.tableName, changed, now, this.actor, reason, countedAt === undefined ? undefined : { countedAt, changesRead }),
      ...writesOf(batch).change(this.tableName, batch, changed),
      ...(adjustment ? [adjustmentWrite(this.tableName, adjustment)] : []),
      // A batch that comes onto the shelf (its eta set to null), or leaves it for a date, changes no qty, and is in the history all the same; a shipment given another date is not.
      ...(stockChange.delta === 0 && (batch.eta === null) === (changed.eta === null) ? [] : [stockChangeWrite(this.tableName, stockChange, adjustment?.adjustmentid ?? this.world.newId())]),
    ];
    const claimed = this.claimCondition();
    const ends = (some: readonly HoldToEnd[], places: CountPlaces) => {
      const writes = batchChangeHoldEndWrites(this.tableName, change, batch.ref, some, now, places);
      return { ...writes, items: [...writes.items, ...claimed] };
    };
    // The last of the holds are the ones the change keeps with it (the port's promise): the first end on their own.
    let fitting = ending.length;
    // Sized for the most the send may make of them, whichever pieces it picks.
    while (fitting > 0 && ends(ending.slice(ending.length - fitting), sizingPlaces()).items.length > MAX_TRANSACTION_ITEMS) fitting--;
    if (fitting < ending.length) {
      // The holds are then ended apart from the change, with no claim to carry: a send whose claim was taken ends none.
      await this.refuseUnlessClaimed();
      return { outcome: 'too-many-holds', fitting };
    }
    const outcome = await this.holds.write((places) => ends(ending, places));
    if (outcome === 'changed') await this.refuseUnlessClaimed();
    return { outcome };
  }

  moveAllocations(from: Batch, moves: readonly LineMove[], batches: readonly Batch[]): Promise<MoveAllocationsResult> {
    return this.lines.moveAll(from, moves, batches);
  }

  async batchAddedBy(ref: string): Promise<string | undefined> {
    const addedBy = (await this.reads.item(batchReferenceKey(ref)))?.[ADDED_BY];
    return typeof addedBy === 'string' ? addedBy : undefined;
  }

  private async skuOfBatch(ref: string): Promise<string | undefined> {
    const item = await this.reads.item(batchReferenceKey(ref));
    const stored = item && parseStoredItem(item);
    return stored?.kind === 'batch-reference' ? stored.sku : undefined;
  }
}
