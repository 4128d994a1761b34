import { AsyncLocalStorage } from 'node:async_hooks';
import type { Chance } from './chance';

/*
 * The one place a simulated request waits: every store call and every sleep of the code under test
 * parks here, and the run releases one at a time, chosen by its strategy. Between two releases a
 * request runs alone, so the order of store calls, and with it the whole run, is fixed by the seed.
 */

/** Which request (an attempt of a client's send: r5, its retry r5.2) the code running now serves. */
export const currentActor = new AsyncLocalStorage<string>();

export const actorNow = (): string => {
  const actor = currentActor.getStore();
  if (actor === undefined) throw new Error('A store call outside any simulated request');
  return actor;
};

/** What a store call is, as far as ordering goes: the items it reads or writes. */
export interface CallShape {
  /** The command's name without `Command`: TransactWrite, Query, Get, ... */
  readonly operation: string;
  /** `pk sk` of each item a transaction touches, at its place; `pk` alone for a Query's partition. */
  readonly items: readonly string[];
  readonly writes: boolean;
  /** Items a transaction only checks, which it does not change. */
  readonly checks: number;
  /** The story's line for the call: the operation and its items. */
  readonly text: string;
}

export interface PendingCall {
  /** `r5#3`: the third call of r5; stable while the run's requests are. */
  readonly id: string;
  readonly actor: string;
  readonly command: { readonly input: unknown };
  readonly shape: CallShape;
  readonly resolve: (output: unknown) => void;
  readonly reject: (error: unknown) => void;
}

interface Sleeper {
  readonly actor: string;
  readonly wakeAt: number;
  readonly order: number;
  readonly wake: () => void;
}

/** Picks which waiting call goes next. */
export interface Strategy {
  choose(pending: readonly PendingCall[], step: number): PendingCall;
}

const firstOf = (pending: readonly PendingCall[], actor: string): PendingCall =>
  pending.find((call) => call.actor === actor) as PendingCall;

/** Uniform choice among the waiting calls. */
export class RandomWalk implements Strategy {
  constructor(private readonly chance: Chance) {}

  choose(pending: readonly PendingCall[]): PendingCall {
    return this.chance.pick(pending);
  }
}

/**
 * PCT (Burckhardt et al., "A Randomized Scheduler with Probabilistic Guarantees of Finding Bugs",
 * ASPLOS 2010; Shuttle's default): each request gets a random priority when it first waits, the
 * waiting request of highest priority always goes, and at `depth - 1` steps drawn in advance the one
 * going drops below every other. A race that needs `depth` calls in one order is found with
 * probability at least 1 / (requests x steps^(depth-1)), far above a uniform choice's.
 */
export class PriorityChangePoints implements Strategy {
  private readonly priorities = new Map<string, number>();
  private readonly changePoints: Set<number>;
  private dropped = 0;

  constructor(
    private readonly chance: Chance,
    private readonly depth: number,
    expectedSteps: number,
  ) {
    this.changePoints = new Set(Array.from({ length: depth - 1 }, () => chance.int(0, Math.max(0, expectedSteps - 1))));
  }

  choose(pending: readonly PendingCall[], step: number): PendingCall {
    for (const { actor } of pending) if (!this.priorities.has(actor)) this.priorities.set(actor, this.depth + this.chance.next());
    const highest = (): string => {
      let best = (pending[0] as PendingCall).actor;
      for (const { actor } of pending) if ((this.priorities.get(actor) ?? 0) > (this.priorities.get(best) ?? 0)) best = actor;
      return best;
    };
    const going = highest();
    if (this.changePoints.has(step)) this.priorities.set(going, this.depth - 1 - this.dropped++ / this.depth);
    return firstOf(pending, going);
  }
}

/**
 * Follows a schedule recorded by an earlier run: the waiting call that comes first in it goes; one
 * the schedule never saw (its run had other requests) goes after, the earliest request first. A
 * shrunk run is replayed this way.
 */
