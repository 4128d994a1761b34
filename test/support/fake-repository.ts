import { type HeldUnits, type Hold, type Instant, earlierOf, hasExpired, linesOfHold } from '../../domain/holds';
import { DEFAULT_LOCATION_ID, type Location } from '../../domain/locations';
import {
  type Allocation,
  type Batch,
  type LineMove,
  type ListedLine,
  type OrderLine,
  type Part,
  type Placement,
  type RoutedAllocation,
  hasStockLeft,
  heldOf,
  isSameBatch,
  locationOf,
  partsOf,
  takesOf,
} from '../../domain/model';
import type { Routing } from '../../domain/routing';
import { type Adjustment, type CountBasis, countTimeOf } from '../../domain/adjustments';
import { type FileRefusal, type ImportCheck, type ImportChunk, type DescribedBatch, type ImportChunkClaim, ImportChunkTaken, type ImportCounts, type ImportRowsRead, type ImportRecord, type RowCounts, type RowError, countsOf } from '../../domain/imports';
import type { BatchCount } from '../../domain/place-counts';
import type { LineShipped, Shipment } from '../../domain/shipments';
import type { HistoryEntry, HistoryPage, HistoryRequest } from '../../domain/stock-history';
import type { ListRequest, ListedSkus, SkuList } from '../../domain/stock-listings';
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
  StoredLocation,
} from '../../domain/ports';
import { type Transfer, incomingBatchOf } from '../../domain/transfers';

/**
 * The repository port in memory, with the same all-or-nothing answers as the DynamoDB adapter:
 * every write that the adapter makes on condition checks the same condition against what it holds.
 */
/** Claims made by every fake repository and every view of one: each claim's id is its own. */
let claimsMade = 0;

export class FakeRepository implements BatchRepository {
  /** The writes of one transaction, DynamoDB's bound. */
  static readonly MAX_WRITES = 100;
  readonly batches = new Map<string, Batch>();
  /** In the order they were allocated: a moved line keeps its place, as it keeps its allocation time. */
  readonly lines = new Map<string, Allocation>();
  /** Batches a change or a transfer's take has written since they were made (the adapter's `incomingOf`, removed). */
  private readonly changedSinceMade = new Set<string>();
  /** Every line refused for lack of stock, in the order refused. */
  /** Each line refused for lack of stock, with the `destination` and `location` of its request when it named them. */
  readonly outOfStock: (OrderLine & Routing)[] = [];
  readonly holds = new Map<string, Hold>();
  /** The locations stored, by id, each with its revision: the built-in `default` only once replaced. */
  readonly locationItems = new Map<string, StoredLocation>();
  /** Transfers by transferid, as last written. */
  readonly transfers = new Map<string, Transfer>();
  /** Shipments by shipmentid. */
  readonly shipments = new Map<string, Shipment>();
  /** Adjustments by adjustmentid. */
  readonly adjustments = new Map<string, Adjustment>();
  /** The time of the last count applied to each batch, by ref. */
  readonly lastCounts = new Map<string, string>();
  /** Each change of a batch's qty, as the adapter records them for the counts, and how many each batch has recorded. */
  readonly stockChanges: { readonly ref: string; readonly delta: number; readonly at: string }[] = [];
  private readonly changeCounts = new Map<string, number>();
  /** Each hold's units on a batch, by heldKey, as the adapter keeps a record of their own. */
  readonly held = new Map<string, HeldUnits & { readonly ref: string }>();
  /**
   * The moves one write carries: the adapter's carry as many as fit DynamoDB's 100 items, this
   * many here, so that a test can cut a change between two writes.
   */
  movesPerWrite = Number.POSITIVE_INFINITY;
  /** The holds a change of a batch's qty ends in its own write: as many as fit 100 items in the adapter's, this many here. */
  holdEndingsPerChange = Number.POSITIVE_INFINITY;
  /** The expired holds one give-back frees on a batch: as many as one transaction carries in the adapter's (40 at most), this many here. */
  holdsFreedPerWrite = Number.POSITIVE_INFINITY;
  /** The time the rules of holds are judged at: set it to move time on. */
  now: Instant = Date.parse('2026-11-25T10:00:00.000Z');

  currentTime(): Instant {
    return this.now;
  }

  /** The import row that added each batch an import row added, by ref. */
  readonly addedBy = new Map<string, string>();
  /** When each batch came onto the shelf (added in stock, or arrived), as the adapter's records of changes say by their kind. */
  private readonly cameOnShelf: { readonly ref: string; readonly at: string }[] = [];

  async addBatch(batch: Batch, addedBy?: string): Promise<AddBatchResult> {
    const location = locationOf(batch);
    if (location !== DEFAULT_LOCATION_ID && !this.locationItems.has(location)) return { outcome: 'unknown-location' };
    const existing = this.batches.get(batch.ref);
    if (existing) return { outcome: 'exists', existing };
    this.batches.set(batch.ref, batch);
    if (addedBy !== undefined) this.addedBy.set(batch.ref, addedBy);
    if (batch.qty > 0) this.recordChange(batch.ref, batch.qty, new Date(this.now).toISOString());
    if (batch.eta === null) this.cameOnShelf.push({ ref: batch.ref, at: new Date(this.now).toISOString() });
    return { outcome: 'added' };
  }

