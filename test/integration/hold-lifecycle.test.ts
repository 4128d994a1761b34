import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { HoldConflict, OutOfStock, StoreUnavailable } from '../../domain/errors';
import {
  OVERDUE_AFTER_MS,
  confirmHold,
  endExpiredHold,
  extendHold,
  holdStatus,
  placeHold,
  releaseHold,
  sweepExpiredHolds,
} from '../../domain/hold-services';
import type { HeldLine, Hold } from '../../domain/holds';
import { type Batch, newBatch } from '../../domain/model';
import type { HoldToEnd } from '../../domain/ports';
import { changeBatch } from '../../domain/batch-changes';
import { addBatch, allocate, batchStatus, cancelAllocation } from '../../domain/services';
import { DynamoDbBatchRepository } from '../../functions/store/batch-repository';
import { parseStoredItem } from '../../functions/store/items';
import type { DocumentSender } from '../../functions/store/store-calls';
import { checkInvariants } from '../../tools/invariants';
import { scanItems } from '../reliability/support/table-contents';
import { type TestTable, createTestTable, repositoryAt, uniqueId } from '../support/dynamodb';

/*
 * A hold's life against DynamoDB Local, on a clock the test sets: placed, extended, released,
 * confirmed, expired (with no sweeper running), and ended by a batch that shrinks under it. Each
 * ends in exactly one state, every unit counted once (the invariant check), at the cost
 * docs/performance.md gives.
 */

const START = Date.parse('2026-11-25T10:00:00.000Z');
const MINUTE = 60_000;

let table: TestTable;
beforeAll(async () => {
  table = await createTestTable();
});
afterAll(() => table.drop());
afterEach(() => vi.restoreAllMocks());

const at = (now: number) => repositoryAt(table, now);

/** A batch as a client reads its stock: without the store's bound on its holds' expiry. */
const stockOf = async (ref: string, repository: Parameters<typeof batchStatus>[1]) => {
  const { heldFrom: _, heldTakes: __, ...stock } = await batchStatus(ref, repository);
  return stock;
};

const stocked = async (qty: number, { sku = uniqueId('sku') } = {}) => {
  const batch = newBatch({ ref: uniqueId('batch'), sku, qty, eta: null });
  await addBatch(batch, table.repository());
  return batch;
};

/** Places a hold of `qty` of the batch's SKU at START, for `ttlSeconds`. */
const held = async (batch: Batch, qty: number, ttlSeconds = 60) => {
  const holdid = uniqueId('cart');
  await placeHold({ holdid, lines: [{ sku: batch.sku, qty }], ttlSeconds }, at(START).repository);
  return holdid;
};

const violationsOf = async (...batches: Batch[]) =>
  (await checkInvariants(table.documentClient, table.tableName)).filter(({ message }) => batches.some(({ ref }) => message.includes(ref)));

const storedPlace = async (ref: string) => {
  const items = (await scanItems(table.documentClient, table.tableName)).map(parseStoredItem);
  return items.flatMap((item) => (item.kind === 'batch' && item.batch.ref === ref ? [item.inStockRange ? 'stock' : 'empty'] : []))[0];
};

describe('a hold of 25 lines whose confirm empties every batch', () => {
  it('is confirmed, each batch leaving the stock range: those its transaction had no room to move, right after it', async () => {
    const batches = await Promise.all(Array.from({ length: 25 }, () => stocked(1)));
    const holdid = uniqueId('cart');
    await placeHold({ holdid, lines: batches.map(({ sku }) => ({ sku, qty: 1 })), ttlSeconds: 60 }, at(START).repository);

    const { lines } = await confirmHold(holdid, uniqueId('order'), at(START + 1_000).repository);

    expect(lines).toHaveLength(25);
    expect(new Set(await Promise.all(batches.map(({ ref }) => storedPlace(ref))))).toEqual(new Set(['empty']));
    expect(await violationsOf(...batches)).toEqual([]);
  });
});

