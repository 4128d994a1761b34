import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OutOfStock, UnknownLocation } from '../../domain/errors';
import { confirmHold, holdStatus, placeHold } from '../../domain/hold-services';
import { putLocation } from '../../domain/location-services';
import { DEFAULT_LOCATION, type Location, type LocationDefinition } from '../../domain/locations';
import { type Batch, type OrderLine, newBatch } from '../../domain/model';
import { planOrder } from '../../domain/order-plans';
import { type Routing, distanceKm, eligibilityOf, rankBatchesForLine } from '../../domain/routing';
import { type BatchChangeOutcome, changeBatch } from '../../domain/batch-changes';
import { addBatch, allocate } from '../../domain/services';
import { allocateOrder } from '../../domain/order-services';
import { FakeRepository } from '../support/fake-repository';

const PARIS = { lat: 48.8566, lng: 2.3522 };
const LYON = { lat: 45.764, lng: 4.8357 };
const BERLIN = { lat: 52.52, lng: 13.405 };

const place = (id: string, fields: Partial<Location> = {}): Location => ({ id, name: id, priority: 10, serves: ['*'], active: true, ...fields });
const batch = (ref: string, location: string, qty = 10, eta: string | null = null): Batch => newBatch({ ref, sku: 'LAMP', qty, eta, location });
const line = (qty = 1): OrderLine => ({ orderid: 'o1', sku: 'LAMP', qty });
const refs = (batches: readonly Batch[]) => batches.map(({ ref }) => ref);

describe('which locations a request may take from', () => {
  const stored = [place('paris', { serves: ['FR'] }), place('berlin', { serves: ['DE', 'AT'] }), place('closed', { active: false })];
  const ids = (routing: Parameters<typeof eligibilityOf>[1]) => [...eligibilityOf(stored, routing).locations.keys()].sort();

  it('is every active location, the built-in default among them, when the request names neither destination nor location', () => {
    expect(ids({})).toEqual(['berlin', 'default', 'paris']);
  });

  it('is the active locations that serve the destination country, `*` serving every one', () => {
    expect(ids({ destination: { country: 'AT' } })).toEqual(['berlin', 'default']);
    expect(ids({ destination: { country: 'FR' } })).toEqual(['default', 'paris']);
  });

  it('is the one location named, and none when it is inactive or serves not the destination', () => {
    expect(ids({ location: 'paris' })).toEqual(['paris']);
    expect(ids({ location: 'closed' })).toEqual([]);
    expect(ids({ location: 'paris', destination: { country: 'DE' } })).toEqual([]);
  });

  it('refuses a location named that does not exist, as a field of the request', () => {
    expect(() => eligibilityOf(stored, { location: 'nowhere' })).toThrow(UnknownLocation);
  });

  it('leaves out `default` once it is replaced by an inactive one', () => {
    expect(ids({ destination: { country: 'IT' } })).toEqual(['default']);
    expect([...eligibilityOf([{ ...DEFAULT_LOCATION, active: false }], {}).locations.keys()]).toEqual([]);
  });
});

