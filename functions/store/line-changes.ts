import type { Instant } from '../../domain/holds';
import { type Allocation, type Batch, type LineMove, type LinePart, type Part, type ShippedUnits, locationOf } from '../../domain/model';
import { availableWrites, locationField } from './batches';
import { PK } from './fields';
import { type DeallocationReason, LINE_BATCH, deallocationKey, lineBatchOf, lineKey, noticeFields, partKey, partWrite, partsField } from './lines';
import type { TransactWriteItem } from './store-calls';
import type { World } from './world';

/*
 * The writes that change an order's line already written (lines.ts: its keys, items and parser):
 * a shipment of its units, its removal from its order (a cancel, or a change of its batch with no
 * room for it elsewhere), and the moves of lines and of split lines' parts off a batch that shrank.
 * Each is conditioned on the line as read, which guards that the units it gives back, moves or
 * ships are the units it holds.
 */

/**
 * Guards "the stock a line gives back is the stock it held": the line is still as it was read, a
 * whole line on its batch, a split line with its parts.
 */
const lineAsRead = ({ batchref, qty, split }: Allocation) =>
  split
    ? { ConditionExpression: 'qty = :lineQty AND parts = :parts', ExpressionAttributeValues: { ':lineQty': qty, ':parts': partsField(split.parts) } }
    : { ConditionExpression: 'batchref = :batchref AND qty = :lineQty', ExpressionAttributeValues: { ':batchref': batchref, ':lineQty': qty } };

const partRemoval = (tableName: string, { orderid, sku }: Allocation, { batchref }: LinePart): TransactWriteItem => ({
  Delete: { TableName: tableName, Key: partKey(orderid, sku, batchref) },
});

/** The line put on another batch, `to`, and at its location, at `now`, on condition that it is still as read. */
const lineMoveWrite = (tableName: string, allocation: Allocation, to: Batch, now: Instant): TransactWriteItem => {
  const { location } = locationField(to);
  return {
    Update: {
      TableName: tableName,
      Key: lineKey(allocation.orderid, allocation.sku),
      // The line keeps its allocation time: it was allocated then, and moved now.
      UpdateExpression: `SET batchref = :to, ${LINE_BATCH} = :lines, movedAt = :movedAt${location === undefined ? ' REMOVE #location' : ', #location = :location'}`,
      ConditionExpression: lineAsRead(allocation).ConditionExpression,
      ExpressionAttributeNames: { '#location': 'location' },
      ExpressionAttributeValues: {
        ':to': to.ref,
        ':lines': lineBatchOf({ ...allocation, batchref: to.ref }),
        ':movedAt': new Date(now).toISOString(),
        ...(location === undefined ? {} : { ':location': location }),
        ...lineAsRead(allocation).ExpressionAttributeValues,
      },
    },
  };
};

/**
 * A line that shipped units gives back the others and stays, as what it shipped: it holds no unit,
 * is listed under no batch (a change of its batch has nothing of it to move), and a cancel marks it
 * (`cancelledAt`), so that a repeat of the cancel finds it done. On condition that it is as read.
 */
const lineEmptiedWrite = (tableName: string, allocation: Allocation, reason: DeallocationReason, now: Instant): TransactWriteItem => {
  const asRead = lineAsRead(allocation);
  const cancelled = reason === 'cancelled';
  return {
    Update: {
      TableName: tableName,
      Key: lineKey(allocation.orderid, allocation.sku),
      UpdateExpression: `SET qty = :none${allocation.split ? ', parts = :noParts' : ''}${cancelled ? ', cancelledAt = :cancelledAt' : ''} REMOVE ${LINE_BATCH}`,
      ConditionExpression: asRead.ConditionExpression,
      ExpressionAttributeValues: {
        ...asRead.ExpressionAttributeValues,
        ':none': 0,
        ...(allocation.split ? { ':noParts': [] } : {}),
        ...(cancelled ? { ':cancelledAt': new Date(now).toISOString() } : {}),
      },
    },
  };
};

