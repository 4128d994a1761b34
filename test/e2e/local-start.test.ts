import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeleteTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoDbBatchRepository } from '../../functions/store/batch-repository';
import { createDynamoDbClient } from '../../functions/store/client';
import { activeHoldsIndex, linesByBatchIndex, skuListsIndex, stockHistoryIndex } from '../../functions/store/table';
import { freePort, startDynamoDbLocal } from '../../local/dynamodb-local';
import { createTableAsFirstReleased, dynamoDbEndpoint, uniqueId } from '../support/dynamodb';
import {
  type ProcessInfo,
  type RunningService,
  descendantsOf,
  exited,
  isRunning,
  listening,
  startNpmStart,
  startService,
  stillRunningAfter,
} from '../support/local-service';
import { fetchDocumented } from './documented';

const isDynamoDbLocal = ({ command }: ProcessInfo) => command.includes('DynamoDBLocal.jar');

/**
 * Kills whatever a failing test would leave running, `known` (recorded while their parent lived)
 * and what is still below the service: the machine is shared, and a DynamoDB Local left behind
 * keeps its port and its memory.
 */
const killLeftovers = (service: RunningService, known: readonly ProcessInfo[] = []) => {
  const { pid, exitCode, signalCode } = service.process;
  const below = pid !== undefined && exitCode === null && signalCode === null ? [...descendantsOf(pid), { pid, command: 'the service' }] : [];
  for (const { pid: leftover } of [...known, ...below]) {
    if (isRunning(leftover)) process.kill(leftover, 'SIGKILL');
  }
};

