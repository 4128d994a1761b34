import {
  AllocationContended,
  BatchContended,
  BatchNotFound,
  DuplicateBatch,
  InvalidSku,
  LineAlreadyAllocated,
  LineNotFound,
  LineShipped,
  LocationNotFound,
  LineRoutedOtherwise,
  LineSplitOtherwise,
  OrderNotFound,
  OutOfStock,
  UnknownLocation,
  UnknownSku,
} from './errors';
import {
  type Allocation,
  type Batch,
  type LinePart,
  type NewBatch,
  type OrderLine,
  type OrderPlan,
  type RoutedAllocation,
  type Split,
  type StockLevels,
  heldOf,
  isSameLine,
  locationOf,
  newBatch,
  orderedQtyOf,
  partsOf,
  passesOverSpread,
  splitOf,
  stockLevels,
} from './model';
import { placedParts } from './shipments';
import { splitLine } from './split-lines';
import { LazyExpiry, freedExpiredHolds, freedForLines, linesPassOverSpread, picksOf } from './lazy-expiry';
import { batchesToFree, givenBack, mayHoldExpiredUnits } from './holds';
import { locationsKnowing, stockAndLocations } from './location-services';
import { allLocationsOf } from './locations';
import {
  type Routing,
  eligibilityOf,
  eligibleBatches,
  isSameRouting,
  rankBatchesForLine,
  recordedRouting,
  routedPreference,
} from './routing';
import type { BatchRepository, StockRead } from './ports';

export interface AllocationOutcome {
  /** The line's batch; a split line's first part's. */
  readonly batchref: string;
  /** The location of the batch. */
  readonly location: string;
  /** A split line's parts, one or more (Allocation.split); absent for a whole line. */
  readonly parts?: readonly LinePart[];
  /** False when the line was already allocated with the same qty and routing: a retry, answered without taking stock. */
  readonly created: boolean;
}

/**
 * Each lost race means another request took stock, so the loop ends in a save or "out of stock";
 * the bound only keeps one request from spinning under a storm of competitors.
 */
export const MAX_ALLOCATION_ROUNDS = 8;

/**
 * Adds the batch, at its location (`default` when it names none), which must exist: a batch at an
 * inactive location is added all the same, since stock arriving at a closed place is still stock
 * (though it takes no new line or hold while the location is inactive: domain/routing.ts). The same batch again (same ref,
 * sku, qty, eta and location as it is now) is a repeat, which changes nothing; another batch under
 * that reference is DuplicateBatch. `addedBy` names the import row that adds it (domain/imports.ts).
 */
export const addBatch = async (batch: NewBatch, repository: BatchRepository, addedBy?: string): Promise<{ readonly created: boolean }> => {
  const result = await repository.addBatch(newBatch(batch), addedBy);
  if (result.outcome === 'added') return { created: true };
  if (result.outcome === 'unknown-location') throw new UnknownLocation(locationOf(batch));
  const { existing } = result;
  const same = existing.sku === batch.sku && existing.qty === batch.qty && existing.eta === batch.eta && locationOf(existing) === locationOf(batch);
  if (same) return { created: false };
  throw new DuplicateBatch(batch.ref);
};

/**
 * Allocates the line to the best batch that can take it whole among those the request may take
 * from (domain/routing.ts): one read round, the SKU's stock and the locations at once, and one
 * transaction. The line records the routing its request named. A refusal says why: `no_location`
 * when no location is eligible, `out_of_stock` when none of the eligible ones has a batch that can
 * take the line.
 */
