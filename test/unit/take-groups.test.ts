import { describe, expect, it } from 'vitest';
import type { Batch } from '../../domain/model';
import { linesHeldTogether } from '../../functions/store/spread-batches';
import { MAX_LINES_PER_GROUP, TAKES_IN_FLIGHT_PER_BATCH, TakeGroups } from '../../functions/store/take-groups';

/** A transaction that ends when the test says so. */
const pending = <Result>() => {
  let end: (result: Result) => void = () => {};
  let fail: (error: unknown) => void = () => {};
  const promise = new Promise<Result>((resolve, reject) => ((end = resolve), (fail = reject)));
  return { promise, end, fail };
};

describe("a process's takes from one spread batch (docs/capacity.md, \"Takes grouped in one process\")", () => {
  it('sends each take alone while fewer than its limit are in flight on the batch, so a process with one request at a time never groups', async () => {
    const groups = new TakeGroups<string, string>();
    const sentAlone: string[] = [];
    const outcomes = await Promise.all(
      ['a', 'b', 'c'].map((take) =>
        groups.take('batch', take, take, async () => (sentAlone.push(take), `${take} saved`), async () => {
          throw new Error('no group when the takes do not wait');
        }),
      ),
    );
    expect(sentAlone).toEqual(['a', 'b', 'c']);
    expect(outcomes).toEqual(['a saved', 'b saved', 'c saved']);
  });

  it('groups the takes that wait, sends the first group when a transaction on the batch ends, and answers each its own outcome', async () => {
    const groups = new TakeGroups<string, string>();
    const inFlight = Array.from({ length: TAKES_IN_FLIGHT_PER_BATCH }, () => pending<string>());
    const sentTogether: (readonly string[])[] = [];
    const together = async (takes: readonly string[]) => (sentTogether.push(takes), takes.map((take) => `${take} in a group`));
    inFlight.forEach((transaction, index) => groups.take('batch', `alone-${index}`, `alone-${index}`, () => transaction.promise, together));
    const waiting = ['w1', 'w2', 'w3'].map((take) => groups.take('batch', take, take, () => Promise.reject(new Error('not alone')), together));
    const otherBatch = groups.take('other', 'x', 'x', async () => 'x alone', together);

    await expect(otherBatch).resolves.toBe('x alone');
    expect(sentTogether).toEqual([]);
    inFlight[0]?.end('alone-0 saved');
    expect(await Promise.all(waiting)).toEqual(['w1 in a group', 'w2 in a group', 'w3 in a group']);
    expect(sentTogether).toEqual([['w1', 'w2', 'w3']]);
  });

  it(`puts at most ${MAX_LINES_PER_GROUP} lines in a group, and never two takes of one line`, async () => {
    const groups = new TakeGroups<string, string>();
    const inFlight = Array.from({ length: TAKES_IN_FLIGHT_PER_BATCH }, () => pending<string>());
    const sentTogether: (readonly string[])[] = [];
    const together = async (takes: readonly string[]) => (sentTogether.push(takes), takes.map(() => 'saved'));
    inFlight.forEach((transaction, index) => groups.take('batch', `alone-${index}`, `alone-${index}`, () => transaction.promise, together));
    const takes = [...Array.from({ length: MAX_LINES_PER_GROUP + 1 }, (_, index) => `line-${index}`), 'line-0'];
    const waiting = takes.map((line, index) => groups.take('batch', line, `${line} (take ${index})`, () => Promise.reject(new Error('not alone')), together));

    inFlight.forEach((transaction) => transaction.end('saved'));
    await Promise.all(waiting);
    expect(sentTogether.map((group) => group.length)).toEqual([MAX_LINES_PER_GROUP, 2]);
    expect(sentTogether[1]).toEqual([`line-${MAX_LINES_PER_GROUP} (take ${MAX_LINES_PER_GROUP})`, `line-0 (take ${MAX_LINES_PER_GROUP + 1})`]);
  });

  it("fails every take of a group whose transaction fails, and goes on with the batch's next group", async () => {
    const groups = new TakeGroups<string, string>();
    const inFlight = Array.from({ length: TAKES_IN_FLIGHT_PER_BATCH }, () => pending<string>());
    const groupTransactions = [pending<string[]>(), pending<string[]>()];
    let sent = 0;
    const together = () => (groupTransactions[sent++] as { promise: Promise<string[]> }).promise;
    const notAlone = () => Promise.reject(new Error('not alone'));
    inFlight.forEach((transaction, index) => groups.take('batch', `alone-${index}`, `alone-${index}`, () => transaction.promise, together));
    const first = Array.from({ length: MAX_LINES_PER_GROUP }, (_, index) => groups.take('batch', `first-${index}`, `first-${index}`, notAlone, together));
    const second = groups.take('batch', 'second', 'second', notAlone, together);

    inFlight[0]?.end('saved');
    groupTransactions[0]?.fail(new Error('store unavailable'));
    const failed = await Promise.allSettled(first);
    expect(failed.map(({ status }) => status)).toEqual(Array(MAX_LINES_PER_GROUP).fill('rejected'));
    groupTransactions[1]?.end(['second saved']);
    await expect(second).resolves.toBe('second saved');
  });
});

describe('the lines of a group that one take of their sum carries', () => {
  const spread: Batch = { ref: 'b', sku: 's', qty: 100, available: 10, eta: null, pieces: [{ piece: 0, available: 4, held: 0 }, { piece: 1, available: 4, held: 0 }] };

  it('are those, from the first, that the batch as read holds together: the others go on their own', () => {
    expect(linesHeldTogether(spread, [3, 3, 3, 3])).toBe(3);
    expect(linesHeldTogether(spread, [4, 6, 1])).toBe(2);
  });

  it('are none when the first line alone is more than the batch holds as read', () => {
    expect(linesHeldTogether(spread, [11, 1])).toBe(0);
  });
});
