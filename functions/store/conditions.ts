import { type Batch, hasStockLeft, heldTotal } from '../../domain/model';
import { PK, heldAttribute, heldKey } from './items';

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

/**
 * Guards "a batch's holds are as read": a write of a batch that could move it is made against the
 * holds it read on it (none, or exactly these), so that where the batch belongs, in the stock range
 * or out of it, follows from `available` alone.
 */
export const holdsAsRead = (held: Batch['held'] = []): Condition =>
  held.length === 0
    ? { ConditionExpression: '(attribute_not_exists(held) OR held = :noHolds)', ExpressionAttributeValues: { ':noHolds': {} } }
    : { ConditionExpression: 'held = :held', ExpressionAttributeValues: { ':held': heldAttribute(held) } };

/** The fields a batch's copy is made of, as read: its units, qty, eta and holds. */
export const batchFieldsAre = ({ qty, available, eta, held }: Batch) =>
  and(
    {
      ConditionExpression: `available = :available AND qty = :qty AND ${eta === null ? 'attribute_not_exists(eta)' : 'eta = :eta'}`,
      ExpressionAttributeValues: { ':available': available, ':qty': qty, ...(eta === null ? {} : { ':eta': eta }) },
    },
    holdsAsRead(held),
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
 * A change of `available` by `delta` made in place, on a batch stored with these holds, on condition
 * that the result stays on the side of the stock range the batch was read on (which guards "stock
 * never goes below zero" and "the stock range holds exactly the batches with stock left"). Holds left
 * on the batch after the write (`heldAfter`) keep it in the range at `available` 0. A condition
 * cannot do arithmetic, hence the bound against `-delta`.
 */
export const staysOnItsSide = (stored: Batch, delta: number, heldAfter: Batch['held'] = stored.held) => {
  const held = heldTotal(heldAfter) > 0;
  const comparison = hasStockLeft(stored) ? (held ? '>=' : '>') : held ? '<' : '<=';
  const bound = { ConditionExpression: `available ${comparison} :bound`, ExpressionAttributeValues: { ':bound': -delta } };
  // A batch with stock and no holds keeps it by `available` alone, whatever holds come meanwhile: the
  // allocation's path needs no more.
  return comparison === '>' && (stored.held ?? []).length === 0 ? bound : and(bound, holdsAsRead(stored.held));
};

/** The entries of the holds a batch was found with expired (`freed`), for a write that gives them back by removing them. */
export const freedEntries = (batch: Batch) => {
  const names = Object.fromEntries((batch.freed ?? []).map(({ holdid }, index) => [`#freed${index}`, heldKey(holdid)]));
  const removed = Object.keys(names).map((name) => `held.${name}`);
  return {
    freed: removed.length > 0 ? { ExpressionAttributeNames: names } : {},
    giveBack: removed.length > 0 ? ` REMOVE ${removed.join(', ')}` : '',
  };
};

