import { LocationContended, LocationNotFound } from './errors';
import { type Location, type LocationDefinition, allLocationsOf, builtInLocation, definedLocation, isSameLocation } from './locations';
import { type Batch, locationOf } from './model';
import type { BatchRepository, SkuStock, StockRead } from './ports';
import { type Eligibility, type Routing, eligibilityOf } from './routing';

/*
 * Locations (docs/api.md, "Locations"): created or replaced whole, read one or all. The built-in
 * `default` reads as DEFAULT_LOCATION until a client replaces it; nothing is stored for it before.
 */

/** Rounds of read and conditional write before giving up with a 503; each lost round means another request replaced the location first. */
const MAX_LOCATION_ROUNDS = 8;

/**
 * Creates the location, or replaces the one with its id, whole. A replacement by the same location
 * (the built-in `default` as it reads, among them) is a repeat that writes nothing, so that no
 * LocationChanged is announced for it: the write is made only for a change, and on condition that
 * the location is still as read, so that a change made meanwhile is read and compared again rather
 * than overwritten unseen. Answers the location as it now is; `created` is false for a location
 * that existed, `default` always.
 */
export const putLocation = async (
  definition: LocationDefinition,
  repository: BatchRepository,
): Promise<{ readonly location: Location; readonly created: boolean }> => {
  const location = definedLocation(definition);
  for (let round = 0; round < MAX_LOCATION_ROUNDS; round++) {
    const stored = await repository.location(location.id);
    const current = stored?.location ?? builtInLocation(location.id);
    if (current && isSameLocation(current, location)) return { location, created: false };
    if ((await repository.saveLocation(location, stored?.revision)) === 'saved') return { location, created: current === undefined };
  }
  throw new LocationContended(location.id, MAX_LOCATION_ROUNDS);
};

/** The location as it reads now: stored, or the built-in `default`. */
export const locationById = async (id: string, repository: BatchRepository): Promise<Location> => {
  const location = (await repository.location(id))?.location ?? builtInLocation(id);
  if (!location) throw new LocationNotFound(id);
  return location;
};

/** Every location, `default` among them, by priority, then id. */
export const allLocations = async (repository: BatchRepository): Promise<Location[]> => allLocationsOf(await repository.locations());

/**
 * The locations to route by: those the store keeps for routing (BatchRepository.routingLocations,
 * which may be a moment old), or, when a batch read or the request names a location they do not
 * know, the locations read anew: that location was made since, and its stock, or the request that
 * names it, is not refused for a list older than it.
 */
export const locationsKnowing = async (locations: Location[], batches: readonly Batch[], { location }: Routing, repository: BatchRepository): Promise<Location[]> => {
  const known = new Set(allLocationsOf(locations).map(({ id }) => id));
  const named = [...(location === undefined ? [] : [location]), ...batches.map(locationOf)];
  const unknown = [...new Set(named.filter((id) => !known.has(id)))];
  return unknown.length > 0 ? repository.routingLocations(unknown) : locations;
};

/**
 * What a request of several lines (an order, a hold) plans on: each SKU's batches as read (undefined
 * for a SKU never added), and the locations its lines may come from, by the request's routing.
 */
export const routedStockOf = async (
  lines: readonly { readonly sku: string }[],
  stocks: readonly SkuStock[],
  locations: Location[],
  routing: Routing,
  repository: BatchRepository,
): Promise<{ readonly stockBySku: Map<string, readonly Batch[] | undefined>; readonly eligibility: Eligibility }> => {
  const stockBySku = new Map(lines.map(({ sku }, index) => [sku, stocks[index]?.known ? stocks[index].batches : undefined]));
  const found = [...stockBySku.values()].flatMap((batches) => batches ?? []);
  return { stockBySku, eligibility: eligibilityOf(await locationsKnowing(locations, found, routing, repository), routing) };
};

/**
 * The SKUs' stock and the locations that route it, read at once; on a settled read (one that a
 * refusal rests on), the locations first and the stock after them. A process's locations are shared
 * by its requests (BatchRepository.routingLocations), and a list read after a request's stock would
 * pair them from two moments: a location closed since, and a batch added elsewhere since, would
 * make a refusal true at no one moment.
 */
export const stockAndLocations = async (skus: readonly string[], read: StockRead, repository: BatchRepository): Promise<[SkuStock[], Location[]]> => {
  if (!read.settled) {
    const [stocks, locations] = await Promise.all([Promise.all(skus.map((sku) => repository.stockOf(sku, read))), repository.routingLocations()]);
    return [stocks, locations];
  }
  const locations = await repository.routingLocations();
  return [await Promise.all(skus.map((sku) => repository.stockOf(sku, read))), locations];
};
