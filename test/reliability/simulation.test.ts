import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keptRuns } from '../../tools/simulate/kept-runs';
import { planOf, runPlan } from '../../tools/simulate/simulation';
import { memoryStoreOfRecord } from '../../tools/simulate/memory-store';
import type { StoreOfRecord } from '../../tools/simulate/store-of-record';
import { storyOf } from '../../tools/simulate/story';

/*
 * The simulated world (docs/reliability.md, "The simulator") over a fixed list of seeds: each run
 * sends a few dozen requests through the real handlers and adapter to the memory store (held to
 * DynamoDB Local by ./memory-store.test.ts), every store
 * call in an order its seed fixes, with faults, and is judged. Every failure once found is kept as
 * the run the simulator shrank it to (./simulations), replayed call by call: a seed tells its story
 * only while the workload generator draws as it did when the seed was found.
 */

/** The first forty seeds: every mode, strategy, focus and fault rate among them. */
const SEEDS = Array.from({ length: 40 }, (_, index) => index + 1);

const kept = keptRuns(new URL('./simulations', import.meta.url).pathname);

describe('the simulated world', () => {
  let store: StoreOfRecord;
  beforeAll(() => {
    store = memoryStoreOfRecord();
  });
  afterAll(() => store.destroy());

  it.each(kept)('replays the interleaving that found a defect ($file) and finds nothing wrong', async ({ plan }) => {
    const run = await runPlan(plan, store);
    expect(run.failures, storyOf(run)).toEqual([]);
  });

  it.each(SEEDS)('seed %i: every answer still holds, every invariant too, and no 5xx without a fault', async (seed) => {
    const run = await runPlan(planOf(seed), store);
    expect(run.failures, storyOf(run)).toEqual([]);
  });

  it('tells the same story every time a seed is run', async () => {
    const [first, second] = [await runPlan(planOf(7), store), await runPlan(planOf(7), store)];
    expect(storyOf(second)).toEqual(storyOf(first));
    expect(first.calls).toBeGreaterThan(20);
  });

  it('tells the same story of a run with slow calls from its seed, and from its order of calls, faults and slow calls, as a kept run is replayed', async () => {
    const plan = planOf(18);
    const first = await runPlan(plan, store);
    expect(first.delays.size).toBeGreaterThan(0);
    const again = await runPlan(plan, store);
    const followed = await runPlan({ ...plan, follow: { order: first.order, faults: first.faults, delays: first.delays } }, store);
    expect(storyOf(again)).toEqual(storyOf(first));
    expect(storyOf(followed)).toEqual(storyOf(first));
  });
});
