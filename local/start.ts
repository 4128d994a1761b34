/**
 * `npm start`: the API on http://localhost:5005 (PORT overrides) over DynamoDB Local, or over the
 * DynamoDB at DYNAMODB_ENDPOINT when that is set. `--in-memory` keeps no data between runs.
 */
import { createDynamoDbClient } from '../functions/store/client';
import { tableNameFromEnv } from '../functions/store/table';
import { type DynamoDbLocal, JavaUnavailable, startDynamoDbLocal } from './dynamodb-local';
import { createLocalServer } from './server';
import { ensureTable } from './table';

const DEFAULT_PORT = 5005;
const DATA_DIR = '.local/dynamodb';

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
  const adminClient = createDynamoDbClient();
  await ensureTable(adminClient, tableName);
  adminClient.destroy();

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