export const allocate = async (line: OrderLine, repository: BatchRepository, routing: Routing = {}, split: Split = 'none'): Promise<AllocationOutcome> => {
  if (split !== 'none') return allocateSplitLine(line, repository, routing, split);
  let read: StockRead = { forTake: true };
  const expiry = new LazyExpiry();
  for (let round = 0; round < MAX_ALLOCATION_ROUNDS; round++) {
    const [[stock], locations] = await stockAndLocations([line.sku], read, repository);
    if (!stock?.known) throw new InvalidSku(line.sku);

    const routed = await repeatOrRefused(
      async () => eligibilityOf(await locationsKnowing(locations, stock.batches, routing, repository), routing),
      async () => {
        const existing = await repository.allocationOf(line.orderid, line.sku);
        return existing && answerRepeat(existing, line, routing, 'none', repository);
      },
    );
    if ('answered' in routed) return routed.answered;
    const { routed: eligibility } = routed;
    const preference = routedPreference(eligibility);
    const batches = eligibleBatches(stock.batches, eligibility);
    const candidates = rankBatchesForLine(batches, line, eligibility);
    if (expiry.readAgain(await freedExpiredHolds(line.qty, batches, candidates[0], repository, preference))) continue;
    if (!read.settled && passesOverSpread(batches, candidates[0], preference)) {
      read = { settled: true };
      continue;
    }
    if (candidates.length === 0) {
      // Out of stock rests on a settled read (stockAndLocations); the round it takes is not
      // counted against the request's, since it is made once.
      if (!read.settled && eligibility.locations.size > 0) {
        read = { settled: true };
        round--;
        continue;
      }
      // The line may hold stock already: a retry whose first answer was lost after it committed.
      const existing = await repository.allocationOf(line.orderid, line.sku);
      if (existing) return answerRepeat(existing, line, routing, 'none', repository);
      // OutOfStock announces a lack of stock; a line no location may take says nothing of the SKU's stock.
      if (eligibility.locations.size === 0) throw new OutOfStock(line.sku, 'no_location', eligibility.noneBecause);
      await repository.recordOutOfStock([line], routing);
      throw new OutOfStock(line.sku);
    }

    for (const [index, batch] of candidates.entries()) {
      const allocation: Allocation = { ...line, batchref: batch.ref, ...recordedRouting(routing) };
      const result = await repository.saveAllocation(allocation, batch);
      if (result.outcome === 'saved') return { batchref: batch.ref, location: locationOf(batch), created: true };
      if (result.outcome === 'line-exists') return answerRepeat(result.existing, line, routing, 'none', repository);
      // A batch that may still take the line is read again, never passed over for a later one.
      if (result.outcome === 'read-again') break;
      // The next candidate, on this read, only when the checks made above for the first would pass
      // for it: else a batch the rule prefers to it could take the line once its expired holds are
      // given back, or counts remembered pieces, and the next round frees or settles first. The batch
      // just lost has fewer units than read: if it holds units for holds, some may have expired since
      // and make room, which only a read counts.
      const next = candidates[index + 1];
      // From stock to a shipment only on a read made after the race was lost: a batch in stock
      // added or given units since would be passed over.
      const toAShipment = batch.eta === null && next?.eta !== null;
      if (next && (toAShipment || heldOf(batch) > 0 || batchesToFree(line.qty, batches, repository.currentTime(), next, preference).length > 0 || (!read.settled && passesOverSpread(batches, next, preference)))) break;
    }
  }
  throw new AllocationContended(line.sku, MAX_ALLOCATION_ROUNDS);
};

/**
 * The batches as a client reads them now: the units of holds that have expired are free, though
 * the store may still count them held (lazy expiry), so those holds are read, only on a batch that
 * may hold some (mayHoldExpiredUnits).
 */
export const asFoundNow = async (batches: readonly Batch[], repository: BatchRepository): Promise<Batch[]> => {
  const now = repository.currentTime();
  return Promise.all(
    batches.map(async (batch) => (mayHoldExpiredUnits(batch, now) ? givenBack(batch, await repository.heldOn(batch, { expiredBy: now }, Number.POSITIVE_INFINITY)) : batch)),
  );
};

/**
 * What a request routes by, or its repeat's answer: a location named by the request that this
 * process does not know (its list may be a moment old, and is read anew at most once a second) is
 * refused, unless the request was made already by its first send, routing by a list that knew it.
 */
export const repeatOrRefused = async <Routed, Answer>(
  routed: () => Promise<Routed>,
  repeat: () => Promise<Answer | undefined>,
): Promise<{ readonly routed: Routed } | { readonly answered: Answer }> => {
  try {
    return { routed: await routed() };
  } catch (error) {
    if (!(error instanceof UnknownLocation)) throw error;
    const answered = await repeat();
    if (answered === undefined) throw error;
    return { answered };
  }
};

/**
 * A repeat of an allocated line: the same qty and routing, answered with its batch, and that batch's
 * location, read for it (a line does not record it).
 */
const answerRepeat = async (existing: Allocation, line: OrderLine, routing: Routing, split: Split, repository: BatchRepository): Promise<AllocationOutcome> => {
  if (!isSameLine(existing, line)) throw new LineAlreadyAllocated(line.orderid, line.sku, orderedQtyOf(existing));
  if (!isSameRouting(existing.routing, routing)) throw new LineRoutedOtherwise(line.orderid, line.sku);
  if (splitOf(existing) !== split) throw new LineSplitOtherwise(line.orderid, line.sku);
  if (existing.split) {
    // As placed: the units each part shipped since count on it.
    const parts = placedParts(existing).map(({ batchref, qty, location }) => ({ batchref, qty, location }));
    return { batchref: existing.batchref, location: parts[0]?.location ?? '', parts, created: false };
  }
  const batch = await batchOrThrow(existing.batchref, repository, existing.sku);
  return { batchref: existing.batchref, location: locationOf(batch), created: false };
};

