import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HoldNotPlaced, OrderNotAllocated, TooManyParts } from '../../domain/errors';
import { placeHold } from '../../domain/hold-services';
import { putLocation } from '../../domain/location-services';
import type { Location } from '../../domain/locations';
import type { Batch, LineRefusal, Placement, Split } from '../../domain/model';
import { allocateOrder } from '../../domain/order-services';
import { type Cart, promiseCart } from '../../domain/promise-services';
import { type CartPromise, daysAfter, promiseOf } from '../../domain/promises';
import type { Routing } from '../../domain/routing';
import { addBatch } from '../../domain/services';
import { FakeRepository } from '../support/fake-repository';

const batch = (ref: string, sku: string, available: number, eta: string | null = null, location = 'default'): Batch => ({ ref, sku, qty: available, available, eta, location });

const whole = (sku: string, qty: number, on: Batch): Placement => ({ allocation: { orderid: 'o', sku, qty, batchref: on.ref }, batch: on });

const lyon: Location = { id: 'lyon', name: 'Lyon', priority: 0, serves: ['*'], active: true, handlingDays: 1, transitDays: { FR: 1, '*': 4 } };
const nantes: Location = { id: 'nantes', name: 'Nantes', priority: 0, serves: ['*'], active: true };

describe('a promise of a plan', () => {
  it('ships today from a location whose parts are all on the shelf, and on the latest eta from one with a shipment', () => {
    const promise = promiseOf(
      [whole('LAMP', 2, batch('lamp', 'LAMP', 5, null, 'nantes')), whole('RUG', 1, batch('rug', 'RUG', 5, '2026-12-20', 'nantes')), whole('SOFA', 1, batch('sofa', 'SOFA', 1, null, 'paris'))],
      [nantes],
      '2026-12-04',
    );
    expect(promise.parcels.map(({ location, shipsOn }) => [location, shipsOn])).toEqual([
      ['nantes', '2026-12-20'],
      ['paris', '2026-12-04'],
    ]);
    expect(promise.shipsOn).toBe('2026-12-20');
    expect(promise.parcels[0]?.lines).toEqual([
      { sku: 'LAMP', qty: 2, parts: [{ batchref: 'lamp', qty: 2, eta: null }] },
      { sku: 'RUG', qty: 1, parts: [{ batchref: 'rug', qty: 1, eta: '2026-12-20' }] },
    ]);
  });

  it('ships a shipment whose eta has passed today, not on its eta', () => {
    expect(promiseOf([whole('RUG', 1, batch('rug', 'RUG', 5, '2026-11-01'))], [], '2026-12-04').shipsOn).toBe('2026-12-04');
  });

  it("adds its location's handling days, and arrives after the transit days of the destination's country, or of any other", () => {
    const placements = [whole('LAMP', 1, batch('lamp', 'LAMP', 5, null, 'lyon'))];
    const toFrance = promiseOf(placements, [lyon], '2026-12-04', { country: 'FR' });
    expect([toFrance.shipsOn, toFrance.arrivesBy]).toEqual(['2026-12-05', '2026-12-06']);
    expect(promiseOf(placements, [lyon], '2026-12-04', { country: 'DE' }).arrivesBy).toBe('2026-12-09');
    expect(promiseOf(placements, [lyon], '2026-12-04').arrivesBy).toBeUndefined();
  });

  it('promises no arrival for the cart when one of its parcels comes from a location that states no transit', () => {
    const promise = promiseOf([whole('LAMP', 1, batch('lamp', 'LAMP', 5, null, 'lyon')), whole('SOFA', 1, batch('sofa', 'SOFA', 5, null, 'nantes'))], [lyon, nantes], '2026-12-04', { country: 'FR' });
    expect(promise.parcels.map(({ arrivesBy }) => arrivesBy)).toEqual(['2026-12-06', undefined]);
    expect(promise.arrivesBy).toBeUndefined();
  });

  it('puts the parts of a line split over locations in the parcel of each', () => {
    const [a, b] = [batch('a', 'LAMP', 3, null, 'lyon'), batch('b', 'LAMP', 3, null, 'nantes')];
    const split: Placement = {
      allocation: { orderid: 'o', sku: 'LAMP', qty: 5, batchref: 'a', split: { split: 'locations', parts: [] } },
      batch: a,
      parts: [
        { batch: a, qty: 3 },
        { batch: b, qty: 2 },
      ],
    };
    expect(promiseOf([split], [lyon, nantes], '2026-12-04').parcels.map(({ location, lines }) => [location, lines[0]?.qty])).toEqual([
      ['lyon', 3],
      ['nantes', 2],
    ]);
  });

  it('counts days across the end of a month and a year', () => {
    expect(daysAfter('2026-12-30', 3)).toBe('2027-01-02');
  });
});

