import type { RunRecord, Settings } from './simulation';
import { describeSend } from './workload';

/** How a run's settings read in its story's first line. */
export const describeSettings = ({ mode, strategy, faultRate, conflictRate, slowRate = 0 }: Settings): string =>
  [
    mode === 'lambda' ? 'Lambda instances' : 'one shared process',
    strategy.kind === 'pct' ? `PCT depth ${strategy.depth}` : 'random walk',
    `faults ${faultRate * 100}% of calls`,
    `conflicts ${conflictRate * 100}% of meeting transactions`,
    `slow ${slowRate * 100}% of calls`,
  ].join(', ');

/** The whole story of a run: what was sent, each call in order with its fault, each answer, and what the judge found. */
export const storyOf = (record: RunRecord): string => {
  const { plan, story, failures, faults } = record;
  const lines = [
    `seed ${plan.seed}: ${describeSettings(plan.settings)}`,
    `${plan.workload.length} sends, ${record.calls} calls, ${faults.size} faults, ${record.delays.size} slow calls`,
    'the sends (r<n>, sent at step, after another has its answer):',
    ...plan.workload.map((send) => `  r${send.id} at ${send.at}${send.after ? ` after r${send.after}` : ''}: ${describeSend(send)}`),
    'step   request',
    ...story,
  ];
  if (failures.length === 0) lines.push('the judge found nothing wrong');
  else lines.push(`the judge found ${failures.length}:`, ...failures.map(({ rule, message }) => `  [${rule}] ${message}`));
  return lines.join('\n');
};
