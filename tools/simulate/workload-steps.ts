import type { Chance } from './chance';

/*
 * What a workload is made of (./workload.ts draws it; ./stock-workload.ts draws its adjustments and
 * counts): the sends of a run, and the steps they are drawn as before they are numbered.
 */

/**
 * One thing a client does at a step: an HTTP request, a run of the hold sweeper, or time passing;
 * or a batch spread over pieces, as takes that the run does not send would spread it by meeting
 * there (docs/capacity.md), so that an episode can place a spread where it needs one; or a
 * stocktake: the warehouse counts a batch at that moment of the run, and reports the count later,
 * so that a count can name a moment that changes came after; or the file of an import, uploaded,
 * and the engine of imports running it through the import worker.
 */
export type Send = (
  | { readonly kind: 'http'; readonly routeKey: string; readonly path?: Readonly<Record<string, string>>; readonly query?: Readonly<Record<string, string>>; readonly body?: unknown }
  | { readonly kind: 'sweep' }
  | { readonly kind: 'clock'; readonly advanceMs: number }
  | { readonly kind: 'spread'; readonly sku: string; readonly ref: string }
  | { readonly kind: 'stocktake'; readonly ref: string }
  | { readonly kind: 'import-file'; readonly importid: string; readonly rows: readonly object[] }
) & {
  readonly id: number;
  readonly at: number;
  /** Sent once the send of this id has an answer, or its instance died (a client that does one thing, then the next), and not before `at`. */
  readonly after?: number;
  /**
   * A count's `counted_at`: the moment of the stocktake of this id, written into the body as it is
   * first sent (one that a shrink cut out, or that has not come yet, is taken then).
   */
  readonly countedAtOf?: number;
  /** The offset from UTC, in minutes, that `counted_at` is written in; absent, `Z`. */
  readonly countedAtOffset?: number;
  /** A page of a history: the `cursor` the send of this id was answered, written into the query as it is first sent (none: the first page). */
  readonly cursorOf?: number;
};

export type Workload = readonly Send[];

export type Draft =
  | { readonly kind: 'http'; readonly routeKey: string; readonly path?: Record<string, string>; readonly query?: Record<string, string>; readonly body?: unknown }
  | { readonly kind: 'sweep' }
  | { readonly kind: 'clock'; readonly advanceMs: number }
  | { readonly kind: 'spread'; readonly sku: string; readonly ref: string }
  | { readonly kind: 'stocktake'; readonly ref: string }
  | { readonly kind: 'import-file'; readonly importid: string; readonly rows: readonly object[] };

export interface StartingBatch {
  readonly ref: string;
  readonly sku: string;
  readonly qty: number;
  readonly eta: string | null;
  readonly location: string;
}

export interface Places {
  readonly locations: readonly string[];
  readonly batches: readonly StartingBatch[];
  /** The SKU of a batch large enough to spread, which most lines then ask for. */
  readonly hotSku?: string;
}

/** A draft placed at a step, maybe once another has its answer, and for a count, as of a stocktake. */
export type Step = {
  readonly at: number;
  readonly draft: Draft;
  readonly after?: Step;
  readonly countedAtOf?: Step;
  readonly countedAtOffset?: number;
  readonly cursorOf?: Step;
};
export type Episode = (chance: Chance, places: Places, at: number) => Step[];

/** Steps one after another: each sent once the one before it has its answer, a few steps on; the first once `after` has its own. */
export const inTurn = (chance: Chance, at: number, drafts: readonly Draft[], after?: Step): Step[] => {
  const steps: Step[] = [];
  for (const draft of drafts) {
    const before = steps.at(-1);
    steps.push(before ? { at: before.at + chance.int(0, 2), draft, after: before } : { at, draft, ...(after ? { after } : {}) });
  }
  return steps;
};

/** The same step again as a client unsure it landed sends it, racing the first. */
export const twice = (chance: Chance, step: Step): Step[] => [step, { ...step, at: step.at + chance.int(0, 1) }];
