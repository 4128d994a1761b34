import { describe, expect, it } from 'vitest';
import { OutOfStock } from '../../domain/errors';
import { type HeldUnits, type Hold, batchesToFree, earliestHeldExpiry, expiryAfter, givenBack, mayHoldExpiredUnits, statusAt } from '../../domain/holds';
import { type Batch, allocatedOf, hasStockLeft } from '../../domain/model';
import { eligibilityOf, rankBatchesForLine } from '../../domain/routing';
import { holdsToEnd } from '../../domain/hold-services';
import { MAX_BATCHES_FREED_PER_REQUEST, MAX_BATCHES_FREED_PER_ROUND } from '../../domain/lazy-expiry';
import { allocate } from '../../domain/services';
import { allocateOrder } from '../../domain/order-services';
import { FakeRepository } from '../support/fake-repository';

const NOW = Date.parse('2026-11-25T10:00:00.000Z');
const SECOND = 1000;

const hold = (status: Hold['status'], expiresAt: string): Hold => ({
  holdid: 'cart-1',
  lines: [{ sku: 'LAMP', qty: 2, batchref: 'lamp-1' }],
  status,
  expiresAt,
});

const active: HeldUnits = { holdid: 'cart-1', qty: 2, expiresAt: new Date(NOW + SECOND).toISOString() };
const expired: HeldUnits = { holdid: 'cart-2', qty: 4, expiresAt: new Date(NOW - SECOND).toISOString() };

/** A batch of 10 with 3 units on lines, 2 held until a second from now and 4 by a hold that expired a second ago. */
const batch: Batch = { ref: 'lamp-1', sku: 'LAMP', qty: 10, available: 1, eta: null, held: 6 };

describe('a hold', () => {
  it('expires after its time to live, to the millisecond, in UTC', () => {
    expect(expiryAfter(NOW, 900)).toBe('2026-11-25T10:15:00.000Z');
  });

  it('reads expired the moment its expiresAt passes, whatever has run since', () => {
    const expiresAt = new Date(NOW).toISOString();
    expect(statusAt(hold('active', expiresAt), NOW - 1)).toBe('active');
    expect(statusAt(hold('active', expiresAt), NOW)).toBe('expired');
  });

  it('keeps the status it ended with, however late it is read', () => {
    const expiresAt = new Date(NOW).toISOString();
    for (const status of ['confirmed', 'released', 'expired'] as const) {
      expect(statusAt(hold(status, expiresAt), NOW + 86_400 * SECOND)).toBe(status);
    }
  });
});

describe('a batch with holds', () => {
  it('counts as allocated only the units on lines: qty = available + allocated + held', () => {
    expect(allocatedOf(batch)).toBe(3);
    expect(allocatedOf({ ...batch, held: undefined })).toBe(9);
  });

  it('offers the units of an expired hold to the next line once they are given back', () => {
    const asFound = givenBack(batch, [expired]);
    expect(asFound).toEqual({ ...batch, available: 5, held: 2 });
    expect(allocatedOf(asFound)).toBe(3);
    expect(rankBatchesForLine([batch], { orderid: 'order-1', sku: 'LAMP', qty: 5 }, eligibilityOf([], {}))).toEqual([]);
    expect(rankBatchesForLine([asFound], { orderid: 'order-1', sku: 'LAMP', qty: 5 }, eligibilityOf([], {}))).toEqual([asFound]);
  });

  it('counts no units held once every hold on it is given back', () => {
    expect(givenBack(batch, [active, expired])).toEqual({ ref: 'lamp-1', sku: 'LAMP', qty: 10, available: 7, eta: null });
  });
  it('has stock left while a unit is available or held, and none while a change of its qty owes units', () => {
    expect(hasStockLeft({ ...batch, available: 0 })).toBe(true);
    expect(hasStockLeft({ ...batch, available: 0, held: undefined })).toBe(false);
    expect(hasStockLeft({ ...batch, available: -1 })).toBe(false);
  });
});