describe('which batch a line goes to', () => {
  it('with every batch at one location, is the rule from before there were locations: in stock, the earliest shipment, the reference', () => {
    const batches = [batch('s-late', 'default', 10, '2027-03-01'), batch('b-2', 'default'), batch('s-early', 'default', 10, '2027-01-01'), batch('b-1', 'default')];
    expect(refs(rankBatchesForLine(batches, line(), eligibilityOf([], {})))).toEqual(['b-1', 'b-2', 's-early', 's-late']);
  });

  it('takes stock on the shelf anywhere before a shipment to the most preferred location', () => {
    const eligibility = eligibilityOf([place('near', { priority: 0 }), place('far', { priority: 100 })], {});
    expect(refs(rankBatchesForLine([batch('shipment', 'near', 10, '2027-01-01'), batch('shelf', 'far')], line(), eligibility))).toEqual(['shelf', 'shipment']);
  });

  it('among batches in stock, orders by location priority, then distance to the destination, then location id, then reference', () => {
    const stored = [
      place('lyon', { priority: 5, position: LYON }),
      place('paris', { priority: 5, position: PARIS }),
      place('a-nowhere', { priority: 5 }),
      place('b-nowhere', { priority: 5 }),
      place('first', { priority: 1, position: BERLIN }),
    ];
    const batches = [batch('z', 'b-nowhere'), batch('y', 'a-nowhere'), batch('x2', 'lyon'), batch('x1', 'lyon'), batch('w', 'paris'), batch('v', 'first')];
    const eligibility = eligibilityOf(stored, { destination: { country: 'FR', position: { lat: 48.9, lng: 2.4 } } });
    // Berlin is farthest but preferred by priority; a known distance comes before an unknown one, which tie and fall to the id.
    expect(refs(rankBatchesForLine(batches, line(), eligibility))).toEqual(['v', 'w', 'x1', 'x2', 'y', 'z']);
  });

  it('without a position for the destination, ranks locations of one priority by id', () => {
    const eligibility = eligibilityOf([place('paris', { position: PARIS }), place('lyon', { position: LYON })], { destination: { country: 'FR' } });
    expect(refs(rankBatchesForLine([batch('p', 'paris'), batch('l', 'lyon')], line(), eligibility))).toEqual(['l', 'p']);
  });

  it('among shipments, takes the earliest eta first, then the same order as in stock', () => {
    const eligibility = eligibilityOf([place('best', { priority: 0 }), place('worst', { priority: 9 })], {});
    const batches = [batch('late-best', 'best', 10, '2027-02-01'), batch('early-worst', 'worst', 10, '2027-01-01'), batch('early-best', 'best', 10, '2027-01-01')];
    expect(refs(rankBatchesForLine(batches, line(), eligibility))).toEqual(['early-best', 'early-worst', 'late-best']);
  });

  it('passes over batches too small for the whole line, and those at locations not eligible', () => {
    const eligibility = eligibilityOf([place('fr', { serves: ['FR'] }), place('de', { serves: ['DE'] })], { destination: { country: 'DE' } });
    const batches = [batch('small', 'de', 2), batch('french', 'fr'), batch('default', 'default', 10, '2027-01-01')];
    expect(refs(rankBatchesForLine(batches, line(5), eligibility))).toEqual(['default']);
  });

  it('ranks the same whatever order the batches and locations come in', () => {
    const stored = [place('a', { priority: 2 }), place('b', { priority: 1 }), place('c', { priority: 2 })];
    const batches = [batch('1', 'a'), batch('2', 'b'), batch('3', 'c'), batch('4', 'a', 10, '2027-01-01')];
    const expected = refs(rankBatchesForLine(batches, line(), eligibilityOf(stored, {})));
    expect(refs(rankBatchesForLine([...batches].reverse(), line(), eligibilityOf([...stored].reverse(), {})))).toEqual(expected);
    expect(expected).toEqual(['2', '1', '3', '4']);
  });

  it('measures distance along the great circle', () => {
    expect(distanceKm(PARIS, LYON)).toBeCloseTo(392, -1);
    expect(distanceKm(PARIS, PARIS)).toBe(0);
  });
});

