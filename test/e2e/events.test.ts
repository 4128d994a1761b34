import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../../local/dynamodb-local';
import { dynamoDbEndpoint, uniqueId } from '../support/dynamodb';
import { type RunningService, listening, startService } from '../support/local-service';

// `npm start`'s events, as a developer sees them: JSON lines on its output among the request log,
// and in the --events-file.


interface EventLine {
  readonly source: string;
  readonly 'detail-type': string;
  readonly detail: Record<string, unknown>;
}

/** The whole lines of the output that are events (the request log is JSON lines too), as printed. */
const eventLinesOf = (output: string): string[] =>
  // The last piece is empty, or a line still being written.
  output.split('\n').slice(0, -1).filter((line) => {
    if (!line.startsWith('{')) return false;
    const parsed = JSON.parse(line) as Partial<EventLine>;
    return parsed.source === 'allocation' && typeof parsed['detail-type'] === 'string';
  });

const eventsOf = (output: string): EventLine[] => eventLinesOf(output).map((line) => JSON.parse(line) as EventLine);

/** The service on a free port; `request` sends JSON, or nothing when `body` is undefined. */
const serviceAt = async (env: NodeJS.ProcessEnv, args: string[] = []) => {
  const port = await freePort();
  const service = startService({ PORT: String(port), ...env }, args);
  await listening(service);
  const request = (method: string, path: string, body?: unknown) =>
    fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
  return { service, request };
};

/**
 * Sends one request, expects `status`, then waits for the events it should make (each given as the
 * fields it must have), each one found after the answer's arrival (how soon: `npm run bench`'s
 * end-to-end delay, docs/performance.md).
 */
const expectEventsOf = async (
  service: RunningService,
  send: () => Promise<Response>,
  status: number,
  ...expected: Array<{ 'detail-type': string; detail: Record<string, unknown> }>
) => {
  const before = eventsOf(service.output()).length;
  const response = await send();
  const answeredAt = Date.now();
  expect(response.status).toBe(status);
  const matches = (events: EventLine[]) => expected.every((fields) => events.some((event) => matchesFields(event, fields)));
  while (!matches(eventsOf(service.output()).slice(before)) && Date.now() - answeredAt <= APPEARS_WITHIN_MS) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const events = eventsOf(service.output()).slice(before);
  for (const { 'detail-type': name, detail } of expected) {
    expect(events).toContainEqual({ source: 'allocation', 'detail-type': name, detail: expect.objectContaining(detail) });
  }
};

/** Long enough for the sweeper (every second) and the stream's follower on a busy machine: a wait for appearance, not a promise of speed. */
const APPEARS_WITHIN_MS = 15_000;

/** Waits until the events file holds an event with these fields (compared deeply), and expects it there. */
const expectInFile = async (file: string, name: string, detail: Record<string, unknown>) =>
  expect
    .poll(() => (existsSync(file) ? eventsOf(readFileSync(file, 'utf8')) : []), { timeout: APPEARS_WITHIN_MS, interval: 50 })
    .toContainEqual({ source: 'allocation', 'detail-type': name, detail: expect.objectContaining(detail) });

const matchesFields = (event: EventLine, { 'detail-type': name, detail }: { 'detail-type': string; detail: Record<string, unknown> }) =>
  event['detail-type'] === name && Object.entries(detail).every(([field, value]) => event.detail[field] === value);