describe('lazy expiry', () => {
  const shipment: Batch = { ref: 'lamp-2', sku: 'LAMP', qty: 10, available: 10, eta: '2026-12-01' };

  it('reads the holds of a batch only when the units a line needs may be behind them', () => {
    expect(batchesToFree(5, [batch, shipment], NOW, shipment)).toEqual([batch]);
    expect(batchesToFree(5, [batch], NOW, undefined)).toEqual([batch]);
    expect(batchesToFree(1, [batch, shipment], NOW, batch)).toEqual([]);
    expect(batchesToFree(5, [{ ...batch, held: undefined }, shipment], NOW, shipment)).toEqual([]);
  });

  it('never reads the holds of a batch that the rule prefers less than the one it picked', () => {
    const laterShipment: Batch = { ...shipment, ref: 'lamp-3', available: 0, held: 10, eta: '2027-01-01' };
    expect(batchesToFree(5, [shipment, laterShipment], NOW, shipment)).toEqual([]);
  });

  it('leaves unread a batch whose holds all last, by the bound the store keeps on their expiry', () => {
    const later = new Date(NOW + 60_000).toISOString();
    expect(batchesToFree(5, [{ ...batch, heldFrom: later }], NOW)).toEqual([]);
    expect(batchesToFree(5, [{ ...batch, heldFrom: new Date(NOW).toISOString() }], NOW)).toHaveLength(1);
  });

  it('bounds a spread batch by the lowest bound of its item and its pieces', () => {
    const later = new Date(NOW + 60_000).toISOString();
    const earlier = new Date(NOW - 1_000).toISOString();
    const spread: Batch = { ...batch, heldFrom: later, pieces: [{ piece: 0, available: 0, held: 2 }, { piece: 1, available: 0, held: 1, heldFrom: earlier }] };
    expect(earliestHeldExpiry(spread)).toBe(earlier);
    expect(mayHoldExpiredUnits(spread, NOW)).toBe(true);
    expect(mayHoldExpiredUnits({ ...spread, pieces: [{ piece: 0, available: 0, held: 3 }] }, NOW)).toBe(false);
  });

  it('reads a batch that holds units with no bound on any of its items, as units held before bounds were kept', () => {
    expect(earliestHeldExpiry(batch)).toBeUndefined();
    expect(mayHoldExpiredUnits(batch, NOW)).toBe(true);
    expect(mayHoldExpiredUnits({ ...batch, held: undefined, heldFrom: new Date(NOW - 1_000).toISOString() }, NOW)).toBe(false);
  });
});

describe('lazy expiry for an order over many batches', () => {
  /** Batches of a unit each, every unit held: by carts that last on the first `lasting`, by expired ones on the rest. */
  const heldBatches = (count: number, lasting: number) => {
    const repository = new FakeRepository();
    repository.now = NOW;
    for (let index = 1; index <= count; index++) {
      const ref = `lamp-${String(index).padStart(3, '0')}`;
      repository.batches.set(ref, { ref, sku: 'LAMP', qty: 1, available: 0, eta: null, held: 1 });
      const expiresAt = new Date(index <= lasting ? NOW + 60_000 : NOW - 1).toISOString();
      repository.held.set(JSON.stringify([`cart-${index}`, ref]), { holdid: `cart-${index}`, qty: 1, expiresAt, ref });
    }
    return repository;
  };

  it('reads the batches a round leaves out in the rounds after it, and takes an expired cart found there', async () => {
    const repository = heldBatches(MAX_BATCHES_FREED_PER_ROUND + 4, MAX_BATCHES_FREED_PER_ROUND);

    const outcome = await allocateOrder({ orderid: 'o1', lines: [{ sku: 'LAMP', qty: 1 }] }, repository);

    expect(outcome.lines.map(({ batchref }) => batchref)).toEqual([`lamp-0${MAX_BATCHES_FREED_PER_ROUND + 1}`]);
  });

  it('reads past the most a request reads for a line its plan would refuse', async () => {
    const repository = heldBatches(MAX_BATCHES_FREED_PER_REQUEST + 1, MAX_BATCHES_FREED_PER_REQUEST);

    const outcome = await allocateOrder({ orderid: 'o1', lines: [{ sku: 'LAMP', qty: 1 }] }, repository);

    expect(outcome.lines.map(({ batchref }) => batchref)).toEqual([`lamp-0${MAX_BATCHES_FREED_PER_REQUEST + 1}`]);
  });

  it('reads past the most a request reads for a line its plan would put on a shipment', async () => {
    const repository = heldBatches(MAX_BATCHES_FREED_PER_REQUEST + 1, MAX_BATCHES_FREED_PER_REQUEST);
    repository.batches.set('lamp-ship', { ref: 'lamp-ship', sku: 'LAMP', qty: 1, available: 1, eta: '2026-12-24' });

    const outcome = await allocateOrder({ orderid: 'o1', lines: [{ sku: 'LAMP', qty: 1 }] }, repository);

    expect(outcome.lines.map(({ batchref }) => batchref)).toEqual([`lamp-0${MAX_BATCHES_FREED_PER_REQUEST + 1}`]);
  });

  it('decides on what it has read, once it has read as many batches as a request may, to better a line it can place in stock', async () => {
    const repository = heldBatches(MAX_BATCHES_FREED_PER_REQUEST + 1, MAX_BATCHES_FREED_PER_REQUEST);
    repository.batches.set('lamp-zzz', { ref: 'lamp-zzz', sku: 'LAMP', qty: 1, available: 1, eta: null });

    const outcome = await allocateOrder({ orderid: 'o1', lines: [{ sku: 'LAMP', qty: 1 }] }, repository);

    expect(outcome.lines.map(({ batchref }) => batchref)).toEqual(['lamp-zzz']);
    expect(repository.batches.get(`lamp-0${MAX_BATCHES_FREED_PER_REQUEST + 1}`)).toMatchObject({ held: 1 });
  });
});

