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
    // The spread's transaction is held while the hold reads; once none of its reads is in flight and
    // what their answers set going has run (two turns of the event loop), the hold has sent its take,
    // or waits for the spread: then the spread goes.
    let readsInFlight = 0;
    const whenTheHoldIsIdle = () =>
      setImmediate(() =>
        setImmediate(() => {
          if (readsInFlight === 0) letSpreadGo();
        }),
      );
    const sender: DocumentSender = {
      send: (async (command: object, options?: object) => {
        const items = command instanceof TransactWriteCommand ? (command.input.TransactItems ?? []) : [];
        if (items.some(({ Put }) => Put?.Item?.type === 'BatchPiece')) {
          sent.push('spread');
          spreadSent();
          await spreadHeld;
          sent.push('spread made');
          return table.documentClient.send(command as never, options);
        }
        if (items.some(({ Put }) => Put?.Item?.type === 'Hold')) sent.push('hold');
        if (command instanceof TransactWriteCommand) return table.documentClient.send(command as never, options);
        readsInFlight++;
        try {
          return await table.documentClient.send(command as never, options);
        } finally {
          readsInFlight--;
          if (readsInFlight === 0) whenTheHoldIsIdle();
        }
      }) as DocumentSender['send'],
    };
    const repository = table.repository({ sender });

    const spread = repository.spreadBatch(ref, sku);
    await spreadStarted;
    const { hold } = await placeHold({ holdid: uniqueId('cart'), lines: [{ sku, qty: 1 }], ttlSeconds: 900 }, repository);
    await spread;

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