describe('a hold of 25 lines whose confirm empties every batch, cut off before its second write', () => {
  it('is confirmed all the same, and the batches it left in the stock range with nothing can still be changed and their lines cancelled', async () => {
    const batches = await Promise.all(Array.from({ length: 25 }, () => stocked(1)));
    const holdid = uniqueId('cart');
    await placeHold({ holdid, lines: batches.map(({ sku }) => ({ sku, qty: 1 })), ttlSeconds: 60 }, at(START).repository);
    // The store stops answering once the confirm's transaction has committed.
    let committed = false;
    const sender: DocumentSender = {
      send: (async (command: object, options?: object) => {
        if (!(command instanceof TransactWriteCommand)) return table.documentClient.send(command as never, options);
        if (committed) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
        const output = await table.documentClient.send(command, options);
        committed = true;
        return output;
      }) as DocumentSender['send'],
    };
    const orderid = uniqueId('order');

    const { lines } = await confirmHold(holdid, orderid, table.repository({ sender, clock: () => START + 1_000 }));

    expect(lines).toHaveLength(25);
    const leftInStock = (await Promise.all(batches.map(async (batch) => ((await storedPlace(batch.ref)) === 'stock' ? [batch] : [])))).flat();
    expect(leftInStock.length).toBeGreaterThan(0);
    const [raised, delayed, cancelled] = leftInStock.length >= 3 ? leftInStock : [leftInStock[0], leftInStock[0], leftInStock[0]];
    const { repository } = at(START + 2_000);
    expect((await changeBatch((raised as Batch).ref, { qty: 10 }, repository)).batch).toMatchObject({ qty: 10, available: 9 });
    expect((await changeBatch((delayed as Batch).ref, { eta: '2030-01-01' }, repository)).batch).toMatchObject({ eta: '2030-01-01' });
    await cancelAllocation(orderid, (cancelled as Batch).sku, repository);
    expect(await violationsOf(...batches)).toEqual([]);
  });
});

describe('a hold placed', () => {
  it('takes one read round and one transaction, and a repeat holds nothing more', async () => {
    const batch = await stocked(5);
    const { repository, calls } = at(START);
    const request = { holdid: uniqueId('cart'), lines: [{ sku: batch.sku, qty: 2 }], ttlSeconds: 60 };
    const { hold, created } = await placeHold(request, repository);
    expect(created).toBe(true);
    expect(hold.expiresAt).toBe('2026-11-25T10:01:00.000Z');
    // The hold's record, the SKU's stock and the locations (this new repository's first read of them), at once.
    expect(calls).toEqual(['Get', 'Query', 'Query', 'TransactWrite']);
    expect((await placeHold(request, at(START + 1_000).repository)).created).toBe(false);
    expect(await batchStatus(batch.ref, repository)).toMatchObject({ available: 3, held: 2 });
  });

  it('reads expired at exactly its expiresAt, with no sweeper run, and its units are free for a sale then', async () => {
    const batch = await stocked(2);
    const holdid = await held(batch, 2);
    const justBefore = at(START + MINUTE - 1).repository;
    expect((await holdStatus(holdid, justBefore)).status).toBe('active');
    await expect(allocate({ orderid: uniqueId('order'), sku: batch.sku, qty: 1 }, justBefore)).rejects.toThrow(OutOfStock);

    const atExpiry = at(START + MINUTE).repository;
    expect((await holdStatus(holdid, atExpiry)).status).toBe('expired');
    expect(await allocate({ orderid: uniqueId('order'), sku: batch.sku, qty: 2 }, atExpiry)).toMatchObject({ created: true });
    expect(await violationsOf(batch)).toEqual([]);
  });
});

describe('a hold extended', () => {
  it('lasts until its new expiry on its batches too, and cannot be extended once expired', async () => {
    const batch = await stocked(2);
    const holdid = await held(batch, 2);
    const { repository, calls } = at(START + 30_000);
    expect((await extendHold(holdid, 120, repository)).expiresAt).toBe('2026-11-25T10:02:30.000Z');
    expect(calls).toEqual(['Get', 'TransactWrite']);

    const afterFirstExpiry = at(START + 2 * MINUTE).repository;
    expect((await holdStatus(holdid, afterFirstExpiry)).status).toBe('active');
    await expect(allocate({ orderid: uniqueId('order'), sku: batch.sku, qty: 1 }, afterFirstExpiry)).rejects.toThrow(OutOfStock);
    await expect(extendHold(holdid, 60, at(START + 150_000).repository)).rejects.toThrow(HoldConflict);
  });
});

