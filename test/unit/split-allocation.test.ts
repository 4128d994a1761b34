import { describe, expect, it } from 'vitest';
import { LineSplitOtherwise, OrderLinesSplitOtherwise, OutOfStock } from '../../domain/errors';
import { changeBatch } from '../../domain/batch-changes';
import { placeHold } from '../../domain/hold-services';
import type { Allocation, Part } from '../../domain/model';
import type { SaveAllocationResult } from '../../domain/ports';
import { addBatch, allocate, cancelAllocation, orderAllocations } from '../../domain/services';
import { allocateOrder } from '../../domain/order-services';
import { FakeRepository } from '../support/fake-repository';

/*
 * A line allocated with `split` (docs/api.md, "Split lines"), through the services over the
 * in-memory repository: its parts, its repeats and refusals, lazy expiry for it, and what a cancel
 * and a change of a batch do to its parts.
 */

const withBatches = async (...batches: Array<[ref: string, qty: number, eta?: string | null]>) => {
  const repository = new FakeRepository();
  for (const [ref, qty, eta = null] of batches) await addBatch({ ref, sku: 'LAMP', qty, eta }, repository);
  return repository;
};
const availableOf = (repository: FakeRepository, ...refs: string[]) => refs.map((ref) => repository.batches.get(ref)?.available);
const line = (qty: number, orderid = 'o1') => ({ orderid, sku: 'LAMP', qty });

describe('a line allocated with split', () => {
  it('takes its parts in the order of the one-line preference, each what its batch has and the last the rest', async () => {
    const repository = await withBatches(['b-1', 20], ['b-2', 20], ['b-3', 5]);
    const outcome = await allocate(line(30), repository, {}, 'batches');
    expect(outcome).toEqual({
      batchref: 'b-1',
      location: 'default',
      parts: [
        { batchref: 'b-1', qty: 20, location: 'default' },
        { batchref: 'b-2', qty: 10, location: 'default' },
      ],
      created: true,
    });
    expect(availableOf(repository, 'b-1', 'b-2', 'b-3')).toEqual([0, 10, 5]);
  });

  it('answers a repeat with its parts and takes nothing, and refuses a repeat with another split', async () => {
    const repository = await withBatches(['b-1', 3], ['b-2', 3]);
    const first = await allocate(line(5), repository, {}, 'batches');
    expect(await allocate(line(5), repository, {}, 'batches')).toEqual({ ...first, created: false });
    await expect(allocate(line(5), repository, {}, 'locations')).rejects.toThrow(LineSplitOtherwise);
    await expect(allocate(line(5), repository)).rejects.toThrow(LineSplitOtherwise);
    await expect(allocateOrder({ orderid: 'o1', lines: [{ sku: 'LAMP', qty: 5 }] }, repository)).rejects.toThrow(OrderLinesSplitOtherwise);
    expect(availableOf(repository, 'b-1', 'b-2')).toEqual([0, 1]);
  });

  it('refuses a whole line allocated already with a split as another line, and a split one allocated whole', async () => {
    const repository = await withBatches(['b-1', 9]);
    await allocate(line(2), repository);
    await expect(allocate(line(2), repository, {}, 'batches')).rejects.toThrow(LineSplitOtherwise);
  });

  it('is refused out of stock, and the refusal recorded, when no way its split allows holds it', async () => {
    const repository = await withBatches(['b-1', 3], ['b-2', 3]);
    await expect(allocate(line(7), repository, {}, 'batches')).rejects.toThrow(OutOfStock);
    expect(repository.outOfStock).toEqual([line(7)]);
    expect(availableOf(repository, 'b-1', 'b-2')).toEqual([3, 3]);
  });

  it('reads the expired holds of a batch that would take it in fewer parts, and takes it whole there', async () => {
    const repository = await withBatches(['b-1', 10], ['b-2', 5]);
    await placeHold({ holdid: 'cart', lines: [{ sku: 'LAMP', qty: 8 }], ttlSeconds: 60 }, repository);
    expect(availableOf(repository, 'b-1')).toEqual([2]);
    repository.now += 61_000;
    const outcome = await allocate(line(6), repository, {}, 'batches');
    expect(outcome.parts).toEqual([{ batchref: 'b-1', qty: 6, location: 'default' }]);
  });

  it('is read again when its take loses a race, and placed on the batches as they are then', async () => {
    const repository = await withBatches(['b-1', 4], ['b-2', 4], ['b-3', 4]);
    const original = repository.saveSplitLine.bind(repository);
    let raced = false;
    repository.saveSplitLine = async (allocation: Allocation, parts: readonly Part[]): Promise<SaveAllocationResult> => {
      if (!raced) {
        raced = true;
        await allocate(line(4, 'other'), repository);
      }
      return original(allocation, parts);
    };
    const outcome = await allocate(line(6), repository, {}, 'batches');
    expect(outcome.parts?.map(({ batchref, qty }) => [batchref, qty])).toEqual([['b-2', 4], ['b-3', 2]]);
    expect(availableOf(repository, 'b-1', 'b-2', 'b-3')).toEqual([0, 0, 2]);
  });

  it('gives every part back to its batch when cancelled', async () => {
    const repository = await withBatches(['b-1', 3], ['b-2', 3]);
    await allocate(line(5), repository, {}, 'batches');
    await cancelAllocation('o1', 'LAMP', repository);
    expect(availableOf(repository, 'b-1', 'b-2')).toEqual([3, 3]);
    await expect(orderAllocations('o1', repository)).rejects.toThrow();
  });
});

