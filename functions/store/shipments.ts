import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Instant } from '../../domain/holds';
import type { Batch } from '../../domain/model';
import type { SaveShipmentResult } from '../../domain/ports';
import type { LineShipped, Shipment, ShipmentLine } from '../../domain/shipments';
import { ACTOR, CHANGE_REASON, INCOMING_OF, ONE_CHANGE_MORE, batchKey, batchReferenceKey, locationField } from './batches';
import { ITEM_IS_NEW, and, withValues } from './conditions';
import { PK, isAt, isNumber, isText, itemKey } from './fields';
import { lineShipWrites } from './line-changes';
import { MAX_TRANSACTION_ITEMS, type StoreCalls, type TransactWriteItem } from './store-calls';
import { changeAfterCounts, stockChangeWrite } from './stock-changes';
import { partitionKeyPrefix } from './table';

/*
 * Shipments (domain/shipments.ts; items.ts, "The table's items"): a shipment's record, its key, item
 * and parser, and its one transaction: each line as the shipment leaves it, on condition that it is
 * as read; each batch's `qty` and its reference's copy lowered by the units shipped from it, and the
 * change recorded (stock-changes.ts); the shipment's record, on condition that its shipmentid is
 * new. A shipment takes units its lines hold, never a batch's available ones, so no batch's `available` or place in the stock range changes, and no
 * other request's take is conditioned on what it writes.
 */

export const shipmentKey = (shipmentid: string) => itemKey(`${partitionKeyPrefix.shipment}${shipmentid}`, 'SHIPMENT');

const shipmentItem = ({ shipmentid, orderid, location, shippedAt, lines }: Shipment, actor: string) => ({
  ...shipmentKey(shipmentid),
  type: 'Shipment',
  shipmentid,
  orderid,
  location,
  shippedAt,
  lines: lines.map(({ sku, qty, parts }) => ({ sku, qty, parts: parts.map(({ batchref, qty: partQty }) => ({ batchref, qty: partQty })) })),
  [ACTOR]: actor,
});

/** `actor`: who shipped it; absent on shipments recorded before the history named them. */
export type StoredShipmentItem = { readonly kind: 'shipment'; readonly shipment: Shipment; readonly actor?: string };

const parseShipmentLine = (value: unknown): ShipmentLine | undefined => {
  const { sku, qty, parts } = (value ?? {}) as Record<string, unknown>;
  if (!isText(sku) || !isNumber(qty) || !Array.isArray(parts) || parts.length === 0) return undefined;
  const parsed = parts.map((part) => {
    const { batchref, qty: partQty } = (part ?? {}) as Record<string, unknown>;
    return isText(batchref) && isNumber(partQty) && partQty > 0 ? { batchref, qty: partQty } : undefined;
  });
  if (parsed.some((part) => part === undefined)) return undefined;
  const found = parsed as { batchref: string; qty: number }[];
  return found.reduce((sum, part) => sum + part.qty, 0) === qty ? { sku, qty, parts: found } : undefined;
};

/** A shipment's record, read back through its key. */
export const parseShipmentItem = (item: Record<string, unknown>): StoredShipmentItem | undefined => {
  const { shipmentid, orderid, location, shippedAt, lines, [ACTOR]: actor } = item;
  if (!isText(shipmentid) || !isAt(item, shipmentKey(shipmentid))) return undefined;
  if (!isText(orderid) || !isText(location) || !isText(shippedAt) || !Array.isArray(lines) || lines.length === 0 || (actor !== undefined && !isText(actor))) return undefined;
  const parsed = lines.map(parseShipmentLine);
  if (parsed.some((line) => line === undefined)) return undefined;
  return { kind: 'shipment', shipment: { shipmentid, orderid, location, shippedAt, lines: parsed as ShipmentLine[] }, ...(actor === undefined ? {} : { actor }) };
};

/**
 * A batch's `qty`, and its reference's copy of it (for its BatchChanged), lowered by `shipped` from
 * the qty read, at the key its stock says as read. Not conditioned on the batch's available stock:
 * the units were the line's, whose condition guards them. On condition that the item is where it was
 * read, its qty as read: one moved or changed since fails, and the shipment reads again.
 */
