import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BatchRepository } from '../../domain/ports';
import { createAllocationsHandler } from '../../functions/allocations';
import { createBatchesHandler } from '../../functions/batches';
import type { HttpEvent } from '../../functions/http/route';
import { routeKeys } from '../../functions/http/route-keys';
import { checkInvariants } from '../../tools/invariants';
import { type ModelledTable, createModelledTable } from '../support/conflict-model';
import { lambdaContext, postEvent, routeEvent, withBytes } from '../support/events';
import { muteTelemetry } from '../support/telemetry';
import { seedOr } from './support/seed';
import type { Answer } from './support/service';
import { tableContents } from './support/table-contents';

const SEED = seedOr(9_2026);
const NUM_RUNS = 20;
/** Fewer for each route of holds, which share their schemas' rules with the routes above. */
const HOLD_RUNS = 12;
/** A SKU with stock to spare, so well-formed allocations get through to the store. */
const STOCKED_SKU = 'FUZZ-LAMP';
const MAX_ORDER_LINES = 25;
/**
 * More SKUs with stock to spare than an order may have lines: an order over the bound would be
 * allocated, and so caught, if the bound were not kept.
 */
const SHELF_SKUS = Array.from({ length: MAX_ORDER_LINES + 2 }, (_, index) => `FUZZ-SHELF-${index}`);
const OTHER_STOCKED_SKU = SHELF_SKUS[0] as string;
/** The SKU transfers take from, with stock of its own, and the one location besides `default` they may go to. */
const MOVED_SKU = 'FUZZ-MOVED';
const FUZZ_PLACE = 'fuzz-place';

/** The routes that take a body, by their route keys. */
type Route =
  | 'POST /allocate'
  | 'POST /add_batch'
  | 'POST /orders'
  | 'POST /holds'
  | 'PATCH /holds/{holdid}'
  | 'POST /holds/{holdid}/confirm'
  | 'POST /transfers';
type Field = 'orderid' | 'ref' | 'sku' | 'qty' | 'eta' | 'lines' | 'holdid' | 'ttl_seconds' | 'transferid' | 'from' | 'to';
/** The routes of a hold named in the path. */
type HoldPathRoute = 'GET /holds/{holdid}' | 'DELETE /holds/{holdid}' | 'PATCH /holds/{holdid}' | 'POST /holds/{holdid}/confirm';

/**
 * The holds placed before the fuzzing, with a clock that never reaches their expiry: a well-formed
 * PATCH or confirm of one gets through to the store (a confirm ends it, so there are many).
 */
const PLACED_HOLDS = Array.from({ length: 40 }, (_, index) => `fuzz-hold-${index + 1}`);
const FUZZ_CLOCK = Date.parse('2030-01-01T00:00:00.000Z');

/**
 * Strings that have broken services: blanks, controls, lone surrogates, bidi and zero-width marks,
 * look-alike spaces, the replacement character, text not in NFC, key and query syntax.
 */
const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u3000',
  ' leading',
  'trailing ',
  'trailing-no-break\u00a0',
  '\u0000',
  'tab\there',
  '\u001b[31mred',
  '\u007f',
  '\ud800',
  'a\udfffb',
  '\u202eevil',
  'zero\u200bwidth',
  '\u200b',
  'join\u200dme',
  'word\u2060joiner',
  '\ufeffbom',
  'no\u00a0break',
  'line\u2028separator',
  'paragraph\u2029separator',
  'cust-\ufffd',
  // "é" as "e" and a combining accent, and the Angstrom sign: both render as their NFC forms.
  'cafe\u0301',
  '\u212b',
  '__proto__',
  'constructor',
  'SKU#FUZZ-LAMP',
  'BATCH#x',
  '#',
  "' OR '1'='1",
  '${jndi:ldap://127.0.0.1/a}',
  '../../etc/passwd',
  // One over the 128-character bound, in UTF-16 units and in code points.
  'x'.repeat(129),
  '\u{1F600}'.repeat(129),
];
const ODD_NUMBERS = [0, -0, -1, 0.5, 1.5, 1e9 + 1, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, 1e21, 1e308, -1e308, 5e-324];
/** A hold's ttl_seconds beyond its bounds (1 to 86,400), and as text. */
const ODD_SECONDS = [...ODD_NUMBERS, 86_401, 86_400.5, '60'];
const INVALID_DATES = [
  '2026-02-30',
  '2026-02-29',
  '2026-13-01',
  '2026-00-10',
  '0000-00-00',
  '2026-1-1',
  '26-01-01',
  '2026-01-01T00:00:00Z',
  ' 2026-01-01',
  '2026-01-01\n',
  '9999-99-99',
  '+002026-01-01',
  '２０２６-01-01',
  'tomorrow',
];
const WRONG_TYPES = [null, true, [], {}, ['FUZZ-LAMP'], { $gt: '' }];
/** Bytes that are not UTF-8, each a way a lenient decoder repairs into U+FFFD. */
const INVALID_UTF8: readonly (readonly number[])[] = [
  [0xff],
  [0xfe],
  [0x80],
  [0xc3],
  [0xe2, 0x82],
  [0xc0, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
];

const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.integer({ min: 129, max: 6_000 }).map((length) => 'x'.repeat(length)) },
  { weight: 1, arbitrary: fc.integer({ min: 126, max: 130 }).map((length) => '\u{1F600}'.repeat(length)) },
);

