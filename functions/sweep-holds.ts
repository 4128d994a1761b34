import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { OVERDUE_AFTER_MS, type Sweep, sweepExpiredHolds } from '../domain/hold-services';
import type { BatchRepository } from '../domain/ports';
import { countingHoldEndings } from './hold-endings';
import { batchRepository } from './store/repository';
import { addCount, describeError, logger, publishOperationCounts, takeColdStart } from './telemetry';
import { type MetricName, SWEEP_HOLDS_OPERATION, metricNames } from './telemetry-names';

/**
 * The hold sweeper: ends the holds whose time has passed, giving their units back to their batches
 * (docs/operations.md, "The hold sweeper"). Nothing waits on it to sell an expired hold's units,
 * which are free the moment it expires; it ends the hold's record (and with it `HoldReleased`, reason
 * `expired`) and tidies the batches. On AWS a schedule runs it every minute, with or without
 * requests; `npm start` runs it every second.
 */

/** Leaves the last call of a sweep time to answer before Lambda stops the invocation. */
const TIME_TO_ANSWER_MS = 5_000;
/** Leaves, once the sweep stops ending holds, time to count the overdue ones and report. */
const TIME_TO_REPORT_MS = 5_000;
/** How long before Lambda's timeout a sweep stops ending holds. */
export const SWEEP_STOPS_BEFORE_TIMEOUT_MS = TIME_TO_REPORT_MS + TIME_TO_ANSWER_MS;

export const createSweepHoldsHandler = (repository: BatchRepository) =>
  middy<unknown, Sweep, Error, Context>().handler(async (_event, context) => {
    const timeLeft = context.getRemainingTimeInMillis?.() ?? 60_000;
    const storeDeadline = AbortSignal.timeout(Math.max(0, timeLeft - TIME_TO_ANSWER_MS));
    // A sweep out of time stops and reports what it ended, and succeeds: the next minute's sweep goes on.
    const sweepDeadline = AbortSignal.timeout(Math.max(0, timeLeft - SWEEP_STOPS_BEFORE_TIMEOUT_MS));
    const counts = new Map<MetricName, number>();
    try {
      // Each hold ended counts as it is written, so a sweep that fails afterwards still counts it.
      const counted = countingHoldEndings(repository, { count: (name) => addCount(counts, name) });
      const sweep = await sweepExpiredHolds(counted.withDeadline(storeDeadline), sweepDeadline);
      const { failed, overdue, stoppedAtDeadline } = sweep;
      // Published at 0 too: the alarm on it takes a sweep that did not report as one that fell behind.
      counts.set(metricNames.holdsOverdue, overdue);
      const entry = { message: 'Holds swept', cold_start: takeColdStart(), function_request_id: context.awsRequestId, ...sweep };
      if (overdue > 0 || failed > 0 || stoppedAtDeadline) logger.warn({ ...entry, overdueAfterMs: OVERDUE_AFTER_MS });
      else logger.info(entry);
      return sweep;
    } catch (error) {
      logger.error({ message: 'Hold sweep failed', function_request_id: context.awsRequestId, cause: describeError(error) });
      throw error;
    } finally {
      publishOperationCounts(SWEEP_HOLDS_OPERATION, counts);
    }
  });

export const handler = createSweepHoldsHandler(batchRepository);