describe('allocate, routed', () => {
  const setUp = async (locations: LocationDefinition[], batches: Array<[ref: string, location: string, qty: number, eta?: string | null]>) => {
    const repository = new FakeRepository();
    for (const location of locations) await putLocation(location, repository);
    for (const [ref, location, qty, eta = null] of batches) await addBatch({ ref, sku: 'LAMP', qty, eta, location }, repository);
    return repository;
  };
  const paris: LocationDefinition = { id: 'paris', name: 'Paris', priority: 1, serves: ['FR'], position: PARIS };
  const berlin: LocationDefinition = { id: 'berlin', name: 'Berlin', priority: 1, serves: ['DE'], position: BERLIN };

  it('answers the batch and its location, from a location that serves the destination', async () => {
    const repository = await setUp([paris, berlin], [['in-paris', 'paris', 10], ['in-berlin', 'berlin', 10]]);
    expect(await allocate(line(), repository, { destination: { country: 'DE' } })).toEqual({ batchref: 'in-berlin', location: 'berlin', created: true });
    expect(repository.batches.get('in-paris')?.available).toBe(10);
  });

  it('takes from the one location named, passing over a preferred one', async () => {
    const repository = await setUp([{ ...paris, priority: 0 }, berlin], [['in-paris', 'paris', 10], ['in-berlin', 'berlin', 10]]);
    expect(await allocate(line(), repository, { location: 'berlin' })).toMatchObject({ batchref: 'in-berlin', location: 'berlin' });
  });

  it('takes nothing from an inactive location, even with no destination or location named', async () => {
    const repository = await setUp([{ ...paris, priority: 0, active: false }, berlin], [['in-paris', 'paris', 10], ['in-berlin', 'berlin', 10]]);
    expect(await allocate(line(), repository)).toMatchObject({ batchref: 'in-berlin', location: 'berlin' });
  });

  it.each([
    ['no active location serves the destination', { destination: { country: 'IT' } }, 'no active location serves IT'],
    ['the location named is inactive', { location: 'lyon' }, 'location lyon is inactive'],
    ['the location named serves not the destination', { location: 'paris', destination: { country: 'DE' } }, 'location paris does not serve DE'],
    ['the location named is inactive and serves not the destination', { location: 'lyon', destination: { country: 'DE' } }, 'location lyon is inactive and does not serve DE'],
  ] satisfies [string, Routing, string][])('says which of location and destination left no location when %s: a line, an order and a hold alike', async (_case, routing, why) => {
    const repository = await setUp([paris, { id: 'lyon', name: 'Lyon', priority: 1, serves: ['FR'], active: false }], [['in-paris', 'paris', 10]]);
    await putLocation({ ...DEFAULT_LOCATION, serves: ['FR'] }, repository);
    await expect(allocate(line(), repository, routing)).rejects.toMatchObject({ code: 'no_location', message: `No location serves the request for sku LAMP: ${why}` });
    await expect(allocateOrder({ orderid: 'o9', lines: [{ sku: 'LAMP', qty: 1 }] }, repository, routing)).rejects.toMatchObject({
      code: 'order_refused',
      message: `Cannot allocate order o9: ${why}`,
    });
    await expect(placeHold({ holdid: 'h9', lines: [{ sku: 'LAMP', qty: 1 }], ttlSeconds: 60 }, repository, routing)).rejects.toMatchObject({
      code: 'hold_refused',
      message: `Cannot place hold h9: ${why}`,
    });
  });

  it('refuses with reason no_location when no active location serves the destination, and announces no lack of stock', async () => {
    const repository = await setUp([paris], [['in-paris', 'paris', 10]]);
    await putLocation({ ...DEFAULT_LOCATION, serves: ['FR'] }, repository);
    const refusal = allocate(line(), repository, { destination: { country: 'DE' } });
    await expect(refusal).rejects.toThrow(OutOfStock);
    await expect(refusal).rejects.toMatchObject({ reason: 'no_location' });
    expect(repository.lines.size).toBe(0);
    expect(repository.outOfStock).toEqual([]);
  });

  it('refuses with reason out_of_stock, announced, when the eligible locations have no batch that can take the line, though another has', async () => {
    const repository = await setUp([paris, berlin], [['in-paris', 'paris', 10], ['in-berlin', 'berlin', 2]]);
    await expect(allocate(line(5), repository, { location: 'berlin' })).rejects.toMatchObject({ name: 'OutOfStock', reason: 'out_of_stock' });
    // Announced as a refusal at berlin: the SKU is not out of stock everywhere.
    expect(repository.outOfStock).toEqual([{ ...line(5), location: 'berlin' }]);
  });

  it('refuses a location named that does not exist', async () => {
    const repository = await setUp([], [['b1', 'default', 10]]);
    await expect(allocate(line(), repository, { location: 'nowhere' })).rejects.toThrow(UnknownLocation);
  });

  it('answers a repeat that names the same routing with its batch and that batch location, though the location is no longer eligible', async () => {
    const nearer = { ...paris, priority: 0 };
    const repository = await setUp([nearer], [['in-paris', 'paris', 10], ['in-main', 'default', 10]]);
    const routing = { destination: { country: 'FR', position: { lat: 48.86, lng: 2.35 } } };
    expect(await allocate(line(), repository, routing)).toMatchObject({ batchref: 'in-paris' });
    await putLocation({ ...nearer, active: false }, repository);
    expect(await allocate(line(), repository, routing)).toEqual({ batchref: 'in-paris', location: 'paris', created: false });
    expect(repository.batches.get('in-paris')?.available).toBe(9);
    expect(repository.batches.get('in-main')?.available).toBe(10);
  });

  it.each<[string, Routing, Routing]>([
    ['another country', { destination: { country: 'FR' } }, { destination: { country: 'BE' } }],
    ['another position', { destination: { country: 'FR', position: { lat: 48.86, lng: 2.35 } } }, { destination: { country: 'FR', position: { lat: 45.76, lng: 4.84 } } }],
    ['a position where the first named none', { destination: { country: 'FR' } }, { destination: { country: 'FR', position: { lat: 48.86, lng: 2.35 } } }],
    ['no destination where the first named one', { destination: { country: 'FR' } }, {}],
    ['a location where the first named none', {}, { location: 'paris' }],
    ['another location', { location: 'paris' }, { location: 'default' }],
  ])('refuses a repeat that names %s, taking no stock', async (_, first, repeat) => {
    const repository = await setUp([{ ...paris, serves: ['*'] }], [['in-paris', 'paris', 10]]);
    await allocate(line(), repository, first);
    await expect(allocate(line(), repository, repeat)).rejects.toMatchObject({ name: 'LineRoutedOtherwise', orderid: 'o1', sku: 'LAMP' });
    expect(repository.batches.get('in-paris')?.available).toBe(9);
  });

  it('asks for the locations anew, naming it, when a batch is at one the locations it routes by do not know yet', async () => {
    const repository = await setUp([], [['b1', 'default', 1]]);
    const stale = await repository.locations();
    repository.routingLocations = async (naming = []) => (naming.length > 0 ? repository.locations() : stale);
    await putLocation({ ...paris, priority: 0, serves: ['*'] }, repository);
    await addBatch({ ref: 'in-paris', sku: 'LAMP', qty: 10, eta: null, location: 'paris' }, repository);
    expect(await allocate(line(5), repository)).toMatchObject({ batchref: 'in-paris', location: 'paris' });
    expect(await allocate({ ...line(), orderid: 'o2' }, repository, { location: 'paris' })).toMatchObject({ location: 'paris' });
  });
});