const hugeOrOddNumber = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...ODD_NUMBERS) },
  { weight: 1, arbitrary: fc.integer({ min: -10, max: 0 }) },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.integer() },
);

const invalidDate = fc.constantFrom(...INVALID_DATES);

const deeplyNestedOf = (depth: number) => Array.from({ length: depth }).reduce<unknown>((inner) => ({ a: inner }), 'bottom');
const deeplyNested = fc.integer({ min: 50, max: 3_000 }).map(deeplyNestedOf);

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  hugeOrOddNumber,
  invalidDate,
  deeplyNested,
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(...WRONG_TYPES),
);

/** A field as a careless or hostile client sends it: often plausible, often not, sometimes absent. */
const field = (plausible: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 5, arbitrary: plausible }, { weight: 3, arbitrary: hostileValue }, { weight: 1, arbitrary: fc.constant(undefined) });

const plausibleId = fc.integer({ min: 1, max: 50 }).map((n) => `fuzz-${n}`);
const plausibleSku = fc.constantFrom(STOCKED_SKU, 'FUZZ-UNKNOWN');
const plausibleQty = fc.integer({ min: 1, max: 5 });
const plausibleEta = fc.constantFrom(null, '2026-06-01', '2028-02-29');
/** Often a SKU twice, which the contract refuses. */
const plausibleLines = fc.array(fc.record({ sku: fc.constantFrom(STOCKED_SKU, OTHER_STOCKED_SKU, 'FUZZ-UNKNOWN'), qty: plausibleQty }), {
  minLength: 1,
  maxLength: 3,
});

/** `count` lines, each of its own SKU: in stock up to SHELF_SKUS.length lines, never added beyond. */
const distinctLines = (count: number) => Array.from({ length: count }, (_, index) => ({ sku: SHELF_SKUS[index] ?? `FUZZ-${index}`, qty: 1 }));

/** Objects built from JSON text, so that they hold `__proto__` as an own key, as a parsed body does. */
const parsed = (text: string): unknown => JSON.parse(text);

/** Lines of every wrong shape, too few or too many (and the most allowed), a SKU twice, and nested junk. */
const HOSTILE_LINES = [
  [],
  distinctLines(MAX_ORDER_LINES),
  distinctLines(MAX_ORDER_LINES + 1),
  distinctLines(100),
  [{ sku: STOCKED_SKU, qty: 1 }, { sku: OTHER_STOCKED_SKU, qty: 1 }, { sku: STOCKED_SKU, qty: 1 }],
  [{ sku: STOCKED_SKU, qty: 1 }, { sku: STOCKED_SKU, qty: 2 }],
  { sku: STOCKED_SKU, qty: 1 },
  [[{ sku: STOCKED_SKU, qty: 1 }]],
  [null],
  [42],
  [STOCKED_SKU],
  [{}],
  [{ sku: STOCKED_SKU }],
  [{ qty: 1 }],
  [{ sku: STOCKED_SKU, qty: 1 }, null],
  [{ sku: STOCKED_SKU, qty: 1, lines: [{ sku: OTHER_STOCKED_SKU, qty: 1 }] }],
  [{ sku: [STOCKED_SKU], qty: [1] }],
  [{ sku: { sku: STOCKED_SKU }, qty: { qty: 1 } }],
  [deeplyNestedOf(500)],
  [{ sku: STOCKED_SKU, qty: 1, junk: deeplyNestedOf(500) }],
  parsed('[{"__proto__": {"sku": "FUZZ-LAMP", "qty": 1}}]'),
  parsed('[{"sku": "FUZZ-LAMP", "qty": 1, "__proto__": {"polluted": true}}]'),
  parsed('[{"sku": "FUZZ-LAMP", "qty": 1, "constructor": {"prototype": {"polluted": true}}}]'),
  parsed('{"__proto__": [{"sku": "FUZZ-LAMP", "qty": 1}], "length": 1}'),
  'FUZZ-LAMP',
  1,
];

