import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { OrderLine } from '../../domain/model';
import { DynamoDbBatchRepository } from '../../functions/store/batch-repository';
import { defaultConflictRetryPolicy } from '../../functions/store/store-calls';
import { createDynamoDbClient } from '../../functions/store/client';
import { type DynamoDbLocal, freePort, startDynamoDbLocal } from '../../local/dynamodb-local';
import { ensureTable } from '../../local/table';
import { checkInvariants, findViolations, readInventory } from '../../tools/invariants';
import { type TestTable, createTestTable } from '../support/dynamodb';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy';
import { type Answer, type Service, serviceOver } from './support/service';
import { tableContents } from './support/table-contents';

/** What a client must get while the store cannot answer: a retryable status, a delay, and nothing about the store. */
const expectRetryLater = (answer: Answer) => {
  expect(answer.status).toBe(503);
  expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
  expect(answer.body).toEqual({ message: expect.any(String), code: 'unavailable', request_id: expect.any(String) });
  expect(answer.text).not.toMatch(/ECONNREFUSED|ECONNRESET|Timeout|Throughput|Transaction|dynamodb|\n\s+at /i);
};

/** docs/reliability.md, "Timeouts and retries": 3 attempts of a call; written out, so that changing the client's setting fails here. */
const ATTEMPTS_PER_CALL = 3;

