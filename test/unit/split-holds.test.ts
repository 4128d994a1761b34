import { describe, expect, it } from 'vitest';
import { confirmHold, holdStatus, placeHold, releaseHold } from '../../domain/hold-services';
import { linesOfHold } from '../../domain/holds';
import { addBatch, allocate, cancelAllocation, orderAllocations } from '../../domain/services';
import { FakeRepository } from '../support/fake-repository';

/*
 * Holds whose lines may be split (docs/api.md, "Split lines" and "Holds"), through the services over
 * the in-memory repository: a split line held as its parts, answered, repeated, released, expired,
 * and confirmed onto the same parts.
 */

const withStock = async (...batches: Array<[ref: string, sku: string, qty: number]>) => {
  const repository = new FakeRepository();
  for (const [ref, sku, qty] of batches) await addBatch({ ref, sku, qty, eta: null }, repository);
  return repository;
};
const availableOf = (repository: FakeRepository, ...refs: string[]) => refs.map((ref) => repository.batches.get(ref)?.available);
const heldOn = (repository: FakeRepository, ...refs: string[]) => refs.map((ref) => repository.batches.get(ref)?.held ?? 0);

describe('a hold whose lines may be split', () => {
  it('holds a split line as its parts, and answers it as one line with its parts', async () => {
    const repository = await withStock(['lamp-1', 'LAMP', 20], ['lamp-2', 'LAMP', 20], ['rug-1', 'RUG', 5]);
    const { hold, created } = await placeHold({ holdid: 'cart', split: 'batches', lines: [{ sku: 'LAMP', qty: 30 }, { sku: 'RUG', qty: 2, split: 'none' }], ttlSeconds: 60 }, repository);
    expect(created).toBe(true);
    expect(hold.lines.map(({ sku, qty, batchref, split }) => [sku, qty, batchref, split])).toEqual([
      ['LAMP', 20, 'lamp-1', 'batches'],
      ['LAMP', 10, 'lamp-2', 'batches'],
      ['RUG', 2, 'rug-1', undefined],
    ]);
    expect(linesOfHold(hold).map(({ sku, qty, split }) => [sku, qty, split?.parts.map(({ batchref, qty: part }) => [batchref, part])])).toEqual([
      ['LAMP', 30, [['lamp-1', 20], ['lamp-2', 10]]],
      ['RUG', 2, undefined],
    ]);
    expect(heldOn(repository, 'lamp-1', 'lamp-2', 'rug-1')).toEqual([20, 10, 2]);
    expect(availableOf(repository, 'lamp-1', 'lamp-2', 'rug-1')).toEqual([0, 10, 3]);
  });

  it('answers a repeat as the hold it is, and refuses one with another split, holding nothing more', async () => {
    const repository = await withStock(['lamp-1', 'LAMP', 3], ['lamp-2', 'LAMP', 3]);
    const request = { holdid: 'cart', lines: [{ sku: 'LAMP', qty: 5, split: 'batches' as const }], ttlSeconds: 60 };
    const first = await placeHold(request, repository);
    expect(await placeHold(request, repository)).toEqual({ hold: first.hold, created: false });
    await expect(placeHold({ ...request, lines: [{ sku: 'LAMP', qty: 5, split: 'locations' }] }, repository)).rejects.toMatchObject({ name: 'HoldConflict', code: 'split_otherwise' });
    await expect(placeHold({ ...request, lines: [{ sku: 'LAMP', qty: 5 }] }, repository)).rejects.toMatchObject({ name: 'HoldConflict', code: 'split_otherwise' });
    expect(heldOn(repository, 'lamp-1', 'lamp-2')).toEqual([3, 2]);
  });

  it("confirms a split line onto the same parts: the order's line names them, and the held units become its", async () => {
    const repository = await withStock(['lamp-1', 'LAMP', 3], ['lamp-2', 'LAMP', 3]);
    await placeHold({ holdid: 'cart', lines: [{ sku: 'LAMP', qty: 5, split: 'batches' }], ttlSeconds: 60 }, repository);
    const { lines, created } = await confirmHold('cart', 'o1', repository);
    expect(created).toBe(true);
    const parts = [
      { batchref: 'lamp-1', qty: 3, location: 'default' },
      { batchref: 'lamp-2', qty: 2, location: 'default' },
    ];
    expect(lines).toEqual([{ orderid: 'o1', sku: 'LAMP', qty: 5, batchref: 'lamp-1', location: 'default', split: { split: 'batches', parts } }]);
    expect((await orderAllocations('o1', repository))[0]?.split).toEqual({ split: 'batches', parts });
    expect(heldOn(repository, 'lamp-1', 'lamp-2')).toEqual([0, 0]);
    expect(availableOf(repository, 'lamp-1', 'lamp-2')).toEqual([0, 1]);
    expect(await confirmHold('cart', 'o1', repository)).toEqual({ lines, created: false });
    // The confirmed line is a split line like any other: a cancel gives every part back.
    await cancelAllocation('o1', 'LAMP', repository);
    expect(availableOf(repository, 'lamp-1', 'lamp-2')).toEqual([3, 3]);
  });

  it('gives every part back when released', async () => {
    const repository = await withStock(['lamp-1', 'LAMP', 3], ['lamp-2', 'LAMP', 3]);
    await placeHold({ holdid: 'cart', lines: [{ sku: 'LAMP', qty: 5, split: 'batches' }], ttlSeconds: 60 }, repository);
    expect(await releaseHold('cart', repository)).toBe('released');
    expect(heldOn(repository, 'lamp-1', 'lamp-2')).toEqual([0, 0]);
    expect(availableOf(repository, 'lamp-1', 'lamp-2')).toEqual([3, 3]);
  });

  it('frees every part once it has expired, for the next line to take', async () => {
    const repository = await withStock(['lamp-1', 'LAMP', 3], ['lamp-2', 'LAMP', 3]);
    await placeHold({ holdid: 'cart', lines: [{ sku: 'LAMP', qty: 5, split: 'batches' }], ttlSeconds: 60 }, repository);
    repository.now += 61_000;
    expect((await holdStatus('cart', repository)).status).toBe('expired');
    expect((await allocate({ orderid: 'o2', sku: 'LAMP', qty: 6 }, repository, {}, 'batches')).parts).toHaveLength(2);
  });
});
