import { describe, expect, it } from 'vitest';
import { AllocationContended, DuplicateBatch, InvalidSku, LineAlreadyAllocated, OutOfStock } from '../../domain/errors';
import type { Hold } from '../../domain/holds';
import { type Allocation, type Batch, newBatch } from '../../domain/model';
import type { SaveAllocationResult } from '../../domain/ports';
import { MAX_ALLOCATION_ROUNDS, addBatch, allocate } from '../../domain/services';
import { FakeRepository } from '../support/fake-repository';

const withBatches = async (...batches: Array<[ref: string, qty: number, eta: string | null]>) => {
  const repository = new FakeRepository();
  for (const [ref, qty, eta] of batches) await addBatch({ ref, sku: 'LAMP', qty, eta }, repository);
  return repository;
};

/** A batch in stock and a shipment, whose first take loses its race with `outcome`; and a count of the reads of their SKU. */
const losingTheFirstTakeOnce = async (outcome: 'batch-changed' | 'read-again') => {
  const repository = await withBatches(['in-stock', 10, null], ['shipment', 10, '2026-01-01']);
  let reads = 0;
  const originalRead = repository.stockOf.bind(repository);
  repository.stockOf = async (sku) => {
    reads++;
    return originalRead(sku);
  };
  const original = repository.saveAllocation.bind(repository);
  let lost = false;
  repository.saveAllocation = async (allocation: Allocation, batch: Batch): Promise<SaveAllocationResult> => {
    if (lost) return original(allocation, batch);
    lost = true;
    return { outcome };
  };
  return { repository, reads: () => reads };
};

