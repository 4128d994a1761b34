import * as z from 'zod/mini';
import { ADJUSTMENT_REASONS } from '../../domain/adjustments';
import { ANY_COUNTRY, MAX_LEAD_DAYS } from '../../domain/promises';
import { MAX_CURSOR_CHARACTERS, MAX_HISTORY_LIMIT, positionOf } from '../../domain/stock-history';
import { MAX_LIST_CURSOR_CHARACTERS, MAX_LIST_LIMIT, listPositionOf } from '../../domain/stock-listings';
import { ASSIGNED_COUNTRY_CODES } from './countries';

/*
 * zod/mini is a fifth of classic zod's bundle and builds its schemas faster at cold start. It ships
 * no messages, and none of zod's is wanted: each schema and check below says, in the service's own
 * words, what its field accepts ("must be an integer from 1 to 1000000000", "is required: ..."), and
 * errors.ts puts the field's name before it. A schema given no message would answer zod's bare
 * "Invalid input": test/unit/handlers.test.ts sends every route bad values of every field to catch one.
 */

/** The message of a value refused by its type, its format or a bound: that it is required when it is missing, and what the field accepts. */
export const refused = (accepts: string) => ({
  error: (issue: { readonly input?: unknown }) => (issue.input === undefined ? `is required: ${accepts}` : `must be ${accepts}`),
});

/**
 * An object of these fields and no other, and the message when the value is not one: a field the
 * route does not take is refused (errors.ts names each), so that a misspelled or misplaced one is
 * not dropped without a word.
 */
export const objectOf = <Shape extends z.core.$ZodLooseShape>(shape: Shape) => z.strictObject(shape, refused(`an object {${Object.keys(shape).join(', ')}}`));

/** The query of a route that takes no query parameter: any one is refused. */
export const noQuerySchema = /* @__PURE__ */ objectOf({});

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

/** What an identifier accepts, short: the rules below each say what they refuse. */
const IDENTIFIER = `an identifier, a string of 1 to ${MAX_IDENTIFIER_CHARACTERS} characters`;

export const identifierSchema = z.string(refused(IDENTIFIER)).check(
  z.minLength(1, { error: 'must not be empty', abort: true }),
  rule(AT_MOST_MAX_CHARACTERS, `must be at most ${MAX_IDENTIFIER_CHARACTERS} characters`),
  rule(NOT_ALL_WHITE_SPACE, 'must not be blank'),
  rule(NO_WHITE_SPACE_AT_EITHER_END, 'must not begin or end with white space'),
  rule(NO_REPLACEMENT_CHARACTER, 'must not contain U+FFFD, the character that stands for bytes that could not be decoded'),
  rule(NO_INVISIBLE_OR_CONTROL, 'must not contain invisible or control characters'),
  inNfc,
);

/**
 * A whole number within bounds. One message for each way to miss them, since it says the whole
 * range: `1e26` breaks both the integer check (past the safe integers) and the upper bound.
 */
export const integerFrom = (least: number, most: number) => {
  const message = refused(`an integer from ${least} to ${most}`);
  return z.number(message).check(z.int(message), z.gte(least, message), z.lte(most, message));
};

export const quantity = integerFrom(1, MAX_QTY);

/** Bounds from docs/api.md, "Routes and bounds": a location's id is short and plain, since it names a place in every batch and, later, every route. */
export const MAX_LOCATION_ID_CHARACTERS = 64;

const LOCATION_ID = `a location id, 1 to ${MAX_LOCATION_ID_CHARACTERS} letters (a-z, A-Z), digits, - and _`;

/** A location's id: one pattern says it all, so the document states it whole. */
export const locationIdSchema = z.string(refused(LOCATION_ID)).check(z.regex(new RegExp(`^[A-Za-z0-9_-]{1,${MAX_LOCATION_ID_CHARACTERS}}$`), refused(LOCATION_ID)));

/**
 * What each path parameter is, by its name in the route keys: an identifier (an id in the URL is the
 * same key as in a body), but `{id}`, which only the locations' routes have, a location's id.
 */
export const pathParameterSchemaOf = (name: string) => (name === 'id' ? locationIdSchema : identifierSchema);

/**
 * A route's path parameters, each checked as pathParameterSchemaOf says. Built once per route, when
 * its handler is made. Not strict: API Gateway, not the caller, names them, after the route's key.
 */
export const pathParametersSchema = (names: readonly string[]) => z.object(Object.fromEntries(names.map((name) => [name, pathParameterSchemaOf(name)])));

/**
 * `GET /skus/{sku}/stock`'s query: `location`, the one location whose stock to read. A location id
 * that is well formed but names no location is the domain's to refuse (LocationNotFound).
 */