  async batchAddedBy(ref: string): Promise<string | undefined> {
    return this.addedBy.get(ref);
  }

  async locations(): Promise<Location[]> {
    return [...this.locationItems.values()].map(({ location }) => location);
  }

  /** Never stale: the adapter's staleness is its own to test (test/integration/locations.test.ts). */
  routingLocations(): Promise<Location[]> {
    return this.locations();
  }

  async location(id: string): Promise<StoredLocation | undefined> {
    return this.locationItems.get(id);
  }

  /** The adapter's condition: none stored when creating, the revision read still stored when replacing. */
  async saveLocation(location: Location, replacing?: LocationRevision): Promise<ConditionalWrite> {
    const stored = this.locationItems.get(location.id);
    if (stored?.revision !== replacing) return 'changed';
    const revision = ((replacing as unknown as number | undefined) ?? 0) + 1;
    this.locationItems.set(location.id, { location, revision: revision as unknown as LocationRevision });
    return 'saved';
  }

  async stockOf(sku: string): Promise<SkuStock> {
    const batches = [...this.batches.values()].filter((batch) => batch.sku === sku);
    return { known: batches.length > 0, batches: batches.filter(hasStockLeft) };
  }

  async exhaustedBatchesOf(sku: string, { emptied = false }: { readonly emptied?: boolean } = {}): Promise<Batch[]> {
    return [...this.batches.values()].filter((batch) => batch.sku === sku && !hasStockLeft(batch) && (emptied || batch.qty > 0));
  }

  async skuKnown(sku: string): Promise<boolean> {
    return (await this.stockOf(sku)).known;
  }

  /** Each SKU's history, newest first, as a test puts it there: the adapter's is its records of changes. */
  readonly histories = new Map<string, HistoryEntry[]>();

  async stockHistory(sku: string, { location, limit, after }: HistoryRequest): Promise<HistoryPage> {
    const all = (this.histories.get(sku) ?? []).filter((entry) => location === undefined || entry.location === location);
    const from = after === undefined ? 0 : all.findIndex(({ position }) => JSON.stringify(position) === JSON.stringify(after)) + 1;
    const entries = all.slice(from, from + limit);
    const last = entries.at(-1);
    return from + limit < all.length && last ? { entries, next: last.position } : { entries };
  }

  /** In one part, sorted by SKU: the adapter's parts are its own to test (test/integration/listings.test.ts). */
  async listedSkus(list: SkuList, { limit, after }: ListRequest): Promise<ListedSkus> {
    const listed = [...this.batches.values()].filter((batch) => list.kind === 'all' || locationOf(batch) === list.location).map(({ sku }) => sku);
    const skus = [...new Set(listed)].sort().filter((sku) => after === undefined || sku > after.sku);
    const page = skus.slice(0, limit);
    const last = page.at(-1);
    return skus.length > limit && last !== undefined ? { skus: page, next: { part: 0, sku: last } } : { skus: page };
  }

  async allocationOf(orderid: string, sku: string): Promise<Allocation | undefined> {
    return this.lines.get(lineKey(orderid, sku));
  }

  async saveAllocation(allocation: Allocation, batch: Batch): Promise<SaveAllocationResult> {
    const existing = this.lines.get(lineKey(allocation.orderid, allocation.sku));
    if (existing) return { outcome: 'line-exists', existing };
    if (!this.take(batch, allocation.qty)) return { outcome: 'batch-changed' };
    this.lines.set(lineKey(allocation.orderid, allocation.sku), allocation);
    return { outcome: 'saved' };
  }

  async saveSplitLine(allocation: Allocation, parts: readonly Part[]): Promise<SaveAllocationResult> {
    const existing = this.lines.get(lineKey(allocation.orderid, allocation.sku));
    if (existing) return { outcome: 'line-exists', existing };
    if (parts.some(({ batch, qty }) => !this.canTake(batch, qty))) return { outcome: 'batch-changed' };
    for (const { batch, qty } of parts) this.take(batch, qty);
    this.lines.set(lineKey(allocation.orderid, allocation.sku), allocation);
    return { outcome: 'saved' };
  }

  allocationWrites(placements: readonly Placement[]): { readonly writes: number; readonly maxWrites: number } {
    // As the store counts them, before it sends anything: each line's record and each part's, and
    // each take, two when it empties its batch.
    const writes = placements.reduce(
      (sum, placement) => sum + (placement.parts ? 1 : 0) + takesOf(placement).reduce((takes, { batch, qty }) => takes + (hasStockLeft({ ...batch, available: batch.available - qty }) ? 2 : 3), 0),
      0,
    );
    return { writes, maxWrites: FakeRepository.MAX_WRITES };
  }

  async saveAllocations(placements: readonly Placement[]): Promise<SaveAllocationsResult> {
    const { writes, maxWrites } = this.allocationWrites(placements);
    if (writes > maxWrites) return { outcome: 'too-many-writes', writes, maxWrites };
    const existing = placements.flatMap(({ allocation }) => this.lines.get(lineKey(allocation.orderid, allocation.sku)) ?? []);
    if (existing.length > 0) return { outcome: 'lines-exist', existing };
    const short = placements.some((placement) => takesOf(placement).some(({ batch, qty }) => !this.canTake(batch, qty)));
    if (short) return { outcome: 'batch-changed' };
    for (const placement of placements) {
      if (placement.parts) await this.saveSplitLine(placement.allocation, placement.parts);
      else await this.saveAllocation(placement.allocation, placement.batch);
    }
    return { outcome: 'saved' };
  }

