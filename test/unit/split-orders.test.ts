import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OrderLinesSplitOtherwise, OrderNotAllocated, TooManyParts } from '../../domain/errors';
import type { Location } from '../../domain/locations';
import { type Batch, type OrderPlan, type Split, locationOf } from '../../domain/model';
import { planOrder } from '../../domain/order-plans';
import { allocateOrder } from '../../domain/order-services';
import { eligibilityOf, routedPreference } from '../../domain/routing';
import { addBatch, allocate, cancelAllocation, orderAllocations } from '../../domain/services';
import { MAX_PARTS_PER_LINE } from '../../domain/split-lines';
import { FakeRepository } from '../support/fake-repository';

/*
 * Whole orders whose lines may be split (docs/api.md, "Split lines"): the plan over every line at
 * once, and the order's allocation through the services over the in-memory repository.
 */

const place = (id: string, priority: number): Location => ({ id, name: id, priority, serves: ['*'], active: true });
const batch = (ref: string, sku: string, location: string, available: number, eta: string | null = null): Batch => ({ ref, sku, qty: available, available, eta, location });
const stockOf = (...batches: Batch[]) => {
  const bySku = new Map<string, Batch[]>();
  for (const one of batches) bySku.set(one.sku, [...(bySku.get(one.sku) ?? []), one]);
  return bySku;
};
/** Each line of a plan as `sku: ref qty, ref qty`. */
const placed = (plan: OrderPlan) =>
  plan.kind === 'refused'
    ? plan.refusals
    : plan.placements.map(({ allocation, batch, parts }) => `${allocation.sku}: ${(parts ?? [{ batch, qty: allocation.qty }]).map((part) => `${part.batch.ref} ${part.qty}`).join(', ')}`);

const eligibility = eligibilityOf([place('paris', 0), place('lyon', 1)], {});

