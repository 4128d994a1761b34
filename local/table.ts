import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  ResourceNotFoundException,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { tableKeySchema } from '../functions/store/table';

/** Creates the service's table when it is missing, with the key schema the CDK stack deploys. */
export const ensureTable = async (client: DynamoDBClient, tableName: string): Promise<void> => {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  const { partitionKey, sortKey } = tableKeySchema;
  try {
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
  } catch (error) {
    // Another process created it between the two calls.
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists({ client, maxWaitTime: 60 }, { TableName: tableName });
};
