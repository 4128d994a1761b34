import type { ValidateFunction } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type * as z from 'zod/mini';
import { pathParameterNames, routeKeys, splitRouteKey } from '../../functions/http/route-keys';
import { orderLineSchema, orderSchema } from '../../functions/http/order-schemas';
import { MAX_QTY, batchChangeSchema, batchSchema, locationSchema, pathParametersSchema, stockQuerySchema } from '../../functions/http/schemas';
import { openApiText } from '../../tools/openapi';
import { documentValidators } from '../../tools/openapi/validation';
import { seedOr } from '../reliability/support/seed';

/*
 * zod's JSON Schema export drops refinements without a word: this proves that the generated
 * document, compiled by ajv with its two extensions, accepts exactly what the handlers' zod schemas
 * accept, for every request body and every path parameter, over inputs drawn at every rule's edge.
 */

const SEED = seedOr(13_2026);
const BODY_RUNS = 5_000;
const PARAMETER_RUNS = 2_000;

/** What each route's handler parses its body with (functions/batches.ts, functions/allocations.ts). */
const BODY_SCHEMAS = {
  'POST /add_batch': batchSchema,
  'PATCH /batches/{ref}': batchChangeSchema,
  'POST /allocate': orderLineSchema,
  'POST /orders': orderSchema,
  'PUT /locations/{id}': locationSchema,
} as const satisfies Record<string, z.ZodMiniType>;

const validators = documentValidators(JSON.parse(openApiText()));

const documentSchemaAt = (...segments: string[]) => {
  const validate = validators.schemaAt(...segments);
  if (!validate) throw new Error(`docs/openapi.json has no schema at ${segments.join(' ')}`);
  return validate;
};

/** Code points every identifier rule allows, U+0020 among them (but not at an end). */
const ALLOWED = ['a', 'Z', '7', '-', '_', '.', '#', '/', '%', ' ', 'é', 'À', 'ß', 'я', 'а', '注', '가', 'Å', 'Ω', '😀', '📦', '\uE000', '🇫'];
/**
 * Near every rule: white space of every kind, controls, format characters, separators, U+FFFD,
 * lone surrogates, noncharacters, and text that is not NFC (a combining accent, the Angstrom and
 * Ohm signs, Hangul jamo, a musical symbol NFC decomposes), some allowed, most not.
 */
const TRICKY = [
  '\t', '\n', '\r', '\u000B', '\u000C', '\u0000', '\u001F', '\u007F', '\u0080', '\u0085', '\u009F',
  '\u00A0', '\u1680', '\u2000', '\u2007', '\u200A', '\u202F', '\u205F', '\u3000',
  '\u00AD', '\u061C', '\u180E', '\u200B', '\u200C', '\u200D', '\u200E', '\u200F', '\u202A', '\u202E', '\u2060', '\u2066', '\uFEFF', '\u{E0001}',
  '\u2028', '\u2029', '\uFFFD', '\uFFFE', '\uFFFF', '\u{10FFFF}',
  '\uD800', '\uDBFF', '\uDC00', '\uDFFF',
  '\u0301', 'e\u0301', 'A\u030A', '\u212B', '\u2126', '\u1100', '\u1161', '\u1100\u1161', '\u{1D15E}', '👩\u200D💻',
];

const piece = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...ALLOWED) }, { weight: 3, arbitrary: fc.constantFrom(...TRICKY) }, { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) });
const joined = (pieces: readonly string[]) => pieces.join('');

/** 126 to 131 code points of one kind (an emoji counts once, though it is two UTF-16 units), a few of them replaced. */
const nearTheLengthBound = fc
  .record({
    length: fc.integer({ min: 126, max: 131 }),
    filler: fc.constantFrom('x', '😀', 'é', '注'),
    edits: fc.array(fc.tuple(fc.oneof(fc.constant(0), fc.constant(-1), fc.nat()), piece), { maxLength: 2 }),
  })
  .map(({ length, filler, edits }) => {
    const codePoints: string[] = Array.from({ length }, () => filler);
    for (const [at, replacement] of edits) codePoints[at < 0 ? length - 1 : at % length] = replacement;
    return joined(codePoints);
  });

