import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { StoreUnavailable } from '../../domain/errors';
import { createAllocationsHandler } from '../../functions/allocations';
import { createBatchesHandler } from '../../functions/batches';
import type { HttpResult } from '../../functions/http/route';
import { type AllocationsRouteKey, type BatchesRouteKey, routeKeys } from '../../functions/http/route-keys';
import { FakeRepository } from '../support/fake-repository';
import { committedOpenApiDocument } from '../support/openapi-responses';
import { type RouteEventOptions, lambdaContext, postEvent, routeEvent, withBytes } from '../support/events';
import { captureTelemetry } from '../support/telemetry';
import { OPENAPI_FILE } from '../../tools/openapi';

type RouteKey = BatchesRouteKey | AllocationsRouteKey;

const isBatchesRoute = (routeKey: string): routeKey is BatchesRouteKey => (routeKeys.batches as readonly string[]).includes(routeKey);

const setUp = () => {
  const repository = new FakeRepository();
  const batches = createBatchesHandler(repository);
  const allocations = createAllocationsHandler(repository, committedOpenApiDocument);
  return {
    repository,
    batches,
    allocations,
    allocate: (body: unknown, options?: Parameters<typeof postEvent>[2]) =>
      allocations(postEvent('/allocate', body, options), lambdaContext()),
    addBatch: (body: unknown, options?: Parameters<typeof postEvent>[2]) =>
      batches(postEvent('/add_batch', body, options), lambdaContext()),
    /** Any route, to the handler the stack routes it to. */
    send: (routeKey: RouteKey, options?: RouteEventOptions) =>
      (isBatchesRoute(routeKey) ? batches : allocations)(routeEvent(routeKey, options), lambdaContext()),
  };
};

const jsonBody = (result: HttpResult) => {
  expect(result.headers?.['Content-Type']).toBe('application/json');
  return JSON.parse(result.body ?? '');
};

const validLine = { orderid: 'order-1', sku: 'LAMP', qty: 3 };
const validBatch = { ref: 'batch-1', sku: 'LAMP', qty: 10, eta: null };

describe('POST /add_batch', () => {
  it('answers 201 with the plain word OK', async () => {
    const { addBatch, repository } = setUp();
    const result = await addBatch(validBatch);
    expect(result.statusCode).toBe(201);
    expect(result.body).toBe('OK');
    expect(result.headers?.['Content-Type']).toMatch(/^text\/plain/);
    expect(repository.batches.get('batch-1')?.available).toBe(10);
  });

  it('accepts a shipment with a calendar date', async () => {
    const { addBatch, repository } = setUp();
    expect((await addBatch({ ...validBatch, eta: '2028-02-29' })).statusCode).toBe(201);
    expect(repository.batches.get('batch-1')?.eta).toBe('2028-02-29');
  });

  it('answers 200 OK to the same batch sent again', async () => {
    const { addBatch } = setUp();
    await addBatch(validBatch);
    const result = await addBatch(validBatch);
    expect({ status: result.statusCode, body: result.body }).toEqual({ status: 200, body: 'OK' });
  });

  it('answers 409 for a reference that already exists', async () => {
    const { addBatch } = setUp();
    await addBatch(validBatch);
    const result = await addBatch({ ...validBatch, sku: 'TABLE' });
    expect(result.statusCode).toBe(409);
    expect(jsonBody(result)).toEqual({ message: 'Batch batch-1 already exists', code: 'batch_exists' });
  });

  it.each([
    ['eta missing', { ref: 'b', sku: 'LAMP', qty: 1 }, 'eta'],
    ['eta not a real date', { ...validBatch, eta: '2026-02-30' }, 'eta'],
    ['eta with a time', { ...validBatch, eta: '2026-02-01T00:00:00Z' }, 'eta'],
    ['eta a number', { ...validBatch, eta: 20260201 }, 'eta'],
    ['ref empty', { ...validBatch, ref: '' }, 'ref'],
    ['ref too long', { ...validBatch, ref: 'r'.repeat(129) }, 'ref'],
    ['sku with a control character', { ...validBatch, sku: 'LA\nMP' }, 'sku'],
    ['qty negative', { ...validBatch, qty: -5 }, 'qty'],
    ['qty zero', { ...validBatch, qty: 0 }, 'qty'],
    ['qty past the bound', { ...validBatch, qty: 1_000_000_001 }, 'qty'],
    ['qty fractional', { ...validBatch, qty: 2.5 }, 'qty'],
    ['qty a string', { ...validBatch, qty: '10' }, 'qty'],
  ])('answers 400 naming the field when %s', async (_case, body, field) => {
    const { addBatch, repository } = setUp();
    const result = await addBatch(body);
    expect(result.statusCode).toBe(400);
    const { message, issues } = jsonBody(result);
    expect(message).toBe('Invalid request body');
    expect(issues.map((issue: { path: string }) => issue.path)).toEqual([field]);
    expect(repository.batches.size).toBe(0);
  });
});

describe('POST /allocate', () => {
  it('answers 201 with the batch a new line went into', async () => {
    const { addBatch, allocate } = setUp();
    await addBatch(validBatch);
    const result = await allocate(validLine);
    expect(result.statusCode).toBe(201);
    expect(jsonBody(result)).toEqual({ batchref: 'batch-1', location: 'default' });
  });

  it('answers 200 with the same batch for an exact repeat', async () => {
    const { addBatch, allocate } = setUp();
    await addBatch(validBatch);
    await allocate(validLine);
    const repeat = await allocate(validLine);
    expect(repeat.statusCode).toBe(200);
    expect(jsonBody(repeat)).toEqual({ batchref: 'batch-1', location: 'default' });
  });

  it('answers 409 for the same order and SKU with another qty', async () => {
    const { addBatch, allocate } = setUp();
    await addBatch(validBatch);
    await allocate(validLine);
    const result = await allocate({ ...validLine, qty: 4 });
    expect(result.statusCode).toBe(409);
    expect(jsonBody(result).message).toMatch(/order-1/);
  });

  it('answers 400 "Invalid sku" for a SKU with no batch', async () => {
    const { allocate } = setUp();
    const result = await allocate({ ...validLine, sku: 'NOPE' });
    expect(result.statusCode).toBe(400);
    expect(jsonBody(result)).toEqual({ message: 'Invalid sku NOPE', code: 'unknown_sku' });
  });

  it('answers 400 "Out of stock" when no batch can take the line', async () => {
    const { addBatch, allocate } = setUp();
    await addBatch(validBatch);
    const result = await allocate({ ...validLine, qty: 11 });
    expect(result.statusCode).toBe(400);
    expect(jsonBody(result)).toEqual({ message: 'Out of stock for sku LAMP', code: 'out_of_stock', reason: 'out_of_stock' });
  });

  it('names a key it does not take that is empty or holds a dot quoted, as no field of its is', async () => {
    const { allocate } = setUp();
    const result = await allocate('{"orderid":"order-1","sku":"LAMP","qty":3,"":1,"destination.country":"FR"}', { raw: true });
    expect(jsonBody(result).issues).toEqual([
      { path: '""', message: '"" is not a field of this route' },
      { path: '"destination.country"', message: '"destination.country" is not a field of this route' },
    ]);
  });

  it('refuses a field it does not take, naming each, prototype keys among them, and takes nothing', async () => {
    const { addBatch, allocate, repository } = setUp();
    await addBatch(validBatch);
    const body = '{"orderid":"order-1","sku":"LAMP","qty":3,"note":"gift","__proto__":{"qty":99}}';
    const result = await allocate(body, { raw: true });
    expect(result.statusCode).toBe(400);
    expect(jsonBody(result).issues).toEqual([
      { path: 'note', message: 'note is not a field of this route' },
      { path: '__proto__', message: '__proto__ is not a field of this route' },
    ]);
    expect(repository.batches.get('batch-1')?.available).toBe(10);
  });

  it.each([
    ['orderid missing', { sku: 'LAMP', qty: 1 }, ['orderid']],
    ['sku a number', { ...validLine, sku: 42 }, ['sku']],
    ['qty missing', { orderid: 'o', sku: 'LAMP' }, ['qty']],
    ['qty null', { ...validLine, qty: null }, ['qty']],
    ['every field wrong', { orderid: '', sku: '', qty: 0 }, ['orderid', 'sku', 'qty']],
    ['the body an array', [validLine], ['']],
    ['the body a string', 'allocate', ['']],
  ])('answers 400 with an issue per bad field when %s', async (_case, body, fields) => {
    const { allocate } = setUp();
    const result = await allocate(body);
    expect(result.statusCode).toBe(400);
    expect(jsonBody(result).issues.map((issue: { path: string }) => issue.path)).toEqual(fields);
  });

  it('counts characters, not UTF-16 units, against the 128-character bound', async () => {
    const { addBatch } = setUp();
    expect((await addBatch({ ...validBatch, ref: '📦'.repeat(128) })).statusCode).toBe(201);
    expect((await addBatch({ ...validBatch, ref: '📦'.repeat(129) })).statusCode).toBe(400);
  });
});

