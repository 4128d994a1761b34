import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Location } from '../../domain/locations';
import { type Allocation, type Batch, type LinePart, type Split, locationOf } from '../../domain/model';
import { eligibilityOf, routedPreference } from '../../domain/routing';
import { MAX_PARTS_PER_LINE, movedPart, partsWithin, splitLine, withoutOutranked } from '../../domain/split-lines';

const place = (id: string, priority: number): Location => ({ id, name: id, priority, serves: ['*'], active: true });
const batch = (ref: string, location: string, available: number, eta: string | null = null): Batch => ({ ref, sku: 'LAMP', qty: available, available, eta, location });
const parts = (found: ReturnType<typeof splitLine>) => found?.map(({ batch: { ref }, qty }) => [ref, qty]);

const paris = place('paris', 0);
const lyon = place('lyon', 1);
const eligibility = eligibilityOf([paris, lyon], {});

describe('a line split over batches', () => {
  it('goes whole to the batch the one-line rule picks when one batch in stock can take it, whatever its split', () => {
    const batches = [batch('p-1', 'paris', 20), batch('p-2', 'paris', 30), batch('l-1', 'lyon', 40)];
    for (const split of ['none', 'batches', 'locations'] as const) expect(parts(splitLine(30, batches, eligibility, split))).toEqual([['p-2', 30]]);
  });

  it('takes two batches of 20 on one shelf for a line of 30 with `batches`, where `none` refuses it', () => {
    const batches = [batch('p-1', 'paris', 20), batch('p-2', 'paris', 20)];
    expect(splitLine(30, batches, eligibility, 'none')).toBeUndefined();
    expect(parts(splitLine(30, batches, eligibility, 'batches'))).toEqual([
      ['p-1', 20],
      ['p-2', 10],
    ]);
  });

  it('sends 20 from Paris and 10 from Lyon with `locations`, where `batches` keeps to one place and refuses it', () => {
    const batches = [batch('p-1', 'paris', 20), batch('l-1', 'lyon', 20)];
    expect(splitLine(30, batches, eligibility, 'batches')).toBeUndefined();
    expect(parts(splitLine(30, batches, eligibility, 'locations'))).toEqual([
      ['p-1', 20],
      ['l-1', 10],
    ]);
  });

  it('prefers parts on the shelf today to the whole line on a shipment next month', () => {
    const batches = [batch('ship', 'paris', 50, '2027-01-01'), batch('p-1', 'paris', 20), batch('p-2', 'paris', 20)];
    expect(parts(splitLine(30, batches, eligibility, 'none'))).toEqual([['ship', 30]]);
    expect(parts(splitLine(30, batches, eligibility, 'batches'))).toEqual([
      ['p-1', 20],
      ['p-2', 10],
    ]);
  });

  it('prefers one parcel of three picks to two parcels of two', () => {
    const batches = [batch('p-1', 'paris', 10), batch('p-2', 'paris', 10), batch('p-3', 'paris', 10), batch('l-1', 'lyon', 25)];
    expect(parts(splitLine(30, batches, eligibility, 'locations'))).toEqual([
      ['p-1', 10],
      ['p-2', 10],
      ['p-3', 10],
    ]);
  });

  it('prefers two picks to three at one place, though the third batch is preferred', () => {
    const batches = [batch('p-1', 'paris', 10), batch('p-2', 'paris', 10), batch('p-3', 'paris', 25)];
    expect(parts(splitLine(30, batches, eligibility, 'batches'))).toEqual([
      ['p-1', 10],
      ['p-3', 20],
    ]);
  });

  it(`is refused when no way holds it in ${MAX_PARTS_PER_LINE} parts, however many batches would`, () => {
    const batches = Array.from({ length: MAX_PARTS_PER_LINE + 1 }, (_, index) => batch(`p-${String(index).padStart(2, '0')}`, 'paris', 1));
    expect(splitLine(MAX_PARTS_PER_LINE + 1, batches, eligibility, 'batches')).toBeUndefined();
    expect(splitLine(MAX_PARTS_PER_LINE, batches, eligibility, 'batches')).toHaveLength(MAX_PARTS_PER_LINE);
  });

  it('is the best way by the rule, as a search of every set of batches finds it', () => {
    const places = ['a', 'b', 'c', 'd'];
    const arbitraryBatch = fc.record({
      location: fc.constantFrom(...places),
      available: fc.integer({ min: 0, max: 8 }),
      eta: fc.constantFrom(null, null, '2027-01-01', '2027-02-01'),
    });
    fc.assert(
      fc.property(
        fc.array(arbitraryBatch, { minLength: 1, maxLength: 12 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: places.length, maxLength: places.length }),
        fc.integer({ min: 1, max: 30 }),
        fc.constantFrom<Split>('none', 'batches', 'locations'),
        (drawn, priorities, qty, split) => {
          const routing = eligibilityOf(
            places.map((id, index) => place(id, priorities[index] as number)),
            {},
          );
          const batches = drawn.map(({ location, available, eta }, index) => batch(`b${index}`, location, available, eta));
          expect(parts(splitLine(qty, batches, routing, split))).toEqual(parts(bySearchOfEverySet(qty, batches, routing, split)));
        },
      ),
      { numRuns: 300 },
    );
  });
});

