import { type Batch, hasStockLeft, heldOf } from '../../domain/model';
import { PK } from './items';

/*
 * The conditions the adapter's writes share (conditional-writes.ts, spread-writes.ts): each guards
 * an invariant of what a write may change, on what it read.
 */

export type Condition = { ConditionExpression: string; ExpressionAttributeValues: Record<string, unknown> };

export const withValues = (condition: Condition, values: Record<string, unknown>) => ({
  ...condition,
  ExpressionAttributeValues: { ...condition.ExpressionAttributeValues, ...values },
});

export const and = (...conditions: Condition[]): Condition => ({
  ConditionExpression: conditions.map(({ ConditionExpression }) => ConditionExpression).join(' AND '),
  ExpressionAttributeValues: Object.assign({}, ...conditions.map(({ ExpressionAttributeValues }) => ExpressionAttributeValues)),
});

/** Guards "a key is written once": the put fails if an item with that key already exists. */
export const ITEM_IS_NEW = `attribute_not_exists(${PK})`;

/** An item's count of held units is `held`: absent counts none. */
export const heldUnitsAre = (held: number): Condition =>
  held === 0
    ? { ConditionExpression: '(attribute_not_exists(heldUnits) OR heldUnits = :noneHeld)', ExpressionAttributeValues: { ':noneHeld': 0 } }
    : { ConditionExpression: 'heldUnits = :heldUnits', ExpressionAttributeValues: { ':heldUnits': held } };

/** The fields a batch's copy is made of, as read: its units, qty, eta and held units. */
export const batchFieldsAre = ({ qty, available, eta, held = 0 }: Batch) =>
  and(
    {
      ConditionExpression: `available = :available AND qty = :qty AND ${eta === null ? 'attribute_not_exists(eta)' : 'eta = :eta'}`,
      ExpressionAttributeValues: { ':available': available, ':qty': qty, ...(eta === null ? {} : { ':eta': eta }) },
    },
    heldUnitsAre(held),
  );

/**
 * A batch's key says whether it has stock left, so a change of `available` that crosses that line
 * moves the item: delete it where it is, on condition that it is exactly as read (so the copy is
 * exact), and put it at its other key. The put's condition cannot fail while the delete's holds: one
 * batch never has both keys. A condition cannot compare with NULL everywhere, hence an absent `eta`
 * for a batch in stock. Only a batch kept whole is moved, and the condition says so: one spread
 * since it was read has units in pieces that a copy without its spread would strand, whatever its
 * own `available` has come back to.
 */
export const batchIsExactly = (batch: Batch) => and(batchFieldsAre(batch), { ConditionExpression: 'attribute_not_exists(pieces)', ExpressionAttributeValues: {} });

/**
 * A change of `available` by `delta` (and of its held units by `heldDelta`) made in place, on a batch
 * stored as read, on condition that the result stays on the side of the stock range the batch was
 * read on (which guards "stock never goes below zero" and "the stock range holds exactly the batches
 * with stock left"). Units held on the batch keep it in the range at `available` 0: the count is named
 * only where it decides the side, so that holds placed and ended meanwhile do not fail the write. A
 * condition cannot do arithmetic, hence the bounds against `-delta` and `-heldDelta`.
 */
export const staysOnItsSide = (stored: Batch, delta: number, heldDelta = 0): Condition => {
  const bound = (comparison: string) => ({ ConditionExpression: `available ${comparison} :bound`, ExpressionAttributeValues: { ':bound': -delta } });
  if (!hasStockLeft(stored)) return and(bound('<='), heldUnitsAre(0));
  if (stored.available + delta > 0 || heldOf(stored) + heldDelta === 0) return bound('>');
  // Left at 0 available: in the range by the units this write sets aside, or by those held on it.
  if (heldDelta > 0) return bound('>=');
  return and(bound('>='), { ConditionExpression: 'heldUnits > :heldFloor', ExpressionAttributeValues: { ':heldFloor': -heldDelta } });
};