/**
 * Allocates a line its request allows to split (`split`, domain/split-lines.ts): its parts, the
 * best way the rule finds among the batches the request may take from, taken in one transaction
 * with the line, as a whole line's batch is; one read round, and lazy expiry and the settled read as
 * for an order's lines (freedForLines). A refusal says why, as allocate's does.
 */
const allocateSplitLine = async (line: OrderLine, repository: BatchRepository, routing: Routing, split: Exclude<Split, 'none'>): Promise<AllocationOutcome> => {
  let read: StockRead = { forTake: true };
  const expiry = new LazyExpiry();
  const repeat = async () => {
    const existing = await repository.allocationOf(line.orderid, line.sku);
    return existing && answerRepeat(existing, line, routing, split, repository);
  };
  for (let round = 0; round < MAX_ALLOCATION_ROUNDS; round++) {
    const [[stock], locations] = await stockAndLocations([line.sku], read, repository);
    if (!stock?.known) throw new InvalidSku(line.sku);
    const routed = await repeatOrRefused(async () => eligibilityOf(await locationsKnowing(locations, stock.batches, routing, repository), routing), repeat);
    if ('answered' in routed) return routed.answered;
    const { routed: eligibility } = routed;
    const batches = eligibleBatches(stock.batches, eligibility);
    const parts = splitLine(line.qty, batches, eligibility, split);
    const [firstPart] = parts ?? [];
    const plan: OrderPlan = firstPart
      ? { kind: 'placed', placements: [{ allocation: { ...line, batchref: firstPart.batch.ref }, batch: firstPart.batch, parts }] }
      : { kind: 'refused', refusals: [{ sku: line.sku, reason: 'out_of_stock' }] };
    const stockBySku = new Map([[line.sku, stock.batches]]);
    const picks = picksOf(line.orderid, [line], stockBySku, eligibility, plan);
    if (expiry.readAgain(await freedForLines([line], stockBySku, eligibility, { plan, picks }, repository, expiry))) continue;
    if (!read.settled && linesPassOverSpread([line], stockBySku, eligibility, { plan, picks })) {
      read = { settled: true };
      continue;
    }
    if (!parts) {
      if (!read.settled && eligibility.locations.size > 0) {
        read = { settled: true };
        round--;
        continue;
      }
      const answered = await repeat();
      if (answered) return answered;
      if (eligibility.locations.size === 0) throw new OutOfStock(line.sku, 'no_location', eligibility.noneBecause);
      await repository.recordOutOfStock([line], routing);
      throw new OutOfStock(line.sku);
    }
    const lineParts = parts.map(({ batch, qty }) => ({ batchref: batch.ref, qty, location: locationOf(batch) }));
    const [first] = lineParts as [LinePart, ...LinePart[]];
    const allocation: Allocation = { ...line, batchref: first.batchref, ...recordedRouting(routing), split: { split, parts: lineParts } };
    const result = await repository.saveSplitLine(allocation, parts);
    if (result.outcome === 'saved') return { batchref: first.batchref, location: first.location, parts: lineParts, created: true };
    if (result.outcome === 'line-exists') return answerRepeat(result.existing, line, routing, split, repository);
  }
  throw new AllocationContended(line.sku, MAX_ALLOCATION_ROUNDS);
};

/** Rounds of read and conditional write on one batch before giving up with a 503 (a retry continues). */
export const MAX_BATCH_ROUNDS = 8;

/** An order's lines, sorted by sku, each with its batch's location as the line records it. */
export const orderAllocations = async (orderid: string, repository: BatchRepository): Promise<RoutedAllocation[]> => {
  const lines = await repository.locatedLinesOf(orderid);
  if (lines.length === 0) throw new OrderNotFound(orderid);
  return bySku(lines);
};

/**
 * Removes the line and gives its stock back to its batch, or each part's to its own; a line that is
 * not there is LineNotFound. A line that shipped some of its units gives back only the others, and
 * stays as what it shipped; one shipped whole is LineShipped, but where a cancel gave back its
 * last units before (a repeat).
 */
