import { type Allocation, type Batch, type LinePart, type Part, type Split, locationOf, partsOf } from './model';
import { type Eligibility, eligibleBatches, forEachCombination, locationPreference, routedPreference } from './routing';

/*
 * A line split over several batches, when its request allows it (`split`): how far, and which parts
 * the rule picks. Whole lines stay the rule of domain/routing.ts; this is what a line that may be
 * split adds to it.
 */

/**
 * The most parts a line is split into: a way that needs more is not taken, and a line that no way
 * within it holds is refused (`out_of_stock`). Each part is a take and a record of its own in the
 * line's one transaction (at most 100 items), with room for a spread batch's pieces.
 */
export const MAX_PARTS_PER_LINE = 10;

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
    // A pool that no way can hold is passed over before any search of it.
    if (!canHold(qty, pool, split)) continue;
    const chosen = split === 'none' ? pool.filter(({ available }) => available >= qty).slice(0, 1) : fewestParts(qty, pool, eligibility, split === 'batches' ? 1 : Number.POSITIVE_INFINITY);
    if (chosen && chosen.length > 0) return filled(qty, chosen);
  }
  return undefined;
};

/** The units of the largest MAX_PARTS_PER_LINE batches of `batches`, largest first. */
const largestUnits = (batches: readonly Batch[]): number[] =>
  batches
    .map(({ available }) => available)
    .sort((a, b) => b - a)
    .slice(0, MAX_PARTS_PER_LINE);

const sum = (units: readonly number[]) => units.reduce((total, units) => total + units, 0);

/**
 * Whether some way `split` allows holds a line of `qty` in `pool`, at once: with `locations`, its
 * largest MAX_PARTS_PER_LINE batches hold it; with `batches`, those of one location do; with `none`,
 * one batch does. What the search finds exactly when it may, without searching.
 */
export const canHold = (qty: number, pool: readonly Batch[], split: Split): boolean => {
  if (split === 'none') return pool.some(({ available }) => available >= qty);
  if (split === 'locations') return sum(largestUnits(pool)) >= qty;
  return [...unitsByLocation(pool).values()].some((units) => sum(units) >= qty);
};

/** Of each location of `pool`, the units of its largest MAX_PARTS_PER_LINE batches, largest first. */
export const unitsByLocation = (pool: readonly Batch[]): Map<string, number[]> => {
  return new Map([...batchesByLocation(pool)].map(([location, batches]) => [location, largestUnits(batches)]));
};

/** The batches of `pool` at each of its locations, in the pool's order. */
const batchesByLocation = (pool: readonly Batch[]): Map<string, Batch[]> => {
  const byLocation = new Map<string, Batch[]>();
  for (const batch of pool) {
    const at = byLocation.get(locationOf(batch));
    if (at) at.push(batch);
    else byLocation.set(locationOf(batch), [batch]);
  }
  return byLocation;
};

/** Each batch, in the order of the preference, gives what it has; the last gives the rest. */
export const filled = (qty: number, chosen: readonly Batch[]): Part[] => {
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
  const byLocation = batchesByLocation(pool);
  const locations = [...byLocation.keys()].sort(locationPreference(eligibility));
  const unitsAt = (location: string) => (byLocation.get(location) ?? []).reduce((sum, { available }) => sum + available, 0);
  let sets = MAX_LOCATION_SETS;
  for (let size = 1; size <= Math.min(maxLocations, locations.length); size++) {
    let best: Batch[] | undefined;
    forEachCombination(locations, size, (chosen) => {
      if (--sets < 0) return false;
      const found = bestCover(qty, pool.filter((batch) => chosen.includes(locationOf(batch))));
      if (found && found.length <= MAX_PARTS_PER_LINE && (!best || isBetter(found, best, pool))) best = found;
      return true;
    });
    if (best) return best;
    if (sets < 0) {
      // Past the budget: the locations with the most units, until they hold the line.
      const most = [...locations].sort((a, b) => unitsAt(b) - unitsAt(a));
      for (let count = size; count <= Math.min(maxLocations, most.length); count++) {
        const found = bestCover(qty, pool.filter((batch) => most.slice(0, count).includes(locationOf(batch))));
        if (found && found.length <= MAX_PARTS_PER_LINE) return found;
      }
      return undefined;
    }
  }
  return undefined;
};

/**
 * The batches of `pool` (best first, each with units) at the `chosen` locations that hold a line of
 * `qty` as its `split` allows, best by the rule once the locations are chosen (an order's, whose
 * lines share them: domain/routing.ts, planOrder): with `none`, the first that holds it whole; with
 * `batches`, at one of them, in the fewest parts, then best by the preference; with `locations`,
 * across them, the same. Undefined when they cannot, or only in more than MAX_PARTS_PER_LINE.
 */
