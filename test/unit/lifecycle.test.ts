import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ship } from '../../domain/shipment-services';
import { BatchNotFound, LineNotFound, OrderNotFound, StoreUnavailable, UnknownSku } from '../../domain/errors';
import { type Allocation, type Batch, afterMoves, allocatedOf, changedBatch, linesToTakeOff, newBatch, stockLevels } from '../../domain/model';
import { planLineMoves } from '../../domain/routing';
import { type BatchChangeOutcome, changeBatch } from '../../domain/batch-changes';
import { addBatch, allocate, batchStatus, cancelAllocation, orderAllocations, skuStock } from '../../domain/services';
import { placeHold } from '../../domain/hold-services';
import { FakeRepository } from '../support/fake-repository';

const shop = async (...batches: Array<[ref: string, qty: number, eta: string | null]>) => {
  const repository = new FakeRepository();
  for (const [ref, qty, eta] of batches) await addBatch({ ref, sku: 'LAMP', qty, eta }, repository);
  return repository;
};

const line = (orderid: string, qty: number, batchref = 'b1'): Allocation => ({ orderid, sku: 'LAMP', qty, batchref });

describe('the rules of a batch that changes', () => {
  it('keeps its lines when its qty changes, so what is available moves with the qty', () => {
    const batch = { ...newBatch({ ref: 'b1', sku: 'LAMP', qty: 10, eta: null }), available: 4 };
    expect(changedBatch(batch, { qty: 7 })).toEqual({ ...batch, qty: 7, available: 1 });
    expect(changedBatch(batch, { qty: 3 })).toEqual({ ...batch, qty: 3, available: -3 });
    expect(allocatedOf(changedBatch(batch, { qty: 3 }))).toBe(6);
    expect(changedBatch(batch, { eta: '2027-01-01' })).toEqual({ ...batch, eta: '2027-01-01' });
  });

  it('takes lines off a batch that holds more than its qty newest first, until the rest fits', () => {
    const batch = { ...newBatch({ ref: 'b1', sku: 'LAMP', qty: 10, eta: null }), qty: 4, available: -6 };
    const newestFirst = [line('o4', 1), line('o3', 2), line('o2', 5), line('o1', 2)];
    expect(linesToTakeOff(batch, newestFirst)).toEqual([line('o4', 1), line('o3', 2), line('o2', 5)]);
    expect(linesToTakeOff({ ...batch, available: 0 }, newestFirst)).toEqual([]);
  });

  it('plans each line taken off to the batch the rule picks as the moves before it leave the others, or out of its order', () => {
    const batch = (ref: string, available: number, eta: string | null): Batch => ({ ref, sku: 'LAMP', qty: 10, available, eta });
    const shrunk = { ...batch('b1', -9, null), qty: 1 };
    // The shrunk batch is never a candidate, whatever it is read as.
    const others = [{ ...shrunk, available: 50 }, batch('later', 6, '2027-06-01'), batch('sooner', 3, '2027-01-01')];
    const lines = [line('o4', 2), line('o3', 2), line('o2', 5), line('o1', 20)];

    expect(planLineMoves(shrunk, lines, others, [])).toEqual([
      { line: line('o4', 2), to: 'sooner' },
      // 1 left in the sooner shipment: the later one.
      { line: line('o3', 2), to: 'later' },
      { line: line('o2', 5), to: null },
      { line: line('o1', 20), to: null },
    ]);
    // A line that fits what an earlier, larger one could not fit still goes there.
    expect(planLineMoves(shrunk, [line('o2', 5), line('o3', 1)], others.slice(2), [])).toEqual([
      { line: line('o2', 5), to: null },
      { line: line('o3', 1), to: 'sooner' },
    ]);
  });

  it('leaves the batches as the moves written leave them: the shrunk one given every line back, each other short of those it took', () => {
    const shrunk: Batch = { ref: 'b1', sku: 'LAMP', qty: 1, available: -6, eta: null };
    const found: Batch[] = [
      { ref: 'shelf', sku: 'LAMP', qty: 4, available: 2, eta: null, held: 2 },
      { ref: 'other', sku: 'LAMP', qty: 4, available: 2, eta: null },
    ];
    const moves = [{ line: line('o2', 2), to: 'shelf' }, { line: line('o1', 3), to: null }];

    expect(afterMoves(shrunk, found, moves)).toEqual({
      from: { ...shrunk, available: -1 },
      batches: [{ ref: 'shelf', sku: 'LAMP', qty: 4, available: 0, eta: null, held: 2 }, found[1]],
    });
  });

  it('plans the moves that follow a group, against the batches as the group leaves them, as it planned them in one', () => {
    const batchArbitrary = fc.record({ available: fc.integer({ min: 0, max: 12 }), eta: fc.constantFrom(null, '2027-01-01', '2027-06-01') });
    fc.assert(
      fc.property(fc.array(batchArbitrary, { maxLength: 4 }), fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 12 }), fc.nat(), (batches, qtys, cut) => {
        const others = batches.map(({ available, eta }, index): Batch => ({ ref: `b${index + 2}`, sku: 'LAMP', qty: 12, available, eta }));
        const lines = qtys.map((qty, index) => line(`o${index}`, qty));
        const shrunk: Batch = { ref: 'b1', sku: 'LAMP', qty: 0, available: -qtys.reduce((sum, qty) => sum + qty, 0), eta: null };
        const plan = planLineMoves(shrunk, lines, others, []);
        const at = cut % (plan.length + 1);
        const { from, batches: left } = afterMoves(shrunk, others, plan.slice(0, at));
        expect(planLineMoves(from, lines.slice(at), left, [])).toEqual(plan.slice(at));
      }),
    );
  });

  it('counts stock on the shelf and incoming apart, with the batches in the order allocation prefers', () => {
    const batch = (ref: string, available: number, eta: string | null): Batch => ({ ref, sku: 'LAMP', qty: 10, available, eta });
    const levels = stockLevels('LAMP', [batch('late', 5, '2027-03-01'), batch('shelf', 2, null), batch('soon', 4, '2027-01-01')]);
    expect(levels).toEqual({
      sku: 'LAMP',
      inStock: 2,
      incoming: 9,
      held: 0,
      nextEta: '2027-01-01',
      onHand: 10,
      committed: 8,
      batches: [batch('shelf', 2, null), batch('soon', 4, '2027-01-01'), batch('late', 5, '2027-03-01')],
      locations: [{ location: 'default', inStock: 2, incoming: 9, held: 0, nextEta: '2027-01-01', onHand: 10, committed: 8 }],
    });
  });
});

