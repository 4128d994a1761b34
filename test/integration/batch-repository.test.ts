import { setTimeout as sleep } from 'node:timers/promises';
import { PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Allocation, type Batch, afterMoves, changedBatch, newBatch } from '../../domain/model';
import { planLineMoves } from '../../domain/routing';
import { changeBatch } from '../../domain/batch-changes';
import { allocate, cancelAllocation } from '../../domain/services';
import type { DynamoDbBatchRepository } from '../../functions/store/batch-repository';
import { parseStoredItem } from '../../functions/store/items';
import { LINE_SHARDS } from '../../functions/store/lines';
import type { DocumentSender } from '../../functions/store/store-calls';
import { checkInvariants } from '../../tools/invariants';
import { scanItems } from '../reliability/support/table-contents';
import { type TestTable, createTestTable, uniqueId } from '../support/dynamodb';

let table: TestTable;
let repository: DynamoDbBatchRepository;

beforeAll(async () => {
  table = await createTestTable();
  repository = table.repository();
});
afterAll(() => table.drop());

const addBatch = async (qty: number, { sku = uniqueId('sku'), eta = null as string | null, ref = uniqueId('batch') } = {}) => {
  const batch = newBatch({ ref, sku, qty, eta });
  await repository.addBatch(batch);
  return batch;
};

/** The batch's stock, as the table holds it wherever the batch is: 0 for an exhausted one. */
const availableOf = async (sku: string, ref: string) => {
  const items = await scanItems(table.documentClient, table.tableName);
  const batches = items.map(parseStoredItem).filter((item) => item.kind === 'batch' && item.batch.sku === sku && item.batch.ref === ref);
  expect(batches).toHaveLength(1);
  return batches[0]?.kind === 'batch' ? batches[0].batch.available : undefined;
};

const lineOf = (batch: Batch, qty: number): Allocation => ({ orderid: uniqueId('order'), sku: batch.sku, qty, batchref: batch.ref });

