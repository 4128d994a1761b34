import { en } from 'zod/locales';
import * as z from 'zod/mini';
import { MAX_HOLD_SECONDS } from '../../domain/holds';

// zod/mini is a fifth of classic zod's bundle and builds its schemas faster at cold start, but it
// ships no messages: the 400 body's issues carry zod's English ones, so load them.
z.config(en());

/** Bounds from docs/api.md. They also keep every key well inside DynamoDB's key-size limits. */
export const MAX_IDENTIFIER_CHARACTERS = 128;
export const MAX_QTY = 1_000_000_000;

/*
 * An identifier is a key: two that render the same must not be two orders, and one that looks
 * empty or shows other text than it holds cannot be checked by the person reading it.
 *
 * Each rule that a regular expression can state is one, with the `u` flag (code points, Unicode
 * properties): zod exports a pattern into the API's JSON Schema (docs/openapi.json) as it is, but
 * drops a refinement, so a rule written as a pattern cannot go missing from the document.
 */

/** Characters are code points: an emoji counts once, though it takes two UTF-16 units. */
const AT_MOST_MAX_CHARACTERS = new RegExp(`^[\\s\\S]{0,${MAX_IDENTIFIER_CHARACTERS}}$`, 'u');
const NOT_ALL_WHITE_SPACE = /\P{White_Space}/u;
/** "a" and "a " render the same. */
const NO_WHITE_SPACE_AT_EITHER_END = /^\P{White_Space}(?:[\s\S]*\P{White_Space})?$/u;
/** What a lenient decoder puts for bytes it cannot read: ids that differed there would become one. */
const NO_REPLACEMENT_CHARACTER = /^[^\uFFFD]*$/u;
/**
 * No controls, format characters (zero-width, joiners, byte order and bidirectional marks), lone
 * UTF-16 surrogates (which no store can hold as text), line and paragraph separators, nor any
 * space but U+0020: they look like nothing, like a plain space, or reorder the text around them.
 */
const NO_INVISIBLE_OR_CONTROL = /^(?:[^\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Zs}]| )*$/u;

/** Each rule stops the ones after it, so a field carries one issue: the first rule it breaks. */
const rule = (pattern: RegExp, error: string) => z.regex(pattern, { error, abort: true });

/**
 * Refused rather than normalised, so the id stored is the id the client sent: "é" can be one code
 * point or "e" and a combining accent, and only the first is NFC. No regular expression states
 * NFC, so this is a refinement, which zod's JSON Schema export drops: tools/openapi/components.ts
 * writes it into the document itself, as it does each refinement exported here.
 */
export const inNfc = z.refine<string>((value) => value.normalize('NFC') === value, {
  error: 'must be in Unicode normalization form NFC',
  abort: true,
});

export const identifierSchema = z.string().check(
  z.minLength(1, { error: 'must not be empty', abort: true }),
  rule(AT_MOST_MAX_CHARACTERS, `must be at most ${MAX_IDENTIFIER_CHARACTERS} characters`),
  rule(NOT_ALL_WHITE_SPACE, 'must not be blank'),
  rule(NO_WHITE_SPACE_AT_EITHER_END, 'must not begin or end with white space'),
  rule(NO_REPLACEMENT_CHARACTER, 'must not contain U+FFFD, the character that stands for bytes that could not be decoded'),
  rule(NO_INVISIBLE_OR_CONTROL, 'must not contain invisible or control characters'),
  inNfc,
);

const quantityFrom = (least: number) =>
  z.number().check(z.int('must be a whole number'), z.gte(least, `must be at least ${least}`), z.lte(MAX_QTY, `must be at most ${MAX_QTY}`));

const quantity = quantityFrom(1);

/**
 * A route's path parameters, each an identifier: an id in the URL is the same key as in a body. Built
 * once per route, when its handler is made.
 */
