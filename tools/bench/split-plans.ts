/**
 * `npx tsx tools/bench/split-plans.ts`: how long planning an order of 25 lines takes when its lines
 * may be split (domain/order-plans.ts, planOrder), over many places and batches: the search a
 * request makes before any store call, in one process, the median of 5 plans of each case. Prints
 * one line of JSON per case.
 */
import type { Location } from '../../domain/locations';
import type { Batch, Split } from '../../domain/model';
import { planOrder } from '../../domain/order-plans';
import { eligibilityOf } from '../../domain/routing';

interface Case {
  readonly name: string;
  readonly places: number;
  /** Each SKU's batches at one place, with the units of each (drawn 1 to 6 when a number of them). */
  readonly batchesAt: number | readonly number[];
  readonly qty: number;
  readonly split: Split;
}

const CASES: readonly Case[] = [
  { name: 'whole lines, 12 places of 10 batches', places: 12, batchesAt: 10, qty: 5, split: 'none' },
  { name: 'over batches, 40 places of 30 batches', places: 40, batchesAt: 30, qty: 40, split: 'batches' },
  { name: 'over places, 12 places of 10 batches', places: 12, batchesAt: 10, qty: 40, split: 'locations' },
  { name: 'over places, 40 places of 10 batches', places: 40, batchesAt: 10, qty: 40, split: 'locations' },
  { name: 'over places, each line needing 9 of 40 places of 31 batches', places: 40, batchesAt: [...Array.from({ length: 30 }, () => 1), 6], qty: 50, split: 'locations' },
  { name: 'refused: no way holds a line, 12 places of 30 batches', places: 12, batchesAt: 30, qty: 150, split: 'locations' },
];
const LINES = 25;
const RUNS = 5;

/** The same draws every run, so that the figures compare. */
const drawing = () => {
  let seed = 7;
  return () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
};

const planOf = ({ places, batchesAt, qty, split }: Case) => {
  const random = drawing();
  const locations: Location[] = Array.from({ length: places }, (_, index) => ({ id: `place-${index}`, name: `place-${index}`, priority: index % 3, serves: ['*'], active: true }));
  const stock = new Map<string, Batch[]>();
  for (let line = 0; line < LINES; line++) {
    const sku = `SKU-${line}`;
    const units = (index: number) => (typeof batchesAt === 'number' ? 1 + Math.floor(random() * 6) : (batchesAt[index] as number));
    const count = typeof batchesAt === 'number' ? batchesAt : batchesAt.length;
    stock.set(
      sku,
      locations.flatMap(({ id }) =>
        Array.from({ length: count }, (_, index) => {
          const available = units(index);
          return { ref: `${sku}-${id}-${index}`, sku, qty: available, available, eta: null, location: id };
        }),
      ),
    );
  }
  const lines = [...stock.keys()].map((sku) => ({ sku, qty, split }));
  return () => planOrder('order', lines, stock, eligibilityOf(locations, {}));
};

for (const planned of CASES) {
  const plan = planOf(planned);
  const times: number[] = [];
  let outcome = '';
  for (let run = 0; run < RUNS; run++) {
    const start = performance.now();
    const result = plan();
    times.push(performance.now() - start);
    outcome =
      result.kind === 'refused'
        ? 'refused'
        : `${new Set(result.placements.flatMap(({ batch, parts }) => (parts ?? [{ batch }]).map(({ batch: part }) => part.location))).size} places, ${result.placements.reduce((sum, { parts }) => sum + (parts?.length ?? 1), 0)} parts`;
  }
  const median = [...times].sort((a, b) => a - b)[Math.floor(RUNS / 2)] as number;
  console.log(JSON.stringify({ case: planned.name, lines: LINES, medianMs: Math.round(median), plan: outcome }));
}
