import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TestTable, createTestTable } from '../support/dynamodb';
import { postEvent } from '../support/events';
import { findViolations, readInventory } from '../../tools/invariants';
import { seedOr } from './support/seed';
import { type Answer, type HandlerService, type Route, serviceOver } from './support/service';
import { scanItems } from './support/table-contents';

const SEED = seedOr(7_2026);
const NUM_RUNS = 40;
const MAX_QTY = 1_000_000_000;

/**
 * The contract, as small as it can be written: what the service must answer, and what it must then
 * hold, after any sequence of requests. It shares no code with the service.
 */
class ReferenceModel {
  readonly batches = new Map<string, { ref: string; sku: string; qty: number; available: number; eta: string | null }>();
  readonly lines = new Map<string, { orderid: string; sku: string; qty: number; batchref: string }>();

  answer(request: Request): Expected {
    if ('rawBody' in request) return error(400, { message: 'Request body is not valid JSON' });
    if (request.spoiled) {
      return error(400, { message: 'Invalid request body', issues: [{ path: request.spoiled, message: expect.any(String) }] });
    }
    return request.route === '/add_batch' ? this.addBatch(request.body as BatchBody) : this.allocate(request.body as LineBody);
  }

  private addBatch({ ref, sku, qty, eta }: BatchBody): Expected {
    if (this.batches.has(ref)) return error(409, { message: `Batch ${ref} already exists` });
    this.batches.set(ref, { ref, sku, qty, available: qty, eta });
    return { status: 201, contentType: 'text/plain', body: 'OK' };
  }

  private allocate({ orderid, sku, qty }: LineBody): Expected {
    const batches = [...this.batches.values()].filter((batch) => batch.sku === sku);
    if (batches.length === 0) return error(400, { message: `Invalid sku ${sku}` });
    const key = JSON.stringify([orderid, sku]);
    const existing = this.lines.get(key);
    if (existing) {
      return existing.qty === qty
        ? { status: 200, contentType: 'application/json', body: { batchref: existing.batchref } }
        : error(409, { message: `Order ${orderid} already has a line for sku ${sku} with qty ${existing.qty}` });
    }
    // Shelf stock (no eta) first, then the earliest shipment; the reference settles a tie.
    const rank = (batch: { eta: string | null; ref: string }) => [batch.eta === null ? '0' : `1${batch.eta}`, batch.ref].join('\u0000');
    const [chosen] = batches.filter((batch) => batch.available >= qty).sort((a, b) => (rank(a) < rank(b) ? -1 : 1));
    if (!chosen) return error(400, { message: `Out of stock for sku ${sku}` });
    chosen.available -= qty;
    this.lines.set(key, { orderid, sku, qty, batchref: chosen.ref });
    return { status: 201, contentType: 'application/json', body: { batchref: chosen.ref } };
  }
}

interface BatchBody extends Record<string, unknown> {
  ref: string;
  sku: string;
  qty: number;
  eta: string | null;
}
interface LineBody extends Record<string, unknown> {
  orderid: string;
  sku: string;
  qty: number;
}

type Request =
  | { readonly route: Route; readonly body: Record<string, unknown>; readonly spoiled?: string }
  | { readonly route: Route; readonly rawBody: string };

/** A request, or a client sending again the allocation it sent `resend` allocations before its last one, as a retry does. */
type Operation = Request | { readonly resend: number };

interface Expected {
  readonly status: number;
  readonly contentType: string;
  readonly body: unknown;
}

const error = (status: number, body: Record<string, unknown>): Expected => ({ status, contentType: 'application/json', body });

/** Few names, so that refs collide, lines repeat and some SKUs never get a batch. */
const ref = fc.constantFrom('b1', 'b2', 'b3', 'b4', 'b5');
const sku = fc.constantFrom('LAMP', 'LAMP', 'SOFA', 'SOFA', 'CHAIR');
const orderid = fc.constantFrom('o1', 'o2', 'o3', 'o4');
const eta = fc.constantFrom(null, '2026-01-01', '2026-03-15', '2026-03-15', '2028-02-29');
const batchBody = fc.record({
  ref,
  sku: fc.constantFrom('LAMP', 'SOFA'),
  qty: fc.oneof(fc.integer({ min: 1, max: 20 }), fc.constant(MAX_QTY)),
  eta,
});
const lineBody = fc.record({ orderid, sku, qty: fc.integer({ min: 1, max: 25 }) });

/** Values that break exactly one rule of a field, so the model knows the one issue to expect. */
const badIdentifier = fc.constantFrom<unknown>('', 'x'.repeat(129), 'line\nbreak', 'nul\u0000', 42, null, undefined, ['LAMP']);
const badQty = fc.constantFrom<unknown>(0, -3, 1.5, MAX_QTY + 1, '5', null, undefined, true);
const badEta = fc.constantFrom<unknown>('2026-02-30', '2026-02-29', '2026-13-01', '2026-1-1', 'tomorrow', '', 20260101, undefined);

