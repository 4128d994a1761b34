import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoDbBatchRepository } from '../../functions/store/batch-repository';
import { createDynamoDbClient } from '../../functions/store/client';
import { freePort } from '../../local/dynamodb-local';
import { type TestTable, createTestTable } from '../support/dynamodb';
import { postEvent } from '../support/events';
import { FakeRepository } from '../support/fake-repository';
import { type CapturedTelemetry, captureTelemetry } from '../support/telemetry';
import { type Route, serviceOver } from './support/service';

/** A stack frame's line, as JSON text writes its line break. */
const STACK_FRAME = /\\n\s+at /;

describe('the request log', () => {
  let table: TestTable;
  let telemetry: CapturedTelemetry;

  beforeAll(async () => {
    table = await createTestTable();
  });
  beforeEach(() => {
    telemetry = captureTelemetry();
    return telemetry.restore;
  });
  afterAll(() => table?.drop());

  it('writes one structured entry per request with its ids, route, status, duration, what it came to and the domain error', async () => {
    const service = serviceOver(table.repository());
    const batch = { ref: 'log-1', sku: 'LOG', qty: 5, eta: null };
    const line = { orderid: 'o1', sku: 'LOG', qty: 2 };
    // The domain's refusals are named as `error` too; the edge's own refusals only by their outcome.
    const requests: Array<[Route, ReturnType<typeof postEvent>, number, string, string?]> = [
      ['/add_batch', postEvent('/add_batch', batch), 201, 'BatchAdded'],
      ['/add_batch', postEvent('/add_batch', batch), 200, 'BatchAlreadyAdded'],
      ['/add_batch', postEvent('/add_batch', { ...batch, qty: 6 }), 409, 'DuplicateBatch', 'DuplicateBatch'],
      ['/allocate', postEvent('/allocate', line), 201, 'Allocated'],
      ['/allocate', postEvent('/allocate', line), 200, 'AlreadyAllocated'],
      ['/allocate', postEvent('/allocate', { ...line, qty: 3 }), 409, 'LineAlreadyAllocated', 'LineAlreadyAllocated'],
      ['/allocate', postEvent('/allocate', { orderid: 'o2', sku: 'LOG', qty: 9 }), 400, 'OutOfStock', 'OutOfStock'],
      ['/allocate', postEvent('/allocate', { orderid: 'o2', sku: 'NONE', qty: 1 }), 400, 'InvalidSku', 'InvalidSku'],
      ['/allocate', postEvent('/allocate', { ...line, qty: -1 }), 400, 'InvalidRequestBody'],
      ['/allocate', postEvent('/allocate', '{"orderid":', { raw: true }), 400, 'MalformedJson'],
      ['/allocate', postEvent('/allocate', line, { contentType: 'text/plain' }), 415, 'UnsupportedMediaType'],
      ['/allocate', postEvent('/allocate', { ...line, note: 'x'.repeat(17_000) }), 413, 'BodyTooLarge'],
    ];

    for (const [route, event, status, outcome, error] of requests) {
      telemetry.clear();
      expect((await service.send(route, event)).status).toBe(status);
      expect(telemetry.entries).toEqual([
        {
          level: 'INFO',
          message: 'Request',
          timestamp: expect.any(String),
          service: 'allocation',
          sampling_rate: 0,
          cold_start: false,
          function_request_id: expect.any(String),
          requestId: event.requestContext.requestId,
          route: `POST ${route}`,
          status,
          durationMs: expect.any(Number),
          outcome,
          ...(error ? { error } : {}),
        },
      ]);
    }
  });

  it('logs a 503 as a warning with the chain of its causes, while the answer names none of them', async () => {
    const unreachable = createDynamoDbClient(`http://127.0.0.1:${await freePort()}`);
    const service = serviceOver(new DynamoDbBatchRepository(DynamoDBDocumentClient.from(unreachable), 'allocations'));
    const event = postEvent('/allocate', { orderid: 'o1', sku: 'LOG', qty: 1 });

    const answer = await service.send('/allocate', event);
    unreachable.destroy();

    expect(answer.status).toBe(503);
    expect(answer.body).toEqual({ message: expect.any(String), code: 'unavailable', request_id: event.requestContext.requestId });
    expect(telemetry.entries).toEqual([
      expect.objectContaining({
        level: 'WARN',
        requestId: event.requestContext.requestId,
        status: 503,
        outcome: 'StoreUnavailable',
        error: 'StoreUnavailable',
        cause: { name: 'StoreUnavailable', message: expect.any(String), cause: { name: expect.any(String), message: expect.any(String) } },
      }),
    ]);
    expect(JSON.stringify(telemetry.entries)).not.toMatch(STACK_FRAME);
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

    expect(answer).toMatchObject({ status: 500, body: { message: 'Internal server error', code: 'internal_error', request_id: event.requestContext.requestId } });
    expect(answer.text).not.toMatch(/TypeError|available|\n\s+at /);
    expect(telemetry.entries).toEqual([
      expect.objectContaining({
        level: 'ERROR',
        status: 500,
        outcome: 'InternalError',
        cause: { name: 'TypeError', message: 'Cannot read properties of undefined (reading "available")' },
      }),
    ]);
    expect(telemetry.entries[0]).not.toHaveProperty('error');
    expect(JSON.stringify(telemetry.entries)).not.toMatch(/s3cr3t-token/);
    expect(JSON.stringify(telemetry.entries)).not.toMatch(STACK_FRAME);
  });
});
