import {
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  type QueryCommandOutput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { DuplicateBatch, StoreUnavailable } from '../../domain/errors';
import type { Allocation, Batch } from '../../domain/model';
import type { BatchRepository, SaveAllocationResult } from '../../domain/ports';
import { isRetryableCancellation, isStoreUnavailable, transactionCancellation } from './store-errors';
import { tableKeySchema } from './table';

/*
 * The table's items (one table, keys `pk`/`sk` as tableKeySchema names them):
 *   batch            pk SKU#<sku>       sk BATCH#<ref>   ref, sku, qty, available, eta
 *   batch reference  pk BATCHREF#<ref>  sk BATCHREF      ref, sku   (makes a ref unique across SKUs)
 *   allocated line   pk ORDER#<orderid> sk LINE#<sku>    orderid, sku, qty, batchref
 * A SKU's batches share a partition, so allocating reads them with one Query; the domain sorts them
 * by preference, so the sort key need not encode it. An order's lines share a partition too, ready
 * for reading an order's allocations. `type` names each item's kind for whoever reads the table
 * without this code (the console, a Scan, a stream record).
 *
 * Capacity: an allocate costs one strongly consistent Query (~1 RCU for a few batches) and one
 * transaction of two small writes (2 x 2 WCU). Every allocation of one SKU updates items in the same
 * partition, so one hot SKU tops out near 1,000 WCU/s / 2 WCU per batch update ~ 500 allocations/s,
 * fewer when requests collide on one batch item (TransactionConflict, retried below).
 */
const PK = tableKeySchema.partitionKey.name;
const SK = tableKeySchema.sortKey.name;

const itemKey = (partition: string, sort: string) => ({ [PK]: partition, [SK]: sort });
const batchKey = (sku: string, ref: string) => itemKey(`SKU#${sku}`, `BATCH#${ref}`);
const batchReferenceKey = (ref: string) => itemKey(`BATCHREF#${ref}`, 'BATCHREF');
const lineKey = (orderid: string, sku: string) => itemKey(`ORDER#${orderid}`, `LINE#${sku}`);

/** An item of the table as this adapter and the tools that read the whole table see it. */
export type StoredItem =
  | { readonly kind: 'batch'; readonly batch: Batch }
  | { readonly kind: 'batch-reference'; readonly ref: string; readonly sku: string }
  | { readonly kind: 'line'; readonly allocation: Allocation }
  /** Its key is not the one the adapter would write for its attributes, or an attribute is missing. */
  | { readonly kind: 'unrecognized'; readonly pk: string; readonly sk: string };

/**
 * Reads an item back through the same key functions that wrote it, so the key layout stays known
 * to this file alone: an item is a batch only if its key is the batch key of its own sku and ref.
 */
export const parseStoredItem = (item: Record<string, unknown>): StoredItem => {
  const { [PK]: pk, [SK]: sk, ref, sku, qty, available, eta, orderid, batchref } = item;
  const hasKey = (key: ReturnType<typeof itemKey>) => key[PK] === pk && key[SK] === sk;
  const isText = (value: unknown): value is string => typeof value === 'string';
  const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

  if (isText(ref) && isText(sku)) {
    if (isNumber(qty) && isNumber(available) && (eta === null || isText(eta)) && hasKey(batchKey(sku, ref))) {
      return { kind: 'batch', batch: { ref, sku, qty, available, eta } };
    }
    if (hasKey(batchReferenceKey(ref))) return { kind: 'batch-reference', ref, sku };
  }
  if (isText(orderid) && isText(sku) && isNumber(qty) && isText(batchref) && hasKey(lineKey(orderid, sku))) {
    return { kind: 'line', allocation: { orderid, sku, qty, batchref } };
  }
  return { kind: 'unrecognized', pk: String(pk), sk: String(sk) };
};

/** A batch as the table holds it; exported so a stub store can answer what this adapter would read. */
export const batchItem = ({ ref, sku, qty, available, eta }: Batch) => ({
  ...batchKey(sku, ref),
  type: 'Batch',
  ref,
  sku,
  qty,
  available,
  eta,
});

const storedLine = (item: Record<string, unknown>): Allocation => {
  const stored = parseStoredItem(item);
  if (stored.kind !== 'line') throw new Error(`Item at the key of a line is not a line: ${JSON.stringify(stored)}`);
  return stored.allocation;
};

/** Guards "a key is written once": the put fails if an item with that key already exists. */
const ITEM_IS_NEW = `attribute_not_exists(${PK})`;
/** Guards "stock never goes below zero": a condition cannot do arithmetic, hence the `available` attribute. */
const BATCH_HAS_QTY = 'available >= :qty';

/** Order of the items in the allocation transaction, which its cancellation reasons follow. */
const BATCH_UPDATE = 0;
const LINE_PUT = 1;

export interface ConflictRetryPolicy {
  /** Attempts of one transaction that DynamoDB cancelled for a conflict or throttling, in all. */
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/** Conflicts clear in milliseconds; four tries with full jitter spread competitors over ~200 ms. */
export const defaultConflictRetryPolicy: ConflictRetryPolicy = { maxAttempts: 4, baseDelayMs: 25, maxDelayMs: 200 };

/** The one call the repository makes, so tests can hand in a client that fails on purpose. */
export type DocumentSender = Pick<DynamoDBDocumentClient, 'send'>;

export class DynamoDbBatchRepository implements BatchRepository {
  constructor(
    private readonly client: DocumentSender,
    private readonly tableName: string,
    private readonly conflictRetry: ConflictRetryPolicy = defaultConflictRetryPolicy,
  ) {}

  async addBatch(batch: Batch): Promise<void> {
    const { ref, sku } = batch;
    const input: TransactWriteCommandInput = {
      TransactItems: [
        {
          Put: {
            TableName: this.tableName,
            Item: batchItem(batch),
            ConditionExpression: ITEM_IS_NEW,
          },
        },
        {
          Put: {
            TableName: this.tableName,
            Item: { ...batchReferenceKey(ref), type: 'BatchReference', ref, sku },
            ConditionExpression: ITEM_IS_NEW,
          },
        },
      ],
    };
    const cancellation = await this.transactWrite(input);
    if (!cancellation) return;
    if (cancellation.some((reason) => reason.Code === 'ConditionalCheckFailed')) throw new DuplicateBatch(ref);
    throw new Error(`Batch transaction cancelled: ${cancellation.map((reason) => reason.Code).join(', ')}`);
  }

  async batchesOf(sku: string): Promise<Batch[]> {
    const batches: Batch[] = [];
    let startKey: QueryCommandOutput['LastEvaluatedKey'];
    do {
      const page: QueryCommandOutput = await this.call(() =>
        this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: `${PK} = :partition`,
            ExpressionAttributeValues: { ':partition': batchKey(sku, '')[PK] },
            // A stale read would offer stock already taken; the conditional write would still refuse it.
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
          }),
        ),
      );
      for (const item of page.Items ?? []) {
        const stored = parseStoredItem(item);
        if (stored.kind !== 'batch') throw new Error(`Item in the partition of sku ${sku} is not a batch: ${JSON.stringify(stored)}`);
        batches.push(stored.batch);
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return batches;
  }

  async allocationOf(orderid: string, sku: string): Promise<Allocation | undefined> {
    const { Item } = await this.call(() =>
      this.client.send(new GetCommand({ TableName: this.tableName, Key: lineKey(orderid, sku), ConsistentRead: true })),
    );
    return Item ? storedLine(Item) : undefined;
  }

  async saveAllocation(allocation: Allocation): Promise<SaveAllocationResult> {
    const { orderid, sku, qty, batchref } = allocation;
    const cancellation = await this.transactWrite({
      TransactItems: [
        {
          Update: {
            TableName: this.tableName,
            Key: batchKey(sku, batchref),
            UpdateExpression: 'SET available = available - :qty',
            ConditionExpression: BATCH_HAS_QTY,
            ExpressionAttributeValues: { ':qty': qty },
          },
        },
        {
          Put: {
            TableName: this.tableName,
            Item: { ...lineKey(orderid, sku), type: 'Line', orderid, sku, qty, batchref },
            ConditionExpression: ITEM_IS_NEW,
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
      ],
    });
    if (!cancellation) return { outcome: 'saved' };
    const existingLine = cancellation[LINE_PUT];
    if (existingLine?.Code === 'ConditionalCheckFailed' && existingLine.Item) {
      return { outcome: 'line-exists', existing: storedLine(unmarshall(existingLine.Item)) };
    }
    if (cancellation[BATCH_UPDATE]?.Code === 'ConditionalCheckFailed') return { outcome: 'batch-short' };
    throw new Error(`Allocation transaction cancelled: ${cancellation.map((reason) => reason.Code).join(', ')}`);
  }

  /**
   * Runs a transaction, retrying the cancellations that clear by themselves (a conflict with another
   * transaction on the same item, throttling) with full-jitter backoff. Answers the reasons of a
   * cancellation by failed conditions, or undefined when the transaction committed.
   */
  private async transactWrite(input: TransactWriteCommandInput) {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.call(() => this.client.send(new TransactWriteCommand(input)));
        return undefined;
      } catch (error) {
        const reasons = transactionCancellation(error);
        if (!reasons) throw error;
        if (!isRetryableCancellation(reasons)) return reasons;
        if (attempt >= this.conflictRetry.maxAttempts) {
          throw new StoreUnavailable(`Transaction still conflicting after ${attempt} attempts`, { cause: error });
        }
        await sleep(fullJitter(this.conflictRetry, attempt));
      }
    }
  }

  /** Turns the failures of an unreachable or overloaded store into StoreUnavailable (503). */
  private async call<Output>(send: () => Promise<Output>): Promise<Output> {
    try {
      return await send();
    } catch (error) {
      if (isStoreUnavailable(error)) throw new StoreUnavailable('The store did not answer', { cause: error });
      throw error;
    }
  }
}

const fullJitter = ({ baseDelayMs, maxDelayMs }: ConflictRetryPolicy, attempt: number): number =>
  Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