describe('allocate', () => {
  it('places the line in the preferred batch and takes its quantity', async () => {
    const repository = await withBatches(['shipment', 100, '2026-05-01'], ['in-stock', 100, null]);
    const outcome = await allocate({ orderid: 'o1', sku: 'LAMP', qty: 10 }, repository);
    expect(outcome).toEqual({ batchref: 'in-stock', location: 'default', created: true });
    expect(repository.batches.get('in-stock')?.available).toBe(90);
    expect(repository.batches.get('shipment')?.available).toBe(100);
  });

  it('refuses a SKU that has no batch at all', async () => {
    const repository = await withBatches(['b1', 10, null]);
    await expect(allocate({ orderid: 'o1', sku: 'CHAIR', qty: 1 }, repository)).rejects.toThrow(InvalidSku);
  });

  it('answers out of stock when no batch can take the whole line', async () => {
    const repository = await withBatches(['b1', 5, null], ['b2', 5, '2026-01-01']);
    await expect(allocate({ orderid: 'o1', sku: 'LAMP', qty: 6 }, repository)).rejects.toThrow(OutOfStock);
    expect(repository.lines.size).toBe(0);
  });

  it('records a refusal for lack of stock, for its OutOfStock event', async () => {
    const repository = await withBatches(['b1', 5, null]);
    await expect(allocate({ orderid: 'o1', sku: 'LAMP', qty: 6 }, repository)).rejects.toThrow(OutOfStock);
    expect(repository.outOfStock).toEqual([{ orderid: 'o1', sku: 'LAMP', qty: 6 }]);
  });

  it('records no refusal for lack of stock when the SKU is unknown, or when the line is a repeat', async () => {
    const repository = await withBatches(['b1', 2, null]);
    await expect(allocate({ orderid: 'o1', sku: 'CHAIR', qty: 1 }, repository)).rejects.toThrow(InvalidSku);
    await allocate({ orderid: 'o2', sku: 'LAMP', qty: 2 }, repository);
    await allocate({ orderid: 'o2', sku: 'LAMP', qty: 2 }, repository);
    expect(repository.outOfStock).toEqual([]);
  });

  it('answers out of stock, not invalid sku, when every batch of the SKU is exhausted', async () => {
    const repository = await withBatches(['b1', 2, null]);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 2 }, repository);
    await expect(allocate({ orderid: 'o2', sku: 'LAMP', qty: 1 }, repository)).rejects.toThrow(OutOfStock);
  });

  it('answers a repeat of an allocated line with its batch, without taking more stock', async () => {
    const repository = await withBatches(['b1', 10, null]);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 4 }, repository);
    const repeat = await allocate({ orderid: 'o1', sku: 'LAMP', qty: 4 }, repository);
    expect(repeat).toEqual({ batchref: 'b1', location: 'default', created: false });
    expect(repository.batches.get('b1')?.available).toBe(6);
  });

  it('answers a repeat with its batch even after the stock ran out', async () => {
    const repository = await withBatches(['b1', 4, null]);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 4 }, repository);
    await expect(allocate({ orderid: 'o1', sku: 'LAMP', qty: 4 }, repository)).resolves.toEqual({
      batchref: 'b1',
      location: 'default',
      created: false,
    });
  });

  it('refuses the same order and SKU with another quantity, and changes nothing', async () => {
    const repository = await withBatches(['b1', 10, null]);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 4 }, repository);
    await expect(allocate({ orderid: 'o1', sku: 'LAMP', qty: 5 }, repository)).rejects.toThrow(LineAlreadyAllocated);
    expect(repository.batches.get('b1')?.available).toBe(6);
    expect(repository.lines.get(JSON.stringify(['o1', 'LAMP']))?.qty).toBe(4);
  });

  it('refuses another quantity for an allocated line even when no batch could take it', async () => {
    const repository = await withBatches(['b1', 4, null]);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 4 }, repository);
    await expect(allocate({ orderid: 'o1', sku: 'LAMP', qty: 9 }, repository)).rejects.toThrow(LineAlreadyAllocated);
  });

  it('moves on to the next batch in stock when another request took the stock first', async () => {
    const repository = await withBatches(['first', 10, null], ['second', 10, null]);
    const original = repository.saveAllocation.bind(repository);
    repository.saveAllocation = async (allocation: Allocation, batch: Batch): Promise<SaveAllocationResult> => {
      if (allocation.batchref === 'first') return { outcome: 'batch-changed' };
      return original(allocation, batch);
    };
    await expect(allocate({ orderid: 'o1', sku: 'LAMP', qty: 3 }, repository)).resolves.toEqual({
      batchref: 'second',
      location: 'default',
      created: true,
    });
  });

  it('reads the batches again rather than fall from a batch in stock to a shipment on the read it lost the race on', async () => {
    const { repository, reads } = await losingTheFirstTakeOnce('batch-changed');
    await expect(allocate({ orderid: 'o1', sku: 'LAMP', qty: 3 }, repository)).resolves.toMatchObject({ batchref: 'in-stock', created: true });
    expect(reads()).toBe(2);
  });

  it('reads the batches again, rather than pass over a preferred batch that was changed but may still take the line', async () => {
    const { repository, reads } = await losingTheFirstTakeOnce('read-again');
    await expect(allocate({ orderid: 'o1', sku: 'LAMP', qty: 3 }, repository)).resolves.toEqual({ batchref: 'in-stock', location: 'default', created: true });
    expect(reads()).toBe(2);
    expect(repository.batches.get('shipment')?.available).toBe(10);
  });

  it('frees an in-stock batch whose hold expired, rather than fall back to a shipment, when another request took the first batch', async () => {
    const repository = new FakeRepository();
    const sku = 'LAMP';
    await repository.addBatch(newBatch({ ref: 'a-in-stock', sku, qty: 5, eta: null }));
    await repository.addBatch(newBatch({ ref: 'b-in-stock', sku, qty: 5, eta: null }));
    await repository.addBatch(newBatch({ ref: 'c-shipment', sku, qty: 100, eta: '2030-01-01' }));
    const b = repository.batches.get('b-in-stock') as Batch;
    const hold: Hold = { holdid: 'cart-1', lines: [{ sku, qty: 5, batchref: b.ref }], status: 'active', expiresAt: new Date(repository.now + 60_000).toISOString() };
    expect(await repository.saveHold(hold, [{ line: hold.lines[0]!, batch: b }])).toEqual({ outcome: 'saved' });
    repository.now += 120_000;
    // Another request takes all of a-in-stock between this allocation's read and its write.
    const save = repository.saveAllocation.bind(repository);
    let raced = false;
    repository.saveAllocation = async (allocation, batch): Promise<SaveAllocationResult> => {
      if (!raced && batch.ref === 'a-in-stock') {
        raced = true;
        await save({ orderid: 'other', sku, qty: 5, batchref: 'a-in-stock' }, batch);
      }
      return save(allocation, batch);
    };
    expect((await allocate({ orderid: 'order-1', sku, qty: 5 }, repository)).batchref).toBe('b-in-stock');
    expect(repository.batches.get('c-shipment')?.available).toBe(100);
  });

  it('reads the batches again when every candidate was taken, and once more for the refusal, then answers out of stock', async () => {
    const repository = await withBatches(['only', 10, null]);
    let reads = 0;
    const originalRead = repository.stockOf.bind(repository);
    repository.stockOf = async (sku) => {
      reads++;
      return originalRead(sku);
    };
    // A competitor empties the batch between our read and our write.
    repository.saveAllocation = async () => {
      repository.batches.set('only', { ...repository.batches.get('only')!, available: 0 });
      return { outcome: 'batch-changed' };
    };
    await expect(allocate({ orderid: 'o1', sku: 'LAMP', qty: 1 }, repository)).rejects.toThrow(OutOfStock);
    expect(reads).toBe(3);
  });

  it('gives up as contended, not out of stock, after a bounded number of lost races', async () => {
    const repository = await withBatches(['contested', 10, null]);
    let reads = 0;
    const originalRead = repository.stockOf.bind(repository);
    repository.stockOf = async (sku) => {
      reads++;
      return originalRead(sku);
    };
    repository.saveAllocation = async () => ({ outcome: 'batch-changed' });
    await expect(allocate({ orderid: 'o1', sku: 'LAMP', qty: 1 }, repository)).rejects.toThrow(AllocationContended);
    expect(reads).toBe(MAX_ALLOCATION_ROUNDS);
  });
});

