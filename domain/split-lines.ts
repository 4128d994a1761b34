import { type Batch, locationOf } from './model';
import { type Eligibility, eligibleBatches, forEachCombination, locationPreference, routedPreference } from './routing';

/*
 * A line split over several batches, when its request allows it (`split`): how far, and which parts
 * the rule picks. Whole lines stay the rule of domain/routing.ts; this is what a line that may be
 * split adds to it.
 */

/** How far a line may be split: not at all (the default), over batches at one location (one parcel), or over locations. */
export type Split = 'none' | 'batches' | 'locations';

/** Units of a line from one batch. */
export interface Part {
  readonly batch: Batch;
  readonly qty: number;
}

/**
 * Location sets the search for the fewest tries for one line before it takes the best found of the
 * size it reached (or, with none found, the locations with the most units first): the sets of one,
 * two and three of 40 locations are 10,700.
 */
export const MAX_LOCATION_SETS = 20_000;

/**
 * The parts of a line of `qty` that its `split` allows, best by the rule, in this order:
 * 1. every part in stock (no part on a shipment), when any way the split allows has it: a line split
 *    over batches on the shelf beats the whole line on a shipment;
 * 2. the fewest locations (parcels): with `batches`, one;
 * 3. the fewest parts (picks);
 * 4. the one-line preference (routedPreference): of two ways, the one whose best batch is preferred,
 *    then its second, and so on.
 * So a line that one batch in stock can take goes whole, to the batch the one-line rule picks, and
 * with `none` the rule is that one. The parts come in the order of the preference, each taking what
 * its batch has, and the last the rest: the fewest parts never leave one with nothing. Undefined
 * when no way the split allows holds the line.
 */
export const splitLine = (qty: number, batches: readonly Batch[], eligibility: Eligibility, split: Split): Part[] | undefined => {
  const preference = routedPreference(eligibility);
  const withStock = eligibleBatches(batches, eligibility)
    .filter(({ available }) => available > 0)
    .sort(preference);
  for (const pool of [withStock.filter(({ eta }) => eta === null), withStock]) {
    const chosen = split === 'none' ? pool.filter(({ available }) => available >= qty).slice(0, 1) : fewestParts(qty, pool, eligibility, split === 'batches' ? 1 : Number.POSITIVE_INFINITY);
    if (chosen && chosen.length > 0) return filled(qty, chosen);
  }
  return undefined;
};

/** Each batch, in the order of the preference, gives what it has; the last gives the rest. */
const filled = (qty: number, chosen: readonly Batch[]): Part[] => {
  let left = qty;
  return chosen.map((batch, index) => {
    const part = index === chosen.length - 1 ? left : Math.min(batch.available, left);
    left -= part;
    return { batch, qty: part };
  });
};

/**
 * Of `pool` (best first), the batches that hold `qty` at the fewest locations (at most `maxLocations`),
 * then in the fewest parts, then best by the preference; undefined when none do.
 */
const fewestParts = (qty: number, pool: readonly Batch[], eligibility: Eligibility, maxLocations: number): Batch[] | undefined => {
  const byLocation = new Map<string, Batch[]>();
  for (const batch of pool) byLocation.set(locationOf(batch), [...(byLocation.get(locationOf(batch)) ?? []), batch]);
  const locations = [...byLocation.keys()].sort(locationPreference(eligibility));
  const unitsAt = (location: string) => (byLocation.get(location) ?? []).reduce((sum, { available }) => sum + available, 0);
  let sets = MAX_LOCATION_SETS;
  for (let size = 1; size <= Math.min(maxLocations, locations.length); size++) {
    let best: Batch[] | undefined;
    forEachCombination(locations, size, (chosen) => {
      if (--sets < 0) return false;
      const found = bestCover(qty, pool.filter((batch) => chosen.includes(locationOf(batch))));
      if (found && (!best || isBetter(found, best, pool))) best = found;
      return true;
    });
    if (best) return best;
    if (sets < 0) {
      // Past the budget: the locations with the most units, until they hold the line.
      const most = [...locations].sort((a, b) => unitsAt(b) - unitsAt(a));
      for (let count = size; count <= Math.min(maxLocations, most.length); count++) {
        const found = bestCover(qty, pool.filter((batch) => most.slice(0, count).includes(locationOf(batch))));
        if (found) return found;
      }
      return undefined;
    }
  }
  return undefined;
};

/** Fewer parts, then the better batches in turn by their places in `pool` (best first). */
const isBetter = (a: readonly Batch[], b: readonly Batch[], pool: readonly Batch[]): boolean => {
  if (a.length !== b.length) return a.length < b.length;
  for (const [index, batch] of a.entries()) {
    const [ra, rb] = [pool.indexOf(batch), pool.indexOf(b[index] as Batch)];
    if (ra !== rb) return ra < rb;
  }
  return false;
};

/**
 * The fewest batches of `pool` (best first) that hold `qty`, best by the preference: their number is
 * what the largest hold first; then, in the order of the preference, each batch is taken when the
 * ones taken, it, and the largest of those after it can still make up `qty` in that number.
 */
const bestCover = (qty: number, pool: readonly Batch[]): Batch[] | undefined => {
  const largest = [...pool].sort((a, b) => b.available - a.available);
  let count = 0;
  for (let held = 0; held < qty; count++) {
    const next = largest[count];
    if (!next) return undefined;
    held += next.available;
  }
  const chosen: Batch[] = [];
  let held = 0;
  for (const [index, batch] of pool.entries()) {
    if (chosen.length === count) break;
    const rest = pool
      .slice(index + 1)
      .map(({ available }) => available)
      .sort((a, b) => b - a)
      .slice(0, count - chosen.length - 1)
      .reduce((sum, available) => sum + available, 0);
    if (held + batch.available + rest >= qty) {
      chosen.push(batch);
      held += batch.available;
    }
  }
  return chosen;
};