describe('where an order goes', () => {
  const at = (ref: string, sku: string, location: string, eta: string | null = null, qty = 10): Batch => newBatch({ ref, sku, qty, eta, location });
  const stock = (...batches: Batch[]) => {
    const bySku = new Map<string, Batch[] | undefined>();
    for (const b of batches) bySku.set(b.sku, [...(bySku.get(b.sku) ?? []), b]);
    return bySku;
  };
  const placed = (plan: ReturnType<typeof planOrder>) =>
    plan.kind === 'placed' ? plan.placements.map(({ allocation: { sku, batchref } }) => `${sku}:${batchref}`) : plan.refusals;
  const places = (...ids: string[]) => ids.map((id, index) => place(id, { priority: index }));
  const order = (...skus: string[]) => skus.map((sku) => ({ sku, qty: 1 }));

  it('puts a line on a shipment only when no batch in stock at an eligible location can take it, even at the cost of a second location', () => {
    const plan = planOrder('o1', order('LAMP', 'RUG'), stock(at('lamp-x', 'LAMP', 'x'), at('lamp-y-ship', 'LAMP', 'y', '2027-01-01'), at('rug-y', 'RUG', 'y')), eligibilityOf(places('x', 'y'), {}));
    expect(placed(plan)).toEqual(['LAMP:lamp-x', 'RUG:rug-y']);
  });

  it('takes every line from as few locations as can, before the preferred location of each line', () => {
    const plan = planOrder('o1', order('LAMP', 'RUG'), stock(at('lamp-x', 'LAMP', 'x'), at('lamp-y', 'LAMP', 'y'), at('rug-y', 'RUG', 'y')), eligibilityOf(places('x', 'y'), {}));
    expect(placed(plan)).toEqual(['LAMP:lamp-y', 'RUG:rug-y']);
  });

  it('of two sets of locations as small, takes the one whose most preferred location is more preferred, then the next', () => {
    const batches = stock(at('lamp-a', 'LAMP', 'a'), at('lamp-b', 'LAMP', 'b'), at('rug-c', 'RUG', 'c'), at('rug-d', 'RUG', 'd'));
    expect(placed(planOrder('o1', order('LAMP', 'RUG'), batches, eligibilityOf(places('d', 'b', 'a', 'c'), {})))).toEqual(['LAMP:lamp-b', 'RUG:rug-d']);
    expect(placed(planOrder('o1', order('LAMP', 'RUG'), batches, eligibilityOf(places('a', 'd', 'c', 'b'), {})))).toEqual(['LAMP:lamp-a', 'RUG:rug-d']);
  });

  it('of two sets of locations as small, takes the one where each line gets the batch the rule for one line prefers: the earliest shipment before the preferred location', () => {
    const batches = stock(at('lamp-x-ship-late', 'LAMP', 'x', '2027-06-01'), at('lamp-y-ship', 'LAMP', 'y', '2027-03-01'));
    expect(placed(planOrder('o1', order('LAMP'), batches, eligibilityOf(places('x', 'y'), {})))).toEqual(['LAMP:lamp-y-ship']);
  });

  it('then places each line by the rule for one line within the chosen locations', () => {
    const batches = stock(at('lamp-x-2', 'LAMP', 'x'), at('lamp-x-1', 'LAMP', 'x'), at('lamp-y', 'LAMP', 'y'), at('rug-x-ship-late', 'RUG', 'x', '2027-05-01'), at('rug-x-ship', 'RUG', 'x', '2027-01-01'));
    expect(placed(planOrder('o1', order('LAMP', 'RUG'), batches, eligibilityOf(places('y', 'x'), {})))).toEqual(['LAMP:lamp-x-1', 'RUG:rug-x-ship']);
  });

  it('with every batch at one location, places each line as the rule from before there were locations did', () => {
    const batches = stock(at('lamp-ship', 'LAMP', 'default', '2027-01-01'), at('lamp-b', 'LAMP', 'default'), at('lamp-a', 'LAMP', 'default', null, 1), at('rug-ship', 'RUG', 'default', '2027-02-01'));
    expect(placed(planOrder('o1', [{ sku: 'LAMP', qty: 2 }, { sku: 'RUG', qty: 1 }], batches, eligibilityOf([], {})))).toEqual(['LAMP:lamp-b', 'RUG:rug-ship']);
  });

  it('past 12 locations, still places every line at the fewest locations', () => {
    const ids = Array.from({ length: 14 }, (_, index) => `l${String(index).padStart(2, '0')}`);
    const batches = stock(...ids.map((id) => at(`lamp-${id}`, 'LAMP', id)), at('rug-l13', 'RUG', 'l13'), at('sofa-l00', 'SOFA', 'l00'));
    const plan = planOrder('o1', order('LAMP', 'RUG', 'SOFA'), batches, eligibilityOf(places(...ids), {}));
    expect(placed(plan)).toEqual(['LAMP:lamp-l00', 'RUG:rug-l13', 'SOFA:sofa-l00']);
  });

  it('past 12 locations, still finds the fewest: 16 lines over 13 locations in the 2 parcels that carry them, where picking greedily makes 4', () => {
    const lines = Array.from({ length: 16 }, (_, index) => `S${String(index + 1).padStart(2, '0')}`);
    // a and b carry 8 lines each; x carries 10 and y 4 of those x leaves, which a greedy pick takes first.
    const carried: Record<string, readonly number[]> = {
      a: [1, 2, 3, 4, 5, 6, 7, 8],
      b: [9, 10, 11, 12, 13, 14, 15, 16],
      x: [1, 2, 3, 4, 5, 9, 10, 11, 12, 13],
      y: [6, 7, 14, 15],
    };
    const fillers = Array.from({ length: 9 }, (_, index) => `f${index}`);
    const batches = stock(
      ...Object.entries(carried).flatMap(([location, numbers]) => numbers.map((number) => at(`${lines[number - 1]}-${location}`, lines[number - 1] as string, location))),
      ...fillers.map((location) => at(`S01-${location}`, 'S01', location)),
    );
    const plan = planOrder('o1', order(...lines), batches, eligibilityOf(places('x', 'y', ...fillers, 'a', 'b'), {}));
    expect(new Set(plan.kind === 'placed' ? plan.placements.map(({ batch }) => batch.location) : [])).toEqual(new Set(['a', 'b']));
  });

  it('past 12 locations, places an order as a search of every set of locations does: fewest parcels, then each line its best batch there', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 13, max: 15 }),
        fc.array(fc.array(fc.nat(14), { minLength: 1, maxLength: 6 }), { minLength: 3, maxLength: 10 }),
        fc.array(fc.nat(3), { minLength: 15, maxLength: 15 }),
        (locationCount, linesAt, priorities) => {
          const ids = Array.from({ length: locationCount }, (_, index) => `l${String(index).padStart(2, '0')}`);
          const skus = linesAt.map((_, index) => `S${index}`);
          const each = linesAt.map((numbers) => new Set(numbers.map((number) => ids[number % locationCount] as string)));
          fc.pre(new Set(each.flatMap((locations) => [...locations])).size > 12);
          const batches = stock(...each.flatMap((locations, index) => [...locations].map((location) => at(`${skus[index]}-${location}`, skus[index] as string, location))));
          const eligibility = eligibilityOf(ids.map((id, index) => place(id, { priority: priorities[index] ?? 0 })), {});
          const plan = planOrder('o1', order(...skus), batches, eligibility);
          expect(placed(plan)).toEqual(placedBySearchOfEverySet(ids, skus, batches, eligibility));
        },
      ),
      { numRuns: 100, seed: 7 },
    );
  });

  it('past the steps its search may take, picks the locations greedily: the one that takes most lines first', () => {
    // Five SKUs at 50 locations of their own each, and the least preferred location has a lamp and a
    // rug: four parcels at least, and 50^3 sets of three to build before the search would get there.
    const ids = Array.from({ length: 250 }, (_, index) => `l${String(index).padStart(3, '0')}`);
    const skus = ['LAMP', 'RUG', 'SOFA', 'DESK', 'BED'];
    const batches = stock(
      ...ids.map((id, index) => at(`${skus[index % 5]}-${id}`, skus[index % 5] as string, id)),
      at('LAMP-both', 'LAMP', 'both'),
      at('RUG-both', 'RUG', 'both'),
    );
    const plan = planOrder('o1', order(...skus), batches, eligibilityOf(places(...ids, 'both'), {}));
    expect(placed(plan)).toEqual(['LAMP:LAMP-both', 'RUG:RUG-both', 'SOFA:SOFA-l002', 'DESK:DESK-l003', 'BED:BED-l004']);
  });

  it('refuses every line that cannot be placed, each with why', () => {
    const batches = stock(at('lamp-fr', 'LAMP', 'fr'), at('rug-de', 'RUG', 'de'));
    const stored = [place('fr', { serves: ['FR'] }), place('de', { serves: ['DE'] }), { ...DEFAULT_LOCATION, serves: ['FR', 'DE'] }];
    const withUnknown = new Map([...batches, ['NOPE', undefined]]);
    expect(placed(planOrder('o1', order('LAMP', 'RUG', 'NOPE'), withUnknown, eligibilityOf(stored, { destination: { country: 'FR' } })))).toEqual([
      { sku: 'RUG', reason: 'out_of_stock' },
      { sku: 'NOPE', reason: 'unknown_sku' },
    ]);
    expect(placed(planOrder('o1', order('LAMP', 'RUG'), batches, eligibilityOf(stored, { destination: { country: 'IT' } })))).toEqual([
      { sku: 'LAMP', reason: 'no_location' },
      { sku: 'RUG', reason: 'no_location' },
    ]);
  });
});

