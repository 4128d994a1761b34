import { describe, expect, it } from 'vitest';
import {
  DuplicateBatch,
  InactiveLocation,
  InvalidSku,
  TransferConflict,
  TransferNotFound,
  TransferNotInStock,
  TransferToItsSource,
  UnknownLocation,
} from '../../domain/errors';
import type { Location } from '../../domain/locations';
import type { Batch } from '../../domain/model';
import { addBatch, allocate } from '../../domain/services';
import { placeHold } from '../../domain/hold-services';
import { cancelTransfer, createTransfer, transferById } from '../../domain/transfer-services';
import type { TransferRequest } from '../../domain/transfers';
import { transferSchema } from '../../functions/http/schemas';
import { FakeRepository } from '../support/fake-repository';

/*
 * Transfers (docs/api.md, "Transfers") over the fake repository: where the units are taken from,
 * the locations a transfer may name, repeats, and when a cancel gives the units back.
 */

const lyon: Location = { id: 'lyon', name: 'Lyon', priority: 10, serves: ['FR'], active: true };
const closed: Location = { id: 'closed', name: 'Closed', priority: 20, serves: ['FR'], active: false };

const request: TransferRequest = { transferid: 't1', sku: 'LAMP', qty: 4, from: 'default', to: 'lyon', eta: '2027-03-01' };

/** A repository with the locations lyon and closed, and LAMP in stock at default: b1 (10), b2 (10), and a shipment s1 (50). */
const stocked = async () => {
  const repository = new FakeRepository();
  await repository.saveLocation(lyon);
  await repository.saveLocation(closed);
  await addBatch({ ref: 'b1', sku: 'LAMP', qty: 10, eta: null }, repository);
  await addBatch({ ref: 'b2', sku: 'LAMP', qty: 10, eta: null }, repository);
  await addBatch({ ref: 's1', sku: 'LAMP', qty: 50, eta: '2027-01-01' }, repository);
  return repository;
};

describe('making a transfer', () => {
  it('takes the qty from the batch in stock at from that a line would take, and adds the incoming shipment at to', async () => {
    const repository = await stocked();
    const { transfer, created } = await createTransfer(request, repository);
    expect(created).toBe(true);
    expect(transfer).toEqual({ ...request, fromBatchref: 'b1', status: 'active' });
    expect(repository.batches.get('b1')).toEqual({ ref: 'b1', sku: 'LAMP', qty: 6, available: 6, eta: null });
    expect(repository.batches.get('t1')).toEqual({ ref: 't1', sku: 'LAMP', qty: 4, available: 4, eta: '2027-03-01', location: 'lyon' });
  });

  it('takes the whole qty from one batch, passing over one too small, and never from a shipment', async () => {
    const repository = await stocked();
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 8 }, repository);
    const { transfer } = await createTransfer({ ...request, qty: 5 }, repository);
    expect(transfer.fromBatchref).toBe('b2');
    await expect(createTransfer({ ...request, transferid: 't2', qty: 11 }, repository)).rejects.toThrow(TransferNotInStock);
    expect(repository.batches.get('s1')?.available).toBe(50);
  });

  it('takes only from batches at from', async () => {
    const repository = await stocked();
    await expect(createTransfer({ ...request, from: 'lyon', to: 'default' }, repository)).rejects.toThrow(
      'No batch in stock at location lyon has 4 units of sku LAMP',
    );
    await expect(createTransfer({ ...request, from: 'lyon', to: 'default', qty: 1 }, repository)).rejects.toThrow('No batch in stock at location lyon has 1 unit of sku LAMP');
    await addBatch({ ref: 'l1', sku: 'LAMP', qty: 4, eta: null, location: 'lyon' }, repository);
    expect((await createTransfer({ ...request, from: 'lyon', to: 'default' }, repository)).transfer.fromBatchref).toBe('l1');
    expect(repository.batches.get('t1')).toEqual({ ref: 't1', sku: 'LAMP', qty: 4, available: 4, eta: '2027-03-01' });
  });

  it('refuses from and to that are unknown, inactive, or the same, naming the field, and writes nothing', async () => {
    const repository = await stocked();
    await expect(createTransfer({ ...request, to: 'paris' }, repository)).rejects.toMatchObject(new UnknownLocation('paris', 'to'));
    await expect(createTransfer({ ...request, from: 'paris' }, repository)).rejects.toMatchObject({ field: 'from' });
    await expect(createTransfer({ ...request, to: 'closed' }, repository)).rejects.toThrow(InactiveLocation);
    await expect(createTransfer({ ...request, from: 'closed', to: 'lyon' }, repository)).rejects.toMatchObject({ field: 'from' });
    await expect(createTransfer({ ...request, to: 'default' }, repository)).rejects.toThrow(TransferToItsSource);
    expect(repository.transfers.size).toBe(0);
    expect(repository.batches.get('b1')?.available).toBe(10);
  });

  it('refuses a SKU never added', async () => {
    await expect(createTransfer({ ...request, sku: 'SOFA' }, await stocked())).rejects.toThrow(InvalidSku);
  });

  it('answers the same request again as stored, taking nothing more, and another under the transferid with a conflict', async () => {
    const repository = await stocked();
    await createTransfer(request, repository);
    expect(await createTransfer(request, repository)).toEqual({ transfer: { ...request, fromBatchref: 'b1', status: 'active' }, created: false });
    expect(repository.batches.get('b1')?.available).toBe(6);
    await expect(createTransfer({ ...request, qty: 5 }, repository)).rejects.toThrow(TransferConflict);
  });

  it('answers a repeat that raced its first as a repeat, though the first took the units it would take', async () => {
    const repository = new FakeRepository();
    await repository.saveLocation(lyon);
    await addBatch({ ref: 'b1', sku: 'LAMP', qty: 4, eta: null }, repository);
    await createTransfer(request, repository);
    // The repeat looked the transferid up just before its first was stored, then read the stock after.
    const lookUp = repository.transfer.bind(repository);
    let lookUpsBeforeTheFirst = 1;
    repository.transfer = async (transferid) => (lookUpsBeforeTheFirst-- > 0 ? undefined : lookUp(transferid));
    expect(await createTransfer(request, repository)).toEqual({ transfer: { ...request, fromBatchref: 'b1', status: 'active' }, created: false });
    expect(repository.batches.get('b1')?.qty).toBe(0);
  });

  it('refuses a transferid that is a batch ref already, naming the transfer', async () => {
    await expect(createTransfer({ ...request, transferid: 's1' }, await stocked())).rejects.toMatchObject({
      name: 'TransferConflict',
      code: 'batch_exists',
      message: "Transfer s1 cannot be made: transferid s1 is a batch's ref, which its incoming batch would take",
    });
  });

  it('frees the expired holds of the batch it needs, as a line would', async () => {
    const repository = new FakeRepository();
    await repository.saveLocation(lyon);
    await addBatch({ ref: 'b1', sku: 'LAMP', qty: 4, eta: null }, repository);
    await placeHold({ holdid: 'cart', lines: [{ sku: 'LAMP', qty: 4 }], ttlSeconds: 60 }, repository);
    await expect(createTransfer(request, repository)).rejects.toThrow(TransferNotInStock);
    repository.now += 61_000;
    expect((await createTransfer(request, repository)).transfer.fromBatchref).toBe('b1');
  });
});

