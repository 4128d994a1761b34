import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extendHold, placeHold } from '../../domain/hold-services';
import { putLocation } from '../../domain/location-services';
import { addBatch, allocate } from '../../domain/services';
import { allocateOrder } from '../../domain/order-services';
import type { Batch } from '../../domain/model';
import { batchWithStockKey } from '../../functions/store/batches';
import { BOUND_OF_OLDER_HOLDS } from '../../functions/store/held-bounds';
import type { DocumentSender } from '../../functions/store/store-calls';
import { GATHER_AFTER_MS } from '../../functions/store/spread-batches';
import { checkInvariants } from '../../tools/invariants';
import { type TestTable, createTestTable, repositoryAt, uniqueId } from '../support/dynamodb';

/*
 * The bound each batch keeps on its holds' expiry (functions/store/held-bounds.ts, "Bounds of held
 * units"; docs/architecture.md, "Holds"), against DynamoDB Local: the writes that add holds keep it,
 * lazy expiry raises it, and a request reads the holds of a batch only once it has come. The clock
 * is the test's.
 */

const NOW = Date.parse('2026-11-29T10:00:00.000Z');
const at = (seconds: number) => new Date(NOW + seconds * 1_000).toISOString();

let table: TestTable;
beforeAll(async () => {
  table = await createTestTable();
});
afterAll(() => table.drop());

const itemOf = async (sku: string, ref: string) =>
  (await table.documentClient.send(new GetCommand({ TableName: table.tableName, Key: batchWithStockKey(sku, ref), ConsistentRead: true }))).Item;

const newBatch = async (qty: number) => {
  const [sku, ref] = [uniqueId('sku'), uniqueId('batch')];
  await addBatch({ ref, sku, qty, eta: null }, table.repository());
  return { sku, ref };
};

const hold = (sku: string, qty: number, ttlSeconds: number, now = NOW) =>
  placeHold({ holdid: uniqueId('cart'), lines: [{ sku, qty }], ttlSeconds }, repositoryAt(table, now).repository);

const violationsOn = async (ref: string) => (await checkInvariants(table.documentClient, table.tableName)).filter(({ message }) => message.includes(ref));

