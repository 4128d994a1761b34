import type { BatchRepository } from '../domain/ports';
import { type MetricName, metricNames } from './telemetry-names';

/**
 * `repository`, counting each hold its writes end: HoldsReleased or HoldsExpired, at the write that
 * ended it. Every way a hold ends other than confirmed (a release, a repeat, an extension or a
 * confirm that finds it expired, the sweeper) is that one write, and a batch that shrinks under it
 * ends it in the change's own write (or, past what that write carries, in that one write); so each
 * hold ended counts once, whatever the request answers afterwards: a 409 that says it has expired, a
 * 503 of a batch change that gave up, a sweep that failed. A write that committed but whose answer
 * was lost (the store's connection dropped, the deadline passed) is not counted: at most once, not
 * exactly. What `withDeadline` makes counts too.
 */
export const countingHoldEndings = (repository: BatchRepository, counter: { count(name: MetricName): void }): BatchRepository =>
  new Proxy(repository, {
    get(target, property) {
      if (property === 'endHold') {
        return async (...args: Parameters<BatchRepository['endHold']>) => {
          const written = await target.endHold(...args);
          if (written === 'saved') counter.count(args[1] === 'released' ? metricNames.holdsReleased : metricNames.holdsExpired);
          return written;
        };
      }
      if (property === 'changeBatch') {
        return async (...args: Parameters<BatchRepository['changeBatch']>) => {
          const written = await target.changeBatch(...args);
          if (written.outcome === 'saved') for (const { ending } of args[2] ?? []) counter.count(ending === 'released' ? metricNames.holdsReleased : metricNames.holdsExpired);
          return written;
        };
      }
      if (property === 'withDeadline') {
        return (...args: Parameters<BatchRepository['withDeadline']>) => countingHoldEndings(target.withDeadline(...args), counter);
      }
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
