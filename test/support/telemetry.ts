import { vi } from 'vitest';
import { REQUEST_LOG_MESSAGE } from '../../functions/telemetry-names';

/** A log entry as Powertools' Logger writes it: `level`, `message`, `timestamp`, `service`, then the entry's own fields. */
export type LogEntry = Readonly<Record<string, unknown>> & { readonly level: string; readonly message: string };

/** One embedded-metric-format entry, read back: its namespace, its one dimension set with values, and each metric's value. */
export interface PublishedMetrics {
  readonly namespace: string;
  readonly dimensions: Readonly<Record<string, unknown>>;
  readonly counts: Readonly<Record<string, unknown>>;
  /** Every unit the entry declares. */
  readonly units: readonly string[];
  /** The entry as written, to check what else it carries. */
  readonly raw: Readonly<Record<string, unknown>>;
}

interface EmbeddedMetricEntry {
  readonly _aws: {
    readonly CloudWatchMetrics: readonly {
      readonly Namespace: string;
      readonly Dimensions: readonly (readonly string[])[];
      readonly Metrics: readonly { readonly Name: string; readonly Unit: string }[];
    }[];
  };
  readonly [field: string]: unknown;
}

const readMetrics = (entry: EmbeddedMetricEntry): PublishedMetrics[] =>
  entry._aws.CloudWatchMetrics.flatMap(({ Namespace, Dimensions, Metrics }) =>
    Dimensions.map((names) => ({
      namespace: Namespace,
      dimensions: Object.fromEntries(names.map((name) => [name, entry[name]])),
      counts: Object.fromEntries(Metrics.map(({ Name }) => [Name, entry[Name]])),
      units: Metrics.map(({ Unit }) => Unit),
      raw: entry,
    })),
  );

const CONSOLE_METHODS = ['debug', 'info', 'warn', 'error', 'log'] as const;

/**
 * What the functions write while a test runs, read back and printed nowhere: their log entries and
 * their metrics. POWERTOOLS_DEV (vitest.config.ts) makes Powertools write each through the global
 * console, one call per entry; anything else written there is kept as text. Spies on the console
 * until `restore()` (or vitest's restoreAllMocks).
 */
export const captureTelemetry = () => {
  const entries: LogEntry[] = [];
  const metrics: PublishedMetrics[] = [];
  const other: string[] = [];
  const spies = CONSOLE_METHODS.map((method) =>
    vi.spyOn(console, method).mockImplementation((line: unknown) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(String(line));
      } catch {
        other.push(String(line));
        return;
      }
      if (typeof parsed === 'object' && parsed !== null && '_aws' in parsed) metrics.push(...readMetrics(parsed as EmbeddedMetricEntry));
      else entries.push(parsed as LogEntry);
    }),
  );
  return {
    entries,
    metrics,
    other,
    /** The one entry each request writes. */
    requests: () => entries.filter((entry) => entry.message === REQUEST_LOG_MESSAGE),
    clear: () => {
      entries.length = 0;
      metrics.length = 0;
      other.length = 0;
    },
    restore: () => {
      for (const spy of spies) spy.mockRestore();
    },
  };
};

export type CapturedTelemetry = ReturnType<typeof captureTelemetry>;

/** The functions' log entries and metrics go nowhere: for tests that send so many requests that a failure's report would drown in them. */
export const muteTelemetry = (): void => {
  for (const method of CONSOLE_METHODS) vi.spyOn(console, method).mockImplementation(() => undefined);
};