describe('npm start --in-memory --events-file PATH', () => {
  let dataDir: string;
  let eventsFile: string;
  let running: Awaited<ReturnType<typeof serviceAt>>;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'allocations-events-'));
    // In a folder that does not exist yet: the service makes it.
    eventsFile = join(dataDir, 'new-folder', 'events.jsonl');
    running = await serviceAt({ DYNAMODB_ENDPOINT: '' }, ['--in-memory', '--events-file', eventsFile]);
  });
  afterAll(async () => {
    await running?.service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints the event of each change once it is answered, as EventBridge delivers it', async () => {
    const { service, request } = running;
    const sku = uniqueId('LAMP');
    const [shelf, shipment] = [uniqueId('shelf'), uniqueId('shipment')];
    const [first, second] = [uniqueId('order'), uniqueId('order')];

    await expectEventsOf(service, () => request('POST', '/add_batch', { ref: shelf, sku, qty: 5, eta: null }), 201, {
      'detail-type': 'BatchAdded',
      detail: { ref: shelf, sku, qty: 5, eta: null },
    });
    await request('POST', '/add_batch', { ref: shipment, sku, qty: 5, eta: '2027-06-01' });
    await expectEventsOf(service, () => request('POST', '/allocate', { orderid: first, sku, qty: 3 }), 201, {
      'detail-type': 'Allocated',
      detail: { orderid: first, sku, qty: 3, batchref: shelf, location: 'default' },
    });
    await expectEventsOf(service, () => request('DELETE', `/allocations/${first}/${sku}`), 204, {
      'detail-type': 'Deallocated',
      detail: { orderid: first, sku, qty: 3, batchref: shelf, location: 'default', reason: 'cancelled' },
    });
    await request('POST', '/allocate', { orderid: second, sku, qty: 4 });
    await expectEventsOf(
      service,
      () => request('PATCH', `/batches/${shelf}`, { qty: 2 }),
      200,
      { 'detail-type': 'BatchChanged', detail: { ref: shelf, qty: 2 } },
      { 'detail-type': 'Deallocated', detail: { orderid: second, batchref: shelf, reason: 'reallocated' } },
      { 'detail-type': 'Allocated', detail: { orderid: second, batchref: shipment } },
    );
    await expectEventsOf(service, () => request('PATCH', `/batches/${shipment}`, { eta: '2027-05-01' }), 200, {
      'detail-type': 'BatchChanged',
      detail: { ref: shipment, qty: 5, eta: '2027-05-01' },
    });
    await expectEventsOf(service, () => request('POST', '/allocate', { orderid: uniqueId('order'), sku, qty: 50 }), 400, {
      'detail-type': 'OutOfStock',
      detail: { sku, qty: 50 },
    });
  });

  it("writes a hold's HoldPlaced, HoldExtended and HoldConfirmed, with an Allocated per line, and HoldReleased for one released", async () => {
    const { request } = running;
    const sku = uniqueId('LAMP');
    const ref = uniqueId('shelf');
    const [kept, dropped, orderid] = [uniqueId('cart'), uniqueId('cart'), uniqueId('order')];
    const lines = [{ sku, qty: 3, batchref: ref, location: 'default' }];
    expect((await request('POST', '/add_batch', { ref, sku, qty: 10, eta: null })).status).toBe(201);

    const placed = await request('POST', '/holds', { holdid: kept, lines: [{ sku, qty: 3 }], ttl_seconds: 60 });
    expect(placed.status).toBe(201);
    const { expires_at: expiresAt } = (await placed.json()) as { expires_at: string };
    await expectInFile(eventsFile, 'HoldPlaced', { holdid: kept, expires_at: expiresAt, lines });

    const extended = await request('PATCH', `/holds/${kept}`, { ttl_seconds: 120 });
    expect(extended.status).toBe(200);
    const { expires_at: extendedUntil } = (await extended.json()) as { expires_at: string };
    await expectInFile(eventsFile, 'HoldExtended', { holdid: kept, expires_at: extendedUntil, lines });
    // The extension's time is the instant its new expiry was counted from.
    const extension = eventsOf(readFileSync(eventsFile, 'utf8')).find((event) => event['detail-type'] === 'HoldExtended' && event.detail.holdid === kept);
    expect(Date.parse(extendedUntil) - Date.parse(String(extension?.detail.time))).toBe(120_000);

    expect((await request('POST', `/holds/${kept}/confirm`, { orderid })).status).toBe(201);
    await expectInFile(eventsFile, 'HoldConfirmed', { holdid: kept, expires_at: extendedUntil, lines, orderid });
    await expectInFile(eventsFile, 'Allocated', { orderid, sku, qty: 3, batchref: ref });

    expect((await request('POST', '/holds', { holdid: dropped, lines: [{ sku, qty: 2 }] })).status).toBe(201);
    expect((await request('DELETE', `/holds/${dropped}`)).status).toBe(204);
    await expectInFile(eventsFile, 'HoldReleased', { holdid: dropped, lines: [{ sku, qty: 2, batchref: ref, location: 'default' }], reason: 'released' });
  });

  it('writes HoldReleased with reason expired for a hold no request touches once its time passes: the sweeper ends it', async () => {
    const { request } = running;
    const sku = uniqueId('LAMP');
    const ref = uniqueId('shelf');
    const holdid = uniqueId('cart');
    expect((await request('POST', '/add_batch', { ref, sku, qty: 10, eta: null })).status).toBe(201);
    expect((await request('POST', '/holds', { holdid, lines: [{ sku, qty: 4 }], ttl_seconds: 1 })).status).toBe(201);

    await expectInFile(eventsFile, 'HoldReleased', { holdid, lines: [{ sku, qty: 4, batchref: ref, location: 'default' }], reason: 'expired' });
  });

  it('appends to the file the same lines it prints, one JSON line per event', async () => {
    const { service } = running;
    const inFile = readFileSync(eventsFile, 'utf8');
    // The server writes each event to its output and to the file at once, but the test reads its
    // output through a pipe, which can lag the file by a moment.
    await vi.waitFor(() => expect(eventLinesOf(service.output()).map((line) => `${line}\n`).join('')).toBe(inFile), { timeout: 5_000 });
    const printed = eventLinesOf(service.output());
    expect(printed.length).toBeGreaterThan(0);
    for (const line of printed) expect(Object.keys(JSON.parse(line))).toEqual(['source', 'detail-type', 'detail']);
    expect(service.output()).toContain(`appended to ${eventsFile}`);
  });
});

describe('npm start over a table it used before', () => {
  it('prints what changes from its start on, not what it printed before', async () => {
    const env = { DYNAMODB_ENDPOINT: dynamoDbEndpoint(), TABLE_NAME: uniqueId('kept-events') };
    const addBatch = async (ref: string) => {
      const { service, request } = await serviceAt(env);
      try {
        await expectEventsOf(service, () => request('POST', '/add_batch', { ref, sku: 'LAMP', qty: 1, eta: null }), 201, {
          'detail-type': 'BatchAdded',
          detail: { ref },
        });
        return eventsOf(service.output()).map((event) => event.detail.ref);
      } finally {
        await service.stop();
      }
    };
    const [before, after] = [uniqueId('before'), uniqueId('after')];

    expect(await addBatch(before)).toEqual([before]);
    expect(await addBatch(after)).toEqual([after]);
  });
});
