import { en } from 'zod/locales';
import * as z from 'zod/mini';

// zod/mini is a fifth of classic zod's bundle and builds its schemas faster at cold start, but it
// ships no messages: the 400 body's issues carry zod's English ones, so load them.
z.config(en());

/** Bounds from CONTRACT.md. They also keep every key well inside DynamoDB's key-size limits. */
const MAX_IDENTIFIER_CHARACTERS = 128;
export const MAX_QTY = 1_000_000_000;

/** Control characters, and lone UTF-16 surrogates, which no store can hold as text. */
const CONTROL_OR_LONE_SURROGATE = /[\p{Cc}\p{Cs}]/u;

const identifier = z.string().check(
  z.minLength(1, 'must not be empty'),
  // Characters are code points: an emoji counts once, though it takes two UTF-16 units.
  z.refine(
    (value) => value.length <= MAX_IDENTIFIER_CHARACTERS || [...value].length <= MAX_IDENTIFIER_CHARACTERS,
    `must be at most ${MAX_IDENTIFIER_CHARACTERS} characters`,
  ),
  z.refine((value) => !CONTROL_OR_LONE_SURROGATE.test(value), 'must not contain control characters'),
);

const quantity = z.number().check(
  z.int('must be a whole number'),
  z.gte(1, 'must be at least 1'),
  z.lte(MAX_QTY, `must be at most ${MAX_QTY}`),
);

/*
 * Each handler uses one of the two body schemas, and building a schema is a good part of a cold
 * start's own work. `@__PURE__` tells esbuild that a call has no effect beyond its value, so each
 * handler's bundle leaves out the schemas it does not use.
 */

/** `z.iso.date()` checks the calendar too: 2026-02-30 is refused. */
const arrivalDate = /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.iso.date('must be a date YYYY-MM-DD'));

/** Unknown fields are dropped, as the contract allows. */
export const orderLineSchema = /* @__PURE__ */ z.object({ orderid: identifier, sku: identifier, qty: quantity });

export const batchSchema = /* @__PURE__ */ z.object({ ref: identifier, sku: identifier, qty: quantity, eta: arrivalDate });
