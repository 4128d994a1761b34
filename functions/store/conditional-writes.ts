import { type Hold, type Instant, batchAsStored } from '../../domain/holds';
import { type Allocation, type Batch, type LineMove, hasStockLeft, heldTotal, piecesAvailable } from '../../domain/model';
import type { HoldEnding } from '../../domain/ports';
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
  linesOfBatch,
  noticeFields,
  now,
  pieceItem,
  pieceKey,
} from './items';
import type { TransactWriteItem } from './store-calls';
import { timeToLiveAttribute } from './table';

/*
 * Every item the adapter's transactions write, each with the condition that guards its invariant:
 * which write may happen, on what it read. The repository (batch-repository.ts) puts them together
 * into the transaction of each request; items.ts knows the keys and attributes they name.
 */

type Condition = { ConditionExpression: string; ExpressionAttributeValues: Record<string, unknown> };

const withValues = (condition: Condition, values: Record<string, unknown>) => ({
  ...condition,
  ExpressionAttributeValues: { ...condition.ExpressionAttributeValues, ...values },
});

const and = (...conditions: Condition[]): Condition => ({
  ConditionExpression: conditions.map(({ ConditionExpression }) => ConditionExpression).join(' AND '),
  ExpressionAttributeValues: Object.assign({}, ...conditions.map(({ ExpressionAttributeValues }) => ExpressionAttributeValues)),
});

/** Guards "a key is written once": the put fails if an item with that key already exists. */
const ITEM_IS_NEW = `attribute_not_exists(${PK})`;
/** Guards "the stock a line gives back is the stock it held": the line is still as it was read. */
const LINE_IS_AS_READ = 'batchref = :batchref AND qty = :lineQty';
const lineAsRead = ({ batchref, qty }: Allocation) => ({ ':batchref': batchref, ':lineQty': qty });

/**
 * Guards "a batch's holds are as read": a write of a batch that could move it is made against the
 * holds it read on it (none, or exactly these), so that where the batch belongs, in the stock range
 * or out of it, follows from `available` alone.
 */
const holdsAsRead = (held: Batch['held'] = []): Condition =>
  held.length === 0
    ? { ConditionExpression: '(attribute_not_exists(held) OR held = :noHolds)', ExpressionAttributeValues: { ':noHolds': {} } }
    : { ConditionExpression: 'held = :held', ExpressionAttributeValues: { ':held': heldAttribute(held) } };

/**
 * A batch's key says whether it has stock left, so a change of `available` that crosses that line
 * moves the item: delete it where it is, on condition that it is exactly as read (so the copy is
 * exact), and put it at its other key. The put's condition cannot fail while the delete's holds: one
 * batch never has both keys. A condition cannot compare with NULL everywhere, hence an absent `eta`
 * for a batch in stock.
 */
const batchIsExactly = ({ qty, available, eta, held }: Batch) =>
  and(
    {
      ConditionExpression: `available = :available AND qty = :qty AND ${eta === null ? 'attribute_not_exists(eta)' : 'eta = :eta'}`,
      ExpressionAttributeValues: { ':available': available, ':qty': qty, ...(eta === null ? {} : { ':eta': eta }) },
    },
    holdsAsRead(held),
  );

/**
 * A change of `available` by `delta` made in place, on a batch stored with these holds, on condition
 * that the result stays on the side of the stock range the batch was read on (which guards "stock
 * never goes below zero" and "the stock range holds exactly the batches with stock left"). Holds left
 * on the batch after the write (`heldAfter`) keep it in the range at `available` 0. A condition
 * cannot do arithmetic, hence the bound against `-delta`.
 */
