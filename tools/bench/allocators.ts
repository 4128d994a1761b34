import { randomUUID } from 'node:crypto';
import { type DynamoDBDocumentClient, PutCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { JsonPoster } from './load';

/*
 * The two ways the bench allocates, over the same kind of stock: SKUs with one batch in stock and
 * one shipment each, so that each allocation's query returns two batches, and a quantity of 1 from
 * a stock that never runs out. Requests take the SKUs in turn.
 */

const SKU_COUNT = 32;
const STOCK = 1_000_000_000;
const SHIPMENT_ETA = '2030-01-01';
const QTY = 1;

export type Allocator = () => Promise<void>;

const skuNames = (prefix: string) => Array.from({ length: SKU_COUNT }, (_, index) => `${prefix}-${index}`);

/**
 * The store floor: the least any design must do per allocation, issued straight to DynamoDB with the
 * service's own client settings. One strongly consistent Query of the SKU's batches, then one
 * TransactWriteItems: the conditional decrement of a batch and the conditional put of the line.
 * Its items have the service's shape, in a table of their own.
 */
export const storeFloor = async (client: DynamoDBDocumentClient, tableName: string): Promise<Allocator> => {
  const skus = skuNames(`floor-${randomUUID().slice(0, 8)}`);
  for (const sku of skus) {
    for (const [ref, eta] of [[`${sku}-stock`, null], [`${sku}-shipment`, SHIPMENT_ETA]] as const) {
      const item = { pk: `SKU#${sku}`, sk: `BATCH#${ref}`, type: 'Batch', ref, sku, qty: STOCK, available: STOCK, eta };
      await client.send(new PutCommand({ TableName: tableName, Item: item }));
    }
  }
  let allocations = 0;
  return async () => {
    const sku = skus[allocations++ % skus.length] as string;
    const orderid = `order-${randomUUID()}`;
    const { Items = [] } = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': `SKU#${sku}` },
        ConsistentRead: true,
      }),
    );
    const batch = Items.find((item) => item.available >= QTY);
    if (!batch) throw new Error(`The floor found no stock for ${sku}`);
    await client.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName,
              Key: { pk: batch.pk, sk: batch.sk },
              UpdateExpression: 'SET available = available - :qty',
              ConditionExpression: 'available >= :qty',
              ExpressionAttributeValues: { ':qty': QTY },
            },
          },
          {
            Put: {
              TableName: tableName,
              Item: { pk: `ORDER#${orderid}`, sk: `LINE#${sku}`, type: 'Line', orderid, sku, qty: QTY, batchref: batch.ref },
              ConditionExpression: 'attribute_not_exists(pk)',
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
        ],
      }),
    );
  };
};

/** The service: POST /allocate through the local server, its stock added with POST /add_batch. */
export const serviceOverHttp = async (http: JsonPoster): Promise<Allocator> => {
  const skus = skuNames(`service-${randomUUID().slice(0, 8)}`);
  for (const sku of skus) {
    for (const [ref, eta] of [[`${sku}-stock`, null], [`${sku}-shipment`, SHIPMENT_ETA]] as const) {
      const answer = await http.post('/add_batch', { ref, sku, qty: STOCK, eta });
      if (answer.status !== 201) throw new Error(`add_batch answered ${answer.status}: ${answer.body}`);
    }
  }
  let allocations = 0;
  return async () => {
    const sku = skus[allocations++ % skus.length] as string;
    const answer = await http.post('/allocate', { orderid: `order-${randomUUID()}`, sku, qty: QTY });
    if (answer.status !== 201) throw new Error(`allocate answered ${answer.status}: ${answer.body}`);
  };
};
