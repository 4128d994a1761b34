import { createHash } from 'node:crypto';
import { entryOf } from './conditions';
import { Unsupported, validation } from './errors';
import { type AttributeValue, type Item, compareText, itemSizeBytes } from './values';

/*
 * A table's items, in the orders DynamoDB Local reads them. It keeps them in SQLite, ordered for a
 * Scan by a salted SHA-1 of the partition key, then by sort key; a global secondary index by its
 * own keys, then by a salted SHA-1 of the item's table key (software.amazon.dynamodb.services.local
 * .shared.access: LocalDBUtils.getHashValue, SQLiteDBAccess's `hashValue` and `hashRangeValue`
 * columns). A Scan's pages, and the order of a Query's items whose index keys are equal, follow
 * those hashes, so the same are computed here. Keys are strings, as the service's are.
 */

const SALT = Buffer.from('LocalDdb');
const hashOf = (text: string): Buffer => createHash('sha1').update(SALT).update(text, 'utf8').digest();
const hashOfPair = (hashKey: string, rangeKey: string): Buffer => createHash('sha1').update(SALT).update(hashOf(hashKey)).update(hashOf(rangeKey)).digest();

export interface KeySchema {
  readonly hash: string;
  readonly range: string;
}

export type ProjectionType = 'ALL' | 'KEYS_ONLY' | 'INCLUDE';

export interface IndexDefinition {
  readonly name: string;
  readonly keys: KeySchema;
  readonly projection: { readonly type: ProjectionType; readonly nonKeyAttributes: readonly string[] };
}

/** An item's place in the table. */
export interface TableKey {
  readonly hash: string;
  readonly range: string;
}

const keyId = ({ hash, range }: TableKey) => `${hash.length}:${hash}${range}`;

interface Stored {
  readonly key: TableKey;
  readonly item: Item;
  readonly sizeBytes: number;
}

interface Partition {
  readonly hashValue: Buffer;
  readonly items: Map<string, Stored>;
  /** By sort key, made again after a write adds or removes an item. */
  sorted?: Stored[];
}

interface IndexEntry {
  readonly stored: Stored;
  readonly range: string;
  readonly tableKeyHash: Buffer;
}

/** What a read continues from: the key of the last item of its previous page. */
export interface Page {
  readonly items: readonly Item[];
  readonly lastKey?: Item;
}

/** What a Query's key condition asks of the sort key. */
export interface RangeCondition {
  readonly holds: (range: string) => boolean;
  /**
   * Whether items may follow one at `range`, in the order read: DynamoDB Local leaves a full page of
   * a table (not of an index) without a LastEvaluatedKey when its last item is at the inclusive end
   * of the condition (QueryFunction.exclusiveStartFitsConditions).
   */
  readonly continuesAfter: (range: string, forward: boolean) => boolean;
}

export interface QuerySpec {
  readonly hashValue: string;
  readonly range?: RangeCondition;
  readonly forward: boolean;
  readonly limit?: number;
  readonly startKey?: Item;
}

const stringAt = (record: Item, name: string): string | undefined => {
  const value = entryOf(record, name);
  if (value === undefined) return undefined;
  if (!('S' in value)) throw new Unsupported(`a key attribute (${name}) of a type other than S`);
  return value.S;
};

class Index {
  private readonly partitions = new Map<string, Map<string, IndexEntry>>();
  itemCount = 0;
  sizeBytes = 0;

  constructor(readonly definition: IndexDefinition) {}

  /** An item's keys in the index, if it has both (a sparse index has no entry for the rest). */
  keysOf(item: Item): TableKey | undefined {
    const { hash: hashName, range: rangeName } = this.definition.keys;
    const [hash, range] = [stringAt(item, hashName), stringAt(item, rangeName)];
    if (hash === undefined || range === undefined) return undefined;
    if (hash === '' || range === '') throw new Unsupported(`an empty string as a key of index ${this.definition.name}`);
    return { hash, range };
  }

  private entryOf(stored: Stored): { hash: string; entry: IndexEntry } | undefined {
    const keys = this.keysOf(stored.item);
    return keys && { hash: keys.hash, entry: { stored, range: keys.range, tableKeyHash: hashOfPair(stored.key.hash, stored.key.range) } };
  }

  /**
   * DynamoDB Local counts in an index's size every item with either of its keys, though only those
   * with both are in it: an active hold's record still counts once its end removed one of them.
   */
  private countsInSize(stored: Stored | undefined): boolean {
    const { hash, range } = this.definition.keys;
    return stored !== undefined && (Object.hasOwn(stored.item, hash) || Object.hasOwn(stored.item, range));
  }