export const pathParametersSchema = (names: readonly string[]) =>
  z.object(Object.fromEntries(names.map((name) => [name, identifierSchema])));

/*
 * Each handler uses its own body schemas, and building a schema is a good part of a cold
 * start's own work. `@__PURE__` tells esbuild that a call has no effect beyond its value, so each
 * handler's bundle leaves out the schemas it does not use.
 */

/** `z.iso.date()` checks the calendar too: 2026-02-30 is refused. */
export const arrivalDateSchema = /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.iso.date('must be a date YYYY-MM-DD'));

/** Unknown fields are dropped, as the contract allows. */
export const orderLineSchema = /* @__PURE__ */ z.object({ orderid: identifierSchema, sku: identifierSchema, qty: quantity });

export const batchSchema = /* @__PURE__ */ z.object({ ref: identifierSchema, sku: identifierSchema, qty: quantity, eta: arrivalDateSchema });

/** A rule of the whole body: zod's JSON Schema export drops a refinement, so tools/openapi/components.ts writes it into the document. */
export const qtyOrEta = /* @__PURE__ */ z.refine<{ qty?: number; eta?: string | null }>(
  (change) => change.qty !== undefined || change.eta !== undefined,
  { error: 'must have qty or eta, or both' },
);

/** A batch may be emptied (qty 0): its lines then go to other batches, or leave their orders. */
export const batchChangeSchema = /* @__PURE__ */ z
  .object({ qty: /* @__PURE__ */ z.optional(/* @__PURE__ */ quantityFrom(0)), eta: /* @__PURE__ */ z.optional(arrivalDateSchema) })
  .check(qtyOrEta);

/** A transaction holds at most 100 items; an order's line takes up to 3 (its put, its batch moved). */
const MAX_ORDER_LINES = 25;

/**
 * Each SKU once: an order's line is (orderid, sku), and two lines of one SKU would be one line twice.
 * JSON Schema cannot say it (`uniqueItems` compares whole lines), so tools/openapi/components.ts
 * writes it into the document itself.
 */
export const eachSkuOnce = /* @__PURE__ */ z.superRefine((lines: readonly { sku: string }[], context) => {
  const seen = new Set<string>();
  lines.forEach(({ sku }, index) => {
    if (seen.has(sku)) context.addIssue({ code: 'custom', message: 'must not repeat the sku of an earlier line', path: [index, 'sku'], input: sku });
    seen.add(sku);
  });
});

const orderLines = /* @__PURE__ */ z.array(/* @__PURE__ */ z.object({ sku: identifierSchema, qty: quantity })).check(
  /* @__PURE__ */ z.minLength(1, 'must have at least 1 line'),
  /* @__PURE__ */ z.maxLength(MAX_ORDER_LINES, `must have at most ${MAX_ORDER_LINES} lines`),
  eachSkuOnce,
);

export const orderSchema = /* @__PURE__ */ z.object({ orderid: identifierSchema, lines: orderLines });

/** How long a hold lasts, from now: a day at most (domain/holds.ts). */
const holdSeconds = /* @__PURE__ */ z
  .number()
  .check(
    /* @__PURE__ */ z.int('must be a whole number'),
    /* @__PURE__ */ z.gte(1, 'must be at least 1'),
    /* @__PURE__ */ z.lte(MAX_HOLD_SECONDS, `must be at most ${MAX_HOLD_SECONDS}`),
  );

/** A hold's lines are an order's: 1 to 25, each SKU once. `ttlSeconds` defaults to DEFAULT_HOLD_SECONDS. */
export const holdSchema = /* @__PURE__ */ z.object({ holdid: identifierSchema, lines: orderLines, ttlSeconds: /* @__PURE__ */ z.optional(holdSeconds) });

export const holdExtensionSchema = /* @__PURE__ */ z.object({ ttlSeconds: holdSeconds });

export const holdConfirmationSchema = /* @__PURE__ */ z.object({ orderid: identifierSchema });
