import { describe, expect, it } from 'vitest';
import { type Batch, type OrderLine, byPreference, canAllocate, newBatch } from '../../domain/model';
import { eligibilityOf, rankBatchesForLine } from '../../domain/routing';

const batch = (ref: string, qty: number, eta: string | null, sku = 'LAMP'): Batch => newBatch({ ref, sku, qty, eta });
const line = (qty: number, sku = 'LAMP'): OrderLine => ({ orderid: 'order-1', sku, qty });
/** The batches that can take the line, best first, every one at `default`, the one location there is before any other is made. */
const candidateBatches = (forLine: OrderLine, batches: readonly Batch[]) => rankBatchesForLine(batches, forLine, eligibilityOf([], {}));

describe('which batch wins', () => {
  it('prefers in-stock batches to shipments', () => {
    const [first] = candidateBatches(line(1), [batch('shipment', 10, '2026-01-01'), batch('in-stock', 10, null)]);
    expect(first?.ref).toBe('in-stock');
  });

  it('prefers the earliest shipment', () => {
    const chosen = candidateBatches(line(1), [
      batch('later', 10, '2026-03-01'),
      batch('earliest', 10, '2026-01-15'),
      batch('middle', 10, '2026-02-01'),
    ]);
    expect(chosen.map((b) => b.ref)).toEqual(['earliest', 'middle', 'later']);
  });

  it('breaks a tie by the batch reference, whatever order the batches come in', () => {
    const tied = [batch('b-2', 10, null), batch('b-3', 10, null), batch('b-1', 10, null)];
    expect(candidateBatches(line(1), tied).map((b) => b.ref)).toEqual(['b-1', 'b-2', 'b-3']);
    expect(candidateBatches(line(1), tied.reverse()).map((b) => b.ref)).toEqual(['b-1', 'b-2', 'b-3']);
  });

  it('skips a batch with too little left rather than splitting the line', () => {
    const chosen = candidateBatches(line(5), [batch('small', 4, null), batch('shipment', 5, '2026-01-01')]);
    expect(chosen.map((b) => b.ref)).toEqual(['shipment']);
  });

  it('offers nothing when no single batch can hold the whole line', () => {
    expect(candidateBatches(line(6), [batch('a', 5, null), batch('b', 5, '2026-01-01')])).toEqual([]);
  });

  it('takes a line that uses up exactly what is left', () => {
    expect(canAllocate(batch('exact', 5, null), line(5))).toBe(true);
  });

  it('never offers a batch of another SKU', () => {
    expect(canAllocate(batch('other', 100, null, 'TABLE'), line(1, 'LAMP'))).toBe(false);
  });

  it('orders equal batches as equal', () => {
    expect(byPreference(batch('same', 1, null), batch('same', 2, null))).toBe(0);
  });
});

describe('a new batch', () => {
  it('has all of its quantity available', () => {
    expect(newBatch({ ref: 'b', sku: 'LAMP', qty: 20, eta: null }).available).toBe(20);
  });
});