/**
 * The reference: every set of batches with units that holds the line and that the split allows,
 * in at most MAX_PARTS_PER_LINE parts, ranked by the rule as docs/api.md states it (no part on a
 * shipment, fewest locations, fewest parts, then the batches in turn by the one-line preference),
 * the best filled in that order.
 */
const bySearchOfEverySet = (qty: number, batches: readonly Batch[], routing: ReturnType<typeof eligibilityOf>, split: Split) => {
  const preference = routedPreference(routing);
  const pool = batches.filter((candidate) => candidate.available > 0 && routing.locations.has(locationOf(candidate))).sort(preference);
  let best: { readonly key: number[]; readonly set: Batch[] } | undefined;
  for (let mask = 1; mask < 2 ** pool.length; mask++) {
    const set = pool.filter((_, index) => mask & (2 ** index));
    const places = new Set(set.map(locationOf)).size;
    if (set.reduce((sum, { available }) => sum + available, 0) < qty) continue;
    if ((split === 'none' && set.length > 1) || (split === 'batches' && places > 1) || set.length > MAX_PARTS_PER_LINE) continue;
    const key = [set.some(({ eta }) => eta !== null) ? 1 : 0, places, set.length, ...set.map((member) => pool.indexOf(member))];
    if (!best || compareKeys(key, best.key) < 0) best = { key, set };
  }
  if (!best) return undefined;
  let left = qty;
  return best.set.map((member, index) => {
    const part = index === (best as { set: Batch[] }).set.length - 1 ? left : Math.min(member.available, left);
    left -= part;
    return { batch: member, qty: part };
  });
};

const compareKeys = (a: readonly number[], b: readonly number[]): number => {
  for (let index = 0; index < Math.min(a.length, b.length); index++) if (a[index] !== b[index]) return (a[index] as number) - (b[index] as number);
  return a.length - b.length;
};

