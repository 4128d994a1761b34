import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { placeHold, sweepExpiredHolds } from '../../domain/hold-services';
import { allocate } from '../../domain/services';
import { createBatchesHandler } from '../../functions/batches';
import { createAllocationsHandler } from '../../functions/allocations';
import type { HttpEvent } from '../../functions/http/route';
import type { DocumentSender } from '../../functions/store/store-calls';
import { type TableAccess, tableAccess } from '../../functions/store/table';
import { type TestTable, createTestTable, uniqueId } from '../support/dynamodb';
import { lambdaContext, postEvent, routeEvent } from '../support/events';

/*
 * The stack grants each function's role only the actions, partition key prefixes and written
 * attributes that `tableAccess` lists (functions/store/table.ts). IAM is not there to refuse
 * anything locally, so this records every call the adapter sends while each handler answers its
 * every kind of request, and checks each call against what that handler's role will be granted on
 * AWS: a call outside it would be AccessDenied in production only.
 */

interface StoreAction {
  readonly action: string;
  /** The table's partition key, or the index's for a Query of the index. */
  readonly partitionKey: string;
  readonly index?: string;
  /** Attribute names the call writes or names in its expressions; only checked for writes. */
  readonly attributes: readonly string[];
}

interface SentCommand {
  readonly input: Record<string, unknown>;
  readonly clientCommand?: object;
}

const EXPRESSION_WORDS = new Set([
  'AND', 'OR', 'NOT', 'SET', 'REMOVE', 'ADD', 'DELETE', 'BETWEEN', 'IN',
  'attribute_exists', 'attribute_not_exists', 'attribute_type', 'begins_with', 'contains', 'size', 'if_not_exists', 'list_append',
]);

/**
 * The top-level attribute names an expression refers to (IAM's `dynamodb:Attributes` names no more:
 * `held.#hold.expiresAt` is `held`): its words that are not values (`:x`), keywords, or parts of a
 * document path after its first.
 */
