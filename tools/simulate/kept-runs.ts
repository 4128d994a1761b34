import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PlantedDefect } from './planted-defects';
import type { Fault, Plan, RunRecord, SlowCall } from './simulation';

/*
 * A failing run kept as it was shrunk: its settings, sends, order of calls, faults and slow calls. Replayed by
 * following that schedule, it meets the same interleaving whatever the workload generator draws for
 * its seed today, so the defect it found stays tested after the generator changes. A run of a
 * defect planted on purpose (./planted-defects.ts) keeps its plant, and is kept apart from the
 * service's (test/unit/fixtures/planted-runs/): it shows that the judge still finds it.
 */

interface KeptRun {
  readonly defect: string;
  readonly seed: number;
  readonly settings: Plan['settings'];
  readonly workload: Plan['workload'];
  readonly order: readonly string[];
  readonly faults: readonly (readonly [string, Fault])[];
  /** Absent in runs kept before calls could be slow. */
  readonly delays?: readonly (readonly [string, SlowCall])[];
  readonly plant?: PlantedDefect;
}

export const keepRun = (file: string, defect: string, { plan, order, faults, delays }: RunRecord): void => {
  const kept: KeptRun = { defect, seed: plan.seed, settings: plan.settings, workload: plan.workload, order, faults: [...faults], delays: [...delays], ...(plan.plant ? { plant: plan.plant } : {}) };
  writeFileSync(file, `${JSON.stringify(kept, null, 2)}\n`);
};

/** The runs kept in `folder`, each as a plan that follows its schedule, with what it found. */
export const keptRuns = (folder: string): { readonly file: string; readonly defect: string; readonly plan: Plan }[] =>
  readdirSync(folder)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => {
      const kept = JSON.parse(readFileSync(join(folder, file), 'utf8')) as KeptRun;
      return {
        file,
        defect: kept.defect,
        plan: {
          seed: kept.seed,
          settings: kept.settings,
          workload: kept.workload,
          follow: { order: kept.order, faults: new Map(kept.faults), delays: new Map(kept.delays ?? []) },
          ...(kept.plant ? { plant: kept.plant } : {}),
        },
      };
    });
