import { BatchWriteCommand, ScanCommand, type ScanCommandOutput } from '@aws-sdk/lib-dynamodb';
import type { DocumentSender } from '../../../functions/store/store-calls';
import { parseStoredItem } from '../../../functions/store/items';

/** Every item of the table, as stored, whatever it is. */
export const scanItems = async (client: DocumentSender, tableName: string): Promise<Record<string, unknown>[]> => {
  const items: Record<string, unknown>[] = [];
  let startKey: ScanCommandOutput['LastEvaluatedKey'];
  do {
    const page: ScanCommandOutput = await client.send(
      new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: startKey }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
};

/** Deletes every item of the table, 25 to a write: a model-based suite's table, between its sequences. */
export const emptyTable = async (client: DocumentSender, tableName: string): Promise<void> => {
  const items = await scanItems(client, tableName);
  for (let start = 0; start < items.length; start += 25) {
    const deletes = items.slice(start, start + 25).map(({ pk, sk }) => ({ DeleteRequest: { Key: { pk, sk } } }));
    await client.send(new BatchWriteCommand({ RequestItems: { [tableName]: deletes } }));
  }
};

/**
 * Every item of the table but out-of-stock notices, in a stable order, so two reads compare equal
 * exactly when nothing changed. A refusal for lack of stock writes its notice (for its OutOfStock
 * event) and nothing else; any other refusal writes nothing at all.
 */
export const tableContents = async (client: DocumentSender, tableName: string): Promise<string[]> =>
  (await scanItems(client, tableName))
    .filter((item) => parseStoredItem(item).kind !== 'out-of-stock')
    .map((item) => JSON.stringify(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : 1))))
    .sort();
