import { describe, expect, it } from 'vitest';
import { adjustStock } from '../../domain/adjustment-services';
import { changeBatch } from '../../domain/batch-changes';
import { StoreUnavailable } from '../../domain/errors';
import { importRows } from '../../domain/import-services';
import type { ImportRequest, ImportRow, ReadRow } from '../../domain/imports';
import { placeCountOf } from '../../domain/place-counts';
import { addBatch, allocate, cancelAllocation } from '../../domain/services';
import { readFeedRecord, readRow } from '../../functions/imports/rows';
import { FakeRepository } from '../support/fake-repository';

/*
 * Counts at a place (docs/api.md, "A count at a place"): the units of a SKU on a place's shelves at
 * a moment, spread over its batches in stock there, each counted as of that moment, planned once.
 */

const request = (importid: string, options: Partial<ImportRequest> = {}): ImportRequest => ({ importid, feed: 'rows', dryRun: false, validateFirst: true, digest: `${importid}-rows`, ...options });
const numbered = (rows: readonly ImportRow[]): ReadRow[] => rows.map((read, index) => ({ row: index + 1, read }));
const HOUR = 60 * 60_000;

/** A repository whose batches were added two hours before its now, so that a count an hour ago finds them on the shelf. */
const shopWith = async (batches: readonly { ref: string; qty: number; sku?: string; eta?: string | null; location?: string }[]) => {
  const repository = new FakeRepository();
  const now = repository.now;
  repository.now = now - 2 * HOUR;
  for (const { ref, qty, sku = 'LAMP', eta = null, location } of batches) await addBatch({ ref, sku, qty, eta, ...(location ? { location } : {}) }, repository);
  repository.now = now;
  return repository;
};
const anHourAgo = (repository: FakeRepository) => new Date(repository.now - HOUR).toISOString();
const placeCount = (repository: FakeRepository, onHand: number, more: Partial<ImportRow> = {}): ImportRow =>
  ({ kind: 'place-count', sku: 'LAMP', location: 'default', onHand, countedAt: anHourAgo(repository), ...more }) as ImportRow;
const qtyOf = (repository: FakeRepository, ref: string) => repository.batches.get(ref)?.qty;

describe('the rule of a count at a place', () => {
  it('takes a shortfall from the batches with the most units free first, then by ref, and no further than it must', () => {
    const batches = [
      { ref: 'b', qty: 5, available: 5, asOf: 5 },
      { ref: 'a', qty: 5, available: 5, asOf: 5 },
      { ref: 'c', qty: 9, available: 1, asOf: 9 },
    ];
    expect(placeCountOf(12, batches)).toEqual([{ ref: 'a', qty: 0 }, { ref: 'b', qty: 3 }]);
  });

  it('adds a surplus to the batch with the most units free', () => {
    expect(placeCountOf(20, [{ ref: 'a', qty: 5, available: 1, asOf: 5 }, { ref: 'b', qty: 5, available: 4, asOf: 5 }])).toEqual([{ ref: 'b', qty: 15 }]);
  });

  it('changes no batch when the place held what its batches had', () => {
    expect(placeCountOf(10, [{ ref: 'a', qty: 4, available: 4, asOf: 6 }, { ref: 'b', qty: 4, available: 4, asOf: 4 }])).toEqual([]);
    expect(placeCountOf(0, [])).toEqual([]);
  });

  it('takes from a batch no more than it had at the count’s moment and has now', () => {
    // a had 8 then and has 2 now (6 left since); b had 1 then and has 5 now.
    expect(placeCountOf(0, [{ ref: 'a', qty: 2, available: 2, asOf: 8 }, { ref: 'b', qty: 5, available: 1, asOf: 1 }])).toEqual([{ ref: 'a', qty: 6 }, { ref: 'b', qty: 0 }]);
  });
});

