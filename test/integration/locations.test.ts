import { setTimeout as sleep } from 'node:timers/promises';
import { GetCommand, PutCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DomainEvent } from '../../domain/events';
import { putLocation as putLocationOf } from '../../domain/location-services';
import type { LocationDefinition } from '../../domain/locations';
import { ROUTING_LOCATIONS_MAX_AGE_MS } from '../../domain/ports';
import { addBatch, allocate } from '../../domain/services';
import { DynamoDbBatchRepository } from '../../functions/store/batch-repository';
import { RoutingLocations, UNKNOWN_LOCATION_REREAD_MS } from '../../functions/store/location-reads';
import { LOCATIONS_PARTITION, locationKey } from '../../functions/store/locations';
import type { DocumentSender } from '../../functions/store/store-calls';
import { systemWorld, worldAt } from '../../functions/store/world';
import { checkInvariants } from '../../tools/invariants';
import { followTableEvents } from '../../local/event-stream';
import { type HandlerService, serviceOver } from '../reliability/support/service';
import { type TestTable, createTestTable, uniqueId } from '../support/dynamodb';
import { routeEvent } from '../support/events';

/*
 * Locations and batches at a place (docs/api.md, "Locations"), through the batches handler over
 * DynamoDB Local: every route's answers, the built-in `default`, add_batch's check of its location
 * in its own transaction, and the events the table's stream gives for them.
 */

const DEFAULT = { id: 'default', name: 'Default', priority: 0, serves: ['*'], active: true };

/** A fresh table and the handlers over it: locations live in one partition, so each group of tests gets its own. */
const serviceOnItsOwnTable = () => {
  const context = {} as { table: TestTable; service: HandlerService };
  beforeAll(async () => {
    context.table = await createTestTable();
    context.service = serviceOver(context.table.repository());
  });
  afterAll(() => context.table.drop());
  return context;
};

const putLocation = (service: HandlerService, id: string, body: unknown) => service.invoke(routeEvent('PUT /locations/{id}', { pathParameters: { id }, body }));
const getLocation = (service: HandlerService, id: string) => service.invoke(routeEvent('GET /locations/{id}', { pathParameters: { id } }));
const getLocations = (service: HandlerService) => service.invoke(routeEvent('GET /locations'));
const getBatch = (service: HandlerService, ref: string) => service.invoke(routeEvent('GET /batches/{ref}', { pathParameters: { ref } }));

