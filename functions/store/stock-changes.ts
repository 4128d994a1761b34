import { CHANGE_REASONS, COUNT_WINDOW_MS, type ChangeReason } from '../../domain/adjustments';
import { COUNTED_AT, batchReferenceKey, locationField } from './batches';
import { ITEM_IS_NEW, type Condition } from './conditions';
import { PK, isAt, isNumber, isText, itemKey } from './fields';
import type { TransactWriteItem } from './store-calls';
import type { TableReads } from './table-reads';
import { timeToLiveAttribute } from './table';

/*
 * A batch's changes of its units on hand (items.ts, "The table's items"): one record for each write
 * that changes its `qty` (a shipment, a transfer's take or its cancel, an adjustment, a PATCH),
 * beside the batch's reference and sorted by when it happened, so that a count taken at some moment
 * reads only the changes since (changesSince) and applies them on top of what it counted. Each is
 * written in the transaction of its change, on condition that no count taken at or after its moment
 * was applied to the batch (changeAfterCounts): a change stamped before a count but committed after
 * it would be applied twice, once by the count and once by itself; such a change is made again, at
 * a later moment.
 */

const CHANGE_RANGE = 'CHANGE#';

/** One change of a batch's qty: by `delta`, for `reason`, at `at`; `reference` names what made it (a shipmentid, an adjustmentid, a transferid). */
export interface StockChange {
  readonly ref: string;
  readonly sku: string;
  /** Absent: `default`. */
  readonly location?: string;
  readonly delta: number;
  readonly reason: ChangeReason;
  readonly reference?: string;
  readonly at: string;
}

/** `id`: what tells two changes of one batch at one moment apart; a change's reference where it has one. */
const changeKey = (ref: string, at: string, reason: ChangeReason, id: string) => itemKey(String(batchReferenceKey(ref)[PK]), `${CHANGE_RANGE}${at}#${reason}#${id}`);

/** How long a change is kept: a count is applied as of its time only within COUNT_WINDOW_MS, and time to live deletes within about a day of its moment. */
const CHANGE_LIFETIME_SECONDS = (COUNT_WINDOW_MS + 24 * 60 * 60 * 1_000) / 1_000;

/** The record of `change`, new: its key names its moment and `id`. */
export const stockChangeWrite = (tableName: string, change: StockChange, id: string): TransactWriteItem => {
  const { ref, sku, location, delta, reason, reference, at } = change;
  return {
    Put: {
      TableName: tableName,
      Item: {
        ...changeKey(ref, at, reason, id),
        type: 'StockChange',
        ref,
        sku,
        ...locationField({ location }),
        delta,
        reason,
        ...(reference === undefined ? {} : { reference }),
        at,
        [timeToLiveAttribute]: Math.floor(Date.parse(at) / 1_000) + CHANGE_LIFETIME_SECONDS,
      },
      // Guards "each change is recorded once": two changes at one moment of one kind and id would be one.
      ConditionExpression: ITEM_IS_NEW,
    },
  };
};

/**
 * Guards "a count applied to the batch counts the changes before its moment, and no other": a change
 * at `at` goes on the batch's reference only while no count taken at or after `at` was applied.
 */
export const changeAfterCounts = (at: string): Condition => ({
  ConditionExpression: `(attribute_not_exists(${COUNTED_AT}) OR ${COUNTED_AT} < :changeAt)`,
  ExpressionAttributeValues: { ':changeAt': at },
});

export type StoredStockChangeItem = { readonly kind: 'stock-change'; readonly change: StockChange; readonly id: string };

/** A change's record, read back through its key. */
export const parseStockChangeItem = (item: Record<string, unknown>): StoredStockChangeItem | undefined => {
  const { ref, sku, location, delta, reason, reference, at, sk } = item;
  if (!isText(ref) || !isText(sku) || !isNumber(delta) || !isText(at) || !CHANGE_REASONS.includes(reason as ChangeReason) || !isText(sk)) return undefined;
  if ((location !== undefined && !isText(location)) || (reference !== undefined && !isText(reference))) return undefined;
  const id = sk.slice(`${CHANGE_RANGE}${at}#${String(reason)}#`.length);
  if (!isAt(item, changeKey(ref, at, reason as ChangeReason, id))) return undefined;
  const change: StockChange = { ref, sku, ...locationField({ location }), delta, reason: reason as ChangeReason, ...(reference === undefined ? {} : { reference }), at };
  return { kind: 'stock-change', change, id };
};

/**
 * What the changes of batch `ref` after `since` add up to (the records kept: COUNT_WINDOW_MS). One
 * Query of the batch's changes since the count's moment: 1 read unit per 4 KB of them, about 20.
 */
export const changesSince = async (reads: TableReads, ref: string, since: string): Promise<number> => {
  const partition = String(batchReferenceKey(ref)[PK]);
  // After `since` to the millisecond: a change at the count's own moment happened before it was counted.
  // `$` sorts right after `#`, and times are ASCII.
  const records = await reads.range(partition, `${CHANGE_RANGE}${since}$`, 'CHANGE$', { latestFirst: false, limit: Number.POSITIVE_INFINITY });
  return records.reduce((sum, item) => {
    const stored = parseStockChangeItem(item);
    if (!stored) throw new Error(`Item among batch ${ref}'s changes is not one: ${JSON.stringify(item)}`);
    return sum + stored.change.delta;
  }, 0);
};