describe('addBatch', () => {
  it('registers a batch with all its quantity available', async () => {
    const repository = await withBatches(['b1', 7, '2026-03-01']);
    expect(repository.batches.get('b1')).toEqual({ ref: 'b1', sku: 'LAMP', qty: 7, available: 7, eta: '2026-03-01' });
  });

  it('answers a batch added again with the same sku, qty and eta as a repeat, changing nothing', async () => {
    const repository = await withBatches(['b1', 7, '2026-03-01']);
    expect(await addBatch({ ref: 'b1', sku: 'LAMP', qty: 7, eta: '2026-03-01' }, repository)).toEqual({ created: false });
    expect(repository.batches.get('b1')).toEqual({ ref: 'b1', sku: 'LAMP', qty: 7, available: 7, eta: '2026-03-01' });
  });

  it.each([
    ['another SKU', { sku: 'TABLE' }],
    ['another qty', { qty: 8 }],
    ['another eta', { eta: null }],
  ])('refuses a reference that already exists with %s', async (_, other) => {
    const repository = await withBatches(['b1', 7, '2026-03-01']);
    await expect(addBatch({ ref: 'b1', sku: 'LAMP', qty: 7, eta: '2026-03-01', ...other }, repository)).rejects.toThrow(DuplicateBatch);
    expect(repository.batches.get('b1')).toEqual({ ref: 'b1', sku: 'LAMP', qty: 7, available: 7, eta: '2026-03-01' });
  });
});
