import { describe, expect, it } from 'vitest';
import { DuplicateBatch, UnknownLocation } from '../../domain/errors';
import type { Location } from '../../domain/locations';
import { addBatch } from '../../domain/services';
import { batchSchema, locationIdSchema } from '../../functions/http/schemas';
import { FakeRepository } from '../support/fake-repository';

/*
 * A batch at a place, and what a location id may be.
 */

const lyon: Location = { id: 'lyon', name: 'Lyon', priority: 10, serves: ['FR', 'BE'], active: true, position: { lat: 45.76, lng: 4.84 } };

describe('a batch at a location', () => {
  it('is at default when it names none, and when it names default', async () => {
    const repository = new FakeRepository();
    await addBatch({ ref: 'b1', sku: 'LAMP', qty: 5, eta: null }, repository);
    await addBatch({ ref: 'b2', sku: 'LAMP', qty: 5, eta: null, location: 'default' }, repository);
    expect(repository.batches.get('b1')).toEqual({ ref: 'b1', sku: 'LAMP', qty: 5, available: 5, eta: null });
    expect(repository.batches.get('b2')).toEqual({ ref: 'b2', sku: 'LAMP', qty: 5, available: 5, eta: null });
  });

  it('is added at a location that exists, inactive or not, and refused at one that does not', async () => {
    const repository = new FakeRepository();
    await repository.saveLocation({ ...lyon, active: false });
    expect(await addBatch({ ref: 'b1', sku: 'LAMP', qty: 5, eta: null, location: 'lyon' }, repository)).toEqual({ created: true });
    await expect(addBatch({ ref: 'b2', sku: 'LAMP', qty: 5, eta: null, location: 'paris' }, repository)).rejects.toThrow(UnknownLocation);
    expect(repository.batches.has('b2')).toBe(false);
  });

  it('answers a repeat at the same location as a repeat, and one at another location as another batch', async () => {
    const repository = new FakeRepository();
    await repository.saveLocation(lyon);
    const batch = { ref: 'b1', sku: 'LAMP', qty: 5, eta: null, location: 'lyon' };
    await addBatch(batch, repository);
    expect(await addBatch(batch, repository)).toEqual({ created: false });
    await expect(addBatch({ ...batch, location: 'default' }, repository)).rejects.toThrow(DuplicateBatch);
    await expect(addBatch({ ref: 'b1', sku: 'LAMP', qty: 5, eta: null }, repository)).rejects.toThrow(DuplicateBatch);
  });
});

describe('a location id', () => {
  it.each(['default', 'warehouse-lyon', 'store_12', 'A', 'x'.repeat(64)])('takes %s for a location id', (id) => {
    expect(locationIdSchema.safeParse(id).success).toBe(true);
  });

  it.each(['', 'x'.repeat(65), 'lyon 2', 'lyon/2', 'lyön', 'lyon.2', 'LYON#1'])('refuses %j for a location id', (id) => {
    expect(locationIdSchema.safeParse(id).error?.issues.map(({ message }) => message)).toEqual([
      'must be a location id, 1 to 64 letters (a-z, A-Z), digits, - and _',
    ]);
  });

  it("takes a batch's location as a location id, and none", () => {
    const batch = { ref: 'b1', sku: 'LAMP', qty: 1, eta: null };
    expect(batchSchema.safeParse(batch).success).toBe(true);
    expect(batchSchema.safeParse({ ...batch, location: 'lyon' }).data).toEqual({ ...batch, location: 'lyon' });
    expect(batchSchema.safeParse({ ...batch, location: 'lyon 2' }).error?.issues.map(({ path }) => path.join('.'))).toEqual(['location']);
  });
});
