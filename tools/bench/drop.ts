/**
 * A drop with carts: one SKU whose one batch has stock to spare, and buyers who each hold 1 to 3
 * units through checkout, then pay (confirm), give up (release) or walk away (the hold left to run
 * its 15 minutes), through `npm start -- --conflict-model` as the hot SKU's rounds run it
 * (./npm-start.ts). Unlike those rounds, each client retries a 503, or a request the network lost,
 * as the contract asks of a client (docs/reliability.md): what counts is what fails after its
 * retries. Afterwards the batch must account for every unit: its allocated units those of the holds
 * confirmed, its held units those of the holds still active, and `npm run check` must find nothing.
 * Run alone (`npx tsx tools/bench/drop.ts`, `-- --lambda` for the server's Lambda mode,
 * `--hold-ms N` and `--round-seconds N` to try other settings), it prints its figures as JSON.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { ConflictModelSettings } from '../../local/conflict-model';
import { type HttpAnswer, type JsonPoster, jsonPoster, runClosedLoop } from './load';
import { type ServerOverConflictModel, refusalsSince, withServerOverConflictModel } from './npm-start';
import { percentile } from './stats';

/**
 * Each write holds its items 500 ms, so that the conflict model binds and not this 2-core machine:
 * 16 times the single-item ceiling is then 32 holds a second, about 60 transactions a second with
 * the confirms and releases behind them. At 200 ms it is the machine that binds: 52 holds a second
 * in the default mode with only 217 conflicts in the round and a median answer of 580 ms, about 100
 * transactions a second and their reads, what DynamoDB Local, the server and the clients together
 * commit here. 1,000 write units a second per partition key is AWS's own limit.
 */
export const DROP_MODEL: ConflictModelSettings = { holdMs: 500, writeUnitsPerSecond: 1_000 };
/** Holds placed a second against the single-item ceiling, as the hot SKU's allocations are. */
export const DROP_TARGET_RATIO = 16;
/** Requests that still fail after their retries, out of all: a buyer who meets one sees an error. */
export const DROP_MAX_FAILED_SHARE = 0.005;
/** Long enough for the batch to spread and then be measured for most of the round; short enough for two rounds in the bench. */
export const DROP_ROUND_MS = 15_000;
const CLIENTS = 64;
/** Enough for the server's JIT to settle on the hold routes, on SKUs of their own so that no batch is hot yet. */
const WARM_UP_MS = 3_000;
const WARM_UP_SKUS = 64;
/** So that no hold is ever refused for want of stock. */
const STOCK = 1_000_000_000;
/** The API's default: no hold expires during the round, so every hold the clients leave is still held afterwards. */
const HOLD_SECONDS = 900;
/** A client's waits before each retry of a 503 or a lost request, each jittered by half either way. */
const RETRY_DELAYS_MS = [50, 100, 200] as const;
const CONFIRMED_SHARE = 0.7;
const RELEASED_SHARE = 0.2;
/** Holds read at once afterwards: as many as the clients. */
const READS_IN_FLIGHT = CLIENTS;
/** Enough of the holds whose status disagrees with the answers their client had to see what went wrong. */
const DISAGREEMENTS_SHOWN = 20;

type Action = 'place' | 'confirm' | 'release';
type HoldStatus = 'active' | 'confirmed' | 'released' | 'expired';