/**
 * The reference for an order of a unit of each SKU, its batches all in stock: every set of `ids`
 * tried; of the smallest that have a batch of each line, the one whose lines, by SKU, get the batch
 * the rule for one line ranks best there, the first line that differs deciding; each line then its
 * best batch there.
 */
const placedBySearchOfEverySet = (ids: readonly string[], skus: readonly string[], stockBySku: ReadonlyMap<string, Batch[] | undefined>, eligibility: ReturnType<typeof eligibilityOf>): string[] => {
  const ranked = skus.map((sku) => rankBatchesForLine(stockBySku.get(sku) ?? [], { orderid: 'o1', sku, qty: 1 }, eligibility));
  const bySku = [...skus.keys()].sort((a, b) => ((skus[a] as string) < (skus[b] as string) ? -1 : 1));
  const ranksAt = (chosen: readonly string[]) => bySku.map((line) => (ranked[line] as Batch[]).findIndex(({ location }) => chosen.includes(location ?? 'default')));
  let best: { chosen: string[]; ranks: number[] } | undefined;
  for (let mask = 1; mask < 2 ** ids.length; mask++) {
    const chosen = ids.filter((_, index) => mask & (2 ** index));
    const ranks = ranksAt(chosen);
    if (ranks.some((rank) => rank < 0)) continue;
    const firstDiffering = best ? ranks.findIndex((rank, line) => rank !== best?.ranks[line]) : -1;
    if (!best || chosen.length < best.chosen.length || (chosen.length === best.chosen.length && firstDiffering >= 0 && (ranks[firstDiffering] as number) < (best.ranks[firstDiffering] as number))) {
      best = { chosen, ranks };
    }
  }
  return skus.map((sku, line) => `${sku}:${(ranked[line] as Batch[]).find(({ location }) => best?.chosen.includes(location ?? 'default'))?.ref}`);
};

