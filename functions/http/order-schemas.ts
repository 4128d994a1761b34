import * as z from 'zod/mini';
import { MAX_HOLD_SECONDS } from '../../domain/holds';
import type { Split } from '../../domain/model';
import { MAX_ORDER_LINES, countryCodeOf, eachSkuOnce, identifierSchema, integerFrom, locationIdSchema, objectOf, position, quantity, refused } from './schemas';

/*
 * The bodies of the allocations function's routes (docs/api.md): a line, a whole order, a cart to
 * promise and a hold, each with the lines, the routing (`destination`, `location`) and the `split`
 * they share, and a hold's extension and confirmation. As schemas.ts's, each field says in the
 * service's own words what it accepts.
 */

/** How far a line may be split over batches (domain/split-lines.ts): `none` when absent. */
const SPLITS = ['none', 'batches', 'locations'] as const satisfies readonly Split[];

const split = /* @__PURE__ */ z.optional(/* @__PURE__ */ z.enum(SPLITS, refused(`one of ${SPLITS.map((one) => `"${one}"`).join(', ')}`)));

const orderLinesMessage = /* @__PURE__ */ refused(`an array of 1 to ${MAX_ORDER_LINES} lines {sku, qty}, each sku once`);

/** An order's lines (or a hold's), 1 to MAX_ORDER_LINES, each SKU once, each of which may allow a split of its own. */
const orderLines = /* @__PURE__ */ z.array(/* @__PURE__ */ objectOf({ sku: identifierSchema, qty: quantity, split }), orderLinesMessage).check(
  /* @__PURE__ */ z.minLength(1, orderLinesMessage),
  /* @__PURE__ */ z.maxLength(MAX_ORDER_LINES, orderLinesMessage),
  eachSkuOnce,
);

/** How long a hold lasts, from now: a day at most (domain/holds.ts). */
const holdSeconds = /* @__PURE__ */ integerFrom(1, MAX_HOLD_SECONDS);

export const holdExtensionSchema = /* @__PURE__ */ objectOf({ ttl_seconds: holdSeconds });

export const holdConfirmationSchema = /* @__PURE__ */ objectOf({ orderid: identifierSchema });

/**
 * Where an order's goods go (domain/routing.ts): a country, which limits the locations to those that
 * serve it, and the point they go to, when known, for the distance that ranks locations of one priority.
 */
const destination = /* @__PURE__ */ objectOf({ country: /* @__PURE__ */ countryCodeOf(''), position: /* @__PURE__ */ z.optional(position) });


/**
 * `destination` and `location` (a location's id: the one place the line is taken from) are optional,
 * and each limits the locations the line may come from. A location id that is well formed but names
 * no location is the domain's to refuse (UnknownLocation).
 */
export const orderLineSchema = /* @__PURE__ */ objectOf({
  orderid: identifierSchema,
  sku: identifierSchema,
  qty: quantity,
  destination: /* @__PURE__ */ z.optional(destination),
  location: /* @__PURE__ */ z.optional(locationIdSchema),
  split,
});

/**
 * A whole order: `destination` and `location` limit where every line may come from, as a single
 * line's do; `split` is how far each line may be split that does not say so itself.
 */
export const orderSchema = /* @__PURE__ */ objectOf({
  orderid: identifierSchema,
  lines: orderLines,
  destination: /* @__PURE__ */ z.optional(destination),
  location: /* @__PURE__ */ z.optional(locationIdSchema),
  split,
});

/** A cart to promise (docs/api.md, "Promises"): an order's lines, routing and split, with no orderid, since nothing is recorded. */
export const cartSchema = /* @__PURE__ */ objectOf({
  lines: orderLines,
  destination: /* @__PURE__ */ z.optional(destination),
  location: /* @__PURE__ */ z.optional(locationIdSchema),
  split,
});

/**
 * A hold's lines are an order's: 1 to 25, each SKU once, and `destination`, `location` and `split`
 * say where they may come from, as an order's do. `ttl_seconds` defaults to DEFAULT_HOLD_SECONDS.
 */
export const holdSchema = /* @__PURE__ */ objectOf({
  holdid: identifierSchema,
  lines: orderLines,
  ttl_seconds: /* @__PURE__ */ z.optional(holdSeconds),
  destination: /* @__PURE__ */ z.optional(destination),
  location: /* @__PURE__ */ z.optional(locationIdSchema),
  split,
});