// A test may start the server twice, each with a DynamoDB Local (a JVM) of its own, each allowed a
// minute to listen on a loaded machine: the test allows both, and a stop.
describe('npm start', { timeout: 150_000 }, () => {
  it('starts its own DynamoDB Local in memory, serves the API, and stops both on Ctrl-C, saying what it closed', async () => {
    const port = await freePort();
    const service = startService({ PORT: String(port), DYNAMODB_ENDPOINT: '' });
    await listening(service);
    expect(service.output()).toMatch(/DynamoDB Local at \S+ \(in memory\)/);
    const response = await fetchDocumented(`http://127.0.0.1:${port}/add_batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ref: 'b1', sku: 'LAMP', qty: 1, eta: null }),
    });
    expect(response.status).toBe(201);

    const dynamoDbEndpoint = /DynamoDB Local at (\S+)/.exec(service.output())?.[1];
    expect(dynamoDbEndpoint).toBeDefined();
    expect(await service.stop('SIGINT')).toBe(0);
    await expect(fetch(dynamoDbEndpoint!)).rejects.toThrow();
    expect(service.output()).toMatch(/^allocation service stopped: closed the HTTP server, the hold sweeper, the event stream and DynamoDB Local$/m);
  });

  it('prints no event with --no-events, and still appends each to --events-file', async () => {
    const port = await freePort();
    const file = join(mkdtempSync(join(tmpdir(), 'events-')), 'events.jsonl');
    const service = startService({ PORT: String(port), DYNAMODB_ENDPOINT: '' }, ['--no-events', '--events-file', file]);
    try {
      await listening(service);
      const added = await fetch(`http://127.0.0.1:${port}/add_batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ref: 'b1', sku: 'LAMP', qty: 1, eta: null }) });
      expect(added.status).toBe(201);
      // The event reaches the file and the output at once: once it is in the file, the output had its chance.
      while (!(existsSync(file) && readFileSync(file, 'utf8').includes('"BatchAdded"'))) await sleep(50);
      expect(service.output()).not.toContain('"detail-type"');
      expect(service.output()).toContain('events not printed (--no-events), and appended to');
    } finally {
      await service.stop('SIGINT');
    }
  });

  it.each([
    ['when npm itself is sent SIGTERM', (npm: number) => process.kill(npm, 'SIGTERM')],
    // A terminal signals the whole foreground group: npm and the server both get it, and npm passes it on too.
    ['on a Ctrl-C, which reaches npm and the server both', (npm: number) => process.kill(-npm, 'SIGINT')],
  ])('stops the whole tree, its DynamoDB Local first, %s', async (_how, signal) => {
    const port = await freePort();
    const service = startNpmStart({ PORT: String(port), DYNAMODB_ENDPOINT: '' }, ['--in-memory']);
    let tree: ProcessInfo[] = [];
    try {
      await listening(service);
      tree = descendantsOf(service.process.pid!);
      expect(tree.filter(isDynamoDbLocal)).toHaveLength(1);

      signal(service.process.pid!);

      expect(await exited(service)).toBe(0);
      expect(await stillRunningAfter(tree, 10_000)).toEqual([]);
      await expect(fetch(`http://127.0.0.1:${port}/docs`)).rejects.toThrow();
    } finally {
      killLeftovers(service, tree);
    }
  });

  it('runs each function as Lambda does with --lambda, serves the API the same, and logs one cold start for each instance it started', async () => {
    const port = await freePort();
    const service = startService({ PORT: String(port), DYNAMODB_ENDPOINT: '' }, ['--lambda']);
    try {
      await listening(service);
      expect(service.output()).toMatch(/instances serving one request at a time, each with its own state \(--lambda\)/);
      const call = (path: string, body?: object) =>
        fetchDocumented(`http://127.0.0.1:${port}${path}`, body ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {});
      expect((await call('/add_batch', { ref: 'b1', sku: 'LAMP', qty: 20, eta: null })).status).toBe(201);

      const answers = await Promise.all(Array.from({ length: 8 }, (_, index) => call('/allocate', { orderid: `o${index}`, sku: 'LAMP', qty: 2 })));

      expect(answers.map(({ status }) => status)).toEqual(Array(8).fill(201));
      expect(await (await call('/batches/b1')).json()).toMatchObject({ available: 4, allocated: 16 });
      expect(await service.stop('SIGINT')).toBe(0);

      // Not a terminal: the functions' entries as on Lambda, and Lambda's init report for each instance.
      const lines = service.output().split('\n');
      const coldStarts = lines.filter((line) => line.includes('"cold_start":true')).length;
      const initReports = lines.filter((line) => line.includes('"type":"platform.initReport"')).length;
      const instances = Number(/it had started (\d+) instances/.exec(service.output())?.[1]);
      expect(coldStarts).toBeGreaterThanOrEqual(2);
      expect(initReports).toBe(coldStarts);
      expect(instances).toBe(coldStarts);
    } finally {
      killLeftovers(service);
    }
  });

  it('leaves no DynamoDB Local behind when the server is killed outright', async () => {
    const service = startService({ PORT: String(await freePort()), DYNAMODB_ENDPOINT: '' });
    let dynamoDbLocal: ProcessInfo[] = [];
    try {
      await listening(service);
      dynamoDbLocal = descendantsOf(service.process.pid!).filter(isDynamoDbLocal);
      expect(dynamoDbLocal).toHaveLength(1);
      const endpoint = /DynamoDB Local at (\S+)/.exec(service.output())?.[1];

      // No handler runs on SIGKILL: what stops DynamoDB Local must live outside the server.
      service.process.kill('SIGKILL');
      await exited(service);
      expect(await stillRunningAfter(dynamoDbLocal, 10_000)).toEqual([]);
      await expect(fetch(endpoint!)).rejects.toThrow();
    } finally {
      killLeftovers(service, dynamoDbLocal);
    }
  });

  it('stops, and says why, when its DynamoDB Local ends under it', async () => {
    const port = await freePort();
    const service = startService({ PORT: String(port), DYNAMODB_ENDPOINT: '' });
    try {
      await listening(service);
      const [dynamoDbLocal] = descendantsOf(service.process.pid!).filter(isDynamoDbLocal);
      process.kill(dynamoDbLocal!.pid, 'SIGTERM');

      expect(await exited(service, 15_000)).toBe(1);
      expect(service.errorOutput()).toMatch(/^DynamoDB Local ended \(.+\); the server stops too\.$/m);
      await expect(fetch(`http://127.0.0.1:${port}/docs`)).rejects.toThrow();
    } finally {
      killLeftovers(service);
    }
  });

  it('refuses an option it does not know with its usage on standard error, and exit code 2', async () => {
    const service = startService({ PORT: String(await freePort()), DYNAMODB_ENDPOINT: '' }, ['--keep-dat']);
    try {
      expect(await exited(service, 15_000)).toBe(2);
      expect(service.errorOutput()).toMatch(/^Unknown option --keep-dat\n\nUsage: npm start -- \[options\]\n/);
      expect(service.errorOutput()).toContain('--keep-data');
      expect(service.output()).toBe(service.errorOutput());
    } finally {
      killLeftovers(service);
    }
  });

  it('prints its usage on standard output with --help, and starts nothing', async () => {
    const service = startService({ DYNAMODB_ENDPOINT: '' }, ['--help']);
    try {
      expect(await exited(service, 15_000)).toBe(0);
      expect(service.output()).toMatch(/^Usage: npm start -- \[options\]\n/);
      expect(service.errorOutput()).toBe('');
    } finally {
      killLeftovers(service);
    }
  });

  it('keeps what was written for the next run with --keep-data', async () => {
    const ref = uniqueId('kept');
    const run = async (send: (base: string) => Promise<Response>) => {
      const port = await freePort();
      const service = startService({ PORT: String(port), DYNAMODB_ENDPOINT: '' }, ['--keep-data']);
      try {
        await listening(service);
        expect(service.output()).toMatch(/\(data kept in \.local\/dynamodb\)/);
        return (await send(`http://127.0.0.1:${port}`)).status;
      } finally {
        await service.stop('SIGINT');
      }
    };
    const added = await run((base) =>
      fetchDocumented(`${base}/add_batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ref, sku: 'LAMP', qty: 1, eta: null }) }),
    );
    expect(added).toBe(201);
    expect(await run((base) => fetchDocumented(`${base}/batches/${ref}`))).toBe(200);
  });

  it('says in one line that PORT is not a port, and exits non-zero', async () => {
    const service = startService({ PORT: 'abc', DYNAMODB_ENDPOINT: '' });
    expect(await exited(service)).not.toBe(0);
    expect(service.output().trim()).toBe('PORT must be a port number, not abc');
  });

  it('puts the conflict model in front of its DynamoDB with --conflict-model, with the settings it is given', async () => {
    const port = await freePort();
    const service = startService(
      { PORT: String(port), DYNAMODB_ENDPOINT: dynamoDbEndpoint(), TABLE_NAME: uniqueId('conflict-model'), CONFLICT_HOLD_MS: '20', CONFLICT_WRITE_UNITS: '150' },
      ['--conflict-model'],
    );
    try {
      await listening(service);
      const model = /through the conflict model at (\S+) \(writes held 20 ms, 150 write units\/s per partition key/.exec(service.output())?.[1];
      expect(model).toBeDefined();
      const response = await fetchDocumented(`http://127.0.0.1:${port}/add_batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ref: uniqueId('batch'), sku: 'LAMP', qty: 1, eta: null }),
      });
      expect(response.status).toBe(201);
      const counters = (await (await fetch(`${model}/counters`)).json()) as { committed: number };
      expect(counters.committed).toBeGreaterThan(0);
    } finally {
      await service.stop();
    }
  });

  it('says in one line that CONFLICT_HOLD_MS is not a number of milliseconds, and exits non-zero', async () => {
    const service = startService({ CONFLICT_HOLD_MS: 'soon', DYNAMODB_ENDPOINT: '' }, ['--conflict-model']);
    expect(await exited(service)).not.toBe(0);
    expect(service.output().trim()).toBe('CONFLICT_HOLD_MS must be a whole number of milliseconds, not soon');
  });

  it('says in one line that Java is missing and how to get it, and exits non-zero', async () => {
    const service = startService({ PATH: '/nonexistent', DYNAMODB_ENDPOINT: '' });
    expect(await exited(service)).not.toBe(0);
    expect(service.output().trim()).toMatch(/^DynamoDB Local needs Java 17\+.*openjdk-17-jre-headless/);
    expect(service.output().trim().split('\n')).toHaveLength(1);
  });

  it('answers 503 with Retry-After while its DynamoDB is down, and serves once it comes up', async () => {
    const [port, storePort] = await Promise.all([freePort(), freePort()]);
    const service = startService({
      PORT: String(port),
      DYNAMODB_ENDPOINT: `http://127.0.0.1:${storePort}`,
      TABLE_NAME: uniqueId('late-store'),
    });
    const addBatch = () =>
      fetchDocumented(`http://127.0.0.1:${port}/add_batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ref: uniqueId('batch'), sku: 'LAMP', qty: 1, eta: null }),
      });
    try {
      await listening(service);
      const whileDown = await addBatch();
      expect(whileDown.status).toBe(503);
      expect(whileDown.headers.get('retry-after')).toBe('1');

      const store = await startDynamoDbLocal({ port: storePort });
      try {
        // Until the table is there too, every answer is the same "retry" a client can act on.
        let response = await addBatch();
        for (let tries = 0; tries < 60 && response.status !== 201; tries++) {
          expect(response.status).toBe(503);
          expect(response.headers.get('retry-after')).toBe('1');
          await new Promise((resolve) => setTimeout(resolve, 500));
          response = await addBatch();
        }
        expect(response.status).toBe(201);
      } finally {
        await store.stop();
      }
    } finally {
      await service.stop();
    }
  });

  it('adds the lines-by-batch, active holds and stock history indexes to a table made before them, keeping what the table holds', async () => {
    const endpoint = dynamoDbEndpoint();
    const tableName = uniqueId('before-index');
    const client = createDynamoDbClient(endpoint);
    await createTableAsFirstReleased(client, tableName);
    const batch = { ref: uniqueId('batch'), sku: 'LAMP', qty: 5, available: 5, eta: null };
    await new DynamoDbBatchRepository(DynamoDBDocumentClient.from(client), tableName).addBatch(batch);
    const port = await freePort();
    const service = startService({ PORT: String(port), DYNAMODB_ENDPOINT: endpoint, TABLE_NAME: tableName });
    try {
      await listening(service);
      const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
      expect(Table?.GlobalSecondaryIndexes?.map(({ IndexName, IndexStatus }) => ({ IndexName, IndexStatus }))).toEqual(
        expect.arrayContaining([
          { IndexName: linesByBatchIndex.name, IndexStatus: 'ACTIVE' },
          { IndexName: activeHoldsIndex.name, IndexStatus: 'ACTIVE' },
          { IndexName: stockHistoryIndex.name, IndexStatus: 'ACTIVE' },
          { IndexName: skuListsIndex.name, IndexStatus: 'ACTIVE' },
        ]),
      );
      expect(Table?.GlobalSecondaryIndexes).toHaveLength(4);
      const response = await fetchDocumented(`http://127.0.0.1:${port}/batches/${batch.ref}`);
      expect(await response.json()).toEqual({ ref: batch.ref, sku: 'LAMP', qty: 5, allocated: 0, held: 0, available: 5, eta: null, location: 'default' });
    } finally {
      await service.stop();
      await client.send(new DeleteTableCommand({ TableName: tableName }));
      client.destroy();
    }
    // DynamoDB Local builds one index at a time, each in seconds on a busy machine.
  }, 120_000);
});
