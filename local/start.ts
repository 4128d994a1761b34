/**
 * `npm start`: the API on http://localhost:5005 (PORT overrides) over DynamoDB Local, or over the
 * DynamoDB at DYNAMODB_ENDPOINT when that is set. DynamoDB Local keeps its data in memory, for as
 * long as the server runs; `--keep-data` keeps it in .local/dynamodb between runs instead, where each
 * write is committed to disk: about half the writes a second (docs/development.md).
 * `--conflict-model` puts the conflict model (./conflict-model.ts, settings CONFLICT_HOLD_MS and
 * CONFLICT_WRITE_UNITS) in front of that DynamoDB, so that conflicts and throttling happen as on AWS.
 * `--lambda` runs each function as Lambda does (./function-instances.ts: instances serving one
 * request at a time, each with its own client, repository and cold start); by default one instance
 * serves many at once. Each event the table's changes make is printed as one JSON line, and
 * `--events-file PATH` appends it to that file as well. In a terminal each request is printed on one
 * line, and the functions' other log entries each on one line too; otherwise, or with
 * `--json-logs`, their entries are printed as Powertools writes them, indented in a terminal, one
 * JSON line each otherwise, with Lambda's init report for each instance `--lambda` starts
 * (./log-output, ./log-lines). SIGINT or SIGTERM stops the server and its DynamoDB Local, and a last
 * line says what was closed; `npm start` runs this file with `exec`, so that npm hands either signal
 * to this process and not to a shell that would end without passing it on. DynamoDB Local never
 * outlives this process, however it ends (./dynamodb-local.ts). Any other option is refused with the
 * usage, exit code 2.
 */
// First: it decides how the functions' loggers print, before any of them is built.
import './log-output';
import { mkdirSync, mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { StoreUnavailable } from '../domain/errors';
import type { DomainEvent } from '../domain/events';
import { openApiDocumentFile } from '../functions/http/openapi-document';
import { routeKeys } from '../functions/http/route-keys';
import { createDocumentClient, createDynamoDbClient, reachInProcess } from '../functions/store/client';
import { isStoreUnavailable } from '../functions/store/store-errors';
import { tableNameFromEnv } from '../functions/store/table';
import { type ConflictModel, type ConflictModelSettings, defaultConflictModelSettings, startConflictModel } from './conflict-model';
import { type DynamoDbLocal, JavaUnavailable, startDynamoDbLocal } from './dynamodb-local';
import { forgetStoreEndpoint, recordStoreEndpoint } from './store-endpoint';
import { type EventOutput, eventPrinter } from './event-lines';
import { type EventStream, followTableEvents } from './event-stream';
import { initReportLine, printFunctionEntriesOnOneLine, requestLine, stoppedLine } from './log-lines';
import { type LambdaHttpHandler, type ServerLog, createLocalServer, errorResult } from './server';
import { ensureTable } from './table';
import { runFileImport } from './import-runs';
import { localUploads } from './uploads';

const DEFAULT_PORT = 5005;
const DATA_DIR = '.local/dynamodb';
/** With --keep-data, the files of imports, beside the table's data. */
const UPLOADS_DIR = '.local/uploads';

const keptDirectory = (path: string): string => {
  mkdirSync(path, { recursive: true });
  return path;
};
const MAX_TABLE_RETRY_DELAY_MS = 5_000;
/** The hold sweeper's period here: an expired hold's HoldReleased shows within a second or two (on AWS, a minute). */
const SWEEP_INTERVAL_MS = 1_000;

class UsageError extends Error {}
/** An option this command does not take, or one without its value: answered with the usage, exit code 2. */
class OptionError extends Error {}

const USAGE = `Usage: npm start -- [options]

Serves the API on http://localhost:5005 (PORT sets another port) over DynamoDB Local, or over the
DynamoDB at DYNAMODB_ENDPOINT, and prints each domain event as a JSON line; in a terminal, each
event and each request on one short line instead. Ctrl-C (SIGINT) or SIGTERM, sent to npm or to the server, stops the server
and its DynamoDB Local.

Options:
  --in-memory          DynamoDB Local keeps its data in memory while the server runs (the default)
  --keep-data          DynamoDB Local keeps its data in ${DATA_DIR}/ between runs
  --events-file PATH   also append each event to PATH, one JSON line each
  --conflict-model     put the conflict model in front of the store (CONFLICT_HOLD_MS, CONFLICT_WRITE_UNITS)
  --lambda             run each function as Lambda does: instances that serve one request at a time,
                       each with module state of its own, started as requests overlap (up to 64 a
                       function); by default one instance serves many requests at once, as a container
  --json-logs          in a terminal too, print the functions' log entries whole, as Powertools writes
                       them (indented), rather than one line per request, and each event whole
  --no-events          print no event (--events-file still appends them)
  -h, --help           print this and exit

Settings (PORT, DYNAMODB_ENDPOINT, TABLE_NAME, ...): docs/development.md#configuration
`;

interface StartOptions {
  readonly keepData: boolean;
  readonly eventsFile: string | undefined;
  readonly conflictModel: boolean;
  readonly lambda: boolean;
  readonly jsonLogs: boolean;
  readonly noEvents: boolean;
  readonly help: boolean;
}

const optionsFromArgs = (args: readonly string[]): StartOptions => {
  let keepData = false;
  let eventsFile: string | undefined;
  let conflictModel = false;
  let lambda = false;
  let jsonLogs = false;
  let noEvents = false;
  let help = false;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] ?? '';
    switch (arg) {
      case '--keep-data':
        keepData = true;
        break;
      // The default since; still accepted, as scripts written for the earlier default pass it.
      case '--in-memory':
        break;
      case '--events-file':
        eventsFile = args[++index];
        if (eventsFile === undefined || eventsFile.startsWith('--')) {
          throw new OptionError('--events-file needs a path, as in: npm start -- --events-file events.jsonl');
        }
        break;
      case '--conflict-model':
        conflictModel = true;
        break;
      case '--lambda':
        lambda = true;
        break;
      case '--json-logs':
        jsonLogs = true;
        break;
      case '--no-events':
        noEvents = true;
        break;
      case '-h':
      case '--help':
        help = true;
        break;
      default:
        throw new OptionError(arg.startsWith('-') ? `Unknown option ${arg}` : `Unexpected argument ${arg}`);
    }
  }
  return { keepData, eventsFile, conflictModel, lambda, jsonLogs, noEvents, help };
};