/** Plausible lines but for one line's sku or qty, which is hostile or absent. */
const linesWithOneSpoiled = fc
  .record({
    lines: plausibleLines,
    at: fc.nat(),
    spoiled: fc.oneof(
      fc.record({ sku: hostileString }),
      fc.record({ qty: hugeOrOddNumber }),
      fc.record({ sku: hostileValue }),
      fc.record({ qty: hostileValue }),
      fc.constantFrom({ sku: undefined }, { qty: undefined }),
    ),
  })
  .map(({ lines, at, spoiled }) => lines.map((line, index) => (index === at % lines.length ? { ...line, ...spoiled } : line)));

const hostileLines = fc.oneof(
  { weight: 3, arbitrary: linesWithOneSpoiled },
  { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_LINES) },
  { weight: 1, arbitrary: fc.constantFrom(0, 1, MAX_ORDER_LINES - 1, MAX_ORDER_LINES, MAX_ORDER_LINES + 1, MAX_ORDER_LINES + 2).map(distinctLines) },
  { weight: 1, arbitrary: fc.array(hostileValue, { maxLength: 4 }) },
  { weight: 1, arbitrary: hostileValue },
);

/** What is most likely to slip past each field's check. */
const hostileFor: Record<Field, fc.Arbitrary<unknown>> = {
  orderid: hostileString,
  ref: hostileString,
  sku: hostileString,
  qty: hugeOrOddNumber,
  eta: invalidDate,
  lines: hostileLines,
  holdid: hostileString,
  ttl_seconds: fc.oneof(fc.constantFrom(...ODD_SECONDS), hugeOrOddNumber),
  transferid: hostileString,
  from: hostileString,
  to: hostileString,
};

const plausibleSeconds = fc.constantFrom(1, 60, 900, 86_400);
const plausibleFields: Record<Route, Partial<Record<Field, fc.Arbitrary<unknown>>>> = {
  'POST /allocate': { orderid: plausibleId, sku: plausibleSku, qty: plausibleQty },
  'POST /add_batch': { ref: plausibleId, sku: plausibleSku, qty: plausibleQty, eta: plausibleEta },
  'POST /orders': { orderid: plausibleId, lines: plausibleLines },
  'POST /holds': { holdid: plausibleId, lines: plausibleLines, ttl_seconds: plausibleSeconds },
  'PATCH /holds/{holdid}': { ttl_seconds: plausibleSeconds },
  'POST /holds/{holdid}/confirm': { orderid: plausibleId },
  'POST /transfers': {
    transferid: plausibleId,
    sku: fc.constantFrom(MOVED_SKU, 'FUZZ-UNKNOWN'),
    qty: plausibleQty,
    from: fc.constantFrom('default', FUZZ_PLACE),
    to: fc.constantFrom(FUZZ_PLACE, 'default', 'fuzz-nowhere'),
    eta: fc.constantFrom('2026-06-01', '2028-02-29'),
  },
};

/** The holdid in the path: mostly a hold placed before (or none ever placed), now and then hostile. */
const pathHoldid = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...PLACED_HOLDS, 'fuzz-hold-none') },
  { weight: 1, arbitrary: hostileString },
);

