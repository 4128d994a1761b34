import { DeleteTableCommand, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoDbEndpoint } from '../support/dynamodb';
import { ensureTable } from '../../local/table';
import { type Mismatch, type TwinStoreOfRecord, twinStoreOfRecord } from '../../tools/simulate/memory-store/twin';
import { type RunRecord, planOf, runPlan } from '../../tools/simulate/simulation';
import { storyOf } from '../../tools/simulate/story';

/*
 * The memory store (tools/simulate/memory-store) held to DynamoDB Local: every call goes to both
 * through the twin, which keeps each difference between their answers (errors, cancellation
 * reasons, items, pages, stream records), and the run goes on with DynamoDB Local's. Simulator
 * seeds make the calls the service makes, in the orders races make them; the cases after them
 * make those the seeds may not meet.
 */

/**
 * Both modes, PCT at each depth and the random walk, fault rates of 0 to 10%, and every route
 * among them (orders, holds and their endings, transfers and their cancels, locations, the
 * sweeper and the clock): each call goes to DynamoDB Local as well, so a few seeds are kept here.
 * A run's calls are many and each waits on DynamoDB Local, which the first run also warms: seed 3
 * takes 11 s alone on two cores, and three times that beside another file, so each has 120 s.
 */
const SEEDS = [3, 5, 7, 10];

const described = ({ operation, differences, memory }: Mismatch) =>
  `${operation}: ${'refused' in memory ? `the memory store refused: ${memory.refused}` : differences.join('; ')}`;

