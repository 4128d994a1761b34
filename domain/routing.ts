import { UnknownLocation } from './errors';
import { type Location, type Position, SERVES_EVERYWHERE, allLocationsOf } from './locations';
import { type Allocation, type Batch, type LineMove, type LineRefusal, type Order, type OrderLine, type OrderPlan, type Placement, canAllocate, locationOf } from './model';
import type { Destination, Routing } from './request-routing';

/*
 * Routing (docs/api.md, "Where a line goes"): which locations may take a line, and which of their
 * batches it goes to. A request may name where its goods go (`destination`), or the one place it
 * takes them from (`location`: a pickup in store, a sale at the counter); either limits the
 * locations, and an inactive location takes no new line whatever the request names. A request that
 * names neither may take from every active location, which, with `default` the only one, is every
 * batch as before there were locations.
 */

// Defined in request-routing.ts, which says why; named from here, with the rest of routing.
export type { Destination, Routing };

/**
 * The routing a line or a hold records: what its request named, only when it named something
 * (`routing` absent for a request that named neither, and on a line or hold placed before they
 * recorded it, which reads as naming neither).
 */
export const recordedRouting = ({ destination, location }: Routing): { readonly routing?: Routing } =>
  destination === undefined && location === undefined ? {} : { routing: { ...(destination ? { destination } : {}), ...(location === undefined ? {} : { location }) } };

/** Whether two requests name the same routing: the same country, position and location, each absent in both or equal. */
export const isSameRouting = (a: Routing = {}, b: Routing = {}): boolean =>
  a.location === b.location &&
  a.destination?.country === b.destination?.country &&
  a.destination?.position?.lat === b.destination?.position?.lat &&
  a.destination?.position?.lng === b.destination?.position?.lng;

/** The locations a request's lines may come from, by id, and the destination whose distance breaks ties between them. */
export interface Eligibility {
  readonly locations: ReadonlyMap<string, Location>;
  readonly destination?: Destination;
  /** With no location eligible: which of the request's `location` and `destination` left none. */
  readonly noneBecause?: string;
}

/** Whether the location sends to the country: every location that serves `*` does. */
const serves = (location: Location, country: string): boolean => location.serves.includes(SERVES_EVERYWHERE) || location.serves.includes(country);

/**
 * The locations a request may take from, of every location stored (`default` among them, as built
 * in until replaced): active ones, that one alone when it names a location, and only those that
 * serve its destination when it names one. A named location that does not exist is a field of the
 * request refused (UnknownLocation), as a new batch's is; one that exists but is inactive, or serves
 * not the destination, leaves none eligible, which the caller refuses as `no_location`.
 */
export const eligibilityOf = (stored: readonly Location[], routing: Routing): Eligibility => {
  const all = allLocationsOf(stored);
  if (routing.location !== undefined && !all.some(({ id }) => id === routing.location)) throw new UnknownLocation(routing.location);
  return eligibleAmong(all, routing);
};

/** Of every location (`default` among them), those eligible for the routing: none when it names a location not among them. */
export const eligibleAmong = (all: readonly Location[], { destination, location }: Routing): Eligibility => {
  const eligible = all.filter(
    (candidate) => candidate.active && (location === undefined || candidate.id === location) && (destination === undefined || serves(candidate, destination.country)),
  );
  return {
    locations: new Map(eligible.map((candidate) => [candidate.id, candidate])),
    ...(destination ? { destination } : {}),
    ...(eligible.length === 0 ? { noneBecause: whyNoneEligible(all, { destination, location }) } : {}),
  };
};

/** Which of the routing's `location` and `destination` left no location eligible, in the words a refusal gives it. */
const whyNoneEligible = (all: readonly Location[], { destination, location }: Routing): string => {
  const named = location === undefined ? undefined : all.find(({ id }) => id === location);
  const servesNot = named && destination && !serves(named, destination.country) ? `does not serve ${destination.country}` : undefined;
  if (named && !named.active) return `location ${named.id} is inactive${servesNot ? ` and ${servesNot}` : ''}`;
  if (named && servesNot) return `location ${named.id} ${servesNot}`;
  return destination ? `no active location serves ${destination.country}` : 'no location is active';
};