describe('batches at a place', () => {
  const context = serviceOnItsOwnTable();
  const sku = uniqueId('LAMP');

  beforeAll(async () => {
    expect((await putLocation(context.service, 'lyon', { name: 'Lyon', priority: 1, serves: ['FR'] })).status).toBe(201);
    expect((await putLocation(context.service, 'closed', { name: 'Closed', priority: 2, serves: ['FR'], active: false })).status).toBe(201);
  });

  it('puts a batch added without a location at default, and GET shows it there', async () => {
    const ref = uniqueId('batch');
    expect((await context.service.addBatch({ ref, sku, qty: 5, eta: null })).status).toBe(201);
    expect(await getBatch(context.service, ref)).toMatchObject({
      status: 200,
      body: { ref, sku, qty: 5, allocated: 0, held: 0, available: 5, eta: null, location: 'default' },
    });
  });

  it('adds a batch at a location that exists, a shipment at where it will arrive, and GET shows it', async () => {
    const ref = uniqueId('shipment');
    expect((await context.service.addBatch({ ref, sku, qty: 4, eta: '2027-03-01', location: 'lyon' })).status).toBe(201);
    expect((await getBatch(context.service, ref)).body).toMatchObject({ ref, eta: '2027-03-01', location: 'lyon' });
  });

  it('adds a batch at an inactive location', async () => {
    const ref = uniqueId('batch');
    expect((await context.service.addBatch({ ref, sku, qty: 1, eta: null, location: 'closed' })).status).toBe(201);
    expect((await getBatch(context.service, ref)).body).toMatchObject({ location: 'closed' });
  });

  it('keeps a batch at its location when it runs out and moves out of the stock range', async () => {
    const ref = uniqueId('batch');
    const own = uniqueId('SOFA');
    await context.service.addBatch({ ref, sku: own, qty: 2, eta: null, location: 'lyon' });
    expect((await context.service.allocate({ orderid: uniqueId('order'), sku: own, qty: 2 })).body).toEqual({ batchref: ref, location: 'lyon' });
    expect((await getBatch(context.service, ref)).body).toMatchObject({ available: 0, allocated: 2, location: 'lyon' });
  });

  it('refuses a batch at a location that does not exist with 400 naming location, and writes nothing', async () => {
    const [ref, unknownSku] = [uniqueId('batch'), uniqueId('DESK')];
    const answer = await context.service.addBatch({ ref, sku: unknownSku, qty: 5, eta: null, location: 'nowhere' });
    expect(answer).toEqual({
      status: 400,
      headers: expect.anything(),
      text: expect.any(String),
      body: {
        message: 'Invalid request body', code: 'unknown_location',
        issues: [{ path: 'location', message: 'location must be the id of an existing location: there is no location nowhere' }],
      },
    });
    const { Items = [] } = await context.table.documentClient.send(new ScanCommand({ TableName: context.table.tableName, ConsistentRead: true }));
    expect(Items.filter((item) => item.ref === ref || item.sku === unknownSku)).toEqual([]);
    expect((await getBatch(context.service, ref)).status).toBe(404);
  });

  it('answers an identical repeat, location included, with 200, and one at another location with 409', async () => {
    const batch = { ref: uniqueId('batch'), sku, qty: 7, eta: null, location: 'lyon' };
    expect((await context.service.addBatch(batch)).status).toBe(201);
    expect(await context.service.addBatch(batch)).toMatchObject({ status: 200, text: 'OK' });
    expect(await context.service.addBatch({ ...batch, location: 'closed' })).toMatchObject({ status: 409, body: { message: `Batch ${batch.ref} already exists`, code: 'batch_exists' } });
    expect((await context.service.addBatch({ ...batch, location: undefined })).status).toBe(409);
  });

  it('answers a batch named at default, where none is stored, as a batch at default', async () => {
    const batch = { ref: uniqueId('batch'), sku, qty: 1, eta: null };
    expect((await context.service.addBatch({ ...batch, location: 'default' })).status).toBe(201);
    expect((await context.service.addBatch(batch)).status).toBe(200);
  });

  it('leaves a table that npm run check finds sound', async () => {
    expect(await checkInvariants(context.table.documentClient, context.table.tableName)).toEqual([]);
  });
});

describe("a SKU's stock at its places", () => {
  const context = serviceOnItsOwnTable();
  const sku = uniqueId('SHELF');
  const stockOf = (query?: Record<string, string>) =>
    context.service.invoke(routeEvent('GET /skus/{sku}/stock', { pathParameters: { sku }, ...(query ? { queryStringParameters: query } : {}) }));

  beforeAll(async () => {
    expect((await putLocation(context.service, 'nantes', { name: 'Nantes', priority: 5, serves: ['FR'] })).status).toBe(201);
    expect((await putLocation(context.service, 'lyon', { name: 'Lyon', priority: 1, serves: ['FR'] })).status).toBe(201);
    for (const batch of [
      { ref: uniqueId('main'), sku, qty: 10, eta: null },
      { ref: uniqueId('nantes'), sku, qty: 4, eta: '2027-05-01', location: 'nantes' },
      { ref: uniqueId('lyon'), sku, qty: 3, eta: null, location: 'lyon' },
    ]) {
      expect((await context.service.addBatch(batch)).status).toBe(201);
    }
    const hold = routeEvent('POST /holds', { body: { holdid: uniqueId('cart'), lines: [{ sku, qty: 2 }], location: 'lyon' } });
    expect((await context.service.invoke(hold)).status).toBe(201);
  });

  it('answers the levels at each place, by priority then id, and their sums', async () => {
    expect(await stockOf()).toMatchObject({
      status: 200,
      body: {
        in_stock: 11,
        incoming: 4,
        held: 2,
        next_eta: '2027-05-01',
        locations: [
          { location: 'default', in_stock: 10, incoming: 0, held: 0, next_eta: null },
          { location: 'lyon', in_stock: 1, incoming: 0, held: 2, next_eta: null },
          { location: 'nantes', in_stock: 0, incoming: 4, held: 0, next_eta: '2027-05-01' },
        ],
      },
    });
  });

  it('answers one place alone, zeros at a place with none of it, 404 at a place that does not exist', async () => {
    const atLyon = await stockOf({ location: 'lyon' });
    expect(atLyon.body).toMatchObject({ in_stock: 1, held: 2, locations: [{ location: 'lyon', in_stock: 1, incoming: 0, held: 2, next_eta: null }] });
    expect((atLyon.body as { batches: unknown[] }).batches).toHaveLength(1);
    expect((await putLocation(context.service, 'paris', { name: 'Paris', priority: 0, serves: ['FR'] })).status).toBe(201);
    expect(await stockOf({ location: 'paris' })).toMatchObject({ status: 200, body: { in_stock: 0, batches: [], locations: [{ location: 'paris', in_stock: 0 }] } });
    expect(await stockOf({ location: 'rome' })).toMatchObject({ status: 404, body: { message: 'Location rome not found', code: 'unknown_location' } });
  });
});

