import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  ResourceNotFoundException,
  type TableDescription,
  UpdateTableCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { linesByBatchIndex, tableKeySchema } from '../functions/store/table';

const INDEX_POLL_MS = 250;
const INDEX_WAIT_MS = 60_000;

const { partitionKey, sortKey } = tableKeySchema;
const attributeDefinitions = [partitionKey, sortKey, linesByBatchIndex.partitionKey, linesByBatchIndex.sortKey].map(
  ({ name, type }) => ({ AttributeName: name, AttributeType: type }),
);
const linesByBatch = {
  IndexName: linesByBatchIndex.name,
  KeySchema: [
    { AttributeName: linesByBatchIndex.partitionKey.name, KeyType: 'HASH' as const },
    { AttributeName: linesByBatchIndex.sortKey.name, KeyType: 'RANGE' as const },
  ],
  Projection: { ProjectionType: 'ALL' as const },
};

/**
 * Creates the service's table when it is missing, with the key schema and the index the CDK stack
 * deploys; adds the index to a table made before it existed (a developer's kept DynamoDB Local data).
 */
export const ensureTable = async (client: DynamoDBClient, tableName: string): Promise<void> => {
  const existing = await describe(client, tableName);
  if (existing) {
    if (!existing.GlobalSecondaryIndexes?.some(({ IndexName }) => IndexName === linesByBatchIndex.name)) {
      await addLinesByBatchIndex(client, tableName);
    }
    return;
  }
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: attributeDefinitions,
        KeySchema: [
          { AttributeName: partitionKey.name, KeyType: 'HASH' },
          { AttributeName: sortKey.name, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: [linesByBatch],
      }),
    );
  } catch (error) {
    // Another process created it between the two calls.
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists({ client, maxWaitTime: 60 }, { TableName: tableName });
};

const describe = async (client: DynamoDBClient, tableName: string): Promise<TableDescription | undefined> => {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return undefined;
    throw error;
  }
};

const addLinesByBatchIndex = async (client: DynamoDBClient, tableName: string): Promise<void> => {
  await client.send(
    new UpdateTableCommand({
      TableName: tableName,
      AttributeDefinitions: attributeDefinitions,
      GlobalSecondaryIndexUpdates: [{ Create: linesByBatch }],
    }),
  );
  const startedAt = Date.now();
  while (Date.now() - startedAt < INDEX_WAIT_MS) {
    const index = (await describe(client, tableName))?.GlobalSecondaryIndexes?.find(({ IndexName }) => IndexName === linesByBatchIndex.name);
    if (index?.IndexStatus === 'ACTIVE') return;
    await sleep(INDEX_POLL_MS);
  }
  throw new Error(`Index ${linesByBatchIndex.name} of table ${tableName} is not active after ${INDEX_WAIT_MS / 1000} s`);
};