const portFromEnv = (): number => {
  const port = Number(process.env.PORT ?? DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError(`PORT must be a port number, not ${process.env.PORT}`);
  return port;
};

const numberFromEnv = (name: string, fallback: number, isValid: (value: number) => boolean, expected: string): number => {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!isValid(value)) throw new UsageError(`${name} must be ${expected}, not ${text}`);
  return value;
};

const conflictModelSettingsFromEnv = (): ConflictModelSettings => ({
  holdMs: numberFromEnv('CONFLICT_HOLD_MS', defaultConflictModelSettings.holdMs, (ms) => Number.isInteger(ms) && ms >= 0, 'a whole number of milliseconds'),
  writeUnitsPerSecond: numberFromEnv('CONFLICT_WRITE_UNITS', defaultConflictModelSettings.writeUnitsPerSecond, (units) => units > 0, 'a number of write units above 0'),
});

/**
 * Creates the table when it is missing, then runs `onTable` (which follows its stream). A store that
 * is down is waited for in the background, and `isReady` says when both are done; any other
 * failure, such as credentials a real AWS endpoint refuses, goes to `onFailure`.
 */
const prepareTable = async (
  tableName: string,
  onTable: () => Promise<void>,
  onFailure: (error: unknown) => void,
): Promise<{ isReady(): boolean }> => {
  const client = createDynamoDbClient();
  let ready = false;
  const attempt = async () => {
    try {
      await ensureTable(client, tableName);
      await onTable();
      client.destroy();
      ready = true;
    } catch (error) {
      if (!isStoreUnavailable(error)) {
        client.destroy();
        throw error;
      }
    }
  };
  await attempt();
  if (!ready) {
    console.log(`DynamoDB at ${process.env.DYNAMODB_ENDPOINT} does not answer; the API answers 503 until it does.`);
    const retry = async (delayMs: number): Promise<void> => {
      await sleep(delayMs);
      await attempt();
      if (ready) console.log(`DynamoDB answers now; table ${tableName} is ready.`);
      else await retry(Math.min(MAX_TABLE_RETRY_DELAY_MS, delayMs * 2));
    };
    retry(250).catch(onFailure);
  }
  return { isReady: () => ready };
};

/** Until the table exists, a request would only meet "table not found": answer what a client can act on. */
const whenReady =
  (table: { isReady(): boolean }, handler: LambdaHttpHandler): LambdaHttpHandler =>
  (event, context) => {
    if (table.isReady()) return handler(event, context);
    return Promise.resolve(errorResult(new StoreUnavailable('The table is not ready'), event.requestContext.requestId));
  };