describe('what every handler does with a bad request', () => {
  const handlers = ['allocate', 'addBatch'] as const;

  it.each(handlers)('%s answers 400 for malformed JSON', async (name) => {
    const result = await setUp()[name]('{"orderid": "o1",', { raw: true });
    expect(result.statusCode).toBe(400);
    expect(jsonBody(result)).toEqual({ message: 'Request body is not valid JSON', code: 'malformed_json' });
  });

  it.each(handlers)('%s answers 400 for a missing body', async (name) => {
    const result = await setUp()[name](undefined, { raw: true });
    expect(result.statusCode).toBe(400);
    expect(jsonBody(result)).toEqual({ message: 'Request body is not valid JSON', code: 'malformed_json' });
  });

  it.each(handlers)('%s answers 415 for a body that is not JSON by its Content-Type', async (name) => {
    const result = await setUp()[name](validLine, { contentType: 'text/plain' });
    expect(result.statusCode).toBe(415);
    expect(jsonBody(result)).toEqual({ message: 'Content-Type must be application/json', code: 'unsupported_media_type' });
  });

  it.each(handlers)('%s answers 413 for a body over 16 KiB', async (name) => {
    const result = await setUp()[name]({ ...validLine, padding: 'x'.repeat(16 * 1024) });
    expect(result.statusCode).toBe(413);
    expect(jsonBody(result).message).toMatch(/16384 bytes/);
  });

  const twoMegabytes = { ...validLine, padding: 'x'.repeat(2 * 1024 * 1024) };

  it.each(handlers)('%s answers 415, not 413, to a 2 MB body that is not JSON by its Content-Type', async (name) => {
    const result = await setUp()[name](twoMegabytes, { contentType: 'text/plain' });
    expect(result.statusCode).toBe(415);
    expect(jsonBody(result)).toEqual({ message: 'Content-Type must be application/json', code: 'unsupported_media_type' });
  });

  it.each(handlers)('%s answers 415, not 413, to a 2 MB body with no Content-Type', async (name) => {
    const result = await setUp()[name](twoMegabytes, { contentType: null });
    expect(result.statusCode).toBe(415);
    expect(jsonBody(result)).toEqual({ message: 'Content-Type must be application/json', code: 'unsupported_media_type' });
  });

  it.each(handlers)('%s answers 413 to a 2 MB JSON body', async (name) => {
    const result = await setUp()[name](twoMegabytes);
    expect(result.statusCode).toBe(413);
    expect(jsonBody(result)).toEqual({ message: 'Request body is larger than 16384 bytes', code: 'body_too_large' });
  });
});

describe('bodies that are not UTF-8', () => {
  const INVALID_UTF8: readonly (readonly [string, readonly number[]])[] = [
    ['0xFF, never in UTF-8', [0xff]],
    ['0xFE, never in UTF-8', [0xfe]],
    ['a continuation byte alone', [0x80]],
    ['a two-byte sequence cut short', [0xc3]],
    ['a three-byte sequence cut short', [0xe2, 0x82]],
    ['an overlong encoding of "/"', [0xc0, 0xaf]],
    ['an encoded UTF-16 surrogate', [0xed, 0xa0, 0x80]],
    ['a code point past U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ];

  it.each(INVALID_UTF8)('allocate answers 400 "not valid UTF-8" to %s in an order id, and takes no stock', async (_case, bytes) => {
    const { addBatch, allocate, repository } = setUp();
    await addBatch(validBatch);
    const result = await allocate(withBytes('{"orderid": "cust-@", "sku": "LAMP", "qty": 3}', bytes));
    expect(result.statusCode).toBe(400);
    expect(jsonBody(result)).toEqual({ message: 'Request body is not valid UTF-8', code: 'malformed_json' });
    expect(repository.lines.size).toBe(0);
    expect(repository.batches.get('batch-1')?.available).toBe(10);
  });

  it.each(INVALID_UTF8)('add_batch answers 400 "not valid UTF-8" to %s in a reference, and adds nothing', async (_case, bytes) => {
    const { addBatch, repository } = setUp();
    const result = await addBatch(withBytes('{"ref": "batch-@", "sku": "LAMP", "qty": 10, "eta": null}', bytes));
    expect(result.statusCode).toBe(400);
    expect(jsonBody(result)).toEqual({ message: 'Request body is not valid UTF-8', code: 'malformed_json' });
    expect(repository.batches.size).toBe(0);
  });

  it('never takes two orders whose ids differ only in undecodable bytes for the same order', async () => {
    const { addBatch, allocate, repository } = setUp();
    await addBatch(validBatch);
    const first = await allocate(withBytes('{"orderid": "cust-@", "sku": "LAMP", "qty": 3}', [0xff]));
    const second = await allocate(withBytes('{"orderid": "cust-@", "sku": "LAMP", "qty": 3}', [0xfe]));
    expect([first.statusCode, second.statusCode]).toEqual([400, 400]);
    expect(repository.lines.size).toBe(0);
  });

  it('answers 400 "not valid UTF-8" to text holding half a surrogate pair, wherever it is', async () => {
    const { addBatch, allocate, repository } = setUp();
    await addBatch(validBatch);
    const result = await allocate('{"orderid": "order-1", "sku": "LAMP", "qty": 3, "note": "\ud800"}', { raw: true });
    expect(result.statusCode).toBe(400);
    expect(jsonBody(result)).toEqual({ message: 'Request body is not valid UTF-8', code: 'malformed_json' });
    expect(repository.lines.size).toBe(0);
  });

  it('reads a base64-encoded UTF-8 body as the text it encodes', async () => {
    const { addBatch, allocate, repository } = setUp();
    await addBatch({ ...validBatch, sku: 'LAMPE-À-POSER' });
    const result = await allocate({ orderid: 'commande-été-📦', sku: 'LAMPE-À-POSER', qty: 3 }, { base64: true });
    expect(result.statusCode).toBe(201);
    expect([...repository.lines.values()].map(({ orderid }) => orderid)).toEqual(['commande-été-📦']);
  });

  it.each([
    ['base64-encoded', withBytes('@{"ref": "batch-1", "sku": "LAMP", "qty": 10, "eta": null}', [0xef, 0xbb, 0xbf])],
    ['as text', '\ufeff{"ref": "batch-1", "sku": "LAMP", "qty": 10, "eta": null}'],
  ])('answers 400 "not valid JSON" to a body that begins with a byte order mark, %s', async (_case, body) => {
    const { addBatch, repository } = setUp();
    const result = await addBatch(body, { raw: true });
    expect(result.statusCode).toBe(400);
    expect(jsonBody(result)).toEqual({ message: 'Request body is not valid JSON', code: 'malformed_json' });
    expect(repository.batches.size).toBe(0);
  });
});

describe('which Content-Types are JSON', () => {
  const validRequestTo = {
    allocate: async (contentType: string | null) => {
      const service = setUp();
      await service.addBatch(validBatch);
      return service.allocate(validLine, { contentType });
    },
    addBatch: (contentType: string | null) => setUp().addBatch(validBatch, { contentType }),
  };

  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON; Charset=UTF-8',
    'application/json;',
    'application/json ; charset=utf-8',
    'application/json;charset="UTF-8"',
    'application/json; foo=bar; Charset="utf-8"',
    'application/json; charset=utf8',
    'application/vnd.api+json',
  ])('both routes accept %s', async (contentType) => {
    expect((await validRequestTo.allocate(contentType)).statusCode).toBe(201);
    expect((await validRequestTo.addBatch(contentType)).statusCode).toBe(201);
  });

  it.each([
    'text/plain',
    'application/jsonx',
    'application/x-www-form-urlencoded',
    null,
    // A Content-Type sent twice, as API Gateway joins it.
    'application/json; v=1,application/json',
  ])(
    'both routes answer 415 to %s',
    async (contentType) => {
      expect((await validRequestTo.allocate(contentType)).statusCode).toBe(415);
      expect((await validRequestTo.addBatch(contentType)).statusCode).toBe(415);
    },
  );

  it.each([
    'application/json; charset=latin1',
    'application/json; charset=ISO-8859-1',
    'application/json; charset="utf-16"',
    'application/vnd.api+json; charset=windows-1252',
    'application/json; charset=utf-8; charset=latin1',
  ])('both routes answer 415, and write nothing, to JSON in another charset: %s', async (contentType) => {
    const service = setUp();
    await service.addBatch(validBatch);
    const allocated = await service.allocate(validLine, { contentType });
    const added = await service.addBatch({ ...validBatch, ref: 'batch-2' }, { contentType });
    for (const result of [allocated, added]) {
      expect(result.statusCode).toBe(415);
      expect(jsonBody(result)).toEqual({ message: 'Content-Type must be application/json', code: 'unsupported_media_type' });
    }
    expect(service.repository.lines.size).toBe(0);
    expect([...service.repository.batches.keys()]).toEqual(['batch-1']);
  });
});