describe('an import’s count at a place', () => {
  it('spreads over the SKU’s batches in stock at the place, and no others', async () => {
    const repository = await shopWith([
      { ref: 'b1', qty: 6 },
      { ref: 'b2', qty: 4 },
      { ref: 'arriving', qty: 9, eta: '2027-01-01' },
      { ref: 'other-sku', qty: 9, sku: 'DESK' },
    ]);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 5 }, repository);
    const { report } = await importRows(request('i1'), numbered([placeCount(repository, 7)]), repository);
    expect(report.counts).toMatchObject({ done: 1, applied: 1 });
    // b1 has 1 unit free and b2 4: the 3 short come off b2.
    expect([qtyOf(repository, 'b1'), qtyOf(repository, 'b2'), qtyOf(repository, 'arriving'), qtyOf(repository, 'other-sku')]).toEqual([6, 1, 9, 9]);
    expect([...repository.adjustments.values()]).toEqual([expect.objectContaining({ adjustmentid: 'i1#1#b2', ref: 'b2', reason: 'counted', qty: 1, before: 4, after: 1 })]);
  });

  it('is applied as of its time: units that left a batch since stay gone, and a surplus comes on top', async () => {
    const repository = await shopWith([{ ref: 'b1', qty: 10 }]);
    await adjustStock({ adjustmentid: 'damaged', ref: 'b1', reason: 'damaged', delta: -2 }, repository);
    await importRows(request('i1'), numbered([placeCount(repository, 7)]), repository);
    expect(qtyOf(repository, 'b1')).toBe(5);
    await importRows(request('i2'), numbered([placeCount(repository, 9)]), repository);
    expect(qtyOf(repository, 'b1')).toBe(7);
  });

  it('counts a batch emptied since its moment among those on the shelf then, so that the units that left it stay gone', async () => {
    const repository = await shopWith([{ ref: 'b1', qty: 10 }, { ref: 'b2', qty: 5 }]);
    await adjustStock({ adjustmentid: 'lost', ref: 'b2', reason: 'lost', delta: -5 }, repository);
    const { report } = await importRows(request('i1'), numbered([placeCount(repository, 15)]), repository);
    expect(report.counts).toMatchObject({ unchanged: 1 });
    expect([qtyOf(repository, 'b1'), qtyOf(repository, 'b2')]).toEqual([10, 0]);
  });

  it('leaves out a batch that came onto the shelf since its moment: one that arrived, and one added', async () => {
    const repository = await shopWith([{ ref: 'b1', qty: 10 }, { ref: 'arriving', qty: 20, eta: '2027-01-01' }]);
    await changeBatch('arriving', { eta: null }, repository);
    await addBatch({ ref: 'added', sku: 'LAMP', qty: 9, eta: null }, repository);
    const { report } = await importRows(request('i1'), numbered([placeCount(repository, 12)]), repository);
    expect(report.counts).toMatchObject({ applied: 1 });
    expect([qtyOf(repository, 'b1'), qtyOf(repository, 'arriving'), qtyOf(repository, 'added')]).toEqual([12, 20, 9]);
  });

  it('counts unchanged, writing nothing, a place that held what its batches had', async () => {
    const repository = await shopWith([{ ref: 'b1', qty: 6 }, { ref: 'b2', qty: 4 }]);
    const { report } = await importRows(request('i1'), numbered([placeCount(repository, 10)]), repository);
    expect(report.counts).toMatchObject({ unchanged: 1 });
    expect(repository.adjustments.size).toBe(0);
    expect(repository.placeCounts.size).toBe(0);
  });

  it('is stale, with no batch changed, when a batch it counts was counted after its moment', async () => {
    const repository = await shopWith([{ ref: 'b1', qty: 6 }, { ref: 'b2', qty: 4 }]);
    await adjustStock({ adjustmentid: 'recount', ref: 'b2', reason: 'counted', qty: 4, countedAt: new Date(repository.now - HOUR / 2).toISOString() }, repository);
    const { report } = await importRows(request('i1'), numbered([placeCount(repository, 2)]), repository);
    expect(report).toMatchObject({ counts: { stale: 1 }, errors: [{ row: 1, outcome: 'stale', code: 'stale_count' }] });
    expect([qtyOf(repository, 'b1'), qtyOf(repository, 'b2')]).toEqual([6, 4]);
  });

  it('is invalid when it counts units where the SKU has no batch in stock, and unchanged when it counts none there', async () => {
    const repository = await shopWith([{ ref: 'arriving', qty: 9, eta: '2027-01-01' }]);
    const { report } = await importRows(request('i1', { validateFirst: false }), numbered([placeCount(repository, 3), placeCount(repository, 0), placeCount(repository, 1, { sku: 'NEVER-ADDED' })]), repository);
    expect(report).toMatchObject({ counts: { invalid: 2, unchanged: 1 }, errors: [{ row: 1, outcome: 'invalid', code: 'validation_failed', message: expect.stringMatching(/^on_hand must be 0/) }, { row: 3 }] });
    expect(qtyOf(repository, 'arriving')).toBe(9);
  });

  it('refuses, before any row is applied, a place that is not one', async () => {
    const repository = await shopWith([{ ref: 'b1', qty: 6 }]);
    const { report } = await importRows(request('i1'), numbered([placeCount(repository, 3, { location: 'nowhere' })]), repository);
    expect(report).toMatchObject({ status: 'failed', errors: [{ row: 1, code: 'unknown_location' }] });
  });

  it('in a dry run says it would apply, and writes neither a count nor its plan', async () => {
    const repository = await shopWith([{ ref: 'b1', qty: 6 }]);
    const { report } = await importRows(request('i1', { dryRun: true }), numbered([placeCount(repository, 3)]), repository);
    expect(report.counts).toMatchObject({ applied: 1 });
    expect([qtyOf(repository, 'b1'), repository.adjustments.size, repository.placeCounts.size]).toEqual([6, 0, 0]);
  });

  it('sent again after a send cut off between its batches makes the counts it first planned, though the batches changed since', async () => {
    const repository = await shopWith([{ ref: 'b1', qty: 4 }, { ref: 'b2', qty: 10 }, { ref: 'b3', qty: 3 }]);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 8 }, repository);
    // b1 has 4 free, b3 3, b2 2: the 7 short come off b1 and then b3.
    let writes = 0;
    const cutOff = Object.assign(Object.create(repository) as FakeRepository, {
      changeBatch: (...args: Parameters<FakeRepository['changeBatch']>) => (++writes > 1 ? Promise.reject(new StoreUnavailable('The store did not answer')) : repository.changeBatch(...args)),
    });
    const rows = numbered([placeCount(repository, 10)]);
    await expect(importRows(request('i1'), rows, cutOff)).rejects.toThrow(StoreUnavailable);
    expect([qtyOf(repository, 'b1'), qtyOf(repository, 'b3')]).toEqual([0, 3]);
    // b2's line leaves: planned again, the count would now come off b2, which has the most units free.
    await cancelAllocation('o1', 'LAMP', repository);

    const { report } = await importRows(request('i1'), rows, repository);

    expect(report.counts).toMatchObject({ done: 1, applied: 1 });
    expect([qtyOf(repository, 'b1'), qtyOf(repository, 'b2'), qtyOf(repository, 'b3')]).toEqual([0, 10, 0]);
    expect([...repository.adjustments.keys()].sort()).toEqual(['i1#1#b1', 'i1#1#b3']);
  });

  it('leaves the batch rows after it in its chunk to their own reads, not to the chunk’s read made before it', async () => {
    const repository = await shopWith([{ ref: 'b1', qty: 10 }]);
    const rows = numbered([placeCount(repository, 7), { kind: 'batch', ref: 'b1', sku: 'LAMP', qty: 10, eta: null }]);
    const { report } = await importRows(request('i1'), rows, repository);
    expect(report.counts).toMatchObject({ applied: 2, unchanged: 0 });
    expect(qtyOf(repository, 'b1')).toBe(10);
  });
});

