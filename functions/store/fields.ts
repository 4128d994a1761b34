import { tableKeySchema } from './table';

/*
 * What every kind of item (batches.ts, pieces.ts, lines.ts, holds.ts, held-units.ts) is built from
 * and read back by: the key's two attributes and an item's key, the spread of keys over shards, and
 * the checks each kind's parser makes of an attribute. Not in items.ts: that one reads any item
 * through each kind's parser, so a kind that imported it would import itself.
 */

export const PK = tableKeySchema.partitionKey.name;
export const SK = tableKeySchema.sortKey.name;

export const itemKey = (partition: string, sort: string) => ({ [PK]: partition, [SK]: sort });

/** Whether an item is stored at the key: a kind reads an item back only at the key it would write for the item's attributes. */
export const isAt = (item: Record<string, unknown>, key: ReturnType<typeof itemKey>) => key[PK] === item[PK] && key[SK] === item[SK];

export const isText = (value: unknown): value is string => typeof value === 'string';
export const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/** A text's shard among `shards`: the same for every write of the text, spread evenly over texts. */
export const shardOf = (text: string, shards: number): number => {
  let hash = 0;
  for (const character of text) hash = (hash * 31 + (character.codePointAt(0) ?? 0)) >>> 0;
  return hash % shards;
};
