/*
 * What `npm run bench` measures, as one run's results hold it, and the targets they are held to
 * (docs/performance.md): each bound, and whether a run met it. ./report.ts renders them.
 */
import { CLIENT_ALONE, IMPORT_WORKER, SWEEPER } from './bundles';
import { FEED_ROWS, type ImportMeasurement, LARGE_FEED_ROWS, MAX_RSS_GROWTH, MIN_REPEAT_SPEEDUP } from './imports';
import type { EventDelay } from './event-delay';
import type { EventThroughput } from './event-throughput';
import type { HandlerMeasurements } from './handler-measurements';
import { DROP_MAX_FAILED_SHARE, DROP_TARGET_RATIO, type DropMeasurement } from './drop';
import type { CostUnderActiveHolds, HoldCost } from './hold-cost';
import { HOT_SKU_TARGET_RATIO, type HotSkuMeasurement } from './hot-sku';
import type { StoreCall } from './request-cost';
import type { SplitLinePlan } from './split-line-plans';
import type { ThroughputComparison } from './throughput';


export interface BenchResults {
  readonly date: string;
  readonly command: string;
  readonly machine: {
    readonly node: string;
    readonly cpus: number;
    /** One-minute load averages: above the CPU count, other work shared the machine with the run. */
    readonly loadAverage: { readonly atStart: number; readonly atEnd: number };
  };
  readonly bundles: readonly { readonly name: string; readonly bytes: number }[];
  readonly coldInit: {
    readonly processes: number;
    readonly medianMs: Readonly<Record<string, number>>;
    /** Every process's import time, in the order they ran, to see how noisy the run was. */
    readonly samplesMs: Readonly<Record<string, readonly number[]>>;
  };
  readonly warmOverhead: HandlerMeasurements['warmOverhead'];
  readonly throughput: { readonly rounds: number; readonly roundSeconds: number; readonly comparisons: readonly ThroughputComparison[] };
  readonly requestCost: HandlerMeasurements['requestCost'];
  readonly readUnitsByHistory: HandlerMeasurements['readUnitsByHistory'];
  readonly patchMovingLines: HandlerMeasurements['patchMovingLines'];
  readonly orders: HandlerMeasurements['orders'];
  readonly splitLinePlans: readonly SplitLinePlan[];
  readonly holds: HandlerMeasurements['holds'];
  readonly allocateUnderHolds: HandlerMeasurements['allocateUnderHolds'];
  /** A batch with no hold first, then one with many active holds. */
  readonly underActiveHolds: HandlerMeasurements['underActiveHolds'];
  /** The server's request log against the requests it answered: the log stays on the measured path. */
  readonly requestLog: { readonly httpRequests: number; readonly lines: number };
  readonly eventDelay: EventDelay;
  readonly eventThroughput: EventThroughput;
  readonly hotSku: HotSkuMeasurement;
  /** The same, the server running each function as Lambda does (`npm start -- --lambda`), at its own hold (HOT_SKU_LAMBDA_MODEL). */
  readonly hotSkuAsLambda: HotSkuMeasurement;
  readonly drop: DropMeasurement;
  /** The same, the server running each function as Lambda does: held to the same target. */
  readonly dropAsLambda: DropMeasurement;
  readonly imports: ImportMeasurement;
}

export interface Target {
  readonly name: string;
  readonly met: boolean;
}

/** The limits every change keeps (docs/performance.md). */
export const MAX_BUNDLE_BYTES = 400 * 1024;
export const MAX_INIT_RATIO = 1.15;
export const MIN_THROUGHPUT_RATIO_AT_16 = 0.85;
export const MAX_P99_RATIO_AT_16 = 1.25;
/** The target: an allocation's event shows within 2 seconds (docs/performance.md). */
export const MAX_EVENT_DELAY_MS = 2_000;

export const HANDLERS = ['allocations', 'batches'] as const;
/**
 * The functions held to the init target: those whose module scope builds the DynamoDB client, the
 * HTTP handlers, the hold sweeper and the import worker, which no request waits on but which start cold like them.
 */
export const INITIALIZED = [...HANDLERS, SWEEPER, IMPORT_WORKER] as const;
/** Every bundle the stack deploys: the handlers, the stream consumer, the hold sweeper and the import worker. */
export const FUNCTIONS = [...HANDLERS, 'publish-events', SWEEPER, IMPORT_WORKER] as const;

