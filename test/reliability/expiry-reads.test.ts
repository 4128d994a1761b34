import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureExpiryReads } from '../../tools/bench/expiry-reads';
import { memoryStoreOfRecord } from '../../tools/simulate/memory-store';
import type { StoreOfRecord } from '../../tools/simulate/store-of-record';

/*
 * What lazy expiry reads at scale (docs/capacity.md, "Holds: what their cost depends on"): 750
 * batches and 29 carts, then four orders, their store calls counted. The setup is the bench's
 * (tools/bench/expiry-reads.ts), on the simulator's memory store, which answers DynamoDB's calls in
 * this process and is held to DynamoDB Local call by call (./memory-store.test.ts): against
 * DynamoDB Local the setup alone took most of a minute on a loaded machine. The bounds themselves
 * are tested against DynamoDB Local in test/integration/held-bounds.test.ts.
 */

describe('lazy expiry at scale, bounded by the batches whose bound has come', () => {
  let store: StoreOfRecord;
  beforeAll(() => {
    store = memoryStoreOfRecord();
  });
  afterAll(() => store.destroy());

  it('reads no holds for an order routed past 29 places of 30 whose carts all last, 25 SKUs each, and once they expire frees a place for it', async () => {
    const { routed, routedAfterExpiry, routedAgainAfterExpiry } = await measureExpiryReads(store.tables);

    expect(routed.answer).toBe('placed at loc29');
    // The stock of each SKU (the locations are read with it), and the take: no read of a hold's units.
    expect(routed.calls).toEqual({ Query: 25, TransactWriteItems: 1 });
    // The 30th place sold out to the orders before: the carts that expired at the first place make room for every line.
    expect(routedAfterExpiry.answer).toBe('placed at loc00');
    // Three reads of stock (and one of the locations, an hour old by the clock), the batches of the lines it
    // cannot place yet read in turns, given back and their bounds raised, 16 a round, and the take; the
    // order after it reads no hold.
    expect(routedAfterExpiry.calls).toEqual({ Query: 3 * 25 + 1 + 32 * 5, TransactWriteItems: 32 + 1, UpdateItem: 32 });
    expect(routedAgainAfterExpiry).toMatchObject({ answer: 'placed at loc00', calls: { Query: 25, TransactWriteItems: 1 } });
  });
});
