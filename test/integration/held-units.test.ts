import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutOfStock } from '../../domain/errors';
import type { HeldUnits } from '../../domain/holds';
import { type Batch, newBatch } from '../../domain/model';
import { allocate, allocateOrder } from '../../domain/services';
import type { DocumentSender } from '../../functions/store/batch-repository';
import { batchItem, parseStoredItem } from '../../functions/store/items';
import { checkInvariants } from '../../tools/invariants';
import { scanItems } from '../reliability/support/table-contents';
import { type TestTable, createTestTable, uniqueId } from '../support/dynamodb';

/*
 * Units set aside by holds, as a batch's record keeps them (docs/architecture.md, "The data model"),
 * against DynamoDB Local: an allocation takes the units of a hold whose time has passed though
 * nothing gave them back (no sweeper runs here), and gives the hold's units back in its own write,
 * which only one write can do. The batches are written as holds leave them; the clock is the test's.
 */

const EXPIRY = Date.parse('2026-11-25T10:00:00.000Z');
const BEFORE_EXPIRY = EXPIRY - 1;
const AT_EXPIRY = EXPIRY;

let table: TestTable;
beforeAll(async () => {
  table = await createTestTable();
});
afterAll(() => table.drop());

/** A batch of `qty`, `held` units of it set aside by one hold expiring at EXPIRY: stored as a hold leaves it. */
const batchWithHold = async (qty: number, held: number, { sku = uniqueId('sku') } = {}) => {
  const hold: HeldUnits = { holdid: uniqueId('cart'), qty: held, expiresAt: new Date(EXPIRY).toISOString() };
  const batch = newBatch({ ref: uniqueId('batch'), sku, qty, eta: null });
  await table.repository().addBatch(batch);
  const stored: Batch = { ...batch, available: qty - held, held: [hold] };
  await table.documentClient.send(new PutCommand({ TableName: table.tableName, Item: batchItem(stored) }));
  return stored;
};

/** The batch as the table holds it, and whether it sits among the batches with stock. */
const storedBatch = async (ref: string) => {
  const items = (await scanItems(table.documentClient, table.tableName)).map(parseStoredItem);
  const [found] = items.flatMap((item) => (item.kind === 'batch' && item.batch.ref === ref ? [item] : []));
  return found && { batch: found.batch, inStockRange: found.inStockRange };
};

/** A repository at a moment the test picks, counting the calls it sends. */
const repositoryAt = (now: number) => {
  const calls: string[] = [];
  const sender: DocumentSender = {
    send: ((command: object, options?: object) => {
      calls.push(command.constructor.name.replace(/Command$/, ''));
      return table.documentClient.send(command as never, options);
    }) as DocumentSender['send'],
  };
  return { repository: table.repository({ sender, clock: () => now }), calls };
};

const line = (batch: Batch, qty: number) => ({ orderid: uniqueId('order'), sku: batch.sku, qty });

describe('units held on a batch', () => {
  it('are not taken while their hold lasts', async () => {
    const batch = await batchWithHold(10, 4);
    const { repository } = repositoryAt(BEFORE_EXPIRY);

    await expect(allocate(line(batch, 7), repository)).rejects.toThrow(OutOfStock);

    expect(await storedBatch(batch.ref)).toEqual({ batch, inStockRange: true });
  });

  it('are taken by an allocation the moment their hold expires, given back in its one transaction', async () => {
    const batch = await batchWithHold(10, 4);
    const { repository, calls } = repositoryAt(AT_EXPIRY);

    expect(await allocate(line(batch, 7), repository)).toEqual({ batchref: batch.ref, created: true });

    expect(calls).toEqual(['Query', 'TransactWrite']);
    const { held: _, ...withoutHolds } = batch;
    expect(await storedBatch(batch.ref)).toEqual({ batch: { ...withoutHolds, available: 3 }, inStockRange: true });
    expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
  });

  it('keep a batch whose every unit is held among those with stock, where the first allocation after the hold finds it', async () => {
    const batch = await batchWithHold(5, 5);
    expect(await storedBatch(batch.ref)).toMatchObject({ batch: { available: 0 }, inStockRange: true });

    const { repository } = repositoryAt(AT_EXPIRY);
    await allocateOrder({ orderid: uniqueId('order'), lines: [{ sku: batch.sku, qty: 5 }] }, repository);

    const { held: _, ...withoutHolds } = batch;
    expect(await storedBatch(batch.ref)).toEqual({ batch: { ...withoutHolds, available: 0 }, inStockRange: false });
    expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
  });

  it('are given back once, to one of two allocations racing for them', async () => {
    const batch = await batchWithHold(4, 4);
    const { repository } = repositoryAt(AT_EXPIRY);

    const answers = await Promise.allSettled([allocate(line(batch, 4), repository), allocate(line(batch, 4), repository)]);

    expect(answers.map((answer) => answer.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(answers.find((answer) => answer.status === 'rejected')).toMatchObject({ reason: expect.any(OutOfStock) });
    expect(await storedBatch(batch.ref)).toMatchObject({ batch: { available: 0 }, inStockRange: false });
    expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
  });
});

describe('the invariant check of held units', () => {
  it("counts a batch's held units with its lines' and finds what does not add up", async () => {
    const batch = await batchWithHold(10, 4);
    expect((await checkInvariants(table.documentClient, table.tableName)).filter(({ message }) => message.includes(batch.ref))).toEqual([]);

    const overHeld: Batch = { ...batch, held: [{ ...(batch.held?.[0] as HeldUnits), qty: 5 }] };
    await table.documentClient.send(new PutCommand({ TableName: table.tableName, Item: batchItem(overHeld) }));

    expect((await checkInvariants(table.documentClient, table.tableName)).filter(({ message }) => message.includes(batch.ref))).toEqual([
      {
        rule: 'stock-matches-lines',
        message: `batch "${batch.ref}" of sku "${batch.sku}": qty 10 - available 6 - held 5 = -1, but its lines hold 0`,
      },
    ]);
  });
});
