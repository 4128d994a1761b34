import { DomainError, InvalidSku, OrderNotAllocated, OutOfStock, TransientFailure } from '../../domain/errors';
import type { StoreObserver } from '../../domain/ports';
import { addCount, describeError, logger, publishCounts, publishOperationCounts, takeColdStart } from '../telemetry';
import { CAUSE_DIMENSION, type MetricName, OPERATION_DIMENSION, REQUEST_LOG_MESSAGE, metricNames } from '../telemetry-names';

/** What a route counts of a request that succeeded (lines allocated, lines moved). */
export interface RouteCounter {
  count(name: MetricName, value?: number): void;
}

/**
 * One request's counts, published with its log entry: what its route counted, and what the store
 * did for it that the answers do not show (retried transactions, lost races), heard as its
 * repository's observer.
 */
export class RequestMeasures implements RouteCounter, StoreObserver {
  readonly counts = new Map<MetricName, number>();

  constructor(
    private readonly requestId: string,
    private readonly route: string,
  ) {}

  count(name: MetricName, value = 1): void {
    addCount(this.counts, name, value);
  }

  transactionRetried(cancellationCodes: readonly string[]): void {
    this.count(metricNames.conflictsRetried);
    logger.debug('Transaction retried', { requestId: this.requestId, route: this.route, cancellationCodes });
  }

  raceLost(): void {
    this.count(metricNames.conflictsLost);
    logger.debug('Race lost', { requestId: this.requestId, route: this.route });
  }
}

/** How a request ended, as the request log and metrics take it. */
export interface RequestSummary {
  /** API Gateway's request id, the one 5xx bodies carry. */
  readonly requestId: string;
  /** Lambda's request id of the invocation. */
  readonly functionRequestId: string | undefined;
  readonly route: string;
  readonly status: number;
  readonly durationMs: number;
  /** What the request came to: a success's name for its route, or the failure's (functions/http/errors.ts). */
  readonly outcome: string;
  /** What was thrown, for a request that failed. */
  readonly error?: unknown;
}

/**
 * Refusals of an allocation, one per line: an order refused names every line and why
 * (metricNames: "a line of an order counts once").
 */
const countRefusals = (error: unknown, measures: RequestMeasures): void => {
  if (error instanceof OutOfStock) measures.count(metricNames.outOfStock);
  else if (error instanceof InvalidSku) measures.count(metricNames.invalidSku);
  else if (error instanceof OrderNotAllocated) {
    for (const { reason } of error.lines) measures.count(reason === 'out_of_stock' ? metricNames.outOfStock : metricNames.invalidSku);
  }
};

/**
 * Writes the request's one log entry and publishes its metrics. The entry's level: INFO for an
 * answer as designed (2xx, 4xx), WARN for a 503 (nothing written, the client retries; the
 * `Unavailable` metric is what alarms), ERROR for any other 5xx (a fault to fix). `error` names the
 * failure when the domain defines it (a refusal of its rules, or a transient failure); a 5xx also
 * logs its cause, the chain of errors by name and message, never a stack or the request's data.
 */
export const recordRequest = ({ requestId, functionRequestId, route, status, durationMs, outcome, error }: RequestSummary, measures: RequestMeasures): void => {
  const entry = {
    message: REQUEST_LOG_MESSAGE,
    cold_start: takeColdStart(),
    function_request_id: functionRequestId,
    requestId,
    route,
    status,
    durationMs,
    outcome,
    ...(error instanceof DomainError || error instanceof TransientFailure ? { error: error.name } : {}),
    ...(status >= 500 && error !== undefined ? { cause: describeError(error) } : {}),
  };
  if (status === 503) logger.warn(entry);
  else if (status >= 500) logger.error(entry);
  else logger.info(entry);

  countRefusals(error, measures);
  publishOperationCounts(route, measures.counts);
  // Under its own entry: a cause applies to this count alone, not to the request's other counts.
  if (status === 503) publishCounts({ [OPERATION_DIMENSION]: route, [CAUSE_DIMENSION]: outcome }, new Map([[metricNames.unavailable, 1]]));
};
