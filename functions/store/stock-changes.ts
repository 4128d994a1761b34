import { QueryCommand, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { CHANGE_REASONS, COUNT_WINDOW_MS, type ChangeReason } from '../../domain/adjustments';
import type { Instant } from '../../domain/holds';
import { DEFAULT_LOCATION_ID } from '../../domain/locations';
import { CHANGE_KINDS, MAX_HISTORY_LIMIT, type ChangeKind, type HistoryEntry, type HistoryPage, type HistoryPosition, type HistoryRequest } from '../../domain/stock-history';
import { COUNTED_AT, batchReferenceKey, locationField } from './batches';
import { ITEM_IS_NEW, type Condition } from './conditions';
import { PK, isAt, isNumber, isText, itemKey } from './fields';
import type { DocumentSender, StoreCalls, TransactWriteItem } from './store-calls';
import type { TableReads } from './table-reads';
import { partitionKeyPrefix, stockHistoryIndex, timeToLiveAttribute } from './table';

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

/** One change of a batch's qty (or its arrival): by `delta` to `qtyAfter`, for `reason`, at `at`, by `actor`; `reference` names what made it (a shipmentid, an adjustmentid, a transferid). */
export interface StockChange {
  readonly ref: string;
  readonly sku: string;
  /** Absent: `default`. */
  readonly location?: string;
  readonly kind: ChangeKind;
  readonly delta: number;
  readonly qtyAfter: number;
  readonly reason: ChangeReason;
  readonly reference?: string;
  readonly at: string;
  readonly actor: string;
}

/** The attribute that puts a change in its SKU's history: the partition key of the history's index. */
const HISTORY_OF = stockHistoryIndex.partitionKey.name;
const historyPartition = (sku: string) => `${partitionKeyPrefix.history}${sku}`;

/** `id`: what tells two changes of one batch at one moment apart; a change's reference where it has one. */
const changeKey = (ref: string, at: string, reason: ChangeReason, id: string) => itemKey(String(batchReferenceKey(ref)[PK]), `${CHANGE_RANGE}${at}#${reason}#${id}`);

const DAY_MS = 24 * 60 * 60 * 1_000;
/** The fewest days a change is kept: a count is applied as of its time only within COUNT_WINDOW_MS, and time to live deletes within about a day of its moment. */
export const MIN_HISTORY_RETENTION_DAYS = COUNT_WINDOW_MS / DAY_MS + 1;
/** How long the history keeps a change when HISTORY_RETENTION_DAYS does not say (docs/api.md, "History"). */
export const DEFAULT_HISTORY_RETENTION_DAYS = 90;

/**
 * How many days a change is kept: HISTORY_RETENTION_DAYS, which the stack checks at synth
 * (infra/constructs/http-api.ts); never fewer than the counts need.
 */
const retentionDays = (): number => Math.max(MIN_HISTORY_RETENTION_DAYS, Number(process.env.HISTORY_RETENTION_DAYS) || DEFAULT_HISTORY_RETENTION_DAYS);

/** The record of `change`, new: its key names its moment and `id`. */
export const stockChangeWrite = (tableName: string, change: StockChange, id: string): TransactWriteItem => {
  const { ref, sku, location, kind, delta, qtyAfter, reason, reference, at, actor } = change;
  return {
    Put: {
      TableName: tableName,
      Item: {
        ...changeKey(ref, at, reason, id),
        type: 'StockChange',
        ref,
        sku,
        ...locationField({ location }),
        kind,
        delta,
        qtyAfter,
        reason,
        ...(reference === undefined ? {} : { reference }),
        at,
        actor,
        [HISTORY_OF]: historyPartition(sku),
        [timeToLiveAttribute]: Math.floor(Date.parse(at) / 1_000) + retentionDays() * (DAY_MS / 1_000),
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

/** A change as read back: one recorded before the history named its kind, qty after and actor has none of them. */
export type RecordedStockChange = Omit<StockChange, 'kind' | 'qtyAfter' | 'actor'> & Partial<Pick<StockChange, 'kind' | 'qtyAfter' | 'actor'>>;

export type StoredStockChangeItem = { readonly kind: 'stock-change'; readonly change: RecordedStockChange; readonly id: string };

/** A change's record, read back through its key. */
export const parseStockChangeItem = (item: Record<string, unknown>): StoredStockChangeItem | undefined => {
  const { ref, sku, location, kind, delta, qtyAfter, reason, reference, at, actor, sk } = item;
  if (!isText(ref) || !isText(sku) || !isNumber(delta) || !isText(at) || !isText(sk) || !CHANGE_REASONS.includes(reason as ChangeReason)) return undefined;
  if ((location !== undefined && !isText(location)) || (reference !== undefined && !isText(reference))) return undefined;
  // All three, or none: a record written before the history.
  const named = kind !== undefined || qtyAfter !== undefined || actor !== undefined;
  if (named && (!CHANGE_KINDS.includes(kind as ChangeKind) || !isNumber(qtyAfter) || !isText(actor))) return undefined;
  const id = sk.slice(`${CHANGE_RANGE}${at}#${String(reason)}#`.length);
  if (!isAt(item, changeKey(ref, at, reason as ChangeReason, id))) return undefined;
  const change: RecordedStockChange = {
    ref,
    sku,
    ...locationField({ location }),
    ...(named ? { kind: kind as ChangeKind, qtyAfter: qtyAfter as number, actor: actor as string } : {}),
    delta,
    reason: reason as ChangeReason,
    ...(reference === undefined ? {} : { reference }),
    at,
  };
  return { kind: 'stock-change', change, id };
};

/**
 * What the changes of batch `ref` after `since` add up to (the records kept: COUNT_WINDOW_MS). One
 * Query of the batch's changes since the count's moment: 1 read unit per 4 KB of them, about 20.
 */
export const changesSince = async (reads: TableReads, ref: string, since: string): Promise<{ readonly changedSince: number; readonly cameSince: boolean }> => {
  const partition = String(batchReferenceKey(ref)[PK]);
  // After `since` to the millisecond: a change at the count's own moment happened before it was counted.
  // `$` sorts right after `#`, and times are ASCII.
  const records = await reads.range(partition, `${CHANGE_RANGE}${since}$`, 'CHANGE$', { latestFirst: false, limit: Number.POSITIVE_INFINITY });
  // Its delta alone: a record written before the history named its kind, qty after and actor counts as well.
  const changedSince = records.reduce((sum, item) => {
    if (!isNumber(item.delta)) throw new Error(`Item among batch ${ref}'s changes is not one: ${JSON.stringify(item)}`);
    return sum + item.delta;
  }, 0);
  // Added, or arrived (a shipment's eta set to null): the batch was not on the shelf at `since`.
  const cameSince = records.some(({ kind }) => kind === 'added' || kind === 'arrived');
  return { changedSince, cameSince };
};

/** The most records one read of the index takes for a page at one location. */
const MAX_HISTORY_PAGE = MAX_HISTORY_LIMIT;
/**
 * The most reads of the index one page makes: a page at one location skips the SKU's changes at the
 * others, and ends with a cursor after this many, however few it found.
 */
const HISTORY_PAGE_READS = 4;

const historyEntryOf = (item: Record<string, unknown>): HistoryEntry => {
  const stored = parseStockChangeItem(item);
  const change = stored?.change;
  if (!stored || !change?.kind || change.qtyAfter === undefined || change.actor === undefined) throw new Error(`Item in the history's index is not a change of stock: ${JSON.stringify(item)}`);
  return {
    at: change.at,
    kind: change.kind,
    reason: change.reason,
    batchref: change.ref,
    location: change.location ?? DEFAULT_LOCATION_ID,
    delta: change.delta,
    qtyAfter: change.qtyAfter,
    ...(change.reference === undefined ? {} : { reference: change.reference }),
    actor: change.actor,
    position: { ref: change.ref, at: change.at, reason: change.reason, id: stored.id },
  };
};

/**
 * BatchRepository.stockHistory: the SKU's partition of the history's index, newest first, from the
 * change after `request.after` (its key in the index: the SKU's, its moment, and the record's own).
 * Each read is of up to `limit` records, or of MAX_HISTORY_PAGE at one location, whose entries are
 * picked from what the index holds there; at most HISTORY_PAGE_READS of them.
 */
export const stockHistoryPage = async (calls: StoreCalls, client: DocumentSender, tableName: string, sku: string, request: HistoryRequest, now: Instant): Promise<HistoryPage> => {
  const { location, limit, after } = request;
  const keyOf = ({ ref, at, reason, id }: HistoryPosition) => ({ ...changeKey(ref, at, reason, id), [HISTORY_OF]: historyPartition(sku), at });
  const entries: HistoryEntry[] = [];
  let lastRead = after;
  for (let round = 0; round < HISTORY_PAGE_READS; round++) {
    const page: QueryCommandOutput = await calls.call((options) =>
      client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: stockHistoryIndex.name,
          KeyConditionExpression: `${HISTORY_OF} = :history`,
          ExpressionAttributeValues: { ':history': historyPartition(sku) },
          ScanIndexForward: false,
          Limit: location === undefined ? limit - entries.length : MAX_HISTORY_PAGE,
          ...(lastRead ? { ExclusiveStartKey: keyOf(lastRead) } : {}),
        }),
        options,
      ),
    );
    const items = page.Items ?? [];
    const read = items.map(historyEntryOf);
    for (const [index, entry] of read.entries()) {
      // Past its retention: time to live deletes it some days later, and until then it is not listed.
      const expired = Number(items[index]?.[timeToLiveAttribute]) * 1_000 < now;
      if (expired || (location !== undefined && entry.location !== location)) continue;
      entries.push(entry);
      if (entries.length === limit) return index === read.length - 1 && !page.LastEvaluatedKey ? { entries } : { entries, next: entry.position };
    }
    lastRead = read.at(-1)?.position;
    if (!page.LastEvaluatedKey || !lastRead) return { entries };
  }
  return { entries, ...(lastRead ? { next: lastRead } : {}) };
};
