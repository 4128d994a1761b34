import { Unsupported } from './errors';
import type { AttributeValue, Item } from './values';

/*
 * DynamoDB Local answers a BatchGetItem's items in the order a java.util.HashSet of their keys
 * iterates, not in the order asked: the adapter reads a batch's two keys and a hold's records
 * that way, and what it does next follows the order it got them in, so the same run through this
 * store must get the same order. Java's HashSet is a HashMap: a key's bucket is its hashCode, its
 * high half folded into its low, masked to the table's size; a bucket keeps its keys in the order
 * added, and growing the table splits a bucket in two without reordering. So the order is by
 * bucket of the final table, then by order added.
 */

/** java.lang.String.hashCode. */
export const javaStringHash = (text: string): number => {
  let hash = 0;
  for (let index = 0; index < text.length; index++) hash = (Math.imul(31, hash) + text.charCodeAt(index)) | 0;
  return hash;
};

/** DynamoDB Local's AttributeValue.hashCode: 31 times over its ten fields, of which a string value fills the first. */
const valueHash = (value: AttributeValue): number => {
  if (!('S' in value)) throw new Unsupported('a key of a type other than S in a BatchGetItem');
  let hash = (31 + javaStringHash(value.S)) | 0;
  for (let field = 1; field < 10; field++) hash = Math.imul(31, hash);
  return hash;
};

/** java.util.AbstractMap.hashCode of a key: the sum of its entries', each its name's hash XOR its value's. */
export const javaKeyHash = (key: Item): number =>
  Object.entries(key).reduce((sum, [name, value]) => (sum + (javaStringHash(name) ^ valueHash(value))) | 0, 0);

const LOAD_FACTOR = 0.75;
/** Past this size a HashMap doubles its threshold with its table rather than computing it again. */
const DEFAULT_CAPACITY = 16;
/** A bucket this long becomes a tree, or the table grows, and the simple order above no longer holds. */
const TREEIFY_THRESHOLD = 8;

/** HashMap.tableSizeFor: the power of two at or above `capacity`, 1 at least. */
const tableSizeFor = (capacity: number): number => {
  let size = 1;
  while (size < capacity) size *= 2;
  return size;
};

/** The table size after `count` keys go into `new HashSet<>(initialCapacity)`. */
const finalTableSize = (initialCapacity: number, count: number): number => {
  let size = tableSizeFor(initialCapacity);
  let threshold = Math.floor(size * LOAD_FACTOR);
  for (let added = 1; added <= count; added++) {
    if (added <= threshold) continue;
    threshold = size >= DEFAULT_CAPACITY ? threshold * 2 : Math.floor(size * 2 * LOAD_FACTOR);
    size *= 2;
  }
  return size;
};

/** The places of `hashes` (of distinct elements, in the order added) in the order `new HashSet<>(initialCapacity)` iterates them. */
export const javaHashSetOrder = (hashes: readonly number[], initialCapacity: number): number[] => {
  const mask = finalTableSize(initialCapacity, hashes.length) - 1;
  const buckets = hashes.map((hash) => (hash ^ (hash >>> 16)) & mask);
  const perBucket = new Map<number, number>();
  for (const bucket of buckets) {
    const length = (perBucket.get(bucket) ?? 0) + 1;
    if (length >= TREEIFY_THRESHOLD) throw new Unsupported(`${length} keys in one bucket of a Java HashMap`);
    perBucket.set(bucket, length);
  }
  return hashes.map((_, index) => index).sort((a, b) => (buckets[a] as number) - (buckets[b] as number) || a - b);
};