/** A line's shipped units as its item holds them: a location at `default` absent, as a batch's. */
const shippedField = (shipped: readonly ShippedUnits[]) => shipped.map(({ batchref, qty, location }) => ({ batchref, qty, ...locationField({ location }) }));

/**
 * A line as a shipment leaves it (`after`: fewer units held, more shipped), on condition that it is
 * as read (`before`): two shipments, or a shipment and a move or a cancel, never both count the
 * same units. A line left with none is listed under no batch; a split line's part items follow its
 * parts (the line's condition guards them): a part's qty lowered, or the part removed once shipped whole.
 */
export const lineShipWrites = (tableName: string, before: Allocation, after: Allocation): TransactWriteItem[] => {
  const asRead = lineAsRead(before);
  const settled = after.qty === 0;
  const line: TransactWriteItem = {
    Update: {
      TableName: tableName,
      Key: lineKey(before.orderid, before.sku),
      UpdateExpression: `SET qty = :qtyLeft, shipped = :shipped${after.split ? ', parts = :partsLeft' : ''}${settled && !before.split ? ` REMOVE ${LINE_BATCH}` : ''}`,
      ConditionExpression: asRead.ConditionExpression,
      ExpressionAttributeValues: {
        ...asRead.ExpressionAttributeValues,
        ':qtyLeft': after.qty,
        ':shipped': shippedField(after.shipped ?? []),
        ...(after.split ? { ':partsLeft': partsField(after.split.parts) } : {}),
      },
    },
  };
  const partWrites = (before.split?.parts ?? []).flatMap((part): TransactWriteItem[] => {
    const left = after.split?.parts.find(({ batchref }) => batchref === part.batchref);
    if (left?.qty === part.qty) return [];
    const Key = partKey(before.orderid, before.sku, part.batchref);
    if (!left) return [{ Delete: { TableName: tableName, Key } }];
    // Guards "a part's item exists only with its part": an update would otherwise make one.
    return [{ Update: { TableName: tableName, Key, UpdateExpression: 'SET qty = :partLeft', ConditionExpression: `attribute_exists(${PK})`, ExpressionAttributeValues: { ':partLeft': left.qty } } }];
  });
  return [line, ...partWrites];
};

/**
 * The line's removal from its batch, `from`, at `now`, and, in the same transaction, the notice that
 * says why it left (for Deallocated) and where from: the batch's location as read, whatever the line
 * records.
 */
export const lineRemovalWrites = (
  tableName: string,
  allocation: Allocation,
  reason: DeallocationReason,
  from: Pick<Batch, 'location'>,
  now: Instant,
  world: Pick<World, 'newId'>,
): TransactWriteItem[] => {
  const { orderid, sku, qty, batchref, split } = allocation;
  const notice = noticeFields(now, world);
  // A split line's notice names its parts, each where its line records it.
  const where = split ? { ...locationField(split.parts[0] ?? {}), split: split.split, parts: partsField(split.parts) } : locationField(from);
  return [
    allocation.shipped ? lineEmptiedWrite(tableName, allocation, reason, now) : { Delete: { TableName: tableName, Key: lineKey(orderid, sku), ...lineAsRead(allocation) } },
    ...(split?.parts ?? []).map((part) => partRemoval(tableName, allocation, part)),
    {
      Put: {
        TableName: tableName,
        Item: {
          ...deallocationKey(orderid, sku, notice.noticeId),
          type: 'Deallocation',
          orderid,
          sku,
          qty,
          batchref,
          ...where,
          // What the line shipped, so that its event names the qty it was allocated.
          ...(allocation.shipped ? { shipped: shippedField(allocation.shipped) } : {}),
          reason,
          deallocatedAt: new Date(now).toISOString(),
          ...notice,
        },
      },
    },
  ];
};