  async saveHold(hold: Hold, placements: readonly HoldPlacement[]): Promise<SaveHoldResult> {
    const existing = this.holds.get(hold.holdid);
    if (existing) return { outcome: 'hold-exists', existing };
    if (placements.some(({ line, batch }) => !this.canTake(batch, line.qty))) return { outcome: 'batch-changed' };
    for (const { line, batch } of placements) {
      this.take(batch, line.qty);
      const stored = this.batches.get(batch.ref) as Batch;
      this.batches.set(batch.ref, { ...stored, held: heldOf(stored) + line.qty });
      this.held.set(heldKey(hold.holdid, batch.ref), { holdid: hold.holdid, qty: line.qty, expiresAt: hold.expiresAt, ref: batch.ref });
    }
    this.holds.set(hold.holdid, { ...hold, status: 'active' });
    return { outcome: 'saved' };
  }

  async heldOn({ ref }: Batch, which: { readonly expiredBy: Instant } | { readonly latestFirst: true }, limit: number): Promise<HeldUnits[]> {
    const onBatch = [...this.held.values()].filter((units) => units.ref === ref);
    const picked = 'expiredBy' in which ? onBatch.filter(({ expiresAt }) => hasExpired(expiresAt, which.expiredBy)) : onBatch;
    const order = 'expiredBy' in which ? 1 : -1;
    return picked
      .sort((a, b) => order * (a.expiresAt < b.expiresAt ? -1 : a.expiresAt > b.expiresAt ? 1 : 0))
      .slice(0, limit)
      .map(({ holdid, qty, expiresAt }) => ({ holdid, qty, expiresAt }));
  }

  async freeExpiredHolds(batch: Batch, now: Instant, atLeast: number): Promise<number> {
    const freeing = await this.expiredToFree(batch, now, atLeast);
    for (const { holdid, qty } of freeing) this.giveBack(holdid, batch.ref, qty);
    return freeing.reduce((sum, { qty }) => sum + qty, 0);
  }

  async expiredUnitsOn(batch: Batch, now: Instant, atLeast: number, after: CountedGiveBacks = { holds: [], records: 0 }): Promise<ExpiredUnits> {
    const freeing = await this.expiredToFree(batch, now, atLeast, new Set(after.holds));
    const gone = new Set([...after.holds, ...freeing.map(({ holdid }) => holdid)]);
    const left = [...this.held.values()].filter((units) => units.ref === batch.ref && !gone.has(units.holdid)).map(({ expiresAt }) => expiresAt).reduce(earlierOf, undefined);
    const counted = { holds: [...gone], records: after.records + freeing.length };
    return { units: freeing.reduce((sum, { qty }) => sum + qty, 0), counted, allRead: true, ...(left === undefined ? {} : { boundLeft: left }) };
  }

  /** The expired holds' units a give-back of at least `atLeast` frees, earliest first, at most holdsFreedPerWrite of them, those of `gone` given back already. */
  private async expiredToFree(batch: Batch, now: Instant, atLeast: number, gone: ReadonlySet<string> = new Set()): Promise<HeldUnits[]> {
    const freeing: HeldUnits[] = [];
    let units = 0;
    const expired = (await this.heldOn(batch, { expiredBy: now }, Number.POSITIVE_INFINITY)).filter(({ holdid }) => !gone.has(holdid));
    for (const held of expired.slice(0, this.holdsFreedPerWrite)) {
      if (units >= atLeast) break;
      freeing.push(held);
      units += held.qty;
    }
    return freeing;
  }

  async stillHeldOn(hold: Hold): Promise<string[]> {
    return hold.lines.filter(({ batchref }) => this.held.has(heldKey(hold.holdid, batchref))).map(({ batchref }) => batchref);
  }

  async hold(holdid: string): Promise<Hold | undefined> {
    return this.holds.get(holdid);
  }

  async endHold(hold: Hold, ending: HoldEnding, now: Instant, givenBackOn: readonly string[]): Promise<ConditionalWrite> {
    if (!this.endsAsRead({ hold, ending, givenBackOn }, now)) return 'changed';
    this.end({ hold, ending, givenBackOn });
    return 'saved';
  }

  /** The hold is active and as read, on the side of its expiry its ending says, and its units recorded on each batch it gives back on. */
  private endsAsRead({ hold, ending, givenBackOn }: HoldToEnd, now: Instant): boolean {
    const stored = this.holds.get(hold.holdid);
    const lasts = !hasExpired(hold.expiresAt, now);
    if (stored?.status !== 'active' || stored.expiresAt !== hold.expiresAt || lasts !== (ending === 'released')) return false;
    return hold.lines.filter(({ batchref }) => givenBackOn.includes(batchref)).every(({ batchref }) => this.held.has(heldKey(hold.holdid, batchref)));
  }

  /** Ends the hold, its units given back on the batches named; on `countedOn`, whose write the caller makes, only its record goes. */
  private end({ hold, ending, givenBackOn }: HoldToEnd, countedOn?: string): void {
    for (const { batchref, qty } of hold.lines.filter(({ batchref }) => givenBackOn.includes(batchref))) {
      if (batchref === countedOn) this.held.delete(heldKey(hold.holdid, batchref));
      else this.giveBack(hold.holdid, batchref, qty);
    }
    this.holds.set(hold.holdid, { ...(this.holds.get(hold.holdid) as Hold), status: ending });
  }