describe('allocateOrder, routed', () => {
  it('allocates every line at the locations the destination allows, answering each line with its location', async () => {
    const repository = new FakeRepository();
    await putLocation({ id: 'paris', name: 'Paris', priority: 0, serves: ['FR'] }, repository);
    await putLocation({ id: 'closed', name: 'Closed', priority: 0, serves: ['*'], active: false }, repository);
    for (const [ref, sku, location] of [['lamp-paris', 'LAMP', 'paris'], ['lamp-closed', 'LAMP', 'closed'], ['rug-main', 'RUG', 'default'], ['rug-paris', 'RUG', 'paris']]) {
      await addBatch({ ref: ref as string, sku: sku as string, qty: 5, eta: null, location }, repository);
    }
    const routing = { destination: { country: 'FR' } };
    const outcome = await allocateOrder({ orderid: 'o1', lines: order2() }, repository, routing);
    expect(outcome.lines).toEqual([
      { orderid: 'o1', sku: 'LAMP', qty: 1, batchref: 'lamp-paris', location: 'paris', routing },
      { orderid: 'o1', sku: 'RUG', qty: 1, batchref: 'rug-paris', location: 'paris', routing },
    ]);
    const repeat = await allocateOrder({ orderid: 'o1', lines: order2() }, repository, { destination: { country: 'FR' } });
    expect(repeat.lines.map(({ location }) => location)).toEqual(['paris', 'paris']);
    await expect(allocateOrder({ orderid: 'o1', lines: order2() }, repository)).rejects.toMatchObject({
      name: 'OrderLinesRoutedOtherwise',
      lines: [{ sku: 'LAMP' }, { sku: 'RUG' }],
    });
    await expect(allocateOrder({ orderid: 'o2', lines: order2() }, repository, { location: 'closed' })).rejects.toMatchObject({
      name: 'OrderNotAllocated',
      lines: [
        { sku: 'LAMP', reason: 'no_location' },
        { sku: 'RUG', reason: 'no_location' },
      ],
    });
    expect(repository.outOfStock).toEqual([]);
  });

  it("announces an order's lines refused for lack of stock with the destination its request named", async () => {
    const repository = new FakeRepository();
    await putLocation({ id: 'paris', name: 'Paris', priority: 0, serves: ['FR'] }, repository);
    await addBatch({ ref: 'lamp-paris', sku: 'LAMP', qty: 1, eta: null, location: 'paris' }, repository);
    await addBatch({ ref: 'rug-paris', sku: 'RUG', qty: 5, eta: null, location: 'paris' }, repository);
    const destination = { country: 'FR', position: { lat: 48.86, lng: 2.35 } };
    const refusal = allocateOrder({ orderid: 'o3', lines: [{ sku: 'LAMP', qty: 2 }, { sku: 'RUG', qty: 1 }] }, repository, { destination });
    await expect(refusal).rejects.toMatchObject({ name: 'OrderNotAllocated', lines: [{ sku: 'LAMP', reason: 'out_of_stock' }] });
    expect(repository.outOfStock).toEqual([{ orderid: 'o3', sku: 'LAMP', qty: 2, destination }]);
  });
});

