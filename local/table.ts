import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  DynamoDBServiceException,
  ResourceInUseException,
  ResourceNotFoundException,
  type TableDescription,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { activeHoldsIndex, linesByBatchIndex, skuListsIndex, stockHistoryIndex, tableKeySchema, tableStreamViewType, timeToLiveAttribute } from '../functions/store/table';

const UPDATE_POLL_MS = 250;
const UPDATE_WAIT_MS = 60_000;

const { partitionKey, sortKey } = tableKeySchema;
const attributeDefinitions = [
  partitionKey,
  sortKey,
  linesByBatchIndex.partitionKey,
  linesByBatchIndex.sortKey,
  activeHoldsIndex.partitionKey,
  activeHoldsIndex.sortKey,
  stockHistoryIndex.partitionKey,
  stockHistoryIndex.sortKey,
  skuListsIndex.partitionKey,
  skuListsIndex.sortKey,
].map(({ name, type }) => ({ AttributeName: name, AttributeType: type }));
const keySchemaOf = (index: typeof linesByBatchIndex | typeof activeHoldsIndex | typeof stockHistoryIndex | typeof skuListsIndex) => [
  { AttributeName: index.partitionKey.name, KeyType: 'HASH' as const },
  { AttributeName: index.sortKey.name, KeyType: 'RANGE' as const },
];
/** As infra/constructs/table.ts deploys them. */
const indexes = [
  { IndexName: linesByBatchIndex.name, KeySchema: keySchemaOf(linesByBatchIndex), Projection: { ProjectionType: 'ALL' as const } },
  {
    IndexName: activeHoldsIndex.name,
    KeySchema: keySchemaOf(activeHoldsIndex),
    Projection: { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: ['holdid'] },
  },
  { IndexName: stockHistoryIndex.name, KeySchema: keySchemaOf(stockHistoryIndex), Projection: { ProjectionType: 'ALL' as const } },
  { IndexName: skuListsIndex.name, KeySchema: keySchemaOf(skuListsIndex), Projection: { ProjectionType: 'KEYS_ONLY' as const } },
];
const stream = { StreamEnabled: true, StreamViewType: tableStreamViewType };

/**
 * Creates the service's table when it is missing, with the key schema, the indexes, the stream and
 * the time to live the CDK stack deploys; adds what is missing to a table made before them (a
 * developer's kept DynamoDB Local data), keeping what it holds. DynamoDB Local (3.3.0) accepts the
 * time to live and reports it enabled, but deletes no expired item: a local table keeps its notices.
 */
export const ensureTable = async (client: DynamoDBClient, tableName: string): Promise<void> => {
  const existing = await describe(client, tableName);
  if (existing) {
    for (const index of indexes) {
      if (!existing.GlobalSecondaryIndexes?.some(({ IndexName }) => IndexName === index.IndexName)) await addIndex(client, tableName, index);
    }
    if (!existing.StreamSpecification?.StreamEnabled) await enableStream(client, tableName);
    else if (existing.StreamSpecification.StreamViewType !== tableStreamViewType) {
      // Only a stream of both images tells what a change did; changing the view means a new stream.
      throw new Error(
        `Table ${tableName} streams ${existing.StreamSpecification.StreamViewType}, and its events need ${tableStreamViewType}: ` +
          'disable its stream (aws dynamodb update-table --stream-specification StreamEnabled=false) and start again',
      );
    }
  } else {
    await createTable(client, tableName);
  }
  await enableTimeToLive(client, tableName);
};

const createTable = async (client: DynamoDBClient, tableName: string): Promise<void> => {
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
        GlobalSecondaryIndexes: indexes,
        StreamSpecification: stream,
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

/** Polls the table until `isDone` holds of it: DynamoDB answers an update before the update is in place. */
const waitForTable = async (client: DynamoDBClient, tableName: string, what: string, isDone: (table: TableDescription) => boolean) => {
  const startedAt = Date.now();
  while (Date.now() - startedAt < UPDATE_WAIT_MS) {
    const table = await describe(client, tableName);
    if (table && isDone(table)) return;
    await sleep(UPDATE_POLL_MS);
  }
  throw new Error(`${what} of table ${tableName} is not in place after ${UPDATE_WAIT_MS / 1000} s`);
};

/** One index per call: DynamoDB creates one index per UpdateTable. */
const addIndex = async (client: DynamoDBClient, tableName: string, index: (typeof indexes)[number]): Promise<void> => {
  await client.send(
    new UpdateTableCommand({ TableName: tableName, AttributeDefinitions: attributeDefinitions, GlobalSecondaryIndexUpdates: [{ Create: index }] }),
  );
  await waitForTable(client, tableName, `Index ${index.IndexName}`, ({ GlobalSecondaryIndexes }) =>
    GlobalSecondaryIndexes?.find(({ IndexName }) => IndexName === index.IndexName)?.IndexStatus === 'ACTIVE',
  );
};

/** In a call of its own: DynamoDB takes one kind of change per UpdateTable. */
const enableStream = async (client: DynamoDBClient, tableName: string): Promise<void> => {
  await client.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: stream }));
  await waitForTable(client, tableName, 'The stream', ({ TableStatus, LatestStreamArn }) => TableStatus === 'ACTIVE' && LatestStreamArn !== undefined);
};

const timeToLiveStatus = async (client: DynamoDBClient, tableName: string) =>
  (await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }))).TimeToLiveDescription?.TimeToLiveStatus;

/**
 * Turns the time to live on when it is off: DynamoDB refuses an UpdateTimeToLive (a
 * ValidationException) while one is in effect or under way, DynamoDB Local included.
 */
const enableTimeToLive = async (client: DynamoDBClient, tableName: string): Promise<void> => {
  if ((await timeToLiveStatus(client, tableName)) !== 'DISABLED') return;
  try {
    await client.send(
      new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { Enabled: true, AttributeName: timeToLiveAttribute } }),
    );
  } catch (error) {
    // Another process turned it on between the two calls.
    if (!(error instanceof DynamoDBServiceException && error.name === 'ValidationException')) throw error;
    if ((await timeToLiveStatus(client, tableName)) === 'DISABLED') throw error;
  }
};
