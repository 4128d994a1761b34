import { ADJUSTMENT_REASONS, type Adjustment, type AdjustmentReason } from '../../domain/adjustments';
import { ITEM_IS_NEW } from './conditions';
import { isAt, isNumber, isText, itemKey } from './fields';
import type { TransactWriteItem } from './store-calls';
import { partitionKeyPrefix } from './table';

/*
 * Adjustments (domain/adjustments.ts; items.ts, "The table's items"): an adjustment's record, its
 * key, item and parser. It is written in the transaction of the change it made (batch-repository.ts,
 * changeBatch), on condition that its adjustmentid is new, and kept: a repeat answers from it.
 */

export const adjustmentKey = (adjustmentid: string) => itemKey(`${partitionKeyPrefix.adjustment}${adjustmentid}`, 'ADJUSTMENT');

/** The record put with its change, on condition that its adjustmentid is new: an adjustment is made once. */
export const adjustmentWrite = (tableName: string, adjustment: Adjustment): TransactWriteItem => {
  const { adjustmentid, ref, reason, qty, delta, countedAt, expectedQty, note, before, after, adjustedAt } = adjustment;
  return {
    Put: {
      TableName: tableName,
      Item: {
        ...adjustmentKey(adjustmentid),
        type: 'Adjustment',
        adjustmentid,
        ref,
        reason,
        ...(qty === undefined ? {} : { qty }),
        ...(delta === undefined ? {} : { delta }),
        ...(countedAt === undefined ? {} : { countedAt }),
        ...(expectedQty === undefined ? {} : { expectedQty }),
        ...(note === undefined ? {} : { note }),
        before,
        after,
        adjustedAt,
      },
      ConditionExpression: ITEM_IS_NEW,
    },
  };
};

export type StoredAdjustmentItem = { readonly kind: 'adjustment'; readonly adjustment: Adjustment };

const optional = <Value>(value: unknown, is: (value: unknown) => value is Value): value is Value | undefined => value === undefined || is(value);

/** An adjustment's record, read back through its key. */
export const parseAdjustmentItem = (item: Record<string, unknown>): StoredAdjustmentItem | undefined => {
  const { adjustmentid, ref, reason, qty, delta, countedAt, expectedQty, note, before, after, adjustedAt } = item;
  if (!isText(adjustmentid) || !isAt(item, adjustmentKey(adjustmentid))) return undefined;
  const fields = isText(ref) && ADJUSTMENT_REASONS.includes(reason as AdjustmentReason) && isNumber(before) && isNumber(after) && isText(adjustedAt);
  const optionals = optional(qty, isNumber) && optional(delta, isNumber) && optional(countedAt, isText) && optional(expectedQty, isNumber) && optional(note, isText);
  if (!fields || !optionals || (qty === undefined) === (delta === undefined)) return undefined;
  return {
    kind: 'adjustment',
    adjustment: {
      adjustmentid,
      ref,
      reason: reason as AdjustmentReason,
      ...(qty === undefined ? {} : { qty }),
      ...(delta === undefined ? {} : { delta }),
      ...(countedAt === undefined ? {} : { countedAt }),
      ...(expectedQty === undefined ? {} : { expectedQty }),
      ...(note === undefined ? {} : { note }),
      before,
      after,
      adjustedAt,
    },
  };
};