describe('a store that hangs, throttles or conflicts, behind the service’s real client', () => {
  let table: TestTable;
  let proxy: FaultProxy;
  let service: Service;
  let storeClient: ReturnType<typeof createDynamoDbClient>;

  beforeAll(async () => {
    table = await createTestTable();
    proxy = await startFaultProxy(table.endpoint);
    // The client as on AWS, each attempt given 2 s, whatever the run gives its DynamoDB Local (vitest.config.ts).
    vi.stubEnv('DYNAMODB_REQUEST_TIMEOUT_MS', '');
    storeClient = createDynamoDbClient(proxy.endpoint);
    vi.unstubAllEnvs();
    service = serviceOver(table.repository({ sender: DynamoDBDocumentClient.from(storeClient) }));
  });
  afterEach(() => proxy.heal());
  afterAll(async () => {
    storeClient?.destroy();
    await proxy?.close();
    await table?.drop();
  });

  const contents = () => tableContents(table.documentClient, table.tableName);
  const availableOf = async (ref: string) =>
    (await readInventory(table.documentClient, table.tableName)).batches.find((batch) => batch.ref === ref)?.available;

  it('answers 503 with Retry-After when the store hangs past the request timeout, after the configured attempts, then serves', async () => {
    expect((await service.addBatch({ ref: 'hang-1', sku: 'HANG', qty: 10, eta: null })).status).toBe(201);
    // The process reads the locations it routes by once in 30 s: read now, so that the one Query that hangs is the stock's.
    expect((await service.allocate({ orderid: 'warm-up', sku: 'NEVER-ADDED', qty: 1 })).status).toBe(400);
    proxy.inject({ fault: { kind: 'hang' } });
    const queriesBefore = proxy.requestCount('Query');

    expectRetryLater(await service.allocate({ orderid: 'o1', sku: 'HANG', qty: 2 }));
    expect(proxy.requestCount('Query') - queriesBefore).toBe(ATTEMPTS_PER_CALL);

    proxy.heal();
    expect(await service.allocate({ orderid: 'o1', sku: 'HANG', qty: 2 })).toMatchObject({ status: 201, body: { batchref: 'hang-1' } });
    expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
  }, 30_000);

  it('answers 503 with Retry-After when DynamoDB throttles a write past the client’s retries, writes nothing, then serves', async () => {
    expect((await service.addBatch({ ref: 'throttle-1', sku: 'THROTTLE', qty: 10, eta: null })).status).toBe(201);
    const before = await contents();
    proxy.inject({ operation: 'TransactWriteItems', fault: { kind: 'throttle' } });
    const writesBefore = proxy.requestCount('TransactWriteItems');

    expectRetryLater(await service.allocate({ orderid: 'o1', sku: 'THROTTLE', qty: 3 }));
    expect(proxy.requestCount('TransactWriteItems') - writesBefore).toBe(ATTEMPTS_PER_CALL);
    expect(await contents()).toEqual(before);

    proxy.heal();
    expect((await service.allocate({ orderid: 'o1', sku: 'THROTTLE', qty: 3 })).status).toBe(201);
    expect(await availableOf('throttle-1')).toBe(7);
  }, 30_000);

  it.each(['TransactionConflict', 'ThrottlingError'])(
    'retries an allocation whose transaction was cancelled for %s, and takes the stock once',
    async (reason) => {
      const ref = `retry-${reason}`;
      expect((await service.addBatch({ ref, sku: ref, qty: 10, eta: null })).status).toBe(201);
      proxy.inject({ operation: 'TransactWriteItems', times: 2, fault: { kind: 'cancel', reasons: [reason, 'None'] } });

      expect(await service.allocate({ orderid: 'o1', sku: ref, qty: 4 })).toMatchObject({ status: 201, body: { batchref: ref } });
      expect(await availableOf(ref)).toBe(6);
      expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
    },
  );

  it('answers 503 when conflicts outlast the adapter’s retries, writes nothing, then serves again', async () => {
    expect((await service.addBatch({ ref: 'conflict-1', sku: 'CONFLICT', qty: 10, eta: null })).status).toBe(201);
    const before = await contents();
    proxy.inject({ operation: 'TransactWriteItems', fault: { kind: 'cancel', reasons: ['None', 'TransactionConflict'] } });
    const writesBefore = proxy.requestCount('TransactWriteItems');

    expectRetryLater(await service.allocate({ orderid: 'o1', sku: 'CONFLICT', qty: 4 }));
    expect(proxy.requestCount('TransactWriteItems') - writesBefore).toBe(defaultConflictRetryPolicy.maxAttempts);
    expect(await contents()).toEqual(before);

    proxy.heal();
    expect((await service.allocate({ orderid: 'o1', sku: 'CONFLICT', qty: 4 })).status).toBe(201);
    expect(await availableOf('conflict-1')).toBe(6);
  });

  // The SDK sends its retry with the transaction's ClientRequestToken, so the store answers it as it
  // answered the lost attempt instead of running it again, or refusing it as a duplicate.
  it('answers 201 and adds the batch once when the store committed it but its answer was lost', async () => {
    proxy.inject({ operation: 'TransactWriteItems', times: 1, fault: { kind: 'lose-answer' } });

    expect(await service.addBatch({ ref: 'lost-1', sku: 'LOST', qty: 10, eta: null })).toMatchObject({ status: 201, body: 'OK' });
    expect((await readInventory(table.documentClient, table.tableName)).batches.filter((batch) => batch.ref === 'lost-1')).toHaveLength(1);
  });

  it('answers 201 and takes the stock once when the store committed an allocation but its answer was lost', async () => {
    expect((await service.addBatch({ ref: 'lost-2', sku: 'LOST-LINE', qty: 10, eta: null })).status).toBe(201);
    proxy.inject({ operation: 'TransactWriteItems', times: 1, fault: { kind: 'lose-answer' } });

    expect(await service.allocate({ orderid: 'o1', sku: 'LOST-LINE', qty: 4 })).toMatchObject({
      status: 201,
      body: { batchref: 'lost-2' },
    });
    expect(await availableOf('lost-2')).toBe(6);
    expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
  });
});

/*
 * The store goes down in two steps: first its connections are refused (the fault proxy), then, once
 * no request is left inside it, DynamoDB Local itself is stopped and restarted on its data. Stopping
 * DynamoDB Local with requests inside it once lost a transaction it had acknowledged (a line
 * confirmed with 201, missing after the restart, with its batch's stock restored too). Probes of
 * the emulator alone, stopped mid-load, lost nothing, so the cause is not established; DynamoDB
 * acknowledges only durable writes, so the test keeps the emulator's shutdown out of the picture.
 */
