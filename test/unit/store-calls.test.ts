import { describe, expect, it } from 'vitest';
import { StoreUnavailable } from '../../domain/errors';
import { type DocumentSender, StoreCalls, defaultConflictRetryPolicy } from '../../functions/store/store-calls';
import { systemWorld } from '../../functions/store/world';

const noStore: DocumentSender = {
  send: (() => Promise.reject(new Error('no call is sent to wait'))) as DocumentSender['send'],
};

describe('a request waiting for work another request of its process started (a spread)', () => {
  it('goes on once that work is done', async () => {
    const calls = new StoreCalls(noStore, defaultConflictRetryPolicy, systemWorld, new AbortController().signal);
    let finish = () => {};
    const work = new Promise<void>((resolve) => (finish = resolve));
    const waiting = calls.waitFor(work);
    finish();
    await expect(waiting).resolves.toBeUndefined();
  });

  it('answers what that work answered', async () => {
    const calls = new StoreCalls(noStore, defaultConflictRetryPolicy, systemWorld, new AbortController().signal);
    await expect(calls.waitFor(Promise.resolve({ outcome: 'saved' }))).resolves.toEqual({ outcome: 'saved' });
  });

  it('waits no longer than its own deadline, and answers StoreUnavailable (503) then', async () => {
    const deadline = new AbortController();
    const calls = new StoreCalls(noStore, defaultConflictRetryPolicy, systemWorld, deadline.signal);
    const waiting = calls.waitFor(new Promise<void>(() => {}));
    deadline.abort(new Error('deadline passed'));
    await expect(waiting).rejects.toBeInstanceOf(StoreUnavailable);
  });
});