const notAString = fc.oneof(
  fc.constantFrom(null, true, false, 0, 1, -1, 1.5, [], {}, ['LAMP'], { sku: 'LAMP' }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

const identifier = fc.oneof(
  { weight: 4, arbitrary: fc.array(piece, { maxLength: 6 }).map(joined) },
  // Something at each end, where the white space rule looks.
  { weight: 2, arbitrary: fc.tuple(piece, fc.array(piece, { maxLength: 4 }).map(joined), piece).map(joined) },
  { weight: 2, arbitrary: nearTheLengthBound },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-composite', maxLength: 10 }) },
  { weight: 1, arbitrary: notAString },
);

/** An identifier every rule allows: visible at both ends, 1 to 128 code points. */
const VISIBLE = ALLOWED.filter((codePoint) => codePoint !== ' ');
const validIdentifier = fc.oneof(
  fc.constantFrom(...VISIBLE),
  fc.tuple(fc.constantFrom(...VISIBLE), fc.array(fc.constantFrom(...ALLOWED), { maxLength: 8 }).map(joined), fc.constantFrom(...VISIBLE)).map(joined),
  fc.constantFrom('x'.repeat(128), '😀'.repeat(128)),
);

const quantity = (least: number) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(least - 1, least, least + 1, MAX_QTY - 1, MAX_QTY, MAX_QTY + 1, -0, 0.5, 1.5, MAX_QTY - 0.5, MAX_QTY + 0.5, 2 ** 53, 1e21, 5e-324) },
    { weight: 2, arbitrary: fc.integer({ min: -3, max: 5 }) },
    { weight: 1, arbitrary: fc.integer({ min: MAX_QTY - 3, max: MAX_QTY + 3 }) },
    { weight: 1, arbitrary: fc.integer() },
    { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
    { weight: 1, arbitrary: fc.constantFrom('1', '10', '', null, true, [], {}, [1]) },
  );

const validQuantity = (least: number) => fc.oneof(fc.constantFrom(least, MAX_QTY), fc.integer({ min: least, max: MAX_QTY }));

const pad = (value: number, width: number) => String(value).padStart(width, '0');

const calendarDate = fc.date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true }).map((date) => date.toISOString().slice(0, 10));

