/**
 * `npm start -- --conflict-model` as the rounds through it run it (hot-sku.ts, drop.ts): its own
 * DynamoDB Local, in memory, and the conflict model in its own process, with the settings given and
 * nothing else set; `--lambda` too when asked. Its log entries (a WARN for each 503) go to a file.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import type { ConflictCounters, ConflictModelSettings } from '../../local/conflict-model';
import { createDocumentClient } from '../../functions/store/client';
import { freePort } from '../../local/dynamodb-local';
import { findViolations, readInventory } from '../invariants';
import { spawnTypeScript, stopChild } from './child-process';

export interface ServerOverConflictModel {
  readonly port: number;
  /** What the model has refused so far, for a conflict or for throttling (the adapter's retries among them). */
  counters(): Promise<ConflictCounters>;
  /**
   * What `npm run check` finds wrong with the table: none when nothing is oversold or lost. Read once
   * every client has had its answer, so that no write is in flight (a Scan is not a snapshot).
   */
  violations(): Promise<string[]>;
}

/** The requests the model refused between two readings of its counters. */
export const refusalsSince = (before: ConflictCounters, after: ConflictCounters) => ({
  conflicts: after.conflicts - before.conflicts,
  throttles: after.throttles - before.throttles,
});

export interface ServerOptions {
  /**
   * Each function as Lambda runs it (`--lambda`: instances serving one request at a time, with
   * their own state), rather than one instance serving many requests.
   */
  readonly lambda?: boolean;
  /** The table's name starts with it, a random suffix after. */
  readonly tablePrefix: string;
}

/**
 * Resolves once `npm start` says it listens, with the endpoints it printed: its DynamoDB Local's and
 * its conflict model's. Its output is read to the end, so that the pipe never fills.
 */
const listening = (stdout: NodeJS.ReadableStream): Promise<{ store: string; model: string }> =>
  new Promise((resolve, reject) => {
    stdout.once('end', () => reject(new Error('npm start exited before it listened')));
    let store = '';
    let model = '';
    createInterface({ input: stdout }).on('line', (line) => {
      store = /on DynamoDB Local at (\S+)/.exec(line)?.[1] ?? store;
      model = /through the conflict model at (\S+)/.exec(line)?.[1] ?? model;
      if (store && model) resolve({ store, model });
    });
  });

/**
 * Runs `use` against the server once it listens, and stops the server when `use` is done, however
 * it ends: the server's DynamoDB Local keeps the table in memory, so `use` reads what it needs first.
 */
export const withServerOverConflictModel = async <Result>(
  serverLog: string,
  settings: ConflictModelSettings,
  { lambda = false, tablePrefix }: ServerOptions,
  use: (server: ServerOverConflictModel) => Promise<Result>,
): Promise<Result> => {
  const port = await freePort();
  const tableName = `${tablePrefix}-${randomUUID().slice(0, 8)}`;
  mkdirSync(dirname(serverLog), { recursive: true });
  const log = openSync(serverLog, 'w');
  const server = spawnTypeScript('local/start.ts', {
    args: ['--conflict-model', ...(lambda ? ['--lambda'] : [])],
    env: {
      PORT: String(port),
      DYNAMODB_ENDPOINT: '',
      TABLE_NAME: tableName,
      CONFLICT_HOLD_MS: String(settings.holdMs),
      CONFLICT_WRITE_UNITS: String(settings.writeUnitsPerSecond),
    },
    stdout: 'pipe',
    stderr: log,
  });
  try {
    const endpoints = await listening(server.stdout!);
    return await use({
      port,
      counters: async () => (await (await fetch(`${endpoints.model}/counters`)).json()) as ConflictCounters,
      violations: async () => {
        const client = createDocumentClient(endpoints.store);
        try {
          return findViolations(await readInventory(client, tableName)).map(({ message }) => message);
        } finally {
          client.destroy();
        }
      },
    });
  } finally {
    await stopChild(server);
    closeSync(log);
  }
};