export const partsWithin = (qty: number, pool: readonly Batch[], chosen: ReadonlySet<string>, split: Split): Batch[] | undefined => {
  const at = pool.filter((batch) => chosen.has(locationOf(batch)));
  if (split === 'none') {
    const whole = at.find(({ available }) => available >= qty);
    return whole && [whole];
  }
  const covers = split === 'locations' ? [bestCover(qty, at)] : [...chosen].map((location) => bestCover(qty, at.filter((batch) => locationOf(batch) === location)));
  let best: Batch[] | undefined;
  for (const found of covers) if (found && found.length <= MAX_PARTS_PER_LINE && (!best || isBetter(found, best, pool))) best = found;
  return best;
};

/**
 * Whether the batches of `pool` at the `chosen` locations hold `qty` in MAX_PARTS_PER_LINE parts or
 * fewer: their largest ones do. Each location's largest are found once, so that a set costs its
 * locations, not the pool.
 */
export const holderAcross = (qty: number, pool: readonly Batch[]): ((chosen: readonly string[]) => boolean) => {
  const units = unitsByLocation(pool);
  return (chosen) => sum(largestOf([...new Set(chosen)].flatMap((location) => units.get(location) ?? []))) >= qty;
};

const largestOf = (units: readonly number[]): number[] => [...units].sort((a, b) => b - a).slice(0, MAX_PARTS_PER_LINE);

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
 * The fewest batches of `pool` (best first) that hold `qty`, best by the preference, when they are
 * MAX_PARTS_PER_LINE or fewer: their number is what the largest hold first; then, in the order of
 * the preference, each batch is taken when the ones taken, it, and the largest of those after it can
 * still make up `qty` in that number. The largest after each batch are kept from the end, so that it
 * costs the pool's length times that number.
 */
const bestCover = (qty: number, pool: readonly Batch[]): Batch[] | undefined => {
  const largest = largestUnits(pool);
  let count = 0;
  for (let held = 0; held < qty; count++) {
    const next = largest[count];
    if (next === undefined) return undefined;
    held += next;
  }
  // After each batch, the units of the largest `count` batches that follow it, largest first.
  const largestAfter: number[][] = new Array(pool.length);
  let after: number[] = [];
  for (let index = pool.length - 1; index >= 0; index--) {
    largestAfter[index] = after;
    after = insertedLargest(after, (pool[index] as Batch).available, count);
  }
  const chosen: Batch[] = [];
  let held = 0;
  for (const [index, batch] of pool.entries()) {
    if (chosen.length === count) break;
    const rest = sum((largestAfter[index] as number[]).slice(0, count - chosen.length - 1));
    if (held + batch.available + rest >= qty) {
      chosen.push(batch);
      held += batch.available;
    }
  }
  return chosen;
};

/** `units` (largest first, at most `keep`) with `one` put in its place, still at most `keep`. */
const insertedLargest = (units: readonly number[], one: number, keep: number): number[] => {
  const at = units.findIndex((some) => some < one);
  const inserted = at === -1 ? [...units, one] : [...units.slice(0, at), one, ...units.slice(at)];
  return inserted.slice(0, keep);
};

/**
 * Where a part of a split line goes when a change of its batch takes it off (`part`, on a batch not
 * among `batches`): whole, to one of `batches` (the SKU's others, eligible for the line's recorded
 * routing) that can take it, at the location of the line's other parts when its split is `batches`,
 * best by the line's rule for that part: in stock; at no location the line's other parts are not at
 * (no parcel more); on a batch the line has a part on already (no pick more); then the one-line
 * preference. Undefined when none can take it: the whole line then leaves its order, as a whole
 * line does.
 */
export const movedPart = (line: Allocation, part: LinePart, batches: readonly Batch[], eligibility: Eligibility): Batch | undefined => {
  const others = partsOf(line).filter(({ batchref }) => batchref !== part.batchref);
  const otherLocations = new Set(others.map(({ location }) => location));
  const onLine = new Set(others.map(({ batchref }) => batchref));
  const preference = routedPreference(eligibility);
  const cost = (batch: Batch) => [
    batch.eta === null ? 0 : 1,
    otherLocations.size === 0 || otherLocations.has(locationOf(batch)) ? 0 : 1,
    onLine.has(batch.ref) ? 0 : 1,
  ];
  const byCost = (a: Batch, b: Batch) => {
    const [ca, cb] = [cost(a), cost(b)];
    const first = ca.findIndex((value, index) => value !== cb[index]);
    return first === -1 ? preference(a, b) : (ca[first] as number) - (cb[first] as number);
  };
  return eligibleBatches(batches, eligibility)
    .filter((batch) => batch.ref !== part.batchref && batch.sku === line.sku && batch.available >= part.qty)
    .filter((batch) => line.split?.split !== 'batches' || otherLocations.size === 0 || otherLocations.has(locationOf(batch)))
    .sort(byCost)[0];
};