const shop = async () => {
  const repository = new FakeRepository();
  await putLocation({ id: 'lyon', name: 'Lyon', priority: 0, serves: ['*'], handlingDays: 1 }, repository);
  await addBatch({ ref: 'lamp-lyon', sku: 'LAMP', qty: 3, eta: null, location: 'lyon' }, repository);
  await addBatch({ ref: 'lamp-ship', sku: 'LAMP', qty: 10, eta: '2027-01-15' }, repository);
  await addBatch({ ref: 'sofa', sku: 'SOFA', qty: 2, eta: null }, repository);
  return repository;
};

/** What a test can see of the store: its batches, lines, holds and their units, and the lines refused. */
const storeState = (repository: FakeRepository) =>
  JSON.stringify([[...repository.batches], [...repository.lines], [...repository.holds], [...repository.held], repository.outOfStock]);

describe('a promise of a cart', () => {
  it('answers the parcels an order would make, and writes nothing', async () => {
    const repository = await shop();
    const before = storeState(repository);
    const promise = await promiseCart({ lines: [{ sku: 'LAMP', qty: 2 }, { sku: 'SOFA', qty: 1 }] }, repository);
    expect(storeState(repository)).toBe(before);
    expect(promise.parcels.map(({ location, shipsOn }) => [location, shipsOn])).toEqual([
      ['default', '2026-11-25'],
      ['lyon', '2026-11-26'],
    ]);
    const order = await allocateOrder({ orderid: 'o1', lines: [{ sku: 'LAMP', qty: 2 }, { sku: 'SOFA', qty: 1 }] }, repository);
    expect(order.lines.map(({ sku, batchref }) => [sku, batchref])).toEqual([
      ['LAMP', 'lamp-lyon'],
      ['SOFA', 'sofa'],
    ]);
  });

  it('names a line no plan can hold, with the most a line of its SKU could be promised, and no parcel', async () => {
    const repository = await shop();
    const promise = await promiseCart({ lines: [{ sku: 'SOFA', qty: 3 }, { sku: 'LAMP', qty: 1 }, { sku: 'NOPE', qty: 1 }] }, repository);
    expect(promise).toEqual({
      parcels: [],
      refused: [
        { sku: 'SOFA', reason: 'out_of_stock', promisableQty: 2 },
        { sku: 'NOPE', reason: 'unknown_sku', promisableQty: 0 },
      ],
    });
    expect(repository.outOfStock).toEqual([]);
  });

  it('promises as much as a line split over locations could take when one is asked for more', async () => {
    const repository = await shop();
    const promise = await promiseCart({ lines: [{ sku: 'LAMP', qty: 20, split: 'locations' }] }, repository);
    expect(promise.refused).toEqual([{ sku: 'LAMP', reason: 'out_of_stock', promisableQty: 13 }]);
  });

  it('counts the expired holds a give-back would leave for the next, as the order frees them round after round', async () => {
    const repository = new FakeRepository();
    repository.holdsFreedPerWrite = 1;
    await addBatch({ ref: 'b', sku: 'S', qty: 2, eta: null }, repository);
    await placeHold({ holdid: 'h1', lines: [{ sku: 'S', qty: 1 }], ttlSeconds: 60 }, repository);
    await placeHold({ holdid: 'h2', lines: [{ sku: 'S', qty: 1 }], ttlSeconds: 60 }, repository);
    repository.now += 120_000;
    const promise = await promiseCart({ lines: [{ sku: 'S', qty: 2 }] }, repository);
    expect(promisedUnits(promise)).toEqual(['S:b:2']);
    const { lines } = await allocateOrder({ orderid: 'o1', lines: [{ sku: 'S', qty: 2 }] }, repository);
    expect(lines.map(({ batchref }) => batchref)).toEqual(['b']);
  });

  it("counts an expired hold's units as free, as the order frees them, and leaves the hold and its units where they are", async () => {
    const repository = await shop();
    await placeHold({ holdid: 'h1', lines: [{ sku: 'SOFA', qty: 2 }], ttlSeconds: 60 }, repository);
    repository.now += 120_000;
    const before = storeState(repository);
    const promise = await promiseCart({ lines: [{ sku: 'SOFA', qty: 2 }] }, repository);
    expect(storeState(repository)).toBe(before);
    expect(promise.parcels.map(({ lines }) => lines.map(({ parts }) => parts))).toEqual([[[{ batchref: 'sofa', qty: 2, eta: null }]]]);
    expect(repository.held.size).toBe(1);
  });
});