describe('an allocation against batches with holds', () => {
  const withHeldBatch = () => {
    const repository = new FakeRepository();
    repository.now = NOW;
    repository.batches.set(batch.ref, batch);
    for (const units of [active, expired]) repository.held.set(JSON.stringify([units.holdid, batch.ref]), { ...units, ref: batch.ref });
    return repository;
  };

  it('gives back the units of a hold that has expired, and takes them', async () => {
    const repository = withHeldBatch();
    expect(await allocate({ orderid: 'order-1', sku: 'LAMP', qty: 5 }, repository)).toEqual({ batchref: 'lamp-1', location: 'default', created: true });
    expect(repository.batches.get('lamp-1')).toEqual({ ...batch, available: 0, held: 2 });
    expect([...repository.held.values()].map(({ holdid }) => holdid)).toEqual(['cart-1']);
  });

  it('reads again when the expired hold it counted was given back by another request since its read, and takes its units', async () => {
    const repository = withHeldBatch();
    const shipment: Batch = { ref: 'lamp-2', sku: 'LAMP', qty: 10, available: 10, eta: '2026-12-01' };
    repository.batches.set(shipment.ref, shipment);
    // Read before the sweeper gave the expired hold back; the store is as it left it.
    repository.batches.set(batch.ref, { ...batch, available: 5, held: 2 });
    repository.held.delete(JSON.stringify([expired.holdid, batch.ref]));
    const stockOf = repository.stockOf.bind(repository);
    let reads = 0;
    repository.stockOf = async (sku) => {
      const stock = await stockOf(sku);
      return reads++ > 0 ? stock : { ...stock, batches: stock.batches.map((read) => (read.ref === batch.ref ? batch : read)) };
    };
    expect(await allocate({ orderid: 'order-1', sku: 'LAMP', qty: 5 }, repository)).toEqual({ batchref: 'lamp-1', location: 'default', created: true });
    expect(reads).toBe(2);
  });

  it('reads again for as long as each read finds the held units it was to free gone since, and takes them', async () => {
    const repository = new FakeRepository();
    repository.now = NOW;
    const shipment: Batch = { ref: 'lamp-2', sku: 'LAMP', qty: 10, available: 10, eta: '2026-12-01' };
    const longer: HeldUnits = { holdid: 'cart-3', qty: 4, expiresAt: new Date(NOW + 10 * SECOND).toISOString() };
    const lamp: Batch = { ref: 'lamp-1', sku: 'LAMP', qty: 9, available: 3, eta: null, held: 6 };
    repository.batches.set(shipment.ref, shipment);
    repository.held.set(JSON.stringify([longer.holdid, lamp.ref]), { ...longer, ref: lamp.ref });
    const stockOf = repository.stockOf.bind(repository);
    let reads = 0;
    repository.stockOf = async (sku) => {
      reads++;
      if (reads === 1) {
        // Read while the expired hold still held its 2 units; the sweeper gives them back at once.
        repository.batches.set(lamp.ref, { ...lamp, available: 5, held: 4 });
        return { ...(await stockOf(sku)), batches: [lamp, shipment] };
      }
      const stock = await stockOf(sku);
      if (reads === 2) {
        // Read once the longer hold has expired too, which the sweeper gives back before the request looks.
        repository.now = NOW + 20 * SECOND;
        repository.batches.set(lamp.ref, { ...lamp, available: 9, held: 0 });
        repository.held.clear();
      }
      return stock;
    };
    repository.now = NOW;
    expect(await allocate({ orderid: 'order-1', sku: 'LAMP', qty: 6 }, repository)).toEqual({ batchref: 'lamp-1', location: 'default', created: true });
    expect(reads).toBe(3);
  });

  it('leaves the units of an active hold alone', async () => {
    const repository = withHeldBatch();
    await expect(allocate({ orderid: 'order-1', sku: 'LAMP', qty: 6 }, repository)).rejects.toThrow(OutOfStock);
    expect(repository.batches.get('lamp-1')).toEqual({ ...batch, available: 5, held: 2 });
  });
});

describe('a change of a batch that must end its holds', () => {
  const cart: Hold = { holdid: 'cart-1', lines: [{ sku: 'LAMP', qty: 6, batchref: 'lamp-1' }], status: 'active', expiresAt: new Date(NOW + SECOND).toISOString() };
  /** As read: 10 units, 3 on lines and 6 held; lowered to none, it must free all 6. */
  const heldBatch: Batch = { ref: 'lamp-1', sku: 'LAMP', qty: 10, available: 1, eta: null, held: 6 };
  const withRecords = (records: boolean) => {
    const repository = new FakeRepository();
    repository.now = NOW;
    repository.holds.set(cart.holdid, cart);
    if (records) repository.held.set(JSON.stringify([cart.holdid, heldBatch.ref]), { holdid: cart.holdid, qty: 6, expiresAt: cart.expiresAt, ref: heldBatch.ref });
    return repository;
  };

  it('ends the holds whose records on the batch free the units it needs', async () => {
    expect((await holdsToEnd(heldBatch, 9, NOW, withRecords(true)))?.map(({ hold }) => hold.holdid)).toEqual(['cart-1']);
  });

  it('reads the batch again when the holds it finds free fewer units than the batch as read holds: those it read have ended, and another may hold the units now', async () => {
    expect(await holdsToEnd(heldBatch, 9, NOW, withRecords(false))).toBeUndefined();
  });
});