describe('a change of a batch under a part', () => {
  it('moves only the part, to a batch that takes it whole, and reports its qty', async () => {
    const repository = await withBatches(['b-1', 4], ['b-2', 4], ['b-3', 9, '2027-01-01']);
    await allocate(line(6), repository, {}, 'batches');
    const { reallocated } = await changeBatch('b-2', { qty: 0 }, repository);
    expect(reallocated).toEqual([{ orderid: 'o1', sku: 'LAMP', qty: 2, from: 'b-2', batchref: 'b-3' }]);
    const [stored] = await orderAllocations('o1', repository);
    expect(stored?.split?.parts.map(({ batchref, qty }) => [batchref, qty])).toEqual([['b-1', 4], ['b-3', 2]]);
    expect(availableOf(repository, 'b-1', 'b-2', 'b-3')).toEqual([0, 0, 7]);
  });

  it('places the part again over the batches left on its shelf when no one of them can take it, listing each move', async () => {
    const repository = await withBatches(['b-1', 20], ['b-2', 20], ['b-3', 15]);
    await allocate(line(30), repository, {}, 'batches');
    const { reallocated } = await changeBatch('b-1', { qty: 5 }, repository);
    expect(reallocated).toEqual([
      { orderid: 'o1', sku: 'LAMP', qty: 10, from: 'b-1', batchref: 'b-2' },
      { orderid: 'o1', sku: 'LAMP', qty: 10, from: 'b-1', batchref: 'b-3' },
    ]);
    const [stored] = await orderAllocations('o1', repository);
    expect(stored?.qty).toBe(30);
    // The units new to b-3 take the place of the part they left; those joining b-2 join its part.
    expect(stored?.split?.parts.map(({ batchref, qty }) => [batchref, qty])).toEqual([['b-3', 10], ['b-2', 20]]);
    expect(availableOf(repository, 'b-1', 'b-2', 'b-3')).toEqual([5, 0, 5]);
  });

  it('takes the whole line out of its order when the batches at its one place cannot hold the part, though a batch elsewhere could', async () => {
    const repository = new FakeRepository();
    await repository.saveLocation({ id: 'nantes', name: 'Nantes', priority: 1, serves: ['*'], active: true });
    for (const [ref, qty, location] of [['b-1', 20, 'default'], ['b-2', 20, 'default'], ['n-1', 25, 'nantes']] as const) await addBatch({ ref, sku: 'LAMP', qty, eta: null, location }, repository);
    await allocate(line(30), repository, {}, 'batches');
    const { reallocated } = await changeBatch('b-1', { qty: 5 }, repository);
    expect(reallocated).toEqual([{ orderid: 'o1', sku: 'LAMP', qty: 30, from: 'b-1', batchref: null }]);
    expect(availableOf(repository, 'b-1', 'b-2', 'n-1')).toEqual([5, 20, 25]);
    await expect(orderAllocations('o1', repository)).rejects.toThrow();
  });

  it('takes the whole line out of its order, every part given back, when no batch can take the part', async () => {
    const repository = await withBatches(['b-1', 4], ['b-2', 4]);
    await allocate(line(6), repository, {}, 'batches');
    const { reallocated } = await changeBatch('b-1', { qty: 1 }, repository);
    expect(reallocated).toEqual([{ orderid: 'o1', sku: 'LAMP', qty: 6, from: 'b-1', batchref: null }]);
    expect(availableOf(repository, 'b-1', 'b-2')).toEqual([1, 4]);
    await expect(orderAllocations('o1', repository)).rejects.toThrow();
  });

  it('takes parts and whole lines off newest first, as many as the batch needs, each by its own rule', async () => {
    const repository = await withBatches(['b-1', 4], ['b-2', 3], ['b-3', 3]);
    await allocate(line(1, 'whole'), repository);
    await allocate(line(5, 'split'), repository, {}, 'batches');
    const { batch, reallocated } = await changeBatch('b-1', { qty: 0 }, repository);
    expect(batch.available).toBe(0);
    expect(reallocated).toEqual([
      { orderid: 'split', sku: 'LAMP', qty: 3, from: 'b-1', batchref: 'b-3' },
      { orderid: 'whole', sku: 'LAMP', qty: 1, from: 'b-1', batchref: 'b-2' },
    ]);
    expect(availableOf(repository, 'b-2', 'b-3')).toEqual([0, 0]);
  });

  it('gives the room left to the newest line first, whole or split', async () => {
    const repository = await withBatches(['a', 20]);
    await allocate(line(10, 'older-whole'), repository);
    await allocate(line(10, 'newer-split'), repository, {}, 'batches');
    await addBatch({ ref: 'c', sku: 'LAMP', qty: 10, eta: null }, repository);
    const { reallocated } = await changeBatch('a', { qty: 0 }, repository);
    expect(reallocated).toEqual([
      { orderid: 'newer-split', sku: 'LAMP', qty: 10, from: 'a', batchref: 'c' },
      { orderid: 'older-whole', sku: 'LAMP', qty: 10, from: 'a', batchref: null },
    ]);
  });

  it('moves a part onto a batch that a line leaving its order before it gave units back, though that batch was empty when read', async () => {
    const repository = await withBatches(['b-1', 7], ['b-4', 4, '2027-04-20'], ['b-6', 8, '2027-04-20']);
    await allocate(line(4, 'older'), repository, {}, 'locations');
    await allocate(line(15, 'newer'), repository, {}, 'batches');
    expect(availableOf(repository, 'b-1', 'b-4', 'b-6')).toEqual([0, 0, 0]);
    const { reallocated } = await changeBatch('b-1', { qty: 1 }, repository);
    expect(reallocated).toEqual([
      { orderid: 'newer', sku: 'LAMP', qty: 15, from: 'b-1', batchref: null },
      { orderid: 'older', sku: 'LAMP', qty: 4, from: 'b-1', batchref: 'b-4' },
    ]);
    expect(availableOf(repository, 'b-1', 'b-4', 'b-6')).toEqual([1, 0, 8]);
  });
});