/**
 * Follows the table's stream from now on, handing each event to `onEvent`. The API serves without
 * its events when the stream cannot be read (a DYNAMODB_ENDPOINT with no Streams API beside it).
 * The stream is read from the store itself, not through the conflict model, which passes streams
 * through unmodelled: its copy of every page of records would only cost the server CPU.
 */
const followEvents = async (tableName: string, endpoint: string | undefined, onEvent: (event: DomainEvent) => void): Promise<EventStream | undefined> => {
  try {
    return await followTableEvents({ tableName, endpoint, onEvent });
  } catch (error) {
    if (isStoreUnavailable(error)) throw error;
    console.error(`Events are not shown: cannot read the stream of table ${tableName}:`, error instanceof Error ? error.message : error);
    return undefined;
  }
};

/**
 * Runs `task` every `intervalMs`, never two at once, as the schedule runs the sweeper on AWS; a
 * failure is printed, and the next run tries again.
 */
const runEvery = (intervalMs: number, task: () => Promise<void>): NodeJS.Timeout => {
  let running = false;
  return setInterval(() => {
    if (running) return;
    running = true;
    task()
      .catch((error: unknown) => console.error('Hold sweep failed:', error instanceof Error ? error.message : error))
      .finally(() => {
        running = false;
      });
  }, intervalMs);
};