describe('a hold released', () => {
  it('gives its units back at once in one read and one transaction; a repeat changes nothing', async () => {
    const batch = await stocked(3);
    const holdid = await held(batch, 2);
    const { repository, calls } = at(START + 1_000);
    expect(await releaseHold(holdid, repository)).toBe('released');
    expect(calls).toEqual(['Get', 'TransactWrite']);
    expect(await releaseHold(holdid, repository)).toBe('repeat');
    expect(await stockOf(batch.ref, repository)).toEqual({ ...batch, available: 3 });
    expect(await violationsOf(batch)).toEqual([]);
  });

  it('once expired and its units taken by a sale on one batch, ends expired, giving back only what it still holds', async () => {
    const lamp = await stocked(2);
    const chair = await stocked(2);
    const holdid = uniqueId('cart');
    await placeHold({ holdid, lines: [{ sku: lamp.sku, qty: 2 }, { sku: chair.sku, qty: 2 }], ttlSeconds: 60 }, at(START).repository);
    const { repository } = at(START + MINUTE);
    await allocate({ orderid: uniqueId('order'), sku: lamp.sku, qty: 2 }, repository);

    expect(await releaseHold(holdid, repository)).toBe('expired');
    expect((await holdStatus(holdid, repository)).status).toBe('expired');
    expect(await stockOf(chair.ref, repository)).toEqual({ ...chair, available: 2 });
    expect(await stockOf(lamp.ref, repository)).toEqual({ ...lamp, available: 0 });
    expect(await violationsOf(lamp, chair)).toEqual([]);
  });
});

describe('a hold confirmed', () => {
  it('becomes the order\'s lines in one read and one transaction, and a confirm after expiry is refused', async () => {
    const batch = await stocked(5);
    const holdid = await held(batch, 2);
    const late = await held(batch, 1);
    const orderid = uniqueId('order');
    const { repository, calls } = at(START + 1_000);
    expect(await confirmHold(holdid, orderid, repository)).toEqual({ lines: [{ orderid, sku: batch.sku, qty: 2, batchref: batch.ref, location: 'default' }], created: true });
    expect(calls).toEqual(['Get', 'TransactWrite']);
    await expect(confirmHold(late, uniqueId('order'), at(START + MINUTE).repository)).rejects.toThrow('has expired');
    expect(await violationsOf(batch)).toEqual([]);
  });

  it('moves a batch it leaves with no units but lines out of the stock range, in a second round', async () => {
    const batch = await stocked(2);
    const holdid = await held(batch, 2);
    const { repository, calls } = at(START + 1_000);
    await confirmHold(holdid, uniqueId('order'), repository);
    expect(calls).toEqual(['Get', 'TransactWrite', 'BatchGet', 'Get', 'TransactWrite']);
    expect(await storedPlace(batch.ref)).toBe('empty');
    expect(await violationsOf(batch)).toEqual([]);
  });

  it('races its expiry, its release and another confirm to exactly one end', async () => {
    const batch = await stocked(6);
    const holds = await Promise.all([held(batch, 2), held(batch, 2), held(batch, 2)]);
    const atTheEdge = at(START + MINUTE - 1).repository;
    const settled = await Promise.all(
      holds.map(async (holdid) =>
        Promise.allSettled([
          confirmHold(holdid, uniqueId('order'), atTheEdge),
          confirmHold(holdid, uniqueId('order'), atTheEdge),
          releaseHold(holdid, atTheEdge),
          endExpiredHold(holdid, at(START + MINUTE).repository),
        ]),
      ),
    );
    for (const [index, answers] of settled.entries()) {
      const status = (await holdStatus(holds[index] as string, at(START + MINUTE + 1).repository)).status;
      const confirmed = answers.slice(0, 2).filter((answer) => answer.status === 'fulfilled').length;
      expect(confirmed).toBe(status === 'confirmed' ? 1 : 0);
    }
    expect(await violationsOf(batch)).toEqual([]);
  });
});

