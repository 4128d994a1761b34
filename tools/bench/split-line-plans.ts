import type { Location } from '../../domain/locations';
import type { Batch } from '../../domain/model';
import { planOrder } from '../../domain/order-plans';
import { eligibilityOf } from '../../domain/routing';
import { splitLine } from '../../domain/split-lines';
import { median } from './stats';

/**
 * How long one line split over places takes to plan, before any store call, as `POST /allocate`
 * plans it (domain/split-lines.ts, splitLine) and as `POST /orders` does (domain/order-plans.ts,
 * planOrder): 40 places of one batch of 10 and many of 1, so that the line of 40 needs four
 * places' largest, and the many small batches at each place are what the search must not pay for.
 * One process, the median of five plans of each.
 */
export interface SplitLinePlan {
  readonly qty: number;
  readonly places: number;
  readonly smallBatchesAt: number;
  readonly splitLineMs: number;
  readonly planOrderMs: number;
  readonly parts: number;
}

const PLACES = 40;
const QTY = 40;
/** The small batches at each place: as many again and ten times as many, for the plan's time to show it does not grow with them. */
export const SMALL_BATCHES_AT = [100, 1_000] as const;
const RUNS = 5;

const timed = <T>(plan: () => T): { readonly ms: number; readonly result: T } => {
  const times: number[] = [];
  let result = plan();
  for (let run = 0; run < RUNS; run++) {
    const start = performance.now();
    result = plan();
    times.push(performance.now() - start);
  }
  return { ms: median(times), result };
};

export const measureSplitLinePlans = (): SplitLinePlan[] =>
  SMALL_BATCHES_AT.map((smallBatchesAt) => {
    const locations: Location[] = Array.from({ length: PLACES }, (_, index) => ({ id: `place-${index}`, name: `place-${index}`, priority: 0, serves: ['*'], active: true }));
    const batches: Batch[] = locations.flatMap(({ id }) => [
      { ref: `${id}-10`, sku: 'LAMP', qty: 10, available: 10, eta: null, location: id },
      ...Array.from({ length: smallBatchesAt }, (_, index) => ({ ref: `${id}-1-${index}`, sku: 'LAMP', qty: 1, available: 1, eta: null, location: id })),
    ]);
    const eligibility = eligibilityOf(locations, {});
    const alone = timed(() => splitLine(QTY, batches, eligibility, 'locations'));
    const ordered = timed(() => planOrder('order', [{ sku: 'LAMP', qty: QTY, split: 'locations' }], new Map([['LAMP', batches]]), eligibility));
    const orderParts = ordered.result.kind === 'placed' ? (ordered.result.placements[0]?.parts?.length ?? 1) : 0;
    if ((alone.result?.length ?? 0) !== orderParts) throw new Error(`A line planned alone took ${alone.result?.length} parts, in an order ${orderParts}`);
    return { qty: QTY, places: PLACES, smallBatchesAt, splitLineMs: alone.ms, planOrderMs: ordered.ms, parts: orderParts };
  });