export const bytesOf = (results: BenchResults, name: string): number => results.bundles.find((bundle) => bundle.name === name)?.bytes ?? Number.NaN;
export const initOf = (results: BenchResults, label: string): number => results.coldInit.medianMs[label] ?? Number.NaN;
/** Against the floor of the target: the client as the SDK ships it, or, for information, with the handlers' alias too. */
export const initRatioOf = (results: BenchResults, handler: string, floor = CLIENT_ALONE) => initOf(results, handler) / initOf(results, floor);
export const at16 = (results: BenchResults) => results.throughput.comparisons.find(({ inFlight }) => inFlight === 16);
export const isFlat = (figures: HandlerMeasurements['readUnitsByHistory']) =>
  figures.length > 0 && figures.every(({ readUnits }) => readUnits !== undefined && readUnits === figures[0]?.readUnits);
export const operationsOf = (calls: readonly StoreCall[]) => calls.map(({ operation }) => operation).join(' + ');
/** The calls the docs promise for a hold of `lines` lines (docs/api.md, "Holds", Cost): one read round and one transaction. */
export const expectedHoldCalls = ({ action, lines }: Pick<HoldCost, 'action' | 'lines'>): Record<string, number> =>
  action === 'place' ? { GetItem: 1, Query: lines, TransactWriteItems: 1 } : { GetItem: 1, TransactWriteItems: 1 };
/** Reads before writes, whatever order the calls of one read round, sent at once, came back in. */
export const OPERATION_ORDER = ['GetItem', 'BatchGetItem', 'Query', 'TransactWriteItems'];
export const operationRank = (operation: string) => {
  const rank = OPERATION_ORDER.indexOf(operation);
  return rank === -1 ? OPERATION_ORDER.length : rank;
};
export const countsText = (calls: Readonly<Record<string, number>>) =>
  Object.entries(calls)
    .sort(([a], [b]) => operationRank(a) - operationRank(b))
    .map(([operation, count]) => `${count} ${operation}`)
    .join(' + ');
export const sameCounts = (a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([operation, count]) => b[operation] === count);
export const linesText = (lines: number) => `${lines} line${lines === 1 ? '' : 's'}`;
export const countText = (count: number) => count.toLocaleString('en-US');
/** The batch without holds, and the one with the most of them. */
export const noneAndMost = (results: BenchResults) => ({ none: results.underActiveHolds[0], most: results.underActiveHolds.at(-1) });
export type UnderHoldsCost = CostUnderActiveHolds['costs'][number];
export const sameCost = (a: UnderHoldsCost, b: UnderHoldsCost | undefined) =>
  b !== undefined && sameCounts(a.calls, b.calls) && a.readUnits === b.readUnits && a.writeUnits === b.writeUnits;
/** Measured on both batches, and every action costs the one with the most holds what it costs the one without. */
export const flatUnderHolds = (results: BenchResults) => {
  const { none, most } = noneAndMost(results);
  if (!none || !most || most.costs.length === 0) return false;
  return most.costs.every((cost) => sameCost(cost, none.costs.find(({ action }) => action === cost.action)));
};
/** The drop's modes as the target and rows name them. */
export const DROP_MODES = [
  { key: 'drop', label: '' },
  { key: 'dropAsLambda', label: ' as Lambda serves it' },
] as const;