const staysOnItsSide = (stored: Batch, delta: number, heldAfter: Batch['held'] = stored.held) => {
  const held = heldTotal(heldAfter) > 0;
  const comparison = hasStockLeft(stored) ? (held ? '>=' : '>') : held ? '<' : '<=';
  const bound = { ConditionExpression: `available ${comparison} :bound`, ExpressionAttributeValues: { ':bound': -delta } };
  // A batch with stock and no holds keeps it by `available` alone, whatever holds come meanwhile: the
  // allocation's path needs no more.
  return comparison === '>' && (stored.held ?? []).length === 0 ? bound : and(bound, holdsAsRead(stored.held));
};

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
      [LINE_BATCH]: linesOfBatch(allocation.batchref),
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
    ExpressionAttributeValues: { ':to': to, ':lines': linesOfBatch(to), ':movedAt': now(), ...lineAsRead(allocation) },
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
 * A batch's new qty and eta, as read: moved across the edge of the stock range, or in place. A spread
 * batch changes in place, its own units taking the change of `available`: on condition that it is
 * still spread and they cover a fall ("stock never goes below zero"); a fall they do not cover is
 * made on the batch gathered first (the repository's to see to).
 */
export const batchChangeWrites = (tableName: string, batch: Batch, changed: Batch): TransactWriteItem[] => {
  if (batch.pieces) {
    const delta = changed.available - batch.available;
    return [
      {
        Update: {
          TableName: tableName,
          Key: batchWithStockKey(batch.sku, batch.ref),
          UpdateExpression: 'SET qty = :newQty, available = available + :delta' + (changed.eta === null ? ' REMOVE eta' : ', eta = :newEta'),
          ConditionExpression: 'qty = :qty AND attribute_exists(pieces) AND available >= :fall',
          ExpressionAttributeValues: {
            ':qty': batch.qty,
            ':newQty': changed.qty,
            ':delta': delta,
            ':fall': Math.max(0, -delta),
            ...(changed.eta === null ? {} : { ':newEta': changed.eta }),
          },
        },
      },
    ];
  }
  if (hasStockLeft(batch) !== hasStockLeft(changed)) return batchMoveWrites(tableName, batch, changed);
  const delta = changed.available - batch.available;
  const { ConditionExpression, ExpressionAttributeValues } = staysOnItsSide(batch, delta);
  return [
    {
      Update: {
        TableName: tableName,
        Key: batchKey(batch),
        UpdateExpression: 'SET qty = :newQty, available = available + :delta' + (changed.eta === null ? ' REMOVE eta' : ', eta = :newEta'),
        // `qty = :qty`: the delta of `available` is the delta of the qty it replaces.
        ConditionExpression: `qty = :qty AND ${ConditionExpression}`,
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

/** The entries of the holds a batch was found with expired (`freed`), for a write that gives them back by removing them. */
const freedEntries = (batch: Batch) => {
  const names = Object.fromEntries((batch.freed ?? []).map(({ holdid }, index) => [`#freed${index}`, heldKey(holdid)]));
  const removed = Object.keys(names).map((name) => `held.${name}`);
  return {
    freed: removed.length > 0 ? { ExpressionAttributeNames: names } : {},
    giveBack: removed.length > 0 ? ` REMOVE ${removed.join(', ')}` : '',
  };
};

/**
 * A spread batch's own units (its item's `available`) changed by `delta`. A spread batch stays in the
 * stock range whatever it has left, so the write is in place, on condition that the batch is still
 * spread (a gathered one may belong out of the range, which the read did not see) and, for a take,
 * that its own units cover it: "stock never goes below zero", however the pieces stand. Expired
 * holds found on it are given back only while its holds are as read.
 */
const spreadItemWrite = (tableName: string, batch: Batch, delta: number): TransactWriteItem => {
  const stored = batchAsStored({ ...batch, available: batch.available - piecesAvailable(batch) });
  // The expired holds' units that the found batch counts, given back by this write, come to it too.
  const storedDelta = heldTotal(batch.freed) + delta;
  const { freed, giveBack } = freedEntries(batch);
  const conditions: Condition[] = [{ ConditionExpression: 'attribute_exists(pieces) AND available >= :bound', ExpressionAttributeValues: { ':bound': Math.max(0, -storedDelta) } }];
  if ((batch.freed ?? []).length > 0) conditions.push(holdsAsRead(stored.held));
  return {
    Update: {
      TableName: tableName,
      Key: batchWithStockKey(batch.sku, batch.ref),
      UpdateExpression: 'SET available = available + :delta' + giveBack,
      ...withValues(and(...conditions), { ':delta': storedDelta }),
      ...freed,
    },
  };
};

/**
 * `qty` taken from one piece of a spread batch, on condition that the piece has it: "stock never goes
 * below zero", piece by piece. A piece gathered meanwhile has no `available`, and the condition fails.
 */
export const pieceTakeWrite = (tableName: string, batch: Batch, piece: number, qty: number, takenAt: string): TransactWriteItem => ({
  Update: {
    TableName: tableName,
    Key: pieceKey(batch.sku, batch.ref, piece),
    UpdateExpression: 'SET available = available - :qty, takenAt = :takenAt',
    ConditionExpression: 'available >= :qty',
    ExpressionAttributeValues: { ':qty': qty, ':takenAt': takenAt },
  },
});

/**
 * Spreads `moved` of a batch's own units over `pieces` new pieces, as found whole with at least that
 * many. The batch item's condition guards "a batch is spread once at a time" (not spread already)
 * and "stock never goes below zero" (it still has the units moved); each piece is new. The units
 * move, so `qty` = own + pieces' + lines' + holds' holds through it.
 */
export const spreadWrites = (tableName: string, batch: Batch, moved: number, pieces: number, spreadId: string, spreadAt: string): TransactWriteItem[] => [
  {
    Update: {
      TableName: tableName,
      Key: batchWithStockKey(batch.sku, batch.ref),
      UpdateExpression: 'SET available = available - :moved, pieces = :pieces, spreadId = :spreadId, spreadAt = :spreadAt',
      ConditionExpression: 'attribute_not_exists(pieces) AND available >= :moved',
      ExpressionAttributeValues: { ':moved': moved, ':pieces': pieces, ':spreadId': spreadId, ':spreadAt': spreadAt },
    },
  },
  ...Array.from({ length: pieces }, (_, piece): TransactWriteItem => {
    const available = Math.floor(moved / pieces) + (piece < moved % pieces ? 1 : 0);
    const item = pieceItem({ sku: batch.sku, ref: batch.ref, piece, available, spreadId });
    return { Put: { TableName: tableName, Item: item, ConditionExpression: ITEM_IS_NEW } };
  }),
];

/**
 * A spread batch gathered back: each piece removed on condition that it holds what was read, and
 * the sum given to the batch item, which stops being spread. The batch item's condition guards
 * "pieces go back once" (still spread into as many pieces) and, when the batch is left with no
 * stock, "the stock range holds exactly the batches with stock left": the item, exactly as read,
 * then moves out of it.
 */
export const gatherWrites = (tableName: string, batch: Batch): TransactWriteItem[] => {
  const pieces = batch.pieces ?? [];
  const sum = piecesAvailable(batch);
  const pieceRemovals = pieces.map(
    ({ piece, available }): TransactWriteItem => ({
      Delete: {
        TableName: tableName,
        Key: pieceKey(batch.sku, batch.ref, piece),
        ConditionExpression: 'available = :available',
        ExpressionAttributeValues: { ':available': available },
      },
    }),
  );
  const { pieces: _, ...whole } = batch;
  const stored = batchAsStored({ ...whole, available: batch.available - sum });
  const gathered = { ...stored, available: stored.available + sum };
  const stillSpread = { ConditionExpression: 'pieces = :pieces', ExpressionAttributeValues: { ':pieces': pieces.length } };
  if (!hasStockLeft(gathered)) {
    return [
      ...pieceRemovals,
      { Delete: { TableName: tableName, Key: batchWithStockKey(batch.sku, batch.ref), ...and(batchIsExactly(stored), stillSpread) } },
      { Put: { TableName: tableName, Item: batchItem(gathered), ConditionExpression: ITEM_IS_NEW } },
    ];
  }
  // With no pieces' units to add, what keeps it in the range is its own units or its holds, as read.
  const keepsStock = sum > 0 ? [] : heldTotal(stored.held) > 0 ? [holdsAsRead(stored.held)] : [{ ConditionExpression: 'available > :none', ExpressionAttributeValues: { ':none': 0 } }];
  return [
    ...pieceRemovals,
    {
      Update: {
        TableName: tableName,
        Key: batchWithStockKey(batch.sku, batch.ref),
        UpdateExpression: 'SET available = available + :sum REMOVE pieces, spreadId, spreadAt',
        ...withValues(and(stillSpread, ...keepsStock), { ':sum': sum }),
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

/** A hold's units on one batch given back, on condition that its entry is still there. */
export const heldUnitsReturnWrite = (tableName: string, hold: Hold, { sku, qty, batchref }: Hold['lines'][number]): TransactWriteItem => ({
  Update: {
    TableName: tableName,
    // A batch holding units is in the stock range, and giving units back keeps it there.
    Key: batchWithStockKey(sku, batchref),
    UpdateExpression: 'SET available = available + :qty REMOVE held.#hold',
    // Guards "a hold's units go back once": only the write that removes its entry gives them.
    ConditionExpression: 'attribute_exists(held.#hold)',
    ExpressionAttributeNames: { '#hold': heldKey(hold.holdid) },
    ExpressionAttributeValues: { ':qty': qty },
  },
});

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
