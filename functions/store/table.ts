/**
 * The one definition of the table's shape, shared by the DynamoDB adapter, the local server (which
 * creates the table when it is missing) and the CDK stack, so the three cannot drift apart.
 */
export const tableKeySchema = {
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
} as const;

/**
 * What each kind of item's partition key starts with. The adapter builds every key from these, and
 * the stack grants each function only the prefixes of the items it touches (IAM's
 * `dynamodb:LeadingKeys`), so a key layout and its permissions change together.
 */
export const partitionKeyPrefix = {
  /** A SKU's batches, and the item that says the SKU is known. */
  sku: 'SKU#',
  /** The item that keeps a batch reference unique across SKUs. */
  batchReference: 'BATCHREF#',
  /** An order's allocated lines. */
  order: 'ORDER#',
} as const;

const keyAttributes = [tableKeySchema.partitionKey.name, tableKeySchema.sortKey.name];
const batchAttributes = ['type', 'ref', 'sku', 'qty', 'available', 'eta'];

/**
 * What each handler may do to the table: its read and write actions, the partition key prefixes of
 * the items it touches, and the attributes its writes name. The stack turns this into each role's
 * policy, and a test checks every call the adapter sends for each handler against it.
 */
export interface TableAccess {
  readonly reads: readonly string[];
  readonly writes: readonly string[];
  readonly partitionKeyPrefixes: readonly string[];
  readonly writtenAttributes: readonly string[];
}

export const tableAccess = {
  // A Query of the SKU's stock and a GetItem of the line (is it already allocated?), then a
  // transaction: a conditional Update of the batch (or, when the line takes its last unit, a
  // conditional Delete of it and a Put of it as exhausted) and a conditional Put of the line.
  // A transaction is authorized action by action, so it needs no action of its own.
  allocate: {
    reads: ['dynamodb:Query', 'dynamodb:GetItem'],
    writes: ['dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'],
    partitionKeyPrefixes: [partitionKeyPrefix.sku, partitionKeyPrefix.order],
    writtenAttributes: [...keyAttributes, ...batchAttributes, 'orderid', 'batchref'],
  },
  // A transaction of Puts: the batch, its reference and the SKU's known-SKU item.
  addBatch: {
    reads: [],
    writes: ['dynamodb:PutItem'],
    partitionKeyPrefixes: [partitionKeyPrefix.sku, partitionKeyPrefix.batchReference],
    writtenAttributes: [...keyAttributes, ...batchAttributes],
  },
} as const satisfies Record<string, TableAccess>;

/** The table name the local server and tests use when `TABLE_NAME` is not set. */
const defaultLocalTableName = 'allocations';

export const tableNameFromEnv = (): string => process.env.TABLE_NAME ?? defaultLocalTableName;