  private giveBack(holdid: string, ref: string, qty: number): void {
    this.held.delete(heldKey(holdid, ref));
    const batch = this.batches.get(ref) as Batch;
    this.batches.set(ref, withHeld({ ...batch, available: batch.available + qty }, heldOf(batch) - qty));
  }

  async extendHold(hold: Hold, expiresAt: string, now: Instant): Promise<ConditionalWrite> {
    if (!this.lastsAsRead(hold, now)) return 'changed';
    const units = (batchref: string) => this.held.get(heldKey(hold.holdid, batchref));
    if (!hold.lines.every(({ batchref }) => units(batchref)?.expiresAt === hold.expiresAt)) return 'changed';
    for (const { batchref } of hold.lines) this.held.set(heldKey(hold.holdid, batchref), { ...(units(batchref) as HeldUnits & { ref: string }), expiresAt });
    this.holds.set(hold.holdid, { ...hold, expiresAt });
    return 'saved';
  }

  /** The adapter's conditions, but a batch the confirm empties needs no second round: the fake has no stock range to leave. */
  async confirmHold(hold: Hold, orderid: string, now: Instant): Promise<ConfirmHoldResult> {
    const existing = hold.lines.flatMap(({ sku }) => this.lines.get(lineKey(orderid, sku)) ?? []);
    if (existing.length > 0) return { outcome: 'lines-exist', existing };
    const recorded = (batchref: string) => this.held.has(heldKey(hold.holdid, batchref));
    if (!this.lastsAsRead(hold, now) || !hold.lines.every(({ batchref }) => recorded(batchref))) return { outcome: 'changed' };
    for (const { qty, batchref } of hold.lines) {
      this.held.delete(heldKey(hold.holdid, batchref));
      const batch = this.batches.get(batchref) as Batch;
      this.batches.set(batchref, withHeld(batch, heldOf(batch) - qty));
    }
    for (const { location: _, ...line } of linesOfHold(hold, orderid)) this.lines.set(lineKey(orderid, line.sku), line);
    this.holds.set(hold.holdid, { ...hold, status: 'confirmed', orderid });
    return { outcome: 'saved' };
  }

  /** Ordered by expiry then holdid; a page's `next` is its last hold, and the next page starts after it. */
  async expiredHolds(before: Instant, limit: number, from?: ExpiredHoldsCursor): Promise<ExpiredHolds> {
    const position = ({ expiresAt, holdid }: Hold) => `${expiresAt} ${holdid}`;
    const after = from as unknown as Hold | undefined;
    const expired = [...this.holds.values()]
      .filter(({ status, expiresAt }) => status === 'active' && hasExpired(expiresAt, before))
      .filter((hold) => after === undefined || position(hold) > position(after))
      .sort((a, b) => (position(a) < position(b) ? -1 : 1));
    const page = expired.slice(0, limit);
    const last = page.at(-1);
    return { holdids: page.map(({ holdid }) => holdid), ...(expired.length > limit && last ? { next: last as unknown as ExpiredHoldsCursor } : {}) };
  }

  async recordOutOfStock(lines: readonly OrderLine[], routing: Routing = {}): Promise<void> {
    this.outOfStock.push(...lines.map((line) => ({ ...line, ...routing })));
  }

  async batch(ref: string): Promise<Batch | undefined> {
    return this.batches.get(ref);
  }

  async allocationsOf(orderid: string): Promise<Allocation[]> {
    return [...this.lines.values()].filter((line) => line.orderid === orderid);
  }

  /** Where its batch is: the fake never removes a batch a line is on. */
  async locatedLinesOf(orderid: string): Promise<RoutedAllocation[]> {
    return (await this.allocationsOf(orderid)).map((line) => ({ ...line, location: locationOf(this.batches.get(line.batchref) ?? {}) }));
  }

  /** A split line by each of its parts. */
  async linesOn(ref: string, limit: number): Promise<ListedLine[]> {
    return [...this.lines.values()]
      .flatMap((line): ListedLine[] => {
        if (!line.split) return line.batchref === ref && line.qty > 0 ? [line] : [];
        const part = line.split.parts.find(({ batchref }) => batchref === ref);
        return part ? [{ orderid: line.orderid, sku: line.sku, qty: part.qty, batchref: ref, isPart: true }] : [];
      })
      .reverse()
      .slice(0, limit);
  }

  async cancelAllocation(allocation: Allocation, batches: readonly Batch[]): Promise<ConditionalWrite> {
    if (!this.hasLineAsRead(allocation) || batches.some(({ ref }) => !this.batches.has(ref))) return 'changed';
    this.removeLine(allocation, true);
    for (const { batchref, qty } of partsOf(allocation)) {
      const batch = this.batches.get(batchref) as Batch;
      this.batches.set(batchref, { ...batch, available: batch.available + qty });
    }
    return 'saved';
  }

