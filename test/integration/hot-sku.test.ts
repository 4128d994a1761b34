import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailable } from '../../domain/errors';
import { confirmHold, placeHold, releaseHold } from '../../domain/hold-services';
import { changeBatch } from '../../domain/batch-changes';
import { allocate, batchStatus, cancelAllocation, skuStock } from '../../domain/services';
import { allocateOrder } from '../../domain/order-services';
import { GATHER_AFTER_MS, PIECES_PER_SPREAD } from '../../functions/store/spread-batches';
import { batchWithStockKey, exhaustedBatchKey } from '../../functions/store/batches';
import { PIECE_PARTITIONS } from '../../functions/store/pieces';
import type { DocumentSender } from '../../functions/store/store-calls';
import { MAX_LINES_PER_GROUP, TAKES_IN_FLIGHT_PER_BATCH } from '../../functions/store/take-groups';
import { findViolations, readInventory } from '../../tools/invariants';
import { type ModelledTable, createModelledTable } from '../support/conflict-model';
import { uniqueId } from '../support/dynamodb';

// Through the conflict model, writes held 30 ms: enough for 16 allocations at once to meet on a
// batch item, so that it spreads, and short enough for the file to run in seconds. Nothing is timed.

describe('a hot SKU: a batch spread over pieces (docs/capacity.md, "A hot SKU")', () => {
  let table: ModelledTable;
  beforeAll(async () => {
    table = await createModelledTable({ holdMs: 30 });
  });
  afterAll(() => table.drop());

  const repository = (clock?: () => number) => table.repository(clock ? { clock } : {});

  const batchItem = async (sku: string, ref: string) =>
    (await table.documentClient.send(new GetCommand({ TableName: table.tableName, Key: batchWithStockKey(sku, ref), ConsistentRead: true }))).Item;

  const expectInvariantsKept = async () => expect(findViolations(await readInventory(table.documentClient, table.tableName))).toEqual([]);

  /** Allocates 1 unit for each of `count` orders, 16 at once, until the batch's item says it is spread; the orderids allocated. */
  const spreadByAllocating = async (sku: string, ref: string): Promise<string[]> => {
    const orders: string[] = [];
    for (let wave = 0; wave < 20 && !(await batchItem(sku, ref))?.pieces; wave++) {
      const ids = Array.from({ length: 16 }, () => uniqueId('order'));
      const answers = await Promise.allSettled(ids.map((orderid) => allocate({ orderid, sku, qty: 1 }, repository())));
      answers.forEach((answer, index) => {
        if (answer.status === 'fulfilled') orders.push(ids[index] as string);
      });
    }
    expect((await batchItem(sku, ref))?.pieces).toBe(PIECES_PER_SPREAD);
    return orders;
  };

  const addSpreadBatch = async (qty: number, eta: string | null = null, location?: string) => {
    const sku = uniqueId('hot');
    const ref = uniqueId('batch');
    await repository().addBatch({ ref, sku, qty, available: qty, eta, ...(location ? { location } : {}) });
    const orders = await spreadByAllocating(sku, ref);
    return { sku, ref, orders };
  };

  it('spreads a batch that allocations keep meeting on, and takes from its pieces in partitions of their own, one available all the same', async () => {
    const { sku, ref, orders } = await addSpreadBatch(10_000);
    const before = table.model.counters();

    await Promise.all(Array.from({ length: 32 }, (_, index) => allocate({ orderid: `after-${index}-${sku}`, sku, qty: 2 }, repository())));

    const pieceWrites = table.model
      .counters()
      .partitions.filter(({ partitionKey }) => partitionKey.startsWith('PIECES#'))
      .map(({ partitionKey, writeUnits }) => [partitionKey, writeUnits - (before.partitions.find((p) => p.partitionKey === partitionKey)?.writeUnits ?? 0)]);
    expect(pieceWrites.filter(([, units]) => (units as number) > 0).length).toBe(PIECE_PARTITIONS);
    const left = 10_000 - orders.length - 64;
    expect((await batchStatus(ref, repository())).available).toBe(left);
    expect((await skuStock(sku, repository())).inStock).toBe(left);
    await expectInvariantsKept();
  });

  /** Each of these orders was answered a new line on the batch, and stores it there. */
  const expectAllocatedOn = async (ref: string, sku: string, orderids: readonly string[], answers: readonly unknown[]) => {
    expect(answers).toEqual(orderids.map(() => ({ batchref: ref, location: 'default', created: true })));
    const stored = await Promise.all(orderids.map((orderid) => repository().allocationOf(orderid, sku)));
    expect(stored.map((line) => line?.batchref)).toEqual(orderids.map(() => ref));
  };

  /** One process's repository, as a Lambda instance or `npm start` keeps it between requests, and the names of the calls it sends. */
  const processRepository = (clock: () => number = Date.now) => {
    const calls: string[] = [];
    const spreadIds = new Set<unknown>();
    const sender: DocumentSender = {
      send: ((command: { input: { TransactItems?: { Update?: { ExpressionAttributeValues?: Record<string, unknown> } }[] } }, options?: object) => {
        calls.push(command.constructor.name.replace(/Command$/, ''));
        const spreadId = command.input.TransactItems?.[0]?.Update?.ExpressionAttributeValues?.[':spreadId'];
        if (spreadId !== undefined) spreadIds.add(spreadId);
        return table.documentClient.send(command as never, options);
      }) as unknown as DocumentSender['send'],
    };
    return { repository: table.repository({ sender, clock }), calls, spreadIds };
  };

  it('spreads a batch once however many requests of one process meet on it: the others wait for that spread, then take from its pieces, never from a later batch', async () => {
    const sku = uniqueId('hot');
    const ref = uniqueId('batch');
    const { repository: instance, spreadIds } = processRepository();
    await instance.addBatch({ ref, sku, qty: 10_000, available: 10_000, eta: null });
    await instance.addBatch({ ref: uniqueId('shipment'), sku, qty: 10_000, available: 10_000, eta: '2027-01-01' });

    const answers = await Promise.all(Array.from({ length: 32 }, () => allocate({ orderid: uniqueId('order'), sku, qty: 1 }, instance)));

    expect(answers.map(({ batchref }) => batchref)).toEqual(Array(32).fill(ref));
    expect((await batchItem(sku, ref))?.pieces).toBe(PIECES_PER_SPREAD);
    expect(spreadIds.size).toBe(1);
    expect((await batchStatus(ref, repository())).available).toBe(10_000 - 32);
    await expectInvariantsKept();
  });

  it('takes from a spread batch\'s pieces as its process last read them: one Query and one transaction, as for a batch kept whole', async () => {
    const { sku, ref, orders } = await addSpreadBatch(10_000);
    const { repository: instance, calls } = processRepository();
    await allocate({ orderid: uniqueId('first'), sku, qty: 1 }, instance);
    // The first reads every piece, and then the items again: a give-back between the two reads is counted; and the locations, once.
    expect(calls.filter((call) => call === 'Query')).toHaveLength(2 + PIECE_PARTITIONS + 1);

    calls.length = 0;
    await allocate({ orderid: uniqueId('second'), sku, qty: 1 }, instance);
    expect(calls).toEqual(['Query', 'TransactWrite']);
    expect((await batchStatus(ref, repository())).available).toBe(10_000 - orders.length - 2);
    await expectInvariantsKept();
  });

  /**
   * A spread batch of `qty` beside a shipment, and a process that has read its pieces; then another
   * process takes all but `left` of its units, from every piece but a few: what the first remembers is past.
   */
  const rememberedPast = async (qty: number, left: number) => {
    const { sku, ref } = await addSpreadBatch(qty);
    await repository().addBatch({ ref: uniqueId('shipment'), sku, qty: 100, available: 100, eta: '2027-01-01' });
    const { repository: instance } = processRepository();
    await allocate({ orderid: uniqueId('first'), sku, qty: 1 }, instance);
    await allocate({ orderid: uniqueId('big'), sku, qty: (await batchStatus(ref, repository())).available - left }, repository());
    return { sku, ref, instance };
  };

  it('groups the takes of one process that wait for a spread batch: fewer transactions than lines, every line on the batch and its stock exact', async () => {
    const { sku, ref, orders } = await addSpreadBatch(10_000);
    const { repository: instance, calls } = processRepository();
    await allocate({ orderid: uniqueId('first'), sku, qty: 1 }, instance);
    calls.length = 0;

    const orderids = Array.from({ length: 48 }, () => uniqueId('order'));
    const answers = await Promise.all(orderids.map((orderid) => allocate({ orderid, sku, qty: 2 }, instance)));

    expect(calls.filter((call) => call === 'TransactWrite').length).toBeLessThan(48);
    await expectAllocatedOn(ref, sku, orderids, answers);
    expect((await batchStatus(ref, repository())).available).toBe(10_000 - orders.length - 1 - 96);
    await expectInvariantsKept();
  });

  it('sends each take of a group that met a conflict on its own, never to a later batch: every line stored once, the stock exact', async () => {
    const { sku, ref, orders } = await addSpreadBatch(2_000);
    await repository().addBatch({ ref: uniqueId('shipment'), sku, qty: 1_000, available: 1_000, eta: '2027-01-01' });
    // As DynamoDB answers a transaction that meets another on an item: its first group is cancelled whole.
    let groupsSent = 0;
    const sender: DocumentSender = {
      send: ((command: { input: { TransactItems?: { Put?: { Item?: { type?: string } } }[] } }, options?: object) => {
        const items = command.input.TransactItems ?? [];
        if (items.filter(({ Put }) => Put?.Item?.type === 'Line').length > 1 && groupsSent++ === 0) {
          return Promise.reject(
            new TransactionCanceledException({
              message: 'Transaction cancelled',
              $metadata: {},
              CancellationReasons: items.map(({ Put }) => ({ Code: Put ? 'None' : 'TransactionConflict' })),
            }),
          );
        }
        return table.documentClient.send(command as never, options);
      }) as unknown as DocumentSender['send'],
    };
    const instance = table.repository({ sender });
    await allocate({ orderid: uniqueId('first'), sku, qty: 1 }, instance);

    const orderids = Array.from({ length: 32 }, () => uniqueId('order'));
    const answers = await Promise.all(orderids.map((orderid) => allocate({ orderid, sku, qty: 1 }, instance)));

    expect(groupsSent).toBeGreaterThan(0);
    await expectAllocatedOn(ref, sku, orderids, answers);
    expect((await batchStatus(ref, repository())).available).toBe(2_000 - orders.length - 1 - 32);
    await expectInvariantsKept();
  });

  it('answers a line already stored as stored when its take waited in a group, and saves the group\'s other lines', async () => {
    const { sku, ref, orders } = await addSpreadBatch(10_000);
    const { repository: instance } = processRepository();
    const repeated = { orderid: uniqueId('repeated'), sku, qty: 1 };
    await allocate(repeated, instance);
    const [batch] = (await instance.stockOf(sku, { forTake: true })).batches;
    if (!batch) throw new Error('the spread batch was not read');

    // Sent at once: the first TAKES_IN_FLIGHT_PER_BATCH alone, the rest wait in one group with the repeated line.
    const lines = Array.from({ length: TAKES_IN_FLIGHT_PER_BATCH + MAX_LINES_PER_GROUP }, (_, index) =>
      index === TAKES_IN_FLIGHT_PER_BATCH + 2 ? { ...repeated, batchref: ref } : { orderid: uniqueId('order'), sku, qty: 1, batchref: ref },
    );
    const results = await Promise.all(lines.map((line) => instance.saveAllocation(line, batch)));

    expect(results[TAKES_IN_FLIGHT_PER_BATCH + 2]).toEqual({ outcome: 'line-exists', existing: { ...repeated, batchref: ref } });
    expect(results.filter(({ outcome }) => outcome === 'saved')).toHaveLength(lines.length - 1);
    expect((await batchStatus(ref, repository())).available).toBe(10_000 - orders.length - lines.length);
    await expectInvariantsKept();
  });

  it('reads every piece again when a group\'s take finds less than its process last read, and takes the units the pieces still have, not a later batch\'s', async () => {
    const lines = 3 * (TAKES_IN_FLIGHT_PER_BATCH + MAX_LINES_PER_GROUP);
    const { sku, ref, instance } = await rememberedPast(500, 2 * lines);
    // A 503 (a take that kept meeting the others on the few pieces left) is sent again, as a client does after its Retry-After.
    const allocateAgainAfter503 = async (orderid: string) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await allocate({ orderid, sku, qty: 1 }, instance);
        } catch (error) {
          if (!(error instanceof StoreUnavailable) || attempt === 5) throw error;
        }
      }
    };

    const answers = await Promise.all(Array.from({ length: lines }, () => allocateAgainAfter503(uniqueId('order'))));

    expect(answers).toEqual(Array(lines).fill({ batchref: ref, location: 'default', created: true }));
    expect((await batchStatus(ref, repository())).available).toBe(lines);
    await expectInvariantsKept();
  });

  it('reads every piece again when a take finds a piece with less than its process last read, and takes the unit another piece still has, not a later batch\'s', async () => {
    const { sku, ref, instance } = await rememberedPast(300, 1);

    expect(await allocate({ orderid: uniqueId('last'), sku, qty: 1 }, instance)).toEqual({ batchref: ref, location: 'default', created: true });
    expect((await batchStatus(ref, repository())).available).toBe(0);
    await expectInvariantsKept();
  });

  it('reads every piece again once a while has passed since its process read them, and gathers the batch when the sale is over', async () => {
    const { sku, ref, orders } = await addSpreadBatch(200);
    let now = Date.now();
    const { repository: instance } = processRepository(() => now);
    await allocate({ orderid: uniqueId('during'), sku, qty: 1 }, instance);

    now += GATHER_AFTER_MS + 1_000;
    await allocate({ orderid: uniqueId('after'), sku, qty: 1 }, instance);
    expect((await batchItem(sku, ref))?.pieces).toBeUndefined();
    expect((await batchStatus(ref, repository())).available).toBe(200 - orders.length - 2);
    await expectInvariantsKept();
  });

  it('takes a line no one piece holds from several at once, rather than answer "out of stock"', async () => {
    const { sku, ref, orders } = await addSpreadBatch(300);
    const left = 300 - orders.length;
    const batch = await batchStatus(ref, repository());
    expect(Math.max(...(batch.pieces ?? []).map(({ available }) => available))).toBeLessThan(left);

    expect(await allocate({ orderid: uniqueId('big'), sku, qty: left }, repository())).toEqual({ batchref: ref, location: 'default', created: true });
    expect((await batchStatus(ref, repository())).available).toBe(0);
    await expectInvariantsKept();
  });

  it('allocates a whole order with a line on a spread batch', async () => {
    const { sku, ref, orders } = await addSpreadBatch(500);
    const other = uniqueId('calm');
    await repository().addBatch({ ref: uniqueId('calm-batch'), sku: other, qty: 10, available: 10, eta: null });

    const order = await allocateOrder({ orderid: uniqueId('order'), lines: [{ sku, qty: 3 }, { sku: other, qty: 1 }] }, repository());
    expect(order.newLines).toBe(2);
    expect((await batchStatus(ref, repository())).available).toBe(500 - orders.length - 3);
    await expectInvariantsKept();
  });

  it('gives a cancelled line\'s units back to a spread batch, which stays spread', async () => {
    const { sku, ref, orders } = await addSpreadBatch(400);
    await cancelAllocation(orders[0] as string, sku, repository());

    expect((await batchItem(sku, ref))?.pieces).toBe(PIECES_PER_SPREAD);
    expect((await batchStatus(ref, repository())).available).toBe(400 - orders.length + 1);
    await expectInvariantsKept();
  });

  it('changes a spread batch\'s eta, and its qty by no more than its own units, without gathering it', async () => {
    const { sku, ref, orders } = await addSpreadBatch(200);
    const later = await changeBatch(ref, { eta: '2030-01-01' }, repository());
    const smaller = await changeBatch(ref, { qty: 197 }, repository());

    expect(later.batch).toMatchObject({ eta: '2030-01-01', available: 200 - orders.length });
    expect(smaller).toMatchObject({ batch: { qty: 197, available: 197 - orders.length }, reallocated: [] });
    expect(await batchItem(sku, ref)).toMatchObject({ pieces: PIECES_PER_SPREAD, qty: 197, eta: '2030-01-01' });
    await expectInvariantsKept();
  });

  it('gathers a spread batch before a change of its qty, then moves the lines the change leaves no room for', async () => {
    const { sku, ref, orders } = await addSpreadBatch(200);
    const outcome = await changeBatch(ref, { qty: orders.length - 3 }, repository());

    expect(outcome.reallocated).toHaveLength(3);
    expect(outcome.batch).toMatchObject({ qty: orders.length - 3, available: 0 });
    expect((await batchItem(sku, ref))?.pieces).toBeUndefined();
    await expectInvariantsKept();
  });

  it('keeps a batch at its location through its spread, its gather, and its move out of the stock range', async () => {
    const location = uniqueId('place');
    await repository().saveLocation({ id: location, name: 'A place', priority: 1, serves: ['*'], active: true });
    const { sku, ref, orders } = await addSpreadBatch(200, null, location);
    expect((await batchStatus(ref, repository())).location).toBe(location);

    const outcome = await changeBatch(ref, { qty: orders.length }, repository());

    expect(outcome.batch).toMatchObject({ available: 0, location });
    expect(await batchItem(sku, ref)).toBeUndefined();
    expect((await batchStatus(ref, repository())).location).toBe(location);
    await expectInvariantsKept();
  });

  it('sets a hold\'s units aside on a piece of a spread batch, which stays spread', async () => {
    const { sku, ref, orders } = await addSpreadBatch(200);
    const { hold } = await placeHold({ holdid: uniqueId('hold'), lines: [{ sku, qty: 5 }], ttlSeconds: 60 }, repository());

    expect(hold.lines).toEqual([{ sku, qty: 5, batchref: ref, location: 'default' }]);
    expect((await batchItem(sku, ref))?.pieces).toBe(PIECES_PER_SPREAD);
    expect(await batchStatus(ref, repository())).toMatchObject({ available: 200 - orders.length - 5, held: 5 });
    await expectInvariantsKept();
  });

  it('releases and confirms holds on a spread batch\'s pieces without gathering it, every held unit exact', async () => {
    const { sku, ref, orders } = await addSpreadBatch(200);
    const holdids = [uniqueId('hold'), uniqueId('hold'), uniqueId('hold')];
    for (const holdid of holdids) await placeHold({ holdid, lines: [{ sku, qty: 2 }], ttlSeconds: 60 }, repository());

    await releaseHold(holdids[0] as string, repository());
    await confirmHold(holdids[1] as string, uniqueId('order'), repository());

    expect((await batchItem(sku, ref))?.pieces).toBe(PIECES_PER_SPREAD);
    expect(await batchStatus(ref, repository())).toMatchObject({ available: 200 - orders.length - 4, held: 2 });
    await expectInvariantsKept();
  });

  it('keeps the units held on its pieces exact through a gather, and ends those holds on the gathered batch', async () => {
    const { sku, ref, orders } = await addSpreadBatch(200);
    const holdids = [uniqueId('hold'), uniqueId('hold')];
    for (const holdid of holdids) await placeHold({ holdid, lines: [{ sku, qty: 3 }], ttlSeconds: 3_600 }, repository());
    const later = Date.now() + GATHER_AFTER_MS + 1_000;

    expect((await skuStock(sku, repository(() => later))).held).toBe(6);
    expect((await batchItem(sku, ref))?.pieces).toBeUndefined();
    expect(await batchItem(sku, ref)).toMatchObject({ heldUnits: 6 });
    await expectInvariantsKept();

    await releaseHold(holdids[0] as string, repository(() => later));
    await confirmHold(holdids[1] as string, uniqueId('order'), repository(() => later));

    expect(await batchItem(sku, ref)).toMatchObject({ available: 200 - orders.length - 3, heldUnits: 0 });
    await expectInvariantsKept();
  });

  it('gathers a spread batch back once no allocation has taken from it for a while', async () => {
    const { sku, ref, orders } = await addSpreadBatch(200);
    const later = Date.now() + GATHER_AFTER_MS + 1_000;

    expect((await skuStock(sku, repository(() => later))).inStock).toBe(200 - orders.length);
    expect(await batchItem(sku, ref)).toMatchObject({ available: 200 - orders.length });
    expect((await batchItem(sku, ref))?.pieces).toBeUndefined();
    await expectInvariantsKept();
  });

  it('gathers a spread batch whose every unit is taken out of the stock range, so that allocations stop reading it', async () => {
    const { sku, ref, orders } = await addSpreadBatch(100);
    await allocate({ orderid: uniqueId('last'), sku, qty: 100 - orders.length }, repository());

    await expect(allocate({ orderid: uniqueId('late'), sku, qty: 1 }, repository())).rejects.toThrow(/Out of stock/);
    expect(await batchItem(sku, ref)).toBeUndefined();
    const exhausted = await table.documentClient.send(new GetCommand({ TableName: table.tableName, Key: exhaustedBatchKey(sku, ref), ConsistentRead: true }));
    expect(exhausted.Item).toMatchObject({ available: 0, qty: 100 });
    await expectInvariantsKept();
  });
});