describe('the DynamoDB batch repository', () => {
  it('reads back every batch of a SKU that has stock, and none of another', async () => {
    const sku = uniqueId('sku');
    const inStock = await addBatch(10, { sku });
    const shipment = await addBatch(5, { sku, eta: '2027-01-31' });
    await addBatch(1);
    const { known, batches } = await repository.stockOf(sku);
    expect(known).toBe(true);
    expect(batches.sort((a, b) => a.qty - b.qty)).toEqual([shipment, inStock]);
  });

  it('knows no SKU that never had a batch', async () => {
    expect(await repository.stockOf(uniqueId('sku'))).toEqual({ known: false, batches: [] });
  });

  it('stops reading a batch once a line takes its last unit, and still knows its SKU', async () => {
    const sku = uniqueId('sku');
    const emptied = await addBatch(4, { sku, eta: '2027-01-31' });
    const other = await addBatch(3, { sku });
    const line = lineOf(emptied, 4);

    expect(await repository.saveAllocation(line, emptied)).toEqual({ outcome: 'saved' });

    expect(await repository.stockOf(sku)).toEqual({ known: true, batches: [other] });
    expect(await availableOf(sku, emptied.ref)).toBe(0);
    expect(await repository.allocationOf(line.orderid, sku)).toEqual(line);
    expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
  });

  it('refuses to empty a batch whose stock changed since it was read, writing nothing', async () => {
    const batch = await addBatch(5);
    await repository.saveAllocation(lineOf(batch, 1), batch);
    const line = lineOf(batch, 5);

    expect(await repository.saveAllocation(line, batch)).toEqual({ outcome: 'batch-changed' });

    expect(await availableOf(batch.sku, batch.ref)).toBe(4);
    expect(await repository.allocationOf(line.orderid, batch.sku)).toBeUndefined();
  });

  it('asks for a read again, rather than answer the batch changed, when a batch changed since it was read can still take the line', async () => {
    const batch = await addBatch(6);
    const given = lineOf(batch, 1);
    await repository.saveAllocation(given, batch);
    const read = (await repository.batch(batch.ref))!;
    // Another request gives its unit back between this one's read and its write.
    await repository.cancelAllocation(given, [read]);
    const line = lineOf(batch, 5);

    expect(await repository.saveAllocation(line, read)).toEqual({ outcome: 'read-again' });

    expect(await availableOf(batch.sku, batch.ref)).toBe(6);
    expect(await repository.allocationOf(line.orderid, batch.sku)).toBeUndefined();
  });

  it('refuses a batch reference that exists, even under another SKU, answering the batch as it is and keeping it', async () => {
    const first = await addBatch(10);
    await repository.saveAllocation(lineOf(first, 4), first);
    expect(await repository.addBatch(newBatch({ ref: first.ref, sku: uniqueId('sku'), qty: 3, eta: null }))).toEqual({
      outcome: 'exists',
      existing: { ...first, available: 6 },
    });
    expect(await repository.stockOf(first.sku)).toEqual({ known: true, batches: [{ ...first, available: 6 }] });
  });

  it('answers the exhausted batch that holds a reference, though it is stored out of the stock range', async () => {
    const first = await addBatch(4);
    await repository.saveAllocation(lineOf(first, 4), first);
    expect(await repository.addBatch(newBatch({ ref: first.ref, sku: first.sku, qty: 4, eta: null }))).toEqual({
      outcome: 'exists',
      existing: { ...first, available: 0 },
    });
  });

  it('takes the line quantity from the batch and stores the line', async () => {
    const batch = await addBatch(10);
    const allocation = lineOf(batch, 4);
    expect(await repository.saveAllocation(allocation, batch)).toEqual({ outcome: 'saved' });
    expect(await availableOf(batch.sku, batch.ref)).toBe(6);
    expect(await repository.allocationOf(allocation.orderid, batch.sku)).toEqual(allocation);
  });

  it('refuses to take more than is available, writing neither the batch nor the line', async () => {
    const batch = await addBatch(3);
    const allocation = lineOf(batch, 4);
    expect(await repository.saveAllocation(allocation, batch)).toEqual({ outcome: 'batch-changed' });
    expect(await availableOf(batch.sku, batch.ref)).toBe(3);
    expect(await repository.allocationOf(allocation.orderid, batch.sku)).toBeUndefined();
  });

  it('answers the stored line when the same order and SKU is saved again, taking no more stock', async () => {
    const batch = await addBatch(10);
    const allocation = lineOf(batch, 4);
    await repository.saveAllocation(allocation, batch);
    const afterIt = { ...batch, available: 6 };
    expect(await repository.saveAllocation({ ...allocation, qty: 5 }, afterIt)).toEqual({ outcome: 'line-exists', existing: allocation });
    expect(await availableOf(batch.sku, batch.ref)).toBe(6);
  });

  it('answers an exact retry with its batch, and another qty with a conflict, through the service', async () => {
    const batch = await addBatch(10);
    const line = { orderid: uniqueId('order'), sku: batch.sku, qty: 2 };
    expect(await allocate(line, repository)).toEqual({ batchref: batch.ref, location: 'default', created: true });
    expect(await allocate(line, repository)).toEqual({ batchref: batch.ref, location: 'default', created: false });
    await expect(allocate({ ...line, qty: 3 }, repository)).rejects.toThrow(/already has a line/);
    expect(await availableOf(batch.sku, batch.ref)).toBe(8);
  });

  it('moves on to the next batch after losing the preferred one to another request', async () => {
    const sku = uniqueId('sku');
    const preferred = await addBatch(5, { sku, ref: 'a-preferred' });
    const next = await addBatch(5, { sku, ref: 'b-next' });
    // The competitor commits between this request's read and its write.
    const competitor = { orderid: uniqueId('order'), sku, qty: 5, batchref: preferred.ref };
    const racing = Object.create(repository) as DynamoDbBatchRepository;
    racing.stockOf = async (readSku) => {
      const stock = await repository.stockOf(readSku);
      await repository.saveAllocation(competitor, preferred);
      return stock;
    };
    const outcome = await allocate({ orderid: uniqueId('order'), sku, qty: 3 }, racing);
    expect(outcome).toEqual({ batchref: next.ref, location: 'default', created: true });
    expect(await availableOf(sku, preferred.ref)).toBe(0);
    expect(await availableOf(sku, next.ref)).toBe(2);
  });

  it('allocates exactly the stock there is when 50 requests race for a batch of 10', async () => {
    const batch = await addBatch(10);
    const orderids = Array.from({ length: 50 }, () => uniqueId('order'));
    const results = await Promise.allSettled(orderids.map((orderid) => allocate({ orderid, sku: batch.sku, qty: 1 }, repository)));

    const allocated = results.filter((result) => result.status === 'fulfilled');
    const refused = results.filter((result) => result.status === 'rejected');
    expect(allocated).toHaveLength(10);
    expect(refused.map((result) => (result as PromiseRejectedResult).reason.name)).toEqual(Array(40).fill('OutOfStock'));
    expect(await availableOf(batch.sku, batch.ref)).toBe(0);

    const stored = await Promise.all(orderids.map((orderid) => repository.allocationOf(orderid, batch.sku)));
    expect(stored.filter(Boolean)).toHaveLength(10);
  });
});

