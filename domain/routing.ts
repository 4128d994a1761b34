import { UnknownLocation } from './errors';
import { type Location, type Position, SERVES_EVERYWHERE, allLocationsOf } from './locations';
import { type Batch, type OrderLine, canAllocate, locationOf } from './model';

/*
 * Routing (docs/api.md, "Where a line goes"): which locations may take a line, and which of their
 * batches it goes to. A request may name where its goods go (`destination`), or the one place it
 * takes them from (`location`: a pickup in store, a sale at the counter); either limits the
 * locations, and an inactive location takes no new line whatever the request names. A request that
 * names neither may take from every active location, which, with `default` the only one, is every
 * batch as before there were locations.
 */

/** Where an order's goods go: a country (ISO 3166-1 alpha-2), and the point they go to when known, for the distance. */
export interface Destination {
  readonly country: string;
  readonly position?: Position;
}

/** What a request says of where its lines may come from: both absent, any active location. */
export interface Routing {
  readonly destination?: Destination;
  readonly location?: string;
}

/** The locations a request's lines may come from, by id, and the destination whose distance breaks ties between them. */
export interface Eligibility {
  readonly locations: ReadonlyMap<string, Location>;
  readonly destination?: Destination;
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
export const eligibilityOf = (stored: readonly Location[], { destination, location }: Routing): Eligibility => {
  const all = allLocationsOf(stored);
  if (location !== undefined && !all.some(({ id }) => id === location)) throw new UnknownLocation(location);
  const eligible = all.filter(
    (candidate) => candidate.active && (location === undefined || candidate.id === location) && (destination === undefined || serves(candidate, destination.country)),
  );
  return { locations: new Map(eligible.map((candidate) => [candidate.id, candidate])), ...(destination ? { destination } : {}) };
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
export const routedPreference = ({ locations, destination }: Eligibility) => {
  const distances = new Map([...locations.values()].map((location) => [location.id, distanceTo(location, destination)]));
  return (a: Batch, b: Batch): number => {
    if (a.eta !== b.eta) {
      if (a.eta === null) return -1;
      if (b.eta === null) return 1;
      return a.eta < b.eta ? -1 : 1;
    }
    const [at, bt] = [locationOf(a), locationOf(b)];
    if (at !== bt) {
      const priority = (locations.get(at)?.priority ?? 0) - (locations.get(bt)?.priority ?? 0);
      if (priority !== 0) return priority;
      const [ad, bd] = [distances.get(at) ?? Number.POSITIVE_INFINITY, distances.get(bt) ?? Number.POSITIVE_INFINITY];
      if (ad !== bd) return ad < bd ? -1 : 1;
      return byText(at, bt);
    }
    return byText(a.ref, b.ref);
  };
};

/** The batches at an eligible location: the only ones a line of the request may take from, or wait for. */
export const eligibleBatches = (batches: readonly Batch[], { locations }: Eligibility): Batch[] => batches.filter((batch) => locations.has(locationOf(batch)));

/** The batches that can take the whole line, at eligible locations, best first (routedPreference). */
export const rankBatchesForLine = (batches: readonly Batch[], line: OrderLine, eligibility: Eligibility): Batch[] =>
  eligibleBatches(batches, eligibility)
    .filter((batch) => canAllocate(batch, line))
    .sort(routedPreference(eligibility));
