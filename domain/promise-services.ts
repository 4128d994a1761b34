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

/** What a promise counted as given back on a batch: the units, the give-backs, and the batch as it was read when they were counted. */
interface CountedOnBatch {
  readonly expired: ExpiredUnits;
  readonly units: number;
  readonly asRead: string;
}

/**
 * What a batch's units and holds read as: its available and held units and its count of the
 * writes of holds' takes, and each piece's. A batch that reads otherwise was written since.
 */
const readingOf = ({ available, held, heldTakes, pieces }: Batch): string =>
  JSON.stringify([available, held, heldTakes, (pieces ?? []).map((piece) => [piece.piece, piece.available, piece.held, piece.heldTakes])]);

/**
 * A batch as it reads once the units counted on it are given back, its bound raised as the
 * give-back would raise it when it would read every record; as read, when it no longer is what the
 * units were counted on (another request gave them back, or changed it, meanwhile).
 */
const asGivenBack = (batch: Batch, counted: CountedOnBatch | undefined): Batch => {
  if (!counted || readingOf(batch) !== counted.asRead) return batch;
  const { expired, units } = counted;
  const bound = expired.allRead ? { heldFrom: expired.boundLeft } : {};
  return {
    ...batch,
    available: batch.available + units,
    held: (batch.held ?? 0) - units,
    ...bound,
    ...(batch.pieces && expired.allRead ? { pieces: batch.pieces.map((piece) => ({ ...piece, heldFrom: expired.boundLeft })) } : {}),
  };
};

/**
 * The store as an order's planning reads it, with nothing written. Every read of stock is settled
 * (a spread batch's pieces read, not remembered: what the order's take comes to once its condition
 * has checked them) and leaves a cooled spread as it is. Where the order would give back expired
 * holds' units, the view counts what that give-back would free, after those it counted before on the
 * batch, and every later read of the batch counts them as given back while the batch is still as it
 * was when they were counted. The plan it saves is weighed as the order's transaction would be, and
 * kept; the out-of-stock lines it records are not. Any other call is a fault of the code, never of
 * the request.
 */
const readOnlyView = (repository: BatchRepository, read: PromiseRead): BatchRepository => {
  const counted = new Map<string, CountedOnBatch>();
  const planning: Partial<BatchRepository> = {
    currentTime: () => repository.currentTime(),
    routingLocations: async (naming) => {
      read.locations = await repository.routingLocations(naming);
      return read.locations;
    },
    stockOf: async (sku) => {
      const stock = await repository.stockOf(sku, { settled: true, writesNothing: true });
      for (const batch of stock.batches) {
        const before = counted.get(batch.ref);
        if (before && readingOf(batch) !== before.asRead) counted.delete(batch.ref);
      }
      const seen = { ...stock, batches: stock.batches.map((batch) => asGivenBack(batch, counted.get(batch.ref))) };
      read.stocks.set(sku, seen);
      return seen;
    },
    freeExpiredHolds: async (batch, now, atLeast) => {
      const before = counted.get(batch.ref);
      const expired = await repository.expiredUnitsOn(batch, now, atLeast, before?.expired.counted);
      // A give-back that would read every record raises the batch's bound even when it frees nothing.
      if (expired.units > 0 || expired.allRead) counted.set(batch.ref, { expired, units: (before?.units ?? 0) + expired.units, asRead: before?.asRead ?? readingOf(batch) });
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
    get(_store, name: keyof BatchRepository) {
      const own = planning[name];
      if (own) return own;
      throw new Error(`A promise writes nothing, and its planning called ${String(name)}`);
    },
  });
};