describe('a batch that shrinks under holds', () => {
  it('releases the holds with the latest expiry first until its lines fit, each whole on every batch', async () => {
    const lamp = await stocked(4);
    const chair = await stocked(1);
    const early = await held(lamp, 2, 60);
    const late = uniqueId('cart');
    await placeHold({ holdid: late, lines: [{ sku: lamp.sku, qty: 2 }, { sku: chair.sku, qty: 1 }], ttlSeconds: 120 }, at(START).repository);
    const { repository } = at(START + 1_000);

    const { batch, reallocated } = await changeBatch(lamp.ref, { qty: 3 }, repository);

    expect(reallocated).toEqual([]);
    expect(batch).toMatchObject({ qty: 3, available: 1, held: 2 });
    expect((await holdStatus(late, repository)).status).toBe('released');
    expect((await holdStatus(early, repository)).status).toBe('active');
    expect(await stockOf(chair.ref, repository)).toEqual({ ...chair, available: 1 });
    expect(await violationsOf(lamp, chair)).toEqual([]);
  });

  it('ends in one write two holds that also hold units on one other batch, giving both back there', async () => {
    const lamp = await stocked(4);
    const chair = await stocked(2);
    const carts = [uniqueId('cart'), uniqueId('cart')];
    for (const holdid of carts) {
      await placeHold({ holdid, lines: [{ sku: lamp.sku, qty: 2 }, { sku: chair.sku, qty: 1 }], ttlSeconds: 120 }, at(START).repository);
    }
    const { repository } = at(START + 1_000);

    const { batch } = await changeBatch(lamp.ref, { qty: 0 }, repository);

    expect(batch).toMatchObject({ qty: 0, available: 0 });
    expect(await Promise.all(carts.map(async (holdid) => (await holdStatus(holdid, repository)).status))).toEqual(['released', 'released']);
    expect(await stockOf(chair.ref, repository)).toEqual({ ...chair, available: 2 });
    expect(await violationsOf(lamp, chair)).toEqual([]);
  });

  it('ends expired holds first, as expired, and then moves lines', async () => {
    const batch = await stocked(3);
    const expiring = await held(batch, 1, 1);
    await allocate({ orderid: uniqueId('order'), sku: batch.sku, qty: 2 }, at(START).repository);
    const { repository } = at(START + MINUTE);

    const { reallocated } = await changeBatch(batch.ref, { qty: 1 }, repository);

    expect((await holdStatus(expiring, repository)).status).toBe('expired');
    expect(reallocated).toEqual([expect.objectContaining({ qty: 2, from: batch.ref, batchref: null })]);
    expect(await violationsOf(batch)).toEqual([]);
  });
});

describe('a batch that shrinks under more holds than one transaction ends', () => {
  it('ends the holds that do not fit the change\'s transaction first, each whole, and the rest with the change', async () => {
    const batch = await stocked(100);
    const holdids: string[] = [];
    for (let placed = 0; placed < 100; placed++) holdids.push(await held(batch, 1));
    const { repository } = at(START + 1_000);

    const { batch: changed } = await changeBatch(batch.ref, { qty: 0 }, repository);

    expect(changed).toMatchObject({ qty: 0, available: 0 });
    expect(new Set(await Promise.all(holdids.map(async (holdid) => (await holdStatus(holdid, repository)).status)))).toEqual(new Set(['released']));
    expect(await storedPlace(batch.ref)).toBe('empty');
    expect(await violationsOf(batch)).toEqual([]);
    // A hundred holds placed one by one: seconds on a quiet machine, many more beside other files on a loaded one.
  }, 120_000);
});

