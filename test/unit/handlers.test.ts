import { describe, expect, it } from 'vitest';
import { StoreUnavailable } from '../../domain/errors';
import { createAddBatchHandler } from '../../functions/add-batch';
import { createAllocateHandler } from '../../functions/allocate';
import type { HttpResult } from '../../functions/http/route';
import { FakeRepository } from '../support/fake-repository';
import { lambdaContext, postEvent, withBytes } from '../support/events';

const setUp = () => {
  const repository = new FakeRepository();
  const allocate = createAllocateHandler(repository);
  const addBatch = createAddBatchHandler(repository);
  return {
    repository,
    allocate: (body: unknown, options?: Parameters<typeof postEvent>[2]) =>
      allocate(postEvent('/allocate', body, options), lambdaContext()),
    addBatch: (body: unknown, options?: Parameters<typeof postEvent>[2]) =>
      addBatch(postEvent('/add_batch', body, options), lambdaContext()),
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

  it('answers 409 for a reference that already exists', async () => {
    const { addBatch } = setUp();
    await addBatch(validBatch);
    const result = await addBatch({ ...validBatch, sku: 'TABLE' });
    expect(result.statusCode).toBe(409);
    expect(jsonBody(result)).toEqual({ message: 'Batch batch-1 already exists' });
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
    expect(jsonBody(result)).toEqual({ batchref: 'batch-1' });
  });

  it('answers 200 with the same batch for an exact repeat', async () => {
    const { addBatch, allocate } = setUp();
    await addBatch(validBatch);
    await allocate(validLine);
    const repeat = await allocate(validLine);
    expect(repeat.statusCode).toBe(200);
    expect(jsonBody(repeat)).toEqual({ batchref: 'batch-1' });
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
    expect(jsonBody(result)).toEqual({ message: 'Invalid sku NOPE' });
  });

  it('answers 400 "Out of stock" when no batch can take the line', async () => {
    const { addBatch, allocate } = setUp();
    await addBatch(validBatch);
    const result = await allocate({ ...validLine, qty: 11 });
    expect(result.statusCode).toBe(400);
    expect(jsonBody(result)).toEqual({ message: 'Out of stock for sku LAMP' });
  });

  it('ignores unknown fields, prototype keys among them', async () => {
    const { addBatch, allocate, repository } = setUp();
    await addBatch(validBatch);
    const body = '{"orderid":"order-1","sku":"LAMP","qty":3,"note":"gift","__proto__":{"qty":99}}';
    expect((await allocate(body, { raw: true })).statusCode).toBe(201);
    expect(repository.batches.get('batch-1')?.available).toBe(7);
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
    expect(jsonBody(result)).toEqual({ message: 'Request body is not valid JSON' });
  });

  it.each(handlers)('%s answers 400 for a missing body', async (name) => {
    const result = await setUp()[name](undefined, { raw: true });
    expect(result.statusCode).toBe(400);
    expect(jsonBody(result)).toEqual({ message: 'Request body is not valid JSON' });
  });

  it.each(handlers)('%s answers 415 for a body that is not JSON by its Content-Type', async (name) => {
    const result = await setUp()[name](validLine, { contentType: 'text/plain' });
    expect(result.statusCode).toBe(415);
    expect(jsonBody(result)).toEqual({ message: 'Content-Type must be application/json' });
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
    expect(jsonBody(result)).toEqual({ message: 'Content-Type must be application/json' });
  });

  it.each(handlers)('%s answers 415, not 413, to a 2 MB body with no Content-Type', async (name) => {
    const result = await setUp()[name](twoMegabytes, { contentType: null });
    expect(result.statusCode).toBe(415);
    expect(jsonBody(result)).toEqual({ message: 'Content-Type must be application/json' });
  });

  it.each(handlers)('%s answers 413 to a 2 MB JSON body', async (name) => {
    const result = await setUp()[name](twoMegabytes);
    expect(result.statusCode).toBe(413);
    expect(jsonBody(result)).toEqual({ message: 'Request body is larger than 16384 bytes' });
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
    expect(jsonBody(result)).toEqual({ message: 'Request body is not valid UTF-8' });
    expect(repository.lines.size).toBe(0);
    expect(repository.batches.get('batch-1')?.available).toBe(10);
  });

  it.each(INVALID_UTF8)('add_batch answers 400 "not valid UTF-8" to %s in a reference, and adds nothing', async (_case, bytes) => {
    const { addBatch, repository } = setUp();
    const result = await addBatch(withBytes('{"ref": "batch-@", "sku": "LAMP", "qty": 10, "eta": null}', bytes));
    expect(result.statusCode).toBe(400);
    expect(jsonBody(result)).toEqual({ message: 'Request body is not valid UTF-8' });
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
    expect(jsonBody(result)).toEqual({ message: 'Request body is not valid UTF-8' });
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
    expect(jsonBody(result)).toEqual({ message: 'Request body is not valid JSON' });
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
      expect(jsonBody(result)).toEqual({ message: 'Content-Type must be application/json' });
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
      expect(jsonBody(result)).toEqual({ message: 'Invalid request body', issues: [{ path: field, message }] });
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
    const result = await createAllocateHandler(repository)(postEvent('/allocate', validLine), nearlyOutOfTime);
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
    const result = await createAllocateHandler(repository)(event, lambdaContext());
    expect(result.statusCode).toBe(500);
    expect(jsonBody(result)).toEqual({ message: 'Internal server error', requestId: event.requestContext.requestId });
    expect(result.body).not.toMatch(/AccessDenied|arn:aws|at /);
  });
});