describe('cancelling a transfer', () => {
  it('gives the units back to their batch and removes the incoming batch; a repeat is done already', async () => {
    const repository = await stocked();
    await createTransfer(request, repository);
    await cancelTransfer('t1', repository);
    expect(repository.batches.get('b1')).toEqual({ ref: 'b1', sku: 'LAMP', qty: 10, available: 10, eta: null });
    expect(repository.batches.has('t1')).toBe(false);
    expect((await transferById('t1', repository)).status).toBe('cancelled');
    await cancelTransfer('t1', repository);
    expect(repository.batches.get('b1')?.qty).toBe(10);
    await expect(createTransfer(request, repository)).rejects.toThrow('Transfer t1 was cancelled');
  });

  it('gives the units back to a batch that has run out since', async () => {
    const repository = await stocked();
    await createTransfer(request, repository);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 6 }, repository);
    await cancelTransfer('t1', repository);
    expect(repository.batches.get('b1')).toEqual({ ref: 'b1', sku: 'LAMP', qty: 10, available: 4, eta: null });
  });

  it('refuses once a line is on the incoming batch, saying so', async () => {
    const repository = await stocked();
    await createTransfer(request, repository);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 1 }, repository, { location: 'lyon' });
    await expect(cancelTransfer('t1', repository)).rejects.toThrow('Transfer t1 cannot be cancelled: lines have units on its batch t1');
    expect(repository.batches.get('t1')?.available).toBe(3);
    expect(repository.batches.get('b1')?.qty).toBe(6);
  });

  it('refuses once a hold is on the incoming batch, and once it is received', async () => {
    const repository = await stocked();
    await createTransfer(request, repository);
    await placeHold({ holdid: 'cart', lines: [{ sku: 'LAMP', qty: 1 }], ttlSeconds: 600 }, repository, { location: 'lyon' });
    await expect(cancelTransfer('t1', repository)).rejects.toThrow('holds have units on its batch t1');
    await createTransfer({ ...request, transferid: 't2' }, repository);
    repository.batches.set('t2', { ...(repository.batches.get('t2') as Batch), eta: null });
    await expect(cancelTransfer('t2', repository)).rejects.toThrow('its batch t2 has been received');
  });

  it('answers a cancel racing another that committed between its reads as done', async () => {
    const repository = await stocked();
    await createTransfer(request, repository);
    const readTransfer = repository.transfer.bind(repository);
    let raced = false;
    // The record read active; before this cancel reads the batches, another cancel commits whole.
    repository.transfer = async (transferid) => {
      const read = await readTransfer(transferid);
      if (!raced) {
        raced = true;
        await cancelTransfer(transferid, repository);
      }
      return read;
    };

    await expect(cancelTransfer('t1', repository)).resolves.toBeUndefined();
    expect(repository.batches.get('b1')).toMatchObject({ qty: 10, available: 10 });
  });

  it('answers a transfer never made with TransferNotFound', async () => {
    await expect(cancelTransfer('t9', await stocked())).rejects.toThrow(TransferNotFound);
    await expect(transferById('t9', await stocked())).rejects.toThrow(TransferNotFound);
  });
});

describe('the body of POST /transfers', () => {
  it('takes a transfer whose eta is a date, and refuses a null eta or a location id that is not one', () => {
    expect(transferSchema.safeParse(request).success).toBe(true);
    expect(transferSchema.safeParse({ ...request, eta: null }).error?.issues[0]?.path).toEqual(['eta']);
    expect(transferSchema.safeParse({ ...request, to: 'no place' }).error?.issues[0]?.path).toEqual(['to']);
  });
});
