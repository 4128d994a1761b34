import { Chance } from './chance';
import type { Mode } from './functions';
import type { Failure } from './judge';
import type { Answer, Reached } from './observed';
import type { PlantedDefect } from './planted-defects';
import { type Workload, drawWorkload } from './workload';

/*
 * What a run is made of (./simulation.ts): the settings and workload its seed draws, the faults and
 * slow calls it met, and the record it leaves for its judges and its story.
 */
export type FaultKind = 'throttled' | 'conflict' | 'lost-reply' | 'crash-before' | 'crash-after';

export interface Fault {
  readonly kind: FaultKind;
  /** The operation it met: a replay whose call of that number is another one makes no fault of it. */
  readonly operation: string;
  /** For a conflict: the place of the item another transaction held. */
  readonly item?: number;
}

export interface Settings {
  readonly mode: Mode;
  readonly strategy: { readonly kind: 'pct'; readonly depth: number } | { readonly kind: 'random' };
  /** The chance that a call is refused, loses its answer, or its instance dies at it. */
  readonly faultRate: number;
  /** The chance that a transaction meeting another in flight on one of its items is cancelled for it. */
  readonly conflictRate: number;
  /**
   * The chance that a call is slow to reach the store (a slow network, an instance paused): it waits
   * a while of the run's clock before it takes its turn, so that others' calls, whole requests among
   * them, go between it and the call before it. Absent in runs kept before calls could be slow.
   */
  readonly slowRate?: number;
}

export interface Plan {
  readonly seed: number;
  readonly settings: Settings;
  readonly workload: Workload;
  /** A replay follows the order of calls, the faults and the slow calls of an earlier run; an exploring run draws them. */
  readonly follow?: { readonly order: readonly string[]; readonly faults: ReadonlyMap<string, Fault>; readonly delays: ReadonlyMap<string, SlowCall> };
  /** A defect planted in the service for the run (./planted-defects.ts), to show that the judge finds it. */
  readonly plant?: PlantedDefect;
}

/** A call slow to reach the store: the operation it was (a replay whose call of that number is another one makes none of it slow), and how late. */
export interface SlowCall {
  readonly operation: string;
  readonly delayMs: number;
}


export interface RunRecord {
  readonly plan: Plan;
  readonly story: readonly string[];
  /** The calls in the order released, by id. */
  readonly order: readonly string[];
  readonly faults: ReadonlyMap<string, Fault>;
  /** The calls drawn slow, by id (a request whose instance died drops its own before they reach the store). */
  readonly delays: ReadonlyMap<string, SlowCall>;
  readonly answers: readonly Answer[];
  readonly reached: readonly Reached[];
  readonly failures: readonly Failure[];
  readonly calls: number;
  /** The events its table's stream made of its commits. */
  readonly events: number;
  /** Ordered pairs of conflicting calls (route and operation of each), the kinds of order this run tried. */
  readonly conflictOrders: ReadonlySet<string>;
}

export const drawSettings = (seed: number): Settings => {
  const chance = Chance.stream(seed, 'settings');
  return {
    mode: chance.pick(['lambda', 'shared'] as const),
    strategy: chance.chance(0.8) ? { kind: 'pct', depth: chance.int(1, 3) } : { kind: 'random' },
    faultRate: chance.pick([0, 0.02, 0.05, 0.1]),
    conflictRate: chance.pick([0, 0.2, 0.5, 0.8]),
    slowRate: chance.pick([0, 0.05, 0.2]),
  };
};

/** The plan a seed makes: its settings and its workload. */
export const planOf = (seed: number, plant?: PlantedDefect): Plan => ({ seed, settings: drawSettings(seed), workload: drawWorkload(Chance.stream(seed, 'workload')), ...(plant ? { plant } : {}) });