describe('a count at a place as the feed sends it', () => {
  it('is a row with on_hand, in JSON Lines and in CSV', () => {
    const fields = { sku: 'LAMP', location: 'lyon', on_hand: 12, counted_at: '2026-11-25T09:00:00Z' };
    const read = { kind: 'place-count', sku: 'LAMP', location: 'lyon', onHand: 12, countedAt: '2026-11-25T09:00:00Z' };
    expect(readRow(fields, 1)).toEqual({ row: 1, read });
    expect(readFeedRecord({ row: 2, fields: { ref: '', sku: 'LAMP', qty: '', eta: '', location: 'lyon', on_hand: '12', counted_at: '2026-11-25T09:00:00Z' } }, 'csv')).toEqual({ row: 2, read });
  });

  it('is refused naming a field wrong, or a field a count at a place does not take', () => {
    expect(readRow({ sku: 'LAMP', location: 'lyon', on_hand: -1, counted_at: '2026-11-25T09:00:00Z' }, 3)).toMatchObject({ read: { kind: 'invalid', field: 'on_hand' } });
    expect(readRow({ ref: 'b1', sku: 'LAMP', location: 'lyon', on_hand: 1, counted_at: '2026-11-25T09:00:00Z' }, 4)).toEqual({ row: 4, read: { kind: 'invalid', field: 'ref', message: 'is not a field of a row' } });
    expect(readRow({ sku: 'LAMP', on_hand: 1, counted_at: '2026-11-25T09:00:00Z' }, 5)).toMatchObject({ read: { kind: 'invalid', field: 'location' } });
  });
});