const order2 = () => [
  { sku: 'LAMP', qty: 1 },
  { sku: 'RUG', qty: 1 },
];

describe('an order that adds lines to lines placed already', () => {
  it('places the new lines at the locations of those placed where it can, rather than make another parcel', async () => {
    const repository = new FakeRepository();
    await putLocation({ id: 'nantes', name: 'Nantes', priority: 0, serves: ['FR'] }, repository);
    for (const [ref, sku, location] of [['lamp-nantes', 'LAMP', 'nantes'], ['rug-main', 'RUG', 'default'], ['rug-nantes', 'RUG', 'nantes']]) {
      await addBatch({ ref: ref as string, sku: sku as string, qty: 5, eta: null, location }, repository);
    }
    const routing = { destination: { country: 'FR' } };
    // Alone, a rug comes from the main warehouse: both serve France at priority 0, and `default` comes first by id.
    expect(await allocate({ orderid: 'o2', sku: 'RUG', qty: 1 }, repository, routing)).toMatchObject({ location: 'default' });
    expect(await allocate({ orderid: 'o1', sku: 'LAMP', qty: 1 }, repository, routing)).toMatchObject({ location: 'nantes' });
    const outcome = await allocateOrder({ orderid: 'o1', lines: order2() }, repository, routing);
    expect(outcome).toEqual({
      lines: [
        { orderid: 'o1', sku: 'LAMP', qty: 1, batchref: 'lamp-nantes', location: 'nantes', routing },
        { orderid: 'o1', sku: 'RUG', qty: 1, batchref: 'rug-nantes', location: 'nantes', routing },
      ],
      newLines: 1,
    });
  });
});

describe('placeHold, routed', () => {
  it('holds every line at the locations the request allows, and refuses with no_location where none is', async () => {
    const repository = new FakeRepository();
    await putLocation({ id: 'store', name: 'Store', priority: 5, serves: ['FR'] }, repository);
    await putLocation({ id: 'closed', name: 'Closed', priority: 0, serves: ['*'], active: false }, repository);
    for (const [ref, sku, location] of [['lamp-main', 'LAMP', 'default'], ['lamp-store', 'LAMP', 'store'], ['rug-store', 'RUG', 'store'], ['rug-closed', 'RUG', 'closed']]) {
      await addBatch({ ref: ref as string, sku: sku as string, qty: 5, eta: null, location }, repository);
    }
    const { hold } = await placeHold({ holdid: 'cart-1', lines: order2(), ttlSeconds: 60 }, repository, { destination: { country: 'FR' } });
    expect(hold.lines.map(({ sku, batchref }) => `${sku}:${batchref}`)).toEqual(['LAMP:lamp-store', 'RUG:rug-store']);
    const pickup = await placeHold({ holdid: 'cart-2', lines: [{ sku: 'LAMP', qty: 1 }], ttlSeconds: 60 }, repository, { location: 'default' });
    expect(pickup.hold.lines.map(({ batchref }) => batchref)).toEqual(['lamp-main']);
    await expect(placeHold({ holdid: 'cart-3', lines: [{ sku: 'RUG', qty: 1 }], ttlSeconds: 60 }, repository, { location: 'closed' })).rejects.toMatchObject({
      name: 'HoldNotPlaced',
      lines: [{ sku: 'RUG', reason: 'no_location' }],
    });
  });
  it("names each line's location, records the routing, answers a repeat that names it again, refuses one that names another, and confirms it onto the order's lines", async () => {
    const repository = new FakeRepository();
    await putLocation({ id: 'store', name: 'Store', priority: 5, serves: ['FR'] }, repository);
    await addBatch({ ref: 'lamp-store', sku: 'LAMP', qty: 5, eta: null, location: 'store' }, repository);
    await addBatch({ ref: 'lamp-main', sku: 'LAMP', qty: 5, eta: null }, repository);
    const request = { holdid: 'cart-1', lines: [{ sku: 'LAMP', qty: 1 }], ttlSeconds: 60 };
    const routing = { destination: { country: 'FR' }, location: 'store' };
    const placed = await placeHold(request, repository, routing);
    expect(placed.hold.lines).toEqual([{ sku: 'LAMP', qty: 1, batchref: 'lamp-store', location: 'store' }]);
    expect(placed.hold.routing).toEqual(routing);
    expect((await placeHold(request, repository, routing)).hold.lines).toEqual(placed.hold.lines);
    expect((await holdStatus('cart-1', repository)).lines).toEqual(placed.hold.lines);
    await expect(placeHold(request, repository, { destination: { country: 'FR' } })).rejects.toMatchObject({
      name: 'HoldConflict',
      message: 'Hold cart-1 already exists with another destination or location',
    });
    await confirmHold('cart-1', 'o1', repository);
    expect(await repository.allocationOf('o1', 'LAMP')).toEqual({ orderid: 'o1', sku: 'LAMP', qty: 1, batchref: 'lamp-store', routing });
    expect(repository.batches.get('lamp-main')?.available).toBe(5);
  });

  it("reads the batches of a hold placed before holds recorded their lines' locations, to name them", async () => {
    const repository = new FakeRepository();
    await putLocation({ id: 'store', name: 'Store', priority: 5, serves: ['FR'] }, repository);
    await addBatch({ ref: 'lamp-store', sku: 'LAMP', qty: 5, eta: null, location: 'store' }, repository);
    const { hold } = await placeHold({ holdid: 'cart-1', lines: [{ sku: 'LAMP', qty: 1 }], ttlSeconds: 60 }, repository);
    repository.holds.set('cart-1', { ...hold, lines: hold.lines.map(({ location: _, ...line }) => line) });
    expect((await holdStatus('cart-1', repository)).lines).toEqual([{ sku: 'LAMP', qty: 1, batchref: 'lamp-store', location: 'store' }]);
  });
});

