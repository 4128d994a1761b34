import { type Allocation, type Batch, type LineMove, hasStockLeft, heldOf } from '../../domain/model';
import {
  ALLOCATED_AT,
  type DeallocationReason,
  LINE_BATCH,
  PK,
  batchDescription,
  batchItem,
  batchKey,
  batchReferenceKey,
  deallocationKey,
  knownSkuItem,
  lineKey,
  lineBatchOf,
  noticeFields,
  now,
} from './items';
import { ITEM_IS_NEW, batchIsExactly, staysOnItsSide, withValues } from './conditions';
import type { TransactWriteItem } from './store-calls';

/*
 * Every item the adapter's transactions write, each with the condition that guards its invariant:
 * which write may happen, on what it read. The repository (batch-repository.ts) puts them together
 * into the transaction of each request; items.ts knows the keys and attributes they name.
 */

/** Guards "the stock a line gives back is the stock it held": the line is still as it was read. */
const LINE_IS_AS_READ = 'batchref = :batchref AND qty = :lineQty';
const lineAsRead = ({ batchref, qty }: Allocation) => ({ ':batchref': batchref, ':lineQty': qty });

/** The items of a new batch: the batch, its reference (which makes a ref unique across SKUs) and its SKU's known-SKU item. */
export const newBatchWrites = (tableName: string, batch: Batch): TransactWriteItem[] => {
  const { ref, sku } = batch;
  return [
    { Put: { TableName: tableName, Item: batchItem(batch), ConditionExpression: ITEM_IS_NEW } },
    {
      Put: {
        TableName: tableName,
        Item: { ...batchReferenceKey(ref), type: 'BatchReference', ref, sku, ...batchDescription(batch) },
        ConditionExpression: ITEM_IS_NEW,
      },
    },
    // Unconditional: every batch of the SKU writes the same item.
    { Put: { TableName: tableName, Item: knownSkuItem(sku) } },
  ];
};

/** A new line, on condition that the order has none for its SKU; a failure carries the line there. */
export const newLineWrite = (tableName: string, allocation: Allocation, allocatedAt: string): TransactWriteItem => ({
  Put: {
    TableName: tableName,
    Item: {
      ...lineKey(allocation.orderid, allocation.sku),
      type: 'Line',
      ...allocation,
      [LINE_BATCH]: lineBatchOf(allocation),
      [ALLOCATED_AT]: allocatedAt,
    },
    ConditionExpression: ITEM_IS_NEW,
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  },
});

/** The line put on another batch, on condition that it is still as read. */
const lineMoveWrite = (tableName: string, allocation: Allocation, to: string): TransactWriteItem => ({
  Update: {
    TableName: tableName,
    Key: lineKey(allocation.orderid, allocation.sku),
    // The line keeps its allocation time: it was allocated then, and moved now.
    UpdateExpression: `SET batchref = :to, ${LINE_BATCH} = :lines, movedAt = :movedAt`,
    ConditionExpression: LINE_IS_AS_READ,
    ExpressionAttributeValues: { ':to': to, ':lines': lineBatchOf({ ...allocation, batchref: to }), ':movedAt': now(), ...lineAsRead(allocation) },
  },
});

/** The line's removal and, in the same transaction, the notice that says why it left (for Deallocated). */
export const lineRemovalWrites = (tableName: string, allocation: Allocation, reason: DeallocationReason): TransactWriteItem[] => {
  const { orderid, sku, qty, batchref } = allocation;
  const notice = noticeFields();
  return [
    {
      Delete: {
        TableName: tableName,
        Key: lineKey(orderid, sku),
        ConditionExpression: LINE_IS_AS_READ,
        ExpressionAttributeValues: lineAsRead(allocation),
      },
    },
    {
      Put: {
        TableName: tableName,
        Item: { ...deallocationKey(orderid, sku, notice.noticeId), type: 'Deallocation', orderid, sku, qty, batchref, reason, deallocatedAt: now(), ...notice },
      },
    },
  ];
};

/** Keeps the batch reference's copy of qty and eta in step with the batch (for BatchChanged). */
export const batchDescriptionWrite = (tableName: string, changed: Batch): TransactWriteItem => {
  const { ref, qty, eta } = changed;
  return {
    Update: {
      TableName: tableName,
      Key: batchReferenceKey(ref),
      UpdateExpression: 'SET qty = :newQty, changedAt = :changedAt' + (eta === null ? ' REMOVE eta' : ', eta = :newEta'),
      // Guards "a reference exists only with its batch": an update would otherwise create one.
      ConditionExpression: `attribute_exists(${PK})`,
      ExpressionAttributeValues: { ':newQty': qty, ':changedAt': now(), ...(eta === null ? {} : { ':newEta': eta }) },
    },
  };
};

