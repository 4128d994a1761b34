/**
 * The names the functions log and measure under, defined once: the handlers write them (Powertools
 * Logger and Metrics, embedded metric format), and the stack's alarms and dashboard read them, so
 * the two cannot drift apart.
 */

/** Powertools' `serviceName`: the `service` field of every log entry and a dimension of every metric. */
export const SERVICE_NAME = 'allocation';

/** The CloudWatch namespace of the service's own metrics. */
export const METRICS_NAMESPACE = 'AllocationService';

/**
 * The one dimension of the HTTP handlers' metrics besides the service: the route key, as API
 * Gateway names it (`POST /allocate`). Never a SKU or an order: each value of a dimension is a
 * metric of its own, billed as one.
 */
export const OPERATION_DIMENSION = 'operation';
/** The dimension every metric has first, which carries SERVICE_NAME (the name Powertools gives it, which the dashboards of an older version read). */
export const SERVICE_DIMENSION = 'service';

/** The stream consumer's `operation`: it serves no route. */
export const PUBLISH_EVENTS_OPERATION = 'PublishEvents';

/** The hold sweeper's `operation`. */
export const SWEEP_HOLDS_OPERATION = 'SweepHolds';

/** The 503s' dimension: why the service could not answer (domain/errors.ts, StoreUnavailable and the contended errors). */
export const CAUSE_DIMENSION = 'cause';

/**
 * The values of `cause`: the name of the failure a 503 answers (functions/http/errors.ts), the
 * store's or a race's (domain/errors.ts), or the function's own time running out.
 */
export const unavailableCauses = ['StoreUnavailable', 'AllocationContended', 'BatchContended', 'HoldContended', 'FunctionTimeout'] as const;
export type UnavailableCause = (typeof unavailableCauses)[number];

/** The `message` of the one log entry each request writes, to find those entries among the others. */
export const REQUEST_LOG_MESSAGE = 'Request';

/** Every metric the functions emit, each a count per request or per batch of stream records. */
export const metricNames = {
  /** Lines newly allocated (POST /allocate, each line of POST /orders); not a repeat. */
  linesAllocated: 'LinesAllocated',
  /** Whole orders newly allocated by POST /orders. */
  ordersAllocated: 'OrdersAllocated',
  /** Allocations refused for lack of stock (a line of an order counts once). */
  outOfStock: 'OutOfStock',
  /** Allocations refused for an unknown SKU. */
  invalidSku: 'InvalidSku',
  /** Transactions DynamoDB cancelled for a conflict or throttling and the adapter tried again. */
  conflictsRetried: 'ConflictsRetried',
  /** Conditional writes that found the stock changed since it was read (another request won the race). */
  conflictsLost: 'ConflictsLost',
  /** Lines moved off a batch by PATCH /batches/{ref}, to another batch or out of their order. */
  linesReallocated: 'LinesReallocated',
  /** Holds newly placed by POST /holds; not a repeat. */
  holdsPlaced: 'HoldsPlaced',
  /** Holds whose lines became an order's by POST /holds/{holdid}/confirm; not a repeat. */
  holdsConfirmed: 'HoldsConfirmed',
  /** Active holds ended by DELETE /holds/{holdid}, or by a PATCH of a batch that shrank under them. */
  holdsReleased: 'HoldsReleased',
  /** Holds ended as expired: by the sweeper, or by a request that found them expired (a release, a repeat, an extension, a confirm, a batch change). */
  holdsExpired: 'HoldsExpired',
  /** Holds still active 5 minutes after they expired, counted by the sweeper after each sweep (0 included): its alarm's metric. */
  holdsOverdue: 'HoldsOverdue',
  /** Answers 503, by `cause`. */
  unavailable: 'Unavailable',
  /** Events the stream consumer put on the bus. */
  eventsPublished: 'EventsPublished',
  /** Events the stream consumer could not put on the bus after its retries (their records are retried). */
  eventsFailed: 'EventsFailed',
} as const;

export type MetricName = (typeof metricNames)[keyof typeof metricNames];