describe('identifiers that look empty or show other text than they hold', () => {
  const IDENTIFIER_FIELDS = [
    ['allocate', 'orderid'],
    ['allocate', 'sku'],
    ['addBatch', 'ref'],
    ['addBatch', 'sku'],
  ] as const;
  const requestWith = (route: 'allocate' | 'addBatch', field: string, value: string) =>
    route === 'allocate' ? { ...validLine, [field]: value } : { ...validBatch, [field]: value };

  const BLANK = 'must not be blank';
  const WHITE_SPACE_AT_AN_END = 'must not begin or end with white space';
  const INVISIBLE = 'must not contain invisible or control characters';
  const REPLACEMENT = 'must not contain U+FFFD, the character that stands for bytes that could not be decoded';
  const NOT_NFC = 'must be in Unicode normalization form NFC';

  const REFUSED: readonly (readonly [string, string, string])[] = [
    ['a space', ' ', BLANK],
    ['ideographic spaces', '\u3000\u3000', BLANK],
    ['a tab and a line break', '\t\n', BLANK],
    ['a trailing space', 'order-1 ', WHITE_SPACE_AT_AN_END],
    ['a leading space', ' order-1', WHITE_SPACE_AT_AN_END],
    ['a trailing no-break space', 'order-1\u00a0', WHITE_SPACE_AT_AN_END],
    ['white space at an end and a zero-width space', ' \u200b order', WHITE_SPACE_AT_AN_END],
    ['a zero-width space alone', '\u200b', INVISIBLE],
    ['a zero-width space', 'order\u200b-1', INVISIBLE],
    ['a zero-width joiner', 'order\u200d-1', INVISIBLE],
    ['a word joiner', 'order\u2060-1', INVISIBLE],
    ['a right-to-left override', 'order-\u202e1-txt', INVISIBLE],
    ['a byte order mark', '\ufefforder-1', INVISIBLE],
    ['a line separator', 'order\u2028-1', INVISIBLE],
    ['a paragraph separator', 'order\u2029-1', INVISIBLE],
    ['an inner no-break space', 'order\u00a01', INVISIBLE],
    ['an inner ideographic space', 'order\u30001', INVISIBLE],
    ['a control character', 'order\n1', INVISIBLE],
    ['half a surrogate pair', 'order-\ud800', INVISIBLE],
    ['the replacement character', 'cust-\ufffd', REPLACEMENT],
    ['"é" as "e" and a combining accent', 'cafe\u0301', NOT_NFC],
    ['the Angstrom sign, whose NFC is "Å"', '\u212b-1', NOT_NFC],
  ];

  describe.each(IDENTIFIER_FIELDS)('%s refuses %s holding', (route, field) => {
    it.each(REFUSED)('%s, with one issue saying why', async (_case, value, message) => {
      const service = setUp();
      await service.addBatch(validBatch);
      const result = await service[route](requestWith(route, field, value));
      expect(result.statusCode).toBe(400);
      expect(jsonBody(result)).toEqual({ message: 'Invalid request body', code: 'validation_failed', issues: [{ path: field, message: `${field} ${message}` }] });
      expect(service.repository.lines.size).toBe(0);
      expect([...service.repository.batches.keys()]).toEqual(['batch-1']);
    });
  });

  it.each([
    ['an accent in NFC', 'café'],
    ['inner spaces', 'LAMPE À POSER'],
    ['CJK characters', '注文-1'],
    ['an emoji', '📦-1'],
    ['128 characters', 'x'.repeat(128)],
  ])('accepts %s in every identifier, and stores it as sent', async (_case, value) => {
    const { addBatch, allocate, repository } = setUp();
    expect((await addBatch({ ...validBatch, ref: value, sku: value })).statusCode).toBe(201);
    expect((await allocate({ ...validLine, orderid: value, sku: value })).statusCode).toBe(201);
    expect([...repository.lines.values()].map(({ orderid, sku, batchref }) => [orderid, sku, batchref])).toEqual([[value, value, value]]);
  });
});

