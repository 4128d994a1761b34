/**
 * `npm run bench`: how close the service comes to its floors, on this machine, in a few minutes.
 * Builds the functions as they deploy, times the cold start of the handlers and of the hold sweeper
 * against the DynamoDB client's alone, times a warm invocation with the store stubbed, drives
 * allocations through the local server against the same DynamoDB Local as the store floor, counts
 * the store calls of each request (placing and confirming a hold among them), and times an
 * allocation's event from its 201 to its line on `npm start`'s output, drives one hot SKU and
 * ordinary ones through `npm start` over the conflict model, and then a drop with carts (holds
 * placed, confirmed, released) on one batch, each both ways the server runs its functions. Prints
 * a Markdown table and writes every figure to bench/results/. Loopback only.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createDocumentClient, createDynamoDbClient } from '../functions/store/client';
import { REQUEST_LOG_MESSAGE } from '../functions/telemetry-names';
import { type DynamoDbLocal, startDynamoDbLocal } from '../local/dynamodb-local';
import { ensureTable } from '../local/table';
import { serviceOverHttp, storeFloor } from './bench/allocators';
import { buildBundles } from './bench/bundles';
import { firstMessage, spawnTypeScript, stopChild } from './bench/child-process';
import { measureColdInit } from './bench/cold-init';
import { DROP_MODEL, measureDrop } from './bench/drop';
import { measureEventDelay } from './bench/event-delay';
import { measureEventThroughput } from './bench/event-throughput';
import type { HandlerMeasurements } from './bench/handler-measurements';
import { HOT_SKU_LAMBDA_MODEL, HOT_SKU_MODEL, measureHotSku } from './bench/hot-sku';
import { FEED_ROWS, LARGE_FEED_ROWS, measureImports } from './bench/imports';
import { SMALL_BATCHES_AT, measureSplitLinePlans } from './bench/split-line-plans';
import { jsonPoster, runClosedLoop } from './bench/load';
import { renderTable } from './bench/report';
import { type BenchResults, targetsOf } from './bench/targets';
import { median } from './bench/stats';
import { compareThroughput } from './bench/throughput';
import { runsWithoutOptions } from './command-line';

/** At least 15 for a median that one slow process does not move; each is one fresh process per bundle. */
const INIT_PROCESSES = 41;
const IN_FLIGHT = [1, 16] as const;
const ROUNDS = 6;
const ROUND_MS = 4_000;
/** Enough for DynamoDB Local's JIT and the server's to settle before anything is timed. */
const WARM_UP_MS = 4_000;
/** 35 recorded records a copy: 35,000 records, 15,000 events. */
const EVENT_RECORD_COPIES = 1_000;
/** One at a time, about a tenth of a second each. */
const EVENT_DELAY_ALLOCATIONS = 200;
/**
 * The whole run takes about sixteen minutes on this 2-CPU machine: about five before the drop, its
 * two rounds (about 30 s each), then the imports (about eight); past this, something hangs.
 */
const TIME_LIMIT_MS = 22 * 60_000;

const WORK_DIR = '.local/bench';
const RESULTS_DIR = 'bench/results';

const cleanups: (() => Promise<void>)[] = [];
const cleanUp = async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
};

const step = (what: string) => console.error(`bench: ${what}`);

/** The request entries among the lines of a log, which also holds metric entries and the server's own lines. */
const requestEntriesIn = (log: string): number =>
  log.split('\n').filter((line) => {
    try {
      return JSON.parse(line).message === REQUEST_LOG_MESSAGE;
    } catch {
      return false;
    }
  }).length;