const namesIn = (expression: unknown, names: Record<string, string> = {}): string[] =>
  typeof expression === 'string'
    ? [...expression.matchAll(/(?<![:\w#.])#?[A-Za-z_]\w*/g)]
        .map(([word]) => (word.startsWith('#') ? (names[word] ?? word) : word))
        .filter((word) => !EXPRESSION_WORDS.has(word))
    : [];

const actionOf = (action: string, input: Record<string, unknown>): StoreAction => {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const item = (input.Item ?? input.Key ?? {}) as Record<string, unknown>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  // A Query's partition is the value its key condition compares the partition key with.
  const queried = /^\s*#?(\w+)\s*=\s*(:\w+)/.exec(String(input.KeyConditionExpression ?? ''));
  const partitionKey = action === 'dynamodb:Query' ? String(values[queried?.[2] ?? '']) : String(item.pk);
  return {
    action,
    partitionKey,
    ...(typeof input.IndexName === 'string' ? { index: input.IndexName } : {}),
    attributes: [
      ...Object.keys(item),
      ...namesIn(input.UpdateExpression, names),
      ...namesIn(input.ConditionExpression, names),
      ...namesIn(input.KeyConditionExpression, names),
    ],
  };
};

const TRANSACTION_ACTIONS: Record<string, string> = {
  Put: 'dynamodb:PutItem',
  Update: 'dynamodb:UpdateItem',
  Delete: 'dynamodb:DeleteItem',
  ConditionCheck: 'dynamodb:ConditionCheckItem',
};

const actionsOf = (command: SentCommand): StoreAction[] => {
  const operation = (command.clientCommand ?? command).constructor.name.replace(/Command$/, '');
  if (operation === 'TransactWriteItems') {
    return (command.input.TransactItems as Record<string, Record<string, unknown>>[]).flatMap((transactItem) =>
      Object.entries(transactItem).map(([kind, input]) => actionOf(TRANSACTION_ACTIONS[kind] ?? kind, input)),
    );
  }
  if (operation === 'TransactGetItems') {
    // Authorized item by item, as the GetItem of each.
    return (command.input.TransactItems as { Get: Record<string, unknown> }[]).map(({ Get }) => actionOf('dynamodb:GetItem', Get));
  }
  if (operation === 'BatchGetItem') {
    return Object.values(command.input.RequestItems as Record<string, { Keys: Record<string, unknown>[] }>).flatMap(({ Keys }) =>
      Keys.map((Key) => actionOf('dynamodb:BatchGetItem', { Key })),
    );
  }
  return [actionOf(`dynamodb:${operation}`, command.input)];
};

const recording = (client: DocumentSender) => {
  const actions: StoreAction[] = [];
  const sender = {
    send: (async (command: SentCommand, options?: object) => {
      actions.push(...actionsOf(command));
      return client.send(command as never, options);
    }) as unknown as DocumentSender['send'],
  };
  return { sender, actions };
};

const outsideGrant = (actions: readonly StoreAction[], access: TableAccess) =>
  actions.filter(({ action, partitionKey, index, attributes }) => {
    const isWrite = access.writes.includes(action);
    const itemPrefixes = isWrite ? access.writtenPartitionKeyPrefixes : access.readPartitionKeyPrefixes;
    const prefixes = index === undefined ? itemPrefixes : (access.indexQueries.find((query) => query.index === index)?.partitionKeyPrefixes ?? []);
    return (
      !(isWrite || access.reads.includes(action)) ||
      !prefixes.some((prefix) => partitionKey.startsWith(prefix)) ||
      (isWrite && attributes.some((attribute) => !access.writtenAttributes.includes(attribute)))
    );
  });

let table: TestTable;
beforeAll(async () => {
  table = await createTestTable();
});
afterAll(() => table.drop());

const statusesOf = async (handler: ReturnType<typeof createBatchesHandler>, events: HttpEvent[]) => {
  const statuses = [];
  for (const event of events) statuses.push((await handler(event, lambdaContext())).statusCode);
  return statuses;
};

describe("each handler's calls to the table stay within what its role is granted", () => {
  it('batches: locations created, replaced, repeated and read; batches added at a location and at one that does not exist', async () => {
    const { sender, actions } = recording(table.documentClient);
    const batches = createBatchesHandler(table.repository({ sender }));
    const id = uniqueId('place').replace(/-/g, '_');
    const place = { name: 'A place', priority: 3, serves: ['FR'], position: { lat: 1, lng: 2 }, handling_days: 1, transit_days: { FR: 1, '*': 3 } };
    const put = (body: unknown) => routeEvent('PUT /locations/{id}', { pathParameters: { id }, body });

    const statuses = await statusesOf(batches, [
      put(place),
      put(place),
      put({ ...place, active: false }),
      routeEvent('GET /locations'),
      routeEvent('GET /locations/{id}', { pathParameters: { id } }),
      postEvent('/add_batch', { ref: uniqueId('batch'), sku: uniqueId('sku'), qty: 5, eta: null, location: id }),
      postEvent('/add_batch', { ref: uniqueId('batch'), sku: uniqueId('sku'), qty: 5, eta: null, location: 'nowhere' }),
    ]);

    expect(statuses).toEqual([201, 200, 200, 200, 200, 201, 400]);
    expect(actions.map(({ action }) => action)).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:ConditionCheckItem']));
    expect(outsideGrant(actions, tableAccess.batches)).toEqual([]);
  });

  it('batches: add (new SKU, another batch, a repeat, a duplicate), read, stock levels, a change moving lines away and out', async () => {
    const sku = uniqueId('sku');
    const [shrinking, room] = [uniqueId('batch'), uniqueId('batch')];
    await table.repository().addBatch({ ref: shrinking, sku, qty: 5, available: 5, eta: null });
    for (const qty of [2, 3]) await allocate({ orderid: uniqueId('order'), sku, qty }, table.repository());
    const { sender, actions } = recording(table.documentClient);
    const batches = createBatchesHandler(table.repository({ sender }));
    const added = { ref: room, sku, qty: 2, eta: '2030-01-01' };

    const statuses = await statusesOf(batches, [
      postEvent('/add_batch', { ref: uniqueId('batch'), sku: uniqueId('sku'), qty: 5, eta: null }),
      postEvent('/add_batch', added),
      postEvent('/add_batch', added),
      postEvent('/add_batch', { ...added, qty: 3 }),
      routeEvent('GET /batches/{ref}', { pathParameters: { ref: shrinking } }),
      routeEvent('GET /skus/{sku}/stock', { pathParameters: { sku } }),
      // Set to 0: the newest line (3) fits nowhere and leaves its order; the 2 moves to the shipment.
      routeEvent('PATCH /batches/{ref}', { pathParameters: { ref: shrinking }, body: { qty: 0 } }),
    ]);

    expect(statuses).toEqual([201, 201, 200, 409, 200, 200, 200]);
    const done = actions.map(({ action, index }) => (index ? `${action} on ${index}` : action));
    for (const action of ['dynamodb:BatchGetItem', 'dynamodb:Query on linesByBatch', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']) {
      expect(done).toContain(action);
    }
    expect(outsideGrant(actions, tableAccess.batches)).toEqual([]);
  });

  it('allocations: a new line, a repeat, another qty, the last units of a shipment, out of stock, an unknown SKU, reading, cancelling, a whole order', async () => {
    const sku = uniqueId('sku');
    await table.repository().addBatch({ ref: uniqueId('batch'), sku, qty: 5, available: 5, eta: null });
    await table.repository().addBatch({ ref: uniqueId('batch'), sku, qty: 3, available: 3, eta: '2030-01-01' });
    const { sender, actions } = recording(table.documentClient);
    const allocations = createAllocationsHandler(table.repository({ sender }));
    const line = { orderid: uniqueId('order'), sku, qty: 4 };

    const statuses = await statusesOf(allocations, [
      postEvent('/allocate', line),
      postEvent('/allocate', line),
      postEvent('/allocate', { ...line, qty: 2 }),
      postEvent('/allocate', { orderid: uniqueId('order'), sku, qty: 1 }),
      postEvent('/allocate', { orderid: uniqueId('order'), sku, qty: 3 }),
      postEvent('/allocate', { orderid: uniqueId('order'), sku, qty: 1 }),
      postEvent('/allocate', { orderid: uniqueId('order'), sku: uniqueId('sku'), qty: 1 }),
      routeEvent('GET /allocations/{orderid}', { pathParameters: { orderid: line.orderid } }),
      routeEvent('DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid: line.orderid, sku } }),
      postEvent('/promises', { lines: [{ sku, qty: 4 }] }),
      postEvent('/orders', { orderid: uniqueId('order'), lines: [{ sku, qty: 4 }] }),
    ]);

    expect(statuses).toEqual([201, 200, 409, 201, 201, 400, 400, 200, 204, 200, 201]);
    expect(actions.map(({ action }) => action)).toContain('dynamodb:DeleteItem');
    expect(outsideGrant(actions, tableAccess.allocations)).toEqual([]);
  });

  it('allocations: the last units of a batch at a location, routed there by its destination and by its name (each line recording them), which moves the batch out of the stock range with its location', async () => {
    const sku = uniqueId('sku');
    const place = uniqueId('place');
    await table.repository().saveLocation({ id: place, name: 'A place', priority: 1, serves: ['*'], active: true });
    await table.repository().addBatch({ ref: uniqueId('batch'), sku, qty: 2, available: 2, eta: null, location: place });
    const { sender, actions } = recording(table.documentClient);
    const allocations = createAllocationsHandler(table.repository({ sender }));

    expect(
      await statusesOf(allocations, [
        postEvent('/allocate', { orderid: uniqueId('order'), sku, qty: 1, destination: { country: 'FR' } }),
        postEvent('/allocate', { orderid: uniqueId('order'), sku, qty: 1, location: place }),
        postEvent('/allocate', { orderid: uniqueId('order'), sku, qty: 1, location: uniqueId('nowhere') }),
      ]),
    ).toEqual([201, 201, 400]);
    expect(actions.flatMap(({ action, attributes }) => (action === 'dynamodb:PutItem' ? attributes : []))).toEqual(expect.arrayContaining(['location', 'routing']));
    expect(outsideGrant(actions, tableAccess.allocations)).toEqual([]);
  });

  it('allocations: holds placed, read, extended, released, and confirmed, one emptying its batch and recording its routing on its lines', async () => {
    const sku = uniqueId('sku');
    await table.repository().addBatch({ ref: uniqueId('batch'), sku, qty: 3, available: 3, eta: null });
    const { sender, actions } = recording(table.documentClient);
    const allocations = createAllocationsHandler(table.repository({ sender }));
    const [released, confirmed] = [uniqueId('cart'), uniqueId('cart')];
    const path = (holdid: string) => ({ pathParameters: { holdid } });

    const statuses = await statusesOf(allocations, [
      postEvent('/holds', { holdid: released, lines: [{ sku, qty: 1 }] }),
      routeEvent('GET /holds/{holdid}', path(released)),
      routeEvent('PATCH /holds/{holdid}', { ...path(released), body: { ttl_seconds: 60 } }),
      routeEvent('DELETE /holds/{holdid}', path(released)),
      postEvent('/holds', { holdid: confirmed, lines: [{ sku, qty: 3 }], destination: { country: 'FR' } }),
      routeEvent('POST /holds/{holdid}/confirm', { ...path(confirmed), body: { orderid: uniqueId('order') } }),
    ]);

    expect(statuses).toEqual([201, 200, 200, 204, 201, 201]);
    expect(actions.map(({ action }) => action)).toContain('dynamodb:DeleteItem');
    expect(actions.flatMap(({ action, attributes }) => (action === 'dynamodb:PutItem' ? attributes : []))).toContain('routing');
    expect(outsideGrant(actions, tableAccess.allocations)).toEqual([]);
  });

  it("batches: transfers made (one taking a batch's last units), repeated, refused, read, cancelled (giving units back to the emptied batch) and cancelled again, and a cancel refused", async () => {
    const sku = uniqueId('sku');
    const place = uniqueId('place');
    await table.repository().saveLocation({ id: place, name: 'A place', priority: 1, serves: ['FR'], active: true });
    await table.repository().addBatch({ ref: uniqueId('batch'), sku, qty: 6, available: 6, eta: null });
    const { sender, actions } = recording(table.documentClient);
    const batches = createBatchesHandler(table.repository({ sender }));
    const transfer = (qty: number, eta = '2030-01-01') => ({ transferid: uniqueId('transfer'), sku, qty, from: 'default', to: place, eta });
    // The line below goes to the earliest shipment at the place: the incoming batch of `lined`.
    const [other, lined, lastUnits] = [transfer(3), transfer(1, '2029-01-01'), transfer(2)];
    const path = (transferid: string) => ({ pathParameters: { transferid } });

    const statuses = await statusesOf(batches, [
      postEvent('/transfers', other),
      postEvent('/transfers', lined),
      postEvent('/transfers', lastUnits),
      postEvent('/transfers', lastUnits),
      postEvent('/transfers', transfer(1)),
      routeEvent('GET /transfers/{transferid}', path(other.transferid)),
      routeEvent('DELETE /transfers/{transferid}', path(lastUnits.transferid)),
      routeEvent('DELETE /transfers/{transferid}', path(lastUnits.transferid)),
    ]);
    await allocate({ orderid: uniqueId('order'), sku, qty: 1 }, table.repository(), { location: place });
    statuses.push(...(await statusesOf(batches, [routeEvent('DELETE /transfers/{transferid}', path(lined.transferid))])));

    expect(statuses).toEqual([201, 201, 201, 200, 400, 200, 204, 204, 409]);
    const done = actions.map(({ action, partitionKey }) => `${action} on ${partitionKey.split('#')[0]}`);
    for (const action of ['dynamodb:PutItem on TRANSFER', 'dynamodb:UpdateItem on TRANSFER', 'dynamodb:GetItem on TRANSFER', 'dynamodb:DeleteItem on SKU']) {
      expect(done).toContain(action);
    }
    expect(outsideGrant(actions, tableAccess.batches)).toEqual([]);
  });

  it('batches: shipments of a whole line and of a split one (a part shipped whole), repeated, refused and read; the lines that shipped moved and cancelled; a count and an adjustment', async () => {
    const [sku, other] = [uniqueId('sku'), uniqueId('sku')];
    const [shipped, room, first, second] = [uniqueId('batch'), uniqueId('batch'), uniqueId('batch'), uniqueId('batch')];
    await table.repository().addBatch({ ref: shipped, sku, qty: 5, available: 5, eta: null });
    await table.repository().addBatch({ ref: room, sku, qty: 5, available: 5, eta: '2030-01-01' });
    for (const ref of [first, second]) await table.repository().addBatch({ ref, sku: other, qty: 2, available: 2, eta: null });
    const orderid = uniqueId('order');
    await allocate({ orderid, sku, qty: 4 }, table.repository());
    await allocate({ orderid, sku: other, qty: 3 }, table.repository(), {}, 'batches');
    const { sender, actions } = recording(table.documentClient);
    const batches = createBatchesHandler(table.repository({ sender }));
    const cancels = recording(table.documentClient);
    const allocations = createAllocationsHandler(table.repository({ sender: cancels.sender }));
    const shipment = { shipmentid: uniqueId('parcel'), orderid, lines: [{ sku, qty: 1 }, { sku: other, qty: 2 }] };
    const adjustment = { adjustmentid: uniqueId('found'), ref: room, reason: 'found', delta: 1, expected_qty: 5 };

    const statuses = await statusesOf(batches, [
      postEvent('/shipments', shipment),
      postEvent('/shipments', shipment),
      postEvent('/shipments', { ...shipment, shipmentid: uniqueId('parcel'), lines: [{ sku, qty: 9 }] }),
      routeEvent('GET /shipments/{shipmentid}', { pathParameters: { shipmentid: shipment.shipmentid } }),
      // The line's 3 units left move to the shipment: its shipped unit stays.
      routeEvent('PATCH /batches/{ref}', { pathParameters: { ref: shipped }, body: { qty: 1 } }),
      // A count as of a moment before the shipment, a delta, and a repeat.
      postEvent('/adjustments', { adjustmentid: uniqueId('count'), ref: shipped, reason: 'counted', qty: 4, counted_at: new Date(Date.now() - 60_000).toISOString() }),
      postEvent('/adjustments', adjustment),
      postEvent('/adjustments', adjustment),
    ]);
    statuses.push(...(await statusesOf(allocations, [routeEvent('DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid, sku: other } })])));

    expect(statuses).toEqual([201, 200, 409, 200, 200, 201, 201, 200, 204]);
    const done = actions.map(({ action, partitionKey }) => `${action} on ${partitionKey.split('#')[0]}`);
    const shipping = ['dynamodb:PutItem on SHIPMENT', 'dynamodb:GetItem on SHIPMENT', 'dynamodb:UpdateItem on ORDER', 'dynamodb:DeleteItem on ORDER', 'dynamodb:UpdateItem on BATCHREF', 'dynamodb:PutItem on BATCHREF'];
    for (const action of [...shipping, 'dynamodb:Query on BATCHREF', 'dynamodb:PutItem on ADJUSTMENT', 'dynamodb:GetItem on ADJUSTMENT']) {
      expect(done).toContain(action);
    }
    expect(outsideGrant(actions, tableAccess.batches)).toEqual([]);
    expect(cancels.actions.map(({ action }) => action)).toContain('dynamodb:UpdateItem');
    expect(outsideGrant(cancels.actions, tableAccess.allocations)).toEqual([]);
  });

  it('batches: imports of rows (a batch added, one recounted, a count, a count at a place, a refused row), repeated, read with their rows', async () => {
    const sku = uniqueId('sku');
    const [counted, added] = [uniqueId('batch'), uniqueId('batch')];
    await table.repository().addBatch({ ref: counted, sku, qty: 5, available: 5, eta: null });
    const { sender, actions } = recording(table.documentClient);
    const batches = createBatchesHandler(table.repository({ sender }));
    const importid = uniqueId('feed');
    const rows = [
      { ref: added, sku, qty: 3, eta: null },
      { ref: counted, sku, qty: 7, eta: null },
      { ref: counted, qty: 6, counted_at: new Date(Date.now() - 1_000).toISOString() },
      { sku, location: 'default', on_hand: 4, counted_at: new Date().toISOString() },
      { ref: uniqueId('batch'), sku, qty: 0, eta: null },
    ];
    const feed = { importid, rows, validate_first: false };

    const statuses = await statusesOf(batches, [
      postEvent('/imports', feed),
      postEvent('/imports', feed),
      routeEvent('GET /imports/{importid}', { pathParameters: { importid } }),
      routeEvent('GET /imports/{importid}/rows', { pathParameters: { importid } }),
    ]);

    expect(statuses).toEqual([201, 200, 200, 200]);
    const done = actions.map(({ action, partitionKey }) => `${action} on ${partitionKey.split('#')[0]}`);
    for (const action of ['dynamodb:PutItem on IMPORT', 'dynamodb:UpdateItem on IMPORT', 'dynamodb:ConditionCheckItem on IMPORT', 'dynamodb:BatchGetItem on BATCHREF', 'dynamodb:PutItem on ADJUSTMENT']) {
      expect(done).toContain(action);
    }
    expect(outsideGrant(actions, tableAccess.batches)).toEqual([]);
  });

  it('batches: a change that releases a hold on the batch', async () => {
    const sku = uniqueId('sku');
    const ref = uniqueId('batch');
    await table.repository().addBatch({ ref, sku, qty: 3, available: 3, eta: null });
    await createAllocationsHandler(table.repository())(postEvent('/holds', { holdid: uniqueId('cart'), lines: [{ sku, qty: 2 }] }), lambdaContext());
    const { sender, actions } = recording(table.documentClient);
    const batches = createBatchesHandler(table.repository({ sender }));

    expect(await statusesOf(batches, [routeEvent('PATCH /batches/{ref}', { pathParameters: { ref }, body: { qty: 0 } })])).toEqual([200]);
    expect(outsideGrant(actions, tableAccess.batches)).toEqual([]);
  });

  it('sweeper: expired holds ended, their units given back or already taken by an allocation, the overdue counted', async () => {
    const [sku, taken] = [uniqueId('sku'), uniqueId('sku')];
    const now = Date.now();
    for (const held of [sku, taken]) {
      await table.repository().addBatch({ ref: uniqueId('batch'), sku: held, qty: 3, available: 3, eta: null });
      await placeHold({ holdid: uniqueId('cart'), lines: [{ sku: held, qty: 2 }], ttlSeconds: 1 }, table.repository({ clock: () => now }));
    }
    // Takes the expired hold's units (and its entry): ending that hold reads its batch and gives nothing back.
    await allocate({ orderid: uniqueId('order'), sku: taken, qty: 3 }, table.repository({ clock: () => now + 2_000 }));
    const { sender, actions } = recording(table.documentClient);

    const sweep = await sweepExpiredHolds(table.repository({ sender, clock: () => now + 2_000 }));

    expect(sweep.ended).toBeGreaterThanOrEqual(2);
    expect(actions.map(({ action }) => action)).toContain('dynamodb:BatchGetItem');
    expect(actions.map(({ action, index }) => (index ? `${action} on ${index}` : action))).toContain('dynamodb:Query on activeHolds');
    expect(outsideGrant(actions, tableAccess.sweeper)).toEqual([]);
  });
});