export const stockQuerySchema = /* @__PURE__ */ objectOf({ location: /* @__PURE__ */ z.optional(locationIdSchema) });

/**
 * How many entries a page of the history may have: a query parameter, so digits. Built in a function
 * marked pure, as the cursor's are: esbuild keeps a chained call and a template of imports, and
 * only the batches handler reads a history.
 */
export const historyLimitSchema = /* @__PURE__ */ (() => {
  const accepts = refused(`a whole number from 1 to ${MAX_HISTORY_LIMIT}`);
  return z.string(accepts).check(z.regex(/^(100|[1-9][0-9]?)$/, accepts));
})();

const HISTORY_CURSOR = 'the cursor of a page of this history, as the service answered it';
/** A cursor names a change the service wrote: what a client makes up is refused, not read as some other place. */
export const namesAPosition = /* @__PURE__ */ (() => z.refine<string>((cursor) => positionOf(cursor) !== undefined, refused(HISTORY_CURSOR)))();
export const historyCursorSchema = /* @__PURE__ */ (() =>
  z.string(refused(HISTORY_CURSOR)).check(z.regex(new RegExp(`^[A-Za-z0-9_-]{1,${MAX_CURSOR_CHARACTERS}}$`), refused(HISTORY_CURSOR)), namesAPosition))();

/** `GET /skus/{sku}/history`'s query: the one location whose changes to list, how many, and from where. */
export const historyQuerySchema = /* @__PURE__ */ objectOf({
  location: /* @__PURE__ */ z.optional(locationIdSchema),
  limit: /* @__PURE__ */ z.optional(historyLimitSchema),
  cursor: /* @__PURE__ */ z.optional(historyCursorSchema),
});

/** How many SKUs a page of a list may have: a query parameter, so digits, as the history's limit. */
export const listLimitSchema = /* @__PURE__ */ (() => {
  const accepts = refused(`a whole number from 1 to ${MAX_LIST_LIMIT}`);
  return z.string(accepts).check(z.regex(/^(100|[1-9][0-9]?)$/, accepts));
})();

const LIST_CURSOR = 'the cursor of a page of this list, as the service answered it';
/** A cursor names a place in a list the service read: what a client makes up is refused. */
export const namesAListPosition = /* @__PURE__ */ (() => z.refine<string>((cursor) => listPositionOf(cursor) !== undefined, refused(LIST_CURSOR)))();
export const listCursorSchema = /* @__PURE__ */ (() =>
  z.string(refused(LIST_CURSOR)).check(z.regex(new RegExp(`^[A-Za-z0-9_-]{1,${MAX_LIST_CURSOR_CHARACTERS}}$`), refused(LIST_CURSOR)), namesAListPosition))();

/** `GET /skus`' and `GET /locations/{id}/stock`'s query: how many, and from where. */
export const listQuerySchema = /* @__PURE__ */ objectOf({
  limit: /* @__PURE__ */ z.optional(listLimitSchema),
  cursor: /* @__PURE__ */ z.optional(listCursorSchema),
});

/*
 * Each handler uses its own body schemas, and building a schema is a good part of a cold
 * start's own work. `@__PURE__` tells esbuild that a call has no effect beyond its value, so each
 * handler's bundle leaves out the schemas it does not use.
 */

/** `z.iso.date()` checks the calendar too: 2026-02-30 is refused. Its message covers the null it also accepts. */
export const arrivalDateSchema = /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.iso.date(refused('a date YYYY-MM-DD, or null')));

/** `location` absent: the `default` location. A location id that is well formed but names no location is the domain's to refuse (UnknownLocation). */
export const batchFields = {
  ref: identifierSchema,
  sku: identifierSchema,
  qty: quantity,
  eta: arrivalDateSchema,
  location: /* @__PURE__ */ z.optional(locationIdSchema),
};
export const batchSchema = /* @__PURE__ */ objectOf(batchFields);

/** A rule of the whole body: zod's JSON Schema export drops a refinement, so tools/openapi/components.ts writes it into the document. */
export const qtyOrEta = /* @__PURE__ */ z.refine<{ qty?: number; eta?: string | null }>(
  (change) => change.qty !== undefined || change.eta !== undefined,
  { error: 'must have qty or eta, or both' },
);

/** A batch may be emptied (qty 0): its lines then go to other batches, or leave their orders. */
export const batchChangeSchema = /* @__PURE__ */ objectOf({
  qty: /* @__PURE__ */ z.optional(/* @__PURE__ */ integerFrom(0, MAX_QTY)),
  eta: /* @__PURE__ */ z.optional(arrivalDateSchema),
}).check(qtyOrEta);