/** A shop of a few locations, each with a few batches of two SKUs, some on shipments, and a few holds, some of them expired by the time the cart comes. */
const shopArbitrary = fc.record({
  locations: fc.uniqueArray(
    fc.record({ id: fc.constantFrom('lyon', 'nantes', 'paris', 'lille'), priority: fc.integer({ min: 0, max: 2 }), serves: fc.constantFrom(['*'], ['FR'], ['BE']) }),
    { minLength: 1, maxLength: 4, selector: ({ id }) => id },
  ),
  batches: fc.array(
    fc.record({ sku: fc.constantFrom('LAMP', 'RUG'), qty: fc.integer({ min: 1, max: 8 }), eta: fc.constantFrom(null, null, '2027-01-10', '2027-02-01'), at: fc.nat(3) }),
    { minLength: 1, maxLength: 10 },
  ),
  holds: fc.array(fc.record({ sku: fc.constantFrom('LAMP', 'RUG'), qty: fc.integer({ min: 1, max: 6 }), ttlSeconds: fc.constantFrom(60, 3600) }), { maxLength: 6 }),
  /** The expired holds one give-back frees on a batch: so few that an order frees them over its rounds. */
  holdsFreedPerWrite: fc.constantFrom(1, 2, Number.POSITIVE_INFINITY),
});

const splitArbitrary = fc.constantFrom<Split | undefined>(undefined, 'none', 'batches', 'locations');

const cartArbitrary = fc.record({
  lines: fc.uniqueArray(fc.record({ sku: fc.constantFrom('LAMP', 'RUG', 'NOPE'), qty: fc.integer({ min: 1, max: 14 }), split: splitArbitrary }), {
    minLength: 1,
    maxLength: 3,
    selector: ({ sku }) => sku,
  }),
  split: splitArbitrary,
  country: fc.constantFrom<string | undefined>(undefined, 'FR', 'BE'),
});

const withoutUndefined = <T extends object>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** A shop as drawn, its holds placed, and time moved on past the short ones. */
const shopOf = async (stock: typeof shopArbitrary extends fc.Arbitrary<infer T> ? T : never): Promise<FakeRepository> => {
  const repository = new FakeRepository();
  repository.holdsFreedPerWrite = stock.holdsFreedPerWrite;
  for (const { id, priority, serves } of stock.locations) await putLocation({ id, name: id, priority, serves }, repository);
  for (const [index, { sku, qty, eta, at }] of stock.batches.entries()) {
    await addBatch({ ref: `b${index}`, sku, qty, eta, location: stock.locations[at % stock.locations.length]?.id ?? 'default' }, repository);
  }
  for (const [index, { sku, qty, ttlSeconds }] of stock.holds.entries()) {
    await placeHold({ holdid: `h${index}`, lines: [{ sku, qty }], ttlSeconds }, repository).catch(() => undefined);
  }
  repository.now += 600_000;
  return repository;
};

/** Each unit's place in a promise: `sku:batchref:qty`, sorted. */
const promisedUnits = ({ parcels }: CartPromise) => parcels.flatMap(({ lines }) => lines.flatMap(({ sku, parts }) => parts.map(({ batchref, qty }) => `${sku}:${batchref}:${qty}`))).sort();

