import {
  BatchGetCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandOutput,
  TransactGetCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { StoreUnavailable } from '../../domain/errors';
import { type Hold, type Instant, batchAsStored } from '../../domain/holds';
import { type Allocation, type Batch, type OrderLine, type Placement, hasStockLeft, heldTotal } from '../../domain/model';
import type {
  AddBatchResult,
  BatchRepository,
  ConditionalWrite,
  HoldEnding,
  HoldPlacement,
  SaveAllocationResult,
  SaveAllocationsResult,
  SaveHoldResult,
  SkuStock,
  StoreObserver,
} from '../../domain/ports';
import { describeError, logger } from '../telemetry';
import { isRetryableCancellation, isStoreUnavailable, transactionCancellation } from './store-errors';
import {
  ALLOCATED_AT,
  type DeallocationReason,
  LINES_RANGE,
  LINE_BATCH,
  PK,
  SK,
  STOCK_RANGE,
  batchDescription,
  batchItem,
  batchKey,
  batchReferenceKey,
  batchWithStockKey,
  deallocationKey,
  exhaustedBatchKey,
  heldAttribute,
  holdEndedFields,
  holdItem,
  holdKey,
  knownSkuItem,
  lineKey,
  linesOfBatch,
  noticeFields,
  now,
  orderPartition,
  outOfStockItem,
  parseStoredItem,
  skuPartition,
} from './items';
import { linesByBatchIndex, timeToLiveAttribute } from './table';

/*
 * Capacity: an allocate costs one strongly consistent Query (1 RCU while the SKU has fewer than about
 * twenty batches with stock, however many are exhausted) and one transaction of two small writes
 * (2 x 2 WCU), three (6 WCU) when it empties the batch, plus 1 WCU for the line's index entry. Every allocation of one SKU writes items in
 * the same partition, so one hot SKU tops out near 1,000 WCU/s / 2 WCU per batch update ~ 500
 * allocations/s, fewer when requests collide on one batch item (TransactionConflict, retried below).
 */
type TransactWriteItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

const storedLine = (item: Record<string, unknown>): Allocation => {
  const stored = parseStoredItem(item);
  if (stored.kind !== 'line') throw new Error(`Item at the key of a line is not a line: ${JSON.stringify(stored)}`);
  return stored.allocation;
};

const firstBatch = (items: readonly Record<string, unknown>[]): Batch | undefined =>
  items.map(parseStoredItem).find((stored) => stored.kind === 'batch')?.batch;
const lineAsRead = ({ batchref, qty }: Allocation) => ({ ':batchref': batchref, ':lineQty': qty });
const withValues = (
  condition: { ConditionExpression: string; ExpressionAttributeValues: Record<string, unknown> },
  values: Record<string, unknown>,
) => ({ ...condition, ExpressionAttributeValues: { ...condition.ExpressionAttributeValues, ...values } });

/** Guards "a key is written once": the put fails if an item with that key already exists. */
const ITEM_IS_NEW = `attribute_not_exists(${PK})`;
/** Guards "the stock a line gives back is the stock it held": the line is still as it was read. */
const LINE_IS_AS_READ = 'batchref = :batchref AND qty = :lineQty';

/**
 * Guards "a batch's holds are as read": every write of a batch is made against the holds it read on
 * it (none, or exactly these), so that where the batch belongs, in the stock range or out of it,
 * follows from `available` alone. A write that gives holds back removes their entries and checks
 * that each is still there: only one write can give a hold's units back.
 */
const holdsAsRead = (held: Batch['held'] = []) =>
  held.length === 0
    ? { ConditionExpression: '(attribute_not_exists(held) OR held = :noHolds)', ExpressionAttributeValues: { ':noHolds': {} } }
    : { ConditionExpression: 'held = :held', ExpressionAttributeValues: { ':held': heldAttribute(held) } };

const and = (...conditions: { ConditionExpression: string; ExpressionAttributeValues: Record<string, unknown> }[]) => ({
  ConditionExpression: conditions.map(({ ConditionExpression }) => ConditionExpression).join(' AND '),
  ExpressionAttributeValues: Object.assign({}, ...conditions.map(({ ExpressionAttributeValues }) => ExpressionAttributeValues)),
});

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
    private readonly deadline?: AbortSignal,
    private readonly observer?: StoreObserver,
    private readonly clock: () => Instant = Date.now,
  ) {}

  withDeadline(deadline: AbortSignal, observer?: StoreObserver): DynamoDbBatchRepository {
    return new DynamoDbBatchRepository(this.client, this.tableName, this.conflictRetry, deadline, observer, this.clock);
  }

  currentTime(): Instant {
    return this.clock();
  }

  async addBatch(batch: Batch): Promise<AddBatchResult> {
    const { ref, sku } = batch;
    const input: TransactWriteCommandInput = {
      TransactItems: [
        { Put: { TableName: this.tableName, Item: batchItem(batch), ConditionExpression: ITEM_IS_NEW } },
        {
          Put: {
            TableName: this.tableName,
            Item: { ...batchReferenceKey(ref), type: 'BatchReference', ref, sku, ...batchDescription(batch) },
            ConditionExpression: ITEM_IS_NEW,
          },
        },
        // Unconditional: every batch of the SKU writes the same item.
        { Put: { TableName: this.tableName, Item: knownSkuItem(sku) } },
      ],
    };
    const cancellation = await this.transactWrite(input);
    if (!cancellation) return { outcome: 'added' };
    if (!cancellation.some((reason) => reason.Code === 'ConditionalCheckFailed')) {
      throw new Error(`Batch transaction cancelled: ${cancellation.map((reason) => reason.Code).join(', ')}`);
    }
    // A batch and its reference are only ever written together, so the reference names the batch in the way.
    const existing = await this.batch(ref);
    if (!existing) throw new Error(`Batch ${ref} exists and cannot be read`);
    return { outcome: 'exists', existing };
  }

  async stockOf(sku: string): Promise<SkuStock> {
    const stock = { known: false, batches: [] as Batch[] };
    const items = await this.queryPartition(skuPartition(sku), STOCK_RANGE);
    for (const item of items) {
      const stored = parseStoredItem(item);
      if (stored.kind === 'known-sku') stock.known = true;
      else if (stored.kind === 'batch') stock.batches.push(stored.batch);
      else throw new Error(`Item in the stock range of sku ${sku} is not a batch: ${JSON.stringify(stored)}`);
    }
    return stock;
  }

  async allocationOf(orderid: string, sku: string): Promise<Allocation | undefined> {
    const { Item } = await this.call((options) =>
      this.client.send(new GetCommand({ TableName: this.tableName, Key: lineKey(orderid, sku), ConsistentRead: true }), options),
    );
    return Item ? storedLine(Item) : undefined;
  }

  async saveAllocation(allocation: Allocation, batch: Batch): Promise<SaveAllocationResult> {
    const result = await this.saveAllocations([{ allocation, batch }]);
    if (result.outcome !== 'lines-exist') return result;
    const [existing] = result.existing;
    if (!existing) throw new Error('A cancelled allocation named no existing line');
    return { outcome: 'line-exists', existing };
  }

  async saveAllocations(placements: readonly Placement[]): Promise<SaveAllocationsResult> {
    const allocatedAt = now();
    const items: TransactWriteItem[] = [];
    const linePuts: number[] = [];
    for (const { allocation, batch } of placements) {
      items.push(...this.adjustAvailable(batch, -allocation.qty));
      linePuts.push(items.length);
      items.push({
        Put: {
          TableName: this.tableName,
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
    }
    const cancellation = await this.transactWrite({ TransactItems: items });
    if (!cancellation) return { outcome: 'saved' };
    // A cancellation's reasons stand at their items' places; a failed line put carries the stored line.
    const existing = linePuts.flatMap((index) => {
      const reason = cancellation[index];
      return reason?.Code === 'ConditionalCheckFailed' && reason.Item ? [storedLine(unmarshall(reason.Item))] : [];
    });
    if (existing.length > 0) return { outcome: 'lines-exist', existing };
    if (cancellation.some((reason) => reason.Code === 'ConditionalCheckFailed')) {
      this.observer?.raceLost();
      return { outcome: 'batch-changed' };
    }
    throw new Error(`Allocation transaction cancelled: ${cancellation.map((reason) => reason.Code).join(', ')}`);
  }

  async saveHold(hold: Hold, placements: readonly HoldPlacement[]): Promise<SaveHoldResult> {
    const items: TransactWriteItem[] = [
      {
        Put: {
          TableName: this.tableName,
          Item: holdItem(hold),
          // Guards "a holdid is used once": a second hold under it is refused, and answered the first.
          ConditionExpression: ITEM_IS_NEW,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      ...placements.map(({ line, batch }) => this.setAside(hold, line.qty, batch)),
    ];
    const cancellation = await this.transactWrite({ TransactItems: items });
    if (!cancellation) return { outcome: 'saved' };
    const [holdReason] = cancellation;
    if (holdReason?.Code === 'ConditionalCheckFailed' && holdReason.Item) {
      const existing = parseStoredItem(unmarshall(holdReason.Item));
      if (existing.kind !== 'hold') throw new Error(`Item at the key of a hold is not a hold: ${JSON.stringify(existing)}`);
      return { outcome: 'hold-exists', existing: existing.hold };
    }
    if (cancellation.some((reason) => reason.Code === 'ConditionalCheckFailed')) {
      this.observer?.raceLost();
      return { outcome: 'batch-changed' };
    }
    throw new Error(`Hold transaction cancelled: ${cancellation.map((reason) => reason.Code).join(', ')}`);
  }

  async hold(holdid: string): Promise<Hold | undefined> {
    const { Item } = await this.call((options) =>
      this.client.send(new GetCommand({ TableName: this.tableName, Key: holdKey(holdid), ConsistentRead: true }), options),
    );
    const stored = Item && parseStoredItem(Item);
    return stored?.kind === 'hold' ? stored.hold : undefined;
  }

  async endHold(hold: Hold, ending: HoldEnding, now: Instant, givenBackOn: readonly string[]): Promise<ConditionalWrite> {
    const lasts = ending === 'released' ? '>' : '<=';
    const ended = holdEndedFields(now);
    const endRecord: TransactWriteItem = {
      Update: {
        TableName: this.tableName,
        Key: holdKey(hold.holdid),
        UpdateExpression: 'SET #status = :ending, endedAt = :endedAt, #ttl = :ttl',
        // Guards "a hold ends once, one way": it is active and as read, and its time has (not) passed.
        ConditionExpression: `#status = :active AND heldUntil = :heldUntil AND heldUntil ${lasts} :now`,
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
    const givesBack = hold.lines
      .filter(({ batchref }) => givenBackOn.includes(batchref))
      .map(({ sku, qty, batchref }): TransactWriteItem => ({
        Update: {
          TableName: this.tableName,
          // A batch holding units is in the stock range, and giving units back keeps it there.
          Key: batchWithStockKey(sku, batchref),
          UpdateExpression: 'SET available = available + :qty REMOVE held.#hold',
          // Guards "a hold's units go back once": only the write that removes its entry gives them.
          ConditionExpression: 'attribute_exists(held.#hold)',
          ExpressionAttributeNames: { '#hold': hold.holdid },
          ExpressionAttributeValues: { ':qty': qty },
        },
      }));
    return this.conditionalWrite([endRecord, ...givesBack]);
  }

  async recordOutOfStock(lines: readonly OrderLine[]): Promise<void> {
    const puts = lines.map((line) => ({ TableName: this.tableName, Item: outOfStockItem(line) }));
    try {
      // One line, one put; an order's lines, one transaction: either way one call on the refusal's path.
      if (puts.length === 1) await this.call((options) => this.client.send(new PutCommand(puts[0]!), options));
      else if (puts.length > 1) await this.transactWrite({ TransactItems: puts.map((Put) => ({ Put })) });
    } catch (error) {
      // The refusal is answered all the same: its notice is worth less than a 400 turned into a 503.
      // An error all the same: subscribers will miss that OutOfStock event.
      logger.error({ message: 'OutOfStock not recorded', lines, cause: describeError(error) });
    }
  }

  async batch(ref: string, sku?: string): Promise<Batch | undefined> {
    const skuOfBatch = sku ?? (await this.skuOfBatch(ref));
    if (skuOfBatch === undefined) return undefined;
    // The batch is at one of its two keys, whichever side of zero its stock is. A BatchGetItem is
    // isolated from a transaction item by item only, so while one moves the batch between its keys
    // it can find neither; a transactional read, serialized with that move, settles it.
    const keys = [batchWithStockKey(skuOfBatch, ref), exhaustedBatchKey(skuOfBatch, ref)];
    const { Responses } = await this.call((options) =>
      this.client.send(new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } } }), options),
    );
    const read = firstBatch(Responses?.[this.tableName] ?? []);
    if (read) return read;
    const { Responses: settled } = await this.call((options) =>
      this.client.send(new TransactGetCommand({ TransactItems: keys.map((Key) => ({ Get: { TableName: this.tableName, Key } })) }), options),
    );
    return firstBatch((settled ?? []).flatMap(({ Item }) => (Item ? [Item] : [])));
  }

  async allocationsOf(orderid: string): Promise<Allocation[]> {
    return (await this.queryPartition(orderPartition(orderid), LINES_RANGE)).map(storedLine);
  }

  async linesOn(ref: string, limit: number): Promise<Allocation[]> {
    const { Items } = await this.call((options) =>
      this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: linesByBatchIndex.name,
          KeyConditionExpression: `${LINE_BATCH} = :lines`,
          ExpressionAttributeValues: { ':lines': linesOfBatch(ref) },
          ScanIndexForward: false,
          Limit: limit,
        }),
        options,
      ),
    );
    return (Items ?? []).map(storedLine);
  }

  async cancelAllocation(allocation: Allocation, batch: Batch): Promise<ConditionalWrite> {
    return this.conditionalWrite([...this.removeLine(allocation, 'cancelled'), ...this.adjustAvailable(batch, allocation.qty)]);
  }

  async changeBatch(batch: Batch, changed: Batch): Promise<ConditionalWrite> {
    const delta = changed.available - batch.available;
    const describeChange = this.describeBatch(changed);
    if (hasStockLeft(batch) !== hasStockLeft(changed)) return this.conditionalWrite([...this.moveBatch(batch, changed), describeChange]);
    const { ConditionExpression, ExpressionAttributeValues } = staysOnItsSide(batch, delta);
    return this.conditionalWrite([
      describeChange,
      {
        Update: {
          TableName: this.tableName,
          Key: batchKey(batch),
          UpdateExpression:
            'SET qty = :newQty, available = available + :delta' + (changed.eta === null ? ' REMOVE eta' : ', eta = :newEta'),
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
    ]);
  }

  async moveAllocation(allocation: Allocation, from: Batch, to: Batch | null): Promise<ConditionalWrite> {
    const lineWrite: TransactWriteItem[] = to
      ? [{
          Update: {
            TableName: this.tableName,
            Key: lineKey(allocation.orderid, allocation.sku),
            // The line keeps its allocation time: it was allocated then, and moved now.
            UpdateExpression: `SET batchref = :to, ${LINE_BATCH} = :lines, movedAt = :movedAt`,
            ConditionExpression: LINE_IS_AS_READ,
            ExpressionAttributeValues: { ':to': to.ref, ':lines': linesOfBatch(to.ref), ':movedAt': now(), ...lineAsRead(allocation) },
          },
        }]
      : this.removeLine(allocation, 'reallocated');
    return this.conditionalWrite([
      ...lineWrite,
      ...this.adjustAvailable(from, allocation.qty),
      ...(to ? this.adjustAvailable(to, -allocation.qty) : []),
    ]);
  }

  /**
   * Every item of a partition, or of the sort keys beginning with `sortKeyPrefix`, page by page,
   * strongly consistent: a stale read of stock would offer stock already taken (the conditional
   * write would still refuse it), and a stale read of an order would miss a line just confirmed.
   */
  private async queryPartition(partition: string, sortKeyPrefix?: string): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let startKey: QueryCommandOutput['LastEvaluatedKey'];
    do {
      const page: QueryCommandOutput = await this.call((options) =>
        this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: `${PK} = :partition` + (sortKeyPrefix === undefined ? '' : ` AND begins_with(${SK}, :prefix)`),
            ExpressionAttributeValues: { ':partition': partition, ...(sortKeyPrefix === undefined ? {} : { ':prefix': sortKeyPrefix }) },
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
          }),
          options,
        ),
      );
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return items;
  }

  private async skuOfBatch(ref: string): Promise<string | undefined> {
    const { Item } = await this.call((options) =>
      this.client.send(new GetCommand({ TableName: this.tableName, Key: batchReferenceKey(ref), ConsistentRead: true }), options),
    );
    const stored = Item && parseStoredItem(Item);
    return stored?.kind === 'batch-reference' ? stored.sku : undefined;
  }

  /** The line's removal and, in the same transaction, the notice that says why it left (for Deallocated). */
  private removeLine(allocation: Allocation, reason: DeallocationReason): TransactWriteItem[] {
    const { orderid, sku, qty, batchref } = allocation;
    const notice = noticeFields();
    return [
      {
        Delete: {
          TableName: this.tableName,
          Key: lineKey(orderid, sku),
          ConditionExpression: LINE_IS_AS_READ,
          ExpressionAttributeValues: lineAsRead(allocation),
        },
      },
      {
        Put: {
          TableName: this.tableName,
          Item: { ...deallocationKey(orderid, sku, notice.noticeId), type: 'Deallocation', orderid, sku, qty, batchref, reason, deallocatedAt: now(), ...notice },
        },
      },
    ];
  }

  /** Keeps the batch reference's copy of qty and eta in step with the batch (for BatchChanged). */
  private describeBatch(changed: Batch): TransactWriteItem {
    const { ref, qty, eta } = changed;
    return {
      Update: {
        TableName: this.tableName,
        Key: batchReferenceKey(ref),
        UpdateExpression: 'SET qty = :newQty, changedAt = :changedAt' + (eta === null ? ' REMOVE eta' : ', eta = :newEta'),
        // Guards "a reference exists only with its batch": an update would otherwise create one.
        ConditionExpression: `attribute_exists(${PK})`,
        ExpressionAttributeValues: { ':newQty': qty, ':changedAt': now(), ...(eta === null ? {} : { ':newEta': eta }) },
      },
    };
  }

  /**
   * `available` plus `delta`, on the batch as it was found: in place, or moved across the edge of the
   * stock range. A take never leaves a batch below zero: one that would (the read was stale, or the
   * caller asked too much) goes as an update whose condition fails unless the batch has more stock
   * than was read. Only a change of qty (changeBatch) goes below zero. The holds that had expired
   * when the batch was found (`freed`, counted in its `available`) are given back in the same write.
   */
  private adjustAvailable(batch: Batch, delta: number): TransactWriteItem[] {
    const stored = batchAsStored(batch);
    const adjusted: Batch = { ...stored, available: batch.available + delta, held: batch.held };
    // A take that the read says would go below zero is not moved: its in-place condition fails instead.
    if (hasStockLeft(stored) !== hasStockLeft(adjusted) && adjusted.available >= 0) return this.moveBatch(stored, adjusted);
    const storedDelta = adjusted.available - stored.available;
    const freed = Object.fromEntries((batch.freed ?? []).map(({ holdid }, index) => [`#freed${index}`, holdid]));
    const giveBack = Object.keys(freed).map((name) => `held.${name}`);
    return [
      {
        Update: {
          TableName: this.tableName,
          Key: batchKey(stored),
          UpdateExpression: 'SET available = available + :delta' + (giveBack.length > 0 ? ` REMOVE ${giveBack.join(', ')}` : ''),
          ...withValues(staysOnItsSide(stored, storedDelta, adjusted.held), { ':delta': storedDelta }),
          ...(giveBack.length > 0 ? { ExpressionAttributeNames: freed } : {}),
        },
      },
    ];
  }

  /**
   * Sets `qty` of the batch, as found, aside for the hold: its available units go to the hold's entry,
   * and the expired holds it was found with give theirs back, so what it has left, available or
   * held, does not change, nor does where it is stored.
   */
  private setAside(hold: Hold, qty: number, batch: Batch): TransactWriteItem {
    const stored = batchAsStored(batch);
    const held = [...(batch.held ?? []), { holdid: hold.holdid, qty, expiresAt: hold.expiresAt }];
    const taken = stored.available - (batch.available - qty);
    return {
      Update: {
        TableName: this.tableName,
        Key: batchKey(stored),
        UpdateExpression: 'SET available = available - :taken, held = :newHeld',
        ...withValues(and({ ConditionExpression: 'available >= :taken', ExpressionAttributeValues: {} }, holdsAsRead(stored.held)), {
          ':taken': taken,
          ':newHeld': heldAttribute(held),
        }),
      },
    };
  }

  private moveBatch(batch: Batch, moved: Batch): TransactWriteItem[] {
    return [
      { Delete: { TableName: this.tableName, Key: batchKey(batch), ...batchIsExactly(batch) } },
      { Put: { TableName: this.tableName, Item: batchItem(moved), ConditionExpression: ITEM_IS_NEW } },
    ];
  }

  /** A transaction whose failed conditions all mean "something read has changed since". */
  private async conditionalWrite(items: TransactWriteItem[]): Promise<ConditionalWrite> {
    const cancellation = await this.transactWrite({ TransactItems: items });
    if (!cancellation) return 'saved';
    if (cancellation.some((reason) => reason.Code === 'ConditionalCheckFailed')) {
      this.observer?.raceLost();
      return 'changed';
    }
    throw new Error(`Transaction cancelled: ${cancellation.map((reason) => reason.Code).join(', ')}`);
  }

  /**
   * Runs a transaction, retrying the cancellations that clear by themselves (a conflict with another
   * transaction on the same item, throttling) with full-jitter backoff. Answers the reasons of a
   * cancellation by failed conditions, or undefined when the transaction committed.
   */
  private async transactWrite(input: TransactWriteCommandInput) {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.call((options) => this.client.send(new TransactWriteCommand(input), options));
        return undefined;
      } catch (error) {
        const reasons = transactionCancellation(error);
        if (!reasons) throw error;
        if (!isRetryableCancellation(reasons)) return reasons;
        if (attempt >= this.conflictRetry.maxAttempts) {
          throw new StoreUnavailable(`Transaction still conflicting after ${attempt} attempts`, { cause: error });
        }
        this.observer?.transactionRetried(reasons.map((reason) => reason.Code ?? 'None'));
        await sleep(fullJitter(this.conflictRetry, attempt));
      }
    }
  }

  /**
   * Sends one call within the request's deadline: none starts once it has passed, and one in flight
   * is abandoned when it passes (a write already delivered may still commit, as when an answer is
   * lost; each is one transaction, so a retry is safe). Turns the failures of an unreachable or
   * overloaded store, and a passed deadline, into StoreUnavailable (503).
   */
  private async call<Output>(send: (options: { abortSignal?: AbortSignal }) => Promise<Output>): Promise<Output> {
    try {
      this.deadline?.throwIfAborted();
      return await send({ abortSignal: this.deadline });
    } catch (error) {
      if (this.deadline?.aborted) throw new StoreUnavailable('The request ran out of time', { cause: error });
      if (isStoreUnavailable(error)) throw new StoreUnavailable('The store did not answer', { cause: error });
      throw error;
    }
  }
}

const fullJitter = ({ baseDelayMs, maxDelayMs }: ConflictRetryPolicy, attempt: number): number =>
  Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
