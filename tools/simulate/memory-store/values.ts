import { Unsupported } from './errors';
import { canonicalNumber, compareDecimals, numberSizeBytes, parseDecimal } from './numbers';

/*
 * Attribute values as DynamoDB's JSON protocol carries them. Only the types the service stores are
 * kept: a set or a binary value is refused loudly, since nothing here knows how DynamoDB Local
 * orders or sizes them.
 */

export type AttributeValue =
  | { readonly S: string }
  | { readonly N: string }
  | { readonly BOOL: boolean }
  | { readonly NULL: true }
  | { readonly M: Item }
  | { readonly L: readonly AttributeValue[] };

export type Item = Readonly<Record<string, AttributeValue>>;

export type TypeName = 'S' | 'N' | 'BOOL' | 'NULL' | 'M' | 'L';

const SUPPORTED = new Set<string>(['S', 'N', 'BOOL', 'NULL', 'M', 'L']);

export const typeOf = (value: AttributeValue): TypeName => Object.keys(value)[0] as TypeName;

/** A value as a request carries it, checked for a type this store supports and a number it can read. */
export const checkedValue = (raw: unknown): AttributeValue => {
  const entries = raw !== null && typeof raw === 'object' ? Object.entries(raw) : [];
  const [type, content] = entries[0] ?? [];
  if (entries.length !== 1 || type === undefined) throw new Unsupported('an attribute value of no type, or of several');
  if (!SUPPORTED.has(type)) throw new Unsupported(`attribute values of type ${type}`);
  if (type === 'N') parseDecimal(String(content));
  if (type === 'M') checkedItem(content);
  if (type === 'L') (content as unknown[]).forEach(checkedValue);
  return raw as AttributeValue;
};

export const checkedItem = (raw: unknown): Item => {
  if (raw === null || typeof raw !== 'object') throw new Unsupported('an item that is not a map of attributes');
  for (const value of Object.values(raw)) checkedValue(value);
  return raw as Item;
};

/** Text compared as DynamoDB compares it: by UTF-8 bytes, which is by code point. */
export const compareText = (a: string, b: string): number => {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index++) {
    const [x, y] = [a.charCodeAt(index), b.charCodeAt(index)];
    if (x === y) continue;
    // UTF-16 puts a character past U+FFFF (a surrogate pair) below U+E000-U+FFFF; UTF-8 above.
    const [xPaired, yPaired] = [x >= 0xd800 && x <= 0xdfff, y >= 0xd800 && y <= 0xdfff];
    if (xPaired !== yPaired && x >= 0xd800 && y >= 0xd800) return xPaired ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
};

/**
 * The order of two values for <, <=, >, >= and BETWEEN, or undefined when they have none: values of
 * two types, or of a type without an order. DynamoDB then finds the comparison false.
 */
export const compareValues = (a: AttributeValue, b: AttributeValue): number | undefined => {
  if ('S' in a && 'S' in b) return compareText(a.S, b.S);
  if ('N' in a && 'N' in b) return compareDecimals(parseDecimal(a.N), parseDecimal(b.N));
  return undefined;
};

/** Equality as DynamoDB's `=` sees it: numbers by value ("1.0" = "1"), maps by their entries. */
export const valuesEqual = (a: AttributeValue, b: AttributeValue): boolean => {
  if ('S' in a) return 'S' in b && a.S === b.S;
  if ('N' in a) return 'N' in b && compareDecimals(parseDecimal(a.N), parseDecimal(b.N)) === 0;
  if ('BOOL' in a) return 'BOOL' in b && a.BOOL === b.BOOL;
  if ('NULL' in a) return 'NULL' in b;
  if ('M' in a) return 'M' in b && itemsEqual(a.M, b.M);
  return 'L' in b && a.L.length === b.L.length && a.L.every((value, index) => valuesEqual(value, b.L[index] as AttributeValue));
};

export const itemsEqual = (a: Item, b: Item): boolean => {
  const names = Object.keys(a);
  return names.length === Object.keys(b).length && names.every((name) => Object.hasOwn(b, name) && valuesEqual(a[name] as AttributeValue, b[name] as AttributeValue));
};

export const textBytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** A map or a list counts 3 bytes of its own and one per element (LocalDBUtils.getAttributeValueSizeBytes). */
const NESTED_OWN_BYTES = 3;

export const valueSizeBytes = (value: AttributeValue): number => {
  if ('S' in value) return textBytes(value.S);
  if ('N' in value) return numberSizeBytes(value.N);
  if ('M' in value) return NESTED_OWN_BYTES + attributesSizeBytes(value.M) + Object.keys(value.M).length;
  if ('L' in value) return NESTED_OWN_BYTES + value.L.reduce((sum, element) => sum + valueSizeBytes(element), 0) + value.L.length;
  return 1;
};

const attributesSizeBytes = (item: Item): number => Object.entries(item).reduce((sum, [name, value]) => sum + textBytes(name) + valueSizeBytes(value), 0);

/** An item's size as DynamoDB Local counts it, in a table's size and a stream record's: names and values. */
export const itemSizeBytes = (item: Item | undefined): number => (item === undefined ? 0 : attributesSizeBytes(item));

/** An item as PutItem stores it: its numbers (not those inside maps and lists) written as DynamoDB Local writes them. */
export const itemAsPut = (item: Item): Item =>
  Object.fromEntries(Object.entries(item).map(([name, value]) => [name, 'N' in value ? { N: canonicalNumber(value.N) } : value]));

/** DynamoDB Local's stream writes an empty map as `{}`, without its type, at any depth (local/event-stream.ts repairs it). */
const asStreamWritesIt = (value: AttributeValue): unknown => {
  if ('M' in value) return Object.keys(value.M).length === 0 ? {} : { M: streamImage(value.M) };
  if ('L' in value) return { L: value.L.map(asStreamWritesIt) };
  return value;
};

export const streamImage = (item: Item): Record<string, unknown> =>
  Object.fromEntries(Object.entries(item).map(([name, value]) => [name, asStreamWritesIt(value)]));
