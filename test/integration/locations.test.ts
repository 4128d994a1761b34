import { setTimeout as sleep } from 'node:timers/promises';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../domain/events';
import { checkInvariants } from '../../tools/invariants';
import { followTableEvents } from '../../local/event-stream';
import { type HandlerService, serviceOver } from '../reliability/support/service';
import { type TestTable, createTestTable, uniqueId } from '../support/dynamodb';
import { routeEvent } from '../support/events';

/*
 * Batches at a place (docs/api.md, "POST /add_batch"), through the batches handler over DynamoDB
 * Local: add_batch's check of its location in its own transaction, GET's location, and BatchAdded's.
 */

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

const getBatch = (service: HandlerService, ref: string) => service.invoke(routeEvent('GET /batches/{ref}', { pathParameters: { ref } }));

describe('batches at a place', () => {
  const context = serviceOnItsOwnTable();
  const sku = uniqueId('LAMP');

  beforeAll(async () => {
    const repository = context.table.repository();
    expect(await repository.saveLocation({ id: 'lyon', name: 'Lyon', priority: 1, serves: ['FR'], active: true })).toBe('saved');
    expect(await repository.saveLocation({ id: 'closed', name: 'Closed', priority: 2, serves: ['FR'], active: false })).toBe('saved');
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
    expect((await context.service.allocate({ orderid: uniqueId('order'), sku: own, qty: 2 })).body).toEqual({ batchref: ref });
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
        message: 'Invalid request body',
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
    expect(await context.service.addBatch({ ...batch, location: 'closed' })).toMatchObject({ status: 409, body: { message: `Batch ${batch.ref} already exists` } });
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

describe("batches' events, from the table's stream", () => {
  const context = serviceOnItsOwnTable();

  it('announce BatchAdded with the location of the batch: default when the request named none', async () => {
    await context.table.repository().saveLocation({ id: 'lyon', name: 'Lyon', priority: 10, serves: ['FR'], active: true });
    const events: DomainEvent[] = [];
    const stream = await followTableEvents({
      tableName: context.table.tableName,
      endpoint: context.table.endpoint,
      onEvent: (event) => {
        events.push(event);
      },
    });
    try {
      const [atLyon, atDefault] = [uniqueId('batch'), uniqueId('batch')];
      expect((await context.service.addBatch({ ref: atLyon, sku: 'LAMP', qty: 3, eta: null, location: 'lyon' })).status).toBe(201);
      expect((await context.service.addBatch({ ref: atDefault, sku: 'LAMP', qty: 2, eta: '2027-01-01' })).status).toBe(201);
      // DynamoDB Local keeps one shard: once the last change's event is here, every earlier one is.
      while (!events.some((event) => event.name === 'BatchAdded' && event.detail.ref === atDefault)) await sleep(20);

      expect(events.map(({ name, detail: { id, version, time, ...fields } }) => ({ event: name, ...fields }))).toEqual([
        { event: 'BatchAdded', ref: atLyon, sku: 'LAMP', qty: 3, eta: null, location: 'lyon' },
        { event: 'BatchAdded', ref: atDefault, sku: 'LAMP', qty: 2, eta: '2027-01-01', location: 'default' },
      ]);
    } finally {
      await stream.stop();
    }
  });
});
