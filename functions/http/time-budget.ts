import type { Context } from 'aws-lambda';

/**
 * One time budget for an invocation, so that it always answers before Lambda cuts it off (docs/reliability.md,
 * "Timeouts and retries", shows the arithmetic):
 * - the function's timeout, set on each Lambda by the CDK stack; the local server counts
 *   `getRemainingTimeInMillis` down from the same number, so the budget holds locally too;
 * - middy answers 503 `TIME_TO_ANSWER_MS` before that, and at the same moment the request's
 *   deadline aborts every store call in flight and stops new ones from starting.
 */
export const FUNCTION_TIMEOUT_SECONDS = 10;

/**
 * Left for rendering the 503, writing the request log and returning, with room for a CPU slowed by
 * a cold start or a busy host; a store call that needs this second as well is already a failure.
 */
export const TIME_TO_ANSWER_MS = 1_000;

export interface Deadline {
  /** Aborts when middy answers 503 for lack of time. */
  readonly signal: AbortSignal;
  /** The invocation has answered: its timer goes, rather than linger for seconds in a warm instance. */
  clear(): void;
}

const NO_DEADLINE: Deadline = { signal: new AbortController().signal, clear: () => undefined };

/**
 * The invocation's deadline, started with its handler, as middy starts its own timer. Without
 * `getRemainingTimeInMillis` (a test's context) middy arms no timeout either, and none comes.
 */
export const startDeadline = (context: Context): Deadline => {
  if (typeof context.getRemainingTimeInMillis !== 'function') return NO_DEADLINE;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), Math.max(0, context.getRemainingTimeInMillis() - TIME_TO_ANSWER_MS));
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
};