/**
 * A transfer (docs/api.md, "Transfers"): `qty` of `sku` from location `from` to location `to`, arriving
 * on `eta`, a date (the incoming batch is a shipment). That `from` and `to` are locations that exist,
 * are active and differ is the domain's to say.
 */
export const transferSchema = /* @__PURE__ */ objectOf({
  transferid: identifierSchema,
  sku: identifierSchema,
  qty: quantity,
  from: locationIdSchema,
  to: locationIdSchema,
  eta: /* @__PURE__ */ z.iso.date(refused('a date YYYY-MM-DD')),
});

/** A transaction holds at most 100 items; an order's line takes up to 3 (its put, its batch moved). */
export const MAX_ORDER_LINES = 25;

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

/** Bounds of a location (docs/api.md, "Locations"). */
export const MAX_LOCATION_NAME_CHARACTERS = 128;
export const MAX_LOCATION_PRIORITY = 1_000;
/** A list of every country is the longest that means anything. */
export const MAX_SERVED_COUNTRIES = ASSIGNED_COUNTRY_CODES.length;

/*
 * The location's fields are built by functions, called as pure below: a module-level message or
 * pattern written as a template would stay in every bundle, this one's allocations handler's among
 * them, since esbuild cannot tell that a template's substitution has no effect.
 */

/** A name is shown, not compared: any text but control characters (which would break the lines it is shown on), code points counted. */
const shownName = (most: number) =>
  z.string(refused(`a name, a string of 1 to ${most} characters`)).check(
    z.minLength(1, { error: 'must not be empty', abort: true }),
    rule(new RegExp(`^[\\s\\S]{0,${most}}$`, 'u'), `must be at most ${most} characters`),
    rule(/^\P{Cc}*$/u, 'must not contain control characters'),
  );

/**
 * Each country once: a list that names one twice says the same as one that names it once, and is
 * more likely a mistake. JSON Schema says it with `uniqueItems`, which tools/openapi/components.ts
 * writes for this refinement.
 */
export const eachCountryOnce = /* @__PURE__ */ z.refine<string[]>((codes) => new Set(codes).size === codes.length, {
  error: 'must name each country once',
});

/**
 * A country code that ISO 3166-1 alpha-2 assigns, two capital letters; `also` says what else the
 * field's message should say. A pattern of the codes rather than an enum, so that the list of
 * `serves` fails on the country, as the pattern of two capitals did, and not on the list as a whole.
 */
export const countryCodeOf = (also: string) => {
  const message = refused(`a country code, two capital letters that ISO 3166-1 alpha-2 assigns${also}`);
  return z.string(message).check(z.regex(new RegExp(`^(?:${ASSIGNED_COUNTRY_CODES.join('|')})$`), message));
};

/** Which destinations a location serves: everywhere (`["*"]`), or up to `most` countries, each a code of two capital letters (ISO 3166-1 alpha-2). */
const servedDestinations = (most: number) => {
  const message = refused(`["*"] for every destination, or 1 to ${most} ISO 3166-1 alpha-2 country codes, each once`);
  const countryCode = countryCodeOf('; "*" only alone, as ["*"]');
  return z.union(
    [z.tuple([z.literal('*')], message), z.array(countryCode, message).check(z.minLength(1, message), z.maxLength(most, message), eachCountryOnce)],
    message,
  );
};

/** How long a location takes, by destination country (ISO 3166-1 alpha-2, or `*` for any other): whole days, each country once, as an object's keys are. */
const transitDaysByCountry = () => {
  const message = refused(`an object of days by destination: ISO 3166-1 alpha-2 country codes, or "${ANY_COUNTRY}" for any other, each an integer from 0 to ${MAX_LEAD_DAYS}`);
  const destination = z.string(message).check(z.regex(new RegExp(`^(?:${ASSIGNED_COUNTRY_CODES.join('|')}|\\${ANY_COUNTRY})$`), message));
  return z.record(destination, integerFrom(0, MAX_LEAD_DAYS), message);
};

/** Degrees within bounds, any fraction. */
const degreesFrom = (least: number, most: number) => {
  const message = refused(`a number from ${least} to ${most}`);
  return z.number(message).check(z.gte(least, message), z.lte(most, message));
};

export const position = /* @__PURE__ */ objectOf({ lat: /* @__PURE__ */ degreesFrom(-90, 90), lng: /* @__PURE__ */ degreesFrom(-180, 180) });

/**
 * A location, as `PUT /locations/{id}` replaces it whole: `active` absent is true (the domain's
 * default: a `default` in the document would make generated clients require it), and `position`
 * absent is none (a position stored before is removed). Its id is the path's: an `id` in the body,
 * as `GET` shows it, must be the same (the handler checks).
 */
