import { type Batch, heldTotal } from './model';

/*
 * Holds: stock set aside for a checkout, for a while. A hold takes units of its lines' batches out
 * of what new lines and holds can take, until it is confirmed (its units become an order's lines),
 * released, or expires. Expiry is a matter of time, not of anything running: the moment `expiresAt`
 * passes, the hold reads expired and its units count as free again, whether or not anything has
 * given them back to their batches yet. That is what keeps a hold from ever blocking a sale.
 */

/** How long a hold lasts when its request names no `ttlSeconds`, and the longest it may ask. */
export const DEFAULT_HOLD_SECONDS = 900;
export const MAX_HOLD_SECONDS = 86_400;

/** The units one hold sets aside on one batch, until `expiresAt` (ISO 8601, UTC). */
export interface HeldUnits {
  readonly holdid: string;
  readonly qty: number;
  readonly expiresAt: string;
}

export type HoldStatus = 'active' | 'confirmed' | 'released' | 'expired';

export interface HeldLine {
  readonly sku: string;
  readonly qty: number;
  readonly batchref: string;
}

export interface Hold {
  readonly holdid: string;
  /** Sorted by sku; each SKU once. */
  readonly lines: readonly HeldLine[];
  /** As last written: a hold written `active` reads `expired` once its time has passed (statusAt). */
  readonly status: HoldStatus;
  readonly expiresAt: string;
  /** The order its lines went to, once confirmed. */
  readonly orderid?: string;
}

/** Milliseconds since the epoch: the clock every rule here is given, so that tests can set it. */
export type Instant = number;

export const hasExpired = (expiresAt: string, now: Instant): boolean => Date.parse(expiresAt) <= now;

export const expiryAfter = (now: Instant, ttlSeconds: number): string => new Date(now + ttlSeconds * 1000).toISOString();

/** What a client reads: an active hold whose time has passed is expired, whatever has run since. */
export const statusAt = (hold: Hold, now: Instant): HoldStatus =>
  hold.status === 'active' && hasExpired(hold.expiresAt, now) ? 'expired' : hold.status;

/** The holds on the batch whose time has passed: their units are free, though still recorded on it. */
export const expiredOn = (batch: Batch, now: Instant): HeldUnits[] =>
  (batch.held ?? []).filter(({ expiresAt }) => hasExpired(expiresAt, now));

/** The units set aside by holds still active on the batch. */
export const heldOn = (batch: Batch, now: Instant): number =>
  heldTotal((batch.held ?? []).filter(({ expiresAt }) => !hasExpired(expiresAt, now)));

/**
 * The batch as a new line or hold finds it at `now`: the units of its expired holds are available
 * again (`freed`), and only its active holds are still held. Its stored record still lists the
 * expired ones until a write gives them back.
 */
export const batchAt = (batch: Batch, now: Instant): Batch => {
  const expired = expiredOn(batch, now);
  if (expired.length === 0) return batch;
  const active = (batch.held ?? []).filter((units) => !expired.includes(units));
  return { ...batch, available: batch.available + heldTotal(expired), held: active, freed: [...(batch.freed ?? []), ...expired] };
};

/** The batch as its stored record has it, whatever moment it was found at. */
export const batchAsStored = ({ freed = [], ...batch }: Batch): Batch =>
  freed.length === 0 ? batch : { ...batch, available: batch.available - heldTotal(freed), held: [...(batch.held ?? []), ...freed] };

/** The batch without the entries of these holds, their units available again. */
export const withoutHolds = (batch: Batch, holdids: readonly string[]): Batch => {
  const { held = [], ...rest } = batch;
  const ended = held.filter(({ holdid }) => holdids.includes(holdid));
  if (ended.length === 0) return batch;
  const left = held.filter((units) => !ended.includes(units));
  return { ...rest, available: batch.available + heldTotal(ended), ...(left.length > 0 ? { held: left } : {}) };
};