const allocated = async (batch: Batch, qty: number): Promise<Allocation> => {
  const line = { orderid: uniqueId('order'), sku: batch.sku, qty, batchref: batch.ref };
  expect(await repository.saveAllocation(line, (await repository.batch(batch.ref))!)).toEqual({ outcome: 'saved' });
  return line;
};

const expectInvariantsHold = async () => expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);

describe('reading batches and lines', () => {
  it('reads a batch by reference on either side of zero, and nothing for an unknown one', async () => {
    const batch = await addBatch(3);
    expect(await repository.batch(batch.ref)).toEqual(batch);
    await allocated(batch, 3);
    expect(await repository.batch(batch.ref)).toEqual({ ...batch, available: 0 });
    expect(await repository.batch(batch.ref, batch.sku)).toEqual({ ...batch, available: 0 });
    expect(await repository.batch(uniqueId('batch'))).toBeUndefined();
  });

  it("reads every line of an order, and none of another's", async () => {
    const lamp = await addBatch(10);
    const chair = await addBatch(10);
    const orderid = uniqueId('order');
    await allocate({ orderid, sku: lamp.sku, qty: 1 }, repository);
    await allocate({ orderid, sku: chair.sku, qty: 2 }, repository);
    await allocate({ orderid: uniqueId('order'), sku: chair.sku, qty: 3 }, repository);
    const lines = await repository.allocationsOf(orderid);
    expect(lines.sort((a, b) => a.qty - b.qty)).toEqual([
      { orderid, sku: lamp.sku, qty: 1, batchref: lamp.ref },
      { orderid, sku: chair.sku, qty: 2, batchref: chair.ref },
    ]);
    expect(await repository.allocationsOf(uniqueId('order'))).toEqual([]);
  });

  it('lists the lines on a batch newest first, up to the limit', async () => {
    const batch = await addBatch(10);
    const lines = [];
    for (const qty of [1, 2, 3]) {
      lines.push(await allocated(batch, qty));
      // Allocation times are in milliseconds.
      await sleep(5);
    }
    expect(await repository.linesOn(batch.ref, 10)).toEqual(lines.reverse());
    expect(await repository.linesOn(batch.ref, 2)).toEqual(lines.slice(0, 2));
  });

  it(`lists a batch's lines from its ${LINE_SHARDS} index shards and from the partition of lines written before the shards, newest first`, async () => {
    const batch = await addBatch(100);
    const lines = [];
    for (let index = 0; index < 12; index++) {
      lines.push(await allocated(batch, 1));
      await sleep(2);
    }
    // A line as the service wrote it before the index was sharded, the newest of all.
    const older = lineOf(batch, 2);
    await table.documentClient.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { pk: `ORDER#${older.orderid}`, sk: `LINE#${older.sku}`, type: 'Line', ...older, lineBatch: `LINES#${batch.ref}`, allocatedAt: new Date().toISOString() },
      }),
    );
    await table.documentClient.send(
      new UpdateCommand({ TableName: table.tableName, Key: { pk: `SKU#${batch.sku}`, sk: `STOCK#${batch.ref}` }, UpdateExpression: 'SET available = available - :two', ExpressionAttributeValues: { ':two': 2 } }),
    );
    const shards = new Set((await scanItems(table.documentClient, table.tableName)).flatMap((item) => (item.batchref === batch.ref ? [item.lineBatch] : [])));

    expect(shards.size).toBeGreaterThan(2);
    expect(await repository.linesOn(batch.ref, 100)).toEqual([older, ...lines.reverse()]);
    expect(await repository.linesOn(batch.ref, 3)).toEqual([older, ...lines.slice(0, 2)]);
    const { reallocated } = await changeBatch(batch.ref, { qty: 12 }, repository);
    expect(reallocated).toEqual([expect.objectContaining({ orderid: older.orderid, batchref: null })]);
    expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
  });
});

