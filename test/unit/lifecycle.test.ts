import { describe, expect, it } from 'vitest';
import { BatchNotFound, LineNotFound, OrderNotFound, StoreUnavailable, UnknownSku } from '../../domain/errors';
import { type Allocation, type Batch, allocatedOf, changedBatch, linesToTakeOff, newBatch, stockLevels } from '../../domain/model';
import {
  addBatch,
  allocate,
  batchStatus,
  cancelAllocation,
  changeBatch,
  orderAllocations,
  skuStock,
} from '../../domain/services';
import { FakeRepository } from '../support/fake-repository';

const shop = async (...batches: Array<[ref: string, qty: number, eta: string | null]>) => {
  const repository = new FakeRepository();
  for (const [ref, qty, eta] of batches) await addBatch({ ref, sku: 'LAMP', qty, eta }, repository);
  return repository;
};

const line = (orderid: string, qty: number, batchref = 'b1'): Allocation => ({ orderid, sku: 'LAMP', qty, batchref });

describe('the rules of a batch that changes', () => {
  it('keeps its lines when its qty changes, so what is available moves with the qty', () => {
    const batch = { ...newBatch({ ref: 'b1', sku: 'LAMP', qty: 10, eta: null }), available: 4 };
    expect(changedBatch(batch, { qty: 7 })).toEqual({ ...batch, qty: 7, available: 1 });
    expect(changedBatch(batch, { qty: 3 })).toEqual({ ...batch, qty: 3, available: -3 });
    expect(allocatedOf(changedBatch(batch, { qty: 3 }))).toBe(6);
    expect(changedBatch(batch, { eta: '2027-01-01' })).toEqual({ ...batch, eta: '2027-01-01' });
  });

  it('takes lines off a batch that holds more than its qty newest first, until the rest fits', () => {
    const batch = { ...newBatch({ ref: 'b1', sku: 'LAMP', qty: 10, eta: null }), qty: 4, available: -6 };
    const newestFirst = [line('o4', 1), line('o3', 2), line('o2', 5), line('o1', 2)];
    expect(linesToTakeOff(batch, newestFirst)).toEqual([line('o4', 1), line('o3', 2), line('o2', 5)]);
    expect(linesToTakeOff({ ...batch, available: 0 }, newestFirst)).toEqual([]);
  });

  it('counts stock on the shelf and incoming apart, with the batches in the order allocation prefers', () => {
    const batch = (ref: string, available: number, eta: string | null): Batch => ({ ref, sku: 'LAMP', qty: 10, available, eta });
    const levels = stockLevels('LAMP', [batch('late', 5, '2027-03-01'), batch('shelf', 2, null), batch('soon', 4, '2027-01-01')]);
    expect(levels).toEqual({
      sku: 'LAMP',
      inStock: 2,
      incoming: 9,
      held: 0,
      nextEta: '2027-01-01',
      batches: [batch('shelf', 2, null), batch('soon', 4, '2027-01-01'), batch('late', 5, '2027-03-01')],
    });
  });
});

describe('reading and cancelling', () => {
  it("reads an order's lines sorted by sku, and refuses an order with none", async () => {
    const repository = await shop(['b1', 10, null]);
    await addBatch({ ref: 'c1', sku: 'CHAIR', qty: 10, eta: null }, repository);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 1 }, repository);
    await allocate({ orderid: 'o1', sku: 'CHAIR', qty: 2 }, repository);
    expect(await orderAllocations('o1', repository)).toEqual([
      { orderid: 'o1', sku: 'CHAIR', qty: 2, batchref: 'c1' },
      { orderid: 'o1', sku: 'LAMP', qty: 1, batchref: 'b1' },
    ]);
    await expect(orderAllocations('o2', repository)).rejects.toThrow(OrderNotFound);
  });

  it('gives a cancelled line its stock back, refuses a repeat, and lets the line be allocated again with another qty', async () => {
    const repository = await shop(['b1', 10, null]);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 4 }, repository);

    await cancelAllocation('o1', 'LAMP', repository);

    expect(repository.batches.get('b1')?.available).toBe(10);
    await expect(cancelAllocation('o1', 'LAMP', repository)).rejects.toThrow(LineNotFound);
    expect(await allocate({ orderid: 'o1', sku: 'LAMP', qty: 7 }, repository)).toEqual({ batchref: 'b1', created: true });
  });

  it('reads a batch by reference, and the stock of a SKU even when all of it is gone', async () => {
    const repository = await shop(['b1', 2, null]);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 2 }, repository);
    expect(await batchStatus('b1', repository)).toEqual({ ref: 'b1', sku: 'LAMP', qty: 2, available: 0, eta: null });
    await expect(batchStatus('nope', repository)).rejects.toThrow(BatchNotFound);
    expect(await skuStock('LAMP', repository)).toEqual({ sku: 'LAMP', inStock: 0, incoming: 0, held: 0, nextEta: null, batches: [] });
    await expect(skuStock('CHAIR', repository)).rejects.toThrow(UnknownSku);
  });
});

