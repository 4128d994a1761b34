import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../domain/events';
import { eventLine } from '../../local/event-lines';
import { functionEntryLine, requestLine, stoppedLine } from '../../local/log-lines';

// What `npm start` prints of its own (docs/development.md, "Logs"): in a terminal, one line per
// request, and the functions' other log entries each on one line; and one line when it stops.

const allocated = { method: 'POST', path: '/allocate', status: 201, durationMs: 12.345, requestId: 'JKJaXmPLvHcESHA=', body: '{"batchref":"b1"}' };

describe("npm start's line for each request, in a terminal", () => {
  it('says the method, the path as sent, the status, the duration in ms and the request id', () => {
    expect(requestLine(allocated)).toBe('POST /allocate 201 12.3 ms JKJaXmPLvHcESHA=');
    expect(requestLine({ ...allocated, method: 'GET', path: '/stock?sku=LAMP', status: 200, durationMs: 3 })).toBe('GET /stock?sku=LAMP 200 3.0 ms JKJaXmPLvHcESHA=');
  });

  it("ends with an error answer's code, or with its reason when it has no code", () => {
    const refused = { ...allocated, status: 400 };
    expect(requestLine({ ...refused, body: '{"message":"Out of stock","code":"OUT_OF_STOCK","reason":"out_of_stock"}' })).toBe(
      'POST /allocate 400 12.3 ms JKJaXmPLvHcESHA= OUT_OF_STOCK',
    );
    expect(requestLine({ ...refused, body: '{"message":"Out of stock","reason":"out_of_stock"}' })).toBe('POST /allocate 400 12.3 ms JKJaXmPLvHcESHA= out_of_stock');
  });

  it('names no code for an error answer without one, whose body is no JSON object, or that has no body', () => {
    for (const body of ['{"message":"Not Found"}', 'Not Found', '["code"]', undefined]) {
      expect(requestLine({ ...allocated, status: 404, body })).toBe('POST /allocate 404 12.3 ms JKJaXmPLvHcESHA=');
    }
  });

  it('names no code for an answer that is no error, whatever its body holds', () => {
    expect(requestLine({ ...allocated, body: '{"code":"X","reason":"y"}' })).toBe('POST /allocate 201 12.3 ms JKJaXmPLvHcESHA=');
  });

  it('says when the request started an instance (--lambda), and how long its init took', () => {
    expect(requestLine({ ...allocated, startedInstance: { functionName: 'local-allocations', initDurationMs: 0.84 } })).toBe(
      'POST /allocate 201 12.3 ms JKJaXmPLvHcESHA= cold start of local-allocations, init 0.8 ms',
    );
  });
});

describe("a function's log entry, in a terminal", () => {
  const entry = (fields: Record<string, unknown>) => JSON.stringify({ level: 'INFO', message: 'Request', timestamp: '2026-11-23T16:04:01.864Z', service: 'allocation', ...fields }, null, 4);

  it('is printed on one line, its fields as written', () => {
    const retried = entry({ level: 'DEBUG', message: 'Transaction retried', cancellationCodes: ['TransactionConflict'] });
    expect(functionEntryLine(retried)).toBe(JSON.stringify(JSON.parse(retried)));
  });

  it("is left out when it is a request's entry, which the request line says, unless it records a fault (ERROR) or a 503 (WARN), whose cause only it holds", () => {
    expect(functionEntryLine(entry({ status: 201 }))).toBeUndefined();
    expect(functionEntryLine(entry({ status: 409 }))).toBeUndefined();
    const unavailable = entry({ level: 'WARN', status: 503, cause: { name: 'StoreUnavailable', message: 'connect ECONNREFUSED' } });
    expect(functionEntryLine(unavailable)).toBe(JSON.stringify(JSON.parse(unavailable)));
    const fault = entry({ level: 'ERROR', status: 500, cause: { name: 'TypeError', message: 'x is undefined' } });
    expect(functionEntryLine(fault)).toBe(JSON.stringify(JSON.parse(fault)));
  });

  it('leaves text that is no entry as it is', () => {
    expect(functionEntryLine('Hold sweep failed: timeout')).toBe('Hold sweep failed: timeout');
  });
});

describe("npm start's line when it stops", () => {
  it('says what it closed', () => {
    expect(stoppedLine(['the HTTP server', 'the hold sweeper', 'the event stream', 'DynamoDB Local'], new Map())).toBe(
      'allocation service stopped: closed the HTTP server, the hold sweeper, the event stream and DynamoDB Local',
    );
    expect(stoppedLine([], new Map())).toBe('allocation service stopped: closed nothing');
  });

  it('says how many instances of each function it had started (--lambda)', () => {
    expect(stoppedLine(['the HTTP server'], new Map([['local-allocations', 9], ['local-batches', 1]]))).toBe(
      'allocation service stopped: closed the HTTP server; it had started 10 instances (local-allocations 9, local-batches 1)',
    );
  });
});

describe("npm start's line for each event, in a terminal", () => {
  it('names the event and its ids and numbers, and leaves out its id, version and time and what is nested', () => {
    const event = { name: 'Allocated', detail: { id: 'e-0', version: 1, time: '2026-11-23T10:00:00.812Z', orderid: 'order-1', sku: 'LAMP', qty: 2, batchref: 'b1', location: 'default', parts: [{ batchref: 'b1', qty: 2 }] } } as unknown as DomainEvent;
    expect(eventLine(event)).toBe('event Allocated orderid=order-1 sku=LAMP qty=2 batchref=b1 location=default');
  });

  it('is cut to one short line, however long its ids', () => {
    const event = { name: 'Allocated', detail: { orderid: 'o'.repeat(300), sku: 'LAMP' } } as unknown as DomainEvent;
    expect(eventLine(event)).toHaveLength(120);
    expect(eventLine(event).endsWith('…')).toBe(true);
  });
});
