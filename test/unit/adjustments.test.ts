import { describe, expect, it } from 'vitest';
import { adjustStock } from '../../domain/adjustment-services';
import { COUNT_WINDOW_MS, adjustedQty } from '../../domain/adjustments';
import { AdjustmentExists, AdjustmentRefused, BatchContended, BatchNotFound, QtyChanged, StaleCount } from '../../domain/errors';
import { addBatch, allocate } from '../../domain/services';
import { ship } from '../../domain/shipment-services';
import { FakeRepository } from '../support/fake-repository';

/*
 * Adjustments (docs/api.md, "Adjustments") over the fake repository: a count applied as of its
 * time, compare and set, repeats, and the room a lower qty makes, as a PATCH makes it.
 */

/** LAMP in stock: b1 of `qty`, and a shipment s1 of 20 for the lines a shrink moves, added an hour before now. */
const stocked = async (qty = 50) => {
  const repository = new FakeRepository();
  repository.now -= 3_600_000;
  await addBatch({ ref: 'b1', sku: 'LAMP', qty, eta: null }, repository);
  await addBatch({ ref: 's1', sku: 'LAMP', qty: 20, eta: '2027-01-01' }, repository);
  repository.now += 3_600_000;
  return repository;
};

const minutesAgo = (repository: FakeRepository, minutes: number) => new Date(repository.now - minutes * 60_000).toISOString();

describe('a count', () => {
  it('takes off what it counted the units the batch shipped after it was taken, not those before', async () => {
    const repository = await stocked();
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 10 }, repository);
    await ship({ shipmentid: 'p1', orderid: 'o1', lines: [{ sku: 'LAMP', qty: 2 }] }, repository);
    const countedAt = new Date(repository.now + 1).toISOString();
    repository.now += 60_000;
    await ship({ shipmentid: 'p2', orderid: 'o1', lines: [{ sku: 'LAMP', qty: 3 }] }, repository);

    const { adjustment } = await adjustStock({ adjustmentid: 'c1', ref: 'b1', reason: 'counted', qty: 40, countedAt }, repository);

    expect(adjustment).toMatchObject({ before: 45, after: 37 });
    expect(repository.batches.get('b1')).toMatchObject({ qty: 37, available: 32 });
  });

  it('is the same moment however its offset writes it', async () => {
    const repository = await stocked();
    await adjustStock({ adjustmentid: 'c1', ref: 'b1', reason: 'counted', qty: 40, countedAt: '2026-11-25T09:00:00Z' }, repository);
    expect((await adjustStock({ adjustmentid: 'c1', ref: 'b1', reason: 'counted', qty: 40, countedAt: '2026-11-25T10:00:00+01:00' }, repository)).created).toBe(false);
  });

  it('older than the last count applied changes nothing; the same moment again is no older', async () => {
    const repository = await stocked();
    await adjustStock({ adjustmentid: 'c1', ref: 'b1', reason: 'counted', qty: 40, countedAt: minutesAgo(repository, 5) }, repository);

    await expect(adjustStock({ adjustmentid: 'c2', ref: 'b1', reason: 'counted', qty: 30, countedAt: minutesAgo(repository, 6) }, repository)).rejects.toThrow(StaleCount);
    expect(repository.batches.get('b1')?.qty).toBe(40);
    expect((await adjustStock({ adjustmentid: 'c3', ref: 'b1', reason: 'counted', qty: 39, countedAt: minutesAgo(repository, 5) }, repository)).adjustment.after).toBe(39);
  });

  it('is refused in the future, and past the window the batch keeps its shipments for', async () => {
    const repository = await stocked();
    const refused = (countedAt: string) => adjustStock({ adjustmentid: 'c1', ref: 'b1', reason: 'counted', qty: 1, countedAt }, repository);
    await expect(refused(new Date(repository.now + 1_000).toISOString())).rejects.toMatchObject({ field: 'counted_at' });
    await expect(refused(new Date(repository.now - COUNT_WINDOW_MS - 1).toISOString())).rejects.toThrow(AdjustmentRefused);
    expect(repository.adjustments.size).toBe(0);
  });

  it('never leaves a batch below zero, though more shipped since than it counted', () => {
    expect(adjustedQty({ adjustmentid: 'c1', ref: 'b1', reason: 'counted', qty: 2, countedAt: '2026-11-25T09:00:00.000Z' }, 10, { changedSince: -5, changesRead: 1 })).toBe(0);
  });
});