  async moveLinePart(line: Allocation, from: Batch, to: readonly Part[] | null, others: readonly Batch[]): Promise<ConditionalWrite> {
    const part = line.split?.parts.find(({ batchref }) => batchref === from.ref);
    if (!line.split || !part || !this.hasLineAsRead(line) || !this.keepsItsSide(from, part.qty) || (to && !to.every(({ batch, qty }) => this.canTake(batch, qty)))) return 'changed';
    if (!to && others.some(({ ref }) => !this.batches.has(ref))) return 'changed';
    if (to && to.reduce((sum, { qty }) => sum + qty, 0) !== part.qty) throw new Error(`Moving ${part.qty} units of a part as other units`);
    const source = this.batches.get(from.ref) as Batch;
    this.batches.set(source.ref, { ...source, available: source.available + part.qty });
    const key = lineKey(line.orderid, line.sku);
    if (!to) {
      for (const other of line.split.parts.filter(({ batchref }) => batchref !== from.ref)) {
        const batch = this.batches.get(other.batchref) as Batch;
        this.batches.set(other.batchref, { ...batch, available: batch.available + other.qty });
      }
      this.removeLine(line);
      return 'saved';
    }
    for (const { batch, qty } of to) this.take(batch, qty);
    const brought = (batchref: string) => to.find(({ batch }) => batch.ref === batchref)?.qty ?? 0;
    const added = to.filter(({ batch }) => !line.split?.parts.some(({ batchref }) => batchref === batch.ref)).map(({ batch, qty }) => ({ batchref: batch.ref, qty, location: locationOf(batch) }));
    const parts = line.split.parts.flatMap((each) => (each.batchref === from.ref ? added : [{ ...each, qty: each.qty + brought(each.batchref) }]));
    this.lines.set(key, { ...line, batchref: parts[0]?.batchref ?? line.batchref, split: { ...line.split, parts } });
    return 'saved';
  }

  async changeBatch(batch: Batch, changed: Batch, ending: readonly HoldToEnd[] = [], now = this.currentTime(), adjustment?: Adjustment, changesRead = 0): Promise<BatchChangeWrite> {
    const current = this.batches.get(batch.ref);
    const asRead = current !== undefined && isSameBatch(current, batch);
    if (ending.length > this.holdEndingsPerChange) return { outcome: 'too-many-holds', fitting: this.holdEndingsPerChange };
    const withThisBatch = ending.map((toEnd) => ({ ...toEnd, givenBackOn: [batch.ref, ...toEnd.givenBackOn] }));
    if (!asRead || !withThisBatch.every((toEnd) => this.endsAsRead(toEnd, now))) return { outcome: 'changed' };
    // The adjustment's conditions: a new adjustmentid, and no later count applied to the batch; any other change, none at or after its moment.
    if (adjustment && this.adjustments.has(adjustment.adjustmentid)) return { outcome: 'changed' };
    const countedAt = adjustment && countTimeOf(adjustment);
    const lastCount = this.lastCounts.get(batch.ref);
    if (countedAt !== undefined && lastCount !== undefined && lastCount > countedAt) return { outcome: 'changed' };
    if (countedAt !== undefined && (this.changeCounts.get(batch.ref) ?? 0) !== changesRead) return { outcome: 'changed' };
    const at = countedAt ?? new Date(now).toISOString();
    if (countedAt === undefined && !this.changesAfterCounts(batch.ref, at)) return { outcome: 'changed' };
    if (adjustment) this.adjustments.set(adjustment.adjustmentid, adjustment);
    if (countedAt !== undefined) this.lastCounts.set(batch.ref, countedAt);
    if (changed.qty !== batch.qty) this.recordChange(batch.ref, changed.qty - batch.qty, at);
    if (batch.eta !== null && changed.eta === null) this.cameOnShelf.push({ ref: batch.ref, at });
    for (const toEnd of withThisBatch) this.end(toEnd, batch.ref);
    this.batches.set(batch.ref, changed);
    this.changedSinceMade.add(batch.ref);
    return { outcome: 'saved' };
  }

  async moveAllocations(from: Batch, moves: readonly LineMove[], batches: readonly Batch[]): Promise<MoveAllocationsResult> {
    const written = moves.slice(0, this.movesPerWrite);
    const qtyTo = (ref: string) => written.reduce((sum, { line, to }) => (to === ref ? sum + line.qty : sum), 0);
    const given = written.reduce((sum, { line }) => sum + line.qty, 0);
    const takes = [...new Set(written.flatMap(({ to }) => to ?? []))].map((ref) => ({ batch: batches.find((found) => found.ref === ref), qty: qtyTo(ref) }));
    if (takes.some(({ batch }) => batch === undefined)) throw new Error('Moving lines to a batch that was not read');
    const linesAsRead = written.every(({ line }) => this.hasLineAsRead(line));
    if (!linesAsRead || !this.keepsItsSide(from, given) || !takes.every(({ batch, qty }) => this.canTake(batch!, qty))) return { outcome: 'changed' };
    const source = this.batches.get(from.ref) as Batch;
    this.batches.set(source.ref, { ...source, available: source.available + given });
    for (const { batch, qty } of takes) this.take(batch!, qty);
    for (const { line, to } of written) {
      const key = lineKey(line.orderid, line.sku);
      if (to) this.lines.set(key, { ...line, batchref: to });
      else this.removeLine(line);
    }
    return { outcome: 'saved', moved: written.length };
  }

  async transfer(transferid: string): Promise<Transfer | undefined> {
    return this.transfers.get(transferid);
  }