/** Keys that pollute an object's prototype when merged carelessly; written as JSON text, since JSON.stringify drops them. */
const pollutingEntry = fc.constantFrom(
  '"__proto__": {"qty": 1, "polluted": true}',
  '"constructor": {"prototype": {"polluted": true}}',
  '"__proto__": null',
  '"prototype": {"polluted": true}',
  '"hasOwnProperty": 1',
  '"toString": "not a function"',
);

/** Object text built key by key, so it can hold polluting keys, and repeated ones (the last wins in JSON.parse). */
const shapedBody = (route: Route) =>
  fc
    .record({
      fields: fc.record(Object.fromEntries(Object.entries(plausibleFields[route]).map(([name, plausible]) => [name, field(plausible)]))),
      polluting: fc.array(pollutingEntry, { maxLength: 3 }),
      repeated: fc.option(fc.record({ key: fc.constantFrom(...Object.keys(plausibleFields[route])), value: hostileValue })),
    })
    .map(({ fields, polluting, repeated }) => {
      const entries = Object.entries(fields)
        .filter(([, value]) => value !== undefined)
        .map(([key, value]) => `${JSON.stringify(key)}: ${JSON.stringify(value)}`);
      const extra = repeated ? [`${JSON.stringify(repeated.key)}: ${JSON.stringify(repeated.value) ?? 'null'}`] : [];
      return `{${[...polluting, ...entries, ...extra].join(', ')}}`;
    });

/** A body that would be accepted but for one field: the sharpest test of each bound. */
const nearMiss = (route: Route) =>
  fc
    .record({ body: fc.record(plausibleFields[route]), field: fc.constantFrom(...(Object.keys(plausibleFields[route]) as Field[])) })
    .chain(({ body, field }) =>
      fc
        .oneof({ weight: 3, arbitrary: hostileFor[field] }, hostileValue, fc.constant(undefined))
        .map((value) => JSON.stringify({ ...body, [field]: value })),
    );

/** One of the known sequences, or random bytes that happen not to be UTF-8. */
const invalidUtf8Bytes = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(...INVALID_UTF8) },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 8 }).filter((bytes) => !isUtf8(bytes)) },
);

/**
 * A body that would be accepted but for bytes that are not UTF-8, anywhere in it (the plausible
 * bodies are ASCII, so no spot splits a character), or bytes that are not UTF-8 at all.
 */
const invalidUtf8Body = (route: Route): fc.Arbitrary<Uint8Array> =>
  fc.oneof(
    fc
      .record({ body: fc.record(plausibleFields[route]), at: fc.nat(), bytes: invalidUtf8Bytes })
      .map(({ body, at, bytes }) => {
        const text = JSON.stringify(body);
        const spot = at % (text.length + 1);
        return withBytes(`${text.slice(0, spot)}@${text.slice(spot)}`, bytes);
      }),
    fc.uint8Array({ maxLength: 200 }).filter((bytes) => !isUtf8(bytes)),
  );

const rawText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.integer({ min: 1, max: 8_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
  fc.integer({ min: 1, max: 8_000 }).map((depth) => '{"a":'.repeat(depth)),
  fc.constantFrom('1e400', '-1e400', '123456789012345678901234567890', 'NaN', 'Infinity', '{"qty": 1e400}', '{"qty": -0}', '"\\ud800"', ''),
  fc.constantFrom('{"orderid": "o1", "sku": "FUZZ-LAMP", "qty": 1}'.padEnd(17_000, ' ')),
);

/** Mostly JSON, so most requests get past the Content-Type check to the parser and the schema. */
const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/json') },
  {
    weight: 2,
    arbitrary: fc.constantFrom<string | null>(
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'application/problem+json',
      'APPLICATION/JSON',
      'text/plain',
      'application/x-www-form-urlencoded',
      null,
    ),
  },
);

const request = (route: Route) =>
  fc.oneof(
    {
      weight: 9,
      arbitrary: fc.record({
        holdid: pathHoldid,
        body: fc.oneof(
          { weight: 3, arbitrary: shapedBody(route) },
          { weight: 3, arbitrary: nearMiss(route) },
          { weight: 2, arbitrary: fc.jsonValue().map((value) => JSON.stringify(value)) },
          { weight: 2, arbitrary: rawText },
        ),
        contentType,
        // API Gateway hands some bodies over base64-encoded.
        base64: fc.constantFrom(false, false, false, false, true),
      }),
    },
    {
      weight: 1,
      // As API Gateway and the local server hand over a body that is not UTF-8: base64-encoded.
      arbitrary: fc.record({ holdid: pathHoldid, body: invalidUtf8Body(route), contentType: fc.constant('application/json'), base64: fc.constant(true) }),
    },
  );

