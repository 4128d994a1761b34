import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { DynamoDbBatchRepository } from '../../functions/store/batch-repository';
import { createDynamoDbClient } from '../../functions/store/client';
import { freePort } from '../../local/dynamodb-local';
import { type TestTable, createTestTable } from '../support/dynamodb';
import { postEvent } from '../support/events';
import { FakeRepository } from '../support/fake-repository';
import { type Route, serviceOver } from './support/service';

const STACK_FRAME = /\n\s+at /;

describe('the request log', () => {
  let table: TestTable;
  let logged: string[];

  beforeAll(async () => {
    table = await createTestTable();
  });
  beforeEach(() => {
    logged = [];
    vi.spyOn(console, 'log').mockImplementation((line: unknown) => void logged.push(String(line)));
    return () => vi.restoreAllMocks();
  });
  afterAll(() => table?.drop());

  it('writes one JSON line per request with its id, route, status, duration and what it came to', async () => {
    const service = serviceOver(table.repository());
    const batch = { ref: 'log-1', sku: 'LOG', qty: 5, eta: null };
    const line = { orderid: 'o1', sku: 'LOG', qty: 2 };
    const requests: Array<[Route, ReturnType<typeof postEvent>, number, string]> = [
      ['/add_batch', postEvent('/add_batch', batch), 201, 'BatchAdded'],
      ['/add_batch', postEvent('/add_batch', batch), 409, 'DuplicateBatch'],
      ['/allocate', postEvent('/allocate', line), 201, 'Allocated'],
      ['/allocate', postEvent('/allocate', line), 200, 'AlreadyAllocated'],
      ['/allocate', postEvent('/allocate', { ...line, qty: 3 }), 409, 'LineAlreadyAllocated'],
      ['/allocate', postEvent('/allocate', { orderid: 'o2', sku: 'LOG', qty: 9 }), 400, 'OutOfStock'],
      ['/allocate', postEvent('/allocate', { orderid: 'o2', sku: 'NONE', qty: 1 }), 400, 'InvalidSku'],
      ['/allocate', postEvent('/allocate', { ...line, qty: -1 }), 400, 'InvalidRequestBody'],
      ['/allocate', postEvent('/allocate', '{"orderid":', { raw: true }), 400, 'MalformedJson'],
      ['/allocate', postEvent('/allocate', line, { contentType: 'text/plain' }), 415, 'UnsupportedMediaType'],
      ['/allocate', postEvent('/allocate', { ...line, note: 'x'.repeat(17_000) }), 413, 'BodyTooLarge'],
    ];

    for (const [route, event, status, outcome] of requests) {
      logged = [];
      expect((await service.send(route, event)).status).toBe(status);
      expect(logged).toHaveLength(1);
      expect(JSON.parse(logged[0] ?? '')).toEqual({
        level: 'info',
        requestId: event.requestContext.requestId,
        route: `POST ${route}`,
        status,
        durationMs: expect.any(Number),
        outcome,
      });
    }
  });

  it('logs a 503 as an error with the chain of its causes, while the answer names none of them', async () => {
    const unreachable = createDynamoDbClient(`http://127.0.0.1:${await freePort()}`);
    const service = serviceOver(new DynamoDbBatchRepository(DynamoDBDocumentClient.from(unreachable), 'allocations'));
    const event = postEvent('/allocate', { orderid: 'o1', sku: 'LOG', qty: 1 });

    const answer = await service.send('/allocate', event);
    unreachable.destroy();

    expect(answer.status).toBe(503);
    expect(answer.body).toEqual({ message: expect.any(String), requestId: event.requestContext.requestId });
    expect(logged).toHaveLength(1);
    expect(JSON.parse(logged[0] ?? '')).toMatchObject({
      level: 'error',
      requestId: event.requestContext.requestId,
      status: 503,
      outcome: 'StoreUnavailable',
      cause: { name: 'StoreUnavailable', cause: { name: expect.any(String), message: expect.any(String) } },
    });
    expect(logged[0]).not.toMatch(STACK_FRAME);
  }, 30_000);

  it('logs an unexpected failure with its cause, and answers 500 with a generic message and the request id only', async () => {
    class BrokenRepository extends FakeRepository {
      override async stockOf(): Promise<never> {
        throw new TypeError('Cannot read properties of undefined (reading "available")');
      }
    }
    const service = serviceOver(new BrokenRepository());
    const event = postEvent('/allocate', { orderid: 'o1', sku: 'LOG', qty: 1 });
    event.headers.authorization = 'Bearer s3cr3t-token';

    const answer = await service.send('/allocate', event);

    expect(answer).toMatchObject({ status: 500, body: { message: 'Internal server error', requestId: event.requestContext.requestId } });
    expect(answer.text).not.toMatch(/TypeError|available|\n\s+at /);
    expect(JSON.parse(logged[0] ?? '')).toMatchObject({
      level: 'error',
      status: 500,
      outcome: 'InternalError',
      cause: { name: 'TypeError', message: 'Cannot read properties of undefined (reading "available")' },
    });
    expect(logged.join('\n')).not.toMatch(/s3cr3t-token|\n\s+at /);
  });
});