describe('locations', () => {
  const context = serviceOnItsOwnTable();
  const lyon = { name: 'Lyon warehouse', priority: 10, serves: ['FR', 'BE'], position: { lat: 45.764, lng: 4.8357 } };

  it('has default from the start, alone, and reads it as built in', async () => {
    expect(await getLocations(context.service)).toMatchObject({ status: 200, body: { locations: [DEFAULT] } });
    expect(await getLocation(context.service, 'default')).toMatchObject({ status: 200, body: DEFAULT });
  });

  it('creates a location with 201, active when the body says nothing of it, and reads it back', async () => {
    expect(await putLocation(context.service, 'lyon', lyon)).toMatchObject({ status: 201, body: { id: 'lyon', ...lyon, active: true } });
    expect(await getLocation(context.service, 'lyon')).toMatchObject({ status: 200, body: { id: 'lyon', ...lyon, active: true } });
  });

  it('answers the same location again with 200, and writes nothing', async () => {
    const read = () => context.table.documentClient.send(new GetCommand({ TableName: context.table.tableName, Key: locationKey('lyon'), ConsistentRead: true }));
    const before = (await read()).Item;
    expect(await putLocation(context.service, 'lyon', { ...lyon, active: true })).toMatchObject({ status: 200, body: { id: 'lyon', ...lyon, active: true } });
    expect((await read()).Item).toEqual(before);
  });

  it('replaces a location whole with 200: a position left out is removed', async () => {
    const { position: _, ...withoutPosition } = lyon;
    const replaced = { ...withoutPosition, active: false, priority: 3 };
    expect(await putLocation(context.service, 'lyon', replaced)).toMatchObject({ status: 200, body: { id: 'lyon', ...replaced } });
    const read = await getLocation(context.service, 'lyon');
    expect(read.body).toEqual({ id: 'lyon', ...replaced });
  });

  it('lists every location by priority, then id', async () => {
    await putLocation(context.service, 'paris', { name: 'Paris', priority: 3, serves: ['*'] });
    await putLocation(context.service, 'berlin', { name: 'Berlin', priority: 500, serves: ['DE', 'AT'] });
    const { body } = await getLocations(context.service);
    expect((body as { locations: { id: string }[] }).locations.map(({ id }) => id)).toEqual(['default', 'lyon', 'paris', 'berlin']);
  });

  it('answers 404 for an id no location has', async () => {
    expect(await getLocation(context.service, 'nowhere')).toMatchObject({ status: 404, body: { message: 'Location nowhere not found', code: 'unknown_location' } });
  });

  it.each<[string, unknown, readonly string[]]>([
    ['no name, a priority past 1,000, serves empty', { priority: 1001, serves: [] }, ['name', 'priority', 'serves']],
    ['a country twice and a latitude off the globe', { name: 'X', priority: 1, serves: ['FR', 'FR'], position: { lat: 91, lng: 0 } }, ['serves', 'position.lat']],
    ['"*" beside a country, and active a word', { name: 'X', priority: 1, serves: ['*', 'FR'], active: 'yes' }, ['serves.0', 'active']],
  ])('refuses %s with 400, an issue naming each field, and writes nothing', async (_case, body, paths) => {
    const answer = await putLocation(context.service, 'refused', body);
    expect(answer.status).toBe(400);
    expect((answer.body as { message: string }).message).toBe('Invalid request body');
    expect((answer.body as { issues: { path: string }[] }).issues.map(({ path }) => path)).toEqual(paths);
    expect((await getLocation(context.service, 'refused')).status).toBe(404);
  });

  it('refuses an id that is not a location id with 400 naming id', async () => {
    const answer = await putLocation(context.service, 'lyon 2', lyon);
    expect(answer).toMatchObject({ status: 400, body: { message: 'Invalid request', code: 'validation_failed', issues: [{ path: 'id' }] } });
  });
});