describe('the issues of a refused body', () => {
  /** A body each route that takes one accepts, and the path parameters it is sent with. */
  const ACCEPTED: Readonly<Record<string, { readonly body: Record<string, unknown>; readonly pathParameters?: Record<string, string> }>> = {
    'POST /add_batch': { body: validBatch },
    'PATCH /batches/{ref}': { body: { qty: 5, eta: '2027-03-01' }, pathParameters: { ref: 'batch-1' } },
    'POST /allocate': { body: validLine },
    'POST /orders': { body: { orderid: 'order-1', lines: [{ sku: 'LAMP', qty: 1 }] } },
    'POST /promises': { body: { lines: [{ sku: 'LAMP', qty: 1, split: 'batches' }], destination: { country: 'FR' }, location: 'default', split: 'none' } },
    'POST /holds': { body: { holdid: 'cart-1', lines: [{ sku: 'LAMP', qty: 1 }], ttl_seconds: 60 } },
    'PATCH /holds/{holdid}': { body: { ttl_seconds: 60 }, pathParameters: { holdid: 'cart-1' } },
    'POST /holds/{holdid}/confirm': { body: { orderid: 'order-1' }, pathParameters: { holdid: 'cart-1' } },
    'PUT /locations/{id}': {
      body: { name: 'Lyon', priority: 10, serves: ['FR', 'BE'], active: true, position: { lat: 45.76, lng: 4.84 }, handling_days: 1, transit_days: { FR: 1, '*': 3 } },
      pathParameters: { id: 'lyon' },
    },
    'POST /transfers': { body: { transferid: 'transfer-1', sku: 'LAMP', qty: 1, from: 'default', to: 'lyon', eta: '2027-03-01' } },
    'POST /shipments': { body: { shipmentid: 'parcel-1', orderid: 'order-1', location: 'default', lines: [{ sku: 'LAMP', qty: 1 }] } },
    'POST /adjustments': { body: { adjustmentid: 'count-1', ref: 'batch-1', reason: 'counted', qty: 5, counted_at: '2026-11-25T08:00:00Z', expected_qty: 4, note: 'aisle 3' } },
    'POST /imports': { body: { importid: 'feed-1', rows: [{ ref: 'batch-1', sku: 'LAMP', qty: 5, eta: null }], dry_run: false, validate_first: true } },
  };

  /** Stands for a number JSON.stringify cannot write: `1e400` in the text, which JSON.parse reads as Infinity. */
  const INFINITY = '<1e400>';

  /** What a client may send in place of a field's value, `undefined` for leaving the field out. */
  const BAD_VALUES: readonly (readonly [string, unknown])[] = [
    ['missing', undefined],
    ['null', null],
    ['a word', 'ten'],
    ['an empty string', ''],
    ['a number', 12],
    ['a negative number', -1],
    ['a fraction', 2.5],
    ['a number past every bound', 99999999999999999999999999],
    ['Infinity', INFINITY],
    ['true', true],
    ['an array', [1, 'x']],
    ['an object of nested garbage', { a: [1, { b: null }], c: { d: [] } }],
  ];

  /** The body with the field at `path` set to `value`, or left out, as the text sent. */
  const bodyWith = (body: Record<string, unknown>, path: readonly (string | number)[], value: unknown): string => {
    const copy = structuredClone(body);
    let parent: Record<string | number, unknown> = copy;
    for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
    const last = path.at(-1) as string | number;
    if (value === undefined) delete parent[last];
    else parent[last] = value;
    return JSON.stringify(copy).replaceAll(JSON.stringify(INFINITY), '1e400');
  };

  /** Every field of a body, a line's and a position's among them, and each line or entry of a list itself. */
  const fieldsOf = (body: Record<string, unknown>): (string | number)[][] =>
    Object.entries(body).flatMap(([name, value]) => {
      if (Array.isArray(value)) {
        const first: unknown = value[0];
        return [[name], [name, 0], ...(typeof first === 'object' && first !== null ? Object.keys(first).map((field) => [name, 0, field]) : [])];
      }
      return typeof value === 'object' && value !== null ? [[name], ...Object.keys(value).map((field) => [name, field])] : [[name]];
    });

  const send = async (routeKey: string, pathParameters: Record<string, string> | undefined, body: string) => {
    const service = setUp();
    await service.addBatch(validBatch);
    const result = await service.send(routeKey as RouteKey, { pathParameters, body, raw: true });
    const issues: { path: string; message: string }[] | undefined = result.statusCode === 400 ? jsonBody(result).issues : undefined;
    return { status: result.statusCode, issues };
  };

  /** Our voice: the field's name, then that it is required, what it must be, or that the route takes no such field; never zod's "Invalid input: expected X, received Y". */
  const voiceProblems = (issues: readonly { path: string; message: string }[]) =>
    issues.flatMap(({ path, message }) => {
      const name = path === '' ? 'the body' : path;
      const problems = [];
      const named = [`${name} is required: `, `${name} must `, `${name} is not a field of this route`].some((start) => message.startsWith(start));
      if (!named) problems.push(`does not name ${name} first`);
      if (/invalid input|expected .+, received|too (big|small)/i.test(message)) problems.push("speaks in zod's voice");
      return problems.map((problem) => `${path}: "${message}" ${problem}`);
    });

  it('covers every route that takes a body', () => {
    const document = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
    const withBody = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).flatMap(([method, operation]) => (operation.requestBody ? [`${method.toUpperCase()} ${path}`] : [])),
    );
    expect(Object.keys(ACCEPTED).sort()).toEqual(withBody.sort());
  });

  it.each(Object.entries(ACCEPTED))('%s answers each bad field with one issue, naming the field, in our voice', async (routeKey, { body, pathParameters }) => {
    const problems: string[] = [];
    for (const path of fieldsOf(body)) {
      for (const [what, value] of BAD_VALUES) {
        const { status, issues = [] } = await send(routeKey, pathParameters, bodyWith(body, path, value));
        const where = `${path.join('.')} ${what}`;
        // Some of these are good values for some fields (12 for a qty, null for an eta): those may pass, and none may fail the server.
        if (status === undefined || status >= 500) problems.push(`${where}: answered ${status}`);
        if (status !== 400) continue;
        const paths = issues.map((issue) => issue.path);
        if (new Set(paths).size !== paths.length) problems.push(`${where}: more than one issue for a field: ${JSON.stringify(issues)}`);
        problems.push(...voiceProblems(issues).map((problem) => `${where}: ${problem}`));
      }
    }
    expect(problems).toEqual([]);
  });

  it.each(Object.entries(ACCEPTED))('%s answers a body that is not an object with one issue, naming the body', async (routeKey, { pathParameters }) => {
    for (const body of ['[]', '"body"', '12', 'null', 'true']) {
      const { status, issues } = await send(routeKey, pathParameters, body);
      expect({ status, problems: voiceProblems(issues ?? []), count: issues?.length }).toEqual({ status: 400, problems: [], count: 1 });
    }
  });

  it.each([
    ['qty missing', 'POST /add_batch', { ref: 'batch-1', sku: 'LAMP', eta: null }, 'qty', 'qty is required: an integer from 1 to 1000000000'],
    ['qty past every bound', 'POST /add_batch', { ...validBatch, qty: 99999999999999999999999999 }, 'qty', 'qty must be an integer from 1 to 1000000000'],
    ['qty Infinity', 'POST /allocate', { ...validLine, qty: INFINITY }, 'qty', 'qty must be an integer from 1 to 1000000000'],
    ['qty null', 'PATCH /batches/{ref}', { qty: null }, 'qty', 'qty must be an integer from 0 to 1000000000'],
    ['eta missing', 'POST /add_batch', { ref: 'batch-1', sku: 'LAMP', qty: 1 }, 'eta', 'eta is required: a date YYYY-MM-DD, or null'],
    ['eta not a real date', 'POST /add_batch', { ...validBatch, eta: '2027-02-30' }, 'eta', 'eta must be a date YYYY-MM-DD, or null'],
    ['orderid missing', 'POST /allocate', { sku: 'LAMP', qty: 1 }, 'orderid', `orderid is required: an identifier, a string of 1 to 128 characters`],
    ['sku a number', 'POST /allocate', { ...validLine, sku: 42 }, 'sku', `sku must be an identifier, a string of 1 to 128 characters`],
    ['sku blank', 'POST /allocate', { ...validLine, sku: ' ' }, 'sku', 'sku must not be blank'],
    ['lines missing', 'POST /orders', { orderid: 'order-1' }, 'lines', 'lines is required: an array of 1 to 25 lines {sku, qty}, each sku once'],
    ['a line null', 'POST /orders', { orderid: 'order-1', lines: [null] }, 'lines.0', 'lines.0 must be an object {sku, qty, split}'],
    ['a line without qty', 'POST /holds', { holdid: 'cart-1', lines: [{ sku: 'LAMP' }] }, 'lines.0.qty', 'lines.0.qty is required: an integer from 1 to 1000000000'],
    ['ttl_seconds missing', 'PATCH /holds/{holdid}', {}, 'ttl_seconds', 'ttl_seconds is required: an integer from 1 to 86400'],
    ['the body an array', 'POST /holds/{holdid}/confirm', [], '', 'the body must be an object {orderid}'],
  ] as const)('says what %s is and what the field accepts', async (_case, routeKey, body, path, message) => {
    const { pathParameters } = ACCEPTED[routeKey] ?? {};
    const { status, issues } = await send(routeKey, pathParameters, JSON.stringify(body).replaceAll(JSON.stringify(INFINITY), '1e400'));
    expect({ status, issues }).toEqual({ status: 400, issues: [{ path, message }] });
  });
});

describe('when the store fails', () => {
  it('answers 503 with Retry-After when the store is unavailable', async () => {
    const { repository, allocate } = setUp();
    repository.stockOf = async () => {
      throw new StoreUnavailable('The store did not answer');
    };
    const result = await allocate(validLine);
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['Retry-After']).toBe('1');
    expect(jsonBody(result).message).toMatch(/retry/i);
  });

  it('answers 503 with Retry-After when the store outlasts the time the function has left', async () => {
    const { repository } = setUp();
    repository.stockOf = () => new Promise(() => {});
    const nearlyOutOfTime = { ...lambdaContext(), getRemainingTimeInMillis: () => 50 };
    const result = await createAllocationsHandler(repository)(postEvent('/allocate', validLine), nearlyOutOfTime);
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['Retry-After']).toBe('1');
  });

  it('answers 503 when the allocation keeps losing the race for stock', async () => {
    const { repository, addBatch, allocate } = setUp();
    await addBatch(validBatch);
    repository.saveAllocation = async () => ({ outcome: 'batch-changed' });
    const result = await allocate(validLine);
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['Retry-After']).toBe('1');
  });

  it('answers 500 with a generic message and the request id, never the error text', async () => {
    const { repository } = setUp();
    repository.stockOf = async () => {
      throw new Error('AccessDeniedException: User arn:aws:iam::123:role/x is not authorized');
    };
    const event = postEvent('/allocate', validLine);
    const result = await createAllocationsHandler(repository)(event, lambdaContext());
    expect(result.statusCode).toBe(500);
    expect(jsonBody(result)).toEqual({ message: 'Internal server error', code: 'internal_error', request_id: event.requestContext.requestId });
    expect(result.body).not.toMatch(/AccessDenied|arn:aws|at /);
  });
});

const shipment = { ref: 'batch-2', sku: 'LAMP', qty: 10, eta: '2027-01-01' };

