import { describe, expect, it } from 'vitest';
import { StoreUnavailable } from '../../domain/errors';
import { createAddBatchHandler } from '../../functions/add-batch';
import { createAllocateHandler } from '../../functions/allocate';
import type { HttpResult } from '../../functions/http/route';
import { FakeRepository } from '../support/fake-repository';
import { lambdaContext, postEvent } from '../support/events';

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
    'application/vnd.api+json',
  ])('both routes accept %s', async (contentType) => {
    expect((await validRequestTo.allocate(contentType)).statusCode).toBe(201);
    expect((await validRequestTo.addBatch(contentType)).statusCode).toBe(201);
  });

  it.each(['text/plain', 'application/jsonx', 'application/x-www-form-urlencoded', null])(
    'both routes answer 415 to %s',
    async (contentType) => {
      expect((await validRequestTo.allocate(contentType)).statusCode).toBe(415);
      expect((await validRequestTo.addBatch(contentType)).statusCode).toBe(415);
    },
  );
});

describe('when the store fails', () => {
  it('answers 503 with Retry-After when the store is unavailable', async () => {
    const { repository, allocate } = setUp();
    repository.batchesOf = async () => {
      throw new StoreUnavailable('The store did not answer');
    };
    const result = await allocate(validLine);
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['Retry-After']).toBe('1');
    expect(jsonBody(result).message).toMatch(/retry/i);
  });

  it('answers 503 with Retry-After when the store outlasts the time the function has left', async () => {
    const { repository } = setUp();
    repository.batchesOf = () => new Promise(() => {});
    const nearlyOutOfTime = { ...lambdaContext(), getRemainingTimeInMillis: () => 50 };
    const result = await createAllocateHandler(repository)(postEvent('/allocate', validLine), nearlyOutOfTime);
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['Retry-After']).toBe('1');
  });

  it('answers 503 when the allocation keeps losing the race for stock', async () => {
    const { repository, addBatch, allocate } = setUp();
    await addBatch(validBatch);
    repository.saveAllocation = async () => ({ outcome: 'batch-short' });
    const result = await allocate(validLine);
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['Retry-After']).toBe('1');
  });

  it('answers 500 with a generic message and the request id, never the error text', async () => {
    const { repository } = setUp();
    repository.batchesOf = async () => {
      throw new Error('AccessDeniedException: User arn:aws:iam::123:role/x is not authorized');
    };
    const event = postEvent('/allocate', validLine);
    const result = await createAllocateHandler(repository)(event, lambdaContext());
    expect(result.statusCode).toBe(500);
    expect(jsonBody(result)).toEqual({ message: 'Internal server error', requestId: event.requestContext.requestId });
    expect(result.body).not.toMatch(/AccessDenied|arn:aws|at /);
  });
});