const batchShipWrites = (tableName: string, batch: Batch, shipped: number, shipment: Shipment, actor: string): TransactWriteItem[] => [
  {
    Update: {
      TableName: tableName,
      Key: batchKey(batch),
      UpdateExpression: 'SET qty = :qtyAfter',
      // Guards "a shipment never takes a batch below zero" (the shipment ships only units a batch's
      // qty as read covers), and "the history's qty after each change is the batch's" (the write
      // sets it from the qty as read: another change since would be written over).
      ConditionExpression: `attribute_exists(${PK}) AND qty = :qtyRead`,
      ExpressionAttributeValues: { ':qtyRead': batch.qty, ':qtyAfter': batch.qty - shipped },
      // What it has now, when another change came first: the shipment is made again on it (saveShipment).
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  },
  {
    Update: {
      TableName: tableName,
      Key: batchReferenceKey(batch.ref),
      UpdateExpression: `SET qty = :qtyAfter, changedAt = :changedAt, ${CHANGE_REASON} = :shippedReason, ${ACTOR} = :actor REMOVE ${INCOMING_OF} ADD ${ONE_CHANGE_MORE}`,
      // Guards "a reference exists only with its batch": an update would otherwise create one.
      ...withValues(and({ ConditionExpression: `attribute_exists(${PK})`, ExpressionAttributeValues: {} }, changeAfterCounts(shipment.shippedAt)), {
        ':qtyAfter': batch.qty - shipped,
        ':changedAt': shipment.shippedAt,
        ':shippedReason': 'shipped',
        ':actor': actor,
        ':oneChange': 1,
      }),
    },
  },
  stockChangeWrite(
    tableName,
    {
      ref: batch.ref,
      sku: batch.sku,
      ...locationField(batch),
      kind: 'shipped',
      delta: -shipped,
      qtyAfter: batch.qty - shipped,
      reason: 'shipped',
      reference: shipment.shipmentid,
      at: shipment.shippedAt,
      actor,
    },
    shipment.shipmentid,
  ),
];

/** How many times a shipment is made again on its batches' qty as another change left it, before it reads everything again. */
const MAX_QTY_RACES = 8;
/** Where a batch's writes start among a shipment's items, and how many each batch has (batchShipWrites). */
const WRITES_PER_BATCH = 3;

/**
 * BatchRepository.saveShipment: the lines' writes, then each batch's three, then the record, last.
 * A shipment that finds only its batches' qty moved since its read (another shipment from them, a
 * transfer, an adjustment) is made again at once on the qty each has now, as the cancellation tells
 * it, so that shipments from one batch at once do not each read everything again; one that finds a
 * batch with fewer units than it ships, or anything else changed, reads again.
 */
export const saveShipment = async (
  calls: StoreCalls,
  tableName: string,
  shipment: Shipment,
  lines: readonly LineShipped[],
  batches: readonly Batch[],
  actor: string,
  now: () => Instant,
): Promise<SaveShipmentResult> => {
  const shippedFrom = (ref: string) =>
    shipment.lines.reduce((sum, line) => sum + line.parts.reduce((partSum, part) => (part.batchref === ref ? partSum + part.qty : partSum), 0), 0);
  const lineWrites = lines.flatMap(({ before, after }) => lineShipWrites(tableName, before, after));
  let current = batches;
  let stamped = shipment;
  for (let race = 0; race <= MAX_QTY_RACES; race++) {
    const record: TransactWriteItem = {
      Put: { TableName: tableName, Item: shipmentItem(stamped, actor), ConditionExpression: ITEM_IS_NEW, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' },
    };
    const items = [...lineWrites, ...current.flatMap((batch) => batchShipWrites(tableName, batch, shippedFrom(batch.ref), stamped, actor)), record];
    if (items.length > MAX_TRANSACTION_ITEMS) return { outcome: 'too-many-writes', writes: items.length, maxWrites: MAX_TRANSACTION_ITEMS };
    const cancellation = await calls.transactWrite(items);
    if (!cancellation) return { outcome: 'saved', shippedAt: stamped.shippedAt };
    const recordReason = cancellation.at(-1);
    if (recordReason?.Code === 'ConditionalCheckFailed' && recordReason.Item) {
      const existing = parseShipmentItem(unmarshall(recordReason.Item));
      if (existing?.kind !== 'shipment') throw new Error(`Item at the key of a shipment is not a shipment: ${JSON.stringify(existing)}`);
      return { outcome: 'shipment-exists', existing: existing.shipment };
    }
    const qtyNow = current.map((_, index) => {
      const reason = cancellation[lineWrites.length + index * WRITES_PER_BATCH];
      const found = reason?.Code === 'ConditionalCheckFailed' && reason.Item ? unmarshall(reason.Item).qty : undefined;
      return typeof found === 'number' ? found : undefined;
    });
    const failedElsewhere = cancellation.some(
      (reason, index) => reason.Code !== 'None' && !(index >= lineWrites.length && (index - lineWrites.length) % WRITES_PER_BATCH === 0 && qtyNow[(index - lineWrites.length) / WRITES_PER_BATCH] !== undefined),
    );
    const moved = current.map((batch, index) => ({ ...batch, qty: qtyNow[index] ?? batch.qty }));
    if (failedElsewhere || moved.some((batch) => batch.qty < shippedFrom(batch.ref))) {
      calls.raceLost(cancellation);
      return { outcome: 'changed' };
    }
    current = moved;
    // At a moment after the changes it is written on top of: the batch's changes stay in the order of their writes.
    stamped = { ...shipment, shippedAt: new Date(Math.max(now(), Date.parse(stamped.shippedAt) + 1)).toISOString() };
    if (race === MAX_QTY_RACES) calls.raceLost(cancellation);
  }
  return { outcome: 'changed' };
};
