import { DEFAULT_LOCATION_ID } from './locations';
import { type Batch, type BatchPreference, type RoutedAllocation, type Split, byPreference, heldOf } from './model';
import type { Routing } from './routing';

/*
 * Holds: stock set aside for a checkout, for a while. A hold takes units of its lines' batches out
 * of what new lines and holds can take, until it is confirmed (its units become an order's lines),
 * released, or expires. Expiry is a matter of time, not of anything running: the moment `expiresAt`
 * passes, the hold reads expired and its units count as free again, whether or not anything has
 * given them back to their batches yet. That is what keeps a hold from ever blocking a sale.
 *
 * Each hold's units on a batch are a record of their own, and the batch counts them (Batch.held),
 * so that no write of a hold touches another hold, and nothing a request reads or writes grows with
 * the holds on a batch. A batch's count therefore includes holds that have expired until a write
 * gives their units back: the sweeper's, or, lazily, the request that needs them (batchesToFree).
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

/**
 * Where the store keeps some of a held line's units: a piece of a spread batch (its number, and the
 * spread it belongs to), or the batch's own units. The store's own note, kept with the hold so that
 * the writes that end it find its units; the rules never read it.
 */
export interface HeldSource {
  readonly qty: number;
  readonly piece?: number;
  readonly spreadId?: string;
  /** With `piece`: how many pieces its spread has. */
  readonly of?: number;
}

export type HoldStatus = 'active' | 'confirmed' | 'released' | 'expired';

export interface HeldLine {
  readonly sku: string;
  readonly qty: number;
  readonly batchref: string;
  /**
   * The location of its batch, which a batch never leaves, for the hold's answers and events;
   * absent on a hold placed before holds recorded it, whose batch is read to name it
   * (hold-services.ts, withLocations; its events say `default`, and it lasted a day at most).
   */
  readonly location?: string;
  /** Where the store keeps its units (HeldSource), once placed; absent on a hold not yet written. */
  readonly sources?: readonly HeldSource[];
  /**
   * Present on a part of a line its request allowed to split (domain/split-lines.ts): the hold's
   * lines of that SKU are the line's parts, each on its own batch, in the order the rule preferred
   * them. Every rule that holds, gives back or extends units reads a hold's lines batch by batch,
   * and so reads parts as lines; a confirm makes them one split line.
   */
  readonly split?: Exclude<Split, 'none'>;
}

/** A held line as its request asked for it: its SKU's lines of the hold (one, or a split line's parts) taken together. */
export interface RequestedLine {
  readonly sku: string;
  readonly qty: number;
  readonly split: Split;
  readonly parts: readonly HeldLine[];
}

/** The hold's lines as requested: each SKU once, a split line's parts together, in the hold's order. */
export const requestedLines = (lines: readonly HeldLine[]): RequestedLine[] => {
  const bySku = new Map<string, HeldLine[]>();
  for (const line of lines) bySku.set(line.sku, [...(bySku.get(line.sku) ?? []), line]);
  return [...bySku].map(([sku, parts]) => ({ sku, qty: parts.reduce((sum, { qty }) => sum + qty, 0), split: parts[0]?.split ?? 'none', parts }));
};

/**
 * The hold's lines as an order's lines would be, each on its batch and at its location (`default`
 * for a line of a hold placed before holds recorded it), a split line with its parts: what the hold's
 * answers show, and what a confirm writes, to the order `orderid`, with the hold's routing.
 */
export const linesOfHold = (hold: Hold, orderid = ''): RoutedAllocation[] =>
  requestedLines(hold.lines).map(({ sku, qty, split, parts }) => {
    const located = parts.map(({ batchref, qty: partQty, location = DEFAULT_LOCATION_ID }) => ({ batchref, qty: partQty, location }));
    const [first] = located as [(typeof located)[number], ...typeof located];
    return {
      orderid,
      sku,
      qty,
      batchref: first.batchref,
      location: first.location,
      ...(hold.routing ? { routing: hold.routing } : {}),
      ...(split === 'none' ? {} : { split: { split, parts: located } }),
    };
  });

export interface Hold {
  readonly holdid: string;
  /** Sorted by sku; each SKU once, but for a split line's parts (HeldLine.split), one after another. */
  readonly lines: readonly HeldLine[];
  /** As last written: a hold written `active` reads `expired` once its time has passed (statusAt). */
  readonly status: HoldStatus;
  readonly expiresAt: string;
  /** The order its lines went to, once confirmed. */
  readonly orderid?: string;
  /** What its request named of where its lines may come from (Allocation.routing): its lines', once confirmed. Absent: neither. */
  readonly routing?: Routing;
}

/** Milliseconds since the epoch: the clock every rule here is given, so that tests can set it. */
export type Instant = number;

export const hasExpired = (expiresAt: string, now: Instant): boolean => Date.parse(expiresAt) <= now;

export const expiryAfter = (now: Instant, ttlSeconds: number): string => new Date(now + ttlSeconds * 1000).toISOString();

/** What a client reads: an active hold whose time has passed is expired, whatever has run since. */
export const statusAt = (hold: Hold, now: Instant): HoldStatus =>
  hold.status === 'active' && hasExpired(hold.expiresAt, now) ? 'expired' : hold.status;

/** The units of these holds on the batch given back: no longer held, available again. */
export const givenBack = (batch: Batch, units: readonly HeldUnits[]): Batch => {
  const qty = units.reduce((sum, { qty: some }) => sum + some, 0);
  if (qty === 0) return batch;
  const { held: _, ...rest } = batch;
  const left = heldOf(batch) - qty;
  return { ...rest, available: batch.available + qty, ...(left > 0 ? { held: left } : {}) };
};

/**
 * The earliest that a hold whose units the batch counts may expire, as the store bounds it: the
 * lowest bound of its item and its pieces (Batch.heldFrom). Undefined when none of them has one.
 */
export const earliestHeldExpiry = (batch: Batch): string | undefined =>
  [batch.heldFrom, ...(batch.pieces ?? []).map(({ heldFrom }) => heldFrom)].reduce(earlierOf, undefined);

/** The earlier of two instants (ISO 8601, UTC), either of which may be absent. */
export const earlierOf = (a: string | undefined, b: string | undefined): string | undefined => (a === undefined ? b : b === undefined || a <= b ? a : b);

/**
 * Whether some of the units the batch holds may belong to holds expired by `now`: it holds units, and
 * its bound has come, or none of its items has one (units held before the store kept bounds). A
 * batch whose holds all last has nothing to give back.
 */
export const mayHoldExpiredUnits = (batch: Batch, now: Instant): boolean => {
  if (heldOf(batch) <= 0) return false;
  const earliest = earliestHeldExpiry(batch);
  return earliest === undefined || hasExpired(earliest, now);
};

/**
 * Lazy expiry: the batches whose expired holds, if any, a line of `qty` may need given back before it
 * is placed. Those the rule (`preference`: byPreference, or a request's routed one) prefers to the
 * batch it picked (all, when it picked none) that have too few available and may hold units of
 * expired holds (mayHoldExpiredUnits). A batch that can take the line, holds nothing, or whose holds
 * all last never needs its holds read, so a request costs what it costs with no holds.
 */
export const batchesToFree = (qty: number, batches: readonly Batch[], now: Instant, picked?: Batch, preference: BatchPreference = byPreference): Batch[] =>
  batches.filter((batch) => batch.available < qty && mayHoldExpiredUnits(batch, now) && (picked === undefined || preference(batch, picked) < 0));