/**
 * The part of a split line on `from` moved at `now` to the parts `to` names (each joining the line's
 * part on its batch, when it has one; the others in the moved part's place, in their order), on
 * condition that the line is as read: its item names its new parts, the part items follow, and the
 * batches' stock moves by the units each gives or takes (availableWrites, each as read). At most
 * MAX_PARTS_PER_LINE batches take units, so that it stays well within a transaction's 100 items.
 */
export const partMoveWrites = (tableName: string, line: Allocation, from: Batch, to: readonly Part[], now: Instant, allocatedAt: string): TransactWriteItem[] => {
  const split = line.split;
  const moving = split?.parts.find(({ batchref }) => batchref === from.ref);
  if (!split || !moving) throw new Error(`Line ${line.orderid}/${line.sku} has no part on batch ${from.ref} to move`);
  // The units placed again are the part's, no more, no fewer, on batches other than the one they leave: else the caller erred.
  if (to.reduce((sum, { qty }) => sum + qty, 0) !== moving.qty || to.some(({ batch }) => batch.ref === from.ref)) {
    throw new Error(`Line ${line.orderid}/${line.sku} moves ${moving.qty} units off batch ${from.ref} to other parts than its own`);
  }
  const heldOn = (batchref: string) => split.parts.find((part) => part.batchref === batchref)?.qty ?? 0;
  const arrived = to.map(({ batch, qty }) => ({ batchref: batch.ref, qty: heldOn(batch.ref) + qty, location: locationOf(batch) }));
  const joining = (part: LinePart) => arrived.find(({ batchref }) => batchref === part.batchref);
  const added = arrived.filter(({ batchref }) => heldOn(batchref) === 0);
  const parts = split.parts.flatMap((part) => (part === moving ? added : [joining(part) ?? part]));
  const asRead = lineAsRead(line);
  return [
    {
      Update: {
        TableName: tableName,
        Key: lineKey(line.orderid, line.sku),
        UpdateExpression: 'SET parts = :moved, movedAt = :movedAt',
        ConditionExpression: asRead.ConditionExpression,
        ExpressionAttributeValues: { ...asRead.ExpressionAttributeValues, ':moved': partsField(parts), ':movedAt': new Date(now).toISOString() },
      },
    },
    partRemoval(tableName, line, moving),
    ...arrived.map((part) => partWrite(tableName, line, part, allocatedAt)),
    ...availableWrites(tableName, from, moving.qty),
    ...to.flatMap(({ batch, qty }) => availableWrites(tableName, batch, -qty)),
  ];
};

/**
 * Lines taken off `from` at `now`, each put on its batch (or removed from its order, with its notice)
 * on condition that it is as read, and each batch's `available` changed once, by the sum of what the
 * moves give it or take from it: a transaction may not touch one item twice. Each batch's write is
 * availableWrites', on the batch as found before the moves: in place on condition that the sum
 * leaves it on its side of the stock range, or moved across the edge when the sum takes it there.
 */
export const lineMovesWrites = (
  tableName: string,
  from: Batch,
  moves: readonly LineMove[],
  batches: readonly Batch[],
  now: Instant,
  world: Pick<World, 'newId'>,
): TransactWriteItem[] => {
  const qtyOf = (some: readonly LineMove[]) => some.reduce((sum, { line }) => sum + line.qty, 0);
  const batchOf = (ref: string) => {
    const batch = batches.find((found) => found.ref === ref);
    // A line put on a batch whose stock the write did not take would be a line on no stock.
    if (!batch) throw new Error(`Moving lines to batch ${ref}, which was not read`);
    return batch;
  };
  const takes = [...new Set(moves.flatMap(({ to }) => (to === null ? [] : [to])))].map((ref) =>
    availableWrites(tableName, batchOf(ref), -qtyOf(moves.filter(({ to }) => to === ref))),
  );
  return [
    ...moves.flatMap(({ line, to }) =>
      to === null ? lineRemovalWrites(tableName, line, 'reallocated', from, now, world) : [lineMoveWrite(tableName, line, batchOf(to), now)],
    ),
    ...availableWrites(tableName, from, qtyOf(moves)),
    ...takes.flat(),
  ];
};
