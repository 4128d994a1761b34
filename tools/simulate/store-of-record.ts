import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { createDynamoDbClient } from '../../functions/store/client';

/** DynamoDB Local, where every run's calls are sent and its table's stream is read. */
export interface StoreOfRecord {
  readonly tables: DynamoDBClient;
  readonly streams: DynamoDBStreamsClient;
  destroy(): void;
}

export const storeOfRecord = (endpoint: string): StoreOfRecord => {
  const tables = createDynamoDbClient(endpoint);
  // The table client's region and credentials, whatever they resolve to for this endpoint.
  const streams = new DynamoDBStreamsClient({ endpoint, region: tables.config.region, credentials: tables.config.credentials });
  return {
    tables,
    streams,
    destroy: () => {
      tables.destroy();
      streams.destroy();
    },
  };
};