export const cancelAllocation = async (orderid: string, sku: string, repository: BatchRepository): Promise<void> => {
  let contended = '';
  for (let round = 0; round < MAX_BATCH_ROUNDS; round++) {
    const line = await repository.allocationOf(orderid, sku);
    if (!line) throw new LineNotFound(orderid, sku);
    if (line.qty === 0) {
      if (line.cancelled) return;
      throw new LineShipped(orderid, sku, orderedQtyOf(line));
    }
    const batches = await Promise.all(partsOf(line).map(({ batchref }) => batchOrThrow(batchref, repository, sku)));
    if ((await repository.cancelAllocation(line, batches)) === 'saved') return;
    contended = batches.map(({ ref }) => ref).join(', ');
  }
  throw new BatchContended(contended, MAX_BATCH_ROUNDS);
};

/** The batch as found now: the units of its holds that have expired are available again. */
export const batchStatus = async (ref: string, repository: BatchRepository): Promise<Batch> => {
  const [batch] = await asFoundNow([await batchOrThrow(ref, repository)], repository);
  return batch as Batch;
};

/**
 * The SKU's stock levels, in all and at each location that has stock of it, or at `location` alone
 * (a location that does not exist is LocationNotFound: a read of it, as a SKU never added is
 * UnknownSku). The locations, which order the answer, are read with the stock, at the same time, as
 * routing reads them (BatchRepository.routingLocations: their priorities may be a moment old), and
 * read anew when a batch or `location` names one they do not know.
 */
export const skuStock = async (sku: string, repository: BatchRepository, location?: string): Promise<StockLevels> => {
  const levels = await stockLevelsRead(sku, repository, location);
  if (!levels) throw new UnknownSku(sku);
  return levels;
};

/** The SKU's stock levels as skuStock answers them; undefined for a SKU never added. */
export const stockLevelsRead = async (sku: string, repository: BatchRepository, location?: string): Promise<StockLevels | undefined> => {
  const [{ known, withStock, exhausted }, routing] = await Promise.all([batchesWithUnitsOf(sku, repository), repository.routingLocations()]);
  if (!known) return undefined;
  const locations = await locationsKnowing(routing, [...withStock, ...exhausted], { location }, repository);
  if (location !== undefined && !allLocationsOf(locations).some(({ id }) => id === location)) throw new LocationNotFound(location);
  // Only the batches the answer counts: the holds of the others need not be read.
  const counted = location === undefined ? withStock : withStock.filter((batch) => locationOf(batch) === location);
  return stockLevels(sku, await asFoundNow(counted, repository), locations, location, exhausted);
};

/**
 * Every batch of the SKU that has units on hand: those with stock left, and those exhausted (every
 * unit on a line), and with `emptied` those with no unit left too. The exhausted batches are read
 * before and after the stock range: a batch that crosses between the two ranges while they are
 * read is in one of the three reads (exhaustedBetween).
 */
export const batchesWithUnitsOf = async (sku: string, repository: BatchRepository, options: { readonly emptied?: boolean } = {}): Promise<{ readonly known: boolean; readonly withStock: Batch[]; readonly exhausted: Batch[] }> => {
  const exhaustedBefore = await repository.exhaustedBatchesOf(sku, options);
  const stock = await repository.stockOf(sku);
  const exhaustedAfter = await repository.exhaustedBatchesOf(sku, options);
  return { known: stock.known, withStock: stock.batches, exhausted: exhaustedBetween(exhaustedBefore, stock.batches, exhaustedAfter) };
};

/**
 * The exhausted batches a read of the stock range did not find, from reads of the exhausted range
 * made before it and after it: a batch that left the stock range before it is read by one of them,
 * one that came into it after it by the first. Each batch once, as the later read found it.
 */
const exhaustedBetween = (before: readonly Batch[], withStock: readonly Batch[], after: readonly Batch[]): Batch[] => {
  const inStock = new Set(withStock.map(({ ref }) => ref));
  const found = new Map<string, Batch>();
  for (const batch of [...before, ...after]) if (!inStock.has(batch.ref)) found.set(batch.ref, batch);
  return [...found.values()];
};

export const batchOrThrow = async (ref: string, repository: BatchRepository, sku?: string): Promise<Batch> => {
  const batch = await repository.batch(ref, sku);
  if (!batch) throw new BatchNotFound(ref);
  return batch;
};

export const bySku = <Line extends { readonly sku: string }>(lines: Line[]): Line[] =>
  lines.sort((a, b) => (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0));