/** The batch moved across the edge of the stock range: deleted where it is, exactly as read, and put at its other key. */
export const batchMoveWrites = (tableName: string, batch: Batch, moved: Batch): TransactWriteItem[] => [
  { Delete: { TableName: tableName, Key: batchKey(batch), ...batchIsExactly(batch) } },
  { Put: { TableName: tableName, Item: batchItem(moved), ConditionExpression: ITEM_IS_NEW } },
];

/**
 * A batch's new qty and eta, as read: moved across the edge of the stock range, or in place. The
 * holds that `changed` no longer counts are ended by the same transaction (their records' writes are
 * the caller's): their units leave its count of held units.
 */
export const batchChangeWrites = (tableName: string, batch: Batch, changed: Batch): TransactWriteItem[] => {
  if (hasStockLeft(batch) !== hasStockLeft(changed)) return batchMoveWrites(tableName, batch, changed);
  const delta = changed.available - batch.available;
  const ended = heldOf(batch) - heldOf(changed);
  const { ConditionExpression, ExpressionAttributeValues } = staysOnItsSide(batch, delta, -ended);
  return [
    {
      Update: {
        TableName: tableName,
        Key: batchKey(batch),
        UpdateExpression:
          'SET qty = :newQty, available = available + :delta' +
          (changed.eta === null ? '' : ', eta = :newEta') +
          (ended > 0 ? ', heldUnits = heldUnits - :ended' : '') +
          (changed.eta === null ? ' REMOVE eta' : ''),
        // `qty = :qty`: the delta of `available` is the delta of the qty it replaces (and of the ended holds' units).
        ConditionExpression: `qty = :qty AND ${ConditionExpression}`,
        ExpressionAttributeValues: {
          ...ExpressionAttributeValues,
          ':qty': batch.qty,
          ':newQty': changed.qty,
          ':delta': delta,
          ...(ended > 0 ? { ':ended': ended } : {}),
          ...(changed.eta === null ? {} : { ':newEta': changed.eta }),
        },
      },
    },
  ];
};

/**
 * `available` plus `delta`, on the batch as it was found: in place, or moved across the edge of the
 * stock range. A take never leaves a batch below zero: one that would (the read was stale, or the
 * caller asked too much) goes as an update whose condition fails unless the batch has more stock
 * than was read. Only a change of qty goes below zero. A take for a hold (`setAside`) counts the
 * units it takes as held, which keeps the batch in the stock range.
 */
export const availableWrites = (tableName: string, batch: Batch, delta: number, setAside = false): TransactWriteItem[] => {
  const adjusted: Batch = { ...batch, available: batch.available + delta, ...(setAside ? { held: heldOf(batch) - delta } : {}) };
  // A take that the read says would go below zero is not moved: its in-place condition fails instead.
  if (hasStockLeft(batch) !== hasStockLeft(adjusted) && adjusted.available >= 0) return batchMoveWrites(tableName, batch, adjusted);
  return [
    {
      Update: {
        TableName: tableName,
        Key: batchKey(batch),
        UpdateExpression: 'SET available = available + :delta' + (setAside ? ', heldUnits = if_not_exists(heldUnits, :noneHeld) - :delta' : ''),
        ...withValues(setAside ? staysOnItsSide(batch, delta, -delta) : staysOnItsSide(batch, delta), { ':delta': delta, ...(setAside ? { ':noneHeld': 0 } : {}) }),
      },
    },
  ];
};

/**
 * Lines taken off `from`, each put on its batch (or removed from its order, with its notice) on
 * condition that it is as read, and each batch's `available` changed once, by the sum of what the
 * moves give it or take from it: a transaction may not touch one item twice. Each batch's write is
 * availableWrites', on the batch as found before the moves: in place on condition that the sum
 * leaves it on its side of the stock range, or moved across the edge when the sum takes it there.
 */
export const lineMovesWrites = (tableName: string, from: Batch, moves: readonly LineMove[], batches: readonly Batch[]): TransactWriteItem[] => {
  const qtyOf = (some: readonly LineMove[]) => some.reduce((sum, { line }) => sum + line.qty, 0);
  const takes = [...new Set(moves.flatMap(({ to }) => (to === null ? [] : [to])))].map((ref) => {
    const batch = batches.find((found) => found.ref === ref);
    // A line put on a batch whose stock the write did not take would be a line on no stock.
    if (!batch) throw new Error(`Moving lines to batch ${ref}, which was not read`);
    return availableWrites(tableName, batch, -qtyOf(moves.filter(({ to }) => to === ref)));
  });
  return [
    ...moves.flatMap(({ line, to }) => (to === null ? lineRemovalWrites(tableName, line, 'reallocated') : [lineMoveWrite(tableName, line, to)])),
    ...availableWrites(tableName, from, qtyOf(moves)),
    ...takes.flat(),
  ];
};
