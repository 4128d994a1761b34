import { OrderNotAllocated, TooManyParts } from './errors';
import { routedStockOf } from './location-services';
import type { Location } from './locations';
import type { Batch, Order, Placement } from './model';
import { allocateOrder } from './order-services';
import type { BatchRepository, ExpiredUnits, SkuStock } from './ports';
import { type CartPromise, dayOf, promiseOf } from './promises';
import { type Routing, eligibleBatches } from './routing';
import { mostHeld } from './split-lines';

/*
 * A promise (docs/api.md, "Promises"): the plan POST /orders would make for a cart at this moment,
 * made by the order's own code (allocateOrder) on a view of the store that reads as the order reads
 * and writes nothing. Where the order gives back expired holds' units before it chooses, the view
 * counts the units the give-back would free (BatchRepository.expiredUnitsOn) as given back, in the
 * stock it answers after; where the order saves its plan, the view weighs it as the transaction
 * would (BatchRepository.allocationWrites) and keeps it.
 */

/** A cart: an order's lines and split, with no orderid, since nothing is recorded. */
export type Cart = Omit<Order, 'orderid'>;

/** The order id the view plans under: never read or written, since the view answers no line as allocated. */
const CART = 'promise';

/** What the view of a promise saw: the plan it kept, and the stock and locations it last read. */
interface PromiseRead {
  placements?: readonly Placement[];
  locations: Location[];
  readonly stocks: Map<string, SkuStock>;
}

/**
 * The promise of a cart, routed as an order with the same `routing` would be: its parcels, or the
 * lines no plan can hold, with their reasons and the most units a line of each could be promised.
 * Writes nothing, and ends no hold.
 */
export const promiseCart = async (cart: Cart, repository: BatchRepository, routing: Routing = {}): Promise<CartPromise> => {
  const read: PromiseRead = { locations: [], stocks: new Map() };
  const view = readOnlyView(repository, read);
  try {
    await allocateOrder({ ...cart, orderid: CART }, view, routing);
  } catch (error) {
    if (error instanceof TooManyParts) throw new TooManyParts('cart', '', error.writes, error.maxWrites);
    if (!(error instanceof OrderNotAllocated)) throw error;
    return { parcels: [], refused: await unpromised(cart, error, read, routing, view) };
  }
  return promiseOf(read.placements ?? [], read.locations, dayOf(repository.currentTime()), routing.destination);
};

/** The lines an order refused, each with the most units a line of its SKU could take, as split, on the stock the refusal rests on. */
const unpromised = async (cart: Cart, refusal: OrderNotAllocated, read: PromiseRead, routing: Routing, view: BatchRepository) => {
  const lines = cart.lines.filter(({ sku }) => read.stocks.has(sku));
  const { stockBySku, eligibility } = await routedStockOf(lines, lines.map(({ sku }) => read.stocks.get(sku) as SkuStock), read.locations, routing, view);
  return refusal.lines.map((line) => {
    const split = cart.lines.find(({ sku }) => sku === line.sku)?.split ?? cart.split ?? 'none';
    const pool = eligibleBatches(stockBySku.get(line.sku) ?? [], eligibility).filter(({ available }) => available > 0);
    return { ...line, promisableQty: line.reason === 'out_of_stock' ? mostHeld(pool, split) : 0 };
  });
};

/** A batch as it reads once `units` of its expired holds are given back, and its bound raised past those left when the give-back would read every record. */
const givenBack = (batch: Batch, { units, allRead, earliestLeft }: ExpiredUnits): Batch => {
  const bound = allRead ? { heldFrom: earliestLeft } : {};
  return {
    ...batch,
    available: batch.available + units,
    held: (batch.held ?? 0) - units,
    ...bound,
    ...(batch.pieces && allRead ? { pieces: batch.pieces.map((piece) => ({ ...piece, heldFrom: earliestLeft })) } : {}),
  };
};

/**
 * The store as an order's planning reads it, with nothing written: the reads it makes pass through,
 * the units of expired holds a give-back would free count as given back in every later read of
 * their batch (and a give-back on a batch already counted frees none, as the store's would find them
 * gone), the plan it saves is kept, and the out-of-stock lines it records are not. Any other write
 * is a fault of the code, never of the request.
 */
const readOnlyView = (repository: BatchRepository, read: PromiseRead): BatchRepository => {
  const freed = new Map<string, ExpiredUnits>();
  const asFreed = (batch: Batch): Batch => {
    const found = freed.get(batch.ref);
    return found ? givenBack(batch, found) : batch;
  };
  const planning: Partial<BatchRepository> = {
    currentTime: () => repository.currentTime(),
    routingLocations: async (naming) => {
      read.locations = await repository.routingLocations(naming);
      return read.locations;
    },
    stockOf: async (sku, options) => {
      const stock = await repository.stockOf(sku, options);
      const seen = { ...stock, batches: stock.batches.map(asFreed) };
      read.stocks.set(sku, seen);
      return seen;
    },
    freeExpiredHolds: async (batch, now, atLeast) => {
      if (freed.has(batch.ref)) return 0;
      const expired = await repository.expiredUnitsOn(batch, now, atLeast);
      if (expired.units > 0) freed.set(batch.ref, expired);
      return expired.units;
    },
    allocationsOf: async () => [],
    recordOutOfStock: async () => undefined,
    // Weighed as the order's transaction would be: a plan too large for it is refused as the order's is.
    saveAllocations: async (placements) => {
      const { writes, maxWrites } = repository.allocationWrites(placements);
      if (writes > maxWrites) return { outcome: 'too-many-writes', writes, maxWrites };
      read.placements = placements;
      return { outcome: 'saved' };
    },
  };
  return new Proxy(repository, {
    get(store, name: keyof BatchRepository) {
      const own = planning[name];
      if (own) return own;
      if (READS.has(name)) return (store[name] as (...args: unknown[]) => unknown).bind(store);
      throw new Error(`A promise writes nothing, and its planning called ${String(name)}`);
    },
  });
};

/** The reads an order's planning may make besides those the view answers itself. */
const READS = new Set<keyof BatchRepository>(['locations', 'location', 'batch', 'skuKnown', 'expiredUnitsOn', 'heldOn']);
