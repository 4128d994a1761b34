import { Unsupported, tableNotFound } from './errors';
import type { Stream } from './stream';
import type { Table, TableKey } from './table';
import type { Item } from './values';

/** A table with what DescribeTable tells of it besides its items. */
export interface StoredTable {
  readonly table: Table;
  readonly createdAt: number;
  /** As CreateTable was given them, which DescribeTable answers back. */
  readonly attributeDefinitions: unknown;
  readonly keySchema: unknown;
  readonly indexes: readonly { readonly IndexName: string; readonly KeySchema: unknown; readonly Projection: unknown }[];
  readonly stream?: Stream;
  timeToLiveAttribute?: string;
  /** ClientRequestTokens of its transactions: a token sent again asks for DynamoDB's idempotence, which this store does not keep. */
  readonly transactionTokens: Set<string>;
}

/** Every table of one memory store, their streams, and the store's clock and sequence numbers. */
export class Catalog {
  readonly tables = new Map<string, StoredTable>();
  readonly streams = new Map<string, Stream>();
  private sequence = 0n;
  private shards = 0;

  constructor(readonly now: () => number) {}

  table(name: unknown): StoredTable {
    const stored = this.tables.get(String(name));
    if (!stored) throw tableNotFound();
    return stored;
  }

  stream(arn: unknown): Stream {
    const stream = this.streams.get(String(arn));
    if (!stream) throw new Unsupported(`the stream ${String(arn)}: no table of this store has it (a dropped table's stream is not kept)`);
    return stream;
  }

  /** Forgets every table and stream. */
  clear(): void {
    this.tables.clear();
    this.streams.clear();
  }

  /** The next sequence number of any stream's record. */
  readonly nextSequence = (): bigint => ++this.sequence;

  /** Where a stream made now starts: at the next record of any table. */
  firstSequenceOfNewStream(): bigint {
    return this.sequence + 1n;
  }

  nextShardNumber(): number {
    return ++this.shards;
  }

  /** Writes `item` at `key` (undefined removes what is there) and records the change on the table's stream. */
  commit({ table, stream }: StoredTable, key: TableKey, item: Item | undefined): void {
    const previous = table.get(key);
    table.write(key, item);
    stream?.record(table.keyItem(key), previous, item, this.nextSequence, this.now());
  }
}