describe('an order whose lines may be split', () => {
  it('splits a line over batches at the place its other line comes from, rather than send it whole from another', () => {
    const stock = stockOf(batch('lamp-p1', 'LAMP', 'paris', 20), batch('lamp-p2', 'LAMP', 'paris', 20), batch('lamp-l', 'LAMP', 'lyon', 40), batch('rug-l', 'RUG', 'lyon', 5), batch('rug-p', 'RUG', 'paris', 5));
    const whole = planOrder('o1', [{ sku: 'LAMP', qty: 30 }, { sku: 'RUG', qty: 1 }], stock, eligibility);
    expect(placed(whole)).toEqual(['LAMP: lamp-l 30', 'RUG: rug-l 1']);
    const split = planOrder('o1', [{ sku: 'LAMP', qty: 30, split: 'batches' }, { sku: 'RUG', qty: 1 }], stock, eligibility);
    expect(placed(split)).toEqual(['LAMP: lamp-l 30', 'RUG: rug-l 1']);
    const onlyParisHasRugs = stockOf(batch('lamp-p1', 'LAMP', 'paris', 20), batch('lamp-p2', 'LAMP', 'paris', 20), batch('lamp-l', 'LAMP', 'lyon', 40), batch('rug-p', 'RUG', 'paris', 5));
    expect(placed(planOrder('o1', [{ sku: 'LAMP', qty: 30, split: 'batches' }, { sku: 'RUG', qty: 1 }], onlyParisHasRugs, eligibility))).toEqual([
      'LAMP: lamp-p1 20, lamp-p2 10',
      'RUG: rug-p 1',
    ]);
    expect(placed(planOrder('o1', [{ sku: 'LAMP', qty: 30 }, { sku: 'RUG', qty: 1 }], onlyParisHasRugs, eligibility))).toEqual(['LAMP: lamp-l 30', 'RUG: rug-p 1']);
  });

  it('takes a line split over two places rather than put a whole one on a shipment', () => {
    const stock = stockOf(batch('lamp-p', 'LAMP', 'paris', 20), batch('lamp-l', 'LAMP', 'lyon', 20), batch('lamp-ship', 'LAMP', 'paris', 50, '2027-01-01'));
    expect(placed(planOrder('o1', [{ sku: 'LAMP', qty: 30 }], stock, eligibility))).toEqual(['LAMP: lamp-ship 30']);
    expect(placed(planOrder('o1', [{ sku: 'LAMP', qty: 30, split: 'locations' }], stock, eligibility))).toEqual(['LAMP: lamp-p 20, lamp-l 10']);
  });

  it('takes fewer parts over all its lines once the places are fewest', () => {
    const stock = stockOf(
      batch('lamp-p1', 'LAMP', 'paris', 10),
      batch('lamp-p2', 'LAMP', 'paris', 10),
      batch('lamp-l', 'LAMP', 'lyon', 20),
      batch('rug-p', 'RUG', 'paris', 3),
      batch('rug-l1', 'RUG', 'lyon', 2),
      batch('rug-l2', 'RUG', 'lyon', 2),
    );
    // Paris: 2 + 1 parts; Lyon: 1 + 2 parts. A tie on parts goes to the preferred place's batches.
    expect(placed(planOrder('o1', [{ sku: 'LAMP', qty: 20, split: 'batches' }, { sku: 'RUG', qty: 3, split: 'batches' }], stock, eligibility))).toEqual([
      'LAMP: lamp-p1 10, lamp-p2 10',
      'RUG: rug-p 3',
    ]);
    const moreAtLyon = new Map([...stock, ['RUG', [batch('rug-p1', 'RUG', 'paris', 2), batch('rug-p2', 'RUG', 'paris', 1), batch('rug-l', 'RUG', 'lyon', 3)]]]);
    expect(placed(planOrder('o1', [{ sku: 'LAMP', qty: 20, split: 'batches' }, { sku: 'RUG', qty: 3, split: 'batches' }], moreAtLyon, eligibility))).toEqual([
      'LAMP: lamp-l 20',
      'RUG: rug-l 3',
    ]);
  });

  it("counts a place its order's lines come from once, when a line split over places takes from it too", () => {
    const stock = stockOf(batch('lamp-p', 'LAMP', 'paris', 8), batch('lamp-l', 'LAMP', 'lyon', 10));
    // Paris is placed already: its 8 lamps do not hold 15 however often it is named, and Lyon's parcel is added.
    expect(placed(planOrder('o1', [{ sku: 'LAMP', qty: 15, split: 'locations' }], stock, eligibility, new Set(['paris'])))).toEqual(['LAMP: lamp-p 8, lamp-l 7']);
  });

  it('refuses a line that no way its split allows can hold, and names it', () => {
    const stock = stockOf(batch('lamp-p', 'LAMP', 'paris', 20), batch('lamp-l', 'LAMP', 'lyon', 20), batch('rug-p', 'RUG', 'paris', 5));
    expect(placed(planOrder('o1', [{ sku: 'LAMP', qty: 30, split: 'batches' }, { sku: 'RUG', qty: 1 }], stock, eligibility))).toEqual([{ sku: 'LAMP', reason: 'out_of_stock' }]);
  });

  it('is the best plan by the rule, as a search of every way to place every line finds it', () => {
    const places = ['a', 'b', 'c'];
    const skus = ['LAMP', 'RUG', 'SOFA'];
    const arbitraryBatch = fc.record({
      sku: fc.constantFrom(...skus),
      location: fc.constantFrom(...places),
      available: fc.integer({ min: 1, max: 6 }),
      eta: fc.constantFrom(null, null, null, '2027-01-01'),
    });
    fc.assert(
      fc.property(
        fc.array(arbitraryBatch, { minLength: 1, maxLength: 12 }),
        fc.array(fc.integer({ min: 0, max: 2 }), { minLength: places.length, maxLength: places.length }),
        fc.array(fc.record({ qty: fc.integer({ min: 1, max: 12 }), split: fc.constantFrom<Split>('none', 'batches', 'locations') }), { minLength: skus.length, maxLength: skus.length }),
        fc.integer({ min: 1, max: skus.length }),
        (drawn, priorities, asked, lineCount) => {
          const routing = eligibilityOf(
            places.map((id, index) => place(id, priorities[index] as number)),
            {},
          );
          // At most five batches of a SKU, so that the search of every way stays small.
          const batches = drawn.map(({ sku, location, available, eta }, index) => batch(`b${index}`, sku, location, available, eta)).filter((one, _, all) => all.filter(({ sku }) => sku === one.sku).indexOf(one) < 5);
          const lines = skus.slice(0, lineCount).map((sku, index) => ({ sku, ...(asked[index] as { qty: number; split: Split }) }));
          const stock = new Map(lines.map(({ sku }) => [sku, batches.filter((one) => one.sku === sku)]));
          const plan = planOrder('o1', lines, stock, routing);
          const best = bySearchOfEveryWay(lines, stock, routing);
          if (best) expect(placed(plan)).toEqual(best);
          else expect(plan.kind).toBe('refused');
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('an order whose lines may be split, past 12 locations', () => {
  it('is the best plan by the rule, as a search of every way finds it, while its search is within its steps', () => {
    const skus = ['LAMP', 'RUG', 'SOFA'];
    fc.assert(
      fc.property(
        fc.integer({ min: 13, max: 15 }),
        fc.array(fc.record({ sku: fc.constantFrom(...skus), available: fc.integer({ min: 1, max: 6 }) }), { minLength: 13, maxLength: 15 }),
        fc.array(fc.record({ qty: fc.integer({ min: 1, max: 8 }), split: fc.constantFrom<Split>('none', 'batches', 'locations') }), { minLength: skus.length, maxLength: skus.length }),
        (locationCount, drawn, asked) => {
          const ids = Array.from({ length: locationCount }, (_, index) => `l${String(index).padStart(2, '0')}`);
          const routing = eligibilityOf(ids.map((id) => place(id, 0)), {});
          // Every batch at a location of its own, so that more than 12 have stock; at most five of a SKU.
          const batches = drawn.map(({ sku, available }, index) => batch(`b${index}`, sku, ids[index % locationCount] as string, available)).filter((one, _, all) => all.filter(({ sku }) => sku === one.sku).indexOf(one) < 5);
          fc.pre(new Set(batches.map(locationOf)).size > 12);
          const lines = skus.map((sku, index) => ({ sku, ...(asked[index] as { qty: number; split: Split }) }));
          const stock = new Map(lines.map(({ sku }) => [sku, batches.filter((one) => one.sku === sku)]));
          const best = bySearchOfEveryWay(lines, stock, routing);
          const plan = planOrder('o1', lines, stock, routing);
          if (best) expect(placed(plan)).toEqual(best);
          else expect(plan.kind).toBe('refused');
        },
      ),
      { numRuns: 60, seed: 11 },
    );
  });

  it('past the steps its search may take, still holds a line split over locations, picking them greedily', () => {
    // Five SKUs at 50 locations of their own each, a unit at each: a line of 3 split over locations
    // needs three of them, and 50^3 sets to build before the search would find the fewest.
    const ids = Array.from({ length: 250 }, (_, index) => `l${String(index).padStart(3, '0')}`);
    const skus = ['LAMP', 'RUG', 'SOFA', 'DESK', 'BED'];
    const routing = eligibilityOf(ids.map((id) => place(id, 0)), {});
    const stock = stockOf(...ids.map((id, index) => batch(`${skus[index % 5]}-${id}`, skus[index % 5] as string, id, 1)));
    const plan = planOrder('o1', [{ sku: 'LAMP', qty: 3, split: 'locations' }, ...skus.slice(1).map((sku) => ({ sku, qty: 1 }))], stock, routing);
    expect(plan.kind).toBe('placed');
    const placements = plan.kind === 'placed' ? plan.placements : [];
    expect(placements.map(({ allocation: { sku }, parts }) => [sku, (parts ?? [{ qty: 1 }]).reduce((sum, { qty }) => sum + qty, 0)])).toEqual([
      ['LAMP', 3],
      ['RUG', 1],
      ['SOFA', 1],
      ['DESK', 1],
      ['BED', 1],
    ]);
    expect(placements[0]?.parts).toHaveLength(3);
  });
});

/**
 * The reference: every way to place every line (each line on a set of its SKU's batches with units
 * that holds it, that its split allows, in at most MAX_PARTS_PER_LINE parts), ranked by the rule as
 * docs/api.md states it: fewest lines with a part on a shipment, then fewest locations over the
 * whole order, then fewest parts, then each line in turn by SKU, its batches in turn by the one-line
 * preference; each line filled in that order.
 */
const bySearchOfEveryWay = (lines: readonly { sku: string; qty: number; split: Split }[], stock: ReadonlyMap<string, readonly Batch[]>, routing: ReturnType<typeof eligibilityOf>) => {
  const preference = routedPreference(routing);
  const waysOf = ({ sku, qty, split }: { sku: string; qty: number; split: Split }) => {
    const pool = (stock.get(sku) ?? []).filter((one) => one.available > 0 && routing.locations.has(locationOf(one))).sort(preference);
    const ways: Batch[][] = [];
    for (let mask = 1; mask < 2 ** pool.length; mask++) {
      const set = pool.filter((_, index) => mask & (2 ** index));
      if (set.reduce((sum, { available }) => sum + available, 0) < qty) continue;
      if ((split === 'none' && set.length > 1) || (split === 'batches' && new Set(set.map(locationOf)).size > 1) || set.length > MAX_PARTS_PER_LINE) continue;
      ways.push(set);
    }
    return ways.map((set) => ({ set, ranks: set.map((member) => pool.indexOf(member)) }));
  };
  const bySku = [...lines].sort((a, b) => (a.sku < b.sku ? -1 : 1));
  const options = bySku.map(waysOf);
  if (options.some((ways) => ways.length === 0)) return undefined;
  let best: { key: number[]; ranks: number[][]; ways: Batch[][] } | undefined;
  const visit = (index: number, chosen: { set: Batch[]; ranks: number[] }[]) => {
    if (index === options.length) {
      const sets = chosen.map(({ set }) => set);
      const key = [sets.filter((set) => set.some(({ eta }) => eta !== null)).length, new Set(sets.flat().map(locationOf)).size, sets.flat().length];
      const ranks = chosen.map((way) => way.ranks);
      if (!best || compareKeys(key, best.key) < 0 || (compareKeys(key, best.key) === 0 && compareLines(ranks, best.ranks) < 0)) best = { key, ranks, ways: sets };
      return;
    }
    for (const way of options[index] ?? []) visit(index + 1, [...chosen, way]);
  };
  visit(0, []);
  const found = best as unknown as { ways: Batch[][] };
  return bySku.map(({ sku, qty }, index) => {
    const set = found.ways[index] as Batch[];
    let left = qty;
    const parts = set.map((member, at) => {
      const part = at === set.length - 1 ? left : Math.min(member.available, left);
      left -= part;
      return `${member.ref} ${part}`;
    });
    return `${sku}: ${parts.join(', ')}`;
  });
};

const compareKeys = (a: readonly number[], b: readonly number[]): number => {
  for (let index = 0; index < Math.min(a.length, b.length); index++) if (a[index] !== b[index]) return (a[index] as number) - (b[index] as number);
  return a.length - b.length;
};
const compareLines = (a: readonly number[][], b: readonly number[][]): number => {
  for (const [index, line] of a.entries()) {
    const order = compareKeys(line, b[index] as number[]);
    if (order !== 0) return order;
  }
  return 0;
};

const withStock = async (...batches: Array<[ref: string, sku: string, qty: number, location?: string]>) => {
  const repository = new FakeRepository();
  // Lyon before Paris.
  await repository.saveLocation(place('lyon', 0));
  await repository.saveLocation(place('paris', 1));
  for (const [ref, sku, qty, location] of batches) await addBatch({ ref, sku, qty, eta: null, ...(location ? { location } : {}) }, repository);
  return repository;
};
const availableOf = (repository: FakeRepository, ...refs: string[]) => refs.map((ref) => repository.batches.get(ref)?.available);

describe('an order allocated with split lines', () => {
  it("takes every part of every line at once, each line's own split before the order's", async () => {
    const repository = await withStock(['lamp-1', 'LAMP', 20], ['lamp-2', 'LAMP', 20], ['rug-1', 'RUG', 2], ['rug-2', 'RUG', 2]);
    const outcome = await allocateOrder({ orderid: 'o1', split: 'batches', lines: [{ sku: 'LAMP', qty: 30 }, { sku: 'RUG', qty: 2, split: 'none' }] }, repository);
    expect(outcome.newLines).toBe(2);
    expect(outcome.lines.map(({ sku, batchref, location, split }) => ({ sku, batchref, location, split }))).toEqual([
      {
        sku: 'LAMP',
        batchref: 'lamp-1',
        location: 'default',
        split: {
          split: 'batches',
          parts: [
            { batchref: 'lamp-1', qty: 20, location: 'default' },
            { batchref: 'lamp-2', qty: 10, location: 'default' },
          ],
        },
      },
      { sku: 'RUG', batchref: 'rug-1', location: 'default', split: undefined },
    ]);
    expect(availableOf(repository, 'lamp-1', 'lamp-2', 'rug-1', 'rug-2')).toEqual([0, 10, 0, 2]);
    expect((await orderAllocations('o1', repository)).map(({ sku, split }) => [sku, split?.parts.length])).toEqual([
      ['LAMP', 2],
      ['RUG', undefined],
    ]);
  });

  it('answers a repeat with the same parts and takes nothing; refuses one with another split, naming the line', async () => {
    const repository = await withStock(['lamp-1', 'LAMP', 3], ['lamp-2', 'LAMP', 3], ['rug-1', 'RUG', 5]);
    const order = { orderid: 'o1', lines: [{ sku: 'LAMP', qty: 5, split: 'batches' as const }, { sku: 'RUG', qty: 1 }] };
    const first = await allocateOrder(order, repository);
    expect(await allocateOrder(order, repository)).toEqual({ lines: first.lines, newLines: 0 });
    const refusal = allocateOrder({ orderid: 'o1', lines: [{ sku: 'LAMP', qty: 5, split: 'locations' }, { sku: 'RUG', qty: 1 }] }, repository);
    await expect(refusal).rejects.toThrow(OrderLinesSplitOtherwise);
    await expect(refusal).rejects.toMatchObject({ lines: [{ sku: 'LAMP' }] });
    expect(availableOf(repository, 'lamp-1', 'lamp-2', 'rug-1')).toEqual([0, 1, 4]);
  });

  it('counts a line allocated alone with the same split as done, and adds the others where its parts are', async () => {
    const repository = await withStock(['lamp-p', 'LAMP', 3, 'paris'], ['lamp-p2', 'LAMP', 3, 'paris'], ['rug-l', 'RUG', 5, 'lyon'], ['rug-p', 'RUG', 5, 'paris']);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 5 }, repository, {}, 'batches');
    const outcome = await allocateOrder({ orderid: 'o1', split: 'batches', lines: [{ sku: 'LAMP', qty: 5 }, { sku: 'RUG', qty: 1 }] }, repository);
    expect(outcome.newLines).toBe(1);
    expect(outcome.lines.map(({ sku, location }) => [sku, location])).toEqual([
      ['LAMP', 'paris'],
      ['RUG', 'paris'],
    ]);
  });

  it('gives every part back when a split line of the order is cancelled', async () => {
    const repository = await withStock(['lamp-1', 'LAMP', 3], ['lamp-2', 'LAMP', 3]);
    await allocateOrder({ orderid: 'o1', lines: [{ sku: 'LAMP', qty: 5, split: 'batches' }] }, repository);
    await cancelAllocation('o1', 'LAMP', repository);
    expect(availableOf(repository, 'lamp-1', 'lamp-2')).toEqual([3, 3]);
  });

  it('refuses the whole order, with its lines still, when a split line is out of stock', async () => {
    const repository = await withStock(['lamp-1', 'LAMP', 3], ['rug-1', 'RUG', 5]);
    await expect(allocateOrder({ orderid: 'o1', split: 'batches', lines: [{ sku: 'LAMP', qty: 5 }, { sku: 'RUG', qty: 1 }] }, repository)).rejects.toThrow(OrderNotAllocated);
    expect(availableOf(repository, 'lamp-1', 'rug-1')).toEqual([3, 5]);
  });

  it(`refuses, taking nothing, an order whose parts need more writes than its one transaction holds (${FakeRepository.MAX_WRITES})`, async () => {
    const skus = Array.from({ length: 6 }, (_, index) => `SKU-${index}`);
    const repository = new FakeRepository();
    for (const sku of skus) for (let index = 0; index < 6; index++) await addBatch({ ref: `${sku}-${index}`, sku, qty: 1, eta: null }, repository);
    // Lines of six parts, each emptying its batch: 1 + 6 x 3 = 19 writes a line; six lines are 114, five 95.
    const order = (count: number) => ({ orderid: `o${count}`, split: 'batches' as const, lines: skus.slice(0, count).map((sku) => ({ sku, qty: 6 })) });
    await expect(allocateOrder(order(6), repository)).rejects.toThrow(TooManyParts);
    await expect(allocateOrder(order(6), repository)).rejects.toThrow(`needs 114 writes in one transaction, more than ${FakeRepository.MAX_WRITES}`);
    expect([...repository.batches.values()].every(({ available }) => available === 1)).toBe(true);
    expect((await allocateOrder(order(5), repository)).newLines).toBe(5);
  });
});