describe('GET /allocations/{orderid}', () => {
  it("answers 200 with the order's lines, sorted by sku, each with its batch and that batch's location", async () => {
    const { addBatch, allocate, send } = setUp();
    await addBatch(validBatch);
    await addBatch({ ref: 'chairs', sku: 'CHAIR', qty: 5, eta: null });
    await allocate(validLine);
    await allocate({ orderid: 'order-1', sku: 'CHAIR', qty: 2 });
    await allocate({ orderid: 'order-2', sku: 'LAMP', qty: 1 });
    const result = await send('GET /allocations/{orderid}', { pathParameters: { orderid: 'order-1' } });
    expect(result.statusCode).toBe(200);
    expect(jsonBody(result)).toEqual({
      orderid: 'order-1',
      lines: [
        { sku: 'CHAIR', qty: 2, batchref: 'chairs', location: 'default' },
        { sku: 'LAMP', qty: 3, batchref: 'batch-1', location: 'default' },
      ],
    });
  });

  it('answers 404 for an order with no lines', async () => {
    const result = await setUp().send('GET /allocations/{orderid}', { pathParameters: { orderid: 'order-9' } });
    expect(result.statusCode).toBe(404);
    expect(jsonBody(result)).toEqual({ message: 'Order order-9 has no allocations', code: 'unknown_order' });
  });
});

describe('DELETE /allocations/{orderid}/{sku}', () => {
  const cancelLine = { pathParameters: { orderid: 'order-1', sku: 'LAMP' } };

  it('answers 204 with no body and no Content-Type, and gives the line its stock back', async () => {
    const { addBatch, allocate, send, repository } = setUp();
    await addBatch(validBatch);
    await allocate(validLine);
    const result = await send('DELETE /allocations/{orderid}/{sku}', cancelLine);
    expect(result.statusCode).toBe(204);
    expect(result.body).toBeUndefined();
    expect(result.headers?.['Content-Type']).toBeUndefined();
    expect(repository.lines.size).toBe(0);
    expect(repository.batches.get('batch-1')?.available).toBe(10);
  });

  it('leaves the order unreadable once its last line is cancelled', async () => {
    const { addBatch, allocate, send } = setUp();
    await addBatch(validBatch);
    await allocate(validLine);
    await send('DELETE /allocations/{orderid}/{sku}', cancelLine);
    const result = await send('GET /allocations/{orderid}', { pathParameters: { orderid: 'order-1' } });
    expect(result.statusCode).toBe(404);
  });

  it('answers 404 to a repeat, and gives no stock back twice', async () => {
    const { addBatch, allocate, send, repository } = setUp();
    await addBatch(validBatch);
    await allocate(validLine);
    await allocate({ orderid: 'order-2', sku: 'LAMP', qty: 4 });
    await send('DELETE /allocations/{orderid}/{sku}', cancelLine);
    const repeat = await send('DELETE /allocations/{orderid}/{sku}', cancelLine);
    expect(repeat.statusCode).toBe(404);
    expect(jsonBody(repeat)).toEqual({ message: 'Order order-1 has no line for sku LAMP', code: 'unknown_line' });
    expect(repository.batches.get('batch-1')?.available).toBe(6);
  });

  it('answers 404 for a line the order never had, and changes nothing', async () => {
    const { addBatch, allocate, send, repository } = setUp();
    await addBatch(validBatch);
    await allocate(validLine);
    const result = await send('DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid: 'order-1', sku: 'CHAIR' } });
    expect(result.statusCode).toBe(404);
    expect(jsonBody(result)).toEqual({ message: 'Order order-1 has no line for sku CHAIR', code: 'unknown_line' });
    expect(repository.lines.size).toBe(1);
    expect(repository.batches.get('batch-1')?.available).toBe(7);
  });

  it('lets the same order and SKU be allocated again, with another qty, as a new line', async () => {
    const { addBatch, allocate, send, repository } = setUp();
    await addBatch(validBatch);
    await allocate(validLine);
    await send('DELETE /allocations/{orderid}/{sku}', cancelLine);
    const again = await allocate({ ...validLine, qty: 8 });
    expect(again.statusCode).toBe(201);
    expect(repository.batches.get('batch-1')?.available).toBe(2);
  });
});

describe('GET /batches/{ref}', () => {
  it('answers 200 with the batch, what its lines hold and what is left', async () => {
    const { addBatch, allocate, send } = setUp();
    await addBatch(shipment);
    await allocate(validLine);
    const result = await send('GET /batches/{ref}', { pathParameters: { ref: 'batch-2' } });
    expect(result.statusCode).toBe(200);
    expect(jsonBody(result)).toEqual({ ref: 'batch-2', sku: 'LAMP', qty: 10, allocated: 3, held: 0, available: 7, eta: '2027-01-01', location: 'default' });
  });

  it('shows no less than 0 available while a batch whose qty was lowered still has lines to move', async () => {
    const { send, repository } = setUp();
    repository.batches.set('batch-1', { ...validBatch, qty: 3, available: -2 });
    const result = await send('GET /batches/{ref}', { pathParameters: { ref: 'batch-1' } });
    expect(jsonBody(result)).toMatchObject({ qty: 3, allocated: 5, available: 0 });
  });

  it('answers 404 for a reference never added', async () => {
    const result = await setUp().send('GET /batches/{ref}', { pathParameters: { ref: 'batch-9' } });
    expect(result.statusCode).toBe(404);
    expect(jsonBody(result)).toEqual({ message: 'Batch batch-9 not found', code: 'unknown_batch' });
  });
});

describe('PATCH /batches/{ref}', () => {
  const change = (body: unknown, options: RouteEventOptions = {}) => ({ pathParameters: { ref: 'batch-1' }, body, ...options });

  it('answers 200 with the batch as changed and nothing reallocated when its lines still fit', async () => {
    const { addBatch, allocate, send, repository } = setUp();
    await addBatch(validBatch);
    await allocate(validLine);
    const result = await send('PATCH /batches/{ref}', change({ qty: 12, eta: '2027-02-01' }));
    expect(result.statusCode).toBe(200);
    expect(jsonBody(result)).toEqual({
      ref: 'batch-1',
      sku: 'LAMP',
      qty: 12,
      allocated: 3,
      held: 0,
      available: 9,
      eta: '2027-02-01',
      location: 'default',
      reallocated: [],
    });
    expect(repository.batches.get('batch-1')).toMatchObject({ qty: 12, available: 9, eta: '2027-02-01' });
  });

  it('changes the eta alone, to null for a shipment that arrived, and keeps the qty', async () => {
    const { addBatch, send } = setUp();
    await addBatch({ ...shipment, ref: 'batch-1' });
    const result = await send('PATCH /batches/{ref}', change({ eta: null }));
    expect(jsonBody(result)).toMatchObject({ qty: 10, eta: null, reallocated: [] });
  });

  it('empties the batch with qty 0, moving each line to another batch, newest first, and reports each', async () => {
    const { addBatch, allocate, send, repository } = setUp();
    await addBatch(validBatch);
    await allocate(validLine);
    await allocate({ orderid: 'order-2', sku: 'LAMP', qty: 4 });
    await addBatch(shipment);
    const result = await send('PATCH /batches/{ref}', change({ qty: 0 }));
    expect(result.statusCode).toBe(200);
    expect(jsonBody(result)).toEqual({
      ref: 'batch-1',
      sku: 'LAMP',
      qty: 0,
      allocated: 0,
      held: 0,
      available: 0,
      eta: null,
      location: 'default',
      reallocated: [
        { orderid: 'order-2', sku: 'LAMP', qty: 4, from: 'batch-1', batchref: 'batch-2' },
        { orderid: 'order-1', sku: 'LAMP', qty: 3, from: 'batch-1', batchref: 'batch-2' },
      ],
    });
    expect(repository.batches.get('batch-2')?.available).toBe(3);
  });

  it('takes a line no other batch can hold off its order, with batchref null', async () => {
    const { addBatch, allocate, send } = setUp();
    await addBatch(validBatch);
    await allocate(validLine);
    const result = await send('PATCH /batches/{ref}', change({ qty: 0 }));
    expect(jsonBody(result).reallocated).toEqual([{ orderid: 'order-1', sku: 'LAMP', qty: 3, from: 'batch-1', batchref: null }]);
    expect((await send('GET /allocations/{orderid}', { pathParameters: { orderid: 'order-1' } })).statusCode).toBe(404);
  });

  it('refuses a field it does not take, the batch\'s ref and prototype keys among them, and changes nothing', async () => {
    const { addBatch, send, repository } = setUp();
    await addBatch(validBatch);
    const result = await send('PATCH /batches/{ref}', change('{"qty":12,"ref":"other","__proto__":{"qty":0}}', { raw: true }));
    expect(result.statusCode).toBe(400);
    expect(jsonBody(result).issues.map(({ path }: { path: string }) => path)).toEqual(['ref', '__proto__']);
    expect(repository.batches.get('batch-1')?.qty).toBe(validBatch.qty);
  });

  it('answers a misspelled qty with both of what is wrong: the field it does not take, and neither qty nor eta', async () => {
    const { addBatch, send } = setUp();
    await addBatch(validBatch);
    const result = await send('PATCH /batches/{ref}', change({ quantity: 5 }));
    expect(jsonBody(result)).toEqual({
      message: 'Invalid request body', code: 'validation_failed',
      issues: [
        { path: 'quantity', message: 'quantity is not a field of this route' },
        { path: '', message: 'the body must have qty or eta, or both' },
      ],
    });
  });

  it('answers 404 for a reference never added', async () => {
    const result = await setUp().send('PATCH /batches/{ref}', change({ qty: 5 }));
    expect(result.statusCode).toBe(404);
    expect(jsonBody(result)).toEqual({ message: 'Batch batch-1 not found', code: 'unknown_batch' });
  });

  it.each([
    ['neither qty nor eta', {}, '', 'the body must have qty or eta, or both'],
    ['qty negative', { qty: -1 }, 'qty', 'qty must be an integer from 0 to 1000000000'],
    ['qty fractional', { qty: 2.5 }, 'qty', 'qty must be an integer from 0 to 1000000000'],
    ['qty past the bound', { qty: 1_000_000_001 }, 'qty', 'qty must be an integer from 0 to 1000000000'],
    ['qty null', { qty: null }, 'qty', 'qty must be an integer from 0 to 1000000000'],
    ['eta not a real date', { eta: '2027-02-30' }, 'eta', 'eta must be a date YYYY-MM-DD, or null'],
    ['eta a number', { eta: 20270201 }, 'eta', 'eta must be a date YYYY-MM-DD, or null'],
    ['the body an array', [{ qty: 5 }], '', 'the body must be an object {qty, eta}'],
  ])('answers 400 with one issue, and changes nothing, when %s', async (_case, body, path, message) => {
    const { addBatch, send, repository } = setUp();
    await addBatch(validBatch);
    const result = await send('PATCH /batches/{ref}', change(body));
    expect(result.statusCode).toBe(400);
    expect(jsonBody(result)).toEqual({ message: 'Invalid request body', code: 'validation_failed', issues: [{ path, message }] });
    expect(repository.batches.get('batch-1')).toEqual({ ...validBatch, available: 10 });
  });

  it.each([
    ['415 for a body that is not JSON by its Content-Type', change({ qty: 5 }, { contentType: 'text/plain' }), 415],
    ['415 for no Content-Type', change({ qty: 5 }, { contentType: null }), 415],
    ['413 for a body over 16 KiB', change({ qty: 5, padding: 'x'.repeat(16 * 1024) }), 413],
    ['400 for bytes that are not UTF-8', change(withBytes('{"qty": 5, "note": "@"}', [0xff])), 400],
    ['400 for malformed JSON', change('{"qty":', { raw: true }), 400],
    ['400 for no body', change(undefined, { contentType: 'application/json' }), 400],
  ])('answers %s, as every body is checked', async (_case, options, status) => {
    const { addBatch, send, repository } = setUp();
    await addBatch(validBatch);
    const result = await send('PATCH /batches/{ref}', options);
    expect(result.statusCode).toBe(status);
    expect(typeof jsonBody(result).message).toBe('string');
    expect(repository.batches.get('batch-1')?.qty).toBe(10);
  });

  it('answers 503 with Retry-After when the batch keeps changing under the write', async () => {
    const { addBatch, send, repository } = setUp();
    await addBatch(validBatch);
    repository.changeBatch = async () => ({ outcome: 'changed' });
    const result = await send('PATCH /batches/{ref}', change({ qty: 5 }));
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['Retry-After']).toBe('1');
  });
});

