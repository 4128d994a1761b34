import { createHash } from 'node:crypto';
import type { ImportRow, ReadRow } from '../../domain/imports';
import { batchRowSchema, countRowSchema, placeCountRowSchema } from '../http/import-schemas';

/*
 * An import's rows as the feed sends them (docs/api.md, "Imports"): each checked on its own by its
 * schema, so that a row refused is counted, and named by its number, rather than refusing the feed.
 */

/** The formats of a feed's file. */
export type FeedFormat = 'jsonl' | 'csv';

/**
 * A record of a feed's file, as its reader hands it on (functions/imports/feed.ts here, Step
 * Functions' reader on AWS): numbered from 1; its fields as parsed (a CSV record's by the header's
 * columns, each as text), or why the file gives it none.
 */
export type FeedRecord = { readonly row: number; readonly fields: unknown } | { readonly row: number; readonly refused: string };

/** Columns of a CSV feed whose values are whole numbers. */
const NUMBER_COLUMNS = new Set(['qty', 'expected_qty', 'on_hand']);

/**
 * A CSV record as a row's fields: an empty value is absent, but an empty `eta` of a batch row (one
 * without `counted_at`) is null, in stock; a whole number in a number column is a number. A count
 * row takes no `eta`, `sku` or `location`, so a file of both kinds leaves them empty on its counts
 * (and a count at a place no `ref`, `qty` or `eta`).
 */
const csvFields = (values: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const count = (values.counted_at ?? '') !== '';
  const fields: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(values)) {
    if (value === '') {
      if (column === 'eta' && !count) fields[column] = null;
    } else fields[column] = NUMBER_COLUMNS.has(column) && typeof value === 'string' && /^-?\d{1,16}$/.test(value) ? Number(value) : value;
  }
  return fields;
};

/** A feed's record as the row it is: a record the file broke, or that is no object, is an invalid row. */
export const readFeedRecord = (record: FeedRecord, format: FeedFormat): ReadRow => {
  const { row } = record;
  if ('refused' in record) return { row, read: { kind: 'invalid', field: 'the row', message: record.refused } };
  const { fields } = record;
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return { row, read: { kind: 'invalid', field: 'the row', message: 'must be a JSON object' } };
  return readRow(format === 'csv' ? csvFields(fields as Record<string, unknown>) : (fields as Record<string, unknown>), row);
};

/** The row's fields in the domain's words, or why its schema refused it: the first field it names, and what that field accepts. */
export const readRow = (fields: Record<string, unknown>, row: number): ReadRow => {
  if ('on_hand' in fields) {
    const count = placeCountRowSchema.safeParse(fields);
    if (!count.success) return refusedRow(row, count.error.issues);
    const { sku, location, on_hand, counted_at } = count.data;
    return { row, read: { kind: 'place-count', sku, location, onHand: on_hand, countedAt: counted_at } };
  }
  if ('counted_at' in fields) {
    const count = countRowSchema.safeParse(fields);
    if (!count.success) return refusedRow(row, count.error.issues);
    const { ref, qty, counted_at, expected_qty } = count.data;
    return { row, read: { kind: 'count', ref, qty, countedAt: counted_at, ...(expected_qty === undefined ? {} : { expectedQty: expected_qty }) } };
  }
  const batch = batchRowSchema.safeParse(fields);
  if (!batch.success) return refusedRow(row, batch.error.issues);
  const { ref, sku, qty, eta, location, expected_qty } = batch.data;
  const read: ImportRow = { kind: 'batch', ref, sku, qty, eta, ...(location === undefined ? {} : { location }), ...(expected_qty === undefined ? {} : { expectedQty: expected_qty }) };
  return { row, read };
};

interface Issue {
  readonly code: string;
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly keys?: readonly string[];
}

/** The first issue, as a field and what is wrong with it: a key no row takes is named on its own. */
const refusedRow = (row: number, [issue]: readonly Issue[]): ReadRow => {
  if (issue?.code === 'unrecognized_keys' && issue.keys?.[0] !== undefined) return { row, read: { kind: 'invalid', field: issue.keys[0], message: 'is not a field of a row' } };
  const field = issue?.path.map(String).join('.') ?? '';
  return { row, read: { kind: 'invalid', field: field === '' ? 'the row' : field, message: issue?.message ?? 'is not a row' } };
};

/** The value with every object's keys in order: the same row with its fields in another order is the same row. */
const sortedKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])]));
};

/** What the rows are, as sent: a repeat of an import sends the same rows. */
export const rowsDigest = (rows: readonly Record<string, unknown>[]): string => createHash('sha256').update(JSON.stringify(sortedKeys(rows))).digest('base64url');
