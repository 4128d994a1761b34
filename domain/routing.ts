import { UnknownLocation } from './errors';
import { type Location, type Position, SERVES_EVERYWHERE, allLocationsOf } from './locations';
import { type Allocation, type Batch, type LineMove, type OrderLine, canAllocate, locationOf } from './model';
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
