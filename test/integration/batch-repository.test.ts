import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuplicateBatch } from '../../domain/errors';
import { newBatch } from '../../domain/model';
import { allocate } from '../../domain/services';
import { type Allocation, type Batch } from '../../domain/model';
import { type DynamoDbBatchRepository, parseStoredItem } from '../../functions/store/batch-repository';
import { checkInvariants } from '../../tools/invariants';
import { scanItems } from '../reliability/support/table-contents';
import { type TestTable, createTestTable, uniqueId } from '../support/dynamodb';

let table: TestTable;
let repository: DynamoDbBatchRepository;

beforeAll(async () => {
  table = await createTestTable();
  repository = table.repository();
});
afterAll(() => table.drop());

const addBatch = async (qty: number, { sku = uniqueId('sku'), eta = null as string | null, ref = uniqueId('batch') } = {}) => {
  const batch = newBatch({ ref, sku, qty, eta });
  await repository.addBatch(batch);
  return batch;
};

/** The batch's stock, as the table holds it wherever the batch is: 0 for an exhausted one. */
const availableOf = async (sku: string, ref: string) => {
  const items = await scanItems(table.documentClient, table.tableName);
  const batches = items.map(parseStoredItem).filter((item) => item.kind === 'batch' && item.batch.sku === sku && item.batch.ref === ref);
  expect(batches).toHaveLength(1);
  return batches[0]?.kind === 'batch' ? batches[0].batch.available : undefined;
};

const lineOf = (batch: Batch, qty: number): Allocation => ({ orderid: uniqueId('order'), sku: batch.sku, qty, batchref: batch.ref });

describe('the DynamoDB batch repository', () => {
  it('reads back every batch of a SKU that has stock, and none of another', async () => {
    const sku = uniqueId('sku');
    const inStock = await addBatch(10, { sku });
    const shipment = await addBatch(5, { sku, eta: '2027-01-31' });
    await addBatch(1);
    const { known, batches } = await repository.stockOf(sku);
    expect(known).toBe(true);
    expect(batches.sort((a, b) => a.qty - b.qty)).toEqual([shipment, inStock]);
  });

  it('knows no SKU that never had a batch', async () => {
    expect(await repository.stockOf(uniqueId('sku'))).toEqual({ known: false, batches: [] });
  });

  it('stops reading a batch once a line takes its last unit, and still knows its SKU', async () => {
    const sku = uniqueId('sku');
    const emptied = await addBatch(4, { sku, eta: '2027-01-31' });
    const other = await addBatch(3, { sku });
    const line = lineOf(emptied, 4);

    expect(await repository.saveAllocation(line, emptied)).toEqual({ outcome: 'saved' });

    expect(await repository.stockOf(sku)).toEqual({ known: true, batches: [other] });
    expect(await availableOf(sku, emptied.ref)).toBe(0);
    expect(await repository.allocationOf(line.orderid, sku)).toEqual(line);
    expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
  });

  it('refuses to empty a batch whose stock changed since it was read, writing nothing', async () => {
    const batch = await addBatch(5);
    await repository.saveAllocation(lineOf(batch, 1), batch);
    const line = lineOf(batch, 5);

    expect(await repository.saveAllocation(line, batch)).toEqual({ outcome: 'batch-changed' });

    expect(await availableOf(batch.sku, batch.ref)).toBe(4);
    expect(await repository.allocationOf(line.orderid, batch.sku)).toBeUndefined();
  });

  it('refuses a batch reference that exists, even under another SKU, and keeps the first', async () => {
    const first = await addBatch(10);
    await expect(repository.addBatch(newBatch({ ref: first.ref, sku: uniqueId('sku'), qty: 3, eta: null }))).rejects.toThrow(
      DuplicateBatch,
    );
    expect(await repository.stockOf(first.sku)).toEqual({ known: true, batches: [first] });
  });

  it('takes the line quantity from the batch and stores the line', async () => {
    const batch = await addBatch(10);
    const allocation = lineOf(batch, 4);
    expect(await repository.saveAllocation(allocation, batch)).toEqual({ outcome: 'saved' });
    expect(await availableOf(batch.sku, batch.ref)).toBe(6);
    expect(await repository.allocationOf(allocation.orderid, batch.sku)).toEqual(allocation);
  });

  it('refuses to take more than is available, writing neither the batch nor the line', async () => {
    const batch = await addBatch(3);
    const allocation = lineOf(batch, 4);
    expect(await repository.saveAllocation(allocation, batch)).toEqual({ outcome: 'batch-changed' });
    expect(await availableOf(batch.sku, batch.ref)).toBe(3);
    expect(await repository.allocationOf(allocation.orderid, batch.sku)).toBeUndefined();
  });

  it('answers the stored line when the same order and SKU is saved again, taking no more stock', async () => {
    const batch = await addBatch(10);
    const allocation = lineOf(batch, 4);
    await repository.saveAllocation(allocation, batch);
    const afterIt = { ...batch, available: 6 };
    expect(await repository.saveAllocation({ ...allocation, qty: 5 }, afterIt)).toEqual({ outcome: 'line-exists', existing: allocation });
    expect(await availableOf(batch.sku, batch.ref)).toBe(6);
  });

  it('answers an exact retry with its batch, and another qty with a conflict, through the service', async () => {
    const batch = await addBatch(10);
    const line = { orderid: uniqueId('order'), sku: batch.sku, qty: 2 };
    expect(await allocate(line, repository)).toEqual({ batchref: batch.ref, created: true });
    expect(await allocate(line, repository)).toEqual({ batchref: batch.ref, created: false });
    await expect(allocate({ ...line, qty: 3 }, repository)).rejects.toThrow(/already has a line/);
    expect(await availableOf(batch.sku, batch.ref)).toBe(8);
  });

  it('moves on to the next batch after losing the preferred one to another request', async () => {
    const sku = uniqueId('sku');
    const preferred = await addBatch(5, { sku, ref: 'a-preferred' });
    const next = await addBatch(5, { sku, ref: 'b-next' });
    // The competitor commits between this request's read and its write.
    const competitor = { orderid: uniqueId('order'), sku, qty: 5, batchref: preferred.ref };
    const racing = Object.create(repository) as DynamoDbBatchRepository;
    racing.stockOf = async (readSku) => {
      const stock = await repository.stockOf(readSku);
      await repository.saveAllocation(competitor, preferred);
      return stock;
    };
    const outcome = await allocate({ orderid: uniqueId('order'), sku, qty: 3 }, racing);
    expect(outcome).toEqual({ batchref: next.ref, created: true });
    expect(await availableOf(sku, preferred.ref)).toBe(0);
    expect(await availableOf(sku, next.ref)).toBe(2);
  });

  it('allocates exactly the stock there is when 50 requests race for a batch of 10', async () => {
    const batch = await addBatch(10);
    const orderids = Array.from({ length: 50 }, () => uniqueId('order'));
    const results = await Promise.allSettled(orderids.map((orderid) => allocate({ orderid, sku: batch.sku, qty: 1 }, repository)));

    const allocated = results.filter((result) => result.status === 'fulfilled');
    const refused = results.filter((result) => result.status === 'rejected');
    expect(allocated).toHaveLength(10);
    expect(refused.map((result) => (result as PromiseRejectedResult).reason.name)).toEqual(Array(40).fill('OutOfStock'));
    expect(await availableOf(batch.sku, batch.ref)).toBe(0);

    const stored = await Promise.all(orderids.map((orderid) => repository.allocationOf(orderid, batch.sku)));
    expect(stored.filter(Boolean)).toHaveLength(10);
  });
});