const EARTH_RADIUS_KM = 6371;
const radians = (degrees: number) => (degrees * Math.PI) / 180;

/** The great-circle distance (haversine), in kilometres: close enough to rank places, and the same on every machine for the same inputs. */
export const distanceKm = (from: Position, to: Position): number => {
  const dLat = radians(to.lat - from.lat);
  const dLng = radians(to.lng - from.lng);
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(radians(from.lat)) * Math.cos(radians(to.lat)) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(a)));
};

/**
 * The location's distance to the destination, where both positions are known; otherwise
 * Infinity, so that a location known to be near comes before one whose distance is unknown, and
 * two unknown distances tie.
 */
const distanceTo = (location: Location | undefined, destination: Destination | undefined): number =>
  location?.position && destination?.position ? distanceKm(location.position, destination.position) : Number.POSITIVE_INFINITY;

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The order of the batches a line may go to, best first:
 * 1. in stock (eta null) before shipments, and among shipments the earliest eta first;
 * 2. then the location's priority (lower first), its distance to the destination (nearer first,
 *    unknown last), its id;
 * 3. then the batch's reference, so that the order never depends on the store's.
 * With every batch at one location, this is the rule from before there were locations: in stock,
 * then the earliest shipment, then the reference.
 */
export const routedPreference = (eligibility: Eligibility) => {
  const byLocation = locationPreference(eligibility);
  return (a: Batch, b: Batch): number => {
    if (a.eta !== b.eta) {
      if (a.eta === null) return -1;
      if (b.eta === null) return 1;
      return a.eta < b.eta ? -1 : 1;
    }
    return byLocation(locationOf(a), locationOf(b)) || byText(a.ref, b.ref);
  };
};

/** The order of the eligible locations, by id, most preferred first: priority, distance to the destination (unknown last), id. */
export const locationPreference = ({ locations, destination }: Eligibility) => {
  const distances = new Map([...locations.values()].map((location) => [location.id, distanceTo(location, destination)]));
  return (a: string, b: string): number => {
    if (a === b) return 0;
    const priority = (locations.get(a)?.priority ?? 0) - (locations.get(b)?.priority ?? 0);
    if (priority !== 0) return priority;
    const [ad, bd] = [distances.get(a) ?? Number.POSITIVE_INFINITY, distances.get(b) ?? Number.POSITIVE_INFINITY];
    if (ad !== bd) return ad < bd ? -1 : 1;
    return byText(a, b);
  };
};

/** The batches at an eligible location: the only ones a line of the request may take from, or wait for. */
export const eligibleBatches = (batches: readonly Batch[], { locations }: Eligibility): Batch[] => batches.filter((batch) => locations.has(locationOf(batch)));

/** The batches that can take the whole line, at eligible locations, best first (routedPreference). */
export const rankBatchesForLine = (batches: readonly Batch[], line: OrderLine, eligibility: Eligibility): Batch[] =>
  eligibleBatches(batches, eligibility)
    .filter((batch) => canAllocate(batch, line))
    .sort(routedPreference(eligibility));

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
 * (3 + 3x26 + 2x26^2 + 26^3), whatever the lines: an order that three parcels or fewer can carry,
 * with its lines at 26 locations or fewer, comes in fewest. A step costs a few microseconds, so the
 * search stays within about a tenth of a second for 25 lines.
 */
export const MAX_SEARCH_STEPS = 20_000;

