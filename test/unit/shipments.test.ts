import { describe, expect, it } from 'vitest';
import { changeBatch, finishChange } from '../../domain/batch-changes';
import { BatchContended } from '../../domain/errors';
import { addBatch, allocate } from '../../domain/services';
import { ship } from '../../domain/shipment-services';
import { FakeRepository } from '../support/fake-repository';

/*
 * Shipments (docs/api.md, "Shipments") over the fake repository, where a change of a batch can be
 * cut between its writes: a shipment never takes a batch's qty below zero.
 */

describe('a shipment from a batch a change left short', () => {
  it('finishes the change, moving its lines as its repeat would, never taking the batch below zero, and ships from where they went', async () => {
    const repository = new FakeRepository();
    await addBatch({ ref: 'b1', sku: 'LAMP', qty: 2, eta: null }, repository);
    await addBatch({ ref: 'b2', sku: 'LAMP', qty: 5, eta: null }, repository);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 2 }, repository);
    // The change writes its qty, then is cut off before it moves the line.
    const moving = repository.moveAllocations.bind(repository);
    repository.moveAllocations = () => Promise.reject(new BatchContended('b1', 1));
    await expect(changeBatch('b1', { qty: 0 }, repository)).rejects.toThrow(BatchContended);
    const parcel = { shipmentid: 'p1', orderid: 'o1', lines: [{ sku: 'LAMP', qty: 2 }] };

    // While the change cannot move its lines, the shipment cannot either: it ships nothing.
    await expect(ship(parcel, repository)).rejects.toThrow(BatchContended);
    expect(repository.batches.get('b1')).toMatchObject({ qty: 0, available: -2 });

    repository.moveAllocations = moving;
    expect((await ship(parcel, repository)).shipment.lines).toEqual([{ sku: 'LAMP', qty: 2, parts: [{ batchref: 'b2', qty: 2 }] }]);
    expect(repository.batches.get('b1')).toMatchObject({ qty: 0, available: 0 });
    expect(repository.batches.get('b2')).toMatchObject({ qty: 3, available: 3 });
  });

  it('ships the units of an older line, which the change keeps, while it moves the newest', async () => {
    const repository = new FakeRepository();
    await addBatch({ ref: 'b1', sku: 'LAMP', qty: 10, eta: null }, repository);
    await addBatch({ ref: 'b2', sku: 'LAMP', qty: 5, eta: null }, repository);
    await allocate({ orderid: 'older', sku: 'LAMP', qty: 4 }, repository);
    await allocate({ orderid: 'newer', sku: 'LAMP', qty: 3 }, repository);
    const moving = repository.moveAllocations.bind(repository);
    repository.moveAllocations = () => Promise.reject(new BatchContended('b1', 1));
    await expect(changeBatch('b1', { qty: 5 }, repository)).rejects.toThrow(BatchContended);

    await ship({ shipmentid: 'p1', orderid: 'older', lines: [{ sku: 'LAMP', qty: 4 }] }, repository);
    repository.moveAllocations = moving;
    await finishChange('b1', repository);

    expect(repository.batches.get('b1')).toMatchObject({ qty: 1, available: 1 });
    expect(repository.lines.get(JSON.stringify(['newer', 'LAMP']))).toMatchObject({ batchref: 'b2' });
  });
});
