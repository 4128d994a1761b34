import { describe, expect, it } from 'vitest';
import { LocationNotFound } from '../../domain/errors';
import { stockList } from '../../domain/listing-services';
import { addBatch, allocate, skuStock } from '../../domain/services';
import { listCursorOf, listPositionOf } from '../../domain/stock-listings';
import { FakeRepository } from '../support/fake-repository';

describe('a page of a list of SKUs', () => {
  const stocked = async () => {
    const repository = new FakeRepository();
    await repository.saveLocation({ id: 'lyon', name: 'Lyon', priority: 1, serves: ['*'], active: true });
    await addBatch({ ref: 'lamp-1', sku: 'LAMP', qty: 10, eta: null }, repository);
    await addBatch({ ref: 'lamp-2', sku: 'LAMP', qty: 4, eta: '2027-01-01', location: 'lyon' }, repository);
    await addBatch({ ref: 'rug-1', sku: 'RUG', qty: 3, eta: null, location: 'lyon' }, repository);
    await allocate({ orderid: 'order-1', sku: 'LAMP', qty: 2 }, repository);
    return repository;
  };

  it('shows each SKU with the levels its stock read answers, and the units no line or hold has', async () => {
    const repository = await stocked();
    const { entries } = await stockList({ kind: 'all' }, { limit: 10 }, repository);
    const lamp = await skuStock('LAMP', repository);
    expect(entries[0]).toEqual({ sku: 'LAMP', inStock: lamp.inStock, incoming: lamp.incoming, held: lamp.held, nextEta: lamp.nextEta, onHand: lamp.onHand, committed: lamp.committed, available: 12 });
    expect(entries.map(({ sku }) => sku)).toEqual(['LAMP', 'RUG']);
  });

  it("shows a location's SKUs with their levels there", async () => {
    const { entries } = await stockList({ kind: 'location', location: 'lyon' }, { limit: 10 }, await stocked());
    expect(entries).toEqual([
      { sku: 'LAMP', inStock: 0, incoming: 4, held: 0, nextEta: '2027-01-01', onHand: 0, committed: 0, available: 4 },
      { sku: 'RUG', inStock: 3, incoming: 0, held: 0, nextEta: null, onHand: 3, committed: 0, available: 3 },
    ]);
  });

  it('goes on after the position the page before ended at', async () => {
    const repository = await stocked();
    const first = await stockList({ kind: 'all' }, { limit: 1 }, repository);
    expect(first.entries.map(({ sku }) => sku)).toEqual(['LAMP']);
    const second = await stockList({ kind: 'all' }, { limit: 1, ...(first.next ? { after: first.next } : {}) }, repository);
    expect(second).toEqual({ entries: [expect.objectContaining({ sku: 'RUG' })] });
  });

  it('is refused for a location that does not exist', async () => {
    await expect(stockList({ kind: 'location', location: 'paris' }, { limit: 10 }, await stocked())).rejects.toThrow(LocationNotFound);
  });
});

describe("a list page's cursor", () => {
  it('names the position it was made of, and is safe in a URL', () => {
    const position = { part: 3, sku: '📦'.repeat(128) };
    expect(listCursorOf(position)).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(listPositionOf(listCursorOf(position))).toEqual(position);
  });

  it('is refused when it is not one the service made', () => {
    const made = (parts: unknown) => Buffer.from(JSON.stringify(parts)).toString('base64url');
    for (const cursor of ['', 'not a cursor', made([0]), made([-1, 'LAMP']), made([1.5, 'LAMP']), made([1000, 'LAMP']), made([0, '']), made([0, 7]), made([0, 'x'.repeat(513)]), 'A'.repeat(1_025)]) {
      expect(listPositionOf(cursor)).toBeUndefined();
    }
  });
});