/** Each target's name, as the JSON results and the table show it. */
export const TARGET = {
  bundleSize: (handler: string) => `${handler} bundle <= 400 KB`,
  initRatio: (handler: string) => `${handler} init <= ${MAX_INIT_RATIO}x client alone`,
  throughputRatio: `throughput at 16 in flight >= ${MIN_THROUGHPUT_RATIO_AT_16}x floor`,
  p99Ratio: `p99 at 16 in flight <= ${MAX_P99_RATIO_AT_16}x floor`,
  allocateCalls: 'allocate = 1 Query + 1 TransactWriteItems',
  splitAllocateCalls: 'allocate split over batches at two locations = 1 Query + 1 TransactWriteItems',
  routedAllocateCost: 'allocate routed among locations = the same calls and units as one that is not',
  addBatchCalls: 'add_batch = 1 TransactWriteItems',
  allocateUnderHoldsCalls: 'allocate on a batch with holds, expired ones among them = 1 Query + 1 TransactWriteItems',
  holdCalls: (cost: Pick<HoldCost, 'action' | 'lines'>) => `${cost.action} a hold of ${linesText(cost.lines)} = ${countsText(expectedHoldCalls(cost))}`,
  requestLog: 'one request-log line per request',
  flatReadCost: 'allocate reads the same units whatever the SKU history',
  eventDelay: `p99 event delay <= ${MAX_EVENT_DELAY_MS / 1000} s`,
  hotSkuExact: 'nothing oversold or lost by the hot and ordinary SKUs, in both modes (npm run check finds nothing)',
  importRepeat: `the same ${FEED_ROWS.toLocaleString('en-US')}-row file again, every row unchanged, >= ${MIN_REPEAT_SPEEDUP}x faster than its first import`,
  importMemory: `import worker's peak RSS over ${LARGE_FEED_ROWS.toLocaleString('en-US')} rows <= ${MAX_RSS_GROWTH}x over ${FEED_ROWS.toLocaleString('en-US')}`,
  hotSkuRatio: `one hot SKU >= ${HOT_SKU_TARGET_RATIO}x the single-item ceiling`,
  hotSkuAsLambdaRatio: `one hot SKU as Lambda serves it >= ${HOT_SKU_TARGET_RATIO}x the single-item ceiling`,
  underActiveHolds: (activeHolds: number) =>
    `with ${countText(activeHolds)} active holds, place/confirm/release/allocate cost the same calls and units as with none (time within noise)`,
  drop: (label: string) =>
    `drop with carts${label}: holds placed/s >= ${DROP_TARGET_RATIO}x the single-item ceiling, < ${DROP_MAX_FAILED_SHARE * 100}% of requests failed after retries, exact afterwards, no violations`,
};

export const targetsOf = (results: BenchResults): Target[] => {
  const comparisonAt16 = at16(results);
  return [
    ...FUNCTIONS.map((name) => ({ name: TARGET.bundleSize(name), met: bytesOf(results, name) <= MAX_BUNDLE_BYTES })),
    ...INITIALIZED.map((handler) => ({ name: TARGET.initRatio(handler), met: initRatioOf(results, handler) <= MAX_INIT_RATIO })),
    { name: TARGET.throughputRatio, met: (comparisonAt16?.throughputRatio ?? 0) >= MIN_THROUGHPUT_RATIO_AT_16 },
    { name: TARGET.p99Ratio, met: (comparisonAt16?.p99Ratio ?? Number.POSITIVE_INFINITY) <= MAX_P99_RATIO_AT_16 },
    { name: TARGET.allocateCalls, met: operationsOf(results.requestCost.allocate) === 'Query + TransactWriteItems' },
    { name: TARGET.splitAllocateCalls, met: operationsOf(results.requestCost.splitAllocate) === 'Query + TransactWriteItems' },
    { name: TARGET.addBatchCalls, met: operationsOf(results.requestCost.addBatch) === 'TransactWriteItems' },
    { name: TARGET.routedAllocateCost, met: callsWithCapacity(results.requestCost.routedAllocate) === callsWithCapacity(results.requestCost.allocate) },
    { name: TARGET.allocateUnderHoldsCalls, met: operationsOf(results.allocateUnderHolds.calls) === 'Query + TransactWriteItems' },
    ...results.holds.map((cost) => ({ name: TARGET.holdCalls(cost), met: sameCounts(cost.calls, expectedHoldCalls(cost)) })),
    { name: TARGET.requestLog, met: results.requestLog.lines === results.requestLog.httpRequests },
    { name: TARGET.flatReadCost, met: isFlat(results.readUnitsByHistory) },
    { name: TARGET.eventDelay, met: results.eventDelay.p99Ms <= MAX_EVENT_DELAY_MS },
    { name: TARGET.hotSkuExact, met: results.hotSku.violations.length === 0 && results.hotSkuAsLambda.violations.length === 0 },
    { name: TARGET.hotSkuRatio, met: results.hotSku.target.met },
    { name: TARGET.hotSkuAsLambdaRatio, met: results.hotSkuAsLambda.target.met },
    { name: TARGET.underActiveHolds(noneAndMost(results).most?.activeHolds ?? 0), met: flatUnderHolds(results) },
    ...DROP_MODES.map(({ key, label }) => ({ name: TARGET.drop(label), met: results[key].target.met })),
    { name: TARGET.importRepeat, met: results.imports.ratios.repeatSpeedup >= MIN_REPEAT_SPEEDUP },
    { name: TARGET.importMemory, met: results.imports.ratios.rssGrowth <= MAX_RSS_GROWTH },
  ];
};

/** Each call with the capacity DynamoDB Local reported for it. */
export const callsWithCapacity = (calls: readonly StoreCall[]) =>
  calls.map(({ operation, capacityUnits }) => `${operation} (${capacityUnits ?? '?'} CU)`).join(' + ');
