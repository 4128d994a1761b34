import { type Hold, type Instant, batchAsStored } from '../../domain/holds';
import { type Allocation, type Batch, type LineMove, hasStockLeft } from '../../domain/model';
import type { HoldEnding, HoldToEnd } from '../../domain/ports';
import {
  ACTIVE_HOLD_SHARD,
  ALLOCATED_AT,
  type DeallocationReason,
  LINE_BATCH,
  PK,
  batchDescription,
  batchItem,
  batchKey,
  batchReferenceKey,
  batchWithStockKey,
  deallocationKey,
  heldAttribute,
  heldKey,
  holdEndedFields,
  holdItem,
  holdKey,
  knownSkuItem,
  lineKey,
  lineBatchOf,
  noticeFields,
  now,
} from './items';
import { ITEM_IS_NEW, and, batchIsExactly, freedEntries, holdsAsRead, staysOnItsSide, withValues } from './conditions';
import { spreadBatchChangeWrite, spreadItemWrite } from './spread-writes';
import type { TransactWriteItem } from './store-calls';
import { timeToLiveAttribute } from './table';

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

const batchMoveWrites = (tableName: string, batch: Batch, moved: Batch): TransactWriteItem[] => [
  { Delete: { TableName: tableName, Key: batchKey(batch), ...batchIsExactly(batch) } },
  { Put: { TableName: tableName, Item: batchItem(moved), ConditionExpression: ITEM_IS_NEW } },
];

/**
 * A batch's new qty and eta, as read: moved across the edge of the stock range, or in place (a spread
 * batch: spread-writes.ts). The holds it records that `changed` no longer does are ended by the same
 * transaction (their records' writes are the caller's): their entries go, on condition that the
 * batch's holds are as read.
 */
