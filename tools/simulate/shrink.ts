import type { Fault, Plan, RunRecord, SlowCall } from './simulation';

/*
 * A failing run made as small as it will go: fewer requests, then fewer faults, then fewer slow
 * calls, each cut kept only if the run still fails the same way. Every run tried follows the failing
 * run's order of calls, its faults and its slow calls (a FollowSchedule), so a cut changes only what
 * it cuts; and every step of it is decided by the runs, so the same failing run always shrinks to the
 * same story.
 */

/** Runs tried at most, so that shrinking a large run ends in a minute or two. */
const MAX_TRIES = 200;

const firstRule = (record: RunRecord): string | undefined => record.failures[0]?.rule;

export const shrink = async (failing: RunRecord, rerun: (plan: Plan) => Promise<RunRecord>): Promise<RunRecord> => {
  const rule = firstRule(failing);
  let best = failing;
  let tries = 0;
  const attempt = async (plan: Plan): Promise<boolean> => {
    if (tries++ >= MAX_TRIES) return false;
    const record = await rerun(plan);
    if (!record.failures.some((failure) => failure.rule === rule)) return false;
    best = record;
    return true;
  };
  const following = (workload: Plan['workload'], faults: ReadonlyMap<string, Fault>, delays: ReadonlyMap<string, SlowCall> = best.delays): Plan => ({
    ...best.plan,
    workload,
    follow: { order: best.order, faults, delays },
  });

  // Halves, then quarters, down to one request at a time, as delta debugging cuts.
  for (let size = Math.ceil(best.plan.workload.length / 2); size >= 1; size = size === 1 ? 0 : Math.ceil(size / 2)) {
    for (let from = best.plan.workload.length - size; from >= 0 && tries < MAX_TRIES; from -= size) {
      const workload = best.plan.workload.filter((_, index) => index < from || index >= from + size);
      if (workload.length > 0) await attempt(following(workload, best.faults));
    }
  }
  for (const id of [...best.faults.keys()].reverse()) {
    if (tries >= MAX_TRIES) break;
    const faults = new Map(best.faults);
    faults.delete(id);
    await attempt(following(best.plan.workload, faults));
  }
  for (const id of [...best.delays.keys()].reverse()) {
    if (tries >= MAX_TRIES) break;
    const delays = new Map(best.delays);
    delays.delete(id);
    await attempt(following(best.plan.workload, best.faults, delays));
  }
  return best;
};