export const locationSchema = /* @__PURE__ */ objectOf({
  id: /* @__PURE__ */ z.optional(locationIdSchema),
  name: /* @__PURE__ */ shownName(MAX_LOCATION_NAME_CHARACTERS),
  priority: /* @__PURE__ */ integerFrom(0, MAX_LOCATION_PRIORITY),
  serves: /* @__PURE__ */ servedDestinations(MAX_SERVED_COUNTRIES),
  active: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean(/* @__PURE__ */ refused('true or false'))),
  position: /* @__PURE__ */ z.optional(position),
  handling_days: /* @__PURE__ */ z.optional(/* @__PURE__ */ integerFrom(0, MAX_LEAD_DAYS)),
  transit_days: /* @__PURE__ */ z.optional(/* @__PURE__ */ transitDaysByCountry()),
});

const shipmentLinesMessage = /* @__PURE__ */ refused(`an array of 1 to ${MAX_ORDER_LINES} lines {sku, qty}, each sku once`);

/**
 * A shipment (docs/api.md, "Shipments"): units of up to MAX_ORDER_LINES of an order's lines, each SKU
 * once, leaving from `location` (absent: where the order's unshipped units are, when that is one
 * place). That the lines have the units there is the domain's to say.
 */
export const shipmentSchema = /* @__PURE__ */ objectOf({
  shipmentid: identifierSchema,
  orderid: identifierSchema,
  location: /* @__PURE__ */ z.optional(locationIdSchema),
  lines: /* @__PURE__ */ z.array(/* @__PURE__ */ objectOf({ sku: identifierSchema, qty: quantity }), shipmentLinesMessage).check(
    /* @__PURE__ */ z.minLength(1, shipmentLinesMessage),
    /* @__PURE__ */ z.maxLength(MAX_ORDER_LINES, shipmentLinesMessage),
    eachSkuOnce,
  ),
});

/** Bounds of an adjustment's note (docs/api.md, "Adjustments"): a line for a person, not a document. */
export const MAX_NOTE_CHARACTERS = 500;

/** Rules of the whole body that zod's JSON Schema export drops: tools/openapi/components.ts writes them into the document. */
export const qtyOrDelta = /* @__PURE__ */ z.refine<{ qty?: number; delta?: number }>((adjustment) => (adjustment.qty === undefined) !== (adjustment.delta === undefined), {
  error: 'must have qty or delta, not both',
});
export const countedQty = /* @__PURE__ */ z.refine<{ qty?: number; counted_at?: string }>((adjustment) => adjustment.counted_at === undefined || adjustment.qty !== undefined, {
  error: 'must have qty with counted_at: a count says how many units there were',
});

const UNITS_CHANGED = `an integer from -${MAX_QTY} to ${MAX_QTY}, not 0`;
/** A change of none is no change: JSON Schema says it with `not`, which tools/openapi/components.ts writes for this refinement. */
export const notZero = /* @__PURE__ */ z.refine<number>((delta) => delta !== 0, refused(UNITS_CHANGED));

/** A count's time: ISO 8601 with its offset. */
export const countTime = () => z.iso.datetime({ offset: true, ...refused('a date and time, ISO 8601 with its offset (2026-11-25T10:00:00Z)') });

/** A change of the units by so many, never none. */
const unitsChanged = () => {
  const message = refused(UNITS_CHANGED);
  return z.number(message).check(z.int(message), z.gte(-MAX_QTY, message), z.lte(MAX_QTY, message), notZero);
};

/**
 * An adjustment (docs/api.md, "Adjustments"): one batch's units on hand set (`qty`) or changed
 * (`delta`), for a reason; a count's time (`counted_at`, ISO 8601 with its offset) and the qty the
 * caller read (`expected_qty`) are the domain's to judge against the batch.
 */
export const adjustmentSchema = /* @__PURE__ */ objectOf({
  adjustmentid: identifierSchema,
  ref: identifierSchema,
  reason: /* @__PURE__ */ z.enum(ADJUSTMENT_REASONS, refused(`one of ${ADJUSTMENT_REASONS.map((one) => `"${one}"`).join(', ')}`)),
  qty: /* @__PURE__ */ z.optional(/* @__PURE__ */ integerFrom(0, MAX_QTY)),
  delta: /* @__PURE__ */ z.optional(/* @__PURE__ */ unitsChanged()),
  counted_at: /* @__PURE__ */ z.optional(/* @__PURE__ */ countTime()),
  expected_qty: /* @__PURE__ */ z.optional(/* @__PURE__ */ integerFrom(0, MAX_QTY)),
  note: /* @__PURE__ */ z.optional(/* @__PURE__ */ shownName(MAX_NOTE_CHARACTERS)),
}).check(qtyOrDelta, countedQty);

