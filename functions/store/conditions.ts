import { PK } from './fields';

/*
 * What the conditions of every kind's writes (batches.ts, pieces.ts, lines.ts, holds.ts,
 * held-units.ts) are made of: each condition guards an invariant of what a write may change, on what
 * it read, and sits with the writes of its kind; this is what several kinds share.
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

