import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { createDynamoDbClient } from '../../functions/store/client';

/** DynamoDB Local, or a stand-in held to it, where every run's calls are sent and its table's stream is read. */
export interface StoreOfRecord {
  readonly tables: DynamoDBClient;
  readonly streams: DynamoDBStreamsClient;
  /** How long its stream may keep a committed write's record back: the stream reader waits for late records by it. */
  readonly streamLagMs: number;
  destroy(): void;
}

/** DynamoDB Local keeps a stream record back about 50 ms. */
export const DYNAMODB_LOCAL_STREAM_LAG_MS = 50;

export const storeOfRecord = (endpoint: string): StoreOfRecord => {
  const tables = createDynamoDbClient(endpoint);
  // The table client's region and credentials, whatever they resolve to for this endpoint.
  const streams = new DynamoDBStreamsClient({ endpoint, region: tables.config.region, credentials: tables.config.credentials });
  return {
    tables,
    streams,
    streamLagMs: DYNAMODB_LOCAL_STREAM_LAG_MS,
    destroy: () => {
      tables.destroy();
      streams.destroy();
    },
  };
};
