import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Instant } from '../../domain/holds';
import type { ChangeKind } from '../../domain/stock-history';
import { type Batch, hasStockLeft } from '../../domain/model';
import type { ConditionalWrite, SaveTransferResult } from '../../domain/ports';
import { type Transfer, type TransferStatus, incomingBatchOf } from '../../domain/transfers';
import { ACTOR, CHANGE_REASON, INCOMING_OF, ONE_CHANGE_MORE, batchKey, locationField, batchMoveWrites, batchReferenceKey, batchWithStockKey, newBatchWrites, staysOnItsSide } from './batches';
import { ITEM_IS_NEW, and, withValues } from './conditions';
import { changeAfterCounts, stockChangeWrite } from './stock-changes';
import { PK, isAt, isNumber, isText, itemKey } from './fields';
import type { SpreadBatches } from './spread-batches';
import type { StoreCalls, TransactWriteItem } from './store-calls';
import { partitionKeyPrefix, timeToLiveAttribute } from './table';

/*
 * Transfers (domain/transfers.ts; items.ts, "The table's items"): a transfer's record, its key, item
 * and parser, and the two transactions of a transfer, each write with the condition that guards its
 * invariant. Making one: the source batch's qty and available lowered by the transfer's qty (the units
 * leave it), on the condition a line's take has, the incoming batch added as add_batch adds one, and
 * the record put on condition that its transferid is new. Cancelling one: the record marked cancelled
 * while active, the incoming batch and its reference removed while nothing was taken from it, and the
 * qty given back to the source batch. Each changes the source batch's reference's qty with it, so that
 * its BatchChanged says what the batch now has (stream-events.ts).
 */

export const transferKey = (transferid: string) => itemKey(`${partitionKeyPrefix.transfer}${transferid}`, 'TRANSFER');

/** A cancelled transfer's record lasts two days, as an ended hold's does: a repeat of its cancel answers as the first did until then. */
const CANCELLED_TRANSFER_LIFETIME_SECONDS = 2 * 24 * 60 * 60;

const TRANSFER_STATUSES: readonly unknown[] = ['active', 'cancelled'] satisfies TransferStatus[];

/** `from` and `to` are words DynamoDB reserves: stored as `fromLocation` and `toLocation`, no expression needs to name them otherwise. */
const transferItem = ({ transferid, sku, qty, from, to, eta, fromBatchref }: Transfer, createdAt: Instant) => ({
  ...transferKey(transferid),
  type: 'Transfer',
  transferid,
  sku,
  qty,
  fromLocation: from,
  toLocation: to,
  eta,
  fromBatchref,
  status: 'active',
  createdAt: new Date(createdAt).toISOString(),
});

/** `createdAt`: when it was made; `cancelledAt`: when it was cancelled, if it was. */
export type StoredTransferItem = { readonly kind: 'transfer'; readonly transfer: Transfer; readonly createdAt: string; readonly cancelledAt?: string };

/** A transfer's record, read back through its key. */
export const parseTransferItem = (item: Record<string, unknown>): StoredTransferItem | undefined => {
  const { transferid, sku, qty, fromLocation, toLocation, eta, fromBatchref, status, createdAt, cancelledAt } = item;
  if (!isText(transferid) || !isAt(item, transferKey(transferid))) return undefined;
  const fields = isText(sku) && isNumber(qty) && isText(fromLocation) && isText(toLocation) && isText(eta) && isText(fromBatchref);
  if (!fields || !TRANSFER_STATUSES.includes(status) || !isText(createdAt) || (cancelledAt !== undefined && !isText(cancelledAt))) return undefined;
  const transfer: Transfer = { transferid, sku, qty, from: fromLocation, to: toLocation, eta, fromBatchref, status: status as TransferStatus };
  return { kind: 'transfer', transfer, createdAt, ...(isText(cancelledAt) ? { cancelledAt } : {}) };
};

/**
 * The source batch's qty and available moved together by `delta`: in place on condition that its qty
 * is still the one read (so the reference's copy of it is exact, and a PATCH between the read and the
 * write is not overwritten) and that it stays on its side of the stock range, the condition of a
 * line's take (so a take never leaves it below zero: no oversell); or, when it crosses that edge,
 * moved exactly as read, as a line's take moves it. A spread batch only gets units back, on its own
 * item: a take from one is made on it gathered (saveTransfer).
 */
