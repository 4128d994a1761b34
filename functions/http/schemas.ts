import * as z from 'zod';

/** Bounds from CONTRACT.md. They also keep every key well inside DynamoDB's key-size limits. */
export const MAX_IDENTIFIER_CHARACTERS = 128;
export const MAX_QTY = 1_000_000_000;

/** Control characters, and lone UTF-16 surrogates, which no store can hold as text. */
const CONTROL_OR_LONE_SURROGATE = /[\p{Cc}\p{Cs}]/u;

const identifier = z
  .string()
  .min(1, 'must not be empty')
  // Characters are code points: an emoji counts once, though it takes two UTF-16 units.
  .refine(
    (value) => value.length <= MAX_IDENTIFIER_CHARACTERS || [...value].length <= MAX_IDENTIFIER_CHARACTERS,
    `must be at most ${MAX_IDENTIFIER_CHARACTERS} characters`,
  )
  .refine((value) => !CONTROL_OR_LONE_SURROGATE.test(value), 'must not contain control characters');

const quantity = z
  .number()
  .int('must be a whole number')
  .min(1, 'must be at least 1')
  .max(MAX_QTY, `must be at most ${MAX_QTY}`);

/** `z.iso.date()` checks the calendar too: 2026-02-30 is refused. */
const arrivalDate = z.iso.date('must be a date YYYY-MM-DD').nullable();

/** Unknown fields are dropped, as the contract allows. */
export const orderLineSchema = z.object({ orderid: identifier, sku: identifier, qty: quantity });

export const batchSchema = z.object({ ref: identifier, sku: identifier, qty: quantity, eta: arrivalDate });
