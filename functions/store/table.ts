/**
 * The one definition of the table's shape, shared by the DynamoDB adapter, the local server (which
 * creates the table when it is missing) and the CDK stack, so the three cannot drift apart.
 */
export const tableKeySchema = {
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
} as const;

/** The table name the local server and tests use when `TABLE_NAME` is not set. */
const defaultLocalTableName = 'allocations';

export const tableNameFromEnv = (): string => process.env.TABLE_NAME ?? defaultLocalTableName;
