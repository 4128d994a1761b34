import { type Batch, type LinePart, type LineRefusal, type Order, type OrderLine, type OrderPlan, type Placement, type Split, locationOf } from './model';
import { type Eligibility, eligibleBatches, forEachCombination, locationPreference, rankBatchesForLine, routedPreference } from './routing';
import { canHold, filled, holderAcross, partsWithin, unitsByLocation, withoutOutranked } from './split-lines';

/*
 * Where each line of an order (or a hold) goes, all lines at once (docs/api.md, "Where a line goes"
 * and "Split lines"): the lines share the parcels, so the plan is the order's, not each line's.
 */

/**
 * Locations up to which planOrder tries every set of them, size by size, for the fewest that cover
 * an order: 2^12 sets of 25 lines is a few thousand checks, fast.
 */
export const MAX_LOCATIONS_SEARCHED = 12;
/**
 * Past MAX_LOCATIONS_SEARCHED locations, the steps the search for the fewest may take, over all
 * sizes, before it takes the best set it found of the size it was at, or, if none, picks greedily.
 * A set is built a location at a time, each one of those of the line with fewest locations left, so
 * the search of the sets of one, two and three among 26 locations takes 19,009 steps at most
 * (3 + 3x26 + 2x26^2 + 26^3), whatever the lines: an order of whole lines that three parcels or
 * fewer can carry, with its lines at 26 locations or fewer, comes in fewest. Weighing a set that
 * holds every line costs a step a line too, so of many such sets the last may go unweighed. A step
 * costs a few microseconds, so the search stays within about a tenth of a second for 25 lines.
 */
export const MAX_SEARCH_STEPS = 20_000;

/** What a set of locations must do for one line, and what the line takes there. */
interface LineCover {
  /** The locations a set holding the line has one of: where it can be taken alone; for a line split over locations, where it may take from. */
  readonly at: ReadonlySet<string>;
  /** Whether the line can be taken at the `chosen` locations, as its split allows. */
  readonly heldBy: (chosen: readonly string[]) => boolean;
}

/** A line of the order, the batches it may take from, best first, and what a set of locations must do for it. */
interface LineOption extends LineCover {
  readonly line: OrderLine;
  readonly split: Split;
  readonly pool: readonly Batch[];
  /** At `chosen`, which hold it: its batches, by their places in its own order of preference (0 the best), best by the rule there. */
  readonly ranksAt: (chosen: readonly string[]) => readonly number[];
}

/**
 * A line's option, or why it has none. Its pool is in stock when a way its split allows is (a line on
 * a shipment only when none in stock can take it: each line's choice is its own, since the lines
 * have different SKUs and never compete for one batch); a whole line's, the batches that can take it.
 */
const optionOf = (line: OrderLine, split: Split, batches: readonly Batch[], eligibility: Eligibility): LineOption | undefined => {
  if (split === 'none') {
    const candidates = rankBatchesForLine(batches, line, eligibility);
    const inStock = candidates.filter(({ eta }) => eta === null);
    const pool = inStock.length > 0 ? inStock : candidates;
    // The rank of the line's first batch at each location, so that a set costs lines x locations.
    const firstRanks = new Map<string, number>();
    pool.forEach((batch, rank) => {
      if (!firstRanks.has(locationOf(batch))) firstRanks.set(locationOf(batch), rank);
    });
    const at = new Set(firstRanks.keys());
    const ranksAt = (chosen: readonly string[]) => {
      let best = -1;
      for (const location of chosen) {
        const rank = firstRanks.get(location);
        if (rank !== undefined && (best < 0 || rank < best)) best = rank;
      }
      return [best];
    };
    return pool.length === 0 ? undefined : { line, split, pool, at, heldBy: (chosen) => chosen.some((location) => at.has(location)), ranksAt };
  }
  const withStock = eligibleBatches(batches, eligibility)
    .filter(({ available }) => available > 0)
    .sort(routedPreference(eligibility));
  const inStock = withStock.filter(({ eta }) => eta === null);
  const held = canHold(line.qty, inStock, split) ? inStock : canHold(line.qty, withStock, split) ? withStock : undefined;
  if (!held) return undefined;
  const pool = withoutOutranked(held);
  const ranksAt = (chosen: readonly string[]) => (partsWithin(line.qty, pool, new Set(chosen), split) ?? []).map((batch) => pool.indexOf(batch));
  if (split === 'locations') return { line, split, pool, at: new Set(pool.map(locationOf)), heldBy: holderAcross(line.qty, pool), ranksAt };
  // With `batches`, the locations whose largest batches hold it alone.
  const at = new Set([...unitsByLocation(pool)].flatMap(([location, units]) => (units.reduce((sum, some) => sum + some, 0) >= line.qty ? [location] : [])));
  return { line, split, pool, at, heldBy: (chosen) => chosen.some((location) => at.has(location)), ranksAt };
};