describe('cancelling a line', () => {
  it('removes the line and gives its stock back, bringing an exhausted batch back among those with stock', async () => {
    const batch = await addBatch(4);
    const line = await allocated(batch, 4);
    expect((await repository.stockOf(batch.sku)).batches).toEqual([]);

    expect(await repository.cancelAllocation(line, [{ ...batch, available: 0 }])).toBe('saved');

    expect(await repository.allocationOf(line.orderid, line.sku)).toBeUndefined();
    expect((await repository.stockOf(batch.sku)).batches).toEqual([batch]);
    await expectInvariantsHold();
  });

  it('writes nothing when the line is no longer as read', async () => {
    const batch = await addBatch(10);
    const line = await allocated(batch, 4);
    expect(await repository.cancelAllocation({ ...line, qty: 5 }, [{ ...batch, available: 6 }])).toBe('changed');
    expect(await repository.allocationOf(line.orderid, line.sku)).toEqual(line);
    expect((await repository.batch(batch.ref))?.available).toBe(6);
  });
});

describe('changing a batch', () => {
  it('changes qty and eta in place, and moves the batch across zero both ways', async () => {
    const batch = await addBatch(5);
    await allocated(batch, 2);
    const read = (await repository.batch(batch.ref))!;

    expect((await repository.changeBatch(read, { ...read, qty: 8, available: 6, eta: '2027-01-01' })).outcome).toBe('saved');
    expect(await repository.batch(batch.ref)).toEqual({ ...batch, qty: 8, available: 6, eta: '2027-01-01' });

    const shrunk = { ...batch, qty: 0, available: -2, eta: '2027-01-01' };
    expect((await repository.changeBatch((await repository.batch(batch.ref))!, shrunk)).outcome).toBe('saved');
    expect(await repository.batch(batch.ref)).toEqual(shrunk);
    expect((await repository.stockOf(batch.sku)).batches).toEqual([]);

    const grown = { ...shrunk, qty: 3, available: 1, eta: null };
    expect((await repository.changeBatch(shrunk, grown)).outcome).toBe('saved');
    expect((await repository.stockOf(batch.sku)).batches).toEqual([grown]);
    await expectInvariantsHold();
  });

  it('writes nothing over a batch whose qty changed since it was read', async () => {
    const batch = await addBatch(5);
    expect((await repository.changeBatch(batch, { ...batch, qty: 6, available: 6 })).outcome).toBe('saved');
    expect((await repository.changeBatch(batch, { ...batch, qty: 7, available: 7 })).outcome).toBe('changed');
    expect((await repository.batch(batch.ref))?.qty).toBe(6);
  });
});

