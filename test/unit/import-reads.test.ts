import { describe, expect, it } from 'vitest';
import type { Batch } from '../../domain/model';
import { PK } from '../../functions/store/fields';
import { adjustmentKey } from '../../functions/store/adjustments';
import { batchReferenceKey, newBatchWrites } from '../../functions/store/batches';
import { importRowsRead } from '../../functions/store/import-reads';
import { StoreCalls, defaultConflictRetryPolicy, type DocumentSender } from '../../functions/store/store-calls';
import { systemWorld } from '../../functions/store/world';

/*
 * The one read of a chunk of an import's rows (functions/store/import-reads.ts) when DynamoDB
 * leaves keys unread, which DynamoDB Local never does: a client that answers so on purpose.
 */

const TABLE = 'imports';
const batch: Batch = { ref: 'b1', sku: 'LAMP', qty: 7, available: 7, eta: '2027-03-01' };
const referenceItem = newBatchWrites(TABLE, batch, Date.parse('2026-12-01T00:00:00Z'), 'local', { addedBy: 'i1#1' }).map((write) => write.Put?.Item).find((item) => item?.[PK] === batchReferenceKey('b1')[PK]);

/** A client that answers one BatchGetItem: these items read, these keys left unread. */
const answering = (items: Record<string, unknown>[], unread: Record<string, unknown>[]): DocumentSender => ({
  send: (async () => ({ Responses: { [TABLE]: items }, UnprocessedKeys: unread.length > 0 ? { [TABLE]: { Keys: unread } } : {} })) as DocumentSender['send'],
});

describe('the read of a chunk of rows', () => {
  it('leaves out the refs and change ids DynamoDB left unread, so that their rows read alone, and says what it read', async () => {
    expect(referenceItem).toBeDefined();
    const client = answering([referenceItem as Record<string, unknown>], [batchReferenceKey('b2'), adjustmentKey('i1#2')]);
    const read = await importRowsRead(new StoreCalls(client, defaultConflictRetryPolicy, systemWorld), client, TABLE, ['b1', 'b2', 'b3'], ['i1#1', 'i1#2']);

    expect(read.batches).toEqual(new Map([
      ['b1', { sku: 'LAMP', location: 'default', qty: 7, eta: '2027-03-01', changedAt: '2026-12-01T00:00:00.000Z', addedBy: 'i1#1' }],
      ['b3', null],
    ]));
    expect(read.adjusted).toEqual(new Map([['i1#1', false]]));
  });
});
