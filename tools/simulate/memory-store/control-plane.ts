import type { Catalog, StoredTable } from './catalog';
import { Unsupported, tableInUse, validation } from './errors';
import { REGION, Stream, epochSeconds } from './stream';
import { type IndexDefinition, type KeySchema, type ProjectionType, Table } from './table';

/*
 * The table calls the simulator makes (local/table.ts's ensureTable, a run's DeleteTable, the
 * stream reader's DescribeTable), answered with DynamoDB Local's descriptions: a table is ACTIVE
 * as soon as it is made, even in DeleteTable's answer, and counts its items and bytes live.
 */

type Request = Readonly<Record<string, unknown>>;

const TABLE_NAME = /^[a-zA-Z0-9_.-]{3,255}$/;
const ACCOUNT = '000000000000';

const tableArn = (name: string) => `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${name}`;

interface KeySchemaElement {
  readonly AttributeName: string;
  readonly KeyType: 'HASH' | 'RANGE';
}

/** A key of a hash and a range attribute, both strings: the only kind this store keeps. */
const keysOf = (elements: unknown, definitions: readonly { AttributeName: string; AttributeType: string }[], of: string): KeySchema => {
  const schema = elements as readonly KeySchemaElement[];
  const hash = schema.find(({ KeyType }) => KeyType === 'HASH')?.AttributeName;
  const range = schema.find(({ KeyType }) => KeyType === 'RANGE')?.AttributeName;
  if (hash === undefined || range === undefined || schema.length !== 2) throw new Unsupported(`a key schema of ${of} other than a hash and a range key`);
  for (const name of [hash, range]) {
    if (definitions.find(({ AttributeName }) => AttributeName === name)?.AttributeType !== 'S') throw new Unsupported(`a key attribute (${name}) of a type other than S`);
  }
  return { hash, range };
};

export const createTable = (catalog: Catalog, request: Request) => {
  const name = String(request.TableName);
  if (!TABLE_NAME.test(name)) {
    throw validation(
      "Invalid table/index name.  Table/index names must be between 3 and 255 characters long, and may contain only the characters a-z, A-Z, 0-9, '_', '-', and '.'",
    );
  }
  if (catalog.tables.has(name)) throw tableInUse();
  if (request.BillingMode !== 'PAY_PER_REQUEST') throw new Unsupported('tables of provisioned capacity');
  if (request.LocalSecondaryIndexes !== undefined) throw new Unsupported('local secondary indexes');
  const definitions = request.AttributeDefinitions as { AttributeName: string; AttributeType: string }[];
  const indexes = (request.GlobalSecondaryIndexes ?? []) as StoredTable['indexes'];
  const indexDefinitions = indexes.map(({ IndexName, KeySchema, Projection }): IndexDefinition => {
    const { ProjectionType: type, NonKeyAttributes = [] } = Projection as { ProjectionType: ProjectionType; NonKeyAttributes?: string[] };
    return { name: IndexName, keys: keysOf(KeySchema, definitions, `index ${IndexName}`), projection: { type, nonKeyAttributes: NonKeyAttributes } };
  });
  const streamSpecification = request.StreamSpecification as { StreamEnabled?: boolean; StreamViewType?: string } | undefined;
  if (streamSpecification?.StreamEnabled && streamSpecification.StreamViewType !== 'NEW_AND_OLD_IMAGES') {
    throw new Unsupported(`streams of view ${streamSpecification.StreamViewType}`);
  }
  const createdAt = catalog.now();
  const stream = streamSpecification?.StreamEnabled
    ? new Stream(tableArn(name), name, request.KeySchema, createdAt, catalog.firstSequenceOfNewStream(), catalog.nextShardNumber())
    : undefined;
  const stored: StoredTable = {
    table: new Table(name, keysOf(request.KeySchema, definitions, `table ${name}`), indexDefinitions),
    createdAt,
    attributeDefinitions: definitions,
    keySchema: request.KeySchema,
    indexes,
    ...(stream ? { stream } : {}),
    transactionTokens: new Set(),
  };
  catalog.tables.set(name, stored);
  if (stream) catalog.streams.set(stream.arn, stream);
  return { TableDescription: description(stored) };
};