describe("a batch's bound on its holds' expiry", () => {
  it('is the earliest expiry of the holds taken from it, to the second', async () => {
    const { sku, ref } = await newBatch(10);

    await hold(sku, 1, 900.5);
    expect(await itemOf(sku, ref)).toMatchObject({ heldFrom: at(900), heldTakes: 1 });
    await hold(sku, 1, 60);
    expect(await itemOf(sku, ref)).toMatchObject({ heldFrom: at(60), heldTakes: 2 });
    await hold(sku, 1, 3_600);
    expect(await itemOf(sku, ref)).toMatchObject({ heldFrom: at(60), heldTakes: 3 });
    expect(await violationsOn(ref)).toEqual([]);
  });

  it('falls to the new expiry of a hold extended to end sooner, and stays for one extended to end later', async () => {
    const { sku, ref } = await newBatch(10);
    const { hold: placed } = await hold(sku, 2, 900);

    await extendHold(placed.holdid, 1_800, repositoryAt(table, NOW).repository);
    expect(await itemOf(sku, ref)).toMatchObject({ heldFrom: at(900) });
    await extendHold(placed.holdid, 30, repositoryAt(table, NOW).repository);
    expect(await itemOf(sku, ref)).toMatchObject({ heldFrom: at(30), heldTakes: 2 });
    expect(await violationsOn(ref)).toEqual([]);
  });

  it('is raised by lazy expiry to the earliest hold left once it gives back the expired ones', async () => {
    const { sku, ref } = await newBatch(3);
    await hold(sku, 1, 60);
    await hold(sku, 1, 900);

    const { repository } = repositoryAt(table, NOW + 61_000);
    expect(await allocate({ orderid: uniqueId('order'), sku, qty: 2 }, repository)).toMatchObject({ batchref: ref });

    expect(await itemOf(sku, ref)).toMatchObject({ heldFrom: at(900), heldUnits: 1, available: 0 });
    expect(await violationsOn(ref)).toEqual([]);
  });

  it('stays where a hold placed between lazy expiry\'s read of the records and its raise kept it', async () => {
    const { sku, ref } = await newBatch(3);
    await hold(sku, 1, 60);
    await hold(sku, 1, 900);
    const afterFirst = NOW + 61_000;
    const read = await table.repository({ clock: () => afterFirst }).batch(ref, sku);
    // The give-back is the write after the read of the records: a cart of 30 s comes first.
    let cart: Promise<unknown> | undefined;
    const sender: DocumentSender = {
      send: (async (command: object, options?: object) => {
        if (command instanceof TransactWriteCommand && !cart) {
          cart = hold(sku, 1, 30, afterFirst);
          await cart;
        }
        return table.documentClient.send(command as never, options);
      }) as DocumentSender['send'],
    };

    await table.repository({ sender, clock: () => afterFirst }).freeExpiredHolds(read as Batch, afterFirst, 1);

    expect(await itemOf(sku, ref)).toMatchObject({ heldFrom: at(60), heldUnits: 2 });
    expect(await violationsOn(ref)).toEqual([]);
  });

  it('leaves a give-back standing when the store refuses its raise', async () => {
    const { sku, ref } = await newBatch(2);
    await hold(sku, 1, 60);
    await hold(sku, 1, 900);
    const throttled: DocumentSender = {
      send: (async (command: object, options?: object) => {
        if (command instanceof UpdateCommand) throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $retryable: { throttling: true } });
        return table.documentClient.send(command as never, options);
      }) as DocumentSender['send'],
    };

    const answer = await allocate({ orderid: uniqueId('order'), sku, qty: 1 }, table.repository({ sender: throttled, clock: () => NOW + 61_000 }));

    expect(answer).toMatchObject({ batchref: ref });
    expect(await itemOf(sku, ref)).toMatchObject({ heldFrom: at(60), heldUnits: 1, available: 0 });
    expect(await violationsOn(ref)).toEqual([]);
  });

  it('is the least there is on a batch whose holds were placed before bounds, when a hold is placed on it or extended to end sooner', async () => {
    const { sku, ref } = await newBatch(10);
    const { hold: older } = await hold(sku, 1, 100);
    const { hold: later } = await hold(sku, 1, 3_600);
    // As a version before bounds left the batch: its holds counted, no bound kept.
    await table.documentClient.send(new UpdateCommand({ TableName: table.tableName, Key: batchWithStockKey(sku, ref), UpdateExpression: 'REMOVE heldFrom, heldTakes' }));

    await extendHold(later.holdid, 200, repositoryAt(table, NOW).repository);
    expect((await itemOf(sku, ref))?.heldFrom).toBe(BOUND_OF_OLDER_HOLDS);

    await table.documentClient.send(new UpdateCommand({ TableName: table.tableName, Key: batchWithStockKey(sku, ref), UpdateExpression: 'REMOVE heldFrom, heldTakes' }));
    await hold(sku, 1, 900);
    expect((await itemOf(sku, ref))?.heldFrom).toBe(BOUND_OF_OLDER_HOLDS);
    expect(older.expiresAt < at(200)).toBe(true);
    expect(await violationsOn(ref)).toEqual([]);
  });

  it("goes to the batch item from its pieces when a spread is gathered, as the lowest of theirs and the item's", async () => {
    const { sku, ref } = await newBatch(12);
    await table.repository({ clock: () => NOW }).spreadBatch(ref, sku);
    // The 8 units of the item's own are held until later; a unit of a piece, sooner.
    await hold(sku, 8, 3_600);
    await hold(sku, 1, 120);
    expect((await itemOf(sku, ref))?.heldFrom).toBe(at(3_600));

    await table.repository({ clock: () => NOW + GATHER_AFTER_MS + 1_000 }).spreadBatch(ref, sku);

    expect(await itemOf(sku, ref)).toMatchObject({ heldFrom: at(120) });
    expect(await violationsOn(ref)).toEqual([]);
  });
});

describe('the invariant check of the bound', () => {
  it('names a hold whose units expire before the bound of their batch', async () => {
    const { sku, ref } = await newBatch(10);
    const { hold: placed } = await hold(sku, 1, 60);
    const stored = await itemOf(sku, ref);
    await table.documentClient.send(new PutCommand({ TableName: table.tableName, Item: { ...stored, heldFrom: at(120) } }));

    expect(await violationsOn(ref)).toEqual([
      {
        rule: 'held-units-bounded',
        message: `batch "${ref}" of sku "${sku}" holds units until ${placed.expiresAt} for hold "${placed.holdid}", before its bound ${at(120)}`,
      },
    ]);
  });
});

