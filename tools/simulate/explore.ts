import { randomInt } from 'node:crypto';
import { shrink } from './shrink';
import type { PlantedDefect } from './planted-defects';
import { type RunRecord, planOf, runPlan } from './simulation';
import type { StoreOfRecord } from './store-of-record';
import { describeSettings, storyOf } from './story';

/*
 * The simulator's two uses: replaying one seed (and, if it fails, shrinking it to its story), and
 * exploring fresh seeds for a while, stopping at the first that fails.
 */

export interface Replay {
  /** The run as the seed makes it. */
  readonly run: RunRecord;
  /** When it failed: the smallest run found that fails the same way. */
  readonly shrunk?: RunRecord;
}

export const replay = async (seed: number, store: StoreOfRecord, plant?: PlantedDefect): Promise<Replay> => {
  const run = await runPlan(planOf(seed, plant), store);
  if (run.failures.length === 0) return { run };
  return { run, shrunk: await shrink(run, (plan) => runPlan(plan, store)) };
};

export interface Exploration {
  readonly runs: number;
  readonly calls: number;
  readonly faults: number;
  readonly seconds: number;
  /** Kinds of ordered pairs of conflicting calls seen over all runs. */
  readonly conflictOrders: number;
  /** The first failing run, and the seconds it took to find it (before shrinking it). */
  readonly failed?: Replay & { readonly seed: number; readonly foundAfterSeconds: number };
}

/** What one run of an exploration adds to it. */
export interface Explored {
  readonly line: string;
  readonly calls: number;
  readonly faults: number;
  readonly conflictOrders: readonly string[];
}

/**
 * Runs fresh seeds until `seconds` have passed or one fails; `report` hears of each run. Seeds go
 * from `firstSeed` by `stride`, so that explorers started at the next seeds with the same stride
 * never run one seed twice; `failing` hears of the first run that fails before it is shrunk. With
 * `plant`, every run has that defect planted in the service (./planted-defects.ts).
 */
export const explore = async (
  seconds: number,
  store: StoreOfRecord,
  report: (explored: Explored) => void,
  firstSeed = randomInt(2 ** 31),
  stride = 1,
  failing: (seed: number, foundAfterSeconds: number) => void = () => {},
  plant?: PlantedDefect,
): Promise<Exploration> => {
  const started = performance.now();
  const conflictOrders = new Set<string>();
  let [runs, calls, faults] = [0, 0, 0];
  for (let seed = firstSeed; (performance.now() - started) / 1000 < seconds; seed = (seed + stride) % 2 ** 31) {
    const run = await runPlan(planOf(seed, plant), store);
    runs++;
    calls += run.calls;
    faults += run.faults.size;
    const before = conflictOrders.size;
    for (const kind of run.conflictOrders) conflictOrders.add(kind);
    report({
      line:
        `seed ${seed}: ${describeSettings(run.plan.settings)}; ${run.plan.workload.length} sends, ${run.calls} calls, ${run.faults.size} faults, ${run.events} events, ` +
        `${run.conflictOrders.size} orders of conflicting calls (${conflictOrders.size - before} new): ${run.failures.length === 0 ? 'ok' : run.failures[0]?.rule}`,
      calls: run.calls,
      faults: run.faults.size,
      conflictOrders: [...run.conflictOrders],
    });
    if (run.failures.length > 0) {
      const foundAfterSeconds = (performance.now() - started) / 1000;
      failing(seed, foundAfterSeconds);
      const shrunk = await shrink(run, (plan) => runPlan(plan, store));
      return { runs, calls, faults, seconds: foundAfterSeconds, conflictOrders: conflictOrders.size, failed: { seed, run, shrunk, foundAfterSeconds } };
    }
  }
  return { runs, calls, faults, seconds: (performance.now() - started) / 1000, conflictOrders: conflictOrders.size };
};

export { storyOf };
