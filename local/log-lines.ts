import { REQUEST_LOG_MESSAGE } from '../functions/telemetry-names';
import type { InstanceStart } from './function-instances';
import type { AnsweredRequest } from './server';

/*
 * The lines `npm start` prints of its own (docs/development.md, "Logs"). In a terminal, one line a
 * request, which stands for the function's request entry, and every other entry of the functions
 * on one line. Otherwise, and with --json-logs, the functions' entries as Powertools writes them,
 * and for each instance the Lambda mode starts, a line with its init's duration as Lambda's init
 * report gives it.
 */

/** The JSON object `text` holds; undefined when it holds no JSON, or JSON that is no object. */
const jsonObjectOf = (text: string): Record<string, unknown> | undefined => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
};

/** An error answer's `code`, or else its `reason` (an allocation refused names why), when its body is a JSON object that has one. */
const errorCodeOf = (body: string | undefined): string | undefined => {
  const { code, reason } = (body === undefined ? undefined : jsonObjectOf(body)) ?? {};
  if (typeof code === 'string') return code;
  return typeof reason === 'string' ? reason : undefined;
};

const milliseconds = (ms: number) => `${ms.toFixed(1)} ms`;

/** `POST /allocate 400 12.3 ms JKJaXmPLvHcESHA= out_of_stock`, and when the request started an instance, how long its init took. */
export const requestLine = ({ method, path, status, durationMs, requestId, body, startedInstance }: AnsweredRequest): string => {
  const code = status >= 400 ? errorCodeOf(body) : undefined;
  return [
    method,
    path,
    status,
    milliseconds(durationMs),
    requestId,
    ...(code === undefined ? [] : [code]),
    ...(startedInstance ? [`cold start of ${startedInstance.functionName}, init ${milliseconds(startedInstance.initDurationMs)}`] : []),
  ].join(' ');
};

/**
 * A function's log entry (`text`, as Powertools writes it) on one line; none for a request's entry,
 * which its request line says, but for one at ERROR or WARN (a fault, a 503), whose cause only the entry holds.
 * Text that is no entry is left as it is.
 */
export const functionEntryLine = (text: string): string | undefined => {
  const entry = jsonObjectOf(text);
  if (!entry) return text;
  if (entry.message === REQUEST_LOG_MESSAGE && entry.level !== 'ERROR' && entry.level !== 'WARN') return undefined;
  return JSON.stringify(entry);
};

/** The methods Powertools' Logger writes its entries through, in development mode (./log-output). */
const ENTRY_METHODS = ['debug', 'info', 'warn', 'error'] as const;

/**
 * From now on, the functions' log entries reach the output through `functionEntryLine`. In
 * development mode, which ./log-output sets for a terminal, Powertools' Logger writes each entry
 * through the global console, one call with the entry's text; a call with anything else is passed
 * on as it came.
 */
export const printFunctionEntriesOnOneLine = (): void => {
  for (const method of ENTRY_METHODS) {
    const write = console[method].bind(console);
    console[method] = (...args: unknown[]) => {
      const [text] = args;
      if (args.length !== 1 || typeof text !== 'string') return write(...args);
      const line = functionEntryLine(text);
      if (line !== undefined) write(line);
    };
  }
};

/**
 * Lambda's init report for an instance started (type `platform.initReport` in its JSON log format),
 * as one JSON line: the init's duration, which Lambda logs beside the function's own entries, the
 * first of which says `cold_start: true`.
 */
export const initReportLine = ({ functionName, initDurationMs }: InstanceStart, at: Date): string =>
  JSON.stringify({
    time: at.toISOString(),
    type: 'platform.initReport',
    record: { functionName, initializationType: 'on-demand', phase: 'init', status: 'success', metrics: { durationMs: Math.round(initDurationMs * 1000) / 1000 } },
  });

/** `a`, `a and b`, `a, b and c`. */
const listed = (items: readonly string[]): string => (items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`);

/**
 * The server's last line: what it closed as it stopped, and in the Lambda mode how many instances
 * of each function it had started.
 */
export const stoppedLine = (closed: readonly string[], instancesStarted: ReadonlyMap<string, number>): string => {
  const instances = [...instancesStarted].map(([functionName, count]) => `${functionName} ${count}`);
  const total = [...instancesStarted.values()].reduce((sum, count) => sum + count, 0);
  return (
    `allocation service stopped: closed ${closed.length === 0 ? 'nothing' : listed(closed)}` +
    (instances.length === 0 ? '' : `; it had started ${total} instance${total === 1 ? '' : 's'} (${instances.join(', ')})`)
  );
};