const description = ({ table, createdAt, attributeDefinitions, keySchema, indexes, stream }: StoredTable) => ({
  AttributeDefinitions: attributeDefinitions,
  TableName: table.name,
  KeySchema: keySchema,
  TableStatus: 'ACTIVE',
  CreationDateTime: epochSeconds(createdAt),
  ProvisionedThroughput: { LastIncreaseDateTime: 0, LastDecreaseDateTime: 0, NumberOfDecreasesToday: 0, ReadCapacityUnits: 0, WriteCapacityUnits: 0 },
  TableSizeBytes: table.sizeBytes,
  ItemCount: table.itemCount,
  TableArn: tableArn(table.name),
  BillingModeSummary: { BillingMode: 'PAY_PER_REQUEST', LastUpdateToPayPerRequestDateTime: epochSeconds(createdAt) },
  ...(indexes.length > 0
    ? {
        GlobalSecondaryIndexes: [...indexes]
          .sort((a, b) => hashMapBucket(a.IndexName) - hashMapBucket(b.IndexName))
          .map(({ IndexName, KeySchema, Projection }) => {
            const { itemCount, sizeBytes } = table.indexSizes(IndexName);
            return {
              IndexName,
              KeySchema,
              Projection,
              IndexStatus: 'ACTIVE',
              IndexSizeBytes: sizeBytes,
              ItemCount: itemCount,
              IndexArn: `${tableArn(table.name)}/index/${IndexName}`,
            };
          }),
      }
    : {}),
  ...(stream
    ? {
        StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
        LatestStreamLabel: stream.label,
        LatestStreamArn: stream.arn,
      }
    : {}),
  DeletionProtectionEnabled: false,
});

export const describeTable = (catalog: Catalog, request: Request) => ({ Table: description(catalog.table(request.TableName)) });

/** The table and its stream are dropped at once: nothing reads a dropped table's stream, and a simulator's run drops one table each. */
export const deleteTable = (catalog: Catalog, request: Request) => {
  const stored = catalog.table(request.TableName);
  catalog.tables.delete(stored.table.name);
  if (stored.stream) catalog.streams.delete(stored.stream.arn);
  return { TableDescription: description(stored) };
};

export const describeTimeToLive = (catalog: Catalog, request: Request) => {
  const { timeToLiveAttribute } = catalog.table(request.TableName);
  return {
    TimeToLiveDescription: timeToLiveAttribute === undefined ? { TimeToLiveStatus: 'DISABLED' } : { TimeToLiveStatus: 'ENABLED', AttributeName: timeToLiveAttribute },
  };
};

/** DynamoDB Local reports the time to live and deletes nothing by it within a run's life; neither does this store. */
export const updateTimeToLive = (catalog: Catalog, request: Request) => {
  const stored = catalog.table(request.TableName);
  const specification = request.TimeToLiveSpecification as { Enabled: boolean; AttributeName: string };
  if (!specification.Enabled) throw new Unsupported('turning the time to live off');
  if (stored.timeToLiveAttribute !== undefined) throw validation('TimeToLive is already enabled');
  stored.timeToLiveAttribute = specification.AttributeName;
  return { TimeToLiveSpecification: specification };
};

/**
 * Where a name falls among the 16 buckets of a Java HashMap, whose order DynamoDB Local lists a
 * table's indexes in (a HashMap of a few entries has 16; the names here fall in different ones):
 * String.hashCode, its high half folded into the low, the low four bits.
 */
const hashMapBucket = (name: string): number => {
  let hash = 0;
  for (let index = 0; index < name.length; index++) hash = (Math.imul(31, hash) + name.charCodeAt(index)) | 0;
  return (hash ^ (hash >>> 16)) & 15;
};