  /** The adapter's conditions: a new transferid, a ref no batch has, and the source's take as a line's; its qty falls with its available. */
  async saveTransfer(transfer: Transfer, source: Batch): Promise<SaveTransferResult> {
    const existing = this.transfers.get(transfer.transferid);
    if (existing) return { outcome: 'transfer-exists', existing };
    if (this.batches.has(transfer.transferid)) return { outcome: 'batch-exists' };
    const at = new Date(this.now).toISOString();
    if (!this.changesAfterCounts(source.ref, at)) return { outcome: 'batch-changed' };
    if (!this.take(source, transfer.qty)) return { outcome: 'batch-changed' };
    const taken = this.batches.get(source.ref) as Batch;
    this.batches.set(source.ref, { ...taken, qty: taken.qty - transfer.qty });
    this.recordChange(source.ref, -transfer.qty, at);
    this.changedSinceMade.add(source.ref);
    this.batches.set(transfer.transferid, incomingBatchOf(transfer));
    this.recordChange(transfer.transferid, transfer.qty, at);
    this.transfers.set(transfer.transferid, transfer);
    return { outcome: 'saved' };
  }

  /**
   * The adapter's conditions: the transfer active, its incoming batch untouched (a shipment of the
   * transfer's qty, all of it available, none held) and never changed since it was made, its source
   * as read.
   */
  async cancelTransfer(transfer: Transfer, source: Batch): Promise<ConditionalWrite | 'incoming-changed'> {
    if (this.changedSinceMade.has(transfer.transferid)) return 'incoming-changed';
    const incoming = this.batches.get(transfer.transferid);
    const stored = this.batches.get(source.ref);
    const untouched = incoming !== undefined && incoming.eta !== null && incoming.qty === transfer.qty && incoming.available === transfer.qty && heldOf(incoming) === 0;
    if (this.transfers.get(transfer.transferid)?.status !== 'active' || !untouched || stored?.qty !== source.qty) return 'changed';
    if (!this.changesAfterCounts(source.ref, new Date(this.now).toISOString())) return 'changed';
    this.batches.set(source.ref, { ...stored, qty: stored.qty + transfer.qty, available: stored.available + transfer.qty });
    this.recordChange(source.ref, transfer.qty, new Date(this.now).toISOString());
    this.batches.delete(transfer.transferid);
    this.transfers.set(transfer.transferid, { ...transfer, status: 'cancelled' });
    return 'saved';
  }

  /** Its calls answer at once: a deadline never passes in one. */
  withDeadline(): BatchRepository {
    return this;
  }

  /** The adapter's condition on a take: what is available covers the qty. */
  private canTake({ ref }: Batch, qty: number): boolean {
    const stored = this.batches.get(ref);
    return stored !== undefined && stored.available >= qty;
  }

  private take(batch: Batch, qty: number): boolean {
    if (!this.canTake(batch, qty)) return false;
    const stored = this.batches.get(batch.ref) as Batch;
    this.batches.set(batch.ref, { ...stored, available: stored.available - qty });
    return true;
  }

  /**
   * The adapter's condition on the batch lines leave, given back `qty`: exactly as read when that
   * takes it across the edge of the stock range, otherwise still on the side it was read on, and
   * left there.
   */
  private keepsItsSide(from: Batch, qty: number): boolean {
    const stored = this.batches.get(from.ref);
    if (!stored) return false;
    const side = hasStockLeft(from);
    if (hasStockLeft({ ...from, available: from.available + qty }) !== side) return isSameBatch(stored, from);
    return hasStockLeft(stored) === side && hasStockLeft({ ...stored, available: stored.available + qty }) === side;
  }

  private lastsAsRead(hold: Hold, now: Instant): boolean {
    const stored = this.holds.get(hold.holdid);
    return stored?.status === 'active' && stored.expiresAt === hold.expiresAt && !hasExpired(hold.expiresAt, now);
  }

  /** The adapter's: a line that shipped units stays, as what it shipped, holding none; a cancel marks it so. */
  private removeLine(line: Allocation, cancelled = false): void {
    const key = lineKey(line.orderid, line.sku);
    if (!line.shipped) this.lines.delete(key);
    else this.lines.set(key, { ...line, qty: 0, ...(line.split ? { split: { ...line.split, parts: [] } } : {}), ...(cancelled ? { cancelled: true } : {}) });
  }

  async adjustment(adjustmentid: string): Promise<Adjustment | undefined> {
    return this.adjustments.get(adjustmentid);
  }

  /** As the adjustment's store keeps them: the batch's last count, and the shipments from it after `countedAt`. */
  /** As the adapter keeps them: the batch's last count, and its changes after `countedAt`. */
  async countBasis(ref: string, countedAt: string): Promise<CountBasis> {
    const changedSince = this.stockChanges.filter((change) => change.ref === ref && change.at > countedAt).reduce((sum, { delta }) => sum + delta, 0);
    const lastCountedAt = this.lastCounts.get(ref);
    const cameSince = this.cameOnShelf.some((came) => came.ref === ref && came.at > countedAt);
    return { ...(lastCountedAt === undefined ? {} : { lastCountedAt }), changedSince, changesRead: this.changeCounts.get(ref) ?? 0, ...(cameSince ? { cameSince } : {}) };
  }