const sourceWrites = (tableName: string, batch: Batch, delta: number): TransactWriteItem[] => {
  const moved: Batch = { ...batch, qty: batch.qty + delta, available: batch.available + delta };
  const update = (Key: Record<string, unknown>, condition: { ConditionExpression: string; ExpressionAttributeValues: Record<string, unknown> }): TransactWriteItem[] => [
    {
      Update: {
        TableName: tableName,
        Key,
        UpdateExpression: 'SET qty = qty + :delta, available = available + :delta',
        ConditionExpression: `qty = :qty AND ${condition.ConditionExpression}`,
        ExpressionAttributeValues: { ...condition.ExpressionAttributeValues, ':delta': delta, ':qty': batch.qty },
      },
    },
  ];
  if (batch.pieces !== undefined) {
    if (delta < 0) throw new Error(`A transfer's take of ${-delta} from batch ${batch.ref}, spread over ${batch.pieces.length} pieces`);
    return update(batchWithStockKey(batch.sku, batch.ref), { ConditionExpression: 'attribute_exists(pieces)', ExpressionAttributeValues: {} });
  }
  if (hasStockLeft(batch) !== hasStockLeft(moved)) return batchMoveWrites(tableName, batch, moved);
  // A take comes only from a batch in stock: a PATCH that made it a shipment since fails it.
  const inStock = delta < 0 ? ' AND attribute_not_exists(eta)' : '';
  const whole = and(staysOnItsSide(batch, delta), { ConditionExpression: `attribute_not_exists(pieces)${inStock}`, ExpressionAttributeValues: {} });
  // At the key its stock says: units handed back to a batch still owed more (a PATCH cut off before its moves) find it exhausted.
  return update(batchKey(batch), whole);
};

/** The source batch's reference's copy of its qty, as the transfer leaves it at `now` (for its BatchChanged); its eta is the batch's own to change. */
const sourceReferenceWrite = (tableName: string, batch: Batch, delta: number, now: Instant, actor: string): TransactWriteItem => ({
  Update: {
    TableName: tableName,
    Key: batchReferenceKey(batch.ref),
    UpdateExpression: `SET qty = :newQty, changedAt = :changedAt, ${CHANGE_REASON} = :transferred, ${ACTOR} = :actor REMOVE ${INCOMING_OF} ADD ${ONE_CHANGE_MORE}`,
    // Guards "a reference exists only with its batch": an update would otherwise create one; and the
    // change's place among the batch's counts (stock-changes.ts).
    ...withValues(and({ ConditionExpression: `attribute_exists(${PK})`, ExpressionAttributeValues: {} }, changeAfterCounts(new Date(now).toISOString())), {
      ':newQty': batch.qty + delta,
      ':changedAt': new Date(now).toISOString(),
      ':transferred': 'transferred',
      ':actor': actor,
      ':oneChange': 1,
    }),
  },
});

/**
 * A change a transfer makes of one batch, for a count taken before it and for the history
 * (stock-changes.ts): `id` tells a take from its cancel at one moment.
 */
const transferChangeWrite = (tableName: string, transfer: Transfer, batch: Batch, change: { kind: ChangeKind; delta: number; now: Instant; actor: string }, id: string): TransactWriteItem =>
  stockChangeWrite(
    tableName,
    {
      ref: batch.ref,
      sku: batch.sku,
      ...locationField(batch),
      kind: change.kind,
      delta: change.delta,
      qtyAfter: batch.qty + change.delta,
      reason: 'transferred',
      reference: transfer.transferid,
      at: new Date(change.now).toISOString(),
      actor: change.actor,
    },
    id,
  );

/**
 * The incoming batch removed, on condition that nothing was taken from it and it was not received:
 * still a shipment, its qty still the transfer's and all of it available, none held, kept whole. So a
 * cancel that races an allocation onto it, a hold, a PATCH or its receipt loses to them, or they to it.
 */
const incomingRemovalWrites = (tableName: string, transfer: Transfer): TransactWriteItem[] => [
  {
    Delete: {
      TableName: tableName,
      Key: batchWithStockKey(transfer.sku, transfer.transferid),
      ConditionExpression:
        'qty = :qty AND available = :qty AND attribute_exists(eta) AND attribute_not_exists(pieces) AND (attribute_not_exists(heldUnits) OR heldUnits = :noneHeld)',
      ExpressionAttributeValues: { ':qty': transfer.qty, ':noneHeld': 0 },
    },
  },
  // Removed with its batch, on condition that no write has changed the batch since the transfer made
  // it: a batch received, or changed by a PATCH, is never the transfer's to take back, whatever a
  // later PATCH restores (a receipt undone would otherwise let a cancel remove a batch another
  // transfer took units from).
  {
    Delete: {
      TableName: tableName,
      Key: batchReferenceKey(transfer.transferid),
      ConditionExpression: `${INCOMING_OF} = :transferid`,
      ExpressionAttributeValues: { ':transferid': transfer.transferid },
    },
  },
];

/** Where the transfer's record and the incoming batch's reference stand in a cancel's transaction (transferCancelWrite first, then incomingRemovalWrites). */
const TRANSFER_RECORD_AT = 0;
const INCOMING_REFERENCE_AT = 2;