/** One kind of request: how many were sent (each counted once, whatever its retries), failed after their retries, and their latency. */
export interface ActionFigures {
  readonly requests: number;
  readonly failed: number;
  /** From the first attempt to the last answer, retries and their waits included, failed requests too: what a buyer waits. */
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** The batch as GET /batches/{ref} reads it afterwards, against what the holds read one by one say it must hold. */
export interface DropAfterwards {
  readonly batch: { readonly qty: number; readonly available: number; readonly allocated: number; readonly held: number };
  /** The units of the holds that read `confirmed`, and of those that read `active`. */
  readonly expected: { readonly qty: number; readonly allocated: number; readonly held: number };
  /** Holds whose status cannot follow from the answers their client had (a hold confirmed that reads active...): the first of them. */
  readonly disagreements: readonly string[];
  readonly disagreeing: number;
  /** qty = available + allocated + held, each as expected, and no hold disagrees. */
  readonly exact: boolean;
}

export interface DropMeasurement {
  readonly model: ConflictModelSettings;
  readonly clients: number;
  readonly roundSeconds: number;
  /** The round as it ran: past roundSeconds by the checkouts under way at its end. */
  readonly seconds: number;
  readonly retryDelaysMs: readonly number[];
  /** One item takes one transaction per hold: 1000 / holdMs holds a second at most, whatever the machine. */
  readonly singleItemCeilingPerSecond: number;
  /** Holds placed (201, or the 200 of a repeat after a lost answer) over the round's seconds. */
  readonly placedPerSecond: number;
  readonly ceilingRatio: number;
  readonly holds: { readonly placed: number; readonly confirmed: number; readonly released: number; readonly leftActive: number };
  /** Requests of every kind, each counted once whatever its retries, and the HTTP requests sent for them. */
  readonly requests: number;
  readonly attempts: number;
  readonly failed: number;
  readonly failedShare: number;
  /** 503s answered, retried or not, and requests the network lost (no answer at all). */
  readonly unavailable: number;
  readonly networkFailures: number;
  /** Requests the model refused for a conflict, or for throttling (the adapter's retries among them), during the round. */
  readonly conflicts: number;
  readonly throttles: number;
  readonly actions: Readonly<Record<Action, ActionFigures>>;
  /** Holds placed in each second of the round. */
  readonly timeline: readonly number[];
  readonly afterwards: DropAfterwards;
  /** What `npm run check` finds wrong with the table once the round is over: none when nothing is oversold or lost. */
  readonly violations: readonly string[];
  readonly target: { readonly ceilingRatio: number; readonly maxFailedShare: number; readonly met: boolean };
}

/** A cart as its client saw it: the hold's units, and each status the hold may read given the answers the client had. */
interface Cart {
  readonly holdid: string;
  readonly qty: number;
  /** `undefined`: no hold by this holdid, as when a place failed before writing anything. */
  readonly mayRead: readonly (HoldStatus | undefined)[];
}

/** Adds the batch as a client does: a 503 is sent again after its Retry-After (the first write to a new table, held by the model, can pass a call's 2 s). */
const addBatch = async (http: JsonPoster, sku: string) => {
  for (let attempt = 1; ; attempt++) {
    const answer = await http.post('/add_batch', { ref: batchRefOf(sku), sku, qty: STOCK, eta: null });
    if (answer.status === 201 || answer.status === 200) return;
    if (answer.status !== 503 || attempt === 5) throw new Error(`add_batch answered ${answer.status}: ${answer.body}`);
    await sleep(1_000);
  }
};

const batchRefOf = (sku: string) => `${sku}-stock`;

const jittered = (milliseconds: number) => milliseconds * (0.5 + Math.random());

/**
 * Carts, each placing a hold on the SKU `skuOf` names and then confirming, releasing or leaving
 * it, counted by answer. Every request is sent again after a 503 or a network failure, up to
 * RETRY_DELAYS_MS.length times; an answer neither a success nor a 503 is a fault of the bench or
 * of the service, and stops the round.
 */
const checkouts = (http: JsonPoster, skuOf: () => string) => {
  const counts = { placed: 0, confirmed: 0, released: 0, leftActive: 0, attempts: 0, unavailable: 0, networkFailures: 0 };
  const latenciesMs: Record<Action, number[]> = { place: [], confirm: [], release: [] };
  const failed: Record<Action, number> = { place: 0, confirm: 0, release: 0 };
  const carts: Cart[] = [];

  const withRetries = async (action: Action, send: () => Promise<HttpAnswer>, succeeded: readonly number[]): Promise<boolean> => {
    const startedAt = performance.now();
    const done = (success: boolean) => {
      latenciesMs[action].push(performance.now() - startedAt);
      if (!success) failed[action]++;
      return success;
    };
    for (let retry = 0; ; retry++) {
      counts.attempts++;
      const answer = await send().catch(() => undefined);
      if (answer === undefined) counts.networkFailures++;
      else if (succeeded.includes(answer.status)) return done(true);
      else if (answer.status === 503) counts.unavailable++;
      else throw new Error(`${action} answered ${answer.status}: ${answer.body}`);
      const delay = RETRY_DELAYS_MS[retry];
      if (delay === undefined) return done(false);
      await sleep(jittered(delay));
    }
  };

  const checkout = async () => {
    const holdid = `cart-${randomUUID()}`;
    const qty = 1 + Math.floor(Math.random() * 3);
    const body = { holdid, lines: [{ sku: skuOf(), qty }], ttl_seconds: HOLD_SECONDS };
    // A repeat (200) is the hold placed by an attempt whose answer was lost.
    if (!(await withRetries('place', () => http.post('/holds', body), [201, 200]))) {
      // Its last attempt may have written the hold all the same.
      carts.push({ holdid, qty, mayRead: [undefined, 'active'] });
      return;
    }
    counts.placed++;
    const choice = Math.random();
    if (choice < CONFIRMED_SHARE) {
      // One orderid for every attempt, so that a retry after a lost answer is a repeat (200).
      const confirm = { orderid: `order-${randomUUID()}` };
      const confirmed = await withRetries('confirm', () => http.post(`/holds/${holdid}/confirm`, confirm), [201, 200]);
      if (confirmed) counts.confirmed++;
      carts.push({ holdid, qty, mayRead: confirmed ? ['confirmed'] : ['active', 'confirmed'] });
    } else if (choice < CONFIRMED_SHARE + RELEASED_SHARE) {
      const released = await withRetries('release', () => http.send('DELETE', `/holds/${holdid}`), [204]);
      if (released) counts.released++;
      carts.push({ holdid, qty, mayRead: released ? ['released'] : ['active', 'released'] });
    } else {
      counts.leftActive++;
      carts.push({ holdid, qty, mayRead: ['active'] });
    }
  };
  return { counts, latenciesMs, failed, carts, checkout };
};

/** Runs `each` on every item, `inFlight` at a time. */
const inTurn = async <Item>(items: readonly Item[], inFlight: number, each: (item: Item) => Promise<void>) => {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await each(items[next++] as Item);
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
};

const readJson = async <Body>(http: JsonPoster, path: string): Promise<Body> => {
  const answer = await http.send('GET', path);
  if (answer.status !== 200) throw new Error(`GET ${path} answered ${answer.status}: ${answer.body}`);
  return JSON.parse(answer.body) as Body;
};

/**
 * Every cart's hold read back, and the batch: its units must be exactly those of the holds that
 * read confirmed (allocated) and active (held), and each hold's status one its client's answers
 * allow. Read once every client has had its last answer, so that nothing is in flight.
 */
const checkAfterwards = async (http: JsonPoster, ref: string, carts: readonly Cart[]): Promise<DropAfterwards> => {
  const expected = { qty: STOCK, allocated: 0, held: 0 };
  const disagreements: string[] = [];
  let disagreeing = 0;
  await inTurn(carts, READS_IN_FLIGHT, async ({ holdid, qty, mayRead }) => {
    const answer = await http.send('GET', `/holds/${holdid}`);
    if (answer.status !== 200 && answer.status !== 404) throw new Error(`GET /holds/${holdid} answered ${answer.status}: ${answer.body}`);
    const status = answer.status === 200 ? (JSON.parse(answer.body) as { status: HoldStatus }).status : undefined;
    if (status === 'confirmed') expected.allocated += qty;
    if (status === 'active') expected.held += qty;
    if (!mayRead.includes(status)) {
      disagreeing++;
      const allowed = mayRead.map((may) => may ?? 'not found').join(' or ');
      if (disagreements.length < DISAGREEMENTS_SHOWN) disagreements.push(`hold ${holdid} reads ${status ?? 'not found'}, its client's answers allow ${allowed}`);
    }
  });
  const { qty, available, allocated, held } = await readJson<DropAfterwards['batch']>(http, `/batches/${encodeURIComponent(ref)}`);
  const exact =
    qty === expected.qty && allocated === expected.allocated && held === expected.held && available + allocated + held === qty && disagreeing === 0;
  return { batch: { qty, available, allocated, held }, expected, disagreements, disagreeing, exact };
};

const figuresOf = (latenciesMs: readonly number[], failed: number): ActionFigures => ({
  requests: latenciesMs.length,
  failed,
  p50Ms: latenciesMs.length > 0 ? percentile(latenciesMs, 0.5) : Number.NaN,
  p99Ms: latenciesMs.length > 0 ? percentile(latenciesMs, 0.99) : Number.NaN,
});

const measureRound = async (http: JsonPoster, server: ServerOverConflictModel, sku: string, roundMs: number) => {
  const { counts, latenciesMs, failed, carts, checkout } = checkouts(http, () => sku);
  const before = await server.counters();
  const timeline: number[] = [];
  let countedBefore = 0;
  const everySecond = setInterval(() => {
    timeline.push(counts.placed - countedBefore);
    countedBefore = counts.placed;
  }, 1_000);
  const run = await runClosedLoop(checkout, CLIENTS, roundMs);
  clearInterval(everySecond);
  const refusals = refusalsSince(before, await server.counters());
  const actions = {
    place: figuresOf(latenciesMs.place, failed.place),
    confirm: figuresOf(latenciesMs.confirm, failed.confirm),
    release: figuresOf(latenciesMs.release, failed.release),
  };
  const requests = actions.place.requests + actions.confirm.requests + actions.release.requests;
  const failedInAll = failed.place + failed.confirm + failed.release;
  return {
    seconds: run.seconds,
    placedPerSecond: counts.placed / run.seconds,
    holds: { placed: counts.placed, confirmed: counts.confirmed, released: counts.released, leftActive: counts.leftActive },
    requests,
    attempts: counts.attempts,
    failed: failedInAll,
    failedShare: requests > 0 ? failedInAll / requests : 0,
    unavailable: counts.unavailable,
    networkFailures: counts.networkFailures,
    ...refusals,
    actions,
    timeline,
    carts,
  };
};

/**
 * `lambda`: the server runs each function as Lambda does (`npm start -- --lambda`), rather than
 * one instance serving many requests. `roundMs`: how long the clients check out.
 */
export const measureDrop = async (
  serverLog: string,
  settings: ConflictModelSettings = DROP_MODEL,
  { lambda = false, roundMs = DROP_ROUND_MS } = {},
): Promise<DropMeasurement> => {
  const { round, afterwards, violations } = await withServerOverConflictModel(serverLog, settings, { lambda, tablePrefix: 'bench-drop' }, async (server) => {
    const http = jsonPoster(server.port, CLIENTS);
    try {
      const run = randomUUID().slice(0, 8);
      const sku = `drop-${run}`;
      const warmUpSkus = Array.from({ length: WARM_UP_SKUS }, (_, index) => `warm-up-${run}-${index}`);
      await addBatch(http, sku);
      // At once: each is its own partition key, so none waits on another's hold.
      await Promise.all(warmUpSkus.map((warmUpSku) => addBatch(http, warmUpSku)));
      let next = 0;
      await runClosedLoop(checkouts(http, () => warmUpSkus[next++ % warmUpSkus.length] as string).checkout, CLIENTS, WARM_UP_MS);

      const { carts, ...round } = await measureRound(http, server, sku, roundMs);
      const afterwards = await checkAfterwards(http, batchRefOf(sku), carts);
      // Before the server stops, since its DynamoDB Local keeps the table in memory.
      return { round, afterwards, violations: await server.violations() };
    } finally {
      http.close();
    }
  });
  const singleItemCeilingPerSecond = 1000 / settings.holdMs;
  const ceilingRatio = round.placedPerSecond / singleItemCeilingPerSecond;
  const met = ceilingRatio >= DROP_TARGET_RATIO && round.failedShare < DROP_MAX_FAILED_SHARE && afterwards.exact && violations.length === 0;
  return {
    model: settings,
    clients: CLIENTS,
    roundSeconds: roundMs / 1000,
    retryDelaysMs: RETRY_DELAYS_MS,
    singleItemCeilingPerSecond,
    ...round,
    ceilingRatio,
    afterwards,
    violations,
    target: { ceilingRatio: DROP_TARGET_RATIO, maxFailedShare: DROP_MAX_FAILED_SHARE, met },
  };
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  // The child's path is the repository's, as when the bench runs it.
  process.chdir(fileURLToPath(new URL('../..', import.meta.url)));
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((arg) => arg !== '--'),
    options: { lambda: { type: 'boolean', default: false }, 'hold-ms': { type: 'string' }, 'round-seconds': { type: 'string' } },
  });
  const settings = { ...DROP_MODEL, ...(values['hold-ms'] ? { holdMs: Number(values['hold-ms']) } : {}) };
  const roundMs = values['round-seconds'] ? Number(values['round-seconds']) * 1000 : DROP_ROUND_MS;
  const log = `.local/bench/drop${values.lambda ? '-lambda' : ''}.log`;
  console.log(JSON.stringify(await measureDrop(log, settings, { lambda: values.lambda, roundMs }), null, 2));
}