describe('the memory store, held to DynamoDB Local', () => {
  let twin: TwinStoreOfRecord;
  let documents: DynamoDBDocumentClient;
  beforeAll(() => {
    twin = twinStoreOfRecord(dynamoDbEndpoint());
    documents = DynamoDBDocumentClient.from(twin.tables);
  });
  afterAll(() => twin.destroy());

  /** The differences the calls `during` makes find. */
  const mismatchesOf = async (during: () => Promise<unknown>): Promise<string[]> => {
    const before = twin.mismatches.length;
    await during();
    return twin.mismatches.slice(before).map(described);
  };

  let tablesMade = 0;
  /** A table of the service's shape for one case, dropped after it: dropping it compares the two streams whole. */
  const inTable = (work: (tableName: string) => Promise<void>) => async () => {
    const tableName = `memory-store-${++tablesMade}`;
    await ensureTable(twin.tables, tableName);
    try {
      await work(tableName);
    } finally {
      await twin.tables.send(new DeleteTableCommand({ TableName: tableName }));
    }
  };

  it.each(SEEDS)('seed %i: every call of the run is answered as DynamoDB Local answers it, and the run finds nothing wrong', async (seed) => {
    let run: RunRecord | undefined;
    const mismatches = await mismatchesOf(async () => {
      run = await runPlan(planOf(seed), twin);
    });
    expect(mismatches).toEqual([]);
    expect(run?.failures, run && storyOf(run)).toEqual([]);
  }, 120_000);

  it('refuses a transaction that names one item twice, unless a condition fails first: its items are gone through in order, each seeing the ones before', async () => {
    const answers: unknown[] = [];
    const mismatches = await mismatchesOf(
      inTable(async (TableName) => {
        const Key = { pk: 'SKU#s1', sk: 'STOCK#b1' };
        const put = { Put: { TableName, Item: { ...Key, qty: 5 } } };
        const sends = [
          [put, { Update: { TableName, Key, UpdateExpression: 'SET qty = :qty', ExpressionAttributeValues: { ':qty': 6 } } }],
          [put, { ConditionCheck: { TableName, Key, ConditionExpression: 'attribute_not_exists(pk)' } }],
        ];
        for (const TransactItems of sends) answers.push(await documents.send(new TransactWriteCommand({ TransactItems })).catch((error: unknown) => error));
        answers.push((await documents.send(new GetCommand({ TableName, Key, ConsistentRead: true }))).Item);
      }),
    );
    expect(mismatches).toEqual([]);
    const [twice, cancelled, stored] = answers;
    expect(twice).toMatchObject({ name: 'ValidationException', message: 'Transaction request cannot include multiple operations on one item' });
    expect(cancelled).toMatchObject({ name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }] });
    expect(stored).toBeUndefined();
  });

  it("answers a failed condition with the item it found, when asked for ALL_OLD, in a transaction's reasons and alone", async () => {
    let alone: unknown;
    let inTransaction: unknown;
    const mismatches = await mismatchesOf(
      inTable(async (TableName) => {
        const held = { pk: 'HOLD#h1', sk: 'HOLD', status: 'active', lines: [{ sku: 's1', qty: 2 }], routing: {} };
        await documents.send(new PutCommand({ TableName, Item: held }));
        const again = { TableName, Item: { ...held, status: 'released' }, ConditionExpression: 'attribute_not_exists(pk)', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const };
        alone = await documents.send(new PutCommand(again)).catch((error: unknown) => error);
        inTransaction = await documents
          .send(
            new TransactWriteCommand({
              TransactItems: [
                { Put: { TableName, Item: { pk: 'ORDER#o1', sk: 'LINE#s1' } } },
                { Put: again },
                { ConditionCheck: { TableName, Key: { pk: 'LOCATIONS', sk: 'north' }, ConditionExpression: 'attribute_exists(pk)' } },
              ],
            }),
          )
          .catch((error: unknown) => error);
      }),
    );
    expect(mismatches).toEqual([]);
    expect(alone).toMatchObject({ name: 'ConditionalCheckFailedException', Item: { status: { S: 'active' } } });
    expect(inTransaction).toBeInstanceOf(TransactionCanceledException);
    expect((inTransaction as TransactionCanceledException).CancellationReasons).toEqual([
      { Code: 'None' },
      { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed', Item: expect.objectContaining({ status: { S: 'active' } }) },
      // DynamoDB Local words a failed ConditionCheck with a full stop.
      { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed.' },
    ]);
  });

  it('pages a Query of an index as DynamoDB Local does, lines allocated at one moment included, newest first and oldest first', async () => {
    const pages: unknown[][] = [];
    const mismatches = await mismatchesOf(
      inTable(async (TableName) => {
        for (let line = 0; line < 7; line++) {
          const allocatedAt = `2026-06-01T00:00:0${line % 3}.000Z`;
          await documents.send(new PutCommand({ TableName, Item: { pk: `ORDER#o${line}`, sk: 'LINE#s1', lineBatch: 'LINES0#b1', allocatedAt } }));
        }
        for (const ScanIndexForward of [false, true]) {
          let ExclusiveStartKey: Record<string, unknown> | undefined;
          const keys: unknown[] = [];
          do {
            const page = await documents.send(
              new QueryCommand({
                TableName,
                IndexName: 'linesByBatch',
                KeyConditionExpression: 'lineBatch = :lines',
                ExpressionAttributeValues: { ':lines': 'LINES0#b1' },
                ScanIndexForward,
                Limit: 2,
                ExclusiveStartKey,
              }),
            );
            keys.push(...(page.Items ?? []).map(({ pk }) => pk));
            ExclusiveStartKey = page.LastEvaluatedKey;
          } while (ExclusiveStartKey);
          pages.push(keys);
        }
      }),
    );
    expect(mismatches).toEqual([]);
    const [newestFirst, oldestFirst] = pages as [unknown[], unknown[]];
    expect(newestFirst).toHaveLength(7);
    expect([...newestFirst].reverse()).toEqual(oldestFirst);
  });

  it("ends a full page of a partition's range without a LastEvaluatedKey when its last item is at the range's end", async () => {
    const lastKeys: unknown[] = [];
    const mismatches = await mismatchesOf(
      inTable(async (TableName) => {
        for (const sk of ['EVENT#1', 'EVENT#2', 'EVENT#3']) await documents.send(new PutCommand({ TableName, Item: { pk: 'SKU#s1', sk } }));
        const range = { TableName, KeyConditionExpression: 'pk = :sku AND sk BETWEEN :first AND :last', Limit: 2 };
        for (const [first, last] of [['EVENT#1', 'EVENT#2'], ['EVENT#1', 'EVENT#9']]) {
          const page = await documents.send(new QueryCommand({ ...range, ExpressionAttributeValues: { ':sku': 'SKU#s1', ':first': first, ':last': last } }));
          lastKeys.push(page.LastEvaluatedKey);
        }
      }),
    );
    expect(mismatches).toEqual([]);
    expect(lastKeys).toEqual([undefined, { pk: 'SKU#s1', sk: 'EVENT#2' }]);
  });

  it("answers a BatchGetItem's items in DynamoDB Local's order, which is not the order asked", async () => {
    let found: unknown[] = [];
    const mismatches = await mismatchesOf(
      inTable(async (TableName) => {
        const keys = Array.from({ length: 30 }, (_, index) => ({ pk: `SKU#s${index % 4}`, sk: `STOCK#b${index}` }));
        for (const key of keys.filter((_, index) => index % 3 !== 0)) await documents.send(new PutCommand({ TableName, Item: key }));
        const { Responses } = await documents.send(new BatchGetCommand({ RequestItems: { [TableName]: { Keys: keys, ConsistentRead: true } } }));
        found = Responses?.[TableName] ?? [];
      }),
    );
    expect(mismatches).toEqual([]);
    expect(found).toHaveLength(20);
  });

  it('makes a stream record only of a write that changed its item, and writes numbers as DynamoDB Local writes them', async () => {
    const mismatches = await mismatchesOf(
      inTable(async (TableName) => {
        const Key = { pk: 'SKU#s1', sk: 'STOCK#b1' };
        await documents.send(new PutCommand({ TableName, Item: { ...Key, qty: 5, available: 5, held: {} } }));
        await documents.send(new PutCommand({ TableName, Item: { ...Key, qty: 5, available: 5, held: {} } }));
        const change = (UpdateExpression: string, ExpressionAttributeValues: Record<string, unknown>) =>
          documents.send(new UpdateCommand({ TableName, Key, UpdateExpression, ExpressionAttributeValues, ReturnValues: 'ALL_NEW' }));
        await change('SET available = available + :delta, heldUnits = if_not_exists(heldUnits, :none) - :delta', { ':delta': 0, ':none': 0 });
        await change('SET available = available - :delta, ratio = :ratio + :ratio', { ':delta': 2, ':ratio': 0.25 });
        await documents.send(new DeleteCommand({ TableName, Key: { pk: 'SKU#s1', sk: 'STOCK#none' } }));
        await documents.send(new DeleteCommand({ TableName, Key }));
      }),
    );
    expect(mismatches).toEqual([]);
  });
});
