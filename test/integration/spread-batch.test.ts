import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { placeHold } from '../../domain/hold-services';
import type { DocumentSender } from '../../functions/store/store-calls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchWithStockKey } from '../../functions/store/batches';
import { GATHER_AFTER_MS } from '../../functions/store/spread-batches';
import { findViolations, readInventory } from '../../tools/invariants';
import { type TestTable, createTestTable, uniqueId } from '../support/dynamodb';

// The spread the simulator sends where a scenario needs one (docs/reliability.md, "The simulator"),
// made by the adapter's own spread on its read of the SKU's stock, against DynamoDB Local.

describe('a batch spread on request, as takes that meet on it would spread it', () => {
  let table: TestTable;
  beforeAll(async () => {
    table = await createTestTable();
  });
  afterAll(() => table.drop());

  const batchItem = async (sku: string, ref: string) =>
    (await table.documentClient.send(new GetCommand({ TableName: table.tableName, Key: batchWithStockKey(sku, ref), ConsistentRead: true }))).Item;

  const addBatch = async (qty: number) => {
    const [sku, ref] = [uniqueId('sku'), uniqueId('batch')];
    await table.repository().addBatch({ ref, sku, qty, available: qty, eta: null });
    return { sku, ref };
  };

  it('keeps eight units on the batch item and spreads the rest into pieces of a unit, its stock unchanged', async () => {
    const { sku, ref } = await addBatch(11);

    await table.repository().spreadBatch(ref, sku);

    expect(await batchItem(sku, ref)).toMatchObject({ pieces: 3, available: 8 });
    expect((await table.repository().batch(ref, sku))?.available).toBe(11);
    expect(findViolations(await readInventory(table.documentClient, table.tableName))).toEqual([]);
  });

  it('leaves a batch with too few units to spread, and one spread already, as they are', async () => {
    const small = await addBatch(9);
    await table.repository().spreadBatch(small.ref, small.sku);
    expect((await batchItem(small.sku, small.ref))?.pieces).toBeUndefined();

    const spread = await addBatch(12);
    await table.repository().spreadBatch(spread.ref, spread.sku);
    const first = await batchItem(spread.sku, spread.ref);
    await table.repository().spreadBatch(spread.ref, spread.sku);
    expect((await batchItem(spread.sku, spread.ref))?.spreadId).toBe(first?.spreadId);
  });

  it('makes a hold placed in the process that is spreading the batch wait for the spread, and take from a piece', async () => {
    const { sku, ref } = await addBatch(100);
    const sent: string[] = [];
    let letSpreadGo: () => void = () => undefined;
    const spreadHeld = new Promise<void>((resolve) => {
      letSpreadGo = resolve;
    });
    let spreadSent: () => void = () => undefined;
    const spreadStarted = new Promise<void>((resolve) => {
      spreadSent = resolve;
    });
    let holdSent: () => void = () => undefined;
    const holdStarted = new Promise<void>((resolve) => {
      holdSent = resolve;
    });
    // The spread's transaction is held until the hold's take is sent, or, when the hold waits for the spread as it should, a while.
    const sender: DocumentSender = {
      send: (async (command: object, options?: object) => {
        const items = command instanceof TransactWriteCommand ? (command.input.TransactItems ?? []) : [];
        if (items.some(({ Put }) => Put?.Item?.type === 'BatchPiece')) {
          sent.push('spread');
          spreadSent();
          await spreadHeld;
          sent.push('spread made');
        } else if (items.some(({ Put }) => Put?.Item?.type === 'Hold')) {
          sent.push('hold');
          holdSent();
        }
        return table.documentClient.send(command as never, options);
      }) as DocumentSender['send'],
    };
    const repository = table.repository({ sender });

    const spread = repository.spreadBatch(ref, sku);
    await spreadStarted;
    const placing = placeHold({ holdid: uniqueId('cart'), lines: [{ sku, qty: 1 }], ttlSeconds: 900 }, repository);
    await Promise.race([holdStarted, new Promise((resolve) => setTimeout(resolve, 1_000))]);
    letSpreadGo();
    await spread;
    const { hold } = await placing;

    expect(sent).toEqual(['spread', 'spread made', 'hold']);
    expect((await repository.hold(hold.holdid))?.lines[0]?.sources?.[0]?.piece).toBeDefined();
    expect(findViolations(await readInventory(table.documentClient, table.tableName))).toEqual([]);
  });

  it('gathers a cooled spread on its read, then spreads the batch anew', async () => {
    const { sku, ref } = await addBatch(12);
    const now = Date.now();
    await table.repository({ clock: () => now }).spreadBatch(ref, sku);
    const first = await batchItem(sku, ref);

    await table.repository({ clock: () => now + GATHER_AFTER_MS + 1_000 }).spreadBatch(ref, sku);

    const again = await batchItem(sku, ref);
    expect(again).toMatchObject({ pieces: 4, available: 8 });
    expect(again?.spreadId).not.toBe(first?.spreadId);
    expect(findViolations(await readInventory(table.documentClient, table.tableName))).toEqual([]);
  });
});