const spoil = (route: Route, body: fc.Arbitrary<Record<string, unknown>>, bad: Record<string, fc.Arbitrary<unknown>>) =>
  fc.record({ body, field: fc.constantFrom(...Object.keys(bad)) }).chain(({ body, field }) =>
    (bad[field] as fc.Arbitrary<unknown>).map((value): Request => {
      const spoiled = { ...body, [field]: value };
      if (value === undefined) delete spoiled[field];
      return { route, body: spoiled, spoiled: field };
    }),
  );

const operation: fc.Arbitrary<Operation> = fc.oneof(
  { weight: 8, arbitrary: lineBody.map((body): Operation => ({ route: '/allocate', body })) },
  { weight: 3, arbitrary: fc.nat(5).map((back): Operation => ({ resend: back })) },
  { weight: 5, arbitrary: batchBody.map((body): Operation => ({ route: '/add_batch', body })) },
  // The contract ignores fields it does not know, a `batchref` that tries to choose the batch included.
  { weight: 1, arbitrary: lineBody.map((body): Operation => ({ route: '/allocate', body: { ...body, batchref: 'b1', note: 'gift' } })) },
  { weight: 2, arbitrary: spoil('/allocate', lineBody, { orderid: badIdentifier, sku: badIdentifier, qty: badQty }) },
  { weight: 2, arbitrary: spoil('/add_batch', batchBody, { ref: badIdentifier, sku: badIdentifier, qty: badQty, eta: badEta }) },
  {
    weight: 1,
    arbitrary: fc.record({
      route: fc.constantFrom<Route>('/allocate', '/add_batch'),
      rawBody: fc.constantFrom('{"sku": "LAMP",', 'qty=1', "{'qty': 1}"),
    }),
  },
);

/** Most sequences stock a few batches first, so that what follows reaches allocation, retries and conflicts. */
const sequence = fc
  .tuple(
    fc.array(batchBody.map((body): Operation => ({ route: '/add_batch', body })), { maxLength: 4 }),
    fc.array(operation, { minLength: 1, maxLength: 40, size: 'medium' }),
  )
  .map(([stocking, rest]) => [...stocking, ...rest]);

const send = (service: HandlerService, request: Request): Promise<Answer> =>
  service.send(
    request.route,
    'rawBody' in request ? postEvent(request.route, request.rawBody, { raw: true }) : postEvent(request.route, request.body),
  );

const asExpected = ({ status, headers, body }: Answer): Expected => ({
  status,
  contentType: (headers['content-type'] ?? '').split(';')[0] ?? '',
  body,
});

describe(`the service against a reference model of the contract (seed ${SEED})`, () => {
  let table: TestTable;
  beforeAll(async () => {
    table = await createTestTable();
    // fast-check's report names the failing sequence; the request logs of every run and shrink would bury it.
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await table?.drop();
  });

  const emptyTable = async () => {
    const items = await scanItems(table.documentClient, table.tableName);
    for (let start = 0; start < items.length; start += 25) {
      const deletes = items.slice(start, start + 25).map(({ pk, sk }) => ({ DeleteRequest: { Key: { pk, sk } } }));
      await table.documentClient.send(new BatchWriteCommand({ RequestItems: { [table.tableName]: deletes } }));
    }
  };

  it('answers every request of any sequence as the model does, and ends holding what the model holds', async () => {
    let completedRuns = 0;
    await fc.assert(
      fc.asyncProperty(sequence, async (operations) => {
        await emptyTable();
        const model = new ReferenceModel();
        const service = serviceOver(table.repository());

        const allocations: Request[] = [];
        for (const [index, operation] of operations.entries()) {
          const request = 'resend' in operation ? allocations[allocations.length - 1 - (operation.resend % allocations.length)] : operation;
          if (!request) continue;
          if (request.route === '/allocate') allocations.push(request);
          const expected = model.answer(request);
          expect(asExpected(await send(service, request)), `answer to request ${index}: ${JSON.stringify(request)}`).toEqual(expected);
        }

        const inventory = await readInventory(table.documentClient, table.tableName);
        const byRef = <T extends { ref: string }>(items: Iterable<T>) => [...items].sort((a, b) => (a.ref < b.ref ? -1 : 1));
        expect(byRef(inventory.batches)).toEqual(byRef(model.batches.values()));
        const byLine = <T extends { orderid: string; sku: string }>(items: Iterable<T>) =>
          [...items].sort((a, b) => (JSON.stringify([a.orderid, a.sku]) < JSON.stringify([b.orderid, b.sku]) ? -1 : 1));
        expect(byLine(inventory.lines)).toEqual(byLine(model.lines.values()));
        expect(findViolations(inventory)).toEqual([]);
        completedRuns++;
      }),
      // Shrinking replays sequences against DynamoDB Local: cap it so a failure is reported, seed and all, before the test times out.
      { seed: SEED, numRuns: NUM_RUNS, interruptAfterTimeLimit: 100_000 },
    );
    // fast-check counts an interrupted run as a pass: only every run completed is one.
    expect(completedRuns).toBe(NUM_RUNS);
  }, 120_000);
});