/**
 * Where each line of an order (or a hold) goes, all lines at once, given each SKU's stock
 * (undefined for a SKU never added), among the batches the request may take from:
 * 1. as few lines on shipments as can be: a line goes to a shipment only when no batch in stock at
 *    an eligible location can take it (the lines have different SKUs, so they never compete for one
 *    batch, and each line's choice is its own);
 * 2. then as few locations as can be (one parcel rather than two): the smallest set of locations at
 *    which every line can be taken, searched exactly over the sets of each size in turn, smallest
 *    first, the locations in their order of preference (locationPreference), so that of two sets
 *    of one size the one whose most preferred location is more preferred wins, then the next
 *    location's, and so on; past MAX_LOCATIONS_SEARCHED, the sets that cover are built line by
 *    line (fewestLocations), within MAX_SEARCH_STEPS;
 * 3. then each line to the batch the single-line rule (routedPreference) prefers among those at
 *    the chosen locations.
 * `placedAt`: the locations of the order's lines placed already (a request that adds lines to an
 * order), chosen before any: a line that can be taken at one of them adds no location.
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
  const options: { readonly line: OrderLine; readonly batches: Batch[] }[] = [];
  for (const { sku, qty } of lines) {
    const batches = stockBySku.get(sku);
    if (batches === undefined) {
      refusals.push({ sku, reason: 'unknown_sku' });
      continue;
    }
    const line = { orderid, sku, qty };
    const candidates = rankBatchesForLine(batches, line, eligibility);
    if (candidates.length === 0) {
      refusals.push({ sku, reason: eligibility.locations.size === 0 ? 'no_location' : 'out_of_stock' });
      continue;
    }
    const inStock = candidates.filter(({ eta }) => eta === null);
    options.push({ line, batches: inStock.length > 0 ? inStock : candidates });
  }
  if (refusals.length > 0) return { kind: 'refused', refusals };

  // Lines by SKU, so that the plan does not depend on the order the request lists them in.
  const bySku = [...options].sort((a, b) => (a.line.sku < b.line.sku ? -1 : a.line.sku > b.line.sku ? 1 : 0));
  // The rank of each line's best batch (its batches are best first) at one of `chosen`, from the
  // rank of its first batch at each location, so that comparing two sets costs lines x locations.
  const firstRanks = bySku.map(({ batches }) => {
    const ranks = new Map<string, number>();
    batches.forEach((candidate, rank) => {
      if (!ranks.has(locationOf(candidate))) ranks.set(locationOf(candidate), rank);
    });
    return ranks;
  });
  const picks = (chosen: readonly string[]) =>
    firstRanks.map((ranks) => {
      let best = -1;
      for (const location of chosen) {
        const rank = ranks.get(location);
        if (rank !== undefined && (best < 0 || rank < best)) best = rank;
      }
      return { rank: best };
    });
  const placed = [...placedAt];
  const cover = [
    ...placed,
    ...fewestLocations(
      bySku.map(({ batches }) => new Set(batches.map(locationOf))).filter((locations) => !placed.some((location) => locations.has(location))),
      locationPreference(eligibility),
      (chosen) => picks([...placed, ...chosen]),
    ),
  ];
  const placements: Placement[] = options.map(({ line, batches }) => {
    // The batches are best first, and the cover has a location of every line's.
    const batch = batches.find((candidate) => cover.includes(locationOf(candidate))) as Batch;
    return { allocation: { ...line, batchref: batch.ref }, batch };
  });
  return { kind: 'placed', placements };
};

/** Line by line, the plan whose line has the better batch by the single-line rule (a lower rank) first. */
const compareRanks = (a: readonly { rank: number }[], b: readonly { rank: number }[]): number => {
  for (const [index, { rank }] of a.entries()) {
    const other = (b[index] as { rank: number }).rank;
    if (rank !== other) return rank - other;
  }
  return 0;
};

/**
 * The fewest locations that have one of each line's (`each`: the locations each line can be taken
 * at): sets of each size in turn, smallest first; of the sets of the smallest size that cover every
 * line, the one whose lines get the better batches by the single-line rule (`ranksOf`, compareRanks),
 * the first in the order of their locations' preference of a tie (lexicographic over the locations
 * sorted by `preference`). Up to MAX_LOCATIONS_SEARCHED locations, every set of a size is tried; past them,
 * the sets of a size that cover are built (bestCoveringSet). Past MAX_SEARCH_STEPS, the best set of
 * the size it was searching that it found, and when it found none, greedy: the location that covers
 * most lines not yet covered, the more preferred of a tie, until every line is.
 */