/** The bounds of docs/api.md, written out independently of the service's schema. */
const isIdentifier = (value: unknown) =>
  typeof value === 'string' &&
  value.length > 0 &&
  [...value].length <= 128 &&
  !/[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\uFFFD]/u.test(value) &&
  !/\p{Zs}/u.test(value.replaceAll(' ', '')) &&
  // The only white space left is U+0020: neither blank nor at either end.
  !value.startsWith(' ') &&
  !value.endsWith(' ') &&
  value.normalize('NFC') === value;
const isQty = (value: unknown) => Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 1_000_000_000;
const isCalendarDate = (value: unknown) => {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const [year, month, day] = value.split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
};
const isOrderLines = (value: unknown) =>
  Array.isArray(value) &&
  value.length >= 1 &&
  value.length <= MAX_ORDER_LINES &&
  value.every((line) => typeof line === 'object' && line !== null && isIdentifier(line.sku) && isQty(line.qty)) &&
  new Set(value.map((line: { sku: string }) => line.sku)).size === value.length;
const isSeconds = (value: unknown) => Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 86_400;
const withinContract = (route: Route, sent: string, holdid: string): boolean => {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(sent);
  } catch {
    return false;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  switch (route) {
    case 'POST /allocate':
      return isIdentifier(body.orderid) && isIdentifier(body.sku) && isQty(body.qty);
    case 'POST /add_batch':
      // No location is stored here: a batch may only be at the built-in default.
      return (
        isIdentifier(body.ref) &&
        isIdentifier(body.sku) &&
        isQty(body.qty) &&
        (body.eta === null || isCalendarDate(body.eta)) &&
        (body.location === undefined || body.location === 'default')
      );
    case 'POST /orders':
      return isIdentifier(body.orderid) && isOrderLines(body.lines);
    case 'POST /holds':
      return isIdentifier(body.holdid) && isOrderLines(body.lines) && (body.ttl_seconds === undefined || isSeconds(body.ttl_seconds));
    case 'PATCH /holds/{holdid}':
      return isIdentifier(holdid) && isSeconds(body.ttl_seconds);
    case 'POST /holds/{holdid}/confirm':
      return isIdentifier(holdid) && isIdentifier(body.orderid);
    case 'POST /transfers':
      // Stock is in hand only at `default`, and the one other location is the fuzz's.
      return isIdentifier(body.transferid) && isIdentifier(body.sku) && isQty(body.qty) && body.from === 'default' && body.to === FUZZ_PLACE && isCalendarDate(body.eta);
  }
};

const STACK_FRAME = /\n\s+at /;

/** The known-bad values of each field: its own kind of trouble, and the wrong types, and its absence. */
const CATALOGUE: Record<Field, unknown[]> = {
  orderid: [...HOSTILE_STRINGS, ...WRONG_TYPES, 42, undefined],
  ref: [...HOSTILE_STRINGS, ...WRONG_TYPES, 42, undefined],
  sku: [...HOSTILE_STRINGS, ...WRONG_TYPES, 42, undefined],
  qty: [...ODD_NUMBERS, '1', ...WRONG_TYPES, undefined],
  eta: [...INVALID_DATES, ...WRONG_TYPES, 20260101, undefined],
  lines: [...HOSTILE_LINES, ...WRONG_TYPES, undefined],
  holdid: [...HOSTILE_STRINGS, ...WRONG_TYPES, 42, undefined],
  ttl_seconds: [...ODD_SECONDS, ...WRONG_TYPES, undefined],
  transferid: [...HOSTILE_STRINGS, ...WRONG_TYPES, 42, undefined],
  from: [...HOSTILE_STRINGS, ...WRONG_TYPES, 42, undefined, FUZZ_PLACE],
  to: [...HOSTILE_STRINGS, ...WRONG_TYPES, 42, undefined, 'default'],
};