type TakenLine = { readonly sku: string; readonly qty: number; readonly batchref: string; readonly split?: { readonly parts: readonly { readonly batchref: string; readonly qty: number }[] } };

const takenUnits = (lines: readonly TakenLine[]) =>
  lines.flatMap(({ sku, qty, batchref, split }) => (split ? split.parts.map((part) => `${sku}:${part.batchref}:${part.qty}`) : [`${sku}:${batchref}:${qty}`])).sort();

/** What a request placed, or the lines it refused: its error's lines. */
const placedOrRefused = <T>(placing: Promise<T>, Refusal: typeof OrderNotAllocated | typeof HoldNotPlaced): Promise<T | readonly LineRefusal[]> =>
  placing.catch((error: unknown) => {
    if (error instanceof Refusal) return error.lines;
    throw error;
  });

describe('the promise is the order', () => {
  it('an order, or a hold, placed right after a promise takes the batches and parts it promised, or refuses the lines it refused', async () => {
    await fc.assert(
      fc.asyncProperty(shopArbitrary, cartArbitrary, async (stock, { country, ...asked }) => {
        const cart = withoutUndefined(asked) as Cart;
        const routing: Routing = country ? { destination: { country } } : {};
        const [forOrder, forHold] = [await shopOf(stock), await shopOf(stock)];
        const promise = await promiseCart(cart, forOrder, routing);
        expect(await promiseCart(cart, forHold, routing)).toEqual(promise);
        const order = await placedOrRefused(allocateOrder({ ...cart, orderid: 'o1' }, forOrder, routing), OrderNotAllocated);
        const hold = await placedOrRefused(placeHold({ ...cart, holdid: 'cart-1', ttlSeconds: 60 }, forHold, routing), HoldNotPlaced);
        if (promise.refused.length > 0) {
          const refusals = promise.refused.map(({ sku, reason }) => ({ sku, reason }));
          expect([order, hold]).toEqual([refusals, refusals]);
          return;
        }
        expect(takenUnits((order as { lines: TakenLine[] }).lines)).toEqual(promisedUnits(promise));
        const held = (hold as { hold: { lines: readonly { sku: string; qty: number; batchref: string }[] } }).hold.lines;
        expect(held.map(({ sku, batchref, qty }) => `${sku}:${batchref}:${qty}`).sort()).toEqual(promisedUnits(promise));
      }),
      { numRuns: 300 },
    );
  });
});

describe('a promise of a large cart', () => {
  /** 25 SKUs, each with a batch of 1 to 6 units at each of 40 places. */
  const wideShop = async () => {
    const repository = new FakeRepository();
    const places = Array.from({ length: 40 }, (_, index) => `place${index}`);
    for (const [index, id] of places.entries()) await putLocation({ id, name: id, priority: index % 3, serves: ['*'] }, repository);
    const skus = Array.from({ length: 25 }, (_, index) => `SKU-${index}`);
    for (const [line, sku] of skus.entries()) {
      for (const [index, id] of places.entries()) await addBatch({ ref: `${sku}-${id}`, sku, qty: 1 + ((line * 7 + index * 3) % 6), eta: null, location: id }, repository);
    }
    return { repository, skus };
  };

  it("plans 25 lines that may split over 40 places by the order's bounded search, and the order takes what it promised", async () => {
    const { repository, skus } = await wideShop();
    const cart: Cart = { split: 'locations', lines: skus.map((sku, index) => ({ sku, qty: 2 + (index % 3) })) };
    const promise = await promiseCart(cart, repository);
    const { lines } = await allocateOrder({ ...cart, orderid: 'o1' }, repository);
    expect(promise.refused).toEqual([]);
    expect(takenUnits(lines as readonly TakenLine[])).toEqual(promisedUnits(promise));
  });

  it('refuses a plan of more writes than the transaction holds, as the order refuses it', async () => {
    const { repository, skus } = await wideShop();
    const cart: Cart = { split: 'locations', lines: skus.map((sku) => ({ sku, qty: 20 })) };
    await expect(promiseCart(cart, repository)).rejects.toThrow(TooManyParts);
    await expect(allocateOrder({ ...cart, orderid: 'o1' }, repository)).rejects.toThrow(TooManyParts);
  });
});