/**
 * Where each line of an order (or a hold) goes, all lines at once, given each SKU's stock
 * (undefined for a SKU never added), among the batches the request may take from, each line as far
 * as its `split` allows (domain/split-lines.ts):
 * 1. as few lines on shipments as can be: a line goes to a shipment only when no way its split
 *    allows takes it from batches in stock at eligible locations;
 * 2. then as few locations as can be (one parcel rather than two): the smallest set of locations at
 *    which every line can be taken, searched exactly over the sets of each size in turn, smallest
 *    first, the locations in their order of preference (locationPreference), so that of two sets
 *    that tie on what follows, the one whose most preferred location is more preferred wins, then
 *    the next location's, and so on; past MAX_LOCATIONS_SEARCHED, the sets that cover are built
 *    line by line (fewestLocations), within MAX_SEARCH_STEPS;
 * 3. then as few parts as can be, over all the lines (a whole line is one);
 * 4. then each line, by SKU, on the batches the single-line rule (routedPreference) prefers among
 *    those at the chosen locations: a whole line on its best batch there, a split line in the
 *    fewest parts there, filled in the order of the preference (splitLine).
 * `placedAt`: the locations of the order's lines placed already (a request that adds lines to an
 * order), chosen before any: a line that can be taken at them adds no location.
 * Every line placed, or every line that cannot be, with its reason: `unknown_sku`, `no_location`
 * when no location is eligible, or `out_of_stock`.
 */
export const planOrder = (
  orderid: string,
  lines: Order['lines'],
  stockBySku: ReadonlyMap<string, readonly Batch[] | undefined>,
  eligibility: Eligibility,
  placedAt: ReadonlySet<string> = new Set(),
): OrderPlan => {
  const refusals: LineRefusal[] = [];
  const options: LineOption[] = [];
  for (const { sku, qty, split = 'none' } of lines) {
    const batches = stockBySku.get(sku);
    if (batches === undefined) {
      refusals.push({ sku, reason: 'unknown_sku' });
      continue;
    }
    const option = optionOf({ orderid, sku, qty }, split, batches, eligibility);
    if (option) options.push(option);
    else refusals.push({ sku, reason: eligibility.locations.size === 0 ? 'no_location' : 'out_of_stock' });
  }
  if (refusals.length > 0) return { kind: 'refused', refusals };

  // Lines by SKU, so that the plan does not depend on the order the request lists them in.
  const bySku = [...options].sort((a, b) => (a.line.sku < b.line.sku ? -1 : a.line.sku > b.line.sku ? 1 : 0));
  const placed = [...placedAt];
  // The placed locations and the chosen ones, each once: a location counts its units once.
  const withPlaced = (chosen: readonly string[]) => [...new Set([...placed, ...chosen])];
  const cover = withPlaced(
    fewestLocations(
      bySku
        .filter(({ heldBy }) => !heldBy(placed))
        // Chosen already, a placed location is never a choice: a line split over locations may take from it as well.
        .map(({ at, heldBy }) => ({ at: new Set([...at].filter((location) => !placedAt.has(location))), heldBy: (chosen: readonly string[]) => heldBy(withPlaced(chosen)) })),
      locationPreference(eligibility),
      (chosen) => bySku.map(({ ranksAt }) => ranksAt(withPlaced(chosen))),
    ),
  );
  return { kind: 'placed', placements: options.map((option) => placementOf(option, option.ranksAt(cover))) };
};

/** The line on the batches of its pool at these places (the cover holds it): whole on the one, or in parts, filled in that order. */
const placementOf = ({ line, split, pool }: LineOption, ranks: readonly number[]): Placement => {
  const batches = ranks.map((rank) => pool[rank] as Batch);
  const [first] = batches as [Batch, ...Batch[]];
  if (split === 'none') return { allocation: { ...line, batchref: first.ref }, batch: first };
  const parts = filled(line.qty, batches);
  const lineParts: LinePart[] = parts.map(({ batch, qty }) => ({ batchref: batch.ref, qty, location: locationOf(batch) }));
  return { allocation: { ...line, batchref: first.ref, split: { split, parts: lineParts } }, batch: first, parts };
};

/**
 * Of two sets, the one whose lines take fewer parts in all, then, line by line, the one whose line
 * has the better batches by the single-line rule (lower ranks, in turn) first.
 */
const compareRanks = (a: readonly (readonly number[])[], b: readonly (readonly number[])[]): number => {
  const parts = (ranks: readonly (readonly number[])[]) => ranks.reduce((sum, line) => sum + line.length, 0);
  const fewer = parts(a) - parts(b);
  if (fewer !== 0) return fewer;
  for (const [index, line] of a.entries()) {
    const other = b[index] as readonly number[];
    for (const [at, rank] of line.entries()) {
      const otherRank = other[at];
      if (otherRank === undefined) return 1;
      if (rank !== otherRank) return rank - otherRank;
    }
    if (other.length > line.length) return -1;
  }
  return 0;
};

