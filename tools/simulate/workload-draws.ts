/*
 * The pieces a run's workload is drawn from (./workload.ts, ./episodes.ts): its SKUs, orders, holds,
 * transfers and shipments, the moments it moves the clock by, and the requests built of them.
 */
import type { Chance } from './chance';
import { type Draft, type Places, type StartingBatch } from './workload-steps';

export const SKUS = ['s1', 's2'] as const;
export const ORDERS = ['o1', 'o2', 'o3', 'o4', 'o5', 'o6'] as const;
export const HOLDS = ['h1', 'h2', 'h3', 'h4'] as const;
export const TRANSFERS = ['t1', 't2', 't3'] as const;
/** Few enough that a shipment's id is often one used already, for the same parcel or another. */
export const SHIPMENTS = ['parcel1', 'parcel2', 'parcel3'] as const;
export const COUNTRIES = ['FR', 'DE'] as const;
export const SHIPMENT_ETAS = ['2027-03-01', '2027-04-01'] as const;
export const TRANSFER_ETA = '2027-05-01';
/** The orders of a burst: lines for a hot SKU all sent at one step, as a sale's opening sends them. */
export const BURST_ORDERS = Array.from({ length: 10 }, (_, index) => `q${index + 1}`);
/** Time passing: past a short hold, a long one, a spread batch's cooling, everything. */
export const ADVANCES_MS = [5_000, 60_000, 180_000, 1_000_000] as const;

export const routingOf = (chance: Chance, { locations }: Places) =>
  chance.weighted<object>([
    [{}, 6],
    [{ destination: { country: chance.pick(COUNTRIES) } }, 2],
    [{ location: chance.pick(locations) }, 2],
  ]);

export const linesOf = (chance: Chance) => {
  const skus = chance.chance(0.5) ? [...SKUS] : [chance.pick(SKUS)];
  return skus.map((sku) => ({ sku, qty: chance.int(1, 3) }));
};

/**
 * Units of an order's lines leaving in one parcel: of one SKU or both, a few units each (at times
 * more than the line has left), from a place named or left to the order.
 */
export const shipmentOf = (chance: Chance, { locations }: Places, orderid: string, skus: readonly string[] = chance.chance(0.3) ? [...SKUS] : [chance.pick(SKUS)]): Draft => ({
  kind: 'http',
  routeKey: 'POST /shipments',
  body: { shipmentid: chance.pick(SHIPMENTS), orderid, ...(chance.chance(0.4) ? { location: chance.pick(locations) } : {}), lines: skus.map((sku) => ({ sku, qty: chance.int(1, 4) })) },
});

/** An order's lines, larger than one batch may hold, one of them sometimes whole by its own `split`. */
export const splitLinesOf = (chance: Chance) =>
  linesOf(chance).map(({ sku }) => ({ sku, qty: chance.int(3, 9), ...(chance.chance(0.2) ? { split: chance.pick(['none', 'batches', 'locations']) } : {}) }));

/** A promised cart's order, or its hold, under an id of its own, so that it is planned as new. */
export const placedAsPromised = (chance: Chance, cart: object): Draft =>
  chance.chance(0.6)
    ? { kind: 'http', routeKey: 'POST /orders', body: { orderid: `promised${chance.int(1, 1_000_000_000)}`, ...cart } }
    : { kind: 'http', routeKey: 'POST /holds', body: { holdid: `promised${chance.int(1, 1_000_000_000)}`, ttl_seconds: 900, ...cart } };

/** A cart to promise: an order's lines, whole or allowed to split, and its routing, with no orderid. */
export const cartOf = (chance: Chance, places: Places) =>
  chance.chance(0.5) ? { lines: linesOf(chance), ...routingOf(chance, places) } : { split: chance.pick(['batches', 'locations']), lines: splitLinesOf(chance), ...routingOf(chance, places) };

export const locationBody = (chance: Chance, id: string) => ({
  name: id,
  priority: chance.int(0, 3),
  serves: chance.pick([['*'], ['FR'], ['DE'], ['FR', 'DE']]),
  ...(chance.chance(0.2) ? { active: false } : {}),
});

export const drawBatch = (chance: Chance, ref: string, locations: readonly string[]): StartingBatch => ({
  ref,
  sku: chance.pick(SKUS),
  qty: chance.int(1, 8),
  eta: chance.chance(0.3) ? chance.pick(SHIPMENT_ETAS) : null,
  location: chance.chance(0.5) ? 'default' : chance.pick(locations),
});

/**
 * A batch large enough to spread over pieces when its takes keep meeting conflicts (the store keeps
 * eight units or more on the batch's own item): a hot SKU's, which spreads and gathers in the run.
 */
export const hotBatch = (chance: Chance, ref: string): StartingBatch => ({ ref, sku: chance.pick(SKUS), qty: chance.int(12, 30), eta: null, location: 'default' });

export const addBatch = (chance: Chance, { ref, sku, qty, eta, location }: StartingBatch): Draft => ({
  kind: 'http',
  routeKey: 'POST /add_batch',
  body: { ref, sku, qty, eta, ...(location === 'default' && chance.chance(0.5) ? {} : { location }) },
});

/**
 * A transfer from where a batch in stock is, to another location: most of them can be made, and
 * meet the lines that take from the same batch.
 */
export const transfer = (chance: Chance, { locations, batches }: Places, transferid: string): Draft => {
  const inStock = batches.filter(({ eta }) => eta === null);
  // One in four from anywhere: from where an earlier transfer's batch was received, among others.
  const source = inStock.length > 0 && chance.chance(0.75) ? chance.pick(inStock) : undefined;
  const { sku, location: from } = source ?? { sku: chance.pick(SKUS), location: chance.pick(locations) };
  const to = chance.pick(locations.filter((id) => id !== from));
  // One in three moves all its source had: the transfer and the lines racing it meet at the last unit.
  const qty = source && chance.chance(0.35) ? source.qty : chance.int(1, 3);
  return { kind: 'http', routeKey: 'POST /transfers', body: { transferid, sku, qty, from, to, eta: TRANSFER_ETA } };
};
