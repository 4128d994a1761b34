import type { Instant } from './holds';

/*
 * Adjustments (docs/api.md, "Adjustments"): a change of one batch's units on hand, with its reason.
 * A count (`countedAt`) says what was on the shelf at a moment: what changed the batch since (units
 * shipped or sent away had left, units received had come) is applied on top of it when it arrives,
 * and a count older than the last one applied to the batch changes nothing.
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

/** Why a batch's units on hand changed: an adjustment's reason (a PATCH's is `correction`), or a shipment or a transfer. */
export type ChangeReason = AdjustmentReason | 'shipped' | 'transferred';
export const CHANGE_REASONS: readonly ChangeReason[] = [...ADJUSTMENT_REASONS, 'shipped', 'transferred'];

/** What a count of a batch rests on: the last count applied to it, and what every change of its qty after the count's moment added up to. */
export interface CountBasis {
  readonly lastCountedAt?: string;
  /** Units added since (below zero: taken): shipments and transfers out take, receipts add, a PATCH or another adjustment either. */
  readonly changedSince: number;
  /** How many changes the batch had recorded when they were read: the count applies only while no other came. */
  readonly changesRead: number;
  /** The batch came onto the shelf after the count's moment: added in stock, or arrived, since. */
  readonly cameSince?: boolean;
}

/** When the adjustment says the batch was counted: its `countedAt`, or, for a count that names none, the moment it was made; none for an adjustment that is no count. */
export const countTimeOf = (adjustment: Adjustment): string | undefined =>
  adjustment.countedAt ?? (adjustment.reason === 'counted' && adjustment.qty !== undefined ? adjustment.adjustedAt : undefined);

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
 * The batch's `qty` once the adjustment applies to it at `qty` now: a count, with every change of
 * the batch since it was taken applied on top (never below zero: units that left were on the shelf
 * when counted); a delta, added.
 */
export const adjustedQty = (request: AdjustmentRequest, qty: number, basis?: CountBasis): number => {
  if (request.qty !== undefined) return Math.max(0, request.qty + (request.countedAt === undefined ? 0 : (basis?.changedSince ?? 0)));
  return qty + (request.delta ?? 0);
};
