import { type DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, PutCommand, TransactGetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { allocate } from '../../domain/services';
import { createBatchesHandler } from '../../functions/batches';
import { createAllocationsHandler } from '../../functions/allocations';
import type { DocumentSender } from '../../functions/store/store-calls';
import { createDocumentClient, createDynamoDbClient } from '../../functions/store/client';
import { DynamoDbBatchRepository } from '../../functions/store/batch-repository';
import { freePort } from '../../local/dynamodb-local';
import { type TestTable, createTestTable, uniqueId } from '../support/dynamodb';
import { lambdaContext, postEvent } from '../support/events';
import { captureTelemetry } from '../support/telemetry';

// DynamoDB Local never throttles and never reports a transaction conflict: these clients do, on
// purpose, in front of the real one.

let table: TestTable;
beforeAll(async () => {
  table = await createTestTable();
});
afterAll(() => table.drop());

const fastRetries = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 };

const conflict = () =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: [{ Code: 'TransactionConflict' }, { Code: 'None' }],
  });

const throttled = () =>
  Object.assign(new Error('Rate of requests exceeds the allowed throughput'), {
    name: 'ThrottlingException',
    $metadata: { httpStatusCode: 400 },
  });

/** Fails the first `times` transactions with `failure()`, then lets them through to DynamoDB Local. */
const failingTransactions = (times: number, failure: () => Error): DocumentSender & { failures: number } => {
  const sender = {
    failures: 0,
    send: (async (command: unknown, options?: object) => {
      if (command instanceof TransactWriteCommand && sender.failures < times) {
        sender.failures++;
        throw failure();
      }
      return table.documentClient.send(command as never, options);
    }) as DocumentSender['send'],
  };
  return sender;
};

/**
 * The service's own client (its retry settings included), on which DynamoDB answers every attempt
 * of a transaction with throttling: the fault sits below the SDK's retries, as on AWS.
 */
const clientWithThrottledTransactions = () => {
  const client = createDynamoDbClient(table.endpoint);
  const attempts = { count: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'TransactWriteItemsCommand') return next(args);
      attempts.count++;
      throw throttled();
    },
    { step: 'deserialize', name: 'throttleEveryTransactionAttempt' },
  );
  clients.push(client);
  return { sender: DynamoDBDocumentClient.from(client), attempts };
};
const clients: DynamoDBClient[] = [];
afterAll(() => {
  for (const client of clients) client.destroy();
});

const stockWith = async (qty: number) => {
  const batch = { ref: uniqueId('batch'), sku: uniqueId('sku'), qty, available: qty, eta: null };
  await table.repository().addBatch(batch);
  return batch;
};

const allocateThrough = (sender: DocumentSender, line: { orderid: string; sku: string; qty: number }) =>
  createAllocationsHandler(table.repository({ sender, conflictRetry: fastRetries }))(postEvent('/allocate', line), lambdaContext());

describe('allocating when the store pushes back', () => {
  it('retries a transaction conflict and then allocates', async () => {
    const batch = await stockWith(10);
    const sender = failingTransactions(2, conflict);
    const result = await allocateThrough(sender, { orderid: uniqueId('order'), sku: batch.sku, qty: 1 });
    expect(result.statusCode).toBe(201);
    expect(sender.failures).toBe(2);
  });

  it('answers 503 with Retry-After when conflicts outlast the retries, and writes nothing', async () => {
    const batch = await stockWith(10);
    const line = { orderid: uniqueId('order'), sku: batch.sku, qty: 1 };
    const result = await allocateThrough(failingTransactions(Infinity, conflict), line);
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['Retry-After']).toBe('1');
    expect(await table.repository().allocationOf(line.orderid, line.sku)).toBeUndefined();
    expect((await table.repository().stockOf(batch.sku)).batches[0]?.available).toBe(10);
  });

  it('answers 503 when throttling outlasts the client retries, after 3 attempts, and writes nothing', async () => {
    const batch = await stockWith(10);
    const line = { orderid: uniqueId('order'), sku: batch.sku, qty: 1 };
    const { sender, attempts } = clientWithThrottledTransactions();
    const result = await allocateThrough(sender, line);
    expect(result.statusCode).toBe(503);
    // docs/reliability.md, "Timeouts and retries": 3 attempts of a call, by the SDK, before the 503.
    expect(attempts.count).toBe(3);
    expect(await table.repository().allocationOf(line.orderid, line.sku)).toBeUndefined();
  });

  it('answers 503 when nothing listens at the endpoint', async () => {
    const unreachable = createDocumentClient(`http://127.0.0.1:${await freePort()}`);
    const handler = createAllocationsHandler(new DynamoDbBatchRepository(unreachable, table.tableName));
    const result = await handler(postEvent('/allocate', { orderid: 'o', sku: 's', qty: 1 }), lambdaContext());
    expect(result.statusCode).toBe(503);
    expect(JSON.parse(result.body ?? '').message).toMatch(/retry/i);
    unreachable.destroy();
  });
});

