import { type Allocation, type Batch, type LinePart, type Part, type Split, locationOf, partsOf, splitOf } from './model';
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
 * Location sets the search for the fewest tries for one line before it ends, still in the fewest
 * parts (fewestPartsPastTheBudget): the sets of one, two and three of 40 locations are 10,700.
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
  for (const all of [withStock.filter(({ eta }) => eta === null), withStock]) {
    // A pool that no way can hold is passed over before any search of it.
    if (!canHold(qty, all, split)) continue;
    const pool = split === 'none' ? all : withoutOutranked(all);
    const chosen = split === 'none' ? pool.filter(({ available }) => available >= qty).slice(0, 1) : fewestParts(qty, pool, eligibility, split === 'batches' ? 1 : Number.POSITIVE_INFINITY);
    if (chosen && chosen.length > 0) return filled(qty, chosen);
  }
  return undefined;
};

/**
 * Of `pool` (best first), the batches that fewer than MAX_PARTS_PER_LINE others at their location
 * outrank: preferred to them and with as many units or more. An outranked batch is never among the
 * best batches a new line takes: a way has at most MAX_PARTS_PER_LINE parts, so one of those that
 * outrank it is free to take its place, at the same location, in no more parts, and the way is then
 * better by the preference. So a place costs the search at most MAX_PARTS_PER_LINE batches of each
 * size it has, whatever the number of its batches; a place's largest MAX_PARTS_PER_LINE are kept.
 */
export const withoutOutranked = (pool: readonly Batch[]): Batch[] => {
  const largestBefore = new Map<string, number[]>();
  return pool.filter((batch) => {
    const largest = largestBefore.get(locationOf(batch)) ?? [];
    const outranked = largest.length >= MAX_PARTS_PER_LINE && (largest.at(-1) as number) >= batch.available;
    if (!outranked) largestBefore.set(locationOf(batch), insertedLargest(largest, batch.available, MAX_PARTS_PER_LINE));
    return !outranked;
  });
};

/** The units of the largest `most` batches of `batches` (MAX_PARTS_PER_LINE unless told), largest first. */
const largestUnits = (batches: readonly Batch[], most = MAX_PARTS_PER_LINE): number[] =>
  batches
    .map(({ available }) => available)
    .sort((a, b) => b - a)
    .slice(0, most);

const sum = (units: readonly number[]) => units.reduce((total, units) => total + units, 0);

/**
 * Whether some way `split` allows holds a line of `qty` in `pool`, at once: with `locations`, its
 * largest MAX_PARTS_PER_LINE batches hold it; with `batches`, those of one location do; with `none`,
 * one batch does. What the search finds exactly when it may, without searching.
 */
export const canHold = (qty: number, pool: readonly Batch[], split: Split): boolean => mostHeld(pool, split) >= qty;

/**
 * The most units a line can take from `pool` in a way `split` allows: with `none`, its largest
 * batch's; with `locations`, its largest MAX_PARTS_PER_LINE batches'; with `batches`, those of the
 * location whose largest do hold most.
 */