describe('the default location replaced', () => {
  const context = serviceOnItsOwnTable();

  it('answers 200, as a location that existed, and reads as replaced', async () => {
    const main = { name: 'Main warehouse', priority: 5, serves: ['FR'] };
    expect(await putLocation(context.service, 'default', main)).toMatchObject({ status: 200, body: { id: 'default', ...main, active: true } });
    expect(await getLocations(context.service)).toMatchObject({ status: 200, body: { locations: [{ id: 'default', ...main, active: true }] } });
  });

  it('still takes the batches added without a location', async () => {
    const ref = uniqueId('batch');
    expect((await context.service.addBatch({ ref, sku: uniqueId('LAMP'), qty: 3, eta: null })).status).toBe(201);
    expect((await getBatch(context.service, ref)).body).toMatchObject({ ref, location: 'default' });
  });
});

describe("locations' and batches' events, from the table's stream", () => {
  const context = serviceOnItsOwnTable();

  it('announce LocationChanged for each location created or replaced, none for a repeat, and BatchAdded with its location', async () => {
    const events: DomainEvent[] = [];
    const stream = await followTableEvents({
      tableName: context.table.tableName,
      endpoint: context.table.endpoint,
      onEvent: (event) => {
        events.push(event);
      },
    });
    try {
      const lyon = { name: 'Lyon', priority: 10, serves: ['FR'], position: { lat: 45.76, lng: 4.84 } };
      expect((await putLocation(context.service, 'lyon', lyon)).status).toBe(201);
      expect((await putLocation(context.service, 'lyon', lyon)).status).toBe(200);
      expect((await putLocation(context.service, 'lyon', { ...lyon, active: false })).status).toBe(200);
      expect((await putLocation(context.service, 'default', { name: 'Main', priority: 0, serves: ['*'] })).status).toBe(200);
      const [atLyon, atDefault] = [uniqueId('batch'), uniqueId('batch')];
      expect((await context.service.addBatch({ ref: atLyon, sku: 'LAMP', qty: 3, eta: null, location: 'lyon' })).status).toBe(201);
      expect((await context.service.addBatch({ ref: atDefault, sku: 'LAMP', qty: 2, eta: '2027-01-01' })).status).toBe(201);
      // DynamoDB Local keeps one shard: once the last change's event is here, every earlier one is.
      while (!events.some((event) => event.name === 'BatchAdded' && event.detail.ref === atDefault)) await sleep(20);

      // A location's detail has a `name` of its own: the event's goes under `event`.
      expect(events.map(({ name, detail: { id, version, time, ...fields } }) => ({ event: name, ...fields }))).toEqual([
        { event: 'LocationChanged', location: 'lyon', ...lyon, active: true },
        { event: 'LocationChanged', location: 'lyon', ...lyon, active: false },
        { event: 'LocationChanged', location: 'default', name: 'Main', priority: 0, serves: ['*'], active: true },
        { event: 'BatchAdded', ref: atLyon, sku: 'LAMP', qty: 3, eta: null, location: 'lyon', actor: 'anonymous' },
        { event: 'BatchAdded', ref: atDefault, sku: 'LAMP', qty: 2, eta: '2027-01-01', location: 'default', actor: 'anonymous' },
      ]);
    } finally {
      await stream.stop();
    }
  });

  it('name the location of the batch each line, hold and change is about, and the place a refusal was limited to', async () => {
    const events: DomainEvent[] = [];
    const stream = await followTableEvents({ tableName: context.table.tableName, endpoint: context.table.endpoint, onEvent: (event) => void events.push(event) });
    try {
      const sku = uniqueId('RUG');
      const [atNantes, atDefault, cart] = [uniqueId('nantes'), uniqueId('main'), uniqueId('cart')];
      const [order, moved, refused] = [uniqueId('order'), uniqueId('moved'), uniqueId('refused')];
      expect((await putLocation(context.service, 'nantes', { name: 'Nantes', priority: 0, serves: ['FR'] })).status).toBe(201);
      expect((await context.service.addBatch({ ref: atNantes, sku, qty: 4, eta: null, location: 'nantes' })).status).toBe(201);
      expect((await context.service.addBatch({ ref: atDefault, sku, qty: 5, eta: '2027-01-01' })).status).toBe(201);
      const invoke = (routeKey: string, options: Parameters<typeof routeEvent>[1]) => context.service.invoke(routeEvent(routeKey, options));
      expect((await invoke('POST /holds', { body: { holdid: cart, lines: [{ sku, qty: 1 }], location: 'nantes' } })).status).toBe(201);
      expect((await invoke('POST /holds/{holdid}/confirm', { pathParameters: { holdid: cart }, body: { orderid: order } })).body).toEqual({
        orderid: order,
        lines: [{ sku, qty: 1, batchref: atNantes, location: 'nantes' }],
      });
      expect((await invoke('GET /allocations/{orderid}', { pathParameters: { orderid: order } })).body).toEqual({
        orderid: order,
        lines: [{ sku, qty: 1, batchref: atNantes, location: 'nantes' }],
      });
      expect((await context.service.allocate({ orderid: moved, sku, qty: 3, destination: { country: 'FR' } })).status).toBe(201);
      expect((await context.service.allocate({ orderid: refused, sku, qty: 1, location: 'nantes' })).status).toBe(400);
      // Nantes's batch shrinks to the hold's unit: the line of 3, sent to France, moves to the main warehouse's shipment.
      expect((await invoke('PATCH /batches/{ref}', { pathParameters: { ref: atNantes }, body: { qty: 1 } })).status).toBe(200);
      expect((await invoke('DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid: moved, sku } })).status).toBe(204);
      const isLast = (event: DomainEvent) => event.name === 'Deallocated' && event.detail.reason === 'cancelled';
      while (!events.some(isLast)) await sleep(20);

      const about = events.filter(({ detail }) => JSON.stringify(detail).includes(sku));
      expect(about.map(({ name, detail: { id, version, time, ...fields } }) => ({ event: name, ...fields }))).toEqual([
        { event: 'BatchAdded', ref: atNantes, sku, qty: 4, eta: null, location: 'nantes', actor: 'anonymous' },
        { event: 'BatchAdded', ref: atDefault, sku, qty: 5, eta: '2027-01-01', location: 'default', actor: 'anonymous' },
        { event: 'HoldPlaced', holdid: cart, expires_at: expect.any(String), lines: [{ sku, qty: 1, batchref: atNantes, location: 'nantes' }] },
        { event: 'HoldConfirmed', holdid: cart, expires_at: expect.any(String), lines: [{ sku, qty: 1, batchref: atNantes, location: 'nantes' }], orderid: order },
        { event: 'Allocated', orderid: order, sku, qty: 1, batchref: atNantes, location: 'nantes' },
        { event: 'Allocated', orderid: moved, sku, qty: 3, batchref: atNantes, location: 'nantes' },
        { event: 'OutOfStock', sku, orderid: refused, qty: 1, location: 'nantes' },
        { event: 'BatchChanged', ref: atNantes, sku, qty: 1, eta: null, location: 'nantes', reason: 'correction', actor: 'anonymous' },
        { event: 'Deallocated', orderid: moved, sku, qty: 3, batchref: atNantes, location: 'nantes', reason: 'reallocated' },
        { event: 'Allocated', orderid: moved, sku, qty: 3, batchref: atDefault, location: 'default' },
        { event: 'Deallocated', orderid: moved, sku, qty: 3, batchref: atDefault, location: 'default', reason: 'cancelled' },
      ]);
    } finally {
      await stream.stop();
    }
  });
});

describe('the locations a process routes by', () => {
  const context = {} as { table: TestTable };
  beforeAll(async () => {
    context.table = await createTestTable();
  });
  afterAll(() => context.table.drop());

  /** A repository as one process has it, its routing locations dated by `clock`, its calls sent through `sender`. */
  const processWith = (clock: () => number, sender: DocumentSender = context.table.documentClient) =>
    new DynamoDbBatchRepository(
      sender,
      context.table.tableName,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      new RoutingLocations(worldAt(clock)),
    );

  /** A sender that counts the Queries of the locations' partition and holds each back until `release` while `holding`. */
  const locationsReadsThrough = () => {
    const gate = { holding: false, reads: 0, release: () => {} };
    const sender: DocumentSender = {
      send: (async (command: object, options?: object) => {
        if (command instanceof QueryCommand && command.input.ExpressionAttributeValues?.[':partition'] === LOCATIONS_PARTITION) {
          gate.reads++;
          if (gate.holding) await new Promise<void>((resolve) => (gate.release = resolve));
        }
        return context.table.documentClient.send(command as never, options);
      }) as DocumentSender['send'],
    };
    return { gate, sender };
  };

  it('are those it read for 30 s, read anew after, at once after a write of a location through it, and for a batch at a location it does not know once a second has passed', async () => {
    let now = Date.parse('2026-11-26T10:00:00.000Z');
    const process = processWith(() => now);
    const other = context.table.repository();
    const sku = uniqueId('LAMP');
    const near: LocationDefinition = { id: 'near', name: 'Near', priority: 1, serves: ['*'] };
    await putLocationOf({ ...DEFAULT, priority: 5 }, other);
    await putLocationOf(near, other);
    await addBatch({ ref: 'at-near', sku, qty: 10, eta: null, location: 'near' }, other);
    await addBatch({ ref: 'at-default', sku, qty: 10, eta: null }, other);
    const locationOfNext = async () => (await allocate({ orderid: uniqueId('order'), sku, qty: 1 }, process)).location;

    expect(await locationOfNext()).toBe('near');
    await putLocationOf({ ...near, active: false }, other);
    now += ROUTING_LOCATIONS_MAX_AGE_MS - 1;
    expect(await locationOfNext()).toBe('near');
    now += 1;
    expect(await locationOfNext()).toBe('default');

    await putLocationOf(near, process);
    expect(await locationOfNext()).toBe('near');

    await putLocationOf({ id: 'nearer', name: 'Nearer', priority: 0, serves: ['*'] }, other);
    await addBatch({ ref: 'at-nearer', sku, qty: 10, eta: null, location: 'nearer' }, other);
    now += UNKNOWN_LOCATION_REREAD_MS - 1;
    expect(await locationOfNext()).toBe('near');
    now += 1;
    expect(await locationOfNext()).toBe('nearer');
  });

  it('are read at most once a second for requests naming a location that does not exist', async () => {
    let now = Date.parse('2026-11-26T11:00:00.000Z');
    const { gate, sender } = locationsReadsThrough();
    const process = processWith(() => now, sender);
    const sku = uniqueId('LAMP');
    await addBatch({ ref: uniqueId('batch'), sku, qty: 10, eta: null }, context.table.repository());
    const atNowhere = () => allocate({ orderid: uniqueId('order'), sku, qty: 1 }, process, { location: 'nowhere' });

    for (let request = 0; request < 5; request++) await expect(atNowhere()).rejects.toMatchObject({ name: 'UnknownLocation' });
    expect(gate.reads).toBe(1);
    now += UNKNOWN_LOCATION_REREAD_MS;
    await expect(atNowhere()).rejects.toMatchObject({ name: 'UnknownLocation' });
    expect(gate.reads).toBe(2);
  });

  it('are not kept from a read of them all that a write through the process overtook', async () => {
    const { gate, sender } = locationsReadsThrough();
    const process = processWith(Date.now, sender);
    const writer = processWith(Date.now);
    const sku = uniqueId('LAMP');
    const corner: LocationDefinition = { id: uniqueId('corner'), name: 'Corner', priority: 0, serves: ['*'] };
    await putLocationOf(corner, writer);
    await addBatch({ ref: uniqueId('at-corner'), sku, qty: 10, eta: null, location: corner.id }, writer);

    gate.holding = true;
    const listed = process.locations();
    await vi.waitFor(() => expect(gate.reads).toBe(1));
    gate.holding = false;
    // The read holds the corner active; the write through the same process closes it, then the read ends.
    await putLocationOf({ ...corner, active: false }, process);
    gate.release();
    await listed;

    await expect(allocate({ orderid: uniqueId('order'), sku, qty: 1 }, process, { location: corner.id })).rejects.toMatchObject({ reason: 'no_location' });
  });

  it('are read by a request for itself when the read it waited on, another request\'s, failed', async () => {
    const routing = new RoutingLocations(systemWorld);
    const cut = Promise.reject(new Error('the first request\'s deadline'));
    const first = routing.read(() => cut);
    const second = routing.read(async () => [{ ...DEFAULT, priority: 7 }]);
    await expect(first).rejects.toThrow('deadline');
    expect((await second)[0]?.priority).toBe(7);
  });

  it('leave out an item of their partition that is not a location, and route by the others', async () => {
    const service = serviceOver(context.table.repository());
    await context.table.documentClient.send(new PutCommand({ TableName: context.table.tableName, Item: { ...locationKey('hand-written'), note: 'not a location' } }));
    const sku = uniqueId('LAMP');
    await addBatch({ ref: uniqueId('batch'), sku, qty: 10, eta: null }, context.table.repository());

    const listed = await getLocations(service);
    expect(listed.status).toBe(200);
    expect((listed.body as { locations: { id: string }[] }).locations.map(({ id }) => id)).not.toContain('hand-written');
    expect((await allocate({ orderid: uniqueId('order'), sku, qty: 1 }, processWith(Date.now))).location).toBe('default');
  });
});