describe('a batch that shrinks under more holds than one transaction ends', () => {
  it('sizes the change for the most its send may write, so two spreads whose counts the sizing could fold never make it 101 items', async () => {
    const sent: unknown[] = [];
    const sender: DocumentSender = {
      send: (async (command: unknown) => {
        sent.push(command);
        throw new Error('not expected');
      }) as DocumentSender['send'],
    };
    const repository = new DynamoDbBatchRepository(sender, 'table');
    const expiresAt = '2026-11-25T10:15:00.000Z';
    const xLine = (qty = 1): HeldLine => ({ sku: 'X', qty, batchref: 'x', sources: [{ qty }] });
    // Each ends a unit on x and gives one back on y: from a piece of spread S1 or S2 (both remembering
    // piece 5), or from y's own units.
    const onY = (holdid: string, sources: HeldLine['sources']): HoldToEnd => ({
      hold: { holdid, status: 'active', expiresAt, lines: [xLine(), { sku: 'Y', qty: 1, batchref: 'y', sources }] } satisfies Hold,
      ending: 'released',
      givenBackOn: ['y'],
    });
    const ending: HoldToEnd[] = [
      onY('h-s1', [{ qty: 1, piece: 5, spreadId: 'S1', of: 64 }]),
      onY('h-s2', [{ qty: 1, piece: 5, spreadId: 'S2', of: 64 }]),
      onY('h-own-1', [{ qty: 1 }]),
      onY('h-own-2', [{ qty: 1 }]),
      ...Array.from({ length: 42 }, (_, i): HoldToEnd => ({ hold: { holdid: `h-x-${i}`, status: 'active', expiresAt, lines: [xLine()] }, ending: 'released', givenBackOn: [] })),
    ];
    const batch: Batch = { ref: 'x', sku: 'X', qty: 1000, available: 0, eta: null, held: 46 };
    const changed: Batch = { ref: 'x', sku: 'X', qty: 960, available: 6, eta: null };
    // The send picks different pieces for S1 and S2: their counts are two writes.
    vi.spyOn(Math, 'random').mockReturnValueOnce(0).mockReturnValueOnce(0.5);

    const result = await repository.changeBatch(batch, changed, ending, Date.parse('2026-11-25T10:00:00.000Z'));

    expect(result).toEqual({ outcome: 'too-many-holds', fitting: ending.length - 1 });
    expect(sent).toEqual([]);
  });
});

describe('a batch that shrinks under holds, cut off', () => {
  it('ends the holds a change needs in the change\'s own transaction: cut off as it writes, it ended none, and the repeat does it all', async () => {
    const lamp = await stocked(4);
    const chair = await stocked(1);
    const holdid = uniqueId('cart');
    await placeHold({ holdid, lines: [{ sku: lamp.sku, qty: 3 }, { sku: chair.sku, qty: 1 }], ttlSeconds: 120 }, at(START).repository);
    // The store stops answering as the change is written: the transaction that writes the batch's reference.
    const writesTheChange = (command: unknown) =>
      command instanceof TransactWriteCommand && (command.input.TransactItems ?? []).some(({ Update }) => String(Update?.Key?.pk).startsWith('BATCHREF#'));
    const cutOff: DocumentSender = {
      send: (async (command: unknown, options?: object) => {
        if (writesTheChange(command)) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
        return table.documentClient.send(command as never, options);
      }) as DocumentSender['send'],
    };

    await expect(changeBatch(lamp.ref, { qty: 2 }, table.repository({ sender: cutOff, clock: () => START + 1_000 }))).rejects.toThrow(StoreUnavailable);

    const { repository } = at(START + 2_000);
    expect((await holdStatus(holdid, repository)).status).toBe('active');
    expect(await batchStatus(lamp.ref, repository)).toMatchObject({ qty: 4, available: 1, held: 3 });
    expect(await batchStatus(chair.ref, repository)).toMatchObject({ available: 0, held: 1 });

    const { batch } = await changeBatch(lamp.ref, { qty: 2 }, repository);

    expect(batch).toMatchObject({ qty: 2, available: 2 });
    expect(batch.held).toBeUndefined();
    expect((await holdStatus(holdid, repository)).status).toBe('released');
    expect(await stockOf(chair.ref, repository)).toEqual({ ...chair, available: 1 });
    expect(await violationsOf(lamp, chair)).toEqual([]);
  });
});