/** The record marked cancelled, on condition that it is still active: only one cancel gives the units back. */
const transferCancelWrite = (tableName: string, transfer: Transfer, cancelledAt: Instant): TransactWriteItem => ({
  Update: {
    TableName: tableName,
    Key: transferKey(transfer.transferid),
    UpdateExpression: 'SET #status = :cancelled, cancelledAt = :cancelledAt, #ttl = :ttl',
    ConditionExpression: '#status = :active',
    ExpressionAttributeNames: { '#status': 'status', '#ttl': timeToLiveAttribute },
    ExpressionAttributeValues: {
      ':cancelled': 'cancelled',
      ':active': 'active',
      ':cancelledAt': new Date(cancelledAt).toISOString(),
      ':ttl': Math.floor(cancelledAt / 1000) + CANCELLED_TRANSFER_LIFETIME_SECONDS,
    },
  },
});

/** The transfers' transactions, for the repository (batch-repository.ts), which delegates to them. */
export class TransferSaves {
  constructor(
    private readonly calls: StoreCalls,
    private readonly tableName: string,
    private readonly spreads: SpreadBatches,
    private readonly actor: string,
  ) {}

  /** BatchRepository.saveTransfer, made at `now`: at most 8 items, the source batch's take first and the record last. */
  async save(transfer: Transfer, source: Batch, now: Instant): Promise<SaveTransferResult> {
    // One transaction may not write an item twice: the incoming batch's reference would be the source's.
    if (transfer.transferid === source.ref) return { outcome: 'batch-exists' };
    if (source.pieces !== undefined) {
      await this.spreads.keptWhole([source]);
      return { outcome: 'read-again' };
    }
    const { actor } = this;
    const take = [
      ...sourceWrites(this.tableName, source, -transfer.qty),
      sourceReferenceWrite(this.tableName, source, -transfer.qty, now, actor),
      transferChangeWrite(this.tableName, transfer, source, { kind: 'transferred_out', delta: -transfer.qty, now, actor }, `${transfer.transferid}#taken`),
    ];
    const incomingBatch = incomingBatchOf(transfer);
    const incoming = [
      ...newBatchWrites(this.tableName, incomingBatch, now, actor, { incomingOf: transfer.transferid }),
      // Its units came with it, for a count taken before it (stock-changes.ts).
      transferChangeWrite(this.tableName, transfer, { ...incomingBatch, qty: 0 }, { kind: 'transferred_in', delta: incomingBatch.qty, now, actor }, `${transfer.transferid}#arrived`),
    ];
    const record: TransactWriteItem = {
      Put: { TableName: this.tableName, Item: transferItem(transfer, now), ConditionExpression: ITEM_IS_NEW, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' },
    };
    const items = [...take, ...incoming, record];
    const cancellation = await this.calls.transactWrite(items);
    if (!cancellation) return { outcome: 'saved' };
    const failed = (at: number) => cancellation[at]?.Code === 'ConditionalCheckFailed';
    const recordReason = cancellation.at(-1);
    if (recordReason?.Code === 'ConditionalCheckFailed' && recordReason.Item) {
      const existing = parseTransferItem(unmarshall(recordReason.Item));
      if (existing?.kind !== 'transfer') throw new Error(`Item at the key of a transfer is not a transfer: ${JSON.stringify(existing)}`);
      return { outcome: 'transfer-exists', existing: existing.transfer };
    }
    // newBatchWrites puts the batch, then its reference, which makes a ref unique across SKUs.
    if (failed(take.length) || failed(take.length + 1)) return { outcome: 'batch-exists' };
    this.calls.raceLost(cancellation);
    return { outcome: 'batch-changed' };
  }

  /** BatchRepository.cancelTransfer: at most 8 items; an incoming batch in pieces gathered first (its removal's condition is on the batch whole). */
  async cancel(transfer: Transfer, source: Batch, incoming: Batch, cancelledAt: Instant): Promise<ConditionalWrite | 'incoming-changed'> {
    if (!(await this.spreads.keptWhole([incoming]))) return 'changed';
    const { actor } = this;
    const cancellation = await this.calls.transactWrite([
      transferCancelWrite(this.tableName, transfer, cancelledAt),
      ...incomingRemovalWrites(this.tableName, transfer),
      ...sourceWrites(this.tableName, source, transfer.qty),
      sourceReferenceWrite(this.tableName, source, transfer.qty, cancelledAt, actor),
      transferChangeWrite(this.tableName, transfer, source, { kind: 'transfer_cancelled', delta: transfer.qty, now: cancelledAt, actor }, `${transfer.transferid}#given back`),
      // The incoming batch's units leave the history with it.
      transferChangeWrite(this.tableName, transfer, incoming, { kind: 'transfer_cancelled', delta: -incoming.qty, now: cancelledAt, actor }, `${transfer.transferid}#cancelled`),
    ]);
    if (!cancellation) return 'saved';
    // A record no longer active was ended by another cancel, a repeat racing this one, which also
    // removed the incoming batch and its reference: read first, or the repeat would be refused for
    // the reference it found gone.
    const recordEnded = cancellation[TRANSFER_RECORD_AT]?.Code === 'ConditionalCheckFailed';
    if (!recordEnded && cancellation[INCOMING_REFERENCE_AT]?.Code === 'ConditionalCheckFailed') return 'incoming-changed';
    this.calls.raceLost(cancellation);
    return 'changed';
  }
}
