import { describe, expect, it } from 'vitest';
import { Chance } from '../../tools/simulate/chance';
import { FollowSchedule, type PendingCall, PriorityChangePoints, RandomWalk, Waiting, currentActor } from '../../tools/simulate/scheduler';
import { itemsMeet, shapeOf } from '../../tools/simulate/store-seam';
import { drawWorkload } from '../../tools/simulate/workload';
import { TransactWriteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';

const call = (actor: string, made = 1): PendingCall => ({
  id: `${actor}#${made}`,
  actor,
  command: { input: {} },
  shape: { operation: 'Get', items: [], writes: false, checks: 0, text: '' },
  resolve: () => {},
  reject: () => {},
});

describe('the simulator', () => {
  it('draws the same numbers and the same workload from the same seed, and others from another', () => {
    const draws = (seed: number) => Array.from({ length: 5 }, () => Chance.stream(seed, 'x').next());
    expect(draws(1)).toEqual(draws(1));
    expect(drawWorkload(Chance.stream(3, 'workload'))).toEqual(drawWorkload(Chance.stream(3, 'workload')));
    expect(drawWorkload(Chance.stream(3, 'workload'))).not.toEqual(drawWorkload(Chance.stream(4, 'workload')));
    expect(Chance.stream(1, 'workload').next()).not.toEqual(Chance.stream(1, 'schedule').next());
  });

  it('PCT runs the waiting request of highest priority until a change point drops it below the others', () => {
    const pending = [call('r1'), call('r2'), call('r3')];
    const withoutChange = new PriorityChangePoints(new Chance(5), 1, 100);
    const first = withoutChange.choose(pending, 0);
    for (let step = 1; step < 20; step++) expect(withoutChange.choose(pending, step)).toBe(first);

    const depthTwo = new PriorityChangePoints(new Chance(5), 2, 1);
    const before = depthTwo.choose(pending, 0);
    expect(depthTwo.choose(pending, 1)).not.toBe(before);
  });

  it('a recorded schedule is followed, and calls it never saw go after it', () => {
    const follow = new FollowSchedule(['r2#1', 'r1#1']);
    expect(follow.choose([call('r1'), call('r2')]).id).toBe('r2#1');
    expect(follow.choose([call('r3'), call('r1')]).id).toBe('r1#1');
    expect(follow.choose([call('r4'), call('r3')]).id).toBe('r4#1');
  });

  it('a slow call waits out its delay on the run\'s clock before it waits its turn, while a call made after it waits at once', async () => {
    let now = 1_000;
    const waiting = new Waiting(
      () => now,
      (id) => (id === 'r1#1' ? 40 : undefined),
    );
    const shape = { operation: 'Get', items: [], writes: false, checks: 0, text: '' };
    currentActor.run('r1', () => void waiting.call({ input: {} }, shape));
    currentActor.run('r2', () => void waiting.call({ input: {} }, shape));
    expect(waiting.pending.map(({ id }) => id)).toEqual(['r2#1']);
    expect(waiting.nextWake()).toBe(1_040);
    now = 1_039;
    expect(waiting.wakeUntil(now)).toBe(0);
    now = 1_040;
    expect(waiting.wakeUntil(now)).toBe(1);
    expect(waiting.pending.map(({ id }) => id)).toEqual(['r2#1', 'r1#1']);
  });

  it('a random walk picks among every waiting call', () => {
    const walk = new RandomWalk(new Chance(9));
    const picked = new Set(Array.from({ length: 50 }, () => walk.choose([call('r1'), call('r2'), call('r3')]).actor));
    expect(picked).toEqual(new Set(['r1', 'r2', 'r3']));
  });

  it('knows which items a call touches, so that calls on one item are told apart from calls on others', () => {
    const take = shapeOf(
      new TransactWriteCommand({
        TransactItems: [
          { Update: { TableName: 't', Key: { pk: 'SKU#s1', sk: 'STOCK#b1' }, UpdateExpression: 'SET a = :a' } },
          { Put: { TableName: 't', Item: { pk: 'ORDER#o1', sk: 'LINE#s1' } } },
        ],
      }),
    );
    const read = shapeOf(new QueryCommand({ TableName: 't', KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'SKU#s1' } }));
    expect(take).toMatchObject({ operation: 'TransactWrite', items: ['SKU#s1 STOCK#b1', 'ORDER#o1 LINE#s1'], writes: true });
    expect(read).toMatchObject({ operation: 'Query', items: ['SKU#s1'], writes: false });
    expect(itemsMeet(take.items, read.items)).toBe(true);
    expect(itemsMeet(['SKU#s2 STOCK#b1'], read.items)).toBe(false);
  });
});