describe('reading and cancelling', () => {
  it("reads an order's lines sorted by sku, and refuses an order with none", async () => {
    const repository = await shop(['b1', 10, null]);
    await addBatch({ ref: 'c1', sku: 'CHAIR', qty: 10, eta: null }, repository);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 1 }, repository);
    await allocate({ orderid: 'o1', sku: 'CHAIR', qty: 2 }, repository);
    expect(await orderAllocations('o1', repository)).toEqual([
      { orderid: 'o1', sku: 'CHAIR', qty: 2, batchref: 'c1', location: 'default' },
      { orderid: 'o1', sku: 'LAMP', qty: 1, batchref: 'b1', location: 'default' },
    ]);
    await expect(orderAllocations('o2', repository)).rejects.toThrow(OrderNotFound);
  });

  it('gives a cancelled line its stock back, refuses a repeat, and lets the line be allocated again with another qty', async () => {
    const repository = await shop(['b1', 10, null]);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 4 }, repository);

    await cancelAllocation('o1', 'LAMP', repository);

    expect(repository.batches.get('b1')?.available).toBe(10);
    await expect(cancelAllocation('o1', 'LAMP', repository)).rejects.toThrow(LineNotFound);
    expect(await allocate({ orderid: 'o1', sku: 'LAMP', qty: 7 }, repository)).toEqual({ batchref: 'b1', location: 'default', created: true });
  });

  it('reads a batch by reference, and the stock of a SKU whose every unit is on lines (on hand and committed), then shipped (none)', async () => {
    const repository = await shop(['b1', 2, null]);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 2 }, repository);
    expect(await batchStatus('b1', repository)).toEqual({ ref: 'b1', sku: 'LAMP', qty: 2, available: 0, eta: null });
    await expect(batchStatus('nope', repository)).rejects.toThrow(BatchNotFound);
    const none = { inStock: 0, incoming: 0, held: 0, nextEta: null };
    expect(await skuStock('LAMP', repository)).toEqual({
      sku: 'LAMP',
      ...none,
      onHand: 2,
      committed: 2,
      batches: [],
      locations: [{ location: 'default', ...none, onHand: 2, committed: 2 }],
    });
    await ship({ shipmentid: 'parcel-1', orderid: 'o1', lines: [{ sku: 'LAMP', qty: 2 }] }, repository);
    expect(await skuStock('LAMP', repository)).toEqual({ sku: 'LAMP', ...none, onHand: 0, committed: 0, batches: [], locations: [] });
    await expect(skuStock('CHAIR', repository)).rejects.toThrow(UnknownSku);
  });
});

