import { randomUUID } from 'node:crypto';
import { QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutOfStock } from '../../domain/errors';
import { confirmHold, placeHold, releaseHold } from '../../domain/hold-services';
import { allocate, batchStatus, cancelAllocation } from '../../domain/services';
import { allocateOrder } from '../../domain/order-services';
import { MAX_TRANSACTION_ITEMS, type DocumentSender, StoreCalls, defaultConflictRetryPolicy } from '../../functions/store/store-calls';
import { gatherWrites, pieceKey, spreadWrites } from '../../functions/store/pieces';
import { batchWithStockKey } from '../../functions/store/batches';
import { type StoredHeldUnits, expiredUnitsGivenBackWrites, sendHoldWrites } from '../../functions/store/held-units';
import { parseStoredItem } from '../../functions/store/items';
import { KnownPieces, PIECES_PER_SPREAD } from '../../functions/store/spread-batches';
import { systemWorld } from '../../functions/store/world';
import { findViolations, readInventory } from '../../tools/invariants';
import { scanItems } from '../reliability/support/table-contents';
import { type TestTable, createTestTable, repositoryAt, uniqueId } from '../support/dynamodb';

// A spread batch (docs/capacity.md, "A hot SKU") met by writes that read it at another moment: each
// interleaving is set up step by step, so none depends on timing.

