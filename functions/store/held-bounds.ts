import { earliestHeldExpiry } from '../../domain/holds';
import { type Batch, heldOf } from '../../domain/model';
import type { Condition } from './conditions';
import { isNumber, isText } from './fields';

/*
 * Bounds of held units (docs/architecture.md, "Holds"): so that a request reads the holds of only
 * the batches where some may have expired, each batch item and piece keeps `heldFrom`, a bound on the
 * expiry of holds, and `heldTakes`, a count of the writes that kept it. The invariant: every record of
 * a hold's units on a batch (held-units.ts) expires at or after the lowest `heldFrom` of the batch's
 * item and pieces, whenever one of them has one. Every write that adds a record keeps it, with a
 * condition on the bound it read: a hold's take on the item it takes from (heldBoundKept), and an
 * extension that moves a hold's expiry earlier on the batch's item (holds.ts). Ending a hold only
 * removes records; a move copies the item as read; a gather gives the item the lowest of its pieces'
 * bounds. Only lazy expiry raises a bound, to the earliest record it found left on the batch, item by
 * item, on condition that the item's count of takes is as read before it read the records: no take
 * came between (hold-give-backs.ts). A bound is a lower bound, so a stale one costs a read, never a
 * unit.
 */

/** A hold's expiry as a bound: down to its second, so that the holds placed within one second keep one bound. */
export const heldBoundOf = (expiresAt: string) => `${expiresAt.slice(0, 19)}.000Z`;

/** An item's bound and count as stored: absent until a hold's take sets them. */
export const heldBoundFields = ({ heldFrom, heldTakes }: { readonly heldFrom?: string; readonly heldTakes?: number }) => ({
  ...(heldFrom === undefined ? {} : { heldFrom }),
  ...(heldTakes === undefined ? {} : { heldTakes }),
});

/** The bound and count of an item as read back: each is absent, or of its type. */
export const parseHeldBound = ({ heldFrom, heldTakes }: Record<string, unknown>): { heldFrom?: string; heldTakes?: number } | undefined => {
  if ((heldFrom !== undefined && !isText(heldFrom)) || (heldTakes !== undefined && !isNumber(heldTakes))) return undefined;
  return { ...(isText(heldFrom) ? { heldFrom } : {}), ...(isNumber(heldTakes) ? { heldTakes } : {}) };
};

/**
 * How a write that adds records of held units keeps an item's bound at or below `bound`: `keep` sets
 * it where there is none (to `whereNone`, `bound` unless the caller knows less) and keeps it where
 * there is, on condition that it is at or below; `lower` sets it, on condition that it is absent or
 * above. Either counts one take more.
 */
export type HeldBoundWrite = 'keep' | 'lower';

export const heldBoundWrite = (how: HeldBoundWrite, bound: string, whereNone = bound): { readonly set: string; readonly condition: Condition } => {
  const counted = 'heldTakes = if_not_exists(heldTakes, :noTakes) + :oneTake';
  if (how === 'lower') {
    return {
      set: `heldFrom = :heldBound, ${counted}`,
      condition: { ConditionExpression: '(attribute_not_exists(heldFrom) OR heldFrom >= :heldBound)', ExpressionAttributeValues: { ':heldBound': bound, ':noTakes': 0, ':oneTake': 1 } },
    };
  }
  return {
    set: `heldFrom = if_not_exists(heldFrom, :boundWhereNone), ${counted}`,
    condition: {
      ConditionExpression: '(attribute_not_exists(heldFrom) OR heldFrom <= :heldBound)',
      ExpressionAttributeValues: { ':heldBound': bound, ':boundWhereNone': whereNone, ':noTakes': 0, ':oneTake': 1 },
    },
  };
};

/**
 * The bound of a batch whose units were held before the store kept bounds: the least there is, so
 * that its holds are read until lazy expiry has found them and raised it.
 */
export const BOUND_OF_OLDER_HOLDS = '1970-01-01T00:00:00.000Z';

/**
 * What a take for a hold expiring at `heldUntil` writes on the item of `batch` it takes from, whose
 * bound it read as `read`: the hold's bound (heldBoundOf), or, on a batch that holds units with no
 * bound on any of its items, BOUND_OF_OLDER_HOLDS (heldBoundBelow).
 */
export const heldBoundKept = (batch: Batch, read: string | undefined, heldUntil: string) =>
  heldBoundBelow(read, heldOf(batch) > 0 && earliestHeldExpiry(batch) === undefined ? BOUND_OF_OLDER_HOLDS : heldBoundOf(heldUntil));

/** An item's bound, read as `read`, kept at or below `bound`: lowered to it when the bound read is above, else kept. */
export const heldBoundBelow = (read: string | undefined, bound: string) => heldBoundWrite(read !== undefined && read > bound ? 'lower' : 'keep', bound);

/** An item's count of the takes that kept its bound is as read: no hold's take has come since. */
export const heldTakesAre = (heldTakes: number | undefined): Condition =>
  heldTakes === undefined
    ? { ConditionExpression: 'attribute_not_exists(heldTakes)', ExpressionAttributeValues: {} }
    : { ConditionExpression: 'heldTakes = :heldTakes', ExpressionAttributeValues: { ':heldTakes': heldTakes } };