  /** The adapter's record of a change of a batch's qty, and its count of them on the batch's reference. */
  private recordChange(ref: string, delta: number, at: string): void {
    this.stockChanges.push({ ref, delta, at });
    this.changeCounts.set(ref, (this.changeCounts.get(ref) ?? 0) + 1);
  }

  /** The adapter's condition on a change of a batch's qty: no count at or after its moment was applied. */
  private changesAfterCounts(ref: string, at: string): boolean {
    const lastCount = this.lastCounts.get(ref);
    return lastCount === undefined || lastCount < at;
  }

  async shipment(shipmentid: string): Promise<Shipment | undefined> {
    return this.shipments.get(shipmentid);
  }

  /** The adapter's conditions: a new shipmentid, each line as read, each batch stored; the units leave each batch's qty, its available unchanged. */
  async saveShipment(shipment: Shipment, lines: readonly LineShipped[], batches: readonly Batch[]): Promise<SaveShipmentResult> {
    const existing = this.shipments.get(shipment.shipmentid);
    if (existing) return { outcome: 'shipment-exists', existing };
    const partsChanged = lines.reduce((sum, { before, after }) => sum + (before.split?.parts.filter((part) => !after.split?.parts.some((left) => left.batchref === part.batchref && left.qty === part.qty)).length ?? 0), 0);
    const writes = lines.length + partsChanged + 2 * batches.length + 1;
    if (writes > FakeRepository.MAX_WRITES) return { outcome: 'too-many-writes', writes, maxWrites: FakeRepository.MAX_WRITES };
    if (!lines.every(({ before }) => this.hasLineAsRead(before)) || batches.some(({ ref }) => !this.batches.has(ref))) return { outcome: 'changed' };
    if (batches.some(({ ref }) => !this.changesAfterCounts(ref, shipment.shippedAt))) return { outcome: 'changed' };
    const shippedFrom = (ref: string) => shipment.lines.reduce((sum, line) => sum + line.parts.reduce((partSum, part) => (part.batchref === ref ? partSum + part.qty : partSum), 0), 0);
    if (batches.some(({ ref }) => (this.batches.get(ref)?.qty ?? 0) < shippedFrom(ref))) return { outcome: 'changed' };
    for (const { after } of lines) this.lines.set(lineKey(after.orderid, after.sku), after);
    for (const { ref } of batches) {
      const shipped = shipment.lines.reduce((sum, line) => sum + line.parts.reduce((partSum, part) => (part.batchref === ref ? partSum + part.qty : partSum), 0), 0);
      const batch = this.batches.get(ref) as Batch;
      this.batches.set(ref, { ...batch, qty: batch.qty - shipped });
      this.recordChange(ref, -shipped, shipment.shippedAt);
    }
    this.shipments.set(shipment.shipmentid, shipment);
    return { outcome: 'saved', shippedAt: shipment.shippedAt };
  }

  /** Imports by importid, and each one's recorded checks and chunks by first row. */
  readonly imports = new Map<string, ImportRecord>();
  readonly importChecks = new Map<string, Map<number, ImportCheck>>();
  readonly recordedChunks = new Map<string, Map<number, ImportChunk>>();
  /** Each chunk's claim, by importid and first row. */
  private readonly importClaims = new Map<string, string>();
  /** The plans of counts at a place, by importid and row. */
  readonly placeCounts = new Map<string, readonly BatchCount[]>();

  async createImport(record: ImportRecord): Promise<ImportRecord | undefined> {
    const existing = this.imports.get(record.importid);
    if (!existing) this.imports.set(record.importid, record);
    return existing;
  }

  async importRecord(importid: string): Promise<ImportRecord | undefined> {
    return this.imports.get(importid);
  }

  /** The adapter's condition: an import awaiting its file is begun once. */
  async beginImport(importid: string, file: string, startedAt: string): Promise<ImportRecord> {
    const record = this.imports.get(importid) as ImportRecord;
    if (record.status === 'awaiting_upload') this.imports.set(importid, { ...record, status: 'running', file, startedAt });
    return this.imports.get(importid) as ImportRecord;
  }

  async importCheckRecorded(importid: string, firstRow: number): Promise<boolean> {
    return this.importChecks.get(importid)?.has(firstRow) ?? false;
  }

  /** The adapter's conditions: a check new to a running import; its rows added to the total, its refusals to `refused`. */
  async recordImportCheck(importid: string, check: ImportCheck): Promise<void> {
    const record = this.imports.get(importid);
    const checks = this.importChecks.get(importid) ?? new Map<number, ImportCheck>();
    if (record?.status !== 'running' || checks.has(check.firstRow)) return;
    checks.set(check.firstRow, check);
    this.importChecks.set(importid, checks);
    this.imports.set(importid, { ...record, counts: { ...record.counts, total: record.counts.total + check.rows }, refused: record.refused + check.refused });
  }

  async importRowsRead(refs: readonly string[], changeIds: readonly string[]): Promise<ImportRowsRead> {
    const described = (ref: string): DescribedBatch | null => {
      const batch = this.batches.get(ref);
      if (!batch) return null;
      const addedBy = this.addedBy.get(ref);
      const changedAt = [...this.stockChanges, ...this.cameOnShelf].filter((change) => change.ref === ref).reduce((last, { at }) => (at > last ? at : last), '');
      return { sku: batch.sku, location: locationOf(batch), qty: batch.qty, eta: batch.eta, changedAt, ...(addedBy === undefined ? {} : { addedBy }) };
    };
    return { batches: new Map(refs.map((ref) => [ref, described(ref)])), adjusted: new Map(changeIds.map((id) => [id, this.adjustments.has(id)])) };
  }