describe('moving lines off a batch that shrank', () => {
  /** A repository whose transactions are counted, each by its items. */
  const countingTransactions = () => {
    const transactions: number[] = [];
    const sender: DocumentSender = {
      send: (async (command: unknown, options?: object) => {
        if (command instanceof TransactWriteCommand) transactions.push(command.input.TransactItems?.length ?? 0);
        return table.documentClient.send(command as never, options);
      }) as DocumentSender['send'],
    };
    return { repository: table.repository({ sender }), transactions };
  };

  /** A batch of `qty` holding lines of these qtys, oldest first, set to `newQty`: as read once it shrank. */
  const shrunkWith = async (sku: string, qty: number, lineQtys: readonly number[], newQty: number) => {
    const batch = await addBatch(qty, { sku });
    const lines = [];
    for (const lineQty of lineQtys) lines.push(await allocated(batch, lineQty));
    const read = (await repository.batch(batch.ref))!;
    expect((await repository.changeBatch(read, changedBatch(read, { qty: newQty }))).outcome).toBe('saved');
    return { from: (await repository.batch(batch.ref))!, newestFirst: lines.reverse() };
  };

  const noticesOf = async (orderid: string) =>
    (await scanItems(table.documentClient, table.tableName))
      .map(parseStoredItem)
      .flatMap((item) => (item.kind === 'deallocation' && item.allocation.orderid === orderid ? [{ reason: item.reason, batchref: item.allocation.batchref }] : []));

  it('moves lines to several batches and out of their orders in one transaction, each batch changed once, across zero both ways', async () => {
    const sku = uniqueId('sku');
    const { from, newestFirst } = await shrunkWith(sku, 10, [2, 3, 1, 4], 1);
    const [d, c, b, a] = newestFirst as [Allocation, Allocation, Allocation, Allocation];
    const [x, y] = [await addBatch(3, { sku }), await addBatch(5, { sku, eta: '2027-01-01' })];
    const moves = [
      { line: d, to: y.ref },
      { line: c, to: x.ref },
      { line: b, to: null },
      { line: a, to: x.ref },
    ];
    const { repository: counted, transactions } = countingTransactions();

    expect(await counted.moveAllocations(from, moves, [x, y])).toEqual({ outcome: 'saved', moved: 4 });

    // 4 lines (one removed, with its notice): 5 items; the shrunk batch back in the stock range and
    // x out of it, 2 items each; y in place.
    expect(transactions).toEqual([10]);
    expect(await repository.allocationOf(d.orderid, sku)).toEqual({ ...d, batchref: y.ref });
    expect(await repository.allocationOf(c.orderid, sku)).toEqual({ ...c, batchref: x.ref });
    expect(await repository.allocationOf(a.orderid, sku)).toEqual({ ...a, batchref: x.ref });
    expect(await repository.allocationOf(b.orderid, sku)).toBeUndefined();
    expect(await noticesOf(b.orderid)).toEqual([{ reason: 'reallocated', batchref: from.ref }]);
    expect(await repository.linesOn(x.ref, 10)).toEqual(expect.arrayContaining([{ ...c, batchref: x.ref }, { ...a, batchref: x.ref }]));
    expect(await repository.linesOn(from.ref, 10)).toEqual([]);
    const stock = (await repository.stockOf(sku)).batches;
    expect(new Map(stock.map(({ ref, available }) => [ref, available]))).toEqual(new Map([[from.ref, 1], [y.ref, 1]]));
    expect(await repository.batch(x.ref)).toEqual({ ...x, available: 0 });
    await expectInvariantsHold();
  });

  it('writes none of the moves when one line is no longer as read, and the moves planned again go through', async () => {
    const sku = uniqueId('sku');
    const { newestFirst } = await shrunkWith(sku, 10, [2, 3, 1], 0);
    const [c, b, a] = newestFirst as [Allocation, Allocation, Allocation];
    const to = await addBatch(10, { sku });
    // Another request cancels b after the index listed it: the batch read afterwards no longer counts it.
    expect(await repository.cancelAllocation(b, [(await repository.batch(b.batchref))!])).toBe('saved');
    const from = (await repository.batch(c.batchref))!;
    const moves = [c, b, a].map((line) => ({ line, to: to.ref }));

    expect(await repository.moveAllocations(from, moves, [to])).toEqual({ outcome: 'changed' });

    expect(await repository.linesOn(from.ref, 10)).toEqual([c, a]);
    expect(await repository.batch(from.ref)).toEqual(from);
    expect(await repository.batch(to.ref)).toEqual(to);
    expect(await noticesOf(c.orderid)).toEqual([]);

    const planned = planLineMoves(from, [c, a], [to], []);
    expect(await repository.moveAllocations(from, planned, [to])).toEqual({ outcome: 'saved', moved: 2 });
    expect(await repository.batch(to.ref)).toEqual({ ...to, available: 7 });
    await expectInvariantsHold();
  });

  it('writes nothing when a batch the moves take from changed since it was read', async () => {
    const sku = uniqueId('sku');
    const { from, newestFirst } = await shrunkWith(sku, 4, [2, 2], 0);
    const to = await addBatch(4, { sku });
    // Another request takes 1 of the 4 units the moves mean to take.
    await allocated(to, 1);

    expect(await repository.moveAllocations(from, newestFirst.map((line) => ({ line, to: to.ref })), [to])).toEqual({ outcome: 'changed' });

    expect(await repository.linesOn(from.ref, 10)).toEqual(newestFirst);
    expect(await repository.batch(to.ref)).toEqual({ ...to, available: 3 });
    const [second, first] = newestFirst as [Allocation, Allocation];
    const planned = planLineMoves(from, newestFirst, [(await repository.batch(to.ref))!], []);
    expect(planned).toEqual([{ line: second, to: to.ref }, { line: first, to: null }]);
    expect(await repository.moveAllocations(from, planned, [(await repository.batch(to.ref))!])).toEqual({ outcome: 'saved', moved: 2 });
    await expectInvariantsHold();
  });

  it('carries as many moves as 100 items take, and says how many, the rest for the next transaction', async () => {
    const sku = uniqueId('sku');
    const { from, newestFirst } = await shrunkWith(sku, 100, Array(100).fill(1), 0);
    const room = await addBatch(100, { sku, eta: '2030-01-01' });
    const moves = planLineMoves(from, newestFirst, [room], []);
    const { repository: counted, transactions } = countingTransactions();

    // 98 lines, the shrunk batch and the one with room: 100 items.
    expect(await counted.moveAllocations(from, moves, [room])).toEqual({ outcome: 'saved', moved: 98 });
    const after = afterMoves(from, [room], moves.slice(0, 98));
    expect(await counted.moveAllocations(after.from, moves.slice(98), after.batches)).toEqual({ outcome: 'saved', moved: 2 });

    // The last 2 lines take the room's last units: it leaves the stock range, 2 items.
    expect(transactions).toEqual([100, 5]);
    expect(await repository.batch(from.ref)).toEqual({ ...from, available: 0 });
    expect(await repository.batch(room.ref)).toEqual({ ...room, available: 0 });
    expect(await repository.linesOn(room.ref, 100)).toHaveLength(100);
    await expectInvariantsHold();
  }, 60_000);
});

