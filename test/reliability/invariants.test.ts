import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { DeleteCommand, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { placeHold } from '../../domain/hold-services';
import { cancelTransfer, createTransfer } from '../../domain/transfer-services';
import { heldUnitsKey } from '../../functions/store/held-units';
import { type StoredItem, parseStoredItem } from '../../functions/store/items';
import { pieceItem, pieceKey, spreadWrites } from '../../functions/store/pieces';
import { freePort } from '../../local/dynamodb-local';
import { STORE_ENDPOINT_FILE } from '../../local/store-endpoint';
import { checkInvariants } from '../../tools/invariants';
import { type TestTable, createTestTable } from '../support/dynamodb';
import { routeEvent } from '../support/events';
import { serviceOver } from './support/service';
import { scanItems, tableContents } from './support/table-contents';

/**
 * A small shop, written through the service, that each test then breaks in one way: the check must
 * find nothing wrong with what the service writes, and name every kind of damage.
 */
const stockTheShop = async (table: TestTable) => {
  const service = serviceOver(table.repository());
  for (const batch of [
    { ref: 'lamp-1', sku: 'LAMP', qty: 10, eta: null },
    { ref: 'lamp-2', sku: 'LAMP', qty: 5, eta: '2026-05-01' },
    { ref: 'sofa-1', sku: 'SOFA', qty: 3, eta: null },
  ]) {
    expect((await service.addBatch(batch)).status).toBe(201);
  }
  for (const line of [
    { orderid: 'o1', sku: 'LAMP', qty: 4 },
    { orderid: 'o2', sku: 'LAMP', qty: 6 },
    { orderid: 'o3', sku: 'LAMP', qty: 2 },
    { orderid: 'o1', sku: 'SOFA', qty: 3 },
  ]) {
    expect((await service.allocate(line)).status).toBe(201);
  }
};

/** The key of the one item that matches, found by reading items back the way the check does. */
const keyOf = async (table: TestTable, matches: (item: StoredItem) => boolean) => {
  const items = await scanItems(table.documentClient, table.tableName);
  const found = items.filter((item) => matches(parseStoredItem(item)));
  expect(found).toHaveLength(1);
  return { pk: found[0]?.pk, sk: found[0]?.sk };
};
const batchKey = (table: TestTable, ref: string) => keyOf(table, (item) => item.kind === 'batch' && item.batch.ref === ref);
const lineKey = (table: TestTable, orderid: string, sku: string) =>
  keyOf(table, (item) => item.kind === 'line' && item.allocation.orderid === orderid && item.allocation.sku === sku);

describe('the invariant check', () => {
  let table: TestTable;
  beforeEach(async () => {
    table = await createTestTable();
    await stockTheShop(table);
    return () => table.drop();
  });

  const violations = () => checkInvariants(table.documentClient, table.tableName);
  const set = async (key: Record<string, unknown>, attribute: string, value: unknown) =>
    table.documentClient.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: key,
        UpdateExpression: 'SET #attribute = :value',
        ExpressionAttributeNames: { '#attribute': attribute },
        ExpressionAttributeValues: { ':value': value },
      }),
    );

  it('finds nothing wrong with a table the service wrote, and changes nothing', async () => {
    const before = await tableContents(table.documentClient, table.tableName);
    expect(await violations()).toEqual([]);
    expect(await tableContents(table.documentClient, table.tableName)).toEqual(before);
  });

  /** Spreads lamp-2 (qty 5, 2 on a line) as the service would: 1 unit left on its item, 1 on each of 2 pieces. */
  const spreadLamp2 = async () => {
    const batch = { ref: 'lamp-2', sku: 'LAMP', qty: 5, available: 3, eta: '2026-05-01' };
    const items = spreadWrites(table.tableName, batch, 2, 2, 'spread-1', '2026-11-25T12:00:00.000Z');
    await table.documentClient.send(new TransactWriteCommand({ TransactItems: items }));
  };

  it('counts a spread batch\'s pieces in its stock, and finds nothing wrong with what a spread writes', async () => {
    await spreadLamp2();
    expect(await violations()).toEqual([]);
  });

  it('reports a spread batch whose pieces do not add up to its stock, or are missing, and a piece of no spread', async () => {
    await spreadLamp2();
    await set(pieceKey('LAMP', 'lamp-2', 1), 'available', 4);
    await table.documentClient.send(new DeleteCommand({ TableName: table.tableName, Key: pieceKey('LAMP', 'lamp-2', 0) }));
    await table.documentClient.send(
      new PutCommand({ TableName: table.tableName, Item: pieceItem({ sku: 'SOFA', ref: 'sofa-1', piece: 0, available: 1, spreadId: 'none' }) }),
    );
    expect(await violations()).toEqual(
      expect.arrayContaining([
        { rule: 'stock-matches-lines', message: 'batch "lamp-2" of sku "LAMP": qty 5 - available 5 = 0, but its lines hold 2' },
        { rule: 'pieces-of-their-spread', message: 'batch "lamp-2" of sku "LAMP" is spread over 2 pieces, but 1 are stored' },
        { rule: 'pieces-of-their-spread', message: 'piece 0 of batch "sofa-1" of sku "SOFA" belongs to no spread of its batch' },
      ]),
    );
  });

  it('reports a batch whose stock does not match the lines it holds', async () => {
    await set(await batchKey(table, 'lamp-2'), 'available', 1);
    expect(await violations()).toEqual([
      { rule: 'stock-matches-lines', message: 'batch "lamp-2" of sku "LAMP": qty 5 - available 1 = 4, but its lines hold 2' },
    ]);
  });

  it('reports stock below zero', async () => {
    await set(await batchKey(table, 'sofa-1'), 'available', -2);
    expect(await violations()).toEqual(
      expect.arrayContaining([
        {
          rule: 'stock-never-negative',
          message:
            'batch "sofa-1" of sku "SOFA" has available -2: its lines hold 2 more than its qty ' +
            '(a change of its qty cut off before it moved them: repeat the PATCH to finish it)',
        },
      ]),
    );
  });

  it('reports a line placed in a batch of another sku, and one placed in no batch at all', async () => {
    // The line's index entry moves with it, as the service would write it.
    const pointAt = async (key: Record<string, unknown>, ref: string) => {
      await set(key, 'batchref', ref);
      await set(key, 'lineBatch', `LINES#${ref}`);
    };
    await pointAt(await lineKey(table, 'o3', 'LAMP'), 'sofa-1');
    await pointAt(await lineKey(table, 'o1', 'SOFA'), 'ghost');
    const misplaced = (await violations()).filter(({ rule }) => rule === 'line-in-batch-of-its-sku');
    expect(misplaced.map(({ message }) => message).sort()).toEqual([
      'line of order "o1" for sku "SOFA" points at batch "ghost", which does not exist',
      'line of order "o3" for sku "LAMP" points at batch "sofa-1", which holds sku "SOFA"',
    ]);
  });

  it('reports a line listed in an index shard that no change of its batch reads, and takes one listed as before the shards for a line', async () => {
    const line = await lineKey(table, 'o1', 'LAMP');
    const listed = () => violations().then((found) => found.filter(({ rule }) => rule === 'line-listed-where-read'));
    await set(line, 'lineBatch', 'LINES#lamp-1');
    expect(await listed()).toEqual([]);
    await set(line, 'lineBatch', 'LINES9#lamp-1');
    expect(await listed()).toEqual([
      {
        rule: 'line-listed-where-read',
        message: 'line of order "o1" for sku "LAMP" is listed in no index partition of batch "lamp-1" that a change of it reads (written with another number of shards?)',
      },
    ]);
  });

  it("reports a split line's part item missing, of another qty or place or time than its line's, listed where no change reads, or of no line", async () => {
    const service = serviceOver(table.repository());
    for (const batch of [
      { ref: 'rug-1', sku: 'RUG', qty: 3, eta: null },
      { ref: 'rug-2', sku: 'RUG', qty: 3, eta: null },
    ]) {
      expect((await service.addBatch(batch)).status).toBe(201);
    }
    expect((await service.allocate({ orderid: 'o4', sku: 'RUG', qty: 5, split: 'batches' })).status).toBe(201);
    expect(await violations()).toEqual([]);
    const partKey = (ref: string) => keyOf(table, (item) => item.kind === 'line-part' && item.allocation.orderid === 'o4' && item.allocation.batchref === ref);
    const [first, second] = [await partKey('rug-1'), await partKey('rug-2')];
    const allocatedAt = (await scanItems(table.documentClient, table.tableName)).find(({ pk, sk }) => pk === first.pk && sk === first.sk)?.allocatedAt;
    const astray = async () => (await violations()).filter(({ rule }) => rule === 'parts-as-their-line-says').map(({ message }) => message);
    const part = (ref: string) => `part of the line of order "o4" for sku "RUG" on batch "${ref}"`;

    await set(first, 'qty', 2);
    await set(second, 'location', 'lyon');
    expect(await astray()).toEqual([`${part('rug-1')} is of 3, but its item says 2`, `${part('rug-2')} is at "default", but its item says "lyon"`]);
    await set(first, 'qty', 3);
    await set(first, 'allocatedAt', '2020-01-01T00:00:00.000Z');
    expect(await astray()).toEqual([
      expect.stringMatching(/^part of the line of order "o4" for sku "RUG" on batch "rug-1" was allocated at \S+ with its line, but its item says 2020-01-01T00:00:00.000Z$/),
      `${part('rug-2')} is at "default", but its item says "lyon"`,
    ]);
    await table.documentClient.send(new DeleteCommand({ TableName: table.tableName, Key: second }));
    await set(first, 'allocatedAt', allocatedAt);
    await set(first, 'lineBatch', 'LINES9#rug-1');
    expect(await astray()).toEqual([`${part('rug-1')} is listed in no index partition of its batch that a change of it reads`, `${part('rug-2')} has no item`]);
    await table.documentClient.send(new DeleteCommand({ TableName: table.tableName, Key: await lineKey(table, 'o4', 'RUG') }));
    expect(await astray()).toEqual(['part item of order "o4" for sku "RUG" on batch "rug-1" is of no line\'s part']);
  });

  it('reports one batch reference stored for two skus', async () => {
    // Without its reference item, the adapter no longer knows the ref is taken.
    await table.documentClient.send(
      new DeleteCommand({
        TableName: table.tableName,
        Key: await keyOf(table, (item) => item.kind === 'batch-reference' && item.ref === 'sofa-1'),
      }),
    );
    await table.repository().addBatch({ ref: 'sofa-1', sku: 'LAMP', qty: 1, available: 1, eta: null });
    expect(await violations()).toEqual(
      expect.arrayContaining([{ rule: 'batch-ref-unique', message: 'batch "sofa-1" exists for 2 skus: "SOFA", "LAMP"' }]),
    );
  });

  it('finds nothing wrong with a shipment, and names a line that says it shipped what no shipment took, and a batch record of a shipment that took other units', async () => {
    const service = serviceOver(table.repository());
    const shipped = await service.invoke(routeEvent('POST /shipments', { body: { shipmentid: 'p1', orderid: 'o1', lines: [{ sku: 'LAMP', qty: 3 }] } }));
    expect(shipped.status).toBe(201);
    expect(await violations()).toEqual([]);

    await set(await lineKey(table, 'o2', 'LAMP'), 'shipped', [{ batchref: 'lamp-1', qty: 1 }]);
    await set(await keyOf(table, (item) => item.kind === 'stock-change' && item.change.reference === 'p1'), 'delta', -2);
    expect((await violations()).map(({ rule, message }) => `${rule}: ${message}`)).toEqual([
      'shipped-as-recorded: line of order "o2" for sku "LAMP" shipped 1 from batch "lamp-1", where its order\'s shipments took 0',
      `shipped-as-recorded: batch "lamp-1" records 2 shipped at ${(shipped.body as { shipped_at: string }).shipped_at} by shipment "p1", which took 3 from it at ${(shipped.body as { shipped_at: string }).shipped_at}`,
      'changes-recorded: batch "lamp-1" of sku "LAMP" has qty 7, and its 2 changes recorded add up to 8',
    ]);
  });

  it("finds nothing wrong with a batch's adjustments, arrival, PATCHes and transfers, and names a batch whose qty changed with no change recorded", async () => {
    const service = serviceOver(table.repository());
    expect((await service.invoke(routeEvent('POST /adjustments', { body: { adjustmentid: 'a1', ref: 'lamp-2', reason: 'found', delta: 2 } }))).status).toBe(201);
    expect((await service.invoke(routeEvent('PATCH /batches/{ref}', { pathParameters: { ref: 'lamp-2' }, body: { qty: 30, eta: null } }))).status).toBe(200);
    expect((await service.invoke(routeEvent('PUT /locations/{id}', { pathParameters: { id: 'annex' }, body: { name: 'Annex', priority: 1, serves: ['*'] } }))).status).toBe(201);
    expect((await service.invoke(routeEvent('POST /transfers', { body: { transferid: 't1', sku: 'LAMP', qty: 4, from: 'default', to: 'annex', eta: '2027-01-01' } }))).status).toBe(201);
    expect(await violations()).toEqual([]);

    const key = await batchKey(table, 'lamp-2');
    const { Item } = await table.documentClient.send(new GetCommand({ TableName: table.tableName, Key: key }));
    await set(key, 'qty', Number(Item?.qty) + 1);
    await set(key, 'available', Number(Item?.available) + 1);
    expect((await violations()).map(({ rule }) => rule)).toEqual(['changes-recorded']);
  });

  it('reports an item that is no batch, batch reference or line', async () => {
    await table.documentClient.send(new PutCommand({ TableName: table.tableName, Item: { pk: 'SKU#LAMP', sk: 'STRAY', qty: 1 } }));
    expect(await violations()).toEqual([
      { rule: 'item-recognized', message: 'item pk "SKU#LAMP" sk "STRAY" is not a batch, piece of a batch, known SKU, SKU at a location, batch reference, line, notice, hold, location, transfer or shipment' },
    ]);
  });

  it('reports a batch left among the batches with stock after its stock ran out', async () => {
    await set(await batchKey(table, 'lamp-2'), 'available', 0);
    expect(await violations()).toEqual(
      expect.arrayContaining([
        {
          rule: 'batch-where-its-stock-says',
          message: 'batch "lamp-2" of sku "LAMP" has available 0 but is stored among the batches with stock',
        },
      ]),
    );
  });

  it('reports a SKU that has batches but is not known, so that allocating it would answer "Invalid sku"', async () => {
    await table.documentClient.send(
      new DeleteCommand({ TableName: table.tableName, Key: await keyOf(table, (item) => item.kind === 'known-sku' && item.sku === 'SOFA') }),
    );
    expect(await violations()).toEqual([{ rule: 'sku-known-with-batches', message: 'sku "SOFA" has batches but no known-SKU item' }]);
  });

  it('finds nothing wrong with a batch at a location the service created, and reports one at a location that does not exist', async () => {
    const service = serviceOver(table.repository());
    await table.repository().saveLocation({ id: 'lyon', name: 'Lyon', priority: 1, serves: ['FR'], active: true });
    expect((await service.addBatch({ ref: 'desk-1', sku: 'DESK', qty: 2, eta: null, location: 'lyon' })).status).toBe(201);
    expect(await violations()).toEqual([]);
    await set(await batchKey(table, 'desk-1'), 'location', 'paris');
    // Moved by hand, it is not in the list of the place it names either.
    expect(await violations()).toEqual(
      expect.arrayContaining([
        { rule: 'batch-at-a-location', message: 'batch "desk-1" of sku "DESK" is at location "paris", which does not exist' },
        { rule: 'sku-listed-where-its-batches-are', message: 'sku "DESK" has batch "desk-1" at "paris" but is not in that location\'s list' },
      ]),
    );
    expect(await violations()).toHaveLength(2);
  });

  describe('of transfers', () => {
    /** Two desks sent from desk-1 at default to lyon: the transfer t1, whose incoming batch is t1. */
    const sendDesks = async () => {
      await table.repository().saveLocation({ id: 'lyon', name: 'Lyon', priority: 1, serves: ['FR'], active: true });
      expect((await serviceOver(table.repository()).addBatch({ ref: 'desk-1', sku: 'DESK', qty: 5, eta: null })).status).toBe(201);
      await createTransfer({ transferid: 't1', sku: 'DESK', qty: 2, from: 'default', to: 'lyon', eta: '2027-03-01' }, table.repository());
    };
    /** A batch gone with its reference, as a cancel removes an incoming batch: only the transfer can miss it. */
    const removeBatch = async (ref: string) => {
      for (const key of [await batchKey(table, ref), await keyOf(table, (item) => item.kind === 'batch-reference' && item.ref === ref)]) {
        await table.documentClient.send(new DeleteCommand({ TableName: table.tableName, Key: key }));
      }
    };

    it('finds nothing wrong with a transfer the service made, nor with one it cancelled', async () => {
      await sendDesks();
      await createTransfer({ transferid: 't2', sku: 'DESK', qty: 1, from: 'default', to: 'lyon', eta: '2027-03-01' }, table.repository());
      await cancelTransfer('t2', table.repository());
      expect(await violations()).toEqual([]);
    });

    it('reports an active transfer whose incoming batch is missing', async () => {
      await sendDesks();
      await removeBatch('t1');
      expect(await violations()).toEqual([
        { rule: 'transfer-accounted', message: 'active transfer "t1" of 2 of sku "DESK" has its incoming batch "t1" at "lyon", but no such batch exists' },
      ]);
    });

    it('reports an active transfer whose incoming batch is at another location than its to', async () => {
      await sendDesks();
      await table.repository().saveLocation({ id: 'nice', name: 'Nice', priority: 2, serves: ['FR'], active: true });
      await set(await batchKey(table, 't1'), 'location', 'nice');
      expect(await violations()).toEqual(
        expect.arrayContaining([
          { rule: 'transfer-accounted', message: 'active transfer "t1" of 2 of sku "DESK" has its incoming batch "t1" at "lyon", but that batch is at "nice"' },
          { rule: 'sku-listed-where-its-batches-are', message: 'sku "DESK" has batch "t1" at "nice" but is not in that location\'s list' },
        ]),
      );
      expect(await violations()).toHaveLength(2);
    });

    it('reports an active transfer whose source batch is missing', async () => {
      await sendDesks();
      await removeBatch('desk-1');
      expect(await violations()).toEqual([
        { rule: 'transfer-accounted', message: 'active transfer "t1" of 2 of sku "DESK" has its source batch "desk-1" at "default", but no such batch exists' },
      ]);
    });

    it('does not report a cancelled transfer, whose incoming batch is gone', async () => {
      await sendDesks();
      await cancelTransfer('t1', table.repository());
      expect(await keyOf(table, (item) => item.kind === 'transfer' && item.transfer.status === 'cancelled')).toBeDefined();
      await removeBatch('desk-1');
      expect((await violations()).filter(({ rule }) => rule === 'transfer-accounted')).toEqual([]);
    });
  });

  describe('of holds', () => {
    /** Two lamps held for ten minutes on lamp-2, the batch with 3 left; answers the hold's expiry. */
    const placeCart = async () => (await placeHold({ holdid: 'cart-1', lines: [{ sku: 'LAMP', qty: 2 }], ttlSeconds: 600 }, table.repository())).hold.expiresAt;
    const holdKey = () => keyOf(table, (item) => item.kind === 'hold' && item.hold.holdid === 'cart-1');

    it('finds nothing wrong with a hold the service placed, judged at any time', async () => {
      const expiresAt = Date.parse(await placeCart());
      expect(await violations()).toEqual([]);
      expect(await checkInvariants(table.documentClient, table.tableName, expiresAt - 1)).toEqual([]);
      expect(await checkInvariants(table.documentClient, table.tableName, expiresAt)).toEqual([]);
    });

    it('reports units still held for a hold that has ended', async () => {
      const expiresAt = await placeCart();
      await set(await holdKey(), 'status', 'released');
      expect(await violations()).toEqual([
        { rule: 'held-for-an-active-hold', message: `batch "lamp-2" of sku "LAMP" holds 2 until ${expiresAt} for hold "cart-1", which is released` },
      ]);
    });

    it("reports units held until another time than their hold's", async () => {
      const expiresAt = await placeCart();
      await set(await holdKey(), 'heldUntil', '2099-01-01T00:00:00.000Z');
      expect(await violations()).toEqual([
        {
          rule: 'held-for-an-active-hold',
          message: `batch "lamp-2" of sku "LAMP" holds 2 until ${expiresAt} for hold "cart-1", which lasts until 2099-01-01T00:00:00.000Z`,
        },
      ]);
    });

    it('reports an active hold that lost its units before it expired, and not once it has expired', async () => {
      const expiresAt = await placeCart();
      // Its units given back as lazy expiry gives them: the record gone, the batch's count and stock in step.
      await table.documentClient.send(
        new TransactWriteCommand({
          TransactItems: [
            { Delete: { TableName: table.tableName, Key: heldUnitsKey('LAMP', 'lamp-2', { holdid: 'cart-1', expiresAt }, { qty: 2 }) } },
            {
              Update: {
                TableName: table.tableName,
                Key: await batchKey(table, 'lamp-2'),
                UpdateExpression: 'SET available = available + :qty, heldUnits = heldUnits - :qty',
                ExpressionAttributeValues: { ':qty': 2 },
              },
            },
          ],
        }),
      );
      expect(await checkInvariants(table.documentClient, table.tableName, Date.parse(expiresAt) - 1)).toEqual([
        {
          rule: 'active-hold-holds-its-units',
          message: `hold "cart-1", active until ${expiresAt}, holds 2 of sku "LAMP" on batch "lamp-2", whose records hold 0 for it`,
        },
      ]);
      // Expired, its units are anyone's: a request that needed them may have given them back.
      expect(await checkInvariants(table.documentClient, table.tableName, Date.parse(expiresAt))).toEqual([]);
    });
  });
});

