/**
 * `npm run check -- --endpoint http://127.0.0.1:8000 [--table allocations]`: reads the whole table
 * and prints every broken invariant. Exit 0 when they all hold, 1 when one is broken, 2 when the
 * table could not be read. Without --endpoint it reads DYNAMODB_ENDPOINT, else the AWS account the
 * environment's credentials name. Run it on a table at rest: a Scan during writes can see half a transaction.
 */
import { parseArgs } from 'node:util';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDynamoDbClient } from '../functions/store/client';
import { tableNameFromEnv } from '../functions/store/table';
import { findViolations, readInventory } from './invariants';

const USAGE = 'usage: npm run check -- [--endpoint http://127.0.0.1:8000] [--table allocations]';

const main = async (): Promise<number> => {
  let options: { endpoint?: string; table?: string };
  try {
    ({ values: options } = parseArgs({ options: { endpoint: { type: 'string' }, table: { type: 'string' } } }));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const endpoint = options.endpoint ?? process.env.DYNAMODB_ENDPOINT;
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
