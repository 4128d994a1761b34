import {
  DynamoDBClient,
  ListTablesCommand,
  ThrottlingException,
  TransactionCanceledException,
  TransactionConflictException,
  TransactionInProgressException,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, TransactGetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { StoreUnavailable } from '../../domain/errors';
import type { NewBatch } from '../../domain/model';
import type { StoreObserver } from '../../domain/ports';
import { allocate } from '../../domain/services';
import { DynamoDbBatchRepository } from '../../functions/store/batch-repository';
import { createDynamoDbClient, reachInProcess } from '../../functions/store/client';
import { isStoreUnavailable } from '../../functions/store/store-errors';
import { startConflictModel } from '../../local/conflict-model';
import { freePort } from '../../local/dynamodb-local';
import type { ConflictRetryPolicy } from '../../functions/store/store-calls';
import { tableKeySchema } from '../../functions/store/table';
import { findViolations, readInventory } from '../../tools/invariants';
import { type ModelledTable, createModelledTable } from '../support/conflict-model';
import { uniqueId } from '../support/dynamodb';

// No test here is timed: each hold is long enough that what a test sends while it lasts arrives
// within it by a wide margin, and the write budgets' clock is stopped where a test counts units.

const { partitionKey, sortKey } = tableKeySchema;
const keyOf = (partition: string, sort = 'ITEM') => ({ [partitionKey.name]: partition, [sortKey.name]: sort });

/** Waits until the model holds this many items: the write sent before is in flight, and will be for its whole hold. */
const untilHeld = (table: ModelledTable, items: number) =>
  vi.waitFor(() => expect(table.model.heldItems()).toBe(items), { timeout: 10_000, interval: 5 });

const increment = (table: ModelledTable, key: Record<string, string>) => ({
  Update: { TableName: table.tableName, Key: key, UpdateExpression: 'ADD visits :one', ExpressionAttributeValues: { ':one': 1 } },
});

const rejectionOf = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('Expected the request to be refused');
};

