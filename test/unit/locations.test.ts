import { describe, expect, it } from 'vitest';
import { ASSIGNED_COUNTRY_CODES } from '../../functions/http/countries';
import { DuplicateBatch, LocationContended, LocationNotFound, UnknownLocation } from '../../domain/errors';
import { allLocations, locationById, putLocation } from '../../domain/location-services';
import { placeHold } from '../../domain/hold-services';
import { DEFAULT_LOCATION, type Location, allLocationsOf, isSameLocation } from '../../domain/locations';
import { type Batch, stockLevels } from '../../domain/model';
import { addBatch, skuStock } from '../../domain/services';
import { batchSchema, locationIdSchema, locationSchema } from '../../functions/http/schemas';
import { FakeRepository } from '../support/fake-repository';

/*
 * Locations (docs/api.md, "Locations"): a batch at a place, and what a location id may be; the
 * built-in `default`, the order locations are read in, a replacement that is a repeat; and the bounds
 * of a location's fields, as the zod schemas the handler parses with state them.
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

describe("a SKU's stock by location", () => {
  const batch = (ref: string, available: number, eta: string | null, location?: string, held = 0): Batch => ({
    ref,
    sku: 'LAMP',
    qty: 10,
    available,
    eta,
    ...(held > 0 ? { held } : {}),
    ...(location ? { location } : {}),
  });
  const paris: Location = { ...lyon, id: 'paris', priority: 0 };

  it('orders the locations by priority, then id, with one it does not know last, and sums them into the totals', () => {
    const batches = [batch('l1', 2, null, 'lyon', 1), batch('d1', 3, '2027-05-01'), batch('x1', 1, null, 'zurich'), batch('p1', 4, '2027-01-01', 'paris')];
    const levels = stockLevels('LAMP', batches, [lyon, paris]);
    expect(levels.locations).toEqual([
      { location: 'default', inStock: 0, incoming: 3, held: 0, nextEta: '2027-05-01', onHand: 0, committed: 0 },
      { location: 'paris', inStock: 0, incoming: 4, held: 0, nextEta: '2027-01-01', onHand: 0, committed: 0 },
      { location: 'lyon', inStock: 2, incoming: 0, held: 1, nextEta: null, onHand: 10, committed: 7 },
      { location: 'zurich', inStock: 1, incoming: 0, held: 0, nextEta: null, onHand: 10, committed: 9 },
    ]);
    expect(levels).toMatchObject({ inStock: 3, incoming: 7, held: 1, nextEta: '2027-01-01', onHand: 20, committed: 16 });
  });

  it('leaves out a location whose batches have no unit available or held, and none on the shelf', () => {
    expect(stockLevels('LAMP', [batch('l1', 0, '2027-01-01', 'lyon'), batch('d1', 1, null)], [lyon]).locations.map(({ location }) => location)).toEqual(['default']);
  });

  it('counts on hand and committed the units on the shelf of a batch every unit of which lines hold, out of the stock range', () => {
    const levels = stockLevels('LAMP', [batch('d1', 1, null)], [lyon], undefined, [batch('l1', 0, null, 'lyon')]);
    expect(levels.locations).toEqual([
      { location: 'default', inStock: 1, incoming: 0, held: 0, nextEta: null, onHand: 10, committed: 9 },
      { location: 'lyon', inStock: 0, incoming: 0, held: 0, nextEta: null, onHand: 10, committed: 10 },
    ]);
    expect(levels).toMatchObject({ inStock: 1, onHand: 20, committed: 19, batches: [{ ref: 'd1' }] });
  });

  it('counts the units of a hold at its location, and those of an expired hold as available there', async () => {
    const repository = new FakeRepository();
    await repository.saveLocation(lyon);
    await addBatch({ ref: 'l1', sku: 'LAMP', qty: 5, eta: null, location: 'lyon' }, repository);
    await addBatch({ ref: 'd1', sku: 'LAMP', qty: 5, eta: null }, repository);
    await placeHold({ holdid: 'cart-1', lines: [{ sku: 'LAMP', qty: 2 }], ttlSeconds: 60 }, repository, { location: 'lyon' });
    expect((await skuStock('LAMP', repository, 'lyon')).locations).toEqual([{ location: 'lyon', inStock: 3, incoming: 0, held: 2, nextEta: null, onHand: 5, committed: 0 }]);
    repository.now += 61_000;
    expect((await skuStock('LAMP', repository)).locations).toEqual([
      { location: 'default', inStock: 5, incoming: 0, held: 0, nextEta: null, onHand: 5, committed: 0 },
      { location: 'lyon', inStock: 5, incoming: 0, held: 0, nextEta: null, onHand: 5, committed: 0 },
    ]);
  });

  it('reads every location anew for a location the routing locations do not know yet, and refuses one that does not exist', async () => {
    const repository = new FakeRepository();
    await addBatch({ ref: 'd1', sku: 'LAMP', qty: 5, eta: null }, repository);
    await repository.saveLocation(lyon);
    repository.routingLocations = async (naming = []) => (naming.length > 0 ? repository.locations() : []);
    expect((await skuStock('LAMP', repository, 'lyon')).locations).toEqual([{ location: 'lyon', inStock: 0, incoming: 0, held: 0, nextEta: null, onHand: 0, committed: 0 }]);
    await expect(skuStock('LAMP', repository, 'paris')).rejects.toThrow(LocationNotFound);
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

describe('the locations read', () => {
  it('are default alone while none is stored', async () => {
    expect(await allLocations(new FakeRepository())).toEqual([DEFAULT_LOCATION]);
  });

  it('read default as built in: priority 0, serving everywhere, active', async () => {
    expect(await locationById('default', new FakeRepository())).toEqual({ id: 'default', name: 'Default', priority: 0, serves: ['*'], active: true });
  });

  it('come by priority, then by id, the built-in default among them', () => {
    const at = (id: string, priority: number): Location => ({ id, name: id, priority, serves: ['*'], active: true });
    expect(allLocationsOf([at('b', 5), at('a', 5), at('z', 0), at('c', 1)]).map(({ id }) => id)).toEqual(['default', 'z', 'c', 'a', 'b']);
  });

  it('hold default once, as stored, once it was replaced', () => {
    const replaced = { ...DEFAULT_LOCATION, priority: 50 };
    expect(allLocationsOf([replaced, lyon])).toEqual([lyon, replaced]);
  });

  it('refuse an id no location has', async () => {
    await expect(locationById('nowhere', new FakeRepository())).rejects.toThrow(LocationNotFound);
  });
});

describe('putLocation', () => {
  it('takes a location defined without active for an active one', async () => {
    const { active: _, ...withoutActive } = lyon;
    expect(await putLocation(withoutActive, new FakeRepository())).toEqual({ location: { ...withoutActive, active: true }, created: true });
  });

  it('creates a location it did not have', async () => {
    const repository = new FakeRepository();
    expect(await putLocation(lyon, repository)).toEqual({ location: lyon, created: true });
    expect(await locationById('lyon', repository)).toEqual(lyon);
  });

  it('replaces a location whole: a position left out is removed', async () => {
    const repository = new FakeRepository();
    await putLocation(lyon, repository);
    const { position: _, ...withoutPosition } = lyon;
    expect((await putLocation({ ...withoutPosition, active: false }, repository)).created).toBe(false);
    expect(await locationById('lyon', repository)).toEqual({ ...withoutPosition, active: false });
  });

  it('writes nothing for the same location again', async () => {
    const repository = new FakeRepository();
    await putLocation(lyon, repository);
    const stored = repository.locationItems.get('lyon');
    expect((await putLocation({ ...lyon, serves: [...lyon.serves] }, repository)).created).toBe(false);
    expect(repository.locationItems.get('lyon')).toBe(stored);
  });

  it('replaces the built-in default as a location that exists, and writes nothing for default as it is built in', async () => {
    const repository = new FakeRepository();
    expect((await putLocation({ ...DEFAULT_LOCATION }, repository)).created).toBe(false);
    expect(repository.locationItems.size).toBe(0);
    expect((await putLocation({ ...DEFAULT_LOCATION, name: 'Main warehouse' }, repository)).created).toBe(false);
    expect(await allLocations(repository)).toEqual([{ ...DEFAULT_LOCATION, name: 'Main warehouse' }]);
  });

  it('reads again when another request replaced the location between its read and its write, and compares anew', async () => {
    const repository = new FakeRepository();
    await putLocation(lyon, repository);
    const save = repository.saveLocation.bind(repository);
    let raced = false;
    repository.saveLocation = async (location, replacing) => {
      if (!raced) {
        raced = true;
        // Another request makes it exactly what this one asks, first: this one then has nothing to write.
        await save(location, replacing);
      }
      return save(location, replacing);
    };
    expect((await putLocation({ ...lyon, priority: 20 }, repository)).created).toBe(false);
    expect((await locationById('lyon', repository)).priority).toBe(20);
  });

  it('gives up with LocationContended, a 503, when the location keeps changing under its write', async () => {
    const repository = new FakeRepository();
    repository.saveLocation = async () => 'changed';
    await expect(putLocation(lyon, repository)).rejects.toThrow(LocationContended);
  });
});

describe('isSameLocation', () => {
  it.each<[string, Partial<Location>]>([
    ['name', { name: 'Lyon 2' }],
    ['priority', { priority: 11 }],
    ['serves, in order', { serves: ['BE', 'FR'] }],
    ['serves, one more', { serves: ['FR', 'BE', 'CH'] }],
    ['active', { active: false }],
    ['position', { position: { lat: 45.76, lng: 4.85 } }],
    ['no position', { position: undefined }],
  ])('tells a location from one with another %s', (_field, change) => {
    expect(isSameLocation(lyon, { ...lyon, ...change })).toBe(false);
  });

  it('takes a copy of a location for the same', () => {
    expect(isSameLocation(lyon, structuredClone(lyon))).toBe(true);
  });
});

describe("a location's bounds", () => {
  const valid = { name: 'Lyon', priority: 10, serves: ['FR'] };
  const issuesOf = (body: unknown) => {
    const parsed = locationSchema.safeParse(body);
    return parsed.success ? [] : parsed.error.issues.map(({ path, message }) => `${path.join('.')} ${message}`);
  };


  it.each<[string, unknown]>([
    ['a one-character name', { ...valid, name: 'L' }],
    ['a name of 128 characters, emoji counted once', { ...valid, name: '📦'.repeat(128) }],
    ['priority 0 and 1,000', { ...valid, priority: 1000 }],
    ['every destination', { ...valid, serves: ['*'] }],
    ['every country ISO 3166-1 assigns', { ...valid, serves: [...ASSIGNED_COUNTRY_CODES] }],
    ['a position at the edges', { ...valid, position: { lat: -90, lng: 180 } }],
    ['an inactive location', { ...valid, active: false }],
  ])('accepts %s', (_case, body) => {
    expect(issuesOf(body)).toEqual([]);
  });

  it.each<[string, unknown, string]>([
    ['an empty name', { ...valid, name: '' }, 'name must not be empty'],
    ['a name of 129 characters', { ...valid, name: 'x'.repeat(129) }, 'name must be at most 128 characters'],
    ['a name with a control character', { ...valid, name: 'Lyon\n2' }, 'name must not contain control characters'],
    ['a priority past 1,000', { ...valid, priority: 1001 }, 'priority must be an integer from 0 to 1000'],
    ['a fractional priority', { ...valid, priority: 1.5 }, 'priority must be an integer from 0 to 1000'],
    ['no serves', { name: 'Lyon', priority: 1 }, 'serves is required: ["*"] for every destination, or 1 to 249 ISO 3166-1 alpha-2 country codes, each once'],
    ['an empty serves', { ...valid, serves: [] }, 'serves must be ["*"] for every destination, or 1 to 249 ISO 3166-1 alpha-2 country codes, each once'],
    ['a country twice', { ...valid, serves: ['FR', 'BE', 'FR'] }, 'serves must name each country once'],
    ['a code in lower case', { ...valid, serves: ['fr'] }, 'serves.0 must be a country code, two capital letters that ISO 3166-1 alpha-2 assigns; "*" only alone, as ["*"]'],
    ['a code ISO 3166-1 does not assign', { ...valid, serves: ['ZZ'] }, 'serves.0 must be a country code, two capital letters that ISO 3166-1 alpha-2 assigns; "*" only alone, as ["*"]'],
    ['a code of a country that no longer exists', { ...valid, serves: ['FR', 'YU'] }, 'serves.1 must be a country code, two capital letters that ISO 3166-1 alpha-2 assigns; "*" only alone, as ["*"]'],
    ['"*" beside a country', { ...valid, serves: ['FR', '*'] }, 'serves.1 must be a country code, two capital letters that ISO 3166-1 alpha-2 assigns; "*" only alone, as ["*"]'],
    ['active as a word', { ...valid, active: 'yes' }, 'active must be true or false'],
    ['a latitude past the pole', { ...valid, position: { lat: 90.5, lng: 0 } }, 'position.lat must be a number from -90 to 90'],
    ['a position without lng', { ...valid, position: { lat: 0 } }, 'position.lng is required: a number from -180 to 180'],
  ])('refuses %s, saying why', (_case, body, issue) => {
    expect(issuesOf(body)).toEqual([issue]);
  });
});
