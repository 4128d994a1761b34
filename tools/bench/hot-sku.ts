/**
 * A flash sale on one SKU against ordinary traffic, as a flash-sale check drives it:
 * `npm start -- --conflict-model` (local/start.ts, as it runs: its own DynamoDB Local, in memory,
 * and the conflict model in its own process) with transactions holding their items 100 ms and 150
 * write units a second per partition key, and nothing else set. A closed loop of clients allocates
 * 1 unit at a time, first all from one batch of one SKU, then spread over many SKUs; each 503
 * counts as it comes (no client retry), and the model counts the conflicts and throttles behind
 * them. The server's log entries (a WARN for each 503) go to a file. Run alone
 * (`npx tsx tools/bench/hot-sku.ts`, `-- --lambda` for the server's Lambda mode, `--hold-ms N` for
 * another hold), it prints its
 * figures as JSON.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { ConflictCounters, ConflictModelSettings } from '../../local/conflict-model';
import { type JsonPoster, jsonPoster, runClosedLoop } from './load';
import { refusalsSince, withServerOverConflictModel } from './npm-start';
import { percentile } from './stats';

/** The model the figure is taken under: a transaction ten times as slow as on AWS, and 150 write units a second per partition key. */
export const HOT_SKU_MODEL: ConflictModelSettings = { holdMs: 100, writeUnitsPerSecond: 150 };
/**
 * As Lambda serves it, the same load at a longer hold: instances that neither group their takes nor
 * share what they remember commit about 90 allocations a second in all on this 2-CPU machine (the
 * ordinary SKUs, which meet on nothing, at 100 ms), about the hot SKU's rate, so at 100 ms the machine
 * binds, not the model. At 250 ms the ceiling is 4 a second and 16x of it 64, under what the machine
 * commits (docs/performance.md).
 */
export const HOT_SKU_LAMBDA_MODEL: ConflictModelSettings = { ...HOT_SKU_MODEL, holdMs: 250 };
/** The target: 16 times the single-item ceiling. */
export const HOT_SKU_TARGET_RATIO = 16;
const CLIENTS = 64;
const ORDINARY_SKUS = 64;
/** Long enough for the spread to come about (a second or two) and then be measured for most of the round. */
const ROUND_MS = 15_000;
/** Enough for the server's JIT and DynamoDB Local's to settle, on ordinary SKUs so that no batch is hot yet. */
const WARM_UP_MS = 5_000;
const STOCK = 1_000_000_000;

export interface SkuLoad {
  readonly seconds: number;
  /**
   * Allocations made a second: 201s, and the 200s of a line already allocated, which the service
   * answers when its transaction committed but the answer was lost (a store call past the client's
   * 2 s timeout on a loaded machine), as it would to the client's own retry.
   */
  readonly perSecond: number;
  readonly allocated: number;
  /** 503s answered, each counted as it came: the client did not retry it. */
  readonly unavailable: number;
  /** Requests the model refused for a conflict, or for throttling (the adapter's retries among them). */
  readonly conflicts: number;
  readonly throttles: number;
  /** Latency of every answer, 201 and 503 alike. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Allocations made in each second of the round: a hot SKU's first seconds are before its spread. */
  readonly timeline: readonly number[];
}

export interface HotSkuMeasurement {
  readonly model: ConflictModelSettings;
  readonly clients: number;
  readonly roundSeconds: number;
  /** One item takes one transaction per hold: 1000 / holdMs allocations a second at most, whatever the machine. */
  readonly singleItemCeilingPerSecond: number;
  readonly hot: SkuLoad & { readonly ceilingRatio: number };
  readonly ordinary: SkuLoad & { readonly skus: number };
  readonly target: { readonly ceilingRatio: number; readonly met: boolean };
  /** What `npm run check` finds wrong with the table once both rounds are over: 0 when nothing is oversold or lost. */
  readonly violations: readonly string[];
}

const addBatch = async (http: JsonPoster, sku: string) => {
  const answer = await http.post('/add_batch', { ref: `${sku}-stock`, sku, qty: STOCK, eta: null });
  if (answer.status !== 201 && answer.status !== 200) throw new Error(`add_batch answered ${answer.status}: ${answer.body}`);
};