describe('GET /skus/{sku}/stock', () => {
  it('answers 200 with what is on the shelf, what is coming and when, and the batches with stock in the order allocation prefers', async () => {
    const { addBatch, allocate, send } = setUp();
    await addBatch(validBatch);
    await addBatch({ ref: 'late', sku: 'LAMP', qty: 5, eta: '2027-06-01' });
    await addBatch({ ref: 'early', sku: 'LAMP', qty: 4, eta: '2027-01-01' });
    await addBatch({ ref: 'a-small', sku: 'LAMP', qty: 2, eta: null });
    await allocate(validLine);
    // Empties a-small, which is then left out of the batches with stock, though its units are on the shelf still.
    await allocate({ orderid: 'order-2', sku: 'LAMP', qty: 2 });
    const result = await send('GET /skus/{sku}/stock', { pathParameters: { sku: 'LAMP' } });
    expect(result.statusCode).toBe(200);
    expect(jsonBody(result)).toEqual({
      sku: 'LAMP',
      in_stock: 7,
      incoming: 9,
      held: 0,
      next_eta: '2027-01-01',
      on_hand: 12,
      committed: 5,
      batches: [
        { ref: 'batch-1', qty: 10, held: 0, available: 7, eta: null },
        { ref: 'early', qty: 4, held: 0, available: 4, eta: '2027-01-01' },
        { ref: 'late', qty: 5, held: 0, available: 5, eta: '2027-06-01' },
      ],
      locations: [{ location: 'default', in_stock: 7, incoming: 9, held: 0, next_eta: '2027-01-01', on_hand: 12, committed: 5 }],
    });
  });

  it('answers 404 "Invalid sku" for a SKU never added', async () => {
    const result = await setUp().send('GET /skus/{sku}/stock', { pathParameters: { sku: 'NOPE' } });
    expect(result.statusCode).toBe(404);
    expect(jsonBody(result)).toEqual({ message: 'Invalid sku NOPE', code: 'unknown_sku' });
  });

  it("takes back a location as GET shows it, its id the path's, and refuses a body naming another id", async () => {
    const { send } = setUp();
    const lyon = { id: 'lyon', name: 'Lyon', priority: 5, serves: ['FR'], active: true };
    expect((await send('PUT /locations/{id}', { pathParameters: { id: 'lyon' }, body: lyon })).statusCode).toBe(201);
    const read = jsonBody(await send('GET /locations/{id}', { pathParameters: { id: 'lyon' } }));
    expect((await send('PUT /locations/{id}', { pathParameters: { id: 'lyon' }, body: { ...read, priority: 6 } })).statusCode).toBe(200);
    const elsewhere = await send('PUT /locations/{id}', { pathParameters: { id: 'nantes' }, body: lyon });
    expect(elsewhere.statusCode).toBe(400);
    expect(jsonBody(elsewhere).issues).toEqual([{ path: 'id', message: "id must be the path's, nantes, or absent: the body names lyon" }]);
    expect((await send('GET /locations/{id}', { pathParameters: { id: 'nantes' } })).statusCode).toBe(404);
  });

  /** A SKU at `default` (priority 0), at `nantes` (priority 5) and at `lyon` (priority 5). */
  const atThreePlaces = async () => {
    const context = setUp();
    for (const id of ['lyon', 'nantes']) {
      await context.send('PUT /locations/{id}', { pathParameters: { id }, body: { name: id, priority: 5, serves: ['FR'] } });
    }
    await context.addBatch({ ref: 'shelf-lyon', sku: 'LAMP', qty: 3, eta: null, location: 'lyon' });
    await context.addBatch({ ref: 'ship-lyon', sku: 'LAMP', qty: 6, eta: '2027-02-01', location: 'lyon' });
    await context.addBatch({ ref: 'shelf-nantes', sku: 'LAMP', qty: 2, eta: null, location: 'nantes' });
    await context.addBatch({ ref: 'shelf-main', sku: 'LAMP', qty: 10, eta: null });
    await context.addBatch({ ref: 'ship-main', sku: 'LAMP', qty: 4, eta: '2027-01-01' });
    return context;
  };

  it('answers the levels at each location that has a batch with stock, by priority then id, and the totals as their sums', async () => {
    const { send } = await atThreePlaces();
    const body = jsonBody(await send('GET /skus/{sku}/stock', { pathParameters: { sku: 'LAMP' } }));
    expect(body).toMatchObject({ in_stock: 15, incoming: 10, held: 0, next_eta: '2027-01-01', on_hand: 15, committed: 0 });
    expect(body.locations).toEqual([
      { location: 'default', in_stock: 10, incoming: 4, held: 0, next_eta: '2027-01-01', on_hand: 10, committed: 0 },
      { location: 'lyon', in_stock: 3, incoming: 6, held: 0, next_eta: '2027-02-01', on_hand: 3, committed: 0 },
      { location: 'nantes', in_stock: 2, incoming: 0, held: 0, next_eta: null, on_hand: 2, committed: 0 },
    ]);
  });

  it('answers one location alone for ?location=, its batches and its totals', async () => {
    const { send } = await atThreePlaces();
    const result = await send('GET /skus/{sku}/stock', { pathParameters: { sku: 'LAMP' }, queryStringParameters: { location: 'lyon' } });
    expect(result.statusCode).toBe(200);
    expect(jsonBody(result)).toEqual({
      sku: 'LAMP',
      in_stock: 3,
      incoming: 6,
      held: 0,
      next_eta: '2027-02-01',
      on_hand: 3,
      committed: 0,
      batches: [
        { ref: 'shelf-lyon', qty: 3, held: 0, available: 3, eta: null },
        { ref: 'ship-lyon', qty: 6, held: 0, available: 6, eta: '2027-02-01' },
      ],
      locations: [{ location: 'lyon', in_stock: 3, incoming: 6, held: 0, next_eta: '2027-02-01', on_hand: 3, committed: 0 }],
    });
  });

  it('answers zeros for a location that exists with no stock of the SKU, default among them', async () => {
    const { addBatch, send } = await atThreePlaces();
    await addBatch({ ref: 'chair-lyon', sku: 'CHAIR', qty: 1, eta: null, location: 'lyon' });
    const result = await send('GET /skus/{sku}/stock', { pathParameters: { sku: 'CHAIR' }, queryStringParameters: { location: 'default' } });
    expect(jsonBody(result)).toEqual({
      sku: 'CHAIR',
      in_stock: 0,
      incoming: 0,
      held: 0,
      next_eta: null,
      on_hand: 0,
      committed: 0,
      batches: [],
      locations: [{ location: 'default', in_stock: 0, incoming: 0, held: 0, next_eta: null, on_hand: 0, committed: 0 }],
    });
  });

  it('answers 404 for a location that does not exist, and 400 for a location id that breaks its rules', async () => {
    const { send } = await atThreePlaces();
    const unknown = await send('GET /skus/{sku}/stock', { pathParameters: { sku: 'LAMP' }, queryStringParameters: { location: 'paris' } });
    expect(unknown.statusCode).toBe(404);
    expect(jsonBody(unknown)).toEqual({ message: 'Location paris not found', code: 'unknown_location' });
    // API Gateway joins a repeated parameter's values with a comma.
    const repeated = await send('GET /skus/{sku}/stock', { pathParameters: { sku: 'LAMP' }, queryStringParameters: { location: 'lyon,nantes' } });
    expect(repeated.statusCode).toBe(400);
    expect(jsonBody(repeated)).toEqual({
      message: 'Invalid request', code: 'validation_failed',
      issues: [{ path: 'location', message: 'location must be a location id, 1 to 64 letters (a-z, A-Z), digits, - and _' }],
    });
  });

  it('answers 404 "Invalid sku" before it looks at the location', async () => {
    const result = await setUp().send('GET /skus/{sku}/stock', { pathParameters: { sku: 'NOPE' }, queryStringParameters: { location: 'paris' } });
    expect(jsonBody(result)).toEqual({ message: 'Invalid sku NOPE', code: 'unknown_sku' });
  });

  it('refuses a query parameter it does not take, naming it: a misspelled location is not the whole stock', async () => {
    const { send } = await atThreePlaces();
    const result = await send('GET /skus/{sku}/stock', { pathParameters: { sku: 'LAMP' }, queryStringParameters: { Location: 'paris' } });
    expect(result.statusCode).toBe(400);
    expect(jsonBody(result)).toEqual({ message: 'Invalid request', code: 'validation_failed', issues: [{ path: 'Location', message: 'Location is not a query parameter of this route' }] });
  });

  it("takes a SigV4 presigned URL's parameters, which API Gateway checks, as no query parameter", async () => {
    const { send } = await atThreePlaces();
    const result = await send('GET /skus/{sku}/stock', { pathParameters: { sku: 'LAMP' }, queryStringParameters: { 'X-Amz-Signature': 'abc', 'X-Amz-Date': '20261128T000000Z' } });
    expect(result.statusCode).toBe(200);
  });

  it('refuses any query parameter on a route that takes none', async () => {
    const { send } = await atThreePlaces();
    const result = await send('GET /locations', { queryStringParameters: { page: '2' } });
    expect(result.statusCode).toBe(400);
    expect(jsonBody(result).issues).toEqual([{ path: 'page', message: 'page is not a query parameter of this route' }]);
  });
});