describe('the lifecycle under contention on one SKU', () => {
  it('never oversells while quantity changes, cancels and allocations run at once', async () => {
    const sku = uniqueId('sku');
    const batches = await Promise.all([addBatch(20, { sku }), addBatch(20, { sku, eta: '2027-01-01' }), addBatch(10, { sku, eta: '2027-02-01' })]);
    const orderids = Array.from({ length: 40 }, () => uniqueId('order'));
    const settled = await Promise.allSettled([
      ...orderids.map((orderid, index) => allocate({ orderid, sku, qty: 1 + (index % 3) }, repository)),
      ...orderids.slice(0, 10).map((orderid) => cancelAllocation(orderid, sku, repository)),
      changeBatch(batches[0]!.ref, { qty: 5 }, repository),
      changeBatch(batches[1]!.ref, { qty: 30 }, repository),
      changeBatch(batches[2]!.ref, { qty: 0 }, repository),
    ]);
    // A refusal, or a 503 that a repeat would resolve: never anything else.
    const expectedRefusals = ['OutOfStock', 'LineNotFound', 'AllocationContended', 'BatchContended'];
    const failures = settled.flatMap((result) => (result.status === 'rejected' ? [String(result.reason?.name)] : []));
    expect(failures.filter((name) => !expectedRefusals.includes(name))).toEqual([]);
    // Finish whatever a change left to move, as a client repeating it would.
    await changeBatch(batches[0]!.ref, { qty: 5 }, repository);
    await changeBatch(batches[2]!.ref, { qty: 0 }, repository);
    await expectInvariantsHold();
  }, 30_000);
});

