import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Allocation, Batch, LineMove, ListedLine, Part } from '../../domain/model';
import type { ConditionalWrite, MoveAllocationsResult } from '../../domain/ports';
import { parseStoredItem, storedLine } from './items';
import { lineMovesWrites, lineRemovalWrites, partMoveWrites } from './line-changes';
import { ALLOCATED_AT, LINE_BATCH, lineKey, linesOfBatch } from './lines';
import { writesOf } from './pieces';
import type { SpreadBatches } from './spread-batches';
import { type DocumentSender, MAX_TRANSACTION_ITEMS, type StoreCalls } from './store-calls';
import { linesByBatchIndex } from './table';
import type { TableReads } from './table-reads';
import type { World } from './world';

/*
 * The lines already allocated, for the repository (batch-repository.ts): a batch's lines as its
 * index lists them, and the writes that take lines off their batches: a cancel, the moves of whole
 * lines off a batch that shrank, and the move of a split line's part (or the whole line's leaving).
 */

/** A line as linesByBatch lists it: a whole line, or a split line's part (ListedLine). */
const listedLine = (item: Record<string, unknown>): ListedLine => {
  const stored = parseStoredItem(item);
  if (stored.kind === 'line-part') return { ...stored.allocation, isPart: true };
  return storedLine(item);
};

export class LineWrites {
  constructor(
    private readonly calls: StoreCalls,
    private readonly client: DocumentSender,
    private readonly reads: TableReads,
    private readonly tableName: string,
    private readonly spreads: SpreadBatches,
    private readonly world: World,
  ) {}

  async linesOn(ref: string, limit: number): Promise<ListedLine[]> {
    // The newest `limit` of each index partition of the batch hold its newest `limit` in all.
    const partitions = await Promise.all(
      linesOfBatch(ref).map((partition) =>
        this.calls.call((options) =>
          this.client.send(
            new QueryCommand({
              TableName: this.tableName,
              IndexName: linesByBatchIndex.name,
              KeyConditionExpression: `${LINE_BATCH} = :lines`,
              ExpressionAttributeValues: { ':lines': partition },
              ScanIndexForward: false,
              Limit: limit,
            }),
            options,
          ),
        ),
      ),
    );
    const newestFirst = partitions
      .flatMap(({ Items }) => Items ?? [])
      .sort((a, b) => (String(a[ALLOCATED_AT]) < String(b[ALLOCATED_AT]) ? 1 : String(a[ALLOCATED_AT]) > String(b[ALLOCATED_AT]) ? -1 : 0));
    return newestFirst.slice(0, limit).map(listedLine);
  }

  /** The line removed, with its notice, and each part's qty given back to its batch (`batches`, one per part, as read): one write. */
  async cancel(allocation: Allocation, batches: readonly Batch[]): Promise<ConditionalWrite> {
    const parts = allocation.split?.parts ?? [{ batchref: allocation.batchref, qty: allocation.qty }];
    const [first] = batches;
    if (!first || parts.length !== batches.length) throw new Error(`Cancelling line ${allocation.orderid}/${allocation.sku} with ${batches.length} batches for ${parts.length} parts`);
    return this.calls.conditionalWrite([
      ...lineRemovalWrites(this.tableName, allocation, 'cancelled', first, this.world.now(), this.world),
      ...parts.flatMap(({ qty }, index) => {
        const batch = batches[index] as Batch;
        return writesOf(batch).giveBack(this.tableName, batch, qty);
      }),
    ]);
  }

  async moveAll(from: Batch, moves: readonly LineMove[], batches: readonly Batch[]): Promise<MoveAllocationsResult> {
    const destinations = batches.filter(({ ref }) => moves.some(({ to }) => to === ref));
    if (!(await this.spreads.keptWhole([from, ...destinations]))) return { outcome: 'changed' };
    const now = this.world.now();
    const writes = (some: readonly LineMove[]) => lineMovesWrites(this.tableName, from, some, batches, now, this.world);
    // The longest run of moves whose items fit one transaction: a move is 1 or 2 items, a batch 1 or
    // 2 whichever moves take from it, so the count is known only once the run's writes are made.
    let moved = Math.min(moves.length, MAX_TRANSACTION_ITEMS);
    let items = writes(moves.slice(0, moved));
    while (items.length > MAX_TRANSACTION_ITEMS) {
      moved--;
      items = writes(moves.slice(0, moved));
    }
    return (await this.calls.conditionalWrite(items)) === 'saved' ? { outcome: 'saved', moved } : { outcome: 'changed' };
  }

  /**
   * A split line's part moved off `from` to the parts `to` names, or, with `to` null, the whole line
   * removed from its order with its notice and every part given back (`others`: its other parts'
   * batches, as read): one write, on batches kept whole (a spread one is gathered first, and answers
   * `changed`).
   */
  async movePart(line: Allocation, from: Batch, to: readonly Part[] | null, others: readonly Batch[]): Promise<ConditionalWrite> {
    if (!(await this.spreads.keptWhole([from, ...(to ? to.map(({ batch }) => batch) : others)]))) return 'changed';
    const now = this.world.now();
    if (to) {
      // The parts keep their line's allocation time, as a moved line does: read from the line, whose condition the write checks.
      const item = await this.reads.item(lineKey(line.orderid, line.sku));
      const allocatedAt = item?.[ALLOCATED_AT];
      if (typeof allocatedAt !== 'string') return 'changed';
      return this.calls.conditionalWrite(partMoveWrites(this.tableName, line, from, to, now, allocatedAt));
    }
    const parts = line.split?.parts ?? [];
    const batchOf = (batchref: string) => (batchref === from.ref ? from : others.find(({ ref }) => ref === batchref));
    const givesBack = parts.flatMap(({ batchref, qty }) => {
      const batch = batchOf(batchref);
      if (!batch) throw new Error(`Line ${line.orderid}/${line.sku} leaves batch ${batchref}, which was not read`);
      return writesOf(batch).giveBack(this.tableName, batch, qty);
    });
    return this.calls.conditionalWrite([...lineRemovalWrites(this.tableName, line, 'reallocated', from, now, this.world), ...givesBack]);
  }
}