describe('a spread batch and the writes that read it at another moment', () => {
  let table: TestTable;
  beforeAll(async () => {
    table = await createTestTable();
  });
  afterAll(() => table.drop());

  const expectInvariantsKept = async () => expect(findViolations(await readInventory(table.documentClient, table.tableName))).toEqual([]);

  /** Spreads the batch as an allocation that keeps meeting others would: all but 8 of its available units over 64 pieces. */
  const spread = async (ref: string) => {
    const batch = await table.repository().batch(ref);
    if (!batch) throw new Error(`batch ${ref} was not read`);
    const items = spreadWrites(table.tableName, batch, batch.available - 8, PIECES_PER_SPREAD, randomUUID(), new Date().toISOString());
    await table.documentClient.send(new TransactWriteCommand({ TransactItems: items }));
  };

  it('never moves a batch that was spread after it was read: its pieces stay with it (no units stranded)', async () => {
    const sku = uniqueId('sku');
    const ref = uniqueId('batch');
    const repository = table.repository();
    await repository.addBatch({ ref, sku, qty: 110, available: 110, eta: null });
    const big = { orderid: uniqueId('big'), sku, qty: 100 };
    await allocate(big, repository);
    await allocate({ orderid: uniqueId('order'), sku, qty: 7 }, repository);
    // A take reads the batch whole, 3 left: a line of 3 moves it out of the stock range.
    const readWhole = await repository.batch(ref);
    expect(readWhole).toMatchObject({ available: 3 });
    expect(readWhole?.pieces).toBeUndefined();

    // Meanwhile a cancel gives 100 back, an allocation spreads the batch (8 of its own units left),
    // and a take of 5 from its own units brings them back to 3, as read.
    await cancelAllocation(big.orderid, sku, repository);
    await spread(ref);
    await allocate({ orderid: uniqueId('order'), sku, qty: 5 }, table.repository());

    const late = await repository.saveAllocation({ orderid: uniqueId('late'), sku, qty: 3, batchref: ref }, readWhole!);

    expect(late.outcome).not.toBe('saved');
    expect((await batchStatus(ref, repository)).available).toBe(3 + 100 - 5);
    await expectInvariantsKept();
  });

  it(`allocates an order whose line on a spread batch takes many small pieces, within ${MAX_TRANSACTION_ITEMS} items a transaction`, async () => {
    const hot = uniqueId('hot');
    const ref = uniqueId('batch');
    const repository = table.repository();
    // 100 units: 8 of the batch's own, 92 in 64 pieces of 1 or 2, as near a sale's end.
    await repository.addBatch({ ref, sku: hot, qty: 100, available: 100, eta: null });
    await spread(ref);
    const others = Array.from({ length: 24 }, () => ({ sku: uniqueId('sku'), qty: 1 }));
    for (const { sku } of others) await repository.addBatch({ ref: uniqueId('batch'), sku, qty: 10, available: 10, eta: null });

    // 90 units of the hot SKU: its own 8 and 54 pieces, with the other 24 lines 2 items each.
    const orderid = uniqueId('order');
    const outcome = await allocateOrder({ orderid, lines: [{ sku: hot, qty: 90 }, ...others] }, table.repository());

    expect(outcome.newLines).toBe(25);
    expect(outcome.lines.find(({ sku }) => sku === hot)).toMatchObject({ batchref: ref, qty: 90 });
    expect((await batchStatus(ref, repository)).available).toBe(10);
    await expectInvariantsKept();
  });

  it('allocates such an order in a process that remembers the pieces as they were before other processes took from them', async () => {
    const hot = uniqueId('hot');
    const ref = uniqueId('batch');
    // 72 units: 8 of the batch's own, 64 pieces of 1.
    await table.repository().addBatch({ ref, sku: hot, qty: 72, available: 72, eta: null });
    await spread(ref);
    const instance = table.repository();
    await allocate({ orderid: uniqueId('first'), sku: hot, qty: 1 }, instance);
    // Another process takes 10 of the pieces' units: what the first remembers of them is past.
    for (let take = 0; take < 10; take++) await allocate({ orderid: uniqueId('other'), sku: hot, qty: 1 }, table.repository());
    const others = Array.from({ length: 24 }, () => ({ sku: uniqueId('sku'), qty: 1 }));
    for (const { sku } of others) await instance.addBatch({ ref: uniqueId('batch'), sku, qty: 10, available: 10, eta: null });

    // 60 units: its own 8 and 52 pieces, with the other 24 lines 2 items each: 102 items.
    const outcome = await allocateOrder({ orderid: uniqueId('order'), lines: [{ sku: hot, qty: 60 }, ...others] }, instance);

    expect(outcome.newLines).toBe(25);
    expect((await batchStatus(ref, table.repository())).available).toBe(72 - 1 - 10 - 60);
    await expectInvariantsKept();
  });

  it('refuses a line only on counts that cannot be too low: units given back to a spread batch between the reads of its item and its pieces count', async () => {
    const sku = uniqueId('sku');
    const ref = uniqueId('batch');
    const repository = table.repository();
    await repository.addBatch({ ref, sku, qty: 200, available: 200, eta: null });
    const big = { orderid: uniqueId('big'), sku, qty: 100 };
    await allocate(big, repository);
    await spread(ref);
    // 100 available: 8 of its own, 92 in pieces. A request reads the item; before it reads the pieces,
    // a cancel gives 100 back to the item: 200 available at every moment after.
    let cancelled = false;
    const sender: DocumentSender = {
      send: (async (command: { input: { KeyConditionExpression?: string; ExpressionAttributeValues?: Record<string, unknown> } }, options?: object) => {
        const answer = await table.documentClient.send(command as never, options);
        const readsTheItem = command instanceof QueryCommand && command.input.ExpressionAttributeValues?.[':partition'] === `SKU#${sku}`;
        if (readsTheItem && !cancelled) {
          cancelled = true;
          await cancelAllocation(big.orderid, sku, table.repository());
        }
        return answer;
      }) as unknown as DocumentSender['send'],
    };

    const answer = await allocate({ orderid: uniqueId('order'), sku, qty: 150 }, table.repository({ sender }));

    expect(cancelled).toBe(true);
    expect(answer).toMatchObject({ batchref: ref });
    expect((await batchStatus(ref, repository)).available).toBe(50);
    await expectInvariantsKept();
  });

  it('refuses a line only on a settled read: units a hold ended gives back to a piece between the reads of the pieces and the item count', async () => {
    const sku = uniqueId('sku');
    const ref = uniqueId('batch');
    const repository = table.repository();
    await repository.addBatch({ ref, sku, qty: 100, available: 100, eta: null });
    await spread(ref);
    const { hold } = await placeHold({ holdid: uniqueId('cart'), lines: [{ sku, qty: 30 }], ttlSeconds: 600 }, repository);
    // 70 available. A request reads the pieces, then the item; in between, at its second read (the
    // settled one its refusal would rest on), the hold is released, its 30 units back on a piece it
    // has read: 100 available at every moment after.
    let reads = 0;
    let released = false;
    let piecesRead = false;
    const sender: DocumentSender = {
      send: (async (command: { input: { ExpressionAttributeValues?: Record<string, unknown> } }, options?: object) => {
        const values = command instanceof QueryCommand ? (command.input.ExpressionAttributeValues ?? {}) : {};
        if (values[':prefix'] === 'PIECE#') piecesRead = true;
        if (values[':partition'] === `SKU#${sku}` && values[':prefix'] === 'STOCK' && piecesRead) {
          piecesRead = false;
          if (++reads === 2) {
            released = true;
            await releaseHold(hold.holdid, table.repository());
          }
        }
        return table.documentClient.send(command as never, options);
      }) as unknown as DocumentSender['send'],
    };

    const answer = await allocate({ orderid: uniqueId('order'), sku, qty: 90 }, table.repository({ sender }));

    expect(released).toBe(true);
    expect(answer).toMatchObject({ batchref: ref });
    expect((await batchStatus(ref, repository)).available).toBe(10);
    await expectInvariantsKept();
  });

  it('answers a settled read under a steady stream of releases: units given back while it reads count, and never a refusal on too few', async () => {
    /** A spread batch of 100 (8 of its own, 92 in pieces of 1 or 2) with 6 holds of 1, each from a piece: 94 available. */
    const spreadWithHolds = async () => {
      const sku = uniqueId('sku');
      const ref = uniqueId('batch');
      const repository = table.repository();
      await repository.addBatch({ ref, sku, qty: 100, available: 100, eta: null });
      await spread(ref);
      const holds: string[] = [];
      for (let hold = 0; hold < 6; hold++) holds.push((await placeHold({ holdid: uniqueId('cart'), lines: [{ sku, qty: 1 }], ttlSeconds: 600 }, repository)).hold.holdid);
      expect(await batchStatus(ref, repository)).toMatchObject({ available: 94, held: 6 });
      return { sku, ref, holds };
    };
    /**
     * A request's store that, at every read of the items that follows a read of the pieces (every
     * second Query of the stock range), first releases one of the holds: its unit goes back to a
     * piece already read. A settled read that waited for two reads of the pieces with no give-back
     * between them never gets one.
     */
    const releasingWhileRead = (sku: string, holds: string[]) => {
      let stockReads = 0;
      const released: string[] = [];
      const sender: DocumentSender = {
        send: (async (command: { input: { ExpressionAttributeValues?: Record<string, unknown> } }, options?: object) => {
          const values = command instanceof QueryCommand ? (command.input.ExpressionAttributeValues ?? {}) : {};
          const next = holds[released.length];
          if (values[':partition'] === `SKU#${sku}` && values[':prefix'] === 'STOCK' && ++stockReads % 2 === 0 && next) {
            await releaseHold(next, table.repository());
            released.push(next);
          }
          return table.documentClient.send(command as never, options);
        }) as unknown as DocumentSender['send'],
      };
      return { repository: table.repository({ sender }), released };
    };

    // 95 of 94: the first read misses the unit released while it reads, the settled one counts the one released between its reads.
    const taken = await spreadWithHolds();
    const taking = releasingWhileRead(taken.sku, taken.holds);
    expect(await allocate({ orderid: uniqueId('order'), sku: taken.sku, qty: 95 }, taking.repository)).toMatchObject({ batchref: taken.ref });
    expect(taking.released).toHaveLength(2);
    expect(await batchStatus(taken.ref, table.repository())).toMatchObject({ available: 100 - 4 - 95, held: 4 });

    // More than the batch has at any moment: refused, not answered 503 for want of a quiet moment.
    const refused = await spreadWithHolds();
    const refusing = releasingWhileRead(refused.sku, refused.holds);
    await expect(allocate({ orderid: uniqueId('order'), sku: refused.sku, qty: 101 }, refusing.repository)).rejects.toThrow(OutOfStock);
    expect(await batchStatus(refused.ref, table.repository())).toMatchObject({ available: 100 - 6 + refusing.released.length });
    await expectInvariantsKept();
  });

  it("gives back in one write the units of two spreads of a batch that pick one piece's key: each spread's on its own item, in either order", async () => {
    const anHourAgo = Date.now() - 3_600_000;
    /** Two expired holds of 1 on a batch of 100: one from a piece of a spread since gathered, one from a piece of the spread after it. */
    const holdsOfTwoSpreads = async () => {
      const sku = uniqueId('sku');
      const ref = uniqueId('batch');
      const { repository } = repositoryAt(table, anHourAgo);
      await repository.addBatch({ ref, sku, qty: 100, available: 100, eta: null });
      const holdFromAPiece = async () => (await placeHold({ holdid: uniqueId('cart'), lines: [{ sku, qty: 1 }], ttlSeconds: 60 }, repository)).hold.holdid;
      await spread(ref);
      const old = await holdFromAPiece();
      const spreadOnce = await table.repository().batch(ref);
      await table.documentClient.send(new TransactWriteCommand({ TransactItems: gatherWrites(table.tableName, spreadOnce!) }));
      await spread(ref);
      const current = await holdFromAPiece();
      const records = (await scanItems(table.documentClient, table.tableName)).map(parseStoredItem).flatMap((item) => (item.kind === 'held-units' && item.held.ref === ref ? [item.held] : []));
      const recordOf = (holdid: string) => records.find(({ units }) => units.holdid === holdid)!;
      expect([recordOf(old).source.spreadId, recordOf(current).source.spreadId].every(Boolean)).toBe(true);
      expect(recordOf(old).source.spreadId).not.toBe(recordOf(current).source.spreadId);
      return { ref, old: recordOf(old), current: recordOf(current) };
    };
    /** Both given back in one write whose pick of a piece is 0 for every spread: their counts meet on one key. The size of each transaction sent. */
    const givenBackOnPieceZero = async (records: readonly StoredHeldUnits[]) => {
      const sent: number[] = [];
      const sender: DocumentSender = {
        send: ((command: object, options?: object) => {
          if (command instanceof TransactWriteCommand) sent.push(command.input.TransactItems?.length ?? 0);
          return table.documentClient.send(command as never, options);
        }) as DocumentSender['send'],
      };
      const { cancellation } = await sendHoldWrites(new StoreCalls(sender, defaultConflictRetryPolicy, systemWorld), new KnownPieces(), defaultConflictRetryPolicy, systemWorld, (places) =>
        expiredUnitsGivenBackWrites(table.tableName, records, { gathered: places.gathered, pieceFor: () => 0 }),
      );
      expect(cancellation).toBeUndefined();
      return sent;
    };
    /** The batch item's count of held units, and piece 0's. */
    const counts = async (ref: string) => {
      const items = (await scanItems(table.documentClient, table.tableName)).filter(({ ref: of }) => of === ref);
      return { item: items.find(({ type }) => type === 'Batch')?.heldUnits ?? 0, pieceZero: items.find(({ type, piece }) => type === 'BatchPiece' && piece === 0)?.heldUnits };
    };

    // The current spread's first: the gathered spread's unit goes to the batch item, which has counted it
    // since the gather, rather than onto piece 0 under the current spread's condition.
    const currentFirst = await holdsOfTwoSpreads();
    const before = await counts(currentFirst.ref);
    expect(await givenBackOnPieceZero([currentFirst.current, currentFirst.old])).toEqual([4]);
    expect(await counts(currentFirst.ref)).toEqual({ item: (before.item as number) - 1, pieceZero: (before.pieceZero as number) - 1 });
    // The gathered spread's first: its write on piece 0 fails its condition, and the current one's units,
    // sent to the batch item, fail there too; made again with that spread known gathered, each goes where it is counted.
    const oldFirst = await holdsOfTwoSpreads();
    expect(await givenBackOnPieceZero([oldFirst.old, oldFirst.current])).toEqual([4, 4]);

    for (const { ref } of [currentFirst, oldFirst]) {
      const batch = await table.repository().batch(ref);
      expect(batch?.available).toBe(100);
      expect(batch?.held).toBeUndefined();
    }
    await expectInvariantsKept();
  });

  it("reads a spread batch whose pieces' counts take its item's to none as holding none (written so by the version before)", async () => {
    const sku = uniqueId('sku');
    const ref = uniqueId('batch');
    const repository = table.repository();
    await repository.addBatch({ ref, sku, qty: 100, available: 100, eta: null });
    await spread(ref);
    // A gathered spread's unit counted on the item, and given back on a piece of the current spread.
    await table.documentClient.send(new UpdateCommand({ TableName: table.tableName, Key: batchWithStockKey(sku, ref), UpdateExpression: 'SET heldUnits = :one', ExpressionAttributeValues: { ':one': 1 } }));
    await table.documentClient.send(new UpdateCommand({ TableName: table.tableName, Key: pieceKey(sku, ref, 0), UpdateExpression: 'SET heldUnits = :minusOne', ExpressionAttributeValues: { ':minusOne': -1 } }));

    expect((await repository.batch(ref))?.held).toBeUndefined();
    expect((await repository.stockOf(sku)).batches[0]?.held).toBeUndefined();
    await expectInvariantsKept();
  });

  it('places and confirms a hold whose line no one piece holds: its units from many pieces are one record, and one count to end', async () => {
    const sku = uniqueId('sku');
    const ref = uniqueId('batch');
    const repository = table.repository();
    await repository.addBatch({ ref, sku, qty: 100, available: 100, eta: null });
    await spread(ref);
    const lines = [{ sku, qty: 60 }];

    const { hold } = await placeHold({ holdid: uniqueId('cart'), lines, ttlSeconds: 600 }, repository);
    const stored = await repository.hold(hold.holdid);
    const { lines: confirmed } = await confirmHold(hold.holdid, uniqueId('order'), repository);

    expect(stored?.lines[0]?.sources?.length).toBeLessThanOrEqual(2);
    expect(confirmed).toEqual([expect.objectContaining({ sku, qty: 60, batchref: ref })]);
    const after = await batchStatus(ref, repository);
    expect(after.available).toBe(40);
    expect(after.held).toBeUndefined();
    await expectInvariantsKept();
  });
});