describe('changing a batch', () => {
  it('moves no line for a new eta or a larger qty', async () => {
    const repository = await shop(['b1', 10, null]);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 4 }, repository);
    expect(await changeBatch('b1', { eta: '2027-01-01', qty: 20 }, repository)).toEqual({
      batch: { ref: 'b1', sku: 'LAMP', qty: 20, available: 16, eta: '2027-01-01' },
      reallocated: [],
      endedHolds: [],
    });
  });

  it('takes the newest lines off a batch that shrank and allocates them again by the normal rule', async () => {
    const repository = await shop(['b1', 10, null], ['later', 10, '2027-06-01'], ['sooner', 3, '2027-01-01']);
    for (const [orderid, qty] of [['o1', 4], ['o2', 3], ['o3', 2]] as const) await allocate({ orderid, sku: 'LAMP', qty }, repository);

    const { batch, reallocated } = await changeBatch('b1', { qty: 5 }, repository);

    // 9 on a batch of 5: o3 (2) then o2 (3) come off; o3 fits the sooner shipment, o2 then only the later one.
    expect(reallocated).toEqual([
      { orderid: 'o3', sku: 'LAMP', qty: 2, from: 'b1', batchref: 'sooner' },
      { orderid: 'o2', sku: 'LAMP', qty: 3, from: 'b1', batchref: 'later' },
    ]);
    expect(batch).toEqual({ ref: 'b1', sku: 'LAMP', qty: 5, available: 1, eta: null });
    expect(repository.lines.get(JSON.stringify(['o1', 'LAMP']))?.batchref).toBe('b1');
  });

  it('removes a line from its order when no batch can take it whole, and empties a batch set to 0', async () => {
    const repository = await shop(['b1', 10, null], ['small', 2, '2027-01-01']);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 4 }, repository);
    await allocate({ orderid: 'o2', sku: 'LAMP', qty: 1 }, repository);

    const { batch, reallocated } = await changeBatch('b1', { qty: 0 }, repository);

    expect(reallocated).toEqual([
      { orderid: 'o2', sku: 'LAMP', qty: 1, from: 'b1', batchref: 'small' },
      { orderid: 'o1', sku: 'LAMP', qty: 4, from: 'b1', batchref: null },
    ]);
    expect(batch).toMatchObject({ qty: 0, available: 0 });
    expect(await repository.allocationOf('o1', 'LAMP')).toBeUndefined();
    expect(repository.batches.get('small')?.available).toBe(1);
  });

  it('answers an exact repeat with nothing reallocated', async () => {
    const repository = await shop(['b1', 10, null], ['b2', 10, null]);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 8 }, repository);
    expect((await changeBatch('b1', { qty: 5 }, repository)).reallocated).toHaveLength(1);
    expect(await changeBatch('b1', { qty: 5 }, repository)).toEqual({
      batch: { ref: 'b1', sku: 'LAMP', qty: 5, available: 5, eta: null },
      reallocated: [],
      endedHolds: [],
    });
  });

  it('finishes, when repeated, a change that was cut off with lines still to move', async () => {
    const repository = await shop(['b1', 10, null], ['b2', 10, null]);
    for (const orderid of ['o1', 'o2', 'o3']) await allocate({ orderid, sku: 'LAMP', qty: 3 }, repository);
    const move = repository.moveAllocation.bind(repository);
    let moves = 0;
    repository.moveAllocation = async (...args) => {
      if (++moves === 2) throw new StoreUnavailable('The request ran out of time');
      return move(...args);
    };
    await expect(changeBatch('b1', { qty: 2 }, repository)).rejects.toThrow(StoreUnavailable);
    // The batch remembers the change: it holds more than its qty.
    expect(repository.batches.get('b1')).toMatchObject({ qty: 2, available: -4 });

    const { batch, reallocated } = await changeBatch('b1', { qty: 2 }, repository);

    expect(reallocated.map(({ orderid }) => orderid)).toEqual(['o2', 'o1']);
    expect(batch).toMatchObject({ qty: 2, available: 2 });
    expect(repository.batches.get('b2')?.available).toBe(1);
  });

  it('reads again and carries on when another request changed a line it meant to move', async () => {
    const repository = await shop(['b1', 10, null], ['b2', 10, null]);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 3 }, repository);
    await allocate({ orderid: 'o2', sku: 'LAMP', qty: 3 }, repository);
    const move = repository.moveAllocation.bind(repository);
    let first = true;
    repository.moveAllocation = async (...args) => {
      if (first) {
        first = false;
        // Another request cancels o2 between this change's read of the lines and its move.
        await cancelAllocation('o2', 'LAMP', repository);
      }
      return move(...args);
    };

    const { batch, reallocated } = await changeBatch('b1', { qty: 1 }, repository);

    expect(reallocated).toEqual([{ orderid: 'o1', sku: 'LAMP', qty: 3, from: 'b1', batchref: 'b2' }]);
    expect(batch).toMatchObject({ qty: 1, available: 1 });
  });

  it('refuses an unknown batch', async () => {
    await expect(changeBatch('nope', { qty: 1 }, new FakeRepository())).rejects.toThrow(BatchNotFound);
  });
});