describe('the sweeper', () => {
  it('ends the holds whose time has passed, giving their units back, and leaves the others', async () => {
    const batch = await stocked(6);
    const [short, long, extended] = [await held(batch, 1, 30), await held(batch, 2, 600), await held(batch, 3, 30)];
    await extendHold(extended, 600, at(START + 10_000).repository);
    const { repository } = at(START + MINUTE);

    const { ended } = await sweepExpiredHolds(repository);

    expect(ended).toBeGreaterThanOrEqual(1);
    expect((await holdStatus(short, repository)).status).toBe('expired');
    expect((await holdStatus(long, repository)).status).toBe('active');
    expect((await holdStatus(extended, repository)).status).toBe('active');
    expect(await batchStatus(batch.ref, repository)).toMatchObject({ available: 1, held: 5 });
    expect((await sweepExpiredHolds(at(START + 2 * MINUTE).repository)).overdue).toBe(0);
    expect(await violationsOf(batch)).toEqual([]);
  });

  it('pages through the expired holds of every shard earliest first, each once, whether or not those of earlier pages ended', async () => {
    // Long before the other tests' holds, so that these are the only ones expired then.
    const early = START - 365 * 24 * 60 * MINUTE;
    const batch = newBatch({ ref: uniqueId('batch'), sku: uniqueId('sku'), qty: 9, eta: null });
    await addBatch(batch, table.repository());
    const holdids = Array.from({ length: 9 }, () => uniqueId('cart'));
    for (const [index, holdid] of holdids.entries()) {
      await placeHold({ holdid, lines: [{ sku: batch.sku, qty: 1 }], ttlSeconds: index + 1 }, at(early).repository);
    }
    const { repository } = at(early + 10_000);

    const listed: string[] = [];
    let page = await repository.expiredHolds(early + 10_000, 2);
    for (;;) {
      listed.push(...page.holdids);
      // Ending a page's first hold takes it out of the index before the next page is read.
      if (page.holdids[0]) await endExpiredHold(page.holdids[0], repository);
      if (!page.next) break;
      page = await repository.expiredHolds(early + 10_000, 2, page.next);
    }

    expect(listed).toEqual(holdids);
  });

  it('counts the holds it could not end, and those 5 minutes past their expiry as overdue, for the alarm', async () => {
    const batch = await stocked(1);
    const holdid = await held(batch, 1, 30);
    const { repository } = at(START + 30_000 + OVERDUE_AFTER_MS + 1);
    const failingToEnd = Object.assign(Object.create(repository), { endHold: async () => 'changed' as const });

    const failedSweep = await sweepExpiredHolds(failingToEnd);

    expect(failedSweep).toMatchObject({ ended: 0 });
    expect(failedSweep.failed).toBeGreaterThanOrEqual(1);
    expect(failedSweep.overdue).toBeGreaterThanOrEqual(1);
    expect((await repository.expiredHolds(START + 30_000, 1_000)).holdids).toContain(holdid);
    expect(await sweepExpiredHolds(repository)).toMatchObject({ failed: 0, overdue: 0 });
  });
});

describe('a copy of a hold racing the first', () => {
  it('is answered as a repeat when it read no hold before the first committed and the stock after, not refused for the units the first took', async () => {
    const batch = await stocked(2);
    const request = { holdid: uniqueId('cart'), lines: [{ sku: batch.sku, qty: 2 }], ttlSeconds: 600 };
    await placeHold(request, table.repository());
    // The copy's first read of the hold was made before the first copy's write; its read of the stock after.
    const repository = table.repository();
    let readsOfTheHold = 0;
    const racing = new Proxy(repository, {
      get: (store, name: keyof DynamoDbBatchRepository) => {
        if (name === 'hold') return async (holdid: string) => (readsOfTheHold++ === 0 ? undefined : store.hold(holdid));
        const member = store[name];
        return typeof member === 'function' ? (member as (...args: unknown[]) => unknown).bind(store) : member;
      },
    });
    const { created, hold } = await placeHold(request, racing);
    expect({ created, lines: hold.lines.map(({ batchref, qty }) => [batchref, qty]) }).toEqual({ created: false, lines: [[batch.ref, 2]] });
  });
});
