import type { Instant } from './holds';

/*
 * Adjustments (docs/api.md, "Adjustments"): a change of one batch's units on hand, with its reason.
 * A count (`countedAt`) says what was on the shelf at a moment: the units that left the batch since
 * (shipped) had left when the count arrives, so the count sets the batch to what it counted less
 * those, and a count older than the last one applied to the batch changes nothing.
 */

/** Why the units on hand changed. */
export const ADJUSTMENT_REASONS = ['received', 'counted', 'damaged', 'lost', 'found', 'returned', 'correction'] as const;
export type AdjustmentReason = (typeof ADJUSTMENT_REASONS)[number];

/**
 * How far back a count may have been taken: the batch keeps what it shipped this long (its shipped
 * records' time to live, a day longer), which a count older than that could not take off.
 */
export const COUNT_WINDOW_MS = 30 * 24 * 60 * 60 * 1_000;

export interface AdjustmentRequest {
  readonly adjustmentid: string;
  readonly ref: string;
  readonly reason: AdjustmentReason;
  /** The units to set; exactly one of `qty` and `delta`. */
  readonly qty?: number;
  /** The units to add (or, below zero, take). */
  readonly delta?: number;
  /** With `qty`: when the units were counted, ISO 8601; the count is applied as of then. */
  readonly countedAt?: string;
  /** The batch's `qty` as the caller last read it: the change applies only to that. */
  readonly expectedQty?: number;
  readonly note?: string;
}

/** An adjustment made: its request, and the batch's `qty` before and after it, at `adjustedAt`. */
export interface Adjustment extends AdjustmentRequest {
  readonly before: number;
  readonly after: number;
  readonly adjustedAt: string;
}

/** What a count of a batch rests on: the last count applied to it, and the units it shipped after the count's moment. */
export interface CountBasis {
  readonly lastCountedAt?: string;
  readonly shippedSince: number;
}

/** The same request again: every field it sent the same (a note among them). */
export const isSameAdjustment = (stored: Adjustment, request: AdjustmentRequest): boolean =>
  stored.ref === request.ref &&
  stored.reason === request.reason &&
  stored.qty === request.qty &&
  stored.delta === request.delta &&
  stored.countedAt === request.countedAt &&
  stored.expectedQty === request.expectedQty &&
  stored.note === request.note;

/** Why a count cannot be applied as of its time: in the future, or past the window the batch's shipments are kept for. */
export const countTimeRefused = (countedAt: string, now: Instant): string | undefined => {
  const at = Date.parse(countedAt);
  if (at > now) return `must not be in the future: it is ${countedAt}, and now is ${new Date(now).toISOString()}`;
  if (at < now - COUNT_WINDOW_MS) return `must be within the last ${COUNT_WINDOW_MS / (24 * 60 * 60 * 1_000)} days: a count as old as ${countedAt} cannot be applied as of its time`;
  return undefined;
};

/**
 * The batch's `qty` once the adjustment applies to it at `qty` now: a count, less what shipped since
 * it was taken (never below zero: units that left were on the shelf when counted); a delta, added.
 */
export const adjustedQty = (request: AdjustmentRequest, qty: number, basis?: CountBasis): number => {
  if (request.qty !== undefined) return Math.max(0, request.qty - (request.countedAt === undefined ? 0 : (basis?.shippedSince ?? 0)));
  return qty + (request.delta ?? 0);
};
