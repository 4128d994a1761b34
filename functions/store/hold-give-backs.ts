import { BatchGetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { StoreUnavailable, TransientFailure } from '../../domain/errors';
import { type HeldUnits, type Hold, type Instant, earlierOf } from '../../domain/holds';
import type { Batch } from '../../domain/model';
import type { ConditionalWrite, CountedGiveBacks, ExpiredHolds, ExpiredHoldsCursor, ExpiredUnits } from '../../domain/ports';
import { batchWithStockKey } from './batches';
import { heldBoundOf, heldTakesAre } from './held-bounds';
import { type Condition, and, withValues } from './conditions';
import { PK, SK } from './fields';
import {
  type CountPlaces,
  type HoldWrites,
  type StoredHeldUnits,
  expiredUnitsGivenBackWrites,
  heldOnBatchRange,
  heldUnitsKey,
  heldUnitsPartitions,
  sendHoldWrites,
  sizingPlaces,
  sourcesOf,
} from './held-units';
import { ACTIVE_HOLD_SHARD, activeHoldShards } from './holds';
import { parseStoredItem } from './items';
import { pieceKey } from './pieces';
import type { KnownPieces } from './spread-batches';
import { type ConflictRetryPolicy, type DocumentSender, MAX_TRANSACTION_ITEMS, type StoreCalls } from './store-calls';
import { activeHoldsIndex } from './table';
import type { TableReads } from './table-reads';
import type { World } from './world';

/*
 * The reads of holds' units that find what to give back, and the give-back of expired ones (lazy
 * expiry, docs/architecture.md, "Holds"), for the repository: the records of held units on a batch,
 * whether a hold's records are still there, and the holds that expired, shard by shard of the active
 * holds' index, for the sweeper. Their items and writes are held-units.ts's and holds.ts's.
 */

/**
 * Expired holds a request gives back at once on a batch whose stock it needs: each is at most two
 * records (its units from the batch's own item and from its pieces), and their counts at most one
 * write on the item and one on a piece of each spread they came from, so 40 mostly fit a
 * transaction; those that do not are left for the next give-back (freeExpired sizes the write).
 */
const HOLDS_FREED_AT_ONCE = 40;

/** What a store answers a raise it leaves for now: a transaction in flight on the item, or its throughput spent. */
const RAISE_LEFT = new Set(['TransactionConflictException', 'ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded']);

/** Rounds of a BatchGetItem whose keys the store left unprocessed before the read gives up (503). */
const MAX_UNPROCESSED_ROUNDS = 4;

/** What a give-back of these records frees: a hold's units on the batch are the sum of its records'. */
const unitsOf = (records: readonly StoredHeldUnits[]): number => records.reduce((sum, { units: { qty } }) => sum + qty, 0);

const NONE_COUNTED: CountedGiveBacks = { holds: [], records: 0 };

/** Which held units of a batch: those expired by an instant, or the latest. */
export type HeldOnBatch = { readonly expiredBy: Instant } | { readonly latestFirst: true };

/** An item's key in the active holds' index: the index's keys and the table's, as a Query's ExclusiveStartKey names it. */
type IndexKey = Record<string, unknown>;

/** Where the next Query of each shard of the active holds' index starts (undefined: at its beginning). */
type ShardStarts = ReadonlyMap<string, IndexKey | undefined>;

const activeHoldIndexKey = (item: Record<string, unknown>): IndexKey => ({
  [ACTIVE_HOLD_SHARD]: item[ACTIVE_HOLD_SHARD],
  heldUntil: item.heldUntil,
  [PK]: item[PK],
  [SK]: item[SK],
});

/**
 * A write of holds whose cancellation means only that something is no longer as read: 'changed',
 * for the caller to read again.
 */
export const conditionalHoldWrite = async (
  calls: StoreCalls,
  known: KnownPieces,
  conflictRetry: ConflictRetryPolicy,
  world: Pick<World, 'random'>,
  build: (places: CountPlaces) => HoldWrites,
): Promise<ConditionalWrite> => {
  const { cancellation } = await sendHoldWrites(calls, known, conflictRetry, world, build);
  if (!cancellation) return 'saved';
  calls.raceLost(cancellation);
  return 'changed';
};

export class HoldGiveBacks {
  constructor(
    private readonly calls: StoreCalls,
    private readonly reads: TableReads,
    private readonly client: DocumentSender,
    private readonly tableName: string,
    private readonly conflictRetry: ConflictRetryPolicy,
    private readonly knownPieces: KnownPieces,
    private readonly world: Pick<World, 'random'>,
  ) {}

  async heldOn(batch: Batch, which: HeldOnBatch, limit: number): Promise<HeldUnits[]> {
    const byHold = new Map<string, HeldUnits>();
    for (const { units } of await this.heldRecords(batch, which, limit)) byHold.set(units.holdid, units);
    const order = 'expiredBy' in which ? 1 : -1;
    return [...byHold.values()].sort((a, b) => order * (a.expiresAt < b.expiresAt ? -1 : a.expiresAt > b.expiresAt ? 1 : 0)).slice(0, limit);
  }

  /**
   * Reads the batch's records of held units from the earliest, gives back those of expired holds
   * that the line needs, and raises the batch's bound to the earliest record left (raiseBound) when
   * the reads found every record expired by now and the give-back was written.
   */
  async freeExpired(batch: Batch, now: Instant, atLeast: number): Promise<number> {
    const { freeing, left, complete } = await this.expiredToFree(batch, now, atLeast);
    const expiredBy = new Date(now).toISOString();
    // Lost to another request, they were given back by it, or changed since: either way the caller reads again.
    const given = freeing.length === 0 ? 'saved' : await conditionalHoldWrite(this.calls, this.knownPieces, this.conflictRetry, this.world, (places) => expiredUnitsGivenBackWrites(this.tableName, freeing, places));
    if (given === 'saved' && complete) {
      if (await this.raiseBound(batch, left === undefined ? undefined : heldBoundOf(left), expiredBy)) this.knownPieces.forget(batch.ref);
    }
    // Given back to pieces, the units are more than this process remembers of them: its next take reads them.
    if (freeing.length > 0) this.knownPieces.forget(batch.ref);
    return unitsOf(freeing);
  }

  /** What freeExpired would give back now, read the same way and written nowhere, the give-backs `after` counted made first (BatchRepository.expiredUnitsOn). */
  async expiredUnits(batch: Batch, now: Instant, atLeast: number, after: CountedGiveBacks = NONE_COUNTED): Promise<ExpiredUnits> {
    const { freeing, left, complete } = await this.expiredToFree(batch, now, atLeast, after);
    const counted = { holds: [...after.holds, ...freeing.map(({ units: { holdid } }) => holdid)], records: after.records + freeing.length };
    return { units: unitsOf(freeing), counted, ...(complete ? { allRead: true, ...(left === undefined ? {} : { boundLeft: heldBoundOf(left) }) } : {}) };
  }

  /**
   * The records of expired holds that a give-back of at least `atLeast` units frees, earliest first,
   * as many as one write carries, those of the holds `gone` names given back already (read past,
   * as a read after their give-back would not find them); the earliest expiry among the records it
   * leaves; and whether the reads found every record expired by now.
   */
  private async expiredToFree(
    batch: Batch,
    now: Instant,
    atLeast: number,
    gone: CountedGiveBacks = NONE_COUNTED,
  ): Promise<{ readonly freeing: StoredHeldUnits[]; readonly left?: string; readonly complete: boolean }> {
    const given = new Set(gone.holds);
    const read = await this.earliestRecords(batch, now, gone.records);
    const { complete } = read;
    const records = read.records.filter(({ units: { holdid } }) => !given.has(holdid));
    const expiredBy = new Date(now).toISOString();
    const byHold = new Map<string, StoredHeldUnits>();
    for (const record of records) if (record.units.expiresAt <= expiredBy) byHold.set(record.units.holdid, record);
    const freeing: StoredHeldUnits[] = [];
    let freeingUnits = 0;
    for (const record of [...byHold.values()].sort((a, b) => (a.units.expiresAt < b.units.expiresAt ? -1 : 1))) {
      if (freeingUnits >= atLeast || freeing.length >= HOLDS_FREED_AT_ONCE) break;
      freeing.push(record);
      freeingUnits += record.units.qty;
    }
    // A give-back writes at most one piece of each spread its holds' units came from and the batch
    // item: as many holds as one transaction carries, sized for the most it may send.
    while (freeing.length > 1 && expiredUnitsGivenBackWrites(this.tableName, freeing, sizingPlaces()).items.length > MAX_TRANSACTION_ITEMS) freeing.pop();
    const freed = new Set(freeing.map(({ units: { holdid } }) => holdid));
    const left = records.filter(({ units: { holdid } }) => !freed.has(holdid)).map(({ units: { expiresAt } }) => expiresAt).reduce(earlierOf, undefined);
    return { freeing, complete, ...(left === undefined ? {} : { left }) };
  }

  async stillHeldOn(hold: Hold): Promise<string[]> {
    // A hold's units on a batch are given back all at once, so its first record there tells.
    let keys: Record<string, unknown>[] = hold.lines.map((line) => heldUnitsKey(line.sku, line.batchref, hold, sourcesOf(line)[0] ?? { qty: line.qty }));
    const found: string[] = [];
    // A key the store leaves unprocessed (throttled) is asked again: one missed would strand its units.
    for (let round = 0; keys.length > 0; round++) {
      if (round >= MAX_UNPROCESSED_ROUNDS) throw new StoreUnavailable(`The records of hold ${hold.holdid} were not read`);
      const { Responses, UnprocessedKeys } = await this.calls.call((options) =>
        this.client.send(new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } } }), options),
      );
      for (const item of Responses?.[this.tableName] ?? []) {
        const stored = parseStoredItem(item);
        if (stored.kind === 'held-units') found.push(stored.held.ref);
      }
      keys = UnprocessedKeys?.[this.tableName]?.Keys ?? [];
    }
    return found;
  }

  /**
   * Each shard of the index read in order of expiry, `limit` at a time, and the earliest `limit` of
   * them kept. The cursor is where each shard's next Query starts: after the last of its holds that
   * a page kept (its index key), or where it started when the page kept none of them; a shard whose
   * every hold a page kept and that has no more is left out.
   */
  async expiredHolds(before: Instant, limit: number, from?: ExpiredHoldsCursor): Promise<ExpiredHolds> {
    const starts: ShardStarts = from ? (from as unknown as ShardStarts) : new Map(activeHoldShards.map((shard) => [shard, undefined]));
    const shards = await Promise.all(
      [...starts].map(async ([shard, start]) => {
        const { Items = [], LastEvaluatedKey } = await this.calls.call((options) =>
          this.client.send(
            new QueryCommand({
              TableName: this.tableName,
              IndexName: activeHoldsIndex.name,
              KeyConditionExpression: `${ACTIVE_HOLD_SHARD} = :shard AND heldUntil <= :before`,
              ExpressionAttributeValues: { ':shard': shard, ':before': new Date(before).toISOString() },
              Limit: limit,
              ...(start ? { ExclusiveStartKey: start } : {}),
            }),
            options,
          ),
        );
        return { shard, start, items: Items, more: LastEvaluatedKey !== undefined };
      }),
    );
    // A stable sort: each shard's holds stay in its order, so those kept are the first of its Query's.
    const kept = shards
      .flatMap(({ shard, items }) => items.map((item) => ({ shard, item, heldUntil: String(item.heldUntil) })))
      .sort((a, b) => (a.heldUntil < b.heldUntil ? -1 : a.heldUntil > b.heldUntil ? 1 : 0))
      .slice(0, limit);
    const next: Map<string, IndexKey | undefined> = new Map();
    for (const { shard, start, items, more } of shards) {
      const last = kept.filter((entry) => entry.shard === shard).at(-1)?.item;
      const keptAll = last !== undefined && last === items.at(-1);
      if (!keptAll && items.length > 0) next.set(shard, last ? activeHoldIndexKey(last) : start);
      else if (more && last) next.set(shard, activeHoldIndexKey(last));
    }
    return { holdids: kept.map(({ item }) => String(item.holdid)), ...(next.size > 0 ? { next: next as unknown as ExpiredHoldsCursor } : {}) };
  }

  /**
   * The batch's records of held units from the earliest expiry, up to HOLDS_FREED_AT_ONCE + 1 in each
   * partition they may be in; `complete` when each partition's read ended at its last record or at
   * one not expired by `now`: then every record expired by then is among them, and so is the
   * earliest of those left once they are given back.
   */
  private async earliestRecords(batch: Batch, now: Instant, readPast = 0): Promise<{ readonly records: StoredHeldUnits[]; readonly complete: boolean }> {
    const limit = HOLDS_FREED_AT_ONCE + 1 + readPast;
    const partitions = await this.recordsByPartition(batch, `${heldOnBatchRange(batch.ref)}~`, { latestFirst: false, limit });
    const expiredBy = new Date(now).toISOString();
    // A partition read to its limit has more records: later than those read, and expired too when the last read is.
    const complete = partitions.every(({ items, records }) => items < limit || (records.at(-1)?.units.expiresAt ?? '') > expiredBy);
    return { records: partitions.flatMap(({ records }) => records), complete };
  }

  /**
   * Raises the bound of each of the batch's items (held-bounds.ts, "Bounds of held units") that is below
   * `to` (undefined: no record left, and the bound goes), item by item, on condition that no hold's
   * take has counted on the item since the batch was read (its `heldTakes` as read, which is before
   * the records were read): every record a take made since is then among those read, and expires at
   * or after `to`. A piece is raised only in the spread read. A raise that fails, or meets another
   * write, or that the store does not answer, is left: the bound may stay lower, which costs only a
   * read of the records next time. A bound raised to `now` or before would still say to read them,
   * and is not written. Whether one was raised, or refused for its count of takes: either way the
   * pieces this process remembers are older than the store's.
   */
  private async raiseBound(batch: Batch, to: string | undefined, now: string): Promise<boolean> {
    if (to !== undefined && to <= now) return false;
    // An item's count guards its raise, and a write conditioned on no count at all would make an item where there is none.
    const below = ({ heldFrom, heldTakes }: { heldFrom?: string; heldTakes?: number }) => heldFrom !== undefined && heldTakes !== undefined && (to === undefined || heldFrom < to);
    const update = to === undefined ? 'REMOVE heldFrom' : 'SET heldFrom = :raised';
    const values = to === undefined ? {} : { ':raised': to };
    const raises = [
      ...(below(batch) ? [{ key: batchWithStockKey(batch.sku, batch.ref), heldTakes: batch.heldTakes, spread: [] as Condition[] }] : []),
      ...(batch.pieces ?? []).filter(below).map(({ piece, heldTakes }) => ({
        key: pieceKey(batch.sku, batch.ref, piece),
        heldTakes,
        spread: [{ ConditionExpression: 'spreadId = :spreadId', ExpressionAttributeValues: { ':spreadId': batch.spreadId } }],
      })),
    ];
    // Each a write of its own, outside any transaction (it conflicts with no take for long, and costs
    // half): one the store refuses, or does not answer, leaves that bound as it is, and the give-back
    // before it stands.
    const answers = await Promise.all(
      raises.map(async ({ key, heldTakes, spread }) => {
        try {
          await this.calls.call((options) =>
            this.client.send(
              new UpdateCommand({ TableName: this.tableName, Key: key, UpdateExpression: update, ...withValues(and(heldTakesAre(heldTakes), ...spread), values) }),
              options,
            ),
          );
          return 'raised';
        } catch (error) {
          if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return 'not-as-read';
          if (error instanceof TransientFailure || (error instanceof Error && RAISE_LEFT.has(error.name))) return 'left';
          throw error;
        }
      }),
    );
    return answers.some((answer) => answer !== 'left');
  }

  /**
   * The records of held units on the batch, from each partition they may be in (its SKU's and its
   * pieces'): those that expired by `expiredBy`, or the latest `limit` of each partition. Their sort
   * keys begin with the batch and its expiry, so the Query reads no other batch's and, for expired
   * ones, no active one.
   */
  private async heldRecords(batch: Batch, which: HeldOnBatch, limit: number): Promise<StoredHeldUnits[]> {
    const range = heldOnBatchRange(batch.ref);
    // ISO instants have one length, and '#' sorts before '$': every key of an expiry at or before the instant sorts before this.
    const last = 'expiredBy' in which ? `${range}${new Date(which.expiredBy).toISOString()}$` : `${range}~`;
    const partitions = await this.recordsByPartition(batch, last, { latestFirst: !('expiredBy' in which), limit });
    return partitions.flatMap(({ records }) => records);
  }

  /** The batch's records of held units up to the sort key `last`, partition by partition, with how many items each read found. */
  private async recordsByPartition(batch: Batch, last: string, order: { latestFirst: boolean; limit: number }) {
    const range = heldOnBatchRange(batch.ref);
    return Promise.all(
      heldUnitsPartitions(batch.sku).map(async (partition) => {
        const items = await this.reads.range(partition, range, last, order);
        const records = items.flatMap((item) => {
          const stored = parseStoredItem(item);
          return stored.kind === 'held-units' && stored.held.ref === batch.ref ? [stored.held] : [];
        });
        return { items: items.length, records };
      }),
    );
  }
}