describe('npm run check', () => {
  const run = promisify(execFile);
  let table: TestTable;
  beforeAll(async () => {
    table = await createTestTable();
    await stockTheShop(table);
  });
  afterAll(() => table?.drop());

  const check = async (...args: string[]) => {
    try {
      const { stdout } = await run('npm', ['run', '--silent', 'check', '--', ...args]);
      return { code: 0, stdout };
    } catch (error) {
      const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
      return { code, stdout: stdout + stderr };
    }
  };

  it('exits 0 when every invariant holds, and 1 naming each violation when one is broken', async () => {
    const sound = await check('--endpoint', table.endpoint, '--table', table.tableName);
    expect(sound).toMatchObject({ code: 0, stdout: expect.stringContaining('every invariant holds') });

    await table.documentClient.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: await batchKey(table, 'lamp-1'),
        UpdateExpression: 'SET available = :available',
        ExpressionAttributeValues: { ':available': -1 },
      }),
    );
    const broken = await check('--endpoint', table.endpoint, '--table', table.tableName);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain('[stock-never-negative] batch "lamp-1" of sku "LAMP" has available -1');
    expect(broken.stdout).toContain('[stock-matches-lines] batch "lamp-1"');
  }, 60_000);

  it('reads the table of a running npm start when it is told of none, and says what to pass when none runs', async () => {
    // In a folder of its own, as npm start's own folder: the endpoint a server there records, and no other in sight.
    const folder = mkdtempSync(join(tmpdir(), 'check-'));
    const { DYNAMODB_ENDPOINT: _endpoint, AWS_REGION: _region, AWS_DEFAULT_REGION: _defaultRegion, ...environment } = process.env;
    const bare = async () => {
      try {
        const { stdout } = await run(process.execPath, ['--import', pathToFileURL(resolve('node_modules/tsx/dist/loader.mjs')).href, resolve('tools/check.ts'), '--table', table.tableName], { cwd: folder, env: environment });
        return { code: 0, stdout };
      } catch (error) {
        const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
        return { code, stdout: stdout + stderr };
      }
    };
    expect(await bare()).toMatchObject({ code: 2, stdout: expect.stringContaining('No table to read: start npm start') });
    mkdirSync(join(folder, '.local'));
    writeFileSync(join(folder, STORE_ENDPOINT_FILE), `${table.endpoint}\n`);
    // Read, whatever it found: the test above broke the table on purpose.
    expect((await bare()).stdout).toContain(`table ${table.tableName} at ${table.endpoint}: `);
  }, 60_000);

  it('exits 2 when it cannot read the table', async () => {
    const unreachable = await check('--endpoint', `http://127.0.0.1:${await freePort()}`, '--table', 'allocations');
    expect(unreachable).toMatchObject({ code: 2, stdout: expect.stringContaining('Could not read allocations') });
  }, 60_000);
});