/** Allocations of 1 from the SKU `skuOf` names for each, counted by answer. */
const allocations = (http: JsonPoster, skuOf: () => string) => {
  const counts = { allocated: 0, unavailable: 0 };
  const allocate = async () => {
    const answer = await http.post('/allocate', { orderid: `order-${randomUUID()}`, sku: skuOf(), qty: 1 });
    if (answer.status === 201 || answer.status === 200) counts.allocated++;
    else if (answer.status === 503) counts.unavailable++;
    else throw new Error(`allocate answered ${answer.status}: ${answer.body}`);
  };
  return { counts, allocate };
};

const measureLoad = async (http: JsonPoster, counters: () => Promise<ConflictCounters>, skuOf: () => string): Promise<SkuLoad> => {
  const { counts, allocate } = allocations(http, skuOf);
  const before = await counters();
  const timeline: number[] = [];
  let countedBefore = 0;
  const everySecond = setInterval(() => {
    timeline.push(counts.allocated - countedBefore);
    countedBefore = counts.allocated;
  }, 1_000);
  const run = await runClosedLoop(allocate, CLIENTS, ROUND_MS);
  clearInterval(everySecond);
  return {
    seconds: run.seconds,
    perSecond: counts.allocated / run.seconds,
    allocated: counts.allocated,
    unavailable: counts.unavailable,
    ...refusalsSince(before, await counters()),
    p50Ms: percentile(run.latenciesMs, 0.5),
    p99Ms: percentile(run.latenciesMs, 0.99),
    timeline,
  };
};

/**
 * `lambda`: the server runs each function as Lambda does (`npm start -- --lambda`: instances serving
 * one request at a time, with their own state), rather than one instance serving many requests.
 */
export const measureHotSku = async (serverLog: string, settings: ConflictModelSettings = HOT_SKU_MODEL, { lambda = false } = {}): Promise<HotSkuMeasurement> => {
  const { rounds, violations } = await withServerOverConflictModel(serverLog, settings, { lambda, tablePrefix: 'bench-hot-sku' }, async (server) => {
    const http = jsonPoster(server.port, CLIENTS);
    try {
      const run = randomUUID().slice(0, 8);
      const hotSku = `hot-${run}`;
      const ordinarySkus = Array.from({ length: ORDINARY_SKUS }, (_, index) => `ordinary-${run}-${index}`);
      for (const sku of [hotSku, ...ordinarySkus]) await addBatch(http, sku);
      let next = 0;
      const spread = () => ordinarySkus[next++ % ordinarySkus.length] as string;

      await runClosedLoop(allocations(http, spread).allocate, CLIENTS, WARM_UP_MS);
      const rounds = { hot: await measureLoad(http, server.counters, () => hotSku), ordinary: await measureLoad(http, server.counters, spread) };
      // Once both rounds are over, and before the server stops, since its DynamoDB Local keeps the table in memory.
      return { rounds, violations: await server.violations() };
    } finally {
      http.close();
    }
  });
  const { hot, ordinary } = rounds;
  const singleItemCeilingPerSecond = 1000 / settings.holdMs;
  const ceilingRatio = hot.perSecond / singleItemCeilingPerSecond;
  return {
    model: settings,
    clients: CLIENTS,
    roundSeconds: ROUND_MS / 1000,
    singleItemCeilingPerSecond,
    hot: { ...hot, ceilingRatio },
    ordinary: { ...ordinary, skus: ORDINARY_SKUS },
    target: { ceilingRatio: HOT_SKU_TARGET_RATIO, met: ceilingRatio >= HOT_SKU_TARGET_RATIO },
    violations,
  };
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  // The child's path is the repository's, as when the bench runs it.
  process.chdir(fileURLToPath(new URL('../..', import.meta.url)));
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((arg) => arg !== '--'),
    options: { lambda: { type: 'boolean', default: false }, 'hold-ms': { type: 'string' } },
  });
  const settings = { ...HOT_SKU_MODEL, ...(values['hold-ms'] ? { holdMs: Number(values['hold-ms']) } : {}) };
  console.log(JSON.stringify(await measureHotSku('.local/bench/hot-sku.log', settings, { lambda: values.lambda }), null, 2));
}
