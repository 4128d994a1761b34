import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutOfStock } from '../../domain/errors';
import { type HeldLine, type HeldUnits, type Hold, expiryAfter } from '../../domain/holds';
import { type Batch, newBatch } from '../../domain/model';
import { allocate, allocateOrder } from '../../domain/services';
import { batchItem, parseStoredItem } from '../../functions/store/items';
import { checkInvariants } from '../../tools/invariants';
import { scanItems } from '../reliability/support/table-contents';
import { type TestTable, createTestTable, repositoryAt, uniqueId } from '../support/dynamodb';

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

/** A batch of `qty`, `held` units of it set aside by one hold expiring at EXPIRY: stored as placing the hold leaves it. */
const batchWithHold = async (qty: number, held: number, { sku = uniqueId('sku') } = {}) => {
  const units: HeldUnits = { holdid: uniqueId('cart'), qty: held, expiresAt: new Date(EXPIRY).toISOString() };
  const batch = newBatch({ ref: uniqueId('batch'), sku, qty, eta: null });
  await table.repository().addBatch(batch);
  const hold: Hold = { holdid: units.holdid, lines: [{ sku, qty: held, batchref: batch.ref }], status: 'active', expiresAt: units.expiresAt };
  await repositoryAt(table, BEFORE_EXPIRY).repository.saveHold(hold, [{ line: hold.lines[0] as HeldLine, batch }]);
  return { ...batch, available: qty - held, held: [units] };
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
    const batch = await batchWithHold(10, 4);
    const { repository } = repositoryAt(table, BEFORE_EXPIRY);

    await expect(allocate(line(batch, 7), repository)).rejects.toThrow(OutOfStock);

    expect(await storedBatch(batch.ref)).toEqual({ batch, inStockRange: true });
  });

  it('are taken by an allocation the moment their hold expires, given back in its one transaction', async () => {
    const batch = await batchWithHold(10, 4);
    const { repository, calls } = repositoryAt(table, AT_EXPIRY);

    expect(await allocate(line(batch, 7), repository)).toEqual({ batchref: batch.ref, created: true });

    expect(calls).toEqual(['Query', 'TransactWrite']);
    const { held: _, ...withoutHolds } = batch;
    expect(await storedBatch(batch.ref)).toEqual({ batch: { ...withoutHolds, available: 3 }, inStockRange: true });
    expect(await violationsOf(batch)).toEqual([]);
  });

  it('keep a batch whose every unit is held among those with stock, where the first allocation after the hold finds it', async () => {
    const batch = await batchWithHold(5, 5);
    expect(await storedBatch(batch.ref)).toMatchObject({ batch: { available: 0 }, inStockRange: true });

    const { repository } = repositoryAt(table, AT_EXPIRY);
    await allocateOrder({ orderid: uniqueId('order'), lines: [{ sku: batch.sku, qty: 5 }] }, repository);

    const { held: _, ...withoutHolds } = batch;
    expect(await storedBatch(batch.ref)).toEqual({ batch: { ...withoutHolds, available: 0 }, inStockRange: false });
    expect(await violationsOf(batch)).toEqual([]);
  });

  it('are given back once, to one of two allocations racing for them', async () => {
    const batch = await batchWithHold(4, 4);
    const { repository } = repositoryAt(table, AT_EXPIRY);

    const answers = await Promise.allSettled([allocate(line(batch, 4), repository), allocate(line(batch, 4), repository)]);

    expect(answers.map((answer) => answer.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(answers.find((answer) => answer.status === 'rejected')).toMatchObject({ reason: expect.any(OutOfStock) });
    expect(await storedBatch(batch.ref)).toMatchObject({ batch: { available: 0 }, inStockRange: false });
    expect(await violationsOf(batch)).toEqual([]);
  });
});

describe('the invariant check of held units', () => {
  it("counts a batch's held units with its lines' and finds what does not add up with them or with its holds", async () => {
    const batch = await batchWithHold(10, 4);
    expect(await violationsOf(batch)).toEqual([]);

    const overHeld: Batch = { ...batch, held: [{ ...(batch.held?.[0] as HeldUnits), qty: 5 }] };
    await table.documentClient.send(new PutCommand({ TableName: table.tableName, Item: batchItem(overHeld) }));

    const holdid = batch.held?.[0]?.holdid;
    expect(await violationsOf(batch)).toEqual([
      {
        rule: 'stock-matches-lines',
        message: `batch "${batch.ref}" of sku "${batch.sku}": qty 10 - available 6 - held 5 = -1, but its lines hold 0`,
      },
      {
        rule: 'held-for-an-active-hold',
        message: `batch "${batch.ref}" of sku "${batch.sku}" holds 5 until ${batch.held?.[0]?.expiresAt} for hold "${holdid}", whose line there is of 4`,
      },
    ]);
  });
});