describe('a part moved off a batch that shrank', () => {
  const line = (split: 'batches' | 'locations', parts: readonly [string, string, number][]): Allocation => ({
    orderid: 'o1',
    sku: 'LAMP',
    qty: parts.reduce((sum, [, , qty]) => sum + qty, 0),
    batchref: parts[0]?.[0] ?? '',
    split: { split, parts: parts.map(([batchref, location, qty]) => ({ batchref, location, qty })) },
  });
  const moving = (allocation: Allocation) => allocation.split?.parts[0] as LinePart;
  const moved = (allocation: Allocation, batches: readonly Batch[], routing = eligibility) => parts(movedPart(allocation, moving(allocation), batches, routing));

  it('goes to a batch in stock before one on a shipment, whatever else that costs', () => {
    const split = line('locations', [['p-1', 'paris', 4], ['p-2', 'paris', 2]]);
    expect(moved(split, [batch('p-3', 'paris', 9, '2027-01-01'), batch('l-1', 'lyon', 9)])).toEqual([['l-1', 4]]);
  });

  it('stays at the places its line is at before it adds one, and joins a part of its line before it adds a pick', () => {
    const split = line('locations', [['p-1', 'paris', 4], ['p-2', 'paris', 2]]);
    const batches = [batch('a-lyon', 'lyon', 9), batch('p-0', 'paris', 9), batch('p-2', 'paris', 9)];
    expect(moved(split, batches)).toEqual([['p-2', 4]]);
    expect(moved(split, batches.filter(({ ref }) => ref !== 'p-2'))).toEqual([['p-0', 4]]);
    expect(moved(split, [batch('a-lyon', 'lyon', 9)])).toEqual([['a-lyon', 4]]);
  });

  it('keeps to the place of its line with `batches`, and finds none when the batches there cannot hold it', () => {
    const split = line('batches', [['p-1', 'paris', 4], ['p-2', 'paris', 2]]);
    expect(moved(split, [batch('l-1', 'lyon', 9), batch('p-3', 'paris', 3)])).toBeUndefined();
    expect(moved(split, [batch('l-1', 'lyon', 9), batch('p-3', 'paris', 4)])).toEqual([['p-3', 4]]);
  });

  it('goes anywhere its routing allows when it is its line only part', () => {
    const split = line('batches', [['p-1', 'paris', 4]]);
    expect(moved(split, [batch('l-1', 'lyon', 9)])).toEqual([['l-1', 4]]);
    expect(moved(split, [batch('l-1', 'lyon', 9)], eligibilityOf([paris, lyon], { location: 'paris' }))).toBeUndefined();
  });

  it('is split over the batches left on its shelf when no one of them can take it: 20 off a batch, to the 10 and 15 beside it', () => {
    const split = line('batches', [['a', 'paris', 20], ['b', 'paris', 10]]);
    expect(moved(split, [batch('b', 'paris', 10), batch('c', 'paris', 15)])).toEqual([
      ['b', 10],
      ['c', 10],
    ]);
  });

  it('is split at the places its line is at before it goes whole to another', () => {
    const split = line('locations', [['p-1', 'paris', 4], ['p-2', 'paris', 2]]);
    expect(moved(split, [batch('l-1', 'lyon', 9), batch('p-3', 'paris', 2), batch('p-4', 'paris', 2)])).toEqual([
      ['p-3', 2],
      ['p-4', 2],
    ]);
  });

  it('adds the fewest parts, and of ways that add as many, goes to the fewest batches', () => {
    const split = line('batches', [['p-1', 'paris', 8], ['p-2', 'paris', 2]]);
    // p-2 beside p-9 adds no part more than p-9 alone, but takes units from one batch more.
    expect(moved(split, [batch('p-2', 'paris', 5), batch('p-9', 'paris', 10)])).toEqual([['p-9', 8]]);
    // 5 joining p-2 and 3 on p-3 add one part, where p-3 and p-4, which hold the 8 alone, would add two.
    expect(moved(split, [batch('p-2', 'paris', 5), batch('p-3', 'paris', 4), batch('p-4', 'paris', 4)])).toEqual([
      ['p-2', 5],
      ['p-3', 3],
    ]);
  });

  it(`never leaves its line more than ${MAX_PARTS_PER_LINE} parts`, () => {
    const others = Array.from({ length: MAX_PARTS_PER_LINE - 2 }, (_, index): [string, string, number] => [`own-${index}`, 'paris', 1]);
    const split = line('batches', [['p-0', 'paris', 3], ...others]);
    const units = [batch('n-1', 'paris', 1), batch('n-2', 'paris', 1), batch('n-3', 'paris', 1)];
    expect(moved(split, units)).toBeUndefined();
    expect(moved(split, [...units, batch('own-0', 'paris', 1)])).toEqual([
      ['n-1', 1],
      ['n-2', 1],
      ['own-0', 1],
    ]);
  });

  it('is the best way by the rule for the line as it then stands, as a search of every set of batches finds it', () => {
    const places = ['a', 'b', 'c'];
    const arbitraryBatch = fc.record({
      location: fc.constantFrom(...places),
      available: fc.integer({ min: 0, max: 6 }),
      eta: fc.constantFrom(null, null, '2027-01-01'),
    });
    fc.assert(
      fc.property(
        fc.array(arbitraryBatch, { minLength: 1, maxLength: 10 }),
        fc.array(fc.integer({ min: 0, max: 2 }), { minLength: places.length, maxLength: places.length }),
        fc.array(fc.record({ location: fc.constantFrom(...places), qty: fc.integer({ min: 1, max: 4 }), onBatch: fc.nat() }), { maxLength: 4 }),
        fc.integer({ min: 1, max: 20 }),
        fc.constantFrom<'batches' | 'locations'>('batches', 'locations'),
        (drawn, priorities, drawnOthers, qty, split) => {
          const routing = eligibilityOf(
            places.map((id, index) => place(id, priorities[index] as number)),
            {},
          );
          const batches = drawn.map(({ location, available, eta }, index) => batch(`b${index}`, location, available, eta));
          // Its other parts: on batches drawn (at their location) or on none of them, one per batch; with `batches`, at the first one's place.
          const others = new Map<string, [string, string, number]>();
          for (const { location, qty: partQty, onBatch } of drawnOthers) {
            const on = batches[onBatch % (batches.length + 2)];
            const ref = on?.ref ?? `gone-${onBatch}`;
            const at = split === 'batches' && others.size > 0 ? ([...others.values()][0] as [string, string, number])[1] : (on ? locationOf(on) : location);
            if ((!on || locationOf(on) === at) && !others.has(ref)) others.set(ref, [ref, at, partQty]);
          }
          const allocation = line(split, [['leaving', 'a', qty], ...others.values()]);
          expect(parts(movedPart(allocation, moving(allocation), batches, routing))).toEqual(bySearchOfEveryMove(allocation, batches, routing));
        },
      ),
      { numRuns: 300 },
    );
  });
});