  /** The adapter's condition: a chunk not recorded is claimed, from any claim before. */
  async claimImportChunk(importid: string, firstRow: number): Promise<ImportChunkClaim | undefined> {
    if (this.recordedChunks.get(importid)?.has(firstRow)) return undefined;
    const claim = { importid, firstRow, claimid: `claim-${++claimsMade}` };
    this.importClaims.set(`${importid}#${firstRow}`, claim.claimid);
    return claim;
  }

  private claimHolds({ importid, firstRow, claimid }: ImportChunkClaim): boolean {
    return !this.recordedChunks.get(importid)?.has(firstRow) && this.importClaims.get(`${importid}#${firstRow}`) === claimid;
  }

  /** The adapter's condition on each batch a chunk's rows add or change: the claim holds. */
  forImportChunk(claim: ImportChunkClaim): BatchRepository {
    const claimed = ['addBatch', 'changeBatch', 'savePlaceCount'];
    return new Proxy(this, {
      get: (target, property, receiver) => {
        const value: unknown = Reflect.get(target, property, receiver);
        if (!claimed.includes(String(property)) || typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (!this.claimHolds(claim)) return Promise.reject(new ImportChunkTaken(claim.importid, claim.firstRow));
          return (value as (...args: unknown[]) => unknown).apply(receiver, args);
        };
      },
    });
  }

  /** The adapter's conditions: a chunk new to a running import, under a claim that holds; its outcomes added to the counts. */
  async recordImportChunk(claim: ImportChunkClaim, chunk: ImportChunk): Promise<boolean> {
    const { importid } = claim;
    const record = this.imports.get(importid);
    const chunks = this.recordedChunks.get(importid) ?? new Map<number, ImportChunk>();
    if (record?.status !== 'running' || !this.claimHolds(claim)) return false;
    chunks.set(chunk.firstRow, chunk);
    this.recordedChunks.set(importid, chunks);
    const added = countsOf(chunk.outcomes);
    const counts = Object.fromEntries(Object.entries(record.counts).map(([name, count]) => [name, count + (added[name as keyof RowCounts] ?? 0)]));
    this.imports.set(importid, { ...record, counts: counts as ImportCounts });
    return true;
  }

  async placeCount(importid: string, row: number): Promise<readonly BatchCount[] | undefined> {
    return this.placeCounts.get(`${importid}#${row}`);
  }

  /** The adapter's condition: a row's count at a place is planned once. */
  async savePlaceCount(importid: string, row: number, counts: readonly BatchCount[]): Promise<readonly BatchCount[]> {
    const key = `${importid}#${row}`;
    if (!this.placeCounts.has(key)) this.placeCounts.set(key, counts);
    return this.placeCounts.get(key) as readonly BatchCount[];
  }

  async failImport(importid: string, finishedAt: string, refusal?: FileRefusal): Promise<void> {
    const record = this.imports.get(importid);
    if (record?.status !== 'running') return;
    this.imports.set(importid, { ...record, status: 'failed', ...(refusal ? { fileRefusal: refusal } : { counts: { ...record.counts, invalid: record.refused } }), finishedAt });
  }

  async completeImport(importid: string, finishedAt: string): Promise<void> {
    const record = this.imports.get(importid);
    if (record?.status !== 'running' || record.counts.done !== record.counts.total) return;
    this.imports.set(importid, { ...record, status: 'completed', finishedAt });
  }

  async importErrors(importid: string, limit: number, fromRow = 1): Promise<RowError[]> {
    const byFirstRow = [...(this.importChecks.get(importid)?.values() ?? []), ...(this.recordedChunks.get(importid)?.values() ?? [])].sort((one, other) => one.firstRow - other.firstRow);
    return byFirstRow.flatMap(({ errors }) => errors).filter(({ row }) => row >= fromRow).slice(0, limit);
  }

  /** The adapter's read: the chunks from the one that holds `fromRow`, by first row. */
  async importChunks(importid: string, fromRow: number, limit: number): Promise<ImportChunk[]> {
    return [...(this.recordedChunks.get(importid)?.values() ?? [])]
      .sort((one, other) => one.firstRow - other.firstRow)
      .filter(({ firstRow, outcomes }) => firstRow + outcomes.length > fromRow)
      .slice(0, limit);
  }

  private hasLineAsRead(allocation: Allocation): boolean {
    const stored = this.lines.get(lineKey(allocation.orderid, allocation.sku));
    return stored?.batchref === allocation.batchref && stored.qty === allocation.qty && JSON.stringify(stored.split) === JSON.stringify(allocation.split);
  }
}

const lineKey = (orderid: string, sku: string) => JSON.stringify([orderid, sku]);

const heldKey = (holdid: string, ref: string) => JSON.stringify([holdid, ref]);

/** The batch with this many units held: none is no count at all, as the adapter reads it. */
const withHeld = ({ held: _, ...batch }: Batch, held: number): Batch => (held > 0 ? { ...batch, held } : batch);