describe('a PATCH that moves lines, routed', () => {
  /** `a-berlin` first by ref, and so by the rule from before there were locations; `closed` inactive, serving everywhere. */
  const setUp = async () => {
    const repository = new FakeRepository();
    await putLocation({ id: 'paris', name: 'Paris', priority: 0, serves: ['FR'] }, repository);
    await putLocation({ id: 'berlin', name: 'Berlin', priority: 0, serves: ['DE'] }, repository);
    await putLocation({ id: 'closed', name: 'Closed', priority: 0, serves: ['*'], active: false }, repository);
    await addBatch({ ref: 'shrinking', sku: 'LAMP', qty: 10, eta: null, location: 'paris' }, repository);
    for (const [ref, location] of [['a-berlin', 'berlin'], ['a-closed', 'closed'], ['b-paris', 'paris']] as const) {
      await addBatch({ ref, sku: 'LAMP', qty: 3, eta: null, location }, repository);
    }
    return repository;
  };
  const moved = (outcome: BatchChangeOutcome) => outcome.reallocated.map(({ orderid, batchref }) => `${orderid}:${batchref}`);

  it('moves each line only to a batch at a location its recorded routing allows, or out of its order', async () => {
    const repository = await setUp();
    await repository.saveAllocation({ orderid: 'to-france', sku: 'LAMP', qty: 2, batchref: 'shrinking', routing: { destination: { country: 'FR' } } }, repository.batches.get('shrinking')!);
    await repository.saveAllocation({ orderid: 'anywhere', sku: 'LAMP', qty: 2, batchref: 'shrinking' }, repository.batches.get('shrinking')!);
    await repository.saveAllocation({ orderid: 'pickup', sku: 'LAMP', qty: 2, batchref: 'shrinking', routing: { location: 'paris' } }, repository.batches.get('shrinking')!);
    // Newest first: `pickup` to Paris's; `anywhere` to the first active batch by ref, not the closed one; `to-france` finds Paris's full, and leaves its order.
    expect(moved(await changeBatch('shrinking', { qty: 0 }, repository))).toEqual(['pickup:b-paris', 'anywhere:a-berlin', 'to-france:null']);
    expect(await repository.allocationOf('pickup', 'LAMP')).toEqual({ orderid: 'pickup', sku: 'LAMP', qty: 2, batchref: 'b-paris', routing: { location: 'paris' } });
    expect(repository.batches.get('a-closed')?.available).toBe(3);
  });

  it('moves a line by the routed preference among the batches it may go to: in stock, then priority, then distance', async () => {
    const repository = await setUp();
    await putLocation({ id: 'lyon', name: 'Lyon', priority: 0, serves: ['FR'], position: LYON }, repository);
    await putLocation({ id: 'paris', name: 'Paris', priority: 0, serves: ['FR'], position: PARIS }, repository);
    await addBatch({ ref: 'a-lyon', sku: 'LAMP', qty: 3, eta: null, location: 'lyon' }, repository);
    const routing = { destination: { country: 'FR', position: PARIS } };
    await repository.saveAllocation({ orderid: 'to-paris', sku: 'LAMP', qty: 1, batchref: 'shrinking', routing }, repository.batches.get('shrinking')!);
    expect(moved(await changeBatch('shrinking', { qty: 0 }, repository))).toEqual(['to-paris:b-paris']);
  });
});