describe('a hold, as the table keeps it', () => {
  const TTL = 900;
  const newHold = (lines: Array<{ batch: Batch; qty: number }>): Hold => ({
    holdid: uniqueId('cart'),
    lines: lines.map(({ batch, qty }) => ({ sku: batch.sku, qty, batchref: batch.ref })),
    status: 'active',
    expiresAt: expiryAfter(BEFORE_EXPIRY - TTL * 1000 + 1, TTL),
  });
  const placements = (hold: Hold, batches: Batch[]) => hold.lines.map((line, index) => ({ line, batch: batches[index] as Batch }));
  const addBatch = async (qty: number) => {
    const batch = newBatch({ ref: uniqueId('batch'), sku: uniqueId('sku'), qty, eta: null });
    await table.repository().addBatch(batch);
    return batch;
  };

  it('sets aside each line on its batch and records the hold, in one transaction', async () => {
    const [lamp, rug] = [await addBatch(10), await addBatch(3)];
    const hold = newHold([{ batch: lamp, qty: 4 }, { batch: rug, qty: 3 }]);
    const { repository, calls } = repositoryAt(table, BEFORE_EXPIRY);

    expect(await repository.saveHold(hold, placements(hold, [lamp, rug]))).toEqual({ outcome: 'saved' });

    expect(calls).toEqual(['TransactWrite']);
    const entry = (qty: number) => [{ holdid: hold.holdid, qty, expiresAt: hold.expiresAt }];
    expect(await storedBatch(lamp.ref)).toEqual({ batch: { ...lamp, available: 6, held: entry(4) }, inStockRange: true });
    expect(await storedBatch(rug.ref)).toEqual({ batch: { ...rug, available: 0, held: entry(3) }, inStockRange: true });
    expect(await repository.hold(hold.holdid)).toEqual(hold);
    expect(await violationsOf(lamp, rug)).toEqual([]);
  });

  it('refuses a holdid used before, answering the hold it names, and sets nothing aside', async () => {
    const lamp = await addBatch(10);
    const first = newHold([{ batch: lamp, qty: 2 }]);
    const { repository } = repositoryAt(table, BEFORE_EXPIRY);
    await repository.saveHold(first, placements(first, [lamp]));
    const found = (await storedBatch(lamp.ref))?.batch as Batch;

    const again = { ...first, lines: [{ ...(first.lines[0] as HeldLine), qty: 3 }] };
    expect(await repository.saveHold(again, placements(again, [found]))).toEqual({ outcome: 'hold-exists', existing: first });
    expect((await storedBatch(lamp.ref))?.batch).toEqual(found);
  });

  it('sets nothing aside when one of its batches is no longer as found', async () => {
    const [lamp, rug] = [await addBatch(10), await addBatch(3)];
    const { repository } = repositoryAt(table, BEFORE_EXPIRY);
    await allocate(line(rug, 2), repository);
    const hold = newHold([{ batch: lamp, qty: 4 }, { batch: rug, qty: 3 }]);

    expect(await repository.saveHold(hold, placements(hold, [lamp, rug]))).toEqual({ outcome: 'batch-changed' });

    expect(await repository.hold(hold.holdid)).toBeUndefined();
    expect((await storedBatch(lamp.ref))?.batch).toEqual(lamp);
  });

  it('gives every unit back in the write that releases it, and only that write', async () => {
    const [lamp, rug] = [await addBatch(10), await addBatch(3)];
    const hold = newHold([{ batch: lamp, qty: 4 }, { batch: rug, qty: 3 }]);
    const { repository } = repositoryAt(table, BEFORE_EXPIRY);
    await repository.saveHold(hold, placements(hold, [lamp, rug]));

    const refs = [lamp.ref, rug.ref];
    expect(await repository.endHold(hold, 'released', BEFORE_EXPIRY, refs)).toBe('saved');
    expect(await repository.endHold(hold, 'released', BEFORE_EXPIRY, refs)).toBe('changed');

    expect(await storedBatch(lamp.ref)).toEqual({ batch: lamp, inStockRange: true });
    expect(await storedBatch(rug.ref)).toEqual({ batch: rug, inStockRange: true });
    expect(await repository.hold(hold.holdid)).toEqual({ ...hold, status: 'released' });
    expect(await violationsOf(lamp, rug)).toEqual([]);
  });

  it('is not released once its time has passed, but ends expired, without giving twice what an allocation took', async () => {
    const [lamp, rug] = [await addBatch(10), await addBatch(3)];
    const hold = newHold([{ batch: lamp, qty: 4 }, { batch: rug, qty: 3 }]);
    await repositoryAt(table, BEFORE_EXPIRY).repository.saveHold(hold, placements(hold, [lamp, rug]));
    const { repository } = repositoryAt(table, AT_EXPIRY);
    await allocate(line(rug, 3), repository);

    expect(await repository.endHold(hold, 'released', AT_EXPIRY, [lamp.ref])).toBe('changed');
    expect(await repository.endHold(hold, 'expired', AT_EXPIRY, [lamp.ref, rug.ref])).toBe('changed');
    expect(await repository.endHold(hold, 'expired', AT_EXPIRY, [lamp.ref])).toBe('saved');

    expect(await storedBatch(lamp.ref)).toEqual({ batch: lamp, inStockRange: true });
    expect(await storedBatch(rug.ref)).toEqual({ batch: { ...rug, available: 0 }, inStockRange: false });
    expect(await repository.hold(hold.holdid)).toEqual({ ...hold, status: 'expired' });
    expect(await violationsOf(lamp, rug)).toEqual([]);
  });
});
