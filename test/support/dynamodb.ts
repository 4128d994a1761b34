import { randomUUID } from 'node:crypto';
import { CreateTableCommand, DeleteTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { inject } from 'vitest';
import { DynamoDbBatchRepository } from '../../functions/store/batch-repository';
import type { ConflictRetryPolicy, DocumentSender } from '../../functions/store/store-calls';
import { createDynamoDbClient } from '../../functions/store/client';
import { tableKeySchema } from '../../functions/store/table';
import { worldAt } from '../../functions/store/world';
import { ensureTable } from '../../local/table';

export interface TestTable {
  readonly endpoint: string;
  readonly tableName: string;
  readonly client: DynamoDBClient;
  readonly documentClient: DynamoDBDocumentClient;
  /** A repository over this table, optionally through another client (one that fails on purpose), or by a clock the test sets. */
  repository(options?: { sender?: DocumentSender; conflictRetry?: ConflictRetryPolicy; clock?: () => number }): DynamoDbBatchRepository;
  drop(): Promise<void>;
}

/** The DynamoDB Local of this test file's worker (test/support/dynamodb-local.global.ts). */
export const dynamoDbEndpoint = (): string => {
  const endpoints = inject('dynamoDbEndpoints');
  const endpoint = endpoints[Number(process.env.VITEST_POOL_ID ?? '1') - 1];
  // Never the SDK's default endpoint: a test must not reach AWS.
  if (endpoint === undefined) throw new Error(`No DynamoDB Local for worker ${process.env.VITEST_POOL_ID} of ${endpoints.length}`);
  return endpoint;
};

/**
 * A fresh table in its worker's DynamoDB Local, so test files never see each other's data; reached
 * through `endpoint` when given (a conflict model in front of it, ./conflict-model.ts).
 */
export const createTestTable = async (endpoint = dynamoDbEndpoint()): Promise<TestTable> => {
  const tableName = `test-${randomUUID()}`;
  const client = createDynamoDbClient(endpoint);
  await ensureTable(client, tableName);
  const documentClient = DynamoDBDocumentClient.from(client);
  return {
    endpoint,
    tableName,
    client,
    documentClient,
    repository: ({ sender = documentClient, conflictRetry, clock } = {}) =>
      new DynamoDbBatchRepository(sender, tableName, conflictRetry, undefined, undefined, clock && worldAt(clock)),
    drop: async () => {
      await client.send(new DeleteTableCommand({ TableName: tableName }));
      client.destroy();
    },
  };
};

export const uniqueId = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

/** The table as 0.1.0 made it: its keys, and no index, stream or time to live, which later starts must add. */
export const createTableAsFirstReleased = async (client: DynamoDBClient, tableName: string): Promise<void> => {
  const { partitionKey, sortKey } = tableKeySchema;
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: partitionKey.name, AttributeType: partitionKey.type },
        { AttributeName: sortKey.name, AttributeType: sortKey.type },
      ],
      KeySchema: [
        { AttributeName: partitionKey.name, KeyType: 'HASH' },
        { AttributeName: sortKey.name, KeyType: 'RANGE' },
      ],
    }),
  );
};

/** A repository over the table at a moment the test picks, and the names of the calls it sends, in order. */
export const repositoryAt = (table: TestTable, now: number) => {
  const calls: string[] = [];
  const sender: DocumentSender = {
    send: ((command: object, options?: object) => {
      calls.push(command.constructor.name.replace(/Command$/, ''));
      return table.documentClient.send(command as never, options);
    }) as DocumentSender['send'],
  };
  return { repository: table.repository({ sender, clock: () => now }), calls };
};