describe('a store that is down at start, then stopped in the middle of a load', () => {
  const TABLE = 'allocations';
  let dataDir: string;
  let store: DynamoDbLocal | undefined;
  let client: ReturnType<typeof createDynamoDbClient>;
  let storeProxy: FaultProxy | undefined;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'allocations-faults-'));
  });
  afterAll(async () => {
    await store?.stop();
    await storeProxy?.close();
    client?.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  });

  // One story rather than two tests: each start of DynamoDB Local costs seconds of JVM start-up.
  it('answers 503 with Retry-After while the store is down, recovers by itself when it returns, keeps every confirmed line', async () => {
    const port = await freePort();
    const proxy = await startFaultProxy(`http://127.0.0.1:${port}`);
    storeProxy = proxy;
    client = createDynamoDbClient(proxy.endpoint);
    const service = serviceOver(new DynamoDbBatchRepository(DynamoDBDocumentClient.from(client), TABLE));
    /** A DynamoDB Local of its own on the reserved port, keeping its data in `dataDir` across restarts. */
    const startStore = async () => {
      store = await startDynamoDbLocal({ dataDir, port });
      proxy.heal();
      await ensureTable(client, TABLE);
    };
    const stopStore = async () => {
      proxy.inject({ fault: { kind: 'unreachable' } });
      await until(() => proxy.inFlight() === 0);
      await store?.stop();
      store = undefined;
    };
    const until = async (condition: () => boolean) => {
      while (!condition()) await sleep(20);
    };

    // Down at start: the service is up before its store, as after a deploy in a region with trouble.
    expectRetryLater(await service.addBatch({ ref: 'load-a1', sku: 'LOAD-A', qty: 60, eta: null }));
    expectRetryLater(await service.allocate({ orderid: 'early', sku: 'LOAD-A', qty: 1 }));
    await startStore();
    for (const batch of [
      { ref: 'load-a1', sku: 'LOAD-A', qty: 60, eta: null },
      { ref: 'load-a2', sku: 'LOAD-A', qty: 40, eta: '2026-07-01' },
      { ref: 'load-b1', sku: 'LOAD-B', qty: 80, eta: null },
    ]) {
      expect((await service.addBatch(batch)).status).toBe(201);
    }

    // Stopped mid-load, with clients that do what a 503 asks: wait Retry-After seconds, then send the same line again.
    const lines: OrderLine[] = Array.from({ length: 200 }, (_, n) => ({
      orderid: `load-${n}`,
      sku: n % 3 === 0 ? 'LOAD-B' : 'LOAD-A',
      qty: 1 + (n % 4),
    }));
    const finalAnswers = new Map<OrderLine, Answer>();
    const unavailable: Answer[] = [];
    const queue = [...lines];
    const customer = async () => {
      for (let line = queue.shift(); line; line = queue.shift()) {
        for (;;) {
          const answer = await service.allocate(line);
          if (answer.status !== 503) {
            finalAnswers.set(line, answer);
            break;
          }
          unavailable.push(answer);
          await sleep(Number(answer.headers['retry-after']) * 1_000);
        }
      }
    };
    let loadEnded = false;
    const load = Promise.all(Array.from({ length: 6 }, customer)).finally(() => {
      loadEnded = true;
    });
    await until(() => finalAnswers.size >= 20 || loadEnded);
    await stopStore();
    await until(() => unavailable.length >= 6 || loadEnded);
    expect(loadEnded, 'the load ended before the store was down').toBe(false);
    await startStore();
    await load;

    for (const answer of unavailable) expectRetryLater(answer);
    const outOfStock = (line: OrderLine, answer: Answer) =>
      answer.status === 400 && (answer.body as { message: string }).message === `Out of stock for sku ${line.sku}`;
    const unexpected = [...finalAnswers].filter(
      ([line, answer]) => !(answer.status === 201 || answer.status === 200 || outOfStock(line, answer)),
    );
    expect(unexpected).toEqual([]);

    const inventory = await readInventory(DynamoDBDocumentClient.from(client), TABLE);
    expect(findViolations(inventory)).toEqual([]);
    const confirmed = [...finalAnswers]
      .filter(([, answer]) => answer.status < 300)
      .map(([line, answer]) => ({ ...line, batchref: (answer.body as { batchref: string }).batchref }));
    const byOrder = (a: { orderid: string }, b: { orderid: string }) => (a.orderid < b.orderid ? -1 : 1);
    expect([...inventory.lines].sort(byOrder)).toEqual(confirmed.sort(byOrder));
  }, 120_000);
});
