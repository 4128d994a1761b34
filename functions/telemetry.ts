import { Console } from 'node:console';
import { Logger } from '@aws-lambda-powertools/logger';
import { METRICS_NAMESPACE, type MetricName, OPERATION_DIMENSION, SERVICE_DIMENSION, SERVICE_NAME } from './telemetry-names';

/*
 * The functions' Powertools Logger, one per Lambda instance (module scope), and their metrics, in
 * CloudWatch's embedded metric format. Both only write lines to standard output (and Logger's
 * warnings and errors to standard error): CloudWatch Logs takes them from there, reads the metrics
 * out of their entries, and no call to any API is made for either. On Lambda they write through a
 * console of their own, so that the runtime does not wrap each entry as text inside its own JSON line.
 *
 * Configuration, all from the environment (the stack sets it; see docs/operations.md):
 * POWERTOOLS_LOG_LEVEL (not Lambda's own level: see `logger`); POWERTOOLS_LOGGER_SAMPLE_RATE, the
 * share of invocations logged at DEBUG; POWERTOOLS_METRICS_DISABLED; and POWERTOOLS_DEV, for a terminal or a test only, never on Lambda: indented entries through the
 * global console, and no metrics unless POWERTOOLS_METRICS_DISABLED is false.
 */

/**
 * Built without Lambda's own log level in sight. Powertools lets AWS_LAMBDA_LOG_LEVEL win over its
 * level and its debug sampling, which would make sampling impossible: a sampled invocation's DEBUG
 * lines would be refused at Lambda's level. The stack therefore sets Lambda's level to DEBUG, a
 * filter that drops nothing, and the level that decides is POWERTOOLS_LOG_LEVEL, with
 * POWERTOOLS_LOGGER_SAMPLE_RATE (infra/constructs/service-function.ts).
 */
const withoutLambdaLogLevel = <Built>(build: () => Built): Built => {
  const lambdaLogLevel = process.env.AWS_LAMBDA_LOG_LEVEL;
  delete process.env.AWS_LAMBDA_LOG_LEVEL;
  try {
    return build();
  } finally {
    if (lambdaLogLevel !== undefined) process.env.AWS_LAMBDA_LOG_LEVEL = lambdaLogLevel;
  }
};

export const logger = withoutLambdaLogLevel(() => new Logger({ serviceName: SERVICE_NAME }));

/** An environment variable's switch, as Powertools reads one: `1`, `y`, `yes`, `t`, `true` or `on` (any case) is on. */
const switchedOn = (name: string): boolean | undefined => {
  const value = process.env[name]?.trim().toLowerCase();
  return value === undefined || value === '' ? undefined : ['1', 'y', 'yes', 't', 'true', 'on'].includes(value);
};

/** Metrics are written unless POWERTOOLS_METRICS_DISABLED says not, or, when it says nothing, in a terminal or a test (POWERTOOLS_DEV). */
const metricsWritten = (): boolean => !(switchedOn('POWERTOOLS_METRICS_DISABLED') ?? switchedOn('POWERTOOLS_DEV') ?? false);

/** On Lambda, standard output as it is; in a terminal or a test, the global console, which a test can read. */
const lambdaConsole = new Console({ stdout: process.stdout, stderr: process.stderr });
const metricsConsole = (): Pick<Console, 'log'> => (switchedOn('POWERTOOLS_DEV') ? console : lambdaConsole);

/** An instance's cold start, pending until its first invocation takes it. */
export interface ColdStart {
  pending: boolean;
}

/**
 * Lambda ran this instance's init on demand, for the invocation waiting on it; not with provisioned
 * concurrency or SnapStart, whose init ran ahead of any request, nor off Lambda.
 */
const moduleColdStart: ColdStart = { pending: process.env.AWS_LAMBDA_INITIALIZATION_TYPE === 'on-demand' };

/**
 * On Lambda this module is its instance's own, and so is the cold start above. A process that runs
 * several instances of a function over this one module (the local server's Lambda mode,
 * local/function-instances.ts) knows which instance an invocation runs on, and says here how to
 * find that instance's cold start; an invocation it finds none for takes the module's.
 */
let coldStartOfInvocation: () => ColdStart | undefined = () => undefined;

export const findColdStartsBy = (find: () => ColdStart | undefined): void => {
  coldStartOfInvocation = find;
};

/** True once an instance: for its first invocation, when it was started on demand, whose latency includes the init. */
export const takeColdStart = (): boolean => {
  const coldStart = coldStartOfInvocation() ?? moduleColdStart;
  const pending = coldStart.pending;
  coldStart.pending = false;
  return pending;
};

/** Counts by metric name, of one invocation. */
export type Counts = ReadonlyMap<MetricName, number>;

/**
 * Writes `counts` as one embedded-metric entry under `dimensions` (after `service`), and nothing
 * when there is nothing to count: an invocation that counted nothing publishes no empty entry. One
 * synchronous write, so invocations that share the instance (the local server's) never mix their
 * counts.
 */
export const publishCounts = (dimensions: Readonly<Record<string, string>>, counts: Counts): void => {
  if (counts.size === 0 || !metricsWritten()) return;
  const dimensioned = { [SERVICE_DIMENSION]: SERVICE_NAME, ...dimensions };
  const metrics = [...counts].map(([name]) => ({ Name: name, Unit: 'Count' }));
  const entry = { _aws: { Timestamp: Date.now(), CloudWatchMetrics: [{ Namespace: METRICS_NAMESPACE, Dimensions: [Object.keys(dimensioned)], Metrics: metrics }] }, ...dimensioned, ...Object.fromEntries(counts) };
  metricsConsole().log(JSON.stringify(entry));
};

/** `counts` under the one dimension every metric of an operation has. */
export const publishOperationCounts = (operation: string, counts: Counts): void => publishCounts({ [OPERATION_DIMENSION]: operation }, counts);

/** Adds `value` to `name` in `counts`; a zero adds nothing, so that no metric of 0 is published. */
export const addCount = (counts: Map<MetricName, number>, name: MetricName, value = 1): void => {
  if (value > 0) counts.set(name, (counts.get(name) ?? 0) + value);
};

/** An error and its causes by name and message, for a log entry only: no stack, no request data. */
export const describeError = (error: unknown): unknown => {
  if (!(error instanceof Error)) return typeof error === 'object' && error !== null ? JSON.stringify(error) : String(error);
  return { name: error.name, message: error.message, ...(error.cause ? { cause: describeError(error.cause) } : {}) };
};