const main = async () => {
  const { keepData, eventsFile, conflictModel: withConflictModel, lambda, jsonLogs, noEvents, help } = optionsFromArgs(process.argv.slice(2));
  if (help) {
    process.stdout.write(USAGE);
    return;
  }
  const port = portFromEnv();
  const conflictSettings = withConflictModel ? conflictModelSettingsFromEnv() : undefined;
  const inTerminal = process.stdout.isTTY === true && !jsonLogs;
  const eventOutput: EventOutput = noEvents ? 'none' : inTerminal ? 'line' : 'json';
  const printEvent = eventPrinter(eventOutput, eventsFile, (message) => new UsageError(message));
  let dynamoDbLocal: DynamoDbLocal | undefined;
  let conflictModel: ConflictModel | undefined;
  let server: Server | undefined;
  let events: EventStream | undefined;
  let sweeper: NodeJS.Timeout | undefined;
  const instancesStarted = new Map<string, number>();
  let stopping = false;
  const stop = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    clearInterval(sweeper);
    server?.close();
    server?.closeAllConnections();
    await events?.stop();
    await conflictModel?.stop();
    await dynamoDbLocal?.stop();
    if (dynamoDbLocal) forgetStoreEndpoint();
    const closed = [
      server && 'the HTTP server',
      sweeper && 'the hold sweeper',
      events && 'the event stream',
      conflictModel && 'the conflict model',
      dynamoDbLocal && 'DynamoDB Local',
    ].filter((what) => typeof what === 'string');
    console.log(stoppedLine(closed, instancesStarted));
    process.exit(exitCode);
  };
  // A Ctrl-C reaches the server twice, from the terminal and from npm: both start the one stop.
  process.on('SIGINT', () => stop(0));
  process.on('SIGTERM', () => stop(0));

  if (!process.env.DYNAMODB_ENDPOINT) {
    dynamoDbLocal = await startDynamoDbLocal(keepData ? { dataDir: DATA_DIR } : {});
    // Every request would fail from then on: the server goes too, and says why.
    dynamoDbLocal.ended.then((how) => {
      if (stopping) return;
      console.error(`DynamoDB Local ended (${how}); the server stops too.`);
      return stop(1);
    });
    // The handler modules build their client from the environment when they load, below.
    process.env.DYNAMODB_ENDPOINT = dynamoDbLocal.endpoint;
    recordStoreEndpoint(dynamoDbLocal.endpoint);
  }
  const storeEndpoint = process.env.DYNAMODB_ENDPOINT;
  if (conflictSettings && storeEndpoint) {
    conflictModel = await startConflictModel({ target: storeEndpoint, ...conflictSettings });
    process.env.DYNAMODB_ENDPOINT = conflictModel.endpoint;
    // The functions run in this process, and so does the model: they reach it without a socket.
    reachInProcess(conflictModel.endpoint, conflictModel.requestHandler);
  }
  const tableName = tableNameFromEnv();
  const table = await prepareTable(
    tableName,
    async () => {
      events = await followEvents(tableName, storeEndpoint, printEvent);
    },
    (error) => {
      console.error(`Cannot prepare table ${tableName}:`, error instanceof Error ? error.message : error);
      return stop(1);
    },
  );
  const [{ createBatchesHandler }, { createAllocationsHandler }, { batchRepository }, { DynamoDbBatchRepository }, { sweepExpiredHolds }] = await Promise.all([
    import('../functions/batches'),
    import('../functions/allocations'),
    import('../functions/store/repository'),
    import('../functions/store/batch-repository'),
    import('../domain/hold-services'),
  ]);
  sweeper = runEvery(SWEEP_INTERVAL_MS, async () => {
    if (table.isReady()) await sweepExpiredHolds(batchRepository);
  });
  // The Lambda handler reads the copy of the document beside its bundle; from source there is none.
  const openApiDocument = openApiDocumentFile(new URL('../docs/openapi.json', import.meta.url));
  // What a Lambda instance builds at module scope: its client and repository, with what it remembers (spread pieces, takes in flight).
  const newRepository = () => new DynamoDbBatchRepository(createDocumentClient(), tableName);
  // A terminal is read by someone: a line a request. Anything else is read by a program, which gets what Lambda writes.
  const oneLinePerRequest = inTerminal;
  if (oneLinePerRequest) printFunctionEntriesOnOneLine();
  const serverLog: ServerLog = {
    instanceStarted: (start) => {
      instancesStarted.set(start.functionName, (instancesStarted.get(start.functionName) ?? 0) + 1);
      if (!oneLinePerRequest) process.stdout.write(`${initReportLine(start, new Date())}\n`);
    },
    ...(oneLinePerRequest ? { requestAnswered: (request) => process.stdout.write(`${requestLine(request)}\n`) } : {}),
  };
  // Files of imports, each run once it has arrived, as the stack's state machine runs one on AWS.
  const uploads = localUploads(
    () => `http://localhost:${(server?.address() as AddressInfo | null)?.port ?? port}`,
    keepData ? keptDirectory(UPLOADS_DIR) : mkdtempSync(join(tmpdir(), 'allocation-service-uploads-')),
    (importid, path, digest) => {
      runFileImport(importid, path, digest, batchRepository).catch((error: unknown) =>
        console.error(JSON.stringify({ level: 'error', message: 'The import of a file stopped', importid, cause: error instanceof Error ? error.message : String(error) })),
      );
    },
  );
  server = createLocalServer(
    lambda
      ? {
          batches: { newInstance: () => whenReady(table, createBatchesHandler(newRepository(), uploads.target)), routeKeys: routeKeys.batches },
          allocations: { newInstance: () => whenReady(table, createAllocationsHandler(newRepository(), openApiDocument)), routeKeys: routeKeys.allocations },
        }
      : {
          batches: { handler: whenReady(table, createBatchesHandler(batchRepository, uploads.target)), routeKeys: routeKeys.batches },
          allocations: { handler: whenReady(table, createAllocationsHandler(batchRepository, openApiDocument)), routeKeys: routeKeys.allocations },
        },
    serverLog,
    uploads.receive,
  );
  server.on('error', (error) => {
    console.error(`Cannot listen on port ${port}: ${error.message}`);
    return stop(1);
  });
  server.listen(port, () => {
    const store = dynamoDbLocal
      ? `DynamoDB Local at ${dynamoDbLocal.endpoint} (${keepData ? `data kept in ${DATA_DIR}` : 'in memory'})`
      : `DynamoDB at ${storeEndpoint}`;
    const model = conflictModel
      ? `\n  through the conflict model at ${conflictModel.endpoint} (writes held ${conflictModel.settings.holdMs} ms, ` +
        `${conflictModel.settings.writeUnitsPerSecond} write units/s per partition key; counters at ${conflictModel.endpoint}/counters)`
      : '';
    const printed = { json: 'printed here as JSON lines', line: 'printed here one short line each (--json-logs: whole; --no-events: not at all)', none: 'not printed (--no-events)' }[eventOutput];
    const eventsTo = `${printed}${eventsFile === undefined ? '' : `, and appended to ${eventsFile}`}`;
    const requests = oneLinePerRequest ? "\n  requests printed here one line each (--json-logs: the functions' log entries whole)" : '';
    const functions = lambda
      ? 'each function as Lambda runs it: instances serving one request at a time, each with its own state (--lambda)'
      : 'each function one instance serving many requests at once, as a container (--lambda: as Lambda runs it)';
    console.log(
      `Allocation service listening on http://localhost:${port}\n  API reference at http://localhost:${port}/docs\n` +
        `  table ${tableName} on ${store}${model}\n  ${functions}\n  events ${eventsTo}${requests}\n  Ctrl-C stops it.`,
    );
  });
};

main().catch((error: unknown) => {
  if (error instanceof OptionError) {
    process.stderr.write(`${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  console.error(error instanceof JavaUnavailable || error instanceof UsageError ? error.message : error);
  process.exit(1);
});
