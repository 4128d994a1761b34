import { randomUUID } from 'node:crypto';
import { DynamoDbBatchRepository } from '../../functions/store/batch-repository';
import type { DocumentSender } from '../../functions/store/store-calls';
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
 * The store floor: the least any design must do per allocation, issued to DynamoDB through the
 * service's own adapter (so the key layout stays known to `functions/store/` alone) over a client with the service's settings, but without the handler and the domain. One
 * strongly consistent Query of the SKU's stock (`stockOf`), then one TransactWriteItems
 * (`saveAllocation`: the conditional decrement of the first batch with enough stock and the
 * conditional put of the line). Its stock lives in a table of its own.
 */
export const storeFloor = async (client: DocumentSender, tableName: string): Promise<Allocator> => {
  const repository = new DynamoDbBatchRepository(client, tableName);
  const skus = skuNames(`floor-${randomUUID().slice(0, 8)}`);
  for (const sku of skus) {
    for (const [ref, eta] of [[`${sku}-stock`, null], [`${sku}-shipment`, SHIPMENT_ETA]] as const) {
      await repository.addBatch({ ref, sku, qty: STOCK, available: STOCK, eta });
    }
  }
  let allocations = 0;
  return async () => {
    const sku = skus[allocations++ % skus.length] as string;
    const batch = (await repository.stockOf(sku)).batches.find(({ available }) => available >= QTY);
    if (!batch) throw new Error(`The floor found no stock for ${sku}`);
    const orderid = `order-${randomUUID()}`;
    const saved = await repository.saveAllocation({ orderid, sku, qty: QTY, batchref: batch.ref }, batch);
    if (saved.outcome !== 'saved') throw new Error(`The floor's allocation of ${sku} was not saved: ${saved.outcome}`);
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