/**
 * The reference for a part moved: every set of batches with units that holds its qty, ranked by the
 * rule for the line as the move leaves it (no unit on a shipment, fewest locations of the line and
 * with `batches` one, fewest parts of the line and at most MAX_PARTS_PER_LINE, fewest batches, then
 * the batches in turn by the one-line preference), the best filled in that order.
 */
const bySearchOfEveryMove = (line: Allocation, batches: readonly Batch[], routing: ReturnType<typeof eligibilityOf>) => {
  const [leaving, ...others] = line.split?.parts ?? [];
  const preference = routedPreference(routing);
  const pool = batches.filter((candidate) => candidate.available > 0 && routing.locations.has(locationOf(candidate))).sort(preference);
  const qty = (leaving as LinePart).qty;
  let best: { readonly key: number[]; readonly set: Batch[] } | undefined;
  for (let mask = 1; mask < 2 ** pool.length; mask++) {
    const set = pool.filter((_, index) => mask & (2 ** index));
    const places = new Set([...others.map(({ location }) => location), ...set.map(locationOf)]).size;
    const lineParts = new Set([...others.map(({ batchref }) => batchref), ...set.map(({ ref }) => ref)]).size;
    if (set.reduce((sum, { available }) => sum + available, 0) < qty) continue;
    if ((line.split?.split === 'batches' && places > 1) || lineParts > MAX_PARTS_PER_LINE) continue;
    const key = [set.some(({ eta }) => eta !== null) ? 1 : 0, places, lineParts, set.length, ...set.map((member) => pool.indexOf(member))];
    if (!best || compareKeys(key, best.key) < 0) best = { key, set };
  }
  if (!best) return undefined;
  let left = qty;
  return best.set.map((member, index) => {
    const part = index === (best as { set: Batch[] }).set.length - 1 ? left : Math.min(member.available, left);
    left -= part;
    return [member.ref, part];
  });
};

describe('the batches a place costs the search', () => {
  it('keeps, of many batches of one size at a place, the ten the rule prefers, and every larger one', () => {
    const batches = [batch('p-big', 'paris', 10), ...Array.from({ length: 100 }, (_, index) => batch(`p-${String(index).padStart(3, '0')}`, 'paris', 1)), batch('l-1', 'lyon', 1)];
    const kept = withoutOutranked([...batches].sort(routedPreference(eligibility)));
    expect(kept.filter((one) => locationOf(one) === 'paris')).toHaveLength(11);
    expect(kept.map(({ ref }) => ref)).toContain('p-big');
    expect(kept.map(({ ref }) => ref)).toContain('l-1');
  });

  it('finds the same batches for any line among the batches it keeps as among them all', () => {
    const poolArbitrary = fc.array(fc.record({ at: fc.constantFrom('paris', 'lyon', 'nice'), available: fc.integer({ min: 1, max: 6 }) }), { minLength: 1, maxLength: 40 });
    fc.assert(
      fc.property(poolArbitrary, fc.integer({ min: 1, max: 40 }), fc.constantFrom<Split>('batches', 'locations'), (drawn, qty, split) => {
        const pool = drawn.map(({ at, available }, index) => batch(`b-${String(index).padStart(2, '0')}`, at, available));
        const places = new Set(['paris', 'lyon', 'nice']);
        const refs = (found: readonly Batch[] | undefined) => found?.map(({ ref }) => ref);
        expect(refs(partsWithin(qty, withoutOutranked(pool), places, split))).toEqual(refs(partsWithin(qty, pool, places, split)));
      }),
      { numRuns: 500 },
    );
  });
});

describe('a search for the fewest locations that spends its budget', () => {
  it('still takes the fewest parts: four batches of 10 at four places, not one place of small batches and three of 10', () => {
    // 36 preferred places of 10 units each (one batch of 5, five of 1) and 4 of one batch of 10: no 3
    // places hold 40, and the search spends its 20,000 sets among the sets of four before it meets the four of 10.
    const small = Array.from({ length: 36 }, (_, index) => place(`s${String(index).padStart(2, '0')}`, 0));
    const big = Array.from({ length: 4 }, (_, index) => place(`b${index}`, 1));
    const batches = [
      ...small.flatMap(({ id }) => [batch(`${id}-5`, id, 5), ...Array.from({ length: 5 }, (_, index) => batch(`${id}-1-${index}`, id, 1))]),
      ...big.map(({ id }) => batch(`${id}-10`, id, 10)),
    ];
    const found = splitLine(40, batches, eligibilityOf([...small, ...big], {}), 'locations');
    expect(parts(found)).toEqual(big.map(({ id }) => [`${id}-10`, 10]));
  });
});
