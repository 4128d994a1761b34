/**
 * `npm run check -- [--endpoint URL] [--table allocations]`: reads the whole table and prints every
 * broken invariant. Exit 0 when they all hold, 1 when one is broken, 2 when the table could not be
 * read. Without --endpoint it reads DYNAMODB_ENDPOINT; else, with AWS_REGION set, the AWS account
 * the environment's credentials name; else the DynamoDB Local of a running `npm start`. Run it on a
 * table at rest: a Scan during writes can see half a transaction.
 */
import { parseArgs } from 'node:util';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDynamoDbClient } from '../functions/store/client';
import { tableNameFromEnv } from '../functions/store/table';
import { STORE_ENDPOINT_FILE, recordedStoreEndpoint } from '../local/store-endpoint';
import { findViolations, readInventory } from './invariants';

const USAGE = `usage: npm run check -- [--endpoint URL] [--table allocations]

Reads the whole table and prints every broken invariant: exit 0 when they all hold, 1 when one is
broken, 2 when the table could not be read. Run it on a table at rest.

  --endpoint URL   the DynamoDB to read; without it, DYNAMODB_ENDPOINT, else the AWS account of the
                   environment's credentials when AWS_REGION is set, else the DynamoDB Local of a
                   running npm start (${STORE_ENDPOINT_FILE})
  --table NAME     the table (TABLE_NAME, else allocations)
  --help           this text`;

const main = async (): Promise<number> => {
  let options: { endpoint?: string; table?: string; help?: boolean };
  try {
    ({ values: options } = parseArgs({ options: { endpoint: { type: 'string' }, table: { type: 'string' }, help: { type: 'boolean' } } }));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  const endpoint = options.endpoint ?? process.env.DYNAMODB_ENDPOINT ?? (process.env.AWS_REGION ? undefined : recordedStoreEndpoint());
  if (endpoint === undefined && !process.env.AWS_REGION) {
    console.error(`No table to read: start npm start (its DynamoDB Local is read then), pass --endpoint URL, or set AWS_REGION and credentials for the deployed table.\n${USAGE}`);
    return 2;
  }
  const tableName = options.table ?? tableNameFromEnv();
  const client = createDynamoDbClient(endpoint);
  try {
    // Taken before the read: a hold unexpired then, in a table at rest, still has its units when read.
    const readAt = Date.now();
    const inventory = await readInventory(DynamoDBDocumentClient.from(client), tableName);
    const violations = findViolations(inventory, readAt);
    const where = `table ${tableName}${endpoint ? ` at ${endpoint}` : ''}`;
    const counted = `${inventory.batches.length} batches, ${inventory.lines.length} lines, ${inventory.holds.length} holds`;
    if (violations.length === 0) {
      console.log(`${where}: ${counted}; every invariant holds.`);
      return 0;
    }
    console.log(`${where}: ${counted}; ${violations.length} invariant violations:`);
    for (const { rule, message } of violations) console.log(`  [${rule}] ${message}`);
    return 1;
  } catch (error) {
    console.error(`Could not read ${tableName}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    return 2;
  } finally {
    client.destroy();
  }
};

// exitCode rather than exit(): output to a pipe is written asynchronously and exit() would cut it.
main().then((code) => {
  process.exitCode = code;
});
