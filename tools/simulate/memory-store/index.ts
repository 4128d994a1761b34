import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { HttpHandler } from '@smithy/core/protocols';
import type { RequestSigner } from '@smithy/types';
import { MAX_ATTEMPTS } from '../../../functions/store/client';
import type { StoreOfRecord } from '../store-of-record';
import { Catalog } from './catalog';
import { memoryRequestHandler } from './request-handler';

/*
 * DynamoDB Local's stand-in in this process: the simulator's table and stream clients, whose
 * calls are answered by an in-memory store (./request-handler.ts) instead of a round trip to the
 * Java server. The twin (./twin.ts) holds it to DynamoDB Local.
 */

/** The store answers whatever the URL; the clients need one to build their requests. */
const ENDPOINT = 'http://memory-store.invalid';
const REGION = 'local';
const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
/** The store reads no signature, so the clients make none: SigV4's hashing would be much of a call's cost here. */
const UNSIGNED: RequestSigner = { sign: async (request) => request };

/** Table and stream clients like those of createDynamoDbClient (functions/store/client.ts), sending through `requestHandler`. */
export const storeOfRecordThrough = (
  requestHandler: HttpHandler<Record<string, never>>,
  { endpoint, signer, streamLagMs, destroyed }: { endpoint: string; signer?: RequestSigner; streamLagMs: number; destroyed: () => void },
): StoreOfRecord => {
  const config = { endpoint, region: REGION, credentials: CREDENTIALS, requestHandler, ...(signer ? { signer } : {}) };
  const tables = new DynamoDBClient({ ...config, maxAttempts: MAX_ATTEMPTS });
  // As createDynamoDbClient does: no SDK logger is set, and its middleware copies every call's input and output.
  tables.middlewareStack.remove('loggerMiddleware');
  const streams = new DynamoDBStreamsClient(config);
  return {
    tables,
    streams,
    streamLagMs,
    destroy: () => {
      tables.destroy();
      streams.destroy();
      destroyed();
    },
  };
};

/** A store of record of its own, empty, held in this process's memory until destroyed. */
export const memoryStoreOfRecord = (): StoreOfRecord => {
  const catalog = new Catalog(() => Date.now());
  // Its stream has a record as soon as the write is done.
  return storeOfRecordThrough(memoryRequestHandler(catalog), { endpoint: ENDPOINT, signer: UNSIGNED, streamLagMs: 0, destroyed: () => catalog.clear() });
};