  replace(previous: Stored | undefined, next: Stored | undefined): void {
    const [gone, made] = [previous && this.entryOf(previous), next && this.entryOf(next)];
    if (gone) {
      const partition = this.partitions.get(gone.hash);
      partition?.delete(keyId(gone.entry.stored.key));
      if (partition?.size === 0) this.partitions.delete(gone.hash);
      this.itemCount--;
    }
    if (made) {
      const partition = this.partitions.get(made.hash) ?? new Map<string, IndexEntry>();
      partition.set(keyId(made.entry.stored.key), made.entry);
      this.partitions.set(made.hash, partition);
      this.itemCount++;
    }
    if (this.countsInSize(previous)) this.sizeBytes -= (previous as Stored).sizeBytes;
    if (this.countsInSize(next)) this.sizeBytes += (next as Stored).sizeBytes;
  }

  /** The attributes an index keeps of an item: its own keys and the table's, and those its projection names. */
  private projected(item: Item, tableKeys: KeySchema): Item {
    const { keys, projection } = this.definition;
    if (projection.type === 'ALL') return item;
    const kept = [tableKeys.hash, tableKeys.range, keys.hash, keys.range, ...(projection.type === 'INCLUDE' ? projection.nonKeyAttributes : [])];
    return Object.fromEntries(kept.flatMap((name) => (Object.hasOwn(item, name) ? [[name, item[name] as AttributeValue]] : [])));
  }

  query({ hashValue, range: condition, forward, limit, startKey }: QuerySpec, tableKeys: KeySchema): Page {
    const order = (a: { range: string; tableKeyHash: Buffer }, b: { range: string; tableKeyHash: Buffer }) =>
      compareText(a.range, b.range) || Buffer.compare(a.tableKeyHash, b.tableKeyHash);
    const entries = [...(this.partitions.get(hashValue)?.values() ?? [])].filter(({ range }) => condition?.holds(range) ?? true).sort(order);
    if (!forward) entries.reverse();
    const start = startKey && this.startOf(startKey, hashValue, tableKeys);
    const after = start ? entries.filter((entry) => (forward ? order(entry, start) > 0 : order(entry, start) < 0)) : entries;
    const page = limit === undefined ? after : after.slice(0, limit);
    const last = limit !== undefined && page.length === limit ? page.at(-1) : undefined;
    return {
      items: page.map(({ stored }) => this.projected(stored.item, tableKeys)),
      ...(last ? { lastKey: this.pick(last.stored.item, [tableKeys.hash, tableKeys.range, this.definition.keys.hash, this.definition.keys.range]) } : {}),
    };
  }

  private startOf(startKey: Item, hashValue: string, tableKeys: KeySchema): { range: string; tableKeyHash: Buffer } {
    const [hash, range, tableHash, tableRange] = [this.definition.keys.hash, this.definition.keys.range, tableKeys.hash, tableKeys.range].map((name) =>
      stringAt(startKey, name),
    );
    if (hash !== hashValue || range === undefined || tableHash === undefined || tableRange === undefined || Object.keys(startKey).length !== 4) {
      throw new Unsupported(`an ExclusiveStartKey outside the Query's partition of index ${this.definition.name}, or not one of its keys`);
    }
    return { range, tableKeyHash: hashOfPair(tableHash, tableRange) };
  }

  private pick(item: Item, names: readonly string[]): Item {
    return Object.fromEntries(names.map((name) => [name, item[name] as AttributeValue]));
  }
}

export class Table {
  private readonly partitions = new Map<string, Partition>();
  /** By the partitions' hashes, made again after a write adds or removes a partition. */
  private sortedPartitions?: Partition[];
  private readonly indexes: Map<string, Index>;
  itemCount = 0;
  sizeBytes = 0;

  constructor(
    readonly name: string,
    readonly keys: KeySchema,
    indexes: readonly IndexDefinition[],
  ) {
    this.indexes = new Map(indexes.map((definition) => [definition.name, new Index(definition)]));
  }

  indexKeys(name: string): KeySchema {
    const index = this.indexes.get(name);
    if (!index) throw validation(`The table does not have the specified index: ${name}`);
    return index.definition.keys;
  }

  /** An item whose index keys are not strings, or are empty, DynamoDB refuses to write; found before anything is written. */
  checkIndexKeys(item: Item): void {
    for (const index of this.indexes.values()) index.keysOf(item);
  }

  indexSizes(name: string): { itemCount: number; sizeBytes: number } {
    const index = this.indexes.get(name) as Index;
    return { itemCount: index.itemCount, sizeBytes: index.sizeBytes };
  }

  /** A key attribute's value, refused as DynamoDB Local refuses one missing, of another type, or empty. */
  private keyValue(record: Item, name: string): string {
    const value = entryOf(record, name);
    if (value === undefined) throw validation('One of the required keys was not given a value');
    if (!('S' in value)) throw validation('One or more parameter values were invalid: Type mismatch for key');
    if (value.S === '') {
      throw validation(`One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: ${name}`);
    }
    return value.S;
  }