export const mostHeld = (pool: readonly Batch[], split: Split): number => {
  if (split === 'none') return pool.reduce((most, { available }) => Math.max(most, available), 0);
  if (split === 'locations') return sum(largestUnits(pool));
  return [...unitsByLocation(pool).values()].reduce((most, units) => Math.max(most, sum(units)), 0);
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
 * What a search for parts keeps of a line placed already, when the units of one of its parts are
 * placed again: the locations its other parts are at (`fixed`), which every way counts as its own,
 * and the batches they are on (`onLine`), where units join a part rather than add one. A new line
 * has none (NEW_LINE).
 */
interface PlacedBeside {
  readonly fixed: ReadonlySet<string>;
  readonly onLine: ReadonlySet<string>;
}

const NEW_LINE: PlacedBeside = { fixed: new Set(), onLine: new Set() };

/**
 * Of `pool` (best first), the batches that hold `qty` at the fewest locations, counting those of
 * `beside.fixed` (at most `maxLocations` in all), then in the fewest parts of the line, then on the
 * fewest batches, then best by the preference; undefined when none do. Past MAX_LOCATION_SETS, in
 * the fewest parts first (fewestPartsPastTheBudget).
 */
const fewestParts = (qty: number, pool: readonly Batch[], eligibility: Eligibility, maxLocations: number, beside: PlacedBeside = NEW_LINE): Batch[] | undefined => {
  // A pool that cannot hold it over all its locations holds it at no set of them: passed over before any search.
  if (!bestCover(qty, pool, beside.onLine)) return undefined;
  const byLocation = batchesByLocation(pool);
  const locations = [...byLocation.keys()].filter((location) => !beside.fixed.has(location)).sort(locationPreference(eligibility));
  // A set costs its locations' batches, not the pool's: a new line's set its largest alone tells
  // cannot hold it is passed over, and another is searched on its own batches, in the pool's order.
  const holdsAt = beside.onLine.size === 0 ? holderAcross(qty, pool) : () => true;
  const placeInPool = new Map(pool.map((batch, index) => [batch, index] as const));
  const fixedBatches = pool.filter((batch) => beside.fixed.has(locationOf(batch)));
  const within = (chosen: readonly string[]) => {
    if (!holdsAt([...beside.fixed, ...chosen])) return undefined;
    const batches = [...fixedBatches, ...chosen.flatMap((location) => byLocation.get(location) ?? [])];
    return bestCover(qty, batches.sort((a, b) => (placeInPool.get(a) as number) - (placeInPool.get(b) as number)), beside.onLine);
  };
  const mostAdded = Math.min(maxLocations - beside.fixed.size, locations.length);
  let sets = MAX_LOCATION_SETS;
  // A line placed already is at its locations: a way may add none of them.
  for (let size = beside.fixed.size === 0 ? 1 : 0; size <= mostAdded; size++) {
    let best: Batch[] | undefined;
    forEachCombination(locations, size, (chosen) => {
      if (--sets < 0) return false;
      const found = within(chosen);
      if (found && (!best || isBetter(found, best, pool, beside.onLine))) best = found;
      return true;
    });
    if (sets < 0) return fewestPartsPastTheBudget(best, { qty, pool, beside, maxLocations, within });
    if (best) return best;
  }
  return undefined;
};

/**
 * Where a search that spent MAX_LOCATION_SETS ends: in the fewest parts any way has, which the best
 * way over every location at once has (bestCover). The best way the search found at the size it
 * was at, when it has that few, since every smaller set holds none; else the best way at the
 * locations of that one, which may be more locations than the fewest.
 */
const fewestPartsPastTheBudget = (
  found: Batch[] | undefined,
  { qty, pool, beside, maxLocations, within }: { qty: number; pool: readonly Batch[]; beside: PlacedBeside; maxLocations: number; within: (chosen: readonly string[]) => Batch[] | undefined },
): Batch[] | undefined => {
  const fewest = bestCover(qty, pool, beside.onLine);
  if (!fewest) return undefined;
  const added = (batches: readonly Batch[]) => batches.filter(({ ref }) => !beside.onLine.has(ref)).length;
  if (found && added(found) <= added(fewest)) return found;
  const at = [...new Set(fewest.map(locationOf))].filter((location) => !beside.fixed.has(location));
  if (beside.fixed.size + at.length > maxLocations) return found;
  return within(at) ?? found;
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
  for (const found of covers) if (found && (!best || isBetter(found, best, pool))) best = found;
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

/**
 * Fewer parts of the line (a batch of `onLine` adds none), then fewer batches, then the better
 * batches in turn by their places in `pool` (best first).
 */
const isBetter = (a: readonly Batch[], b: readonly Batch[], pool: readonly Batch[], onLine: ReadonlySet<string> = NO_BATCHES): boolean => {
  const added = (batches: readonly Batch[]) => batches.filter(({ ref }) => !onLine.has(ref)).length;
  if (added(a) !== added(b)) return added(a) < added(b);
  if (a.length !== b.length) return a.length < b.length;
  for (const [index, batch] of a.entries()) {
    const [ra, rb] = [pool.indexOf(batch), pool.indexOf(b[index] as Batch)];
    if (ra !== rb) return ra < rb;
  }
  return false;
};

const NO_BATCHES: ReadonlySet<string> = new Set();

/**
 * The batches of `pool` (best first) that hold `qty` in the fewest parts of the line, at most
 * MAX_PARTS_PER_LINE in all, a batch of `onLine` (one the line has a part on) adding none; then on
 * the fewest batches; then best by the preference. The parts it adds are what the largest of the
 * others hold beside every batch of `onLine`; then the batches of `onLine` it needs beside those
 * are what their largest hold. Then, in the order of the preference, each batch is taken when the
 * ones taken, it, and the largest of each kind after it can still make up `qty` in those numbers.
 * The largest after each batch are kept from the end, so that it costs the pool's length times
 * those numbers. Undefined when no such batches hold it.
 */
const bestCover = (qty: number, pool: readonly Batch[], onLine: ReadonlySet<string> = NO_BATCHES): Batch[] | undefined => {
  const isOnLine = (batch: Batch) => onLine.has(batch.ref);
  const [own, others] = [largestUnits(pool.filter(isOnLine), Number.POSITIVE_INFINITY), largestUnits(pool.filter((batch) => !isOnLine(batch)), Number.POSITIVE_INFINITY)];
  let added = 0;
  for (let held = sum(own); held < qty; added++) {
    const next = others[added];
    if (next === undefined || onLine.size + added >= MAX_PARTS_PER_LINE) return undefined;
    held += next;
  }
  let joined = 0;
  for (let held = sum(others.slice(0, added)); held < qty; joined++) held += own[joined] as number;
  // After each batch, the units of the largest `joined` batches of `onLine`, and of the largest `added` others, that follow it.
  const ownAfter = largestAfterEach(pool, (batch) => isOnLine(batch), joined);
  const othersAfter = largestAfterEach(pool, (batch) => !isOnLine(batch), added);
  const chosen: Batch[] = [];
  let [held, ownLeft, othersLeft] = [0, joined, added];
  for (const [index, batch] of pool.entries()) {
    if (ownLeft + othersLeft === 0) break;
    const mine = isOnLine(batch);
    if ((mine ? ownLeft : othersLeft) === 0) continue;
    const rest = sum((ownAfter[index] as number[]).slice(0, ownLeft - (mine ? 1 : 0))) + sum((othersAfter[index] as number[]).slice(0, othersLeft - (mine ? 0 : 1)));
    if (held + batch.available + rest >= qty) {
      chosen.push(batch);
      held += batch.available;
      if (mine) ownLeft--;
      else othersLeft--;
    }
  }
  return chosen;
};

/** After each batch of `pool`, the units of the largest `keep` batches of a kind that follow it, largest first. */
const largestAfterEach = (pool: readonly Batch[], isOfKind: (batch: Batch) => boolean, keep: number): number[][] => {
  const largestAfter: number[][] = new Array(pool.length);
  let after: number[] = [];
  for (let index = pool.length - 1; index >= 0; index--) {
    largestAfter[index] = after;
    const batch = pool[index] as Batch;
    if (isOfKind(batch)) after = insertedLargest(after, batch.available, keep);
  }
  return largestAfter;
};

/** `units` (largest first, at most `keep`) with `one` put in its place, still at most `keep`. */
const insertedLargest = (units: readonly number[], one: number, keep: number): number[] => {
  const at = units.findIndex((some) => some < one);
  const inserted = at === -1 ? [...units, one] : [...units.slice(0, at), one, ...units.slice(at)];
  return inserted.slice(0, keep);
};

/**
 * Where the units of a part of a split line go when a change of its batch takes the part off
 * (`part`, on a batch not among `batches`): the parts they become, on `batches` (the SKU's others,
 * eligible for the line's recorded routing), never more units than the part's, best by the rule of
 * splitLine for the line as it then stands: every one in stock, when some way has it; the fewest
 * locations of the line, those of its other parts counted (with `batches`, theirs alone); the fewest
 * parts of the line, at most MAX_PARTS_PER_LINE, units joining a part it has on a batch adding none;
 * the fewest batches; then the one-line preference. So a part that one batch at the line's
 * locations can take goes whole to it, and the line keeps its order wherever its split allows it to
 * be placed again. They come in the order of the preference, each taking what its batch has and
 * the last the rest. Undefined when no way holds them: the whole line then leaves its order, as a
 * whole line does.
 */
export const movedPart = (line: Allocation, part: LinePart, batches: readonly Batch[], eligibility: Eligibility): Part[] | undefined => {
  const others = partsOf(line).filter(({ batchref }) => batchref !== part.batchref);
  const beside: PlacedBeside = { fixed: new Set(others.map(({ location }) => location)), onLine: new Set(others.map(({ batchref }) => batchref)) };
  const withStock = eligibleBatches(batches, eligibility)
    .filter((batch) => batch.ref !== part.batchref && batch.sku === line.sku && batch.available > 0)
    .sort(routedPreference(eligibility));
  for (const pool of [withStock.filter(({ eta }) => eta === null), withStock]) {
    const chosen = fewestParts(part.qty, pool, eligibility, splitOf(line) === 'batches' ? 1 : Number.POSITIVE_INFINITY, beside);
    if (chosen) return filled(part.qty, chosen);
  }
  return undefined;
};
