import { LocationNotFound, UnknownSku } from './errors';
import { allLocationsOf } from './locations';
import type { BatchRepository } from './ports';
import type { HistoryPage, HistoryRequest } from './stock-history';

/*
 * A SKU's history of on-hand stock (domain/stock-history.ts; docs/api.md, "History"), read a page at a time.
 */

/** The SKU's history, a page of it newest first; UnknownSku for a SKU never added, LocationNotFound for a location that does not exist. */
export const stockHistory = async (sku: string, request: HistoryRequest, repository: BatchRepository): Promise<HistoryPage> => {
  const { location } = request;
  const [known, locations, page] = await Promise.all([
    repository.skuKnown(sku),
    location === undefined ? undefined : repository.routingLocations([location]),
    repository.stockHistory(sku, request),
  ]);
  if (!known) throw new UnknownSku(sku);
  if (locations && !allLocationsOf(locations).some(({ id }) => id === location)) throw new LocationNotFound(location as string);
  return page;
};