describe('path parameters', () => {
  const PARAMETERS: readonly (readonly [RouteKey, string])[] = [
    ['GET /batches/{ref}', 'ref'],
    ['PATCH /batches/{ref}', 'ref'],
    ['GET /skus/{sku}/stock', 'sku'],
    ['GET /allocations/{orderid}', 'orderid'],
    ['DELETE /allocations/{orderid}/{sku}', 'orderid'],
    ['DELETE /allocations/{orderid}/{sku}', 'sku'],
  ];
  const validParameters = { ref: 'batch-1', sku: 'LAMP', orderid: 'order-1' };
  const requestWith = (name: string, value: string): RouteEventOptions => ({
    pathParameters: { ...validParameters, [name]: value },
    body: { qty: 1 },
  });

  describe.each(PARAMETERS)('%s refuses %s', (routeKey, name) => {
    it.each([
      ['empty', '', 'must not be empty'],
      ['too long', 'x'.repeat(129), 'must be at most 128 characters'],
      ['blank', ' ', 'must not be blank'],
      ['with white space at an end', 'LAMP ', 'must not begin or end with white space'],
      ['holding U+FFFD', 'cust-\ufffd', 'must not contain U+FFFD, the character that stands for bytes that could not be decoded'],
      ['holding a zero-width space', 'LA\u200bMP', 'must not contain invisible or control characters'],
      ['holding a control character', 'LA\nMP', 'must not contain invisible or control characters'],
      ['not in NFC', 'cafe\u0301', 'must be in Unicode normalization form NFC'],
    ])('%s, with 400 and an issue naming it, and changes nothing', async (_case, value, message) => {
      const { addBatch, allocate, send, repository } = setUp();
      await addBatch(validBatch);
      await allocate(validLine);
      const result = await send(routeKey, requestWith(name, value));
      expect(result.statusCode).toBe(400);
      expect(jsonBody(result)).toEqual({ message: 'Invalid request', code: 'validation_failed', issues: [{ path: name, message: `${name} ${message}` }] });
      expect(repository.batches.get('batch-1')).toEqual({ ...validBatch, available: 7 });
      expect(repository.lines.size).toBe(1);
    });
  });

  it('names each bad parameter in its own issue, in the order of the path', async () => {
    const result = await setUp().send('DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid: ' ', sku: '' } });
    expect(jsonBody(result).issues).toEqual([
      { path: 'orderid', message: 'orderid must not be blank' },
      { path: 'sku', message: 'sku must not be empty' },
    ]);
  });

  it('refuses a bad path parameter before reading the body', async () => {
    const result = await setUp().send('PATCH /batches/{ref}', { pathParameters: { ref: ' ' }, body: 'hello', contentType: 'text/plain' });
    expect(result.statusCode).toBe(400);
    expect(jsonBody(result).message).toBe('Invalid request');
  });

  it.each([
    ['an accent in NFC and an inner space', 'lampe à poser'],
    ['an emoji', '📦-1'],
    ['what would be a percent-encoding, taken as sent: API Gateway has decoded the path already', 'batch%201'],
    ['a slash', 'batch/1'],
  ])('accepts %s, as the same key as in a body', async (_case, ref) => {
    const { addBatch, send } = setUp();
    await addBatch({ ...validBatch, ref });
    const result = await send('GET /batches/{ref}', { pathParameters: { ref } });
    expect(result.statusCode).toBe(200);
    expect(jsonBody(result).ref).toBe(ref);
  });
});

describe('the path parameter of a location', () => {
  it.each([
    ['empty', ''],
    ['too long', 'x'.repeat(65)],
    ['holding a space', 'lyon 2'],
    ['holding a letter with an accent', 'lyön'],
    ['holding a slash', 'lyon/2'],
  ])('refuses an id %s, with 400 and an issue naming id, on each route of a location', async (_case, id) => {
    const { send, repository } = setUp();
    const body = { name: 'Lyon', priority: 10, serves: ['FR'] };
    for (const routeKey of ['GET /locations/{id}', 'PUT /locations/{id}'] as const) {
      const result = await send(routeKey, { pathParameters: { id }, body });
      expect(result.statusCode).toBe(400);
      expect(jsonBody(result)).toEqual({
        message: 'Invalid request', code: 'validation_failed',
        issues: [{ path: 'id', message: 'id must be a location id, 1 to 64 letters (a-z, A-Z), digits, - and _' }],
      });
    }
    expect(repository.locationItems.size).toBe(0);
  });
});

describe('routes without a body', () => {
  it.each([
    ['a body that is not JSON', { body: 'hello', raw: true, contentType: 'text/plain' }],
    ['a body over 16 KiB', { body: { padding: 'x'.repeat(2 * 1024 * 1024) } }],
    ['bytes that are not UTF-8', { body: withBytes('@', [0xff]), contentType: 'application/json' }],
    ['a Content-Type sent twice', { contentType: 'application/json,application/json' }],
  ])('ignore %s and its Content-Type, reading and cancelling as usual', async (_case, options: RouteEventOptions) => {
    const { addBatch, allocate, send } = setUp();
    await addBatch(validBatch);
    await allocate(validLine);
    const reads = [
      send('GET /batches/{ref}', { ...options, pathParameters: { ref: 'batch-1' } }),
      send('GET /skus/{sku}/stock', { ...options, pathParameters: { sku: 'LAMP' } }),
      send('GET /allocations/{orderid}', { ...options, pathParameters: { orderid: 'order-1' } }),
    ];
    expect((await Promise.all(reads)).map((result) => result.statusCode)).toEqual([200, 200, 200]);
    const cancelled = await send('DELETE /allocations/{orderid}/{sku}', { ...options, pathParameters: { orderid: 'order-1', sku: 'LAMP' } });
    expect(cancelled.statusCode).toBe(204);
  });
});

describe('the route table', () => {
  it.each([
    ['batches', 'POST /allocate'],
    ['allocations', 'POST /add_batch'],
    ['batches', 'GET /batches'],
  ] as const)('the %s handler answers 404 "Not Found" to the route key %s, which it does not route', async (handler, routeKey) => {
    const service = setUp();
    const result = await service[handler](routeEvent(routeKey, { body: validBatch }), lambdaContext());
    expect(result.statusCode).toBe(404);
    expect(jsonBody(result)).toEqual({ message: 'Not Found' });
    expect(service.repository.batches.size).toBe(0);
  });

  it.each([...routeKeys.batches, ...routeKeys.allocations])('routes %s, as the stack and the local server send it', async (routeKey) => {
    const result = await setUp().send(routeKey, { pathParameters: { ref: 'batch-1', sku: 'LAMP', orderid: 'order-1' }, body: {} });
    expect(jsonBody(result).message).not.toBe('Not Found');
  });

  it.each([
    ['POST /add_batch', { body: validBatch }],
    ['GET /batches/{ref}', { pathParameters: { ref: 'batch-1' } }],
    ['PATCH /batches/{ref}', { pathParameters: { ref: 'batch-1' }, body: { qty: 4 } }],
    ['GET /skus/{sku}/stock', { pathParameters: { sku: 'LAMP' } }],
    ['POST /allocate', { body: validLine }],
    ['POST /orders', { body: { orderid: 'order-2', lines: [{ sku: 'LAMP', qty: 1 }] } }],
    ['GET /allocations/{orderid}', { pathParameters: { orderid: 'order-1' } }],
    ['DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid: 'order-1', sku: 'LAMP' } }],
  ] as const)("hands %s's store calls the request's deadline", async (routeKey, options) => {
    const { repository, addBatch, allocate, send } = setUp();
    await addBatch({ ...validBatch, ref: 'batch-0' });
    await allocate(validLine);
    const withDeadline = vi.spyOn(repository, 'withDeadline');
    await send(routeKey, options);
    expect(withDeadline.mock.calls).toEqual([[expect.any(AbortSignal), expect.anything(), expect.any(String)]]);
  });

  it('answers 503 with Retry-After when the store outlasts the time a read has left', async () => {
    const { repository, batches } = setUp();
    repository.batch = () => new Promise(() => {});
    const nearlyOutOfTime = { ...lambdaContext(), getRemainingTimeInMillis: () => 50 };
    const result = await batches(routeEvent('GET /batches/{ref}', { pathParameters: { ref: 'batch-1' } }), nearlyOutOfTime);
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['Retry-After']).toBe('1');
  });
});

describe('the request log of each route', () => {
  it.each([
    ['GET /batches/{ref}', 200, 'BatchRead', { pathParameters: { ref: 'batch-1' } }],
    ['GET /batches/{ref}', 404, 'BatchNotFound', { pathParameters: { ref: 'batch-9' } }],
    ['PATCH /batches/{ref}', 200, 'BatchChanged', { pathParameters: { ref: 'batch-1' }, body: { qty: 12 } }],
    ['PATCH /batches/{ref}', 400, 'InvalidRequestBody', { pathParameters: { ref: 'batch-1' }, body: {} }],
    ['GET /skus/{sku}/stock', 200, 'StockRead', { pathParameters: { sku: 'LAMP' } }],
    ['GET /skus/{sku}/stock', 404, 'UnknownSku', { pathParameters: { sku: 'NOPE' } }],
    ['GET /allocations/{orderid}', 200, 'OrderRead', { pathParameters: { orderid: 'order-1' } }],
    ['GET /allocations/{orderid}', 404, 'OrderNotFound', { pathParameters: { orderid: 'order-9' } }],
    ['GET /allocations/{orderid}', 400, 'InvalidPathParameters', { pathParameters: { orderid: ' ' } }],
    ['DELETE /allocations/{orderid}/{sku}', 204, 'LineCancelled', { pathParameters: { orderid: 'order-1', sku: 'LAMP' } }],
    ['DELETE /allocations/{orderid}/{sku}', 404, 'LineNotFound', { pathParameters: { orderid: 'order-1', sku: 'DESK' } }],
    ['POST /add_batch', 400, 'UnknownLocation', { body: { ...validBatch, ref: 'batch-2', location: 'nowhere' } }],
    ['GET /locations', 200, 'LocationsRead', {}],
    ['GET /locations/{id}', 200, 'LocationRead', { pathParameters: { id: 'default' } }],
    ['GET /locations/{id}', 404, 'LocationNotFound', { pathParameters: { id: 'nowhere' } }],
    ['PUT /locations/{id}', 201, 'LocationCreated', { pathParameters: { id: 'lyon' }, body: { name: 'Lyon', priority: 1, serves: ['FR'] } }],
    ['PUT /locations/{id}', 200, 'LocationReplaced', { pathParameters: { id: 'default' }, body: { name: 'Main', priority: 0, serves: ['*'] } }],
  ] as const)('logs %s under its route key, answered %s, as %s', async (routeKey, status, outcome, options) => {
    const { addBatch, allocate, send } = setUp();
    await addBatch(validBatch);
    await allocate(validLine);
    const telemetry = captureTelemetry();
    try {
      expect((await send(routeKey, options)).statusCode).toBe(status);
    } finally {
      telemetry.restore();
    }
    expect(telemetry.entries).toEqual([expect.objectContaining({ route: routeKey, status, outcome })]);
  });

  it('logs a route key it does not route as RouteNotFound', async () => {
    const { batches } = setUp();
    const telemetry = captureTelemetry();
    try {
      await batches(routeEvent('GET /batches'), lambdaContext());
    } finally {
      telemetry.restore();
    }
    expect(telemetry.entries).toEqual([expect.objectContaining({ route: 'GET /batches', status: 404, outcome: 'RouteNotFound' })]);
  });
});