describe('changing a batch', () => {
  it('moves no line for a new eta or a larger qty', async () => {
    const repository = await shop(['b1', 10, null]);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 4 }, repository);
    expect(await changeBatch('b1', { eta: '2027-01-01', qty: 20 }, repository)).toEqual({
      batch: { ref: 'b1', sku: 'LAMP', qty: 20, available: 16, eta: '2027-01-01' },
      reallocated: [],
    });
  });

  it('takes the newest lines off a batch that shrank and allocates them again by the normal rule', async () => {
    const repository = await shop(['b1', 10, null], ['later', 10, '2027-06-01'], ['sooner', 3, '2027-01-01']);
    for (const [orderid, qty] of [['o1', 4], ['o2', 3], ['o3', 2]] as const) await allocate({ orderid, sku: 'LAMP', qty }, repository);

    const { batch, reallocated } = await changeBatch('b1', { qty: 5 }, repository);

    // 9 on a batch of 5: o3 (2) then o2 (3) come off; o3 fits the sooner shipment, o2 then only the later one.
    expect(reallocated).toEqual([
      { orderid: 'o3', sku: 'LAMP', qty: 2, from: 'b1', batchref: 'sooner' },
      { orderid: 'o2', sku: 'LAMP', qty: 3, from: 'b1', batchref: 'later' },
    ]);
    expect(batch).toEqual({ ref: 'b1', sku: 'LAMP', qty: 5, available: 1, eta: null });
    expect(repository.lines.get(JSON.stringify(['o1', 'LAMP']))?.batchref).toBe('b1');
  });

  it('removes a line from its order when no batch can take it whole, and empties a batch set to 0', async () => {
    const repository = await shop(['b1', 10, null], ['small', 2, '2027-01-01']);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 4 }, repository);
    await allocate({ orderid: 'o2', sku: 'LAMP', qty: 1 }, repository);

    const { batch, reallocated } = await changeBatch('b1', { qty: 0 }, repository);

    expect(reallocated).toEqual([
      { orderid: 'o2', sku: 'LAMP', qty: 1, from: 'b1', batchref: 'small' },
      { orderid: 'o1', sku: 'LAMP', qty: 4, from: 'b1', batchref: null },
    ]);
    expect(batch).toMatchObject({ qty: 0, available: 0 });
    expect(await repository.allocationOf('o1', 'LAMP')).toBeUndefined();
    expect(repository.batches.get('small')?.available).toBe(1);
  });

  it('answers an exact repeat with nothing reallocated', async () => {
    const repository = await shop(['b1', 10, null], ['b2', 10, null]);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 8 }, repository);
    expect((await changeBatch('b1', { qty: 5 }, repository)).reallocated).toHaveLength(1);
    expect(await changeBatch('b1', { qty: 5 }, repository)).toEqual({
      batch: { ref: 'b1', sku: 'LAMP', qty: 5, available: 5, eta: null },
      reallocated: [],
    });
  });

  it('finishes, when repeated, a change that was cut off between two writes of moves', async () => {
    const repository = await shop(['b1', 10, null], ['b2', 10, null]);
    for (const orderid of ['o1', 'o2', 'o3', 'o4', 'o5']) await allocate({ orderid, sku: 'LAMP', qty: 2 }, repository);
    repository.movesPerWrite = 2;
    const move = repository.moveAllocations.bind(repository);
    let writes = 0;
    repository.moveAllocations = async (...args) => {
      if (++writes === 2) throw new StoreUnavailable('The request ran out of time');
      return move(...args);
    };
    await expect(changeBatch('b1', { qty: 1 }, repository)).rejects.toThrow(StoreUnavailable);
    // The batch remembers the change: it holds more than its qty. The first write's two moves stay.
    expect(repository.batches.get('b1')).toMatchObject({ qty: 1, available: -5 });

    const { batch, reallocated } = await changeBatch('b1', { qty: 1 }, repository);

    expect(reallocated.map(({ orderid }) => orderid)).toEqual(['o3', 'o2', 'o1']);
    expect(batch).toMatchObject({ qty: 1, available: 1 });
    expect(repository.batches.get('b2')?.available).toBe(0);
  });

  it('writes none of the moves of a write in which another request changed a line, then reads again and carries on', async () => {
    const repository = await shop(['b1', 10, null], ['b2', 10, null]);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 3 }, repository);
    await allocate({ orderid: 'o2', sku: 'LAMP', qty: 3 }, repository);
    const move = repository.moveAllocations.bind(repository);
    const answers: string[] = [];
    repository.moveAllocations = async (...args) => {
      // Another request cancels o2 between this change's read of the lines and its first write.
      if (answers.length === 0) await cancelAllocation('o2', 'LAMP', repository);
      const result = await move(...args);
      answers.push(result.outcome);
      return result;
    };

    const { batch, reallocated } = await changeBatch('b1', { qty: 1 }, repository);

    // The first write would have moved o2 and o1: o2's change cancelled it whole, o1's move with it.
    expect(answers).toEqual(['changed', 'saved']);
    expect(reallocated).toEqual([{ orderid: 'o1', sku: 'LAMP', qty: 3, from: 'b1', batchref: 'b2' }]);
    expect(batch).toMatchObject({ qty: 1, available: 1 });
    expect(repository.batches.get('b2')?.available).toBe(7);
  });

  it('moves every line where it would go alone, however few moves a write carries', async () => {
    const outcomes: Array<{ outcome: BatchChangeOutcome; stored: Batch[]; lines: Allocation[]; writes: number }> = [];
    for (const movesPerWrite of [1, 2, 3, Number.POSITIVE_INFINITY]) {
      const repository = await shop(['b1', 20, null], ['sooner', 2, '2027-01-01'], ['later', 6, '2027-06-01'], ['shelf', 3, null]);
      for (const [orderid, qty] of [['o1', 7], ['o2', 2], ['o3', 3], ['o4', 1], ['o5', 2], ['o6', 4]] as const) {
        await allocate({ orderid, sku: 'LAMP', qty }, repository);
      }
      // The shelf's units are all held by a hold that has expired: the change gives them back before it plans its moves.
      const expired = { holdid: 'h1', qty: 3, expiresAt: '2026-11-25T09:00:00.000Z' };
      repository.batches.set('shelf', { ...repository.batches.get('shelf')!, available: 0, held: 3 });
      repository.held.set(JSON.stringify(['h1', 'shelf']), { ...expired, ref: 'shelf' });
      repository.movesPerWrite = movesPerWrite;
      const move = repository.moveAllocations.bind(repository);
      let writes = 0;
      repository.moveAllocations = async (...args) => {
        writes++;
        return move(...args);
      };
      const outcome = await changeBatch('b1', { qty: 1 }, repository);
      outcomes.push({ outcome, stored: [...repository.batches.values()], lines: [...repository.lines.values()], writes });
    }

    // 19 on a batch of 1, newest first: o6 fits only the later shipment, o5 and o4 the shelf, o3 none
    // (it leaves its order), o2 the sooner shipment, o1 none.
    const [first, ...others] = outcomes;
    expect(first?.outcome.reallocated).toEqual([
      { orderid: 'o6', sku: 'LAMP', qty: 4, from: 'b1', batchref: 'later' },
      { orderid: 'o5', sku: 'LAMP', qty: 2, from: 'b1', batchref: 'shelf' },
      { orderid: 'o4', sku: 'LAMP', qty: 1, from: 'b1', batchref: 'shelf' },
      { orderid: 'o3', sku: 'LAMP', qty: 3, from: 'b1', batchref: null },
      { orderid: 'o2', sku: 'LAMP', qty: 2, from: 'b1', batchref: 'sooner' },
      { orderid: 'o1', sku: 'LAMP', qty: 7, from: 'b1', batchref: null },
    ]);
    expect(first?.stored).toEqual([
      { ref: 'b1', sku: 'LAMP', qty: 1, available: 1, eta: null },
      { ref: 'sooner', sku: 'LAMP', qty: 2, available: 0, eta: '2027-01-01' },
      { ref: 'later', sku: 'LAMP', qty: 6, available: 2, eta: '2027-06-01' },
      { ref: 'shelf', sku: 'LAMP', qty: 3, available: 0, eta: null },
    ]);
    const withoutWrites = ({ writes: _, ...rest }: (typeof outcomes)[number]) => rest;
    for (const outcome of others) expect(withoutWrites(outcome)).toEqual(withoutWrites(first!));
    // One write for each group of moves: none lost to a batch it had itself changed.
    expect(outcomes.map(({ writes }) => writes)).toEqual([6, 3, 2, 1]);
  });

  it('moves its lines onto units that expired holds set aside on another batch, however small its first line', async () => {
    const repository = await shop(['b1', 11, null], ['b2', 15, null]);
    for (const [orderid, qty] of [['o2', 10], ['o1', 1]] as const) await allocate({ orderid, sku: 'LAMP', qty }, repository);
    await placeHold({ holdid: 'h1', lines: [{ sku: 'LAMP', qty: 10 }], ttlSeconds: 60 }, repository);
    expect(repository.batches.get('b2')).toMatchObject({ available: 5, held: 10 });
    repository.now += 60_000;

    const { reallocated } = await changeBatch('b1', { qty: 0 }, repository);

    expect(reallocated.map(({ orderid, batchref }) => ({ orderid, batchref }))).toEqual([
      { orderid: 'o1', batchref: 'b2' },
      { orderid: 'o2', batchref: 'b2' },
    ]);
  });

  it('moves its lines onto units that more expired holds set aside than one write gives back', async () => {
    const repository = await shop(['b1', 6, null], ['b2', 6, null]);
    for (const orderid of ['o1', 'o2', 'o3']) await allocate({ orderid, sku: 'LAMP', qty: 2 }, repository);
    // Every unit of b2 held by six holds of 1, all expired; a give-back frees two of them at a time.
    for (let hold = 1; hold <= 6; hold++) await placeHold({ holdid: `h${hold}`, lines: [{ sku: 'LAMP', qty: 1 }], ttlSeconds: 60 }, repository);
    expect(repository.batches.get('b2')).toMatchObject({ available: 0, held: 6 });
    repository.now += 60_000;
    repository.holdsFreedPerWrite = 2;

    const { reallocated } = await changeBatch('b1', { qty: 0 }, repository);

    expect(reallocated.map(({ orderid, batchref }) => ({ orderid, batchref }))).toEqual([
      { orderid: 'o3', batchref: 'b2' },
      { orderid: 'o2', batchref: 'b2' },
      { orderid: 'o1', batchref: 'b2' },
    ]);
    expect(repository.batches.get('b2')).toMatchObject({ available: 0 });
  });

  it('refuses an unknown batch', async () => {
    await expect(changeBatch('nope', { qty: 1 }, new FakeRepository())).rejects.toThrow(BatchNotFound);
  });
});

describe('a batch that shrinks under more holds than its change carries', () => {
  it('ends the expired holds on their own first, and the active ones it needs in the change\'s own write', async () => {
    const repository = await shop(['b1', 4, null]);
    await placeHold({ holdid: 'expiring', lines: [{ sku: 'LAMP', qty: 1 }], ttlSeconds: 60 }, repository);
    await placeHold({ holdid: 'lasting', lines: [{ sku: 'LAMP', qty: 3 }], ttlSeconds: 600 }, repository);
    repository.now += 120_000;
    repository.holdEndingsPerChange = 1;
    const changes: string[][] = [];
    const changeWrite = repository.changeBatch.bind(repository);
    repository.changeBatch = async (batch, changed, ending = [], now) => {
      const written = await changeWrite(batch, changed, ending, now);
      if (written.outcome === 'saved') changes.push(ending.map(({ hold }) => hold.holdid));
      return written;
    };

    const { batch } = await changeBatch('b1', { qty: 0 }, repository);

    expect(batch).toMatchObject({ qty: 0, available: 0 });
    expect(changes).toEqual([['lasting']]);
    expect([repository.holds.get('expiring')?.status, repository.holds.get('lasting')?.status]).toEqual(['expired', 'released']);
  });
});