/** A place in a well-formed body of a route, for spoiling one field at a time. */
interface Slot {
  readonly kind: Field;
  /** What the well-formed body holds there. */
  readonly valid: unknown;
  /** The well-formed body, but for `value` in this place. */
  readonly bodyWith: (value: unknown) => unknown;
}

const topLevelSlots = (body: Partial<Record<Field, unknown>>): Slot[] =>
  Object.entries(body).map(([field, valid]) => ({ kind: field as Field, valid, bodyWith: (value) => ({ ...body, [field]: value }) }));

const VALID_ORDER = {
  orderid: 'catalogue-whole-order',
  lines: [
    { sku: STOCKED_SKU, qty: 1 },
    { sku: OTHER_STOCKED_SKU, qty: 1 },
  ],
};

/** A field of one line of the well-formed order. */
const orderLineSlot = (index: number, kind: 'sku' | 'qty'): Slot => ({
  kind,
  valid: VALID_ORDER.lines[index]?.[kind],
  bodyWith: (value) => ({ ...VALID_ORDER, lines: VALID_ORDER.lines.map((line, at) => (at === index ? { ...line, [kind]: value } : line)) }),
});

const VALID_HOLD = { holdid: 'catalogue-hold', lines: VALID_ORDER.lines, ttl_seconds: 60 };

const SLOTS: Record<Route, Slot[]> = {
  'POST /allocate': topLevelSlots({ orderid: 'catalogue-order', sku: STOCKED_SKU, qty: 1 }),
  'POST /add_batch': topLevelSlots({ ref: 'catalogue-batch', sku: STOCKED_SKU, qty: 1, eta: null }),
  // Both fields of a line, one in the first line and one in a later line.
  'POST /orders': [...topLevelSlots(VALID_ORDER), orderLineSlot(0, 'qty'), orderLineSlot(1, 'sku')],
  // A hold's lines are an order's: the same slots in them.
  'POST /holds': [
    ...topLevelSlots(VALID_HOLD),
    ...[orderLineSlot(0, 'qty'), orderLineSlot(1, 'sku')].map((slot) => ({ ...slot, bodyWith: (value: unknown) => ({ ...VALID_HOLD, lines: (slot.bodyWith(value) as typeof VALID_ORDER).lines }) })),
  ],
  'PATCH /holds/{holdid}': topLevelSlots({ ttl_seconds: 60 }),
  'POST /holds/{holdid}/confirm': topLevelSlots({ orderid: 'catalogue-confirmed' }),
  'POST /transfers': topLevelSlots({ transferid: 'catalogue-transfer', sku: MOVED_SKU, qty: 1, from: 'default', to: FUZZ_PLACE, eta: '2027-01-01' }),
};

const ROUTES: Route[] = ['POST /allocate', 'POST /add_batch', 'POST /orders', 'POST /holds', 'PATCH /holds/{holdid}', 'POST /holds/{holdid}/confirm', 'POST /transfers'];
const HOLD_PATH_ROUTES: HoldPathRoute[] = ['GET /holds/{holdid}', 'DELETE /holds/{holdid}', 'PATCH /holds/{holdid}', 'POST /holds/{holdid}/confirm'];
/** The holdid in the path of a catalogue request: a hold placed before, which the well-formed PATCH extends and the first well-formed confirm confirms. */
const CATALOGUE_HOLD = PLACED_HOLDS[0] as string;

/** Sends an event to the handler API Gateway routes it to, both handlers over one repository, called as Lambda calls them. */
const senderOver = (repository: BatchRepository) => {
  const allocations = createAllocationsHandler(repository);
  const batches = createBatchesHandler(repository);
  return async (event: HttpEvent): Promise<Answer> => {
    const result = await ((routeKeys.batches as readonly string[]).includes(event.routeKey) ? batches : allocations)(event, lambdaContext());
    const headers = Object.fromEntries(Object.entries(result.headers ?? {}).map(([name, value]) => [name.toLowerCase(), String(value)]));
    const text = result.body ?? '';
    const body = headers['content-type']?.startsWith('application/json') ? JSON.parse(text) : text;
    return { status: result.statusCode ?? 200, headers, body, text };
  };
};