const eta = fc.oneof(
  { weight: 2, arbitrary: fc.constant(null) },
  // Real dates, the leap days of years divisible by 4, 100 and 400 among them.
  { weight: 2, arbitrary: calendarDate },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(0, 4, 100, 400, 1900, 2000, 2024, 2026, 2028, 2100, 2400, 9996, 9999), fc.constantFrom('02-28', '02-29', '02-30', '04-31', '12-31', '13-01', '00-10', '01-00', '01-32'))
      .map(([year, monthDay]) => `${pad(year, 4)}-${monthDay}`),
  },
  // Any digits in the shape YYYY-MM-DD: the calendar decides.
  { weight: 2, arbitrary: fc.tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 19 }), fc.integer({ min: 0, max: 39 })).map(([y, m, d]) => `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('2026-1-01', '2026-01-1', '26-01-01', '2026/01/01', '20260101', '2026-01-01T00:00:00Z', ' 2026-01-01', '2026-01-01 ', '2026-01-01\n', '+002026-01-01', '-002026-01-01', '２０２６-01-01', '٢٠٢٦-01-01', '', 'tomorrow'),
  },
  { weight: 1, arbitrary: notAString },
);

const validEta = fc.oneof(fc.constant(null), calendarDate);

/** Keys a careless merge or a typo brings; `__proto__` is an own key in a parsed body, as here. */
const extraKey = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'note', 'QTY', 'qty ', 'ref', 'sku', 'eta', 'lines', 'orderid'), fc.string({ maxLength: 5 }));

/**
 * An object as JSON.parse makes one: own keys only. Each field present (drawn by `fields`) or
 * missing, and a few extra keys, which stand in for a missing field of the same name.
 */
const objectOf = (fields: Record<string, fc.Arbitrary<unknown>>, absentOneIn = 6) =>
  fc
    .record({
      present: fc.record(Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, fc.option(value, { freq: absentOneIn, nil: undefined })]))),
      extra: fc.array(fc.tuple(extraKey, fc.jsonValue({ maxDepth: 2 })), { maxLength: 3 }),
    })
    .map(({ present, extra }) => Object.fromEntries([...extra, ...Object.entries(present).filter(([, value]) => value !== undefined)]));

const notAnObject = fc.oneof(fc.constantFrom(null, 'allocate', 42, true, []), fc.jsonValue({ maxDepth: 2 }).filter((value) => typeof value !== 'object' || value === null || Array.isArray(value)));

interface Field {
  /** Values the field's rules allow. */
  readonly valid: fc.Arbitrary<unknown>;
  /** Values near and across its rules, any type. */
  readonly drawn: fc.Arbitrary<unknown>;
}

/**
 * A body of the route's fields: each valid (accepted, unless two lines share a SKU), all valid but
 * one (the sharpest test of each rule), or each drawn anyhow, missing sometimes, with extra keys;
 * sometimes no object at all.
 */
const bodyOf = (fields: Record<string, Field>, absentOneIn?: number) => {
  const each = (pick: (field: Field) => fc.Arbitrary<unknown>) => Object.fromEntries(Object.entries(fields).map(([name, field]) => [name, pick(field)]));
  const valid = fc.record(each(({ valid }) => valid));
  const allButOne = fc
    .tuple(valid, fc.constantFrom(...Object.entries(fields)))
    .chain(([body, [name, { drawn }]]) =>
      fc.option(drawn, { freq: 8, nil: undefined }).map((value) => {
        const { [name]: _, ...others } = body;
        return value === undefined ? others : { ...others, [name]: value };
      }),
    );
  return fc.oneof(
    { weight: 3, arbitrary: valid },
    { weight: 4, arbitrary: allButOne },
    { weight: 3, arbitrary: objectOf(each(({ drawn }) => drawn), absentOneIn) },
    { weight: 1, arbitrary: fc.oneof(notAnObject, fc.array(valid, { maxLength: 2 })) },
  );
};

/** Few SKUs, so lines often repeat one; "lamp" and "LAMP" are two. */
const lineSku = fc.oneof({ weight: 4, arbitrary: fc.constantFrom('LAMP', 'lamp', 'SOFA', 'Å', '📦') }, { weight: 1, arbitrary: identifier });
const line = fc.oneof({ weight: 9, arbitrary: objectOf({ sku: lineSku, qty: quantity(1) }, 12) }, { weight: 1, arbitrary: notAnObject });

/** `count` lines of distinct SKUs, then maybe one SKU repeated and one line spoiled: up to and past the bounds. */
const manyLines = fc
  .record({ count: fc.integer({ min: 0, max: 27 }), repeat: fc.option(fc.tuple(fc.nat(), fc.nat())), spoil: fc.option(fc.tuple(fc.nat(), line)) })
  .map(({ count, repeat, spoil }) => {
    const lines: unknown[] = Array.from({ length: count }, (_, index) => ({ sku: `SKU-${index}`, qty: 1 }));
    if (repeat && count > 1) {
      const [from, to] = [repeat[0] % count, repeat[1] % count];
      lines[to] = { sku: `SKU-${from}`, qty: 2 };
    }
    if (spoil && count > 0) lines[spoil[0] % count] = spoil[1];
    return lines;
  });

const lines = fc.oneof(
  { weight: 4, arbitrary: fc.array(line, { maxLength: 4 }) },
  { weight: 3, arbitrary: manyLines },
  { weight: 1, arbitrary: fc.oneof(notAnObject.filter((value) => !Array.isArray(value)), objectOf({ sku: lineSku, qty: quantity(1) })) },
);

/** Lines of distinct SKUs, from one to the most an order takes. */
const validLines = fc.uniqueArray(fc.record({ sku: validIdentifier, qty: validQuantity(1) }), { minLength: 1, maxLength: 25, selector: ({ sku }) => sku });

/** A location id every rule allows: letters, digits, `-` and `_`, 1 to 64 of them. */
const LOCATION_ID_CHARACTERS = ['a', 'Z', '7', '-', '_'];
const validLocationId = fc.oneof(
  fc.array(fc.constantFrom(...LOCATION_ID_CHARACTERS), { minLength: 1, maxLength: 8 }).map(joined),
  fc.constantFrom('default', 'x'.repeat(64)),
);
/** Near each of its rules: a character of an identifier's that a location id refuses, the length bound, and anything. */
const locationId = fc.oneof(
  { weight: 4, arbitrary: validLocationId },
  { weight: 2, arbitrary: fc.tuple(validLocationId, piece, validLocationId).map(joined) },
  { weight: 1, arbitrary: fc.integer({ min: 62, max: 66 }).map((length) => 'x'.repeat(length)) },
  { weight: 2, arbitrary: identifier },
);

/** Any text a name may hold and the control characters it may not, near its length bound too. */
const NAME_PIECES = [...ALLOWED, '\t', '\n', '\u0000', '\u007F', '\u0085', '\u200B', '\u00A0', '\uD800'];
const validName = fc.oneof(fc.array(fc.constantFrom(...ALLOWED), { minLength: 1, maxLength: 10 }).map(joined), fc.constantFrom('x'.repeat(128), '😀'.repeat(128)));
const locationName = fc.oneof(
  { weight: 4, arbitrary: fc.array(fc.constantFrom(...NAME_PIECES), { maxLength: 8 }).map(joined) },
  { weight: 2, arbitrary: nearTheLengthBound },
  { weight: 1, arbitrary: notAString },
);

const priority = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(-1, 0, 1, 999, 1000, 1001, -0, 0.5, 999.5, 2 ** 53) },
  { weight: 2, arbitrary: fc.integer({ min: -3, max: 1003 }) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: fc.constantFrom('1', '', null, true, [], {}) },
);

/** Country codes, a few, so that lists often repeat one; in the wrong case and shape too. */
const COUNTRIES = ['FR', 'BE', 'DE', 'CH', 'US'];
const countryLike = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...COUNTRIES) }, { weight: 2, arbitrary: fc.constantFrom('*', 'fr', 'F', 'FRA', '', ' FR', 'É1', '**') }, { weight: 1, arbitrary: notAString });
const validServes = fc.oneof(
  fc.constant(['*']),
  fc.uniqueArray(fc.constantFrom(...COUNTRIES), { minLength: 1, maxLength: 5 }),
  fc.constant(Array.from({ length: 250 }, (_, n) => String.fromCharCode(65 + Math.floor(n / 26), 65 + (n % 26)))),
);
const serves = fc.oneof(
  { weight: 4, arbitrary: fc.array(countryLike, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.integer({ min: 249, max: 252 }).map((length) => Array.from({ length }, (_, n) => String.fromCharCode(65 + Math.floor(n / 26) % 26, 65 + (n % 26)))) },
  { weight: 1, arbitrary: fc.oneof(notAnObject.filter((value) => !Array.isArray(value)), fc.constant('*')) },
);

const degrees = (bound: number) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.double({ min: -bound - 1, max: bound + 1, noNaN: true }) },
    { weight: 2, arbitrary: fc.constantFrom(-bound, bound, -bound - 0.001, bound + 0.001, 0, -0) },
    { weight: 1, arbitrary: fc.constantFrom('1', null, true, []) },
  );
const validPosition = fc.record({ lat: fc.double({ min: -90, max: 90, noNaN: true }), lng: fc.double({ min: -180, max: 180, noNaN: true }) });
const position = fc.oneof({ weight: 4, arbitrary: objectOf({ lat: degrees(90), lng: degrees(180) }, 8) }, { weight: 1, arbitrary: notAnObject });

const identifierField: Field = { valid: validIdentifier, drawn: identifier };
const quantityField = (least: number): Field => ({ valid: validQuantity(least), drawn: quantity(least) });
const etaField: Field = { valid: validEta, drawn: eta };

const BODIES: { readonly [RouteKey in keyof typeof BODY_SCHEMAS]: fc.Arbitrary<unknown> } = {
  'POST /add_batch': bodyOf({ ref: identifierField, sku: identifierField, qty: quantityField(1), eta: etaField, location: { valid: validLocationId, drawn: locationId } }),
  // Each field missing one time in three: often neither.
  'PATCH /batches/{ref}': bodyOf({ qty: quantityField(0), eta: etaField }, 3),
  'POST /allocate': bodyOf({ orderid: identifierField, sku: identifierField, qty: quantityField(1) }),
  'POST /orders': bodyOf({ orderid: identifierField, lines: { valid: validLines, drawn: lines } }),
  'PUT /locations/{id}': bodyOf({
    name: { valid: validName, drawn: locationName },
    priority: { valid: fc.integer({ min: 0, max: 1000 }), drawn: priority },
    serves: { valid: validServes, drawn: serves },
    active: { valid: fc.boolean(), drawn: fc.oneof(fc.boolean(), fc.constantFrom('true', 1, 0, null, [])) },
    position: { valid: validPosition, drawn: position },
  }),
};

/** The cases the contract names, tried first on every route they concern, whatever the seed draws. */
const NAMED_IDENTIFIERS = [
  '', ' ', '\u3000', 'LAMP ', ' LAMP', 'LAMP\u00A0', '\u3000LAMP', 'LA\tMP', 'LA\u200BMP', 'LA\u202EMP', '\uFEFFLAMP', 'LA\u200DMP',
  'LA\u2028MP', 'LAMP\uFFFD', 'LAMP\uD800', '\uDC00LAMP', 'cafe\u0301', 'café', 'LAMPE À POSER', 'x'.repeat(128), 'x'.repeat(129),
  '😀'.repeat(128), '😀'.repeat(129), '👩\u200D💻', null, 42,
];
const NAMED_DATES = ['2026-02-29', '2028-02-29', '2026-13-01', '2026-1-01', '2026-02-30', null];
const NAMED_QUANTITIES = [0, 1, MAX_QTY, MAX_QTY + 1, 2.5, '10', null];
const distinctLines = (count: number) => Array.from({ length: count }, (_, index) => ({ sku: `SKU-${index}`, qty: 1 }));
const NAMED_BODIES: { readonly [RouteKey in keyof typeof BODY_SCHEMAS]: readonly unknown[] } = {
  'POST /add_batch': [
    ...NAMED_IDENTIFIERS.map((ref) => ({ ref, sku: 'LAMP', qty: 1, eta: null })),
    ...NAMED_DATES.map((date) => ({ ref: 'b', sku: 'LAMP', qty: 1, eta: date })),
    ...NAMED_QUANTITIES.map((qty) => ({ ref: 'b', sku: 'LAMP', qty, eta: null })),
    { ref: 'b', sku: 'LAMP', qty: 1, eta: null, note: 'extra' },
    { ref: 'b', sku: 'LAMP', qty: 1 },
    ...['default', 'lyon_2', 'x'.repeat(64), 'x'.repeat(65), '', 'lyon 2', 'lyön', null].map((location) => ({ ref: 'b', sku: 'LAMP', qty: 1, eta: null, location })),
  ],
  'PATCH /batches/{ref}': [{}, { ref: 'b' }, { qty: 0 }, { qty: -1 }, { qty: null }, { eta: null }, { qty: 5, eta: '2028-02-29' }, ...NAMED_DATES.map((date) => ({ eta: date }))],
  'POST /allocate': [
    ...NAMED_IDENTIFIERS.map((orderid) => ({ orderid, sku: 'LAMP', qty: 1 })),
    ...NAMED_QUANTITIES.map((qty) => ({ orderid: 'o', sku: 'LAMP', qty })),
    { sku: 'LAMP', qty: 1 },
    [],
    'allocate',
  ],
  'POST /orders': [
    { orderid: 'o', lines: [] },
    { orderid: 'o', lines: distinctLines(1) },
    { orderid: 'o', lines: distinctLines(25) },
    { orderid: 'o', lines: distinctLines(26) },
    { orderid: 'o', lines: [{ sku: 'LAMP', qty: 1 }, { sku: 'LAMP', qty: 2 }] },
    { orderid: 'o', lines: [{ sku: 'LAMP', qty: 1 }, { sku: 'lamp', qty: 1 }] },
    { orderid: 'o', lines: [{ sku: 'LAMP', qty: 1 }, { sku: 'LAMP', qty: 1 }] },
    { orderid: 'o', lines: [{ sku: 'Å', qty: 1 }, { sku: '\u212B', qty: 1 }] },
    { orderid: 'o', lines: [{ sku: 'LAMP', qty: 0 }] },
    { orderid: 'o', lines: { sku: 'LAMP', qty: 1 } },
    { orderid: 'o' },
  ],
  'PUT /locations/{id}': [
    { name: 'Lyon', priority: 0, serves: ['*'] },
    { name: 'Lyon', priority: 1000, serves: ['FR'], active: false, position: { lat: 90, lng: -180 } },
    { name: 'Lyon', priority: 1001, serves: ['FR'] },
    { name: '', priority: 1, serves: ['FR'] },
    { name: 'x'.repeat(129), priority: 1, serves: ['FR'] },
    { name: 'Lyon\n', priority: 1, serves: ['FR'] },
    { name: 'Lyon', priority: 1, serves: [] },
    { name: 'Lyon', priority: 1, serves: ['*', 'FR'] },
    { name: 'Lyon', priority: 1, serves: ['*', '*'] },
    { name: 'Lyon', priority: 1, serves: ['FR', 'FR'] },
    { name: 'Lyon', priority: 1, serves: ['fr'] },
    { name: 'Lyon', priority: 1, serves: '*' },
    { name: 'Lyon', priority: 1, serves: ['FR'], active: 'true' },
    { name: 'Lyon', priority: 1, serves: ['FR'], position: { lat: 91, lng: 0 } },
    { name: 'Lyon', priority: 1, serves: ['FR'], position: { lat: 0 } },
    { name: 'Lyon', priority: 1, serves: ['FR'], position: null },
  ],
};

/**
 * Draws `runs` values and holds that zod and the document accept and refuse the same ones; returns
 * the share accepted, so a caller can see that the draws fall on both sides of the rules.
 */
const agreement = (zodAccepts: (value: unknown) => boolean, validate: ValidateFunction, values: fc.Arbitrary<unknown>, runs: number, named: readonly unknown[]) => {
  let accepted = 0;
  let drawn = 0;
  fc.assert(
    fc.property(values, (value) => {
      const byZod = zodAccepts(value);
      const byDocument = validate(value) as boolean;
      drawn += 1;
      if (byZod) accepted += 1;
      const verdict = (accepts: boolean) => (accepts ? 'accepts' : 'refuses');
      expect(byDocument, `zod ${verdict(byZod)} ${fc.stringify(value)}, the document ${verdict(byDocument)} it: ${validators.errorsText(validate)}`).toBe(byZod);
    }),
    { seed: SEED, numRuns: runs, examples: named.map((value) => [value]) },
  );
  return accepted / drawn;
};

/** Both sides of the rules, each often: neither a pass of refusals only, nor of valid values only. */
const expectBothSides = (acceptedShare: number) => {
  expect(acceptedShare).toBeGreaterThan(0.1);
  expect(acceptedShare).toBeLessThan(0.9);
};

describe(`the generated document and the zod schemas accept the same requests (seed ${SEED})`, () => {
  it.each(Object.keys(BODY_SCHEMAS) as (keyof typeof BODY_SCHEMAS)[])(`%s: the same bodies, over ${BODY_RUNS} drawn near every bound`, (routeKey) => {
    const { method, path } = splitRouteKey(routeKey);
    const validate = documentSchemaAt('paths', path, method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema');
    const schema: z.ZodMiniType = BODY_SCHEMAS[routeKey];
    expectBothSides(agreement((value) => schema.safeParse(value).success, validate, BODIES[routeKey], BODY_RUNS, NAMED_BODIES[routeKey]));
  });

  const parameters = [...routeKeys.batches, ...routeKeys.allocations].flatMap((routeKey) =>
    pathParameterNames(splitRouteKey(routeKey).path).map((name) => [routeKey, name] as const),
  );

  it.each(parameters)(`%s: the same {%s}, over ${PARAMETER_RUNS} drawn near every identifier rule`, (routeKey, name) => {
    const names = pathParameterNames(splitRouteKey(routeKey).path);
    const others = Object.fromEntries(names.map((other) => [other, 'x']));
    // As route.ts checks a route's parameters: all at once, here all valid but the one drawn.
    const schema = pathParametersSchema(names);
    const validate = documentSchemaAt('paths', splitRouteKey(routeKey).path, 'parameters', String(names.indexOf(name)), 'schema');
    // `{id}` is a location's id, drawn near its own rules (functions/http/schemas.ts, pathParameterSchemaOf).
    const drawn = name === 'id' ? locationId : identifier;
    expectBothSides(agreement((value) => schema.safeParse({ ...others, [name]: value }).success, validate, drawn, PARAMETER_RUNS, NAMED_IDENTIFIERS));
  });

  it(`GET /skus/{sku}/stock: the same ?location=, over ${PARAMETER_RUNS} drawn near a location id's rules`, () => {
    const parameters = documentSchemaAt('paths', '/skus/{sku}/stock', 'get', 'parameters', '0', 'schema');
    expectBothSides(agreement((value) => stockQuerySchema.safeParse({ location: value }).success, parameters, locationId, PARAMETER_RUNS, NAMED_IDENTIFIERS));
  });
});
