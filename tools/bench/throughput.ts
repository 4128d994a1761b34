import type { Allocator } from './allocators';
import { type LoadRun, runClosedLoop } from './load';
import { median, percentile } from './stats';

/**
 * Each figure is worked out per round, then the median over the rounds is kept: a burst of other
 * work on the machine spoils a round or two, not the figure.
 */
export interface LoadSummary {
  /** Allocations per second. */
  readonly perSecond: number;
  /** Latency of one allocation, from the start of the call to its answer. */
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export interface ThroughputComparison {
  readonly inFlight: number;
  readonly floor: LoadSummary;
  readonly service: LoadSummary;
  readonly throughputRatio: number;
  readonly p99Ratio: number;
}

const summarize = (runs: readonly LoadRun[]): LoadSummary => ({
  perSecond: median(runs.map((run) => run.completed / run.seconds)),
  p50Ms: median(runs.map((run) => percentile(run.latenciesMs, 0.5))),
  p99Ms: median(runs.map((run) => percentile(run.latenciesMs, 0.99))),
});

/**
 * Floor and service take turns, round after round, first one then the other, so that a change in
 * the machine's load or in DynamoDB Local's state over the run falls on both alike.
 */
export const compareThroughput = async (
  { floor, service }: { floor: Allocator; service: Allocator },
  { inFlight, rounds, roundMs }: { inFlight: number; rounds: number; roundMs: number },
): Promise<ThroughputComparison> => {
  const runs = { floor: [] as LoadRun[], service: [] as LoadRun[] };
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? (['floor', 'service'] as const) : (['service', 'floor'] as const);
    for (const side of order) {
      runs[side].push(await runClosedLoop(side === 'floor' ? floor : service, inFlight, roundMs));
    }
  }
  const floorSummary = summarize(runs.floor);
  const serviceSummary = summarize(runs.service);
  return {
    inFlight,
    floor: floorSummary,
    service: serviceSummary,
    throughputRatio: serviceSummary.perSecond / floorSummary.perSecond,
    p99Ratio: serviceSummary.p99Ms / floorSummary.p99Ms,
  };
};