describe('saving a whole order', () => {
  it('writes every line and takes every batch, in one transaction', async () => {
    const [lamp, sofa] = await Promise.all([addBatch(5), addBatch(2)]);
    const orderid = uniqueId('order');
    const placements = [
      { allocation: { orderid, sku: lamp.sku, qty: 1, batchref: lamp.ref }, batch: lamp },
      { allocation: { orderid, sku: sofa.sku, qty: 2, batchref: sofa.ref }, batch: sofa },
    ];
    expect(await repository.saveAllocations(placements)).toEqual({ outcome: 'saved' });
    expect((await repository.allocationsOf(orderid)).length).toBe(2);
    expect((await repository.batch(sofa.ref))?.available).toBe(0);
    await expectInvariantsHold();
  });

  it('leaves every batch and line untouched when one line cannot be taken', async () => {
    const [lamp, sofa] = await Promise.all([addBatch(5), addBatch(2)]);
    const orderid = uniqueId('order');
    // The sofa's batch as read is no longer what it is: another order took one since.
    await allocated(sofa, 1);
    const result = await repository.saveAllocations([
      { allocation: { orderid, sku: lamp.sku, qty: 1, batchref: lamp.ref }, batch: lamp },
      { allocation: { orderid, sku: sofa.sku, qty: 2, batchref: sofa.ref }, batch: sofa },
    ]);
    expect(result).toEqual({ outcome: 'batch-changed' });
    expect(await repository.allocationsOf(orderid)).toEqual([]);
    expect(await repository.batch(lamp.ref)).toEqual(lamp);
    expect((await repository.batch(sofa.ref))?.available).toBe(1);
  });

  it('answers the lines already stored, and writes nothing', async () => {
    const [lamp, sofa] = await Promise.all([addBatch(5), addBatch(5)]);
    const earlier = await allocated(lamp, 1);
    const result = await repository.saveAllocations([
      { allocation: { ...earlier, qty: 3 }, batch: (await repository.batch(lamp.ref))! },
      { allocation: { orderid: earlier.orderid, sku: sofa.sku, qty: 1, batchref: sofa.ref }, batch: sofa },
    ]);
    expect(result).toEqual({ outcome: 'lines-exist', existing: [earlier] });
    expect(await repository.allocationOf(earlier.orderid, sofa.sku)).toBeUndefined();
    expect((await repository.batch(lamp.ref))?.available).toBe(4);
  });
});
