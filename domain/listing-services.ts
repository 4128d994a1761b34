import { LocationNotFound } from './errors';
import { allLocationsOf } from './locations';
import type { BatchRepository } from './ports';
import { stockLevelsRead } from './services';
import type { ListRequest, ListedStock, SkuList, StockListPage } from './stock-listings';

/*
 * Lists of SKUs with their stock (domain/stock-listings.ts; docs/api.md, "Listings"), read a page at
 * a time: the store's list names the SKUs of a page, and each is read as GET /skus/{sku}/stock reads it.
 */

/** How many SKUs of a page are read at once: a page of 100 is read in 10 rounds, none holding more than a few connections. */
const SKUS_READ_AT_ONCE = 10;

/** A page of the list's SKUs with their levels; LocationNotFound for a list of a location that does not exist. */
export const stockList = async (list: SkuList, request: ListRequest, repository: BatchRepository): Promise<StockListPage> => {
  const location = list.kind === 'location' ? list.location : undefined;
  const [locations, page] = await Promise.all([location === undefined ? undefined : repository.routingLocations([location]), repository.listedSkus(list, request)]);
  if (locations && !allLocationsOf(locations).some(({ id }) => id === location)) throw new LocationNotFound(location as string);
  const entries: ListedStock[] = [];
  for (let first = 0; first < page.skus.length; first += SKUS_READ_AT_ONCE) {
    const read = await Promise.all(page.skus.slice(first, first + SKUS_READ_AT_ONCE).map((sku) => stockLevelsRead(sku, repository, location)));
    for (const levels of read) {
      // Listed, so added: a list names a SKU only once its first batch's write made it known.
      if (!levels) continue;
      const { sku, inStock, incoming, held, nextEta, onHand, committed } = levels;
      entries.push({ sku, inStock, incoming, held, nextEta, onHand, committed, available: inStock + incoming });
    }
  }
  return { entries, ...(page.next ? { next: page.next } : {}) };
};
