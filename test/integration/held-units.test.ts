import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutOfStock } from '../../domain/errors';
import { type HeldLine, type HeldUnits, type Hold } from '../../domain/holds';
import { placeHold, releaseHold } from '../../domain/hold-services';
import { type Batch, newBatch } from '../../domain/model';
import { allocate, batchStatus } from '../../domain/services';
import { allocateOrder } from '../../domain/order-services';
import { batchItem, batchWithStockKey } from '../../functions/store/batches';
import { parseStoredItem } from '../../functions/store/items';
import { storeActiveHolds } from '../../tools/bench/stored-holds';
import { checkInvariants } from '../../tools/invariants';
import { scanItems } from '../reliability/support/table-contents';
import { type TestTable, createTestTable, repositoryAt, uniqueId } from '../support/dynamodb';

/*
 * Units set aside by holds, as the store keeps them (docs/architecture.md, "Holds"), against
 * DynamoDB Local: a batch counts them, each hold's units are a record of their own, and an
 * allocation that needs the units of a hold whose time has passed though nothing gave them back (no
 * sweeper runs here) gives them back first, which only one write can do, and takes them. The clock
 * is the test's.
 */

const EXPIRY = Date.parse('2026-11-25T10:00:00.000Z');
const BEFORE_EXPIRY = EXPIRY - 1;
const AT_EXPIRY = EXPIRY;

let table: TestTable;
beforeAll(async () => {
  table = await createTestTable();
});
afterAll(() => table.drop());

/** A batch of `qty`, `held` units of it set aside by one hold expiring at EXPIRY: stored as placing the hold leaves it. */
const batchWithHold = async (qty: number, held: number, { sku = uniqueId('sku') } = {}) => {
  const units: HeldUnits = { holdid: uniqueId('cart'), qty: held, expiresAt: new Date(EXPIRY).toISOString() };
  const batch = newBatch({ ref: uniqueId('batch'), sku, qty, eta: null });
  await table.repository().addBatch(batch);
  const hold: Hold = { holdid: units.holdid, lines: [{ sku, qty: held, batchref: batch.ref }], status: 'active', expiresAt: units.expiresAt };
  await repositoryAt(table, BEFORE_EXPIRY).repository.saveHold(hold, [{ line: hold.lines[0] as HeldLine, batch }]);
  // The batch's bound on its holds' expiry, kept by the one take for a hold.
  return { batch: { ...batch, available: qty - held, held, heldFrom: units.expiresAt, heldTakes: 1 } };
};

/** The batch as the table holds it, and whether it sits among the batches with stock. */
const storedBatch = async (ref: string) => {
  const items = (await scanItems(table.documentClient, table.tableName)).map(parseStoredItem);
  const [found] = items.flatMap((item) => (item.kind === 'batch' && item.batch.ref === ref ? [item] : []));
  return found && { batch: found.batch, inStockRange: found.inStockRange };
};


const line = (batch: Batch, qty: number) => ({ orderid: uniqueId('order'), sku: batch.sku, qty });

/** What the invariant check finds wrong with these batches (the table is shared, and one test damages a batch on purpose). */
const violationsOf = async (...batches: Batch[]) =>
  (await checkInvariants(table.documentClient, table.tableName)).filter(({ message }) => batches.some(({ ref }) => message.includes(ref)));