describe('reading a batch while a transaction moves it between its keys', () => {
  /**
   * Finds the batch at neither key by item (as a BatchGetItem can while a transaction moves it),
   * then cancels the transactional read that settles it `times` times for a write in flight.
   */
  const midMove = (times: number) => {
    const sender = {
      conflicts: 0,
      send: (async (command: unknown, options?: object) => {
        if (command instanceof BatchGetCommand) return { Responses: {} };
        if (command instanceof TransactGetCommand && sender.conflicts < times) {
          sender.conflicts++;
          throw new TransactionCanceledException({
            message: 'Transaction cancelled',
            $metadata: {},
            CancellationReasons: [{ Code: 'TransactionConflict' }, { Code: 'None' }],
          });
        }
        return table.documentClient.send(command as never, options);
      }) as DocumentSender['send'],
    };
    return sender;
  };

  it('reads it again when a write in flight cancels the transactional read', async () => {
    const batch = await stockWith(4);
    const sender = midMove(2);

    expect(await table.repository({ sender, conflictRetry: fastRetries }).batch(batch.ref, batch.sku)).toEqual(batch);
    expect(sender.conflicts).toBe(2);
  });

  it('answers StoreUnavailable (503), not a 500, when the conflicts outlast the retries', async () => {
    const batch = await stockWith(4);

    await expect(table.repository({ sender: midMove(Infinity), conflictRetry: fastRetries }).batch(batch.ref, batch.sku)).rejects.toMatchObject({
      name: 'StoreUnavailable',
    });
  });
});

describe("the store's pushing back, in the request's metrics", () => {
  const send = (sender: DocumentSender, event: ReturnType<typeof postEvent>) =>
    createAllocationsHandler(table.repository({ sender, conflictRetry: fastRetries }))(event, lambdaContext());
  const lineOf = (batch: { sku: string }) => postEvent('/allocate', { orderid: uniqueId('order'), sku: batch.sku, qty: 1 });

  it('counts each transaction retried after a conflict under its route, with no entry of its own at INFO', async () => {
    const batch = await stockWith(10);
    const telemetry = captureTelemetry();
    try {
      expect((await send(failingTransactions(2, conflict), lineOf(batch))).statusCode).toBe(201);
    } finally {
      telemetry.restore();
    }

    expect(telemetry.metrics.map(({ dimensions, counts }) => ({ dimensions, counts }))).toEqual([
      { dimensions: { service: 'allocation', operation: 'POST /allocate' }, counts: { ConflictsRetried: 2, LinesAllocated: 1 } },
    ]);
    expect(telemetry.entries.map(({ message }) => message)).toEqual(['Request']);
  });

  it('logs each retried transaction with its cancellation codes and request id when POWERTOOLS_LOG_LEVEL is DEBUG', async () => {
    const batch = await stockWith(10);
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'DEBUG');
    vi.resetModules();
    const telemetry = captureTelemetry();
    const event = lineOf(batch);
    try {
      // A logger built, as at a cold start, under that configuration.
      const { createAllocationsHandler: handlerLoggingAtDebug } = await import('../../functions/allocations');
      const handler = handlerLoggingAtDebug(table.repository({ sender: failingTransactions(1, conflict), conflictRetry: fastRetries }));
      expect((await handler(event, lambdaContext())).statusCode).toBe(201);
    } finally {
      telemetry.restore();
      vi.unstubAllEnvs();
    }

    expect(telemetry.entries.filter(({ level }) => level === 'DEBUG')).toEqual([
      expect.objectContaining({
        message: 'Transaction retried',
        requestId: event.requestContext.requestId,
        route: 'POST /allocate',
        cancellationCodes: ['TransactionConflict', 'None'],
      }),
    ]);
  });

  it('counts a write that found the stock taken since it was read, then the line allocated from the next batch', async () => {
    const taken = await stockWith(10);
    const next = { ref: uniqueId('batch'), sku: taken.sku, qty: 10, available: 10, eta: '2027-03-01' };
    await table.repository().addBatch(next);
    // Another request takes most of the first batch between this one's read and its write.
    let rivalled = false;
    const rivalFirst: DocumentSender = {
      send: (async (command: unknown, options?: object) => {
        if (command instanceof TransactWriteCommand && !rivalled) {
          rivalled = true;
          await allocate({ orderid: uniqueId('rival'), sku: taken.sku, qty: 7 }, table.repository());
        }
        return table.documentClient.send(command as never, options);
      }) as DocumentSender['send'],
    };
    const telemetry = captureTelemetry();
    try {
      const result = await send(rivalFirst, postEvent('/allocate', { orderid: uniqueId('order'), sku: taken.sku, qty: 4 }));
      expect(JSON.parse(result.body ?? '')).toEqual({ batchref: next.ref, location: 'default' });
    } finally {
      telemetry.restore();
    }

    expect(telemetry.metrics.map(({ counts }) => counts)).toEqual([{ ConflictsLost: 1, LinesAllocated: 1 }]);
  });
});