describe('an adjustment', () => {
  it('adds a delta to what the batch has, and refuses one that takes more than that', async () => {
    const repository = await stocked(10);
    expect((await adjustStock({ adjustmentid: 'a1', ref: 'b1', reason: 'received', delta: 5 }, repository)).adjustment).toMatchObject({ before: 10, after: 15 });
    await expect(adjustStock({ adjustmentid: 'a2', ref: 'b1', reason: 'lost', delta: -16 }, repository)).rejects.toMatchObject({ field: 'delta' });
    expect(repository.batches.get('b1')?.qty).toBe(15);
  });

  it('applies only to the qty the caller read, and says what the batch has', async () => {
    const repository = await stocked(10);
    await expect(adjustStock({ adjustmentid: 'a1', ref: 'b1', reason: 'correction', qty: 9, expectedQty: 11 }, repository)).rejects.toEqual(new QtyChanged('b1', 11, 10));
    expect((await adjustStock({ adjustmentid: 'a1', ref: 'b1', reason: 'correction', qty: 9, expectedQty: 10 }, repository)).adjustment.after).toBe(9);
  });

  it('is recorded though it changes nothing, so that its id is used and a repeat answers it', async () => {
    const repository = await stocked(10);
    expect((await adjustStock({ adjustmentid: 'a1', ref: 'b1', reason: 'counted', qty: 10 }, repository)).created).toBe(true);
    expect(repository.adjustments.get('a1')).toMatchObject({ before: 10, after: 10 });
  });

  it('answers a repeat as stored, with the same before and after, and another under its id with AdjustmentExists', async () => {
    const repository = await stocked(10);
    const request = { adjustmentid: 'a1', ref: 'b1', reason: 'found', delta: 2, note: 'under the shelf' } as const;
    await adjustStock(request, repository);
    await adjustStock({ adjustmentid: 'a2', ref: 'b1', reason: 'found', delta: 1 }, repository);

    expect(await adjustStock(request, repository)).toMatchObject({ created: false, adjustment: { before: 10, after: 12 } });
    await expect(adjustStock({ ...request, note: 'elsewhere' }, repository)).rejects.toThrow(AdjustmentExists);
    expect(repository.batches.get('b1')?.qty).toBe(13);
  });

  it('moves the newest lines off a batch it leaves too small, as a PATCH does, and a repeat finishes a move cut off', async () => {
    const repository = await stocked(10);
    await allocate({ orderid: 'older', sku: 'LAMP', qty: 4 }, repository);
    await allocate({ orderid: 'newer', sku: 'LAMP', qty: 3 }, repository);
    await allocate({ orderid: 'newest', sku: 'LAMP', qty: 2 }, repository);
    repository.movesPerWrite = 1;
    const moving = repository.moveAllocations.bind(repository);
    let writes = 0;
    repository.moveAllocations = (...args) => (++writes > 1 ? Promise.reject(new BatchContended('b1', 1)) : moving(...args));
    const request = { adjustmentid: 'a1', ref: 'b1', reason: 'damaged', qty: 4 } as const;

    await expect(adjustStock(request, repository)).rejects.toThrow(BatchContended);
    repository.moveAllocations = moving;
    const repeat = await adjustStock(request, repository);

    expect(repeat).toMatchObject({ created: false, adjustment: { before: 10, after: 4 }, reallocated: [{ orderid: 'newer', qty: 3, batchref: 's1' }] });
    expect(repository.batches.get('b1')).toMatchObject({ qty: 4, available: 0 });
  });

  it('counts the units a batch was added with after the count was taken, as any change since', async () => {
    const repository = new FakeRepository();
    const countedAt = new Date(repository.now - 60_000).toISOString();
    await addBatch({ ref: 'b1', sku: 'LAMP', qty: 50, eta: null }, repository);
    expect((await adjustStock({ adjustmentid: 'c1', ref: 'b1', reason: 'counted', qty: 0, countedAt }, repository)).adjustment).toMatchObject({ before: 50, after: 50 });
  });

  it('names a batch that does not exist', async () => {
    await expect(adjustStock({ adjustmentid: 'a1', ref: 'nope', reason: 'lost', delta: -1 }, new FakeRepository())).rejects.toThrow(BatchNotFound);
  });
});