/**
 * The fewest locations that hold every line (`each`: what a set must do for each): sets of each size
 * in turn, smallest first; of the sets of the smallest size that hold every line, the one whose lines
 * get the fewer parts, then the better batches (`ranksOf`, compareRanks), the first in the order of
 * their locations' preference of a tie (lexicographic over the locations sorted by `preference`). Up
 * to MAX_LOCATIONS_SEARCHED locations, every set of a size is tried; past them, the sets of a size
 * that cover are built (bestCoveringSet). Past MAX_SEARCH_STEPS, the best set of the size it was
 * searching that it found, and when it found none, greedy: the location that lets most lines not yet
 * held be held, then the one more of them can take from, the more preferred of a tie, until every
 * line is.
 */
const fewestLocations = (
  each: readonly LineCover[],
  preference: (a: string, b: string) => number,
  ranksOf: (chosen: readonly string[]) => readonly (readonly number[])[],
): string[] => {
  const all = [...new Set(each.flatMap(({ at }) => [...at]))].sort(preference);
  const covers = (chosen: readonly string[]) => each.every(({ heldBy }) => heldBy(chosen));
  if (all.length <= MAX_LOCATIONS_SEARCHED) {
    for (let size = 1; size <= all.length; size++) {
      const best = new BestSet(ranksOf);
      forEachCombination(all, size, (chosen) => {
        if (covers(chosen)) best.offer(chosen);
      });
      if (best.set) return best.set;
    }
  }
  const budget = { steps: MAX_SEARCH_STEPS };
  for (let size = 1; size <= all.length; size++) {
    const best = bestCoveringSet(each, size, ranksOf, budget);
    if (best) return best;
    if (budget.steps < 0) break;
  }
  const chosen: string[] = [];
  let uncovered = [...each];
  while (uncovered.length > 0) {
    let best: string | undefined;
    let [bestHeld, bestReach] = [-1, -1];
    for (const location of all) {
      if (chosen.includes(location)) continue;
      const held = uncovered.filter(({ heldBy }) => heldBy([...chosen, location])).length;
      const reach = uncovered.filter(({ at }) => at.has(location)).length;
      if (held > bestHeld || (held === bestHeld && reach > bestReach)) [best, bestHeld, bestReach] = [location, held, reach];
    }
    // Every location chosen holds every line (each can be taken somewhere), so this ends.
    if (best === undefined) break;
    chosen.push(best);
    uncovered = uncovered.filter(({ heldBy }) => !heldBy(chosen));
  }
  return chosen;
};

/**
 * Of the sets of `size` locations that hold every line, the one whose lines get the fewer parts, then
 * the better batches: built a location at a time, each one of those of the line with fewest locations
 * among those not yet held, so that a set stops growing once it is `size` or holds them all. Of two
 * sets that tie, the first found. Each set started or grown is a step of `budget`, which it counts
 * down, and each set that holds every line a step a line, for weighing it; past them, the best it
 * found so far, if any.
 */
const bestCoveringSet = (
  each: readonly LineCover[],
  size: number,
  ranksOf: (chosen: readonly string[]) => readonly (readonly number[])[],
  budget: { steps: number },
): string[] | undefined => {
  const best = new BestSet(ranksOf);
  const chosen: string[] = [];
  const build = (uncovered: readonly LineCover[]): boolean => {
    if (--budget.steps < 0) return false;
    if (uncovered.length === 0) {
      best.offer(chosen);
      // Weighing a set places every line at it: a step a line.
      budget.steps -= each.length;
      return true;
    }
    if (chosen.length === size) return true;
    const narrowest = uncovered.reduce((fewest, line) => (line.at.size < fewest.at.size ? line : fewest));
    for (const location of narrowest.at) {
      if (chosen.includes(location)) continue;
      chosen.push(location);
      const going = build(uncovered.filter(({ heldBy }) => !heldBy(chosen)));
      chosen.pop();
      if (!going) return false;
    }
    return true;
  };
  build(each);
  return best.set;
};

/** Of the sets offered, the first whose lines get the fewer parts, then the better batches (compareRanks); each set's ranks worked out once. */
class BestSet {
  set?: string[];
  private ranks?: readonly (readonly number[])[];

  constructor(private readonly ranksOf: (chosen: readonly string[]) => readonly (readonly number[])[]) {}

  offer(chosen: readonly string[]): void {
    const ranks = this.ranksOf(chosen);
    if (this.ranks !== undefined && compareRanks(ranks, this.ranks) >= 0) return;
    [this.set, this.ranks] = [[...chosen], ranks];
  }
}