  /** The key a Key parameter names: exactly the table's key attributes. */
  keyOf(key: Item): TableKey {
    if (Object.keys(key).length !== 2) throw validation('The number of conditions on the keys is invalid');
    return this.keyOfItem(key);
  }

  /** The key of an item to be put, which must have the table's key attributes. */
  keyOfItem(item: Item): TableKey {
    return { hash: this.keyValue(item, this.keys.hash), range: this.keyValue(item, this.keys.range) };
  }

  keyItem({ hash, range }: TableKey): Item {
    return { [this.keys.hash]: { S: hash }, [this.keys.range]: { S: range } };
  }

  get(key: TableKey): Item | undefined {
    return this.partitions.get(key.hash)?.items.get(keyId(key))?.item;
  }

  /** Puts `item` at `key`, or removes what is there when `item` is undefined. */
  write(key: TableKey, item: Item | undefined): void {
    const id = keyId(key);
    const existing = this.partitions.get(key.hash);
    const previous = existing?.items.get(id);
    const next = item && { key, item, sizeBytes: itemSizeBytes(item) };
    if (next) {
      const partition = existing ?? this.newPartition(key.hash);
      partition.items.set(id, next);
      // An item replaced keeps its place; a new one needs the partition sorted again.
      partition.sorted = previous && partition.sorted?.map((stored) => (stored === previous ? next : stored));
    } else if (existing && previous) {
      existing.items.delete(id);
      existing.sorted = undefined;
      if (existing.items.size === 0) {
        this.partitions.delete(key.hash);
        this.sortedPartitions = undefined;
      }
    }
    this.itemCount += (next ? 1 : 0) - (previous ? 1 : 0);
    this.sizeBytes += (next?.sizeBytes ?? 0) - (previous?.sizeBytes ?? 0);
    for (const index of this.indexes.values()) index.replace(previous, next);
  }

  private newPartition(hash: string): Partition {
    const partition = { hashValue: hashOf(hash), items: new Map<string, Stored>() };
    this.partitions.set(hash, partition);
    this.sortedPartitions = undefined;
    return partition;
  }

  private sortedItems(partition: Partition): Stored[] {
    partition.sorted ??= [...partition.items.values()].sort((a, b) => compareText(a.key.range, b.key.range));
    return partition.sorted;
  }

  query(spec: QuerySpec, indexName?: string): Page {
    if (indexName !== undefined) {
      const index = this.indexes.get(indexName);
      if (!index) throw validation(`The table does not have the specified index: ${indexName}`);
      return index.query(spec, this.keys);
    }
    const { hashValue, range: condition, forward, limit, startKey } = spec;
    const partition = this.partitions.get(hashValue);
    const items = (partition ? this.sortedItems(partition) : []).filter(({ key }) => condition?.holds(key.range) ?? true);
    if (!forward) items.reverse();
    let after = items;
    if (startKey) {
      const start = this.keyOf(startKey);
      if (start.hash !== hashValue) throw new Unsupported('an ExclusiveStartKey outside the partition a Query reads');
      after = items.filter(({ key }) => (forward ? compareText(key.range, start.range) > 0 : compareText(key.range, start.range) < 0));
    }
    const page = this.page(after, limit);
    const last = page.lastKey && this.keyOf(page.lastKey);
    return last && condition && !condition.continuesAfter(last.range, forward) ? { items: page.items } : page;
  }

  scan(limit: number | undefined, startKey: Item | undefined): Page {
    this.sortedPartitions ??= [...this.partitions.values()].sort((a, b) => Buffer.compare(a.hashValue, b.hashValue));
    let partitions = this.sortedPartitions;
    let start: TableKey | undefined;
    if (startKey) {
      start = this.keyOf(startKey);
      const startHash = hashOf(start.hash);
      partitions = partitions.filter(({ hashValue }) => Buffer.compare(hashValue, startHash) >= 0);
    }
    const items: Stored[] = [];
    for (const partition of partitions) {
      for (const stored of this.sortedItems(partition)) {
        const afterStart = !start || stored.key.hash !== start.hash || compareText(stored.key.range, start.range) > 0;
        if (afterStart) items.push(stored);
        if (limit !== undefined && items.length === limit) return this.page(items, limit);
      }
    }
    return this.page(items, limit);
  }

  /** DynamoDB Local says where to go on whenever a page is full, even when nothing follows it. */
  private page(items: readonly Stored[], limit: number | undefined): Page {
    const page = limit === undefined ? items : items.slice(0, limit);
    const last = limit !== undefined && page.length === limit ? page.at(-1) : undefined;
    return { items: page.map(({ item }) => item), ...(last ? { lastKey: this.keyItem(last.key) } : {}) };
  }
}