export const batchChangeWrites = (tableName: string, batch: Batch, changed: Batch): TransactWriteItem[] => {
  if (batch.pieces) return [spreadBatchChangeWrite(tableName, batch, changed)];
  if (hasStockLeft(batch) !== hasStockLeft(changed)) return batchMoveWrites(tableName, batch, changed);
  const delta = changed.available - batch.available;
  const { ConditionExpression, ExpressionAttributeValues } = staysOnItsSide(batch, delta, changed.held);
  const ended = (batch.held ?? []).filter(({ holdid }) => !(changed.held ?? []).some((units) => units.holdid === holdid));
  const endedNames = Object.fromEntries(ended.map(({ holdid }, index) => [`#ended${index}`, heldKey(holdid)]));
  const removed = [...(changed.eta === null ? ['eta'] : []), ...Object.keys(endedNames).map((name) => `held.${name}`)];
  return [
    {
      Update: {
        TableName: tableName,
        Key: batchKey(batch),
        UpdateExpression:
          'SET qty = :newQty, available = available + :delta' + (changed.eta === null ? '' : ', eta = :newEta') + (removed.length > 0 ? ` REMOVE ${removed.join(', ')}` : ''),
        // `qty = :qty`: the delta of `available` is the delta of the qty it replaces (and of the ended holds' units).
        ConditionExpression: `qty = :qty AND ${ConditionExpression}`,
        ...(ended.length > 0 ? { ExpressionAttributeNames: endedNames } : {}),
        ExpressionAttributeValues: {
          ...ExpressionAttributeValues,
          ':qty': batch.qty,
          ':newQty': changed.qty,
          ':delta': delta,
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
 * than was read. Only a change of qty goes below zero. The holds that had expired when the batch was
 * found (`freed`, counted in its `available`) are given back in the same write. On a spread batch
 * the change is of its item's own units (spreadItemWrite).
 */
export const availableWrites = (tableName: string, batch: Batch, delta: number): TransactWriteItem[] => {
  if (batch.pieces) return [spreadItemWrite(tableName, batch, delta)];
  const stored = batchAsStored(batch);
  const adjusted: Batch = { ...stored, available: batch.available + delta, held: batch.held };
  // A take that the read says would go below zero is not moved: its in-place condition fails instead.
  if (hasStockLeft(stored) !== hasStockLeft(adjusted) && adjusted.available >= 0) return batchMoveWrites(tableName, stored, adjusted);
  const storedDelta = adjusted.available - stored.available;
  const { freed, giveBack } = freedEntries(batch);
  return [
    {
      Update: {
        TableName: tableName,
        Key: batchKey(stored),
        UpdateExpression: 'SET available = available + :delta' + giveBack,
        ...withValues(staysOnItsSide(stored, storedDelta, adjusted.held), { ':delta': storedDelta }),
        ...freed,
      },
    },
  ];
};

/** The write, with the item as it stood returned in the cancellation when its condition fails. */
export const returningItemOnFailure = (item: TransactWriteItem): TransactWriteItem => {
  if (item.Update) return { Update: { ...item.Update, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } };
  if (item.Delete) return { Delete: { ...item.Delete, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } };
  return item;
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

/** A hold's record, placed at `now`, on condition that its holdid was never used; a failure carries the record there. */
export const newHoldWrite = (tableName: string, hold: Hold, now: Instant): TransactWriteItem => ({
  Put: { TableName: tableName, Item: holdItem(hold, now), ConditionExpression: ITEM_IS_NEW, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' },
});

/**
 * Sets `qty` of the batch, as found, aside for the hold: its available units go to the hold's entry,
 * and the expired holds it was found with give theirs back, so what it has left, available or
 * held, does not change, nor does where it is stored.
 */
export const setAsideWrite = (tableName: string, hold: Hold, qty: number, batch: Batch): TransactWriteItem => {
  const stored = batchAsStored(batch);
  const held = [...(batch.held ?? []), { holdid: hold.holdid, qty, expiresAt: hold.expiresAt }];
  const taken = stored.available - (batch.available - qty);
  return {
    Update: {
      TableName: tableName,
      Key: batchKey(stored),
      UpdateExpression: 'SET available = available - :taken, held = :newHeld',
      ...withValues(and({ ConditionExpression: 'available >= :taken', ExpressionAttributeValues: {} }, holdsAsRead(stored.held)), {
        ':taken': taken,
        ':newHeld': heldAttribute(held),
      }),
    },
  };
};

/** The hold's end on its record, on condition that it is active and as read, and its time has (not) passed at `now`. */
export const holdEndWrite = (tableName: string, hold: Hold, ending: HoldEnding, now: Instant): TransactWriteItem => {
  const ended = holdEndedFields(now);
  return {
    Update: {
      TableName: tableName,
      Key: holdKey(hold.holdid),
      // Ended, it leaves the active holds' index.
      UpdateExpression: `SET #status = :ending, endedAt = :endedAt, #ttl = :ttl REMOVE ${ACTIVE_HOLD_SHARD}`,
      // Guards "a hold ends once, one way".
      ConditionExpression: `#status = :active AND heldUntil = :heldUntil AND heldUntil ${ending === 'released' ? '>' : '<='} :now`,
      ExpressionAttributeNames: { '#status': 'status', '#ttl': timeToLiveAttribute },
      ExpressionAttributeValues: {
        ':ending': ending,
        ':endedAt': ended.endedAt,
        ':ttl': ended.timeToLive,
        ':active': 'active',
        ':heldUntil': hold.expiresAt,
        ':now': new Date(now).toISOString(),
      },
    },
  };
};

/**
 * Holds' units on one batch given back, on condition that each one's entry is still there: one write
 * for all of them, since a transaction may not write one item twice (two holds ended together may
 * both hold units on a batch).
 */
export const heldUnitsReturnWrite = (tableName: string, { sku, batchref }: Hold['lines'][number], given: readonly { holdid: string; qty: number }[]): TransactWriteItem => {
  const names = Object.fromEntries(given.map(({ holdid }, index) => [`#hold${index}`, heldKey(holdid)]));
  const entries = Object.keys(names).map((name) => `held.${name}`);
  return {
    Update: {
      TableName: tableName,
      // A batch holding units is in the stock range, and giving units back keeps it there.
      Key: batchWithStockKey(sku, batchref),
      UpdateExpression: `SET available = available + :qty REMOVE ${entries.join(', ')}`,
      // Guards "a hold's units go back once": only the write that removes its entry gives them.
      ConditionExpression: entries.map((entry) => `attribute_exists(${entry})`).join(' AND '),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':qty': given.reduce((sum, { qty }) => sum + qty, 0) },
    },
  };
};

/**
 * Holds ended together (a change of a batch's qty ends them in its own write), on their other
 * batches: each record's end, and on each batch one give-back of every such hold's units there.
 */
export const holdEndWrites = (tableName: string, ending: readonly HoldToEnd[], now: Instant): TransactWriteItem[] => {
  const givenBack = new Map<string, { line: Hold['lines'][number]; given: { holdid: string; qty: number }[] }>();
  for (const { hold, givenBackOn } of ending) {
    for (const line of hold.lines.filter(({ batchref }) => givenBackOn.includes(batchref))) {
      const onBatch = givenBack.get(line.batchref) ?? { line, given: [] };
      onBatch.given.push({ holdid: hold.holdid, qty: line.qty });
      givenBack.set(line.batchref, onBatch);
    }
  }
  return [
    ...ending.map(({ hold, ending: how }) => holdEndWrite(tableName, hold, how, now)),
    ...[...givenBack.values()].map(({ line, given }) => heldUnitsReturnWrite(tableName, line, given)),
  ];
};

/** Guards "a hold changes only while it is active, as read": its status, its expiry, and the time has not passed it. */
const holdLastsAsRead = (hold: Hold, now: Instant) => ({
  ConditionExpression: '#status = :active AND heldUntil = :heldUntil AND heldUntil > :now',
  ExpressionAttributeValues: { ':active': 'active', ':heldUntil': hold.expiresAt, ':now': new Date(now).toISOString() },
});

/**
 * The hold's new expiry, on its record (with the time of the extension, for HoldExtended) and on its
 * entry on each of its batches (which allocations judge it by).
 */
export const holdExtensionWrites = (tableName: string, hold: Hold, expiresAt: string, now: Instant): TransactWriteItem[] => [
  {
    Update: {
      TableName: tableName,
      Key: holdKey(hold.holdid),
      UpdateExpression: 'SET heldUntil = :newHeldUntil, extendedAt = :extendedAt',
      ...withValues(holdLastsAsRead(hold, now), { ':newHeldUntil': expiresAt, ':extendedAt': new Date(now).toISOString() }),
      ExpressionAttributeNames: { '#status': 'status' },
    },
  },
  ...hold.lines.map(
    ({ sku, batchref }): TransactWriteItem => ({
      Update: {
        TableName: tableName,
        // A batch holding units is in the stock range.
        Key: batchWithStockKey(sku, batchref),
        UpdateExpression: 'SET held.#hold.expiresAt = :newHeldUntil',
        // Guards "an entry's expiry is its hold's": the entry is there, with the expiry the record had.
        ConditionExpression: 'held.#hold.expiresAt = :heldUntil',
        ExpressionAttributeNames: { '#hold': heldKey(hold.holdid) },
        ExpressionAttributeValues: { ':newHeldUntil': expiresAt, ':heldUntil': hold.expiresAt },
      },
    }),
  ),
];

/** The hold's record, confirmed to the order, on condition that it lasts at `now` as read. */
export const holdConfirmationWrite = (tableName: string, hold: Hold, orderid: string, now: Instant): TransactWriteItem => {
  const ended = holdEndedFields(now);
  return {
    Update: {
      TableName: tableName,
      Key: holdKey(hold.holdid),
      UpdateExpression: `SET #status = :confirmed, orderid = :orderid, endedAt = :endedAt, #ttl = :ttl REMOVE ${ACTIVE_HOLD_SHARD}`,
      // Guards "a hold ends once, one way": against its release, its expiry and another confirm.
      ...withValues(holdLastsAsRead(hold, now), { ':confirmed': 'confirmed', ':orderid': orderid, ':endedAt': ended.endedAt, ':ttl': ended.timeToLive }),
      ExpressionAttributeNames: { '#status': 'status', '#ttl': timeToLiveAttribute },
    },
  };
};

/**
 * The hold's units on one batch become its line's: the entry goes, `available` stays. In place
 * while the batch keeps units no line holds; the batch as read (`found`) lets a confirm that leaves
 * it none move it out of the stock range.
 */
export const heldUnitsConfirmationWrites = (tableName: string, hold: Hold, { sku, batchref }: Hold['lines'][number], found?: Batch): TransactWriteItem[] => {
  if (found && !found.pieces) {
    const left = { ...found, held: (found.held ?? []).filter(({ holdid }) => holdid !== hold.holdid) };
    if (!hasStockLeft(left)) return batchMoveWrites(tableName, found, left);
  }
  return [
    {
      Update: {
        TableName: tableName,
        Key: batchWithStockKey(sku, batchref),
        UpdateExpression: 'REMOVE held.#hold',
        // Guards "a hold's units are taken once" (its entry is there) and "the stock range holds
        // exactly the batches with stock left" (the batch keeps units no line holds, or is spread,
        // which keeps it in the range until it is gathered).
        ConditionExpression: 'attribute_exists(held.#hold) AND (available > :none OR size(held) > :one OR attribute_exists(pieces))',
        ExpressionAttributeNames: { '#hold': heldKey(hold.holdid) },
        ExpressionAttributeValues: { ':none': 0, ':one': 1 },
      },
    },
  ];
};