const fewestLocations = (
  each: readonly ReadonlySet<string>[],
  preference: (a: string, b: string) => number,
  ranksOf: (chosen: readonly string[]) => readonly { rank: number }[],
): string[] => {
  const all = [...new Set(each.flatMap((locations) => [...locations]))].sort(preference);
  const covers = (chosen: readonly string[]) => each.every((locations) => chosen.some((location) => locations.has(location)));
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
    let best = all[0] as string;
    let bestCount = -1;
    for (const location of all) {
      const count = uncovered.filter((locations) => locations.has(location)).length;
      if (count > bestCount) [best, bestCount] = [location, count];
    }
    chosen.push(best);
    uncovered = uncovered.filter((locations) => !locations.has(best));
  }
  return chosen;
};

/**
 * Of the sets of `size` locations that cover every line, the one whose lines get the better batches:
 * built a location at a time, each one of those of the line with fewest locations among those not
 * yet covered, so that a set stops growing once it is `size` or covers. Two different sets of the
 * fewest never tie (each has a location that some line can be taken at only there), so the order
 * they are found in decides nothing. Each set started or grown is a step of `budget`, which it
 * counts down; past them, the best it found so far, if any.
 */
const bestCoveringSet = (
  each: readonly ReadonlySet<string>[],
  size: number,
  ranksOf: (chosen: readonly string[]) => readonly { rank: number }[],
  budget: { steps: number },
): string[] | undefined => {
  const best = new BestSet(ranksOf);
  const chosen: string[] = [];
  const build = (uncovered: readonly ReadonlySet<string>[]): boolean => {
    if (--budget.steps < 0) return false;
    if (uncovered.length === 0) {
      best.offer(chosen);
      return true;
    }
    if (chosen.length === size) return true;
    const narrowest = uncovered.reduce((fewest, locations) => (locations.size < fewest.size ? locations : fewest));
    for (const location of narrowest) {
      chosen.push(location);
      const going = build(uncovered.filter((locations) => !locations.has(location)));
      chosen.pop();
      if (!going) return false;
    }
    return true;
  };
  build(each);
  return best.set;
};

/** Of the sets offered, the first whose lines get the better batches by the single-line rule (compareRanks); each set's ranks worked out once. */
class BestSet {
  set?: string[];
  private ranks?: readonly { rank: number }[];

  constructor(private readonly ranksOf: (chosen: readonly string[]) => readonly { rank: number }[]) {}

  offer(chosen: readonly string[]): void {
    const ranks = this.ranksOf(chosen);
    if (this.ranks !== undefined && compareRanks(ranks, this.ranks) >= 0) return;
    [this.set, this.ranks] = [[...chosen], ranks];
  }
}

/**
 * Every set of `size` of `items`, in lexicographic order of their positions (at most 924 of 12),
 * until `visit` answers false.
 */
export const forEachCombination = (items: readonly string[], size: number, visit: (chosen: readonly string[]) => boolean | void): void => {
  const chosen: string[] = [];
  const search = (from: number): boolean => {
    if (chosen.length === size) return visit(chosen) !== false;
    for (let index = from; index <= items.length - (size - chosen.length); index++) {
      chosen.push(items[index] as string);
      const going = search(index + 1);
      chosen.pop();
      if (!going) return false;
    }
    return true;
  };
  search(0);
};

/**
 * Where each line taken off `shrunk` goes, in the order they come off (linesToTakeOff): to the
 * batch the rule for one line (routedPreference) picks among the SKU's others at the locations the
 * routing the line records allows now, of every location stored (active ones; those that serve its
 * destination; the one it names), as the moves before it leave them; or out of its order when none
 * of them can take it whole. A line that records no routing may go to every active location. So the
 * moves can be written in groups cut anywhere, in order, and each still goes where it would have
 * gone alone.
 */
export const planLineMoves = (shrunk: Batch, lines: readonly Allocation[], batches: readonly Batch[], stored: readonly Location[]): LineMove[] => {
  const all = allLocationsOf(stored);
  // Never back to `shrunk`: while it holds more than its qty, a line taken off it cannot fit back.
  let others = batches.filter(({ ref }) => ref !== shrunk.ref);
  return lines.map((line) => {
    const to = rankBatchesForLine(others, line, eligibleAmong(all, line.routing ?? {}))[0];
    if (!to) return { line, to: null };
    others = others.map((batch) => (batch === to ? { ...to, available: to.available - line.qty } : batch));
    return { line, to: to.ref };
  });
};