const main = async (): Promise<void> => {
  const loadAtStart = loadavg()[0] ?? 0;
  // The paths below, and those of the child processes, are the repository's.
  process.chdir(fileURLToPath(new URL('..', import.meta.url)));
  mkdirSync(WORK_DIR, { recursive: true });

  step('building the bundles with infra/bundling.ts');
  const bundles = await buildBundles(`${WORK_DIR}/bundles`);
  const [allocationsBundle, batchesBundle] = bundles.handlers;
  if (!allocationsBundle || !batchesBundle) throw new Error('Expected the allocations and batches bundles');

  // Before DynamoDB Local starts, so that its JVM does not compete with the fresh processes.
  step(`cold init: ${INIT_PROCESSES} fresh processes per bundle, interleaved`);
  // The sweeper with the HTTP handlers: its module scope builds the same DynamoDB client and
  // repository, so the client alone is its floor too. The stream consumer talks to EventBridge.
  const initialized = [...bundles.handlers, bundles.sweeper, bundles.importWorker];
  const initCases = [
    { label: bundles.clientAlone.name, file: bundles.clientAlone.file },
    { label: bundles.clientAloneAliased.name, file: bundles.clientAloneAliased.file },
    ...initialized.map(({ name, file }) => ({ label: name, file })),
    ...initialized.map(({ name, file }) => ({ label: `${name} (source maps)`, file, nodeOptions: ['--enable-source-maps'] })),
  ];
  const initSamples = measureColdInit(initCases, INIT_PROCESSES);

  step('warm handler overhead (store stubbed) and store calls per request, on a batch carrying 10,000 active holds too, with a DynamoDB Local of their own');
  // Their 10,000 holds leave a DynamoDB Local slow enough that calls at 16 in flight pass 2 s: the
  // throughput below gets a fresh one.
  const measurementsStore = await startDynamoDbLocal();
  cleanups.push(() => measurementsStore.stop());
  const measurer = spawnTypeScript('tools/bench/handler-measurements.ts', { env: { DYNAMODB_ENDPOINT: measurementsStore.endpoint } });
  cleanups.push(() => stopChild(measurer));
  const handlerMeasurements = await firstMessage<HandlerMeasurements>(measurer);
  await cleanUp();

  step('starting DynamoDB Local (in memory)');
  const dynamoDbLocal: DynamoDbLocal = await startDynamoDbLocal();
  cleanups.push(() => dynamoDbLocal.stop());
  const storeEnvironment = { DYNAMODB_ENDPOINT: dynamoDbLocal.endpoint };

  step('allocations through the local server, beside the store floor');
  const adminClient = createDynamoDbClient(dynamoDbLocal.endpoint);
  const serviceTable = `bench-service-${randomUUID().slice(0, 8)}`;
  const floorTable = `bench-floor-${randomUUID().slice(0, 8)}`;
  await ensureTable(adminClient, serviceTable);
  await ensureTable(adminClient, floorTable);
  adminClient.destroy();

  const requestLog = `${WORK_DIR}/server.log`;
  const serverOutput = openSync(requestLog, 'w');
  const server = spawnTypeScript('tools/bench/serve-bundles.ts', {
    args: [allocationsBundle.file, batchesBundle.file],
    env: { ...storeEnvironment, TABLE_NAME: serviceTable },
    // The log entries and metrics go to a file, as a log agent would take them, both streams
    // together: a 5xx's entry is written to stderr.
    stdout: serverOutput,
    stderr: serverOutput,
  });
  cleanups.push(() => stopChild(server));
  const { port } = await firstMessage<{ port: number }>(server);
  const http = jsonPoster(port, Math.max(...IN_FLIGHT));
  const floorClient = createDocumentClient(dynamoDbLocal.endpoint);
  cleanups.push(async () => {
    http.close();
    floorClient.destroy();
  });
  const allocators = { floor: await storeFloor(floorClient, floorTable), service: await serviceOverHttp(http) };

  await runClosedLoop(allocators.floor, Math.max(...IN_FLIGHT), WARM_UP_MS);
  await runClosedLoop(allocators.service, Math.max(...IN_FLIGHT), WARM_UP_MS);
  const throughput = [];
  for (const inFlight of IN_FLIGHT) {
    step(`  ${inFlight} in flight: ${ROUNDS} rounds of ${ROUND_MS / 1000} s each side`);
    throughput.push(await compareThroughput(allocators, { inFlight, rounds: ROUNDS, roundMs: ROUND_MS }));
  }
  const httpRequests = http.answered();

  step(`end-to-end event delay: ${EVENT_DELAY_ALLOCATIONS} allocations through npm start, one at a time`);
  const eventDelay = await measureEventDelay(dynamoDbLocal.endpoint, EVENT_DELAY_ALLOCATIONS);

  step(
    `one hot SKU, then ordinary ones, through npm start -- --conflict-model (transactions held ${HOT_SKU_MODEL.holdMs} ms, ${HOT_SKU_MODEL.writeUnitsPerSecond} write units/s per partition key), with its own DynamoDB Local`,
  );
  // The steps before leave their DynamoDB Local many times slower for this load (docs/performance.md).
  await cleanUp();
  const hotSku = await measureHotSku(`${WORK_DIR}/hot-sku-server.log`);
  step(`the same, through npm start -- --conflict-model --lambda: each function as Lambda runs it (transactions held ${HOT_SKU_LAMBDA_MODEL.holdMs} ms)`);
  await cleanUp();
  const hotSkuAsLambda = await measureHotSku(`${WORK_DIR}/hot-sku-lambda-server.log`, HOT_SKU_LAMBDA_MODEL, { lambda: true });

  step(
    `a drop with carts on one batch, through npm start -- --conflict-model (transactions held ${DROP_MODEL.holdMs} ms, ${DROP_MODEL.writeUnitsPerSecond} write units/s per partition key), then the same with --lambda`,
  );
  const drop = await measureDrop(`${WORK_DIR}/drop-server.log`);
  const dropAsLambda = await measureDrop(`${WORK_DIR}/drop-lambda-server.log`, DROP_MODEL, { lambda: true });

  step(`imports: ${FEED_ROWS.toLocaleString('en')} rows against the floor, the same file again, and the worker's peak RSS over ${LARGE_FEED_ROWS.toLocaleString('en')} rows`);
  const imports = await measureImports(WORK_DIR, step);

  step(`a line split over 40 places, planned alone and in an order, beside ${SMALL_BATCHES_AT.join(' and ')} small batches at each place`);
  const splitLinePlans = measureSplitLinePlans();

  step(`stream consumer: events from ${EVENT_RECORD_COPIES} copies of the recorded stream records`);
  const eventThroughput = await measureEventThroughput(EVENT_RECORD_COPIES);

  const results: BenchResults = {
    date: new Date().toISOString(),
    command: 'npm run bench',
    machine: { node: process.version, cpus: cpus().length, loadAverage: { atStart: loadAtStart, atEnd: loadavg()[0] ?? 0 } },
    bundles: [...bundles.handlers, bundles.consumer, bundles.sweeper, bundles.importWorker, bundles.clientAlone, bundles.clientAloneAliased].map(({ name, bytes }) => ({
      name,
      bytes,
    })),
    coldInit: {
      processes: INIT_PROCESSES,
      medianMs: Object.fromEntries([...initSamples].map(([label, samples]) => [label, median(samples)])),
      samplesMs: Object.fromEntries(initSamples),
    },
    warmOverhead: handlerMeasurements.warmOverhead,
    throughput: { rounds: ROUNDS, roundSeconds: ROUND_MS / 1000, comparisons: throughput },
    requestLog: { httpRequests, lines: requestEntriesIn(readFileSync(requestLog, 'utf8')) },
    requestCost: handlerMeasurements.requestCost,
    readUnitsByHistory: handlerMeasurements.readUnitsByHistory,
    patchMovingLines: handlerMeasurements.patchMovingLines,
    orders: handlerMeasurements.orders,
    splitLinePlans,
    holds: handlerMeasurements.holds,
    allocateUnderHolds: handlerMeasurements.allocateUnderHolds,
    underActiveHolds: handlerMeasurements.underActiveHolds,
    eventDelay,
    eventThroughput,
    hotSku,
    hotSkuAsLambda,
    drop,
    dropAsLambda,
    imports,
  };
  const targets = targetsOf(results);

  mkdirSync(RESULTS_DIR, { recursive: true });
  const resultsFile = `${RESULTS_DIR}/bench-${results.date.replaceAll(':', '-')}.json`;
  writeFileSync(resultsFile, `${JSON.stringify({ ...results, targets }, null, 2)}\n`);
  console.log(renderTable(results, targets));
  console.log(`\nFigures written to ${resultsFile}`);
  if (targets.some((target) => !target.met)) process.exitCode = 1;
};

if (runsWithoutOptions('usage: npm run bench\n\nMeasures the service against its floors on this machine (about sixteen minutes), prints a Markdown table\nand writes every figure to bench/results/; docs/performance.md says what each figure is. Takes no option.')) {
  const timeLimit = setTimeout(() => {
    console.error(`bench: still running after ${TIME_LIMIT_MS / 60_000} minutes; stopping`);
    void cleanUp().finally(() => process.exit(2));
  }, TIME_LIMIT_MS);
  timeLimit.unref();

  process.once('SIGINT', () => void cleanUp().finally(() => process.exit(130)));

  main()
    .catch(async (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    })
    .finally(async () => {
      await cleanUp();
      clearTimeout(timeLimit);
    });
}
