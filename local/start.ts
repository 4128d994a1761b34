/**
 * `npm start`: the API on http://localhost:5005 (PORT overrides) over DynamoDB Local, or over the
 * DynamoDB at DYNAMODB_ENDPOINT when that is set. `--in-memory` keeps no data between runs.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createDynamoDbClient } from '../functions/store/client';
import { isStoreUnavailable } from '../functions/store/store-errors';
import { tableNameFromEnv } from '../functions/store/table';
import { type DynamoDbLocal, JavaUnavailable, startDynamoDbLocal } from './dynamodb-local';
import { createLocalServer } from './server';
import { ensureTable } from './table';

const DEFAULT_PORT = 5005;
const DATA_DIR = '.local/dynamodb';
const MAX_TABLE_RETRY_DELAY_MS = 5_000;

/**
 * Creates the table when it is missing, before the API listens. A store that is down is waited for
 * in the background while the API already answers (503, as the handlers do on AWS); any other
 * failure, such as credentials a real AWS endpoint refuses, stops the server.
 */
const prepareTable = async (tableName: string, onFailure: (error: unknown) => void): Promise<void> => {
  const client = createDynamoDbClient();
  const attempt = async () => {
    try {
      await ensureTable(client, tableName);
      client.destroy();
      return true;
    } catch (error) {
      if (isStoreUnavailable(error)) return false;
      client.destroy();
      throw error;
    }
  };
  try {
    if (await attempt()) return;
  } catch (error) {
    return onFailure(error);
  }
  console.log(`DynamoDB at ${process.env.DYNAMODB_ENDPOINT} does not answer; the API answers 503 until it does.`);
  const retry = async (delayMs: number): Promise<void> => {
    await sleep(delayMs);
    if (await attempt()) console.log(`DynamoDB answers now; table ${tableName} is ready.`);
    else await retry(Math.min(MAX_TABLE_RETRY_DELAY_MS, delayMs * 2));
  };
  retry(250).catch(onFailure);
};

const main = async () => {
  const inMemory = process.argv.includes('--in-memory');
  const port = Number(process.env.PORT ?? DEFAULT_PORT);
  let dynamoDbLocal: DynamoDbLocal | undefined;

  if (!process.env.DYNAMODB_ENDPOINT) {
    dynamoDbLocal = await startDynamoDbLocal(inMemory ? {} : { dataDir: DATA_DIR });
    // The handler modules build their client from the environment when they load, below.
    process.env.DYNAMODB_ENDPOINT = dynamoDbLocal.endpoint;
  }
  const tableName = tableNameFromEnv();
  const stopOnFailure = async (error: unknown) => {
    console.error(`Cannot prepare table ${tableName}:`, error instanceof Error ? error.message : error);
    await dynamoDbLocal?.stop();
    process.exit(1);
  };
  await prepareTable(tableName, stopOnFailure);
  const [allocate, addBatch] = await Promise.all([import('../functions/allocate'), import('../functions/add-batch')]);
  const server = createLocalServer({ 'POST /allocate': allocate.handler, 'POST /add_batch': addBatch.handler });

  const shutdown = async () => {
    server.close();
    server.closeAllConnections();
    await dynamoDbLocal?.stop();
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);

  server.listen(port, () => {
    const store = dynamoDbLocal
      ? `DynamoDB Local at ${dynamoDbLocal.endpoint} (${inMemory ? 'in memory' : `data in ${DATA_DIR}`})`
      : `DynamoDB at ${process.env.DYNAMODB_ENDPOINT}`;
    console.log(`Allocation service listening on http://localhost:${port}\n  table ${tableName} on ${store}\n  Ctrl-C stops it.`);
  });
  server.on('error', async (error) => {
    console.error(`Cannot listen on port ${port}: ${error.message}`);
    await dynamoDbLocal?.stop();
    process.exit(1);
  });
};

main().catch((error: unknown) => {
  console.error(error instanceof JavaUnavailable ? error.message : error);
  process.exit(1);
});