describe('units held on a batch', () => {
  it('are not taken while their hold lasts', async () => {
    const { batch } = await batchWithHold(10, 4);
    const { repository } = repositoryAt(table, BEFORE_EXPIRY);

    await expect(allocate(line(batch, 7), repository)).rejects.toThrow(OutOfStock);

    expect(await storedBatch(batch.ref)).toEqual({ batch, inStockRange: true });
  });

  it('are taken by an allocation the moment their hold expires, which gives them back first', async () => {
    const { batch } = await batchWithHold(10, 4);
    const { repository, calls } = repositoryAt(table, AT_EXPIRY);

    expect(await allocate(line(batch, 7), repository)).toEqual({ batchref: batch.ref, location: 'default', created: true });

    // The stock and the locations (a new repository's first read of them); the expired holds' records where they may be (the SKU's
    // partition and its pieces'), their give-back, the batch's bound lifted (no hold is left on it); the stock again (the locations kept), the take.
    expect(calls).toEqual(['Query', 'Query', ...Array(5).fill('Query'), 'TransactWrite', 'Update', 'Query', 'TransactWrite']);
    const { held: _, heldFrom: __, ...withoutHolds } = batch;
    expect(await storedBatch(batch.ref)).toEqual({ batch: { ...withoutHolds, available: 3 }, inStockRange: true });
    expect(await violationsOf(batch)).toEqual([]);
  });

  it('are not read by an allocation that the batch has units enough for', async () => {
    const { batch } = await batchWithHold(10, 4);
    const { repository, calls } = repositoryAt(table, AT_EXPIRY);

    await allocate(line(batch, 6), repository);

    // The stock and the locations (a new repository's first read of them), the take.
    expect(calls).toEqual(['Query', 'Query', 'TransactWrite']);
    expect(await storedBatch(batch.ref)).toEqual({ batch: { ...batch, available: 0 }, inStockRange: true });
  });

  it('are shown available from the moment their hold expires, though still counted held', async () => {
    const { batch } = await batchWithHold(10, 4);

    expect(await batchStatus(batch.ref, repositoryAt(table, BEFORE_EXPIRY).repository)).toMatchObject({ available: 6, held: 4 });
    const { held: _, ...withoutHolds } = batch;
    expect(await batchStatus(batch.ref, repositoryAt(table, AT_EXPIRY).repository)).toEqual({ ...withoutHolds, available: 10 });
    expect(await storedBatch(batch.ref)).toEqual({ batch, inStockRange: true });
  });

  it('keep a batch whose every unit is held among those with stock, where the first allocation after the hold finds it', async () => {
    const { batch } = await batchWithHold(5, 5);
    expect(await storedBatch(batch.ref)).toMatchObject({ batch: { available: 0 }, inStockRange: true });

    const { repository } = repositoryAt(table, AT_EXPIRY);
    await allocateOrder({ orderid: uniqueId('order'), lines: [{ sku: batch.sku, qty: 5 }] }, repository);

    const { held: _, heldFrom: __, ...withoutHolds } = batch;
    expect(await storedBatch(batch.ref)).toEqual({ batch: { ...withoutHolds, available: 0 }, inStockRange: false });
    expect(await violationsOf(batch)).toEqual([]);
  });

  it('are given back once, to one of two allocations racing for them', async () => {
    const { batch } = await batchWithHold(4, 4);
    const { repository } = repositoryAt(table, AT_EXPIRY);

    const answers = await Promise.allSettled([allocate(line(batch, 4), repository), allocate(line(batch, 4), repository)]);

    expect(answers.map((answer) => answer.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(answers.find((answer) => answer.status === 'rejected')).toMatchObject({ reason: expect.any(OutOfStock) });
    expect(await storedBatch(batch.ref)).toMatchObject({ batch: { available: 0 }, inStockRange: false });
    expect(await violationsOf(batch)).toEqual([]);
  });
});

describe('the invariant check of held units', () => {
  it("counts a batch's held units with its lines' and finds what does not add up with them or with its holds' records", async () => {
    const { batch } = await batchWithHold(10, 4);
    expect(await violationsOf(batch)).toEqual([]);

    const overHeld: Batch = { ...batch, held: 5 };
    await table.documentClient.send(new PutCommand({ TableName: table.tableName, Item: batchItem(overHeld) }));

    expect(await violationsOf(batch)).toEqual([
      {
        rule: 'stock-matches-lines',
        message: `batch "${batch.ref}" of sku "${batch.sku}": qty 10 - available 6 - held 5 = -1, but its lines hold 0`,
      },
      {
        rule: 'held-units-counted',
        message: `batch "${batch.ref}" of sku "${batch.sku}" counts 5 held, where holds' records hold 4`,
      },
    ]);
  });
});

describe('many holds on one batch', () => {
  /**
   * More than a batch item could record when each hold was an entry on it: with holdids of 120
   * characters, an entry (its key, qty and expiry) took about 165 bytes, and 2,500 of them 412 KB,
   * past DynamoDB's 400 KB item limit.
   */
  const HOLDS = 2_500;
  const longHoldid = () => uniqueId('cart').padEnd(120, '-');

  it('are each a record of their own: the batch item stays as small as with none, and a release gives back its own units', async () => {
    const sku = uniqueId('sku');
    const batch = newBatch({ ref: uniqueId('batch'), sku, qty: HOLDS + 10, eta: null });
    const { repository } = repositoryAt(table, BEFORE_EXPIRY);
    await repository.addBatch(batch);
    // All but the last stored as placing writes them, 25 items a call: placed one by one, they
    // would hold the run's one DynamoDB Local, which serves every test file at once, for a minute.
    const holdids = Array.from({ length: HOLDS - 1 }, longHoldid);
    await storeActiveHolds(table.documentClient, table.tableName, batch, holdids, new Date(EXPIRY).toISOString(), BEFORE_EXPIRY);
    await placeHold({ holdid: longHoldid(), lines: [{ sku, qty: 1 }], ttlSeconds: 900 }, repository);

    const { Item } = await table.documentClient.send(new GetCommand({ TableName: table.tableName, Key: batchWithStockKey(sku, batch.ref), ConsistentRead: true }));
    expect(Buffer.byteLength(JSON.stringify(Item))).toBeLessThan(300);
    expect(await batchStatus(batch.ref, repository)).toEqual({ ...batch, available: 10, held: HOLDS, heldFrom: new Date(EXPIRY).toISOString(), heldTakes: 2 });

    await releaseHold(holdids[0] as string, repository);
    expect(await batchStatus(batch.ref, repository)).toEqual({ ...batch, available: 11, held: HOLDS - 1, heldFrom: new Date(EXPIRY).toISOString(), heldTakes: 2 });
    expect(await violationsOf(batch)).toEqual([]);
  }, 120_000);
});
