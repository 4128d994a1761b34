import * as z from 'zod/mini';
import { MAX_INLINE_ROWS, MAX_ROWS_CURSOR_CHARACTERS, rowOfImportRowsCursor } from '../../domain/imports';
import { MAX_QTY, batchFields, countTime, identifierSchema, integerFrom, listLimitSchema, locationIdSchema, objectOf, refused } from './schemas';

/*
 * What the imports' routes take (docs/api.md, "Imports"), built from the fields of the routes whose
 * changes their rows make (./schemas.ts): the request, its rows, and the query of a page of them.
 */

/**
 * An import's rows (docs/api.md, "Imports"): a batch, as POST /add_batch takes one, with the qty the
 * feed read of it; a count of a batch, as POST /adjustments takes one; or a count of a SKU at a
 * place. A row with `on_hand` is a count at a place, one with `counted_at` a count of a batch, any
 * other a batch.
 */
export const batchRowSchema = /* @__PURE__ */ objectOf({
  ...batchFields,
  expected_qty: /* @__PURE__ */ z.optional(/* @__PURE__ */ integerFrom(0, MAX_QTY)),
});
export const countRowSchema = /* @__PURE__ */ objectOf({
  ref: identifierSchema,
  qty: /* @__PURE__ */ integerFrom(0, MAX_QTY),
  counted_at: /* @__PURE__ */ countTime(),
  expected_qty: /* @__PURE__ */ z.optional(/* @__PURE__ */ integerFrom(0, MAX_QTY)),
});

/** A count of a SKU at a place: its units on hand there, spread over its batches in stock there. */
export const placeCountRowSchema = /* @__PURE__ */ objectOf({
  sku: identifierSchema,
  location: locationIdSchema,
  on_hand: /* @__PURE__ */ integerFrom(0, MAX_QTY),
  counted_at: /* @__PURE__ */ countTime(),
});

const INLINE_ROWS = `an array of 1 to ${MAX_INLINE_ROWS} rows, each an object`;

/** An import has its rows inline, or a file of them in a format: one of the two. */
export const rowsOrFile = /* @__PURE__ */ z.refine<{ rows?: unknown; format?: string }>((request) => (request.rows === undefined) !== (request.format === undefined), {
  error: 'must have rows or format, not both: rows sent inline, or the format of a file to upload',
});

/** An import: of rows sent inline, each checked on its own (functions/imports/rows.ts), so that one refused is the import's to count; or of a file to upload. */
export const importSchema = /* @__PURE__ */ objectOf({
  importid: identifierSchema,
  rows: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.array(/* @__PURE__ */ z.record(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.unknown(), refused('an object')), refused(INLINE_ROWS)).check(
      /* @__PURE__ */ z.minLength(1, refused(INLINE_ROWS)),
      /* @__PURE__ */ z.maxLength(MAX_INLINE_ROWS, refused(INLINE_ROWS)),
    ),
  ),
  format: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.enum(['jsonl', 'csv'], refused('"jsonl" or "csv"'))),
  dry_run: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean(refused('true or false'))),
  validate_first: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean(refused('true or false'))),
}).check(rowsOrFile);

const ROWS_CURSOR = "the cursor of a page of this import's rows, as the service answered it";
/** A cursor names a row of a page the service answered: what a client makes up is refused. */
export const namesAnImportRow = /* @__PURE__ */ (() => z.refine<string>((cursor) => rowOfImportRowsCursor(cursor) !== undefined, refused(ROWS_CURSOR)))();
export const importRowsCursorSchema = /* @__PURE__ */ (() =>
  z.string(refused(ROWS_CURSOR)).check(z.regex(new RegExp(`^[A-Za-z0-9_-]{1,${MAX_ROWS_CURSOR_CHARACTERS}}$`), refused(ROWS_CURSOR)), namesAnImportRow))();

/** `GET /imports/{importid}/rows`' query: how many rows, and from where. */
export const importRowsQuerySchema = /* @__PURE__ */ objectOf({
  limit: /* @__PURE__ */ z.optional(listLimitSchema),
  cursor: /* @__PURE__ */ z.optional(importRowsCursorSchema),
});