/**
 * Every call goes through the conflict model (local/conflict-model.ts), each write holding its items
 * for 1 ms: the requests come one at a time, and what gets past the checks meets the store as on AWS.
 */
const CONFLICT_MODEL = { holdMs: 1 };

describe(`both handlers under hostile input, through the conflict model (seed ${SEED})`, () => {
  let table: ModelledTable;
  let send: ReturnType<typeof senderOver>;
  const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();

  beforeAll(async () => {
    table = await createModelledTable(CONFLICT_MODEL);
    send = senderOver(table.repository({ clock: () => FUZZ_CLOCK }));
    const place = { name: 'Fuzz place', priority: 1, serves: ['*'] };
    expect((await send(routeEvent('PUT /locations/{id}', { pathParameters: { id: FUZZ_PLACE }, body: place }))).status).toBe(201);
    for (const [index, sku] of [STOCKED_SKU, ...SHELF_SKUS, MOVED_SKU].entries()) {
      const batch = { ref: `fuzz-stock-${index}`, sku, qty: 1_000_000_000, eta: null };
      expect((await send(postEvent('/add_batch', batch))).status).toBe(201);
    }
    for (const holdid of PLACED_HOLDS) {
      const hold = { holdid, lines: [{ sku: STOCKED_SKU, qty: 1 }], ttl_seconds: 86_400 };
      expect((await send(postEvent('/holds', hold))).status).toBe(201);
    }
    // Each batch and hold was written in a transaction of its own, through the model.
    expect(table.model.counters().committed).toBeGreaterThanOrEqual(1 + SHELF_SKUS.length + PLACED_HOLDS.length);
    // fast-check's report names the failing request; the request logs of every run and shrink would bury it.
    muteTelemetry();
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await table?.drop();
  });

  /**
   * Sends the body as it is (bytes always base64-encoded), and holds the answer to what any client
   * is owed, whatever it sent.
   */
  const sendAndCheck = async (
    route: Route | HoldPathRoute,
    body: string | Uint8Array | undefined,
    {
      contentType = body === undefined ? null : 'application/json',
      base64 = false,
      holdid = CATALOGUE_HOLD,
    }: { contentType?: string | null; base64?: boolean; holdid?: string } = {},
  ) => {
    const before = await tableContents(table.documentClient, table.tableName);

    const pathParameters = route.includes('{holdid}') ? { holdid } : undefined;
    const answer = await send(routeEvent(route, { pathParameters, body, raw: true, contentType, base64 }));

    const sent = `${route} ${JSON.stringify(holdid)} ${body instanceof Uint8Array ? `bytes ${Buffer.from(body).toString('hex')}` : body}`;
    expect(answer.status, sent).toBeGreaterThanOrEqual(200);
    expect(answer.status, `${sent}: ${answer.text}`).toBeLessThan(500);
    expect(answer.text).not.toMatch(STACK_FRAME);
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeys);
    if (answer.status >= 300) {
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(answer.body).toEqual(expect.objectContaining({ message: expect.any(String) }));
      expect(await tableContents(table.documentClient, table.tableName)).toEqual(before);
    } else {
      if (route === 'GET /holds/{holdid}' || route === 'DELETE /holds/{holdid}') {
        expect(isIdentifier(holdid), `accepted holdid ${JSON.stringify(holdid)}`).toBe(true);
        return answer;
      }
      expect(typeof body, 'accepted bytes that are not UTF-8').toBe('string');
      expect(withinContract(route, String(body), holdid), `accepted ${body} for hold ${JSON.stringify(holdid)}`).toBe(true);
      expect(contentType ?? 'no Content-Type', 'accepted a body not declared JSON').toMatch(/^application\/([\w.-]+\+)?json\b/i);
      expect(contentType, 'accepted JSON declared in another charset').not.toMatch(/charset=(?!utf-8$)/i);
    }
    return answer;
  };

  /** Bytes that are not UTF-8, declared JSON: refused for that reason alone, with nothing written. */
  const sendInvalidUtf8AndCheck = async (route: Route, bytes: Uint8Array, holdid = CATALOGUE_HOLD) => {
    expect(isUtf8(bytes)).toBe(false);
    const answer = await sendAndCheck(route, bytes, { holdid });
    // A holdid in the path that breaks the rules is refused first, whatever the body.
    expect(answer.status).toBe(400);
    if (!route.includes('{holdid}') || isIdentifier(holdid)) expect(answer.body).toEqual({ message: 'Request body is not valid UTF-8', code: 'malformed_json' });
  };

  it.each<HoldPathRoute>(HOLD_PATH_ROUTES)(
    // First, while no hold has any of these holdids.
    '%s takes each hostile holdid in its path without a 5xx: 400 for one that breaks the rules, 404 for one that is no hold',
    async (route) => {
      const body = { 'PATCH /holds/{holdid}': { ttl_seconds: 60 }, 'POST /holds/{holdid}/confirm': { orderid: 'path-order' } }[route as string];
      for (const holdid of HOSTILE_STRINGS) {
        const answer = await sendAndCheck(route, body === undefined ? undefined : JSON.stringify(body), { holdid });
        expect({ holdid, status: answer.status }).toEqual({ holdid, status: isIdentifier(holdid) ? 404 : 400 });
        if (isIdentifier(holdid)) expect(answer.body).toEqual({ message: `Hold ${holdid} not found`, code: 'unknown_hold' });
      }
    },
    60_000,
  );

  it('places, reads, extends, confirms and releases holds whose holdids name members of Object.prototype, like any other', async () => {
    const answers = [];
    for (const [index, holdid] of ['__proto__', 'constructor', 'toString', 'hasOwnProperty'].entries()) {
      const path = { pathParameters: { holdid } };
      answers.push(
        (await send(postEvent('/holds', { holdid, lines: [{ sku: STOCKED_SKU, qty: 1 }] }))).status,
        (await send(routeEvent('GET /holds/{holdid}', path))).body,
        (await send(routeEvent('PATCH /holds/{holdid}', { ...path, body: { ttl_seconds: 60 } }))).status,
        index % 2 === 0
          ? (await send(routeEvent('POST /holds/{holdid}/confirm', { ...path, body: { orderid: `order-${holdid}` } }))).status
          : (await send(routeEvent('DELETE /holds/{holdid}', path))).status,
      );
    }
    expect(answers).toEqual(
      ['__proto__', 'constructor', 'toString', 'hasOwnProperty'].flatMap((holdid, index) => [
        201,
        expect.objectContaining({ holdid, status: 'active' }),
        200,
        index % 2 === 0 ? 201 : 204,
      ]),
    );
    expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
  });

  it.each<Route>(ROUTES)(
    '%s takes each hostile value in each field without a 5xx, and accepts only what the contract allows',
    async (route) => {
      for (const slot of SLOTS[route]) {
        for (const value of CATALOGUE[slot.kind]) await sendAndCheck(route, JSON.stringify(slot.bodyWith(value)));
      }
    },
    60_000,
  );

  it.each<Route>(ROUTES)(
    '%s refuses bytes that are not UTF-8 in each field with 400, and changes nothing',
    async (route) => {
      // Lines hold no text of their own: the bytes go into their lines' fields.
      for (const slot of SLOTS[route].filter(({ kind }) => kind !== 'lines')) {
        for (const bytes of INVALID_UTF8) {
          await sendInvalidUtf8AndCheck(route, withBytes(JSON.stringify(slot.bodyWith(`${slot.valid}@`)), bytes));
        }
      }
    },
    60_000,
  );

  it.each<Route>(ROUTES)(
    '%s never answers 5xx to any request, answers every refusal in JSON, and changes nothing it refuses',
    async (route) => {
      await fc.assert(
        fc.asyncProperty(request(route), async ({ body, contentType, base64, holdid }) => {
          if (body instanceof Uint8Array) await sendInvalidUtf8AndCheck(route, body, holdid);
          else await sendAndCheck(route, body, { contentType, base64, holdid });
        }),
        // No time limit: every run checks the same requests, however loaded the machine.
        { seed: SEED, numRuns: route.includes('/holds') ? HOLD_RUNS : NUM_RUNS },
      );
      expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
    },
    // A pass takes about 2 s on an idle two-CPU machine: the rest is room for a loaded one, and for
    // shrinking a failure (which replays requests against DynamoDB Local) before fast-check reports it.
    120_000,
  );
});