export class FollowSchedule implements Strategy {
  private readonly rank: Map<string, number>;

  constructor(order: readonly string[]) {
    this.rank = new Map(order.map((id, index) => [id, index]));
  }

  choose(pending: readonly PendingCall[]): PendingCall {
    let best = pending[0] as PendingCall;
    for (const call of pending) if ((this.rank.get(call.id) ?? Number.MAX_SAFE_INTEGER) < (this.rank.get(best.id) ?? Number.MAX_SAFE_INTEGER)) best = call;
    return best;
  }
}

/**
 * How long a call takes to reach the store, by its id, when it is slow: undefined for one that waits
 * its turn at once.
 */
export type Slowness = (id: string, shape: CallShape) => number | undefined;

/** The calls and sleeps waiting, and a count of everything that happens, to tell when the requests have all stopped. */
export class Waiting {
  /** `now` is the run's clock, which a slow call's delay runs on. */
  constructor(
    private readonly now: () => number,
    private readonly slowness: Slowness,
  ) {}

  private readonly calls: PendingCall[] = [];
  private readonly sleepers: Sleeper[] = [];
  private readonly callsMade = new Map<string, number>();
  private readonly dead = new Set<string>();
  private sleeps = 0;
  /** Grows whenever a request parks or ends: unchanged across a turn of the event loop, all are parked. */
  activity = 0;

  call(command: { readonly input: unknown }, shape: CallShape): Promise<unknown> {
    const actor = actorNow();
    this.activity++;
    // A request whose instance died runs no further: what it would send, it never sends.
    if (this.dead.has(actor)) return new Promise(() => {});
    const made = (this.callsMade.get(actor) ?? 0) + 1;
    this.callsMade.set(actor, made);
    const id = `${actor}#${made}`;
    const delayMs = this.slowness(id, shape);
    return new Promise((resolve, reject) => {
      const call: PendingCall = { id, actor, command, shape, resolve, reject };
      if (delayMs === undefined) this.calls.push(call);
      // Among the sleepers, the run's clock moves on to it when nothing else waits, and its instance's death drops it with the request's sleeps.
      else this.sleepers.push({ actor, wakeAt: this.now() + delayMs, order: this.sleeps++, wake: () => this.calls.push(call) });
    });
  }

  sleep(wakeAt: number): Promise<void> {
    const actor = actorNow();
    this.activity++;
    if (this.dead.has(actor)) return new Promise(() => {});
    return new Promise((wake) => this.sleepers.push({ actor, wakeAt, order: this.sleeps++, wake }));
  }

  ended(): void {
    this.activity++;
  }

  get pending(): readonly PendingCall[] {
    return this.calls;
  }

  take(call: PendingCall): void {
    this.calls.splice(this.calls.indexOf(call), 1);
  }

  /** The requests of an instance that died: their calls and sleeps are dropped, and none resumes. */
  kill(actors: Iterable<string>): void {
    for (const actor of actors) this.dead.add(actor);
    const alive = <Item extends { readonly actor: string }>(items: Item[]) => {
      const kept = items.filter((item) => !this.dead.has(item.actor));
      items.splice(0, items.length, ...kept);
    };
    alive(this.calls);
    alive(this.sleepers);
  }

  /** The earliest moment a sleeper wakes, if any sleeps. */
  nextWake(): number | undefined {
    return this.sleepers.reduce<number | undefined>((earliest, { wakeAt }) => (earliest === undefined || wakeAt < earliest ? wakeAt : earliest), undefined);
  }

  /** Wakes, in the order they would, every sleeper whose moment has come. */
  wakeUntil(now: number): number {
    const due = this.sleepers.filter(({ wakeAt }) => wakeAt <= now).sort((one, other) => one.wakeAt - other.wakeAt || one.order - other.order);
    for (const sleeper of due) {
      this.sleepers.splice(this.sleepers.indexOf(sleeper), 1);
      sleeper.wake();
    }
    return due.length;
  }
}