describe('lazy expiry, bounded by the batches whose bound has come', () => {
  it('frees an expired cart on a batch the line alone would pass over, when that lets the whole order come from one place', async () => {
    const repository = table.repository({ clock: () => NOW });
    const [first, second] = [uniqueId('place'), uniqueId('place')];
    await putLocation({ id: first, name: first, priority: 1, serves: ['*'] }, repository);
    await putLocation({ id: second, name: second, priority: 0, serves: ['*'] }, repository);
    const [lamp, shade] = [uniqueId('lamp'), uniqueId('shade')];
    // Lamps only at the first place; shades at both, the second place's first by its priority, and the first's held by a cart.
    await addBatch({ ref: uniqueId('lamps'), sku: lamp, qty: 1, eta: null, location: first }, repository);
    await addBatch({ ref: uniqueId('shades'), sku: shade, qty: 1, eta: null, location: first }, repository);
    await addBatch({ ref: uniqueId('shades'), sku: shade, qty: 1, eta: null, location: second }, repository);
    await placeHold({ holdid: uniqueId('cart'), lines: [{ sku: shade, qty: 1 }], ttlSeconds: 60 }, repository, { location: first });

    const outcome = await allocateOrder({ orderid: uniqueId('order'), lines: [{ sku: lamp, qty: 1 }, { sku: shade, qty: 1 }] }, repositoryAt(table, NOW + 61_000).repository);

    expect(outcome.lines.map(({ location }) => location)).toEqual([first, first]);
  });

  it('frees a cart on a batch the line would not pick, when that lets another line of its order come off a later shipment', async () => {
    const repository = table.repository({ clock: () => NOW });
    const [first, second] = [uniqueId('place'), uniqueId('place')];
    await putLocation({ id: first, name: first, priority: 0, serves: ['*'] }, repository);
    await putLocation({ id: second, name: second, priority: 1, serves: ['*'] }, repository);
    // Tables only on shipments, the earlier one to the second place; chairs on the shelf at both, the second place's held by a cart.
    const [table_, chair] = [uniqueId('a-table'), uniqueId('b-chair')];
    await addBatch({ ref: uniqueId('tables'), sku: table_, qty: 1, eta: '2027-02-01', location: first }, repository);
    const early = uniqueId('tables');
    await addBatch({ ref: early, sku: table_, qty: 1, eta: '2027-01-01', location: second }, repository);
    await addBatch({ ref: uniqueId('chairs'), sku: chair, qty: 1, eta: null, location: first }, repository);
    await addBatch({ ref: uniqueId('chairs'), sku: chair, qty: 1, eta: null, location: second }, repository);
    await placeHold({ holdid: uniqueId('cart'), lines: [{ sku: chair, qty: 1 }], ttlSeconds: 60 }, repository, { location: second });

    const outcome = await allocateOrder({ orderid: uniqueId('order'), lines: [{ sku: table_, qty: 1 }, { sku: chair, qty: 1 }] }, repositoryAt(table, NOW + 61_000).repository);

    // One place either way: the second, whose table comes a month sooner, once the cart there is given back.
    expect(outcome.lines.map(({ location }) => location)).toEqual([second, second]);
    expect(outcome.lines.find(({ sku }) => sku === table_)?.batchref).toBe(early);
  });

  it('reads no holds for an order that comes from one place, each line on the batch the rule prefers', async () => {
    const repository = table.repository({ clock: () => NOW });
    const [preferred, other] = [uniqueId('place'), uniqueId('place')];
    await putLocation({ id: preferred, name: preferred, priority: 0, serves: ['*'] }, repository);
    await putLocation({ id: other, name: other, priority: 1, serves: ['*'] }, repository);
    const lamp = uniqueId('lamp');
    await addBatch({ ref: uniqueId('lamps'), sku: lamp, qty: 1, eta: null, location: preferred }, repository);
    await addBatch({ ref: uniqueId('lamps'), sku: lamp, qty: 1, eta: null, location: other }, repository);
    await placeHold({ holdid: uniqueId('cart'), lines: [{ sku: lamp, qty: 1 }], ttlSeconds: 60 }, repository, { location: other });

    const { repository: later, calls } = repositoryAt(table, NOW + 61_000);
    const outcome = await allocateOrder({ orderid: uniqueId('order'), lines: [{ sku: lamp, qty: 1 }] }, later);

    expect(outcome.lines.map(({ location }) => location)).toEqual([preferred]);
    // The stock and the locations, and the take.
    expect(calls).toEqual(['Query', 'Query', 'TransactWrite']);
  });
});