describe('transactions that meet on an item (writes held 1 s)', () => {
  let table: ModelledTable;
  beforeAll(async () => {
    table = await createModelledTable({ holdMs: 1_000 });
  });
  afterAll(() => table.drop());

  const transact = (...items: object[]) => table.documentClient.send(new TransactWriteCommand({ TransactItems: items as never }));

  it('commits the first and cancels the second with the SDK\'s TransactionCanceledException, TransactionConflict at the shared item\'s place', async () => {
    const shared = keyOf(uniqueId('SHARED'));
    const own = keyOf(uniqueId('OWN'));
    const before = table.model.counters();
    const first = transact(increment(table, shared));
    await untilHeld(table, 1);
    const second = rejectionOf(transact({ Put: { TableName: table.tableName, Item: own } }, increment(table, shared)));

    await first;
    const error = await second;
    expect(error).toBeInstanceOf(TransactionCanceledException);
    expect((error as TransactionCanceledException).name).toBe('TransactionCanceledException');
    expect((error as TransactionCanceledException).CancellationReasons).toEqual([
      { Code: 'None' },
      { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item.' },
    ]);
    // The SDK does not retry a cancelled transaction: the adapter decides.
    expect((error as TransactionCanceledException).$metadata.attempts).toBe(1);

    expect((await table.documentClient.send(new GetCommand({ TableName: table.tableName, Key: shared }))).Item?.visits).toBe(1);
    expect((await table.documentClient.send(new GetCommand({ TableName: table.tableName, Key: own }))).Item).toBeUndefined();
    const after = table.model.counters();
    expect(after.transactions - before.transactions).toBe(2);
    expect(after.committed - before.committed).toBe(1);
    expect(after.conflicts - before.conflicts).toBe(1);
    expect(after.partitions.find((partition) => partition.partitionKey === shared[partitionKey.name])).toMatchObject({ conflicts: 1, throttles: 0 });
  });

  it('commits both of two transactions on different items at once', async () => {
    const [one, other] = [keyOf(uniqueId('ONE')), keyOf(uniqueId('OTHER'))];
    await Promise.all([transact(increment(table, one)), transact(increment(table, other))]);
    for (const key of [one, other]) {
      expect((await table.documentClient.send(new GetCommand({ TableName: table.tableName, Key: key }))).Item?.visits).toBe(1);
    }
  });

  it('refuses a PutItem of an item in a transaction with TransactionConflictException, cancels a TransactGetItems of it, and lets a GetItem read what was committed', async () => {
    const key = keyOf(uniqueId('HELD'));
    await table.documentClient.send(new PutCommand({ TableName: table.tableName, Item: { ...key, visits: 5 } }));
    const transaction = transact(increment(table, key));
    await untilHeld(table, 1);

    const put = await rejectionOf(table.documentClient.send(new PutCommand({ TableName: table.tableName, Item: { ...key, visits: 0 } })));
    expect(put).toBeInstanceOf(TransactionConflictException);
    expect((put as TransactionConflictException).name).toBe('TransactionConflictException');
    const transactGet = await rejectionOf(
      table.documentClient.send(new TransactGetCommand({ TransactItems: [{ Get: { TableName: table.tableName, Key: key } }] })),
    );
    expect((transactGet as TransactionCanceledException).CancellationReasons).toEqual([
      { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item.' },
    ]);
    const read = await table.documentClient.send(new GetCommand({ TableName: table.tableName, Key: key, ConsistentRead: true }));
    expect(read.Item?.visits).toBe(5);

    await transaction;
    expect((await table.documentClient.send(new GetCommand({ TableName: table.tableName, Key: key }))).Item?.visits).toBe(6);
  });

  it('refuses a transaction sent again with the token of one still in flight with TransactionInProgressException, not as a conflict with itself', async () => {
    const key = keyOf(uniqueId('REPEATED'));
    // One attempt each, so that the test sees each answer rather than the SDK's retries of it.
    const client = new DynamoDBClient({ endpoint: table.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
    const once = DynamoDBDocumentClient.from(client);
    const repeat = () => once.send(new TransactWriteCommand({ TransactItems: [increment(table, key)] as never, ClientRequestToken: key[partitionKey.name] }));
    try {
      const first = repeat();
      await untilHeld(table, 1);
      const error = await rejectionOf(repeat());
      expect(error).toBeInstanceOf(TransactionInProgressException);
      await first;
      // DynamoDB Local answers a repeat of a finished transaction as DynamoDB does: done, nothing written again.
      await repeat();
      expect((await table.documentClient.send(new GetCommand({ TableName: table.tableName, Key: key }))).Item?.visits).toBe(1);
    } finally {
      client.destroy();
    }
  });

  it('lets single-item writes of one item follow each other, as DynamoDB serializes them', async () => {
    const key = keyOf(uniqueId('SINGLE'));
    const add = () => table.documentClient.send(new UpdateCommand({ TableName: table.tableName, Key: key, UpdateExpression: 'ADD visits :one', ExpressionAttributeValues: { ':one': 1 } }));
    await Promise.all([add(), add()]);
    expect((await table.documentClient.send(new GetCommand({ TableName: table.tableName, Key: key }))).Item?.visits).toBe(2);
  });
});

describe('a client in the model\'s own process, as npm start\'s functions are (writes held 1 s)', () => {
  let table: ModelledTable;
  beforeAll(async () => {
    table = await createModelledTable({ holdMs: 1_000 });
    reachInProcess(table.model.endpoint, table.model.requestHandler);
  });
  afterAll(() => table.drop());

  /** A client built after the model was registered for its endpoint, as the functions' are in local/start.ts. */
  const inProcessClient = () => DynamoDBDocumentClient.from(createDynamoDbClient(table.model.endpoint));
  /** The same handler with a short timeout, and no retry by the SDK. */
  const impatientClient = (requestTimeoutMs: number) =>
    DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: table.model.endpoint,
        region: 'local',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        maxAttempts: 1,
        requestHandler: table.model.requestHandler(requestTimeoutMs),
      }),
    );
  const increment = (key: Record<string, string>) => ({
    Update: { TableName: table.tableName, Key: key, UpdateExpression: 'ADD visits :one', ExpressionAttributeValues: { ':one': 1 } },
  });
  const visitsOf = async (key: Record<string, string>) =>
    (await table.documentClient.send(new GetCommand({ TableName: table.tableName, Key: key, ConsistentRead: true }))).Item?.visits;

  it('meets a write held for a client over HTTP as that client would: TransactionConflict, with the SDK\'s exception', async () => {
    const shared = keyOf(uniqueId('SHARED'));
    const overHttp = table.documentClient.send(new TransactWriteCommand({ TransactItems: [increment(shared)] }));
    await untilHeld(table, 1);

    const refused = await rejectionOf(inProcessClient().send(new TransactWriteCommand({ TransactItems: [increment(shared)] })));

    expect(refused).toBeInstanceOf(TransactionCanceledException);
    expect((refused as TransactionCanceledException).CancellationReasons?.map(({ Code }) => Code)).toEqual(['TransactionConflict']);
    await overHttp;
    expect(await visitsOf(shared)).toBe(1);
  });

  it('gives up a call past its request timeout with the SDK handler\'s TimeoutError, and the write it handed on commits all the same', async () => {
    const key = keyOf(uniqueId('SLOW'));

    const refused = await rejectionOf(impatientClient(100).send(new TransactWriteCommand({ TransactItems: [increment(key)] })));

    expect(refused).toMatchObject({ name: 'TimeoutError', code: 'ETIMEDOUT' });
    await vi.waitFor(async () => expect(await visitsOf(key)).toBe(1), { timeout: 10_000, interval: 50 });
  });

  it('drops the call as a dropped connection when DynamoDB Local cannot be reached, which the adapter reads as the store unavailable', async () => {
    const nowhere = await startConflictModel({ target: `http://127.0.0.1:${await freePort()}` });
    const client = new DynamoDBClient({
      endpoint: nowhere.endpoint,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
      requestHandler: nowhere.requestHandler(2_000),
    });
    try {
      const refused = await rejectionOf(client.send(new ListTablesCommand({})));

      expect(refused).toMatchObject({ code: 'ECONNRESET' });
      expect(isStoreUnavailable(refused)).toBe(true);
    } finally {
      client.destroy();
      await nowhere.stop();
    }
  });

  it('stops waiting for a call its caller aborts, with the SDK handler\'s AbortError', async () => {
    const abort = new AbortController();
    const call = inProcessClient().send(new TransactWriteCommand({ TransactItems: [increment(keyOf(uniqueId('ABORTED')))] }), { abortSignal: abort.signal });
    await untilHeld(table, 1);
    abort.abort();

    expect(await rejectionOf(call)).toMatchObject({ name: 'AbortError' });
    await vi.waitFor(() => expect(table.model.heldItems()).toBe(0), { timeout: 10_000, interval: 5 });
  });
});

describe("a partition's write budget (4 units a second, on a stopped clock)", () => {
  let table: ModelledTable;
  beforeAll(async () => {
    table = await createModelledTable({ holdMs: 0, writeUnitsPerSecond: 4, now: () => 0 });
  });
  afterAll(() => table.drop());

  it('throttles the writes past it as DynamoDB throttles an on-demand table, and not those of another partition key', async () => {
    const [hot, cool] = [uniqueId('HOT'), uniqueId('COOL')];
    const put = (partition: string, sort: string) => table.documentClient.send(new PutCommand({ TableName: table.tableName, Item: keyOf(partition, sort) }));
    for (const sort of ['1', '2', '3', '4']) await put(hot, sort);

    const throttled = await rejectionOf(put(hot, '5'));
    expect(throttled).toBeInstanceOf(ThrottlingException);
    expect((throttled as ThrottlingException).name).toBe('ThrottlingException');
    expect((throttled as ThrottlingException).throttlingReasons).toEqual([
      { reason: 'TableWriteKeyRangeThroughputExceeded', resource: expect.stringMatching(new RegExp(`:table/${table.tableName}$`)) },
    ]);
    // The SDK retried it itself, as it does every throttled call, before giving up.
    expect((throttled as ThrottlingException).$metadata.attempts).toBe(3);
    await put(cool, '1');

    // A transaction bills 2 units an item: the cool partition has 3 left, the hot one none.
    const cancelled = await rejectionOf(
      table.documentClient.send(
        new TransactWriteCommand({
          TransactItems: [{ Put: { TableName: table.tableName, Item: keyOf(cool, '2') } }, { Put: { TableName: table.tableName, Item: keyOf(hot, '6') } }],
        }),
      ),
    );
    expect(cancelled).toBeInstanceOf(TransactionCanceledException);
    expect((cancelled as TransactionCanceledException).CancellationReasons).toEqual([
      { Code: 'None' },
      { Code: 'ThrottlingError', Message: expect.stringMatching(/^Throughput exceeds the current capacity of your table or index/) },
    ]);

    const partitions = table.model.counters().partitions;
    expect(partitions.find(({ partitionKey: key }) => key === hot)).toMatchObject({ writeUnits: 4, throttles: 4, conflicts: 0 });
    expect(partitions.find(({ partitionKey: key }) => key === cool)).toMatchObject({ writeUnits: 1, throttles: 0 });
  });
});

describe('the adapter through the model', () => {
  let table: ModelledTable;
  beforeAll(async () => {
    table = await createModelledTable({ holdMs: 1_000 });
  });
  afterAll(() => table.drop());

  const observed = () => {
    const retries: (readonly string[])[] = [];
    const observer: StoreObserver = { transactionRetried: (codes) => retries.push(codes), raceLost: () => undefined };
    return { retries, observer };
  };
  const repositoryWith = (conflictRetry: ConflictRetryPolicy, observer: StoreObserver) =>
    new DynamoDbBatchRepository(table.documentClient, table.tableName, conflictRetry, undefined, observer);
  const batchOf = async (qty: number): Promise<NewBatch> => {
    const batch = { ref: uniqueId('batch'), sku: uniqueId('sku'), qty, eta: null };
    await table.repository().addBatch({ ...batch, available: qty });
    return batch;
  };

  it('sends an allocation cancelled by a conflict again, then spreads the batch it keeps meeting on and reads it again', async () => {
    const batch = await batchOf(10);
    const found = (await table.repository().batch(batch.ref))!;
    const first = table.repository().saveAllocation({ orderid: uniqueId('order'), sku: batch.sku, qty: 1, batchref: batch.ref }, found);
    await untilHeld(table, 2);
    const { retries, observer } = observed();
    const patient = repositoryWith({ maxAttempts: 100, baseDelayMs: 20, maxDelayMs: 100 }, observer);
    const line = { orderid: uniqueId('order'), sku: batch.sku, qty: 1, batchref: batch.ref };

    expect(await patient.saveAllocation(line, found)).toEqual({ outcome: 'read-again' });
    expect(await first).toEqual({ outcome: 'saved' });
    expect(retries.length).toBeGreaterThan(0);
    expect(retries[0]).toContain('TransactionConflict');
    const spread = (await table.repository().batch(batch.ref))!;
    expect(spread.available).toBe(9);
    expect(spread.pieces?.length).toBeGreaterThan(0);
    expect(await patient.saveAllocation(line, spread)).toEqual({ outcome: 'saved' });
    expect((await table.repository().batch(batch.ref))?.available).toBe(8);
  });

  it('answers StoreUnavailable when the conflicts outlast its attempts on a batch too small to spread', async () => {
    const batch = await batchOf(1);
    const found = (await table.repository().batch(batch.ref))!;
    const first = table.repository().saveAllocation({ orderid: uniqueId('order'), sku: batch.sku, qty: 1, batchref: batch.ref }, found);
    // Taking its last unit moves it out of the stock range: a delete, a put and the line.
    await untilHeld(table, 3);
    const { retries, observer } = observed();
    const hasty = repositoryWith({ maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 }, observer);

    const error = await rejectionOf(hasty.saveAllocation({ orderid: uniqueId('order'), sku: batch.sku, qty: 1, batchref: batch.ref }, found));
    expect(error).toBeInstanceOf(StoreUnavailable);
    expect((error as StoreUnavailable).cause).toBeInstanceOf(TransactionCanceledException);
    expect(retries).toHaveLength(2);
    expect(await first).toEqual({ outcome: 'saved' });
    expect((await table.repository().batch(batch.ref))?.available).toBe(0);
  });
});

describe('50 allocations racing for a batch of 10 through the model (writes held 20 ms)', () => {
  let table: ModelledTable;
  beforeAll(async () => {
    table = await createModelledTable({ holdMs: 20 });
  });
  afterAll(() => table.drop());

  it('oversells nothing: every answered allocation is a line, every line is stock the batch gave', async () => {
    const repository = table.repository();
    const batch = { ref: uniqueId('batch'), sku: uniqueId('sku'), qty: 10, available: 10, eta: null };
    await repository.addBatch(batch);
    const before = table.model.counters();
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, () => allocate({ orderid: uniqueId('order'), sku: batch.sku, qty: 1 }, repository)),
    );

    const allocated = results.filter((result) => result.status === 'fulfilled');
    const refusals = new Set(results.flatMap((result) => (result.status === 'rejected' ? [(result.reason as Error).name] : [])));
    expect([...refusals].every((name) => ['OutOfStock', 'StoreUnavailable', 'AllocationContended'].includes(name))).toBe(true);
    expect(table.model.counters().conflicts - before.conflicts).toBeGreaterThan(0);

    const inventory = await readInventory(table.documentClient, table.tableName);
    expect(findViolations(inventory)).toEqual([]);
    const lines = inventory.lines.filter(({ sku }) => sku === batch.sku);
    expect(lines).toHaveLength(allocated.length);
    expect(inventory.batches.find(({ ref }) => ref === batch.ref)?.available).toBe(10 - lines.length);
  });
});