describe('refusing for lack of stock when its notice cannot be written', () => {
  it('still answers 400 "Out of stock", not a 5xx, and logs what it could not record', async () => {
    const batch = await stockWith(1);
    const refusingPuts: DocumentSender = {
      send: (async (command: unknown, options?: object) => {
        if (command instanceof PutCommand) throw throttled();
        return table.documentClient.send(command as never, options);
      }) as DocumentSender['send'],
    };
    const line = { orderid: uniqueId('order'), sku: batch.sku, qty: 2 };
    const telemetry = captureTelemetry();
    try {
      const result = await allocateThrough(refusingPuts, line);
      expect(result.statusCode).toBe(400);
      expect(JSON.parse(result.body ?? '').message).toMatch(/^Out of stock/);
    } finally {
      telemetry.restore();
    }
    expect(telemetry.entries.filter(({ level }) => level === 'ERROR')).toEqual([
      expect.objectContaining({ message: 'OutOfStock not recorded', lines: [line], cause: {
        name: 'StoreUnavailable',
        message: 'The store did not answer',
        cause: { name: 'ThrottlingException', message: expect.any(String) },
      } }),
    ]);
  });
});

describe('adding a batch when the store cancels for another reason than a duplicate', () => {
  it('answers 500, not "already exists", and writes nothing', async () => {
    const invalid = () =>
      new TransactionCanceledException({
        message: 'Transaction cancelled',
        $metadata: {},
        CancellationReasons: [{ Code: 'ValidationError' }, { Code: 'None' }],
      });
    const batch = { ref: uniqueId('batch'), sku: uniqueId('sku'), qty: 5, eta: null };
    const handler = createBatchesHandler(table.repository({ sender: failingTransactions(1, invalid), conflictRetry: fastRetries }));
    const result = await handler(postEvent('/add_batch', batch), lambdaContext());
    expect(result.statusCode).toBe(500);
    expect(await table.repository().stockOf(batch.sku)).toEqual({ known: false, batches: [] });
  });
});

describe('a store too slow for the time the function has left', () => {
  /** Lambda's context for an invocation that must answer within `budgetMs`, as Lambda counts it down. */
  const contextWithBudget = (budgetMs: number) => {
    const deadline = Date.now() + budgetMs;
    return { ...lambdaContext(), getRemainingTimeInMillis: () => deadline - Date.now() };
  };

  /**
   * Forwards each call to DynamoDB Local only after `delayMs`, unless the caller gives up first, as
   * a request abandoned before it was sent never reaches the store. Counts the calls it forwarded.
   */
  const slowStore = (delayMs: number) => {
    const store = {
      forwarded: 0,
      send: (async (command: unknown, options?: { abortSignal?: AbortSignal }) => {
        await sleep(delayMs, undefined, { signal: options?.abortSignal });
        store.forwarded++;
        return table.documentClient.send(command as never, options);
      }) as DocumentSender['send'],
    };
    return store;
  };

  it('answers 503 before the function times out, and writes nothing after answering', async () => {
    const batch = await stockWith(10);
    const line = { orderid: uniqueId('order'), sku: batch.sku, qty: 1 };
    const store = slowStore(1_200);
    const allocate = createAllocationsHandler(table.repository({ sender: store }));
    // With 1.6 s left the service answers about a second before the end, while the store is still
    // holding the first read: every later call would reach the store after the answer.
    const result = await allocate(postEvent('/allocate', line), contextWithBudget(1_600));

    expect(result.statusCode).toBe(503);
    expect(result.headers?.['Retry-After']).toBe('1');
    await sleep(3_000);
    expect(store.forwarded).toBe(0);
    expect(await table.repository().allocationOf(line.orderid, line.sku)).toBeUndefined();
    expect((await table.repository().stockOf(batch.sku)).batches[0]?.available).toBe(10);
  }, 15_000);
});
