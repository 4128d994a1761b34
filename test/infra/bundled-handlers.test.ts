import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { placeHold } from '../../domain/hold-services';
import { defineAllocationApp, stackName } from '../../infra/allocation-app';
import { OPENAPI_FILE } from '../../tools/openapi';
import { createTestTable, type TestTable } from '../support/dynamodb';
import { cdkApp, logicalIdOf } from './cdk-app';

interface FunctionResource {
  Properties: { Handler: string; Timeout: number; Environment: { Variables: Record<string, unknown> } };
  Metadata: Record<string, string>;
}

/**
 * Loads a bundle in a fresh Node, as Lambda does (not through the test runner's module loader),
 * and calls its handler with one event, its whole timeout (seconds) left. The handler's own log
 * lines go to stdout; the result comes back on fd 3.
 */
const invokeInNode = (bundle: string, eventFile: string, environment: Record<string, string>, timeoutSeconds: number) => {
  const script = `
    import { readFileSync, writeSync } from 'node:fs';
    const [bundleUrl, eventFile, timeLeftMs] = process.argv.slice(1);
    const { handler } = await import(bundleUrl);
    const context = { awsRequestId: 'bundle-test', functionName: 'bundle-test', getRemainingTimeInMillis: () => Number(timeLeftMs) };
    writeSync(3, JSON.stringify(await handler(JSON.parse(readFileSync(eventFile, 'utf8')), context)));
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script, pathToFileURL(bundle).href, eventFile, String(timeoutSeconds * 1000)], {
    env: { PATH: process.env.PATH, ...environment },
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    encoding: 'utf8',
    timeout: 20_000,
  });
  if (run.status !== 0) throw new Error(`The bundle failed (${run.status ?? run.signal}):\n${run.stderr.slice(-2000)}`);
  return JSON.parse(run.output[3] ?? '');
};

const eventFile = (name: string) => join(import.meta.dirname, '../../events', name);
const sampleEvent = (name: string) => JSON.parse(readFileSync(eventFile(name), 'utf8'));

describe('the functions as `cdk synth` bundles them', () => {
  let assembly: CloudAssembly;
  let functions: Record<'Batches' | 'Allocations' | 'SweepHolds', FunctionResource>;
  let table: TestTable;
  /** Copies of sample events that the test points at another hold. */
  let copies: string;

  beforeAll(async () => {
    copies = mkdtempSync(join(tmpdir(), 'sample-events-'));
    // The one synth of the suite that runs esbuild.
    const app = cdkApp({}, { bundle: true });
    const stack = defineAllocationApp(app);
    assembly = app.synth();
    const resources: Record<string, FunctionResource> = assembly.getStackByName(stackName).template.Resources;
    const resourceOf = (id: string) => resources[logicalIdOf(stack.api, id)] as FunctionResource;
    functions = {
      Batches: resourceOf('BatchesFunction'),
      Allocations: resourceOf('AllocationsFunction'),
      SweepHolds: resources[logicalIdOf(stack.sweeper, 'SweepHoldsFunction')] as FunctionResource,
    };
    table = await createTestTable();
  }, 60_000);

  afterAll(async () => {
    await table?.drop();
    if (copies) rmSync(copies, { recursive: true, force: true });
    if (assembly) rmSync(assembly.directory, { recursive: true, force: true });
  });

  const bundleOf = (fn: FunctionResource) => join(assembly.directory, fn.Metadata['aws:asset:path'] ?? '', 'index.mjs');

  /** The function's environment from the template, pointed at the test's table as sam-env.json does. */
  const environmentOf = (fn: FunctionResource) => ({
    ...(fn.Properties.Environment.Variables as Record<string, string>),
    TABLE_NAME: table.tableName,
    DYNAMODB_ENDPOINT: table.endpoint,
  });

  it.each(['Batches', 'Allocations', 'SweepHolds'] as const)('%s: the template points SAM at a bundle holding index.mjs', (name) => {
    const fn = functions[name];
    expect(fn.Metadata['aws:asset:property']).toBe('Code');
    expect(fn.Properties.Handler).toBe('index.handler');
    expect(existsSync(bundleOf(fn))).toBe(true);
    expect(existsSync(`${bundleOf(fn)}.map`)).toBe(true);
  });

  it("answers every sample event, through a batch's life, from the bundles", () => {
    const invokeFile = (name: keyof typeof functions, file: string) => invokeInNode(bundleOf(functions[name]), file, environmentOf(functions[name]), functions[name].Properties.Timeout);
    const invoke = (name: keyof typeof functions, event: string) => invokeFile(name, eventFile(event));
    const bodyOf = (result: { body: string }) => JSON.parse(result.body);
    const batch = bodyOf(sampleEvent('add-batch.json'));
    const line = bodyOf(sampleEvent('allocate.json'));

    expect(invoke('Batches', 'add-batch.json')).toMatchObject({ statusCode: 201, body: 'OK' });

    const allocated = invoke('Allocations', 'allocate.json');
    expect(allocated.statusCode).toBe(201);
    expect(bodyOf(allocated)).toEqual({ batchref: batch.ref, location: 'default' });

    const order = invoke('Allocations', 'order-allocations.json');
    expect(order.statusCode).toBe(200);
    expect(bodyOf(order)).toEqual({ orderid: line.orderid, lines: [{ sku: line.sku, qty: line.qty, batchref: batch.ref, location: 'default' }] });

    const status = invoke('Batches', 'batch-status.json');
    expect(status.statusCode).toBe(200);
    expect(bodyOf(status)).toEqual({ ...batch, allocated: line.qty, held: 0, available: batch.qty - line.qty, location: 'default' });

    const stock = invoke('Batches', 'sku-stock.json');
    expect(stock.statusCode).toBe(200);
    expect(bodyOf(stock)).toMatchObject({ sku: batch.sku, in_stock: batch.qty - line.qty, incoming: 0, next_eta: null });

    const changed = invoke('Batches', 'change-batch.json');
    expect(changed.statusCode).toBe(200);
    expect(bodyOf(changed)).toMatchObject({ ref: batch.ref, allocated: line.qty, reallocated: [] });

    expect(invoke('Allocations', 'cancel-allocation.json')).toMatchObject({ statusCode: 204 });
    expect(invoke('Allocations', 'order-allocations.json')).toMatchObject({ statusCode: 404 });

    const wholeOrder = invoke('Allocations', 'orders.json');
    const ordered = bodyOf(sampleEvent('orders.json'));
    expect(wholeOrder.statusCode).toBe(201);
    expect(bodyOf(wholeOrder)).toEqual({ orderid: ordered.orderid, lines: [{ ...ordered.lines[0], batchref: batch.ref, location: 'default' }] });

    // A checkout: its hold placed, read, extended and confirmed to an order, after which it cannot be released.
    const { qty } = bodyOf(sampleEvent('change-batch.json'));
    const orderedUnits = ordered.lines[0].qty;
    const held = bodyOf(sampleEvent('place-hold.json'));
    const heldLines = held.lines.map((heldLine: { sku: string; qty: number }) => ({ ...heldLine, batchref: batch.ref, location: 'default' }));
    const batchNow = (units: { allocated: number; held: number }) => ({ ...batch, qty, ...units, available: qty - units.allocated - units.held, location: 'default' });

    const placed = invoke('Allocations', 'place-hold.json');
    expect(placed.statusCode).toBe(201);
    const hold = bodyOf(placed);
    expect(hold).toEqual({ holdid: held.holdid, status: 'active', expires_at: expect.any(String), lines: heldLines });
    expect(bodyOf(invoke('Batches', 'batch-status.json'))).toEqual(batchNow({ allocated: orderedUnits, held: held.lines[0].qty }));

    expect(invoke('Allocations', 'hold-status.json')).toMatchObject({ statusCode: 200 });
    expect(bodyOf(invoke('Allocations', 'hold-status.json'))).toEqual(hold);

    const extended = invoke('Allocations', 'extend-hold.json');
    expect(extended.statusCode).toBe(200);
    expect(bodyOf(extended)).toEqual({ ...hold, expires_at: expect.any(String) });
    expect(Date.parse(bodyOf(extended).expires_at)).toBeGreaterThan(Date.parse(hold.expires_at));

    const { orderid } = bodyOf(sampleEvent('confirm-hold.json'));
    const confirmed = invoke('Allocations', 'confirm-hold.json');
    expect(confirmed.statusCode).toBe(201);
    expect(bodyOf(confirmed)).toEqual({ orderid, lines: heldLines });
    expect(invoke('Allocations', 'confirm-hold.json')).toMatchObject({ statusCode: 200, body: confirmed.body });
    expect(bodyOf(invoke('Allocations', 'hold-status.json'))).toEqual({ ...bodyOf(extended), status: 'confirmed', orderid });
    expect(bodyOf(invoke('Batches', 'batch-status.json'))).toEqual(batchNow({ allocated: orderedUnits + held.lines[0].qty, held: 0 }));

    const released = invoke('Allocations', 'release-hold.json');
    expect(released.statusCode).toBe(409);
    expect(bodyOf(released)).toEqual({ message: `Hold ${held.holdid} was confirmed to order ${orderid}: cancel the order's lines instead`, code: 'hold_ended' });

    // A checkout abandoned: the same events, pointed at a hold of its own (an id as long, so that
    // each content-length stays true), released at once.
    const abandoned = 'cart-002';
    const forAnotherHold = (event: string) => {
      const file = join(copies, event);
      writeFileSync(file, readFileSync(eventFile(event), 'utf8').replaceAll(held.holdid, abandoned));
      return file;
    };
    expect(invokeFile('Allocations', forAnotherHold('place-hold.json'))).toMatchObject({ statusCode: 201 });
    expect(bodyOf(invoke('Batches', 'batch-status.json'))).toMatchObject({ held: held.lines[0].qty });
    expect(invokeFile('Allocations', forAnotherHold('release-hold.json'))).toMatchObject({ statusCode: 204 });
    expect(invokeFile('Allocations', forAnotherHold('release-hold.json'))).toMatchObject({ statusCode: 204 });
    expect(bodyOf(invokeFile('Allocations', forAnotherHold('hold-status.json')))).toMatchObject({ status: 'released' });
    expect(bodyOf(invoke('Batches', 'batch-status.json'))).toEqual(batchNow({ allocated: orderedUnits + held.lines[0].qty, held: 0 }));

    // A location: created, read, and listed after the built-in default.
    const place = { id: sampleEvent('put-location.json').pathParameters.id, ...bodyOf(sampleEvent('put-location.json')), active: true };
    const put = invoke('Batches', 'put-location.json');
    expect(put.statusCode).toBe(201);
    expect(bodyOf(put)).toEqual(place);
    expect(invoke('Batches', 'put-location.json')).toMatchObject({ statusCode: 200, body: put.body });
    expect(bodyOf(invoke('Batches', 'location.json'))).toEqual(place);
    expect(bodyOf(invoke('Batches', 'locations.json'))).toEqual({ locations: [{ id: 'default', name: 'Default', priority: 0, serves: ['*'], active: true }, place] });

    // A transfer of the batch's units to that location: made, repeated, read, cancelled, its units back.
    const transfer = bodyOf(sampleEvent('create-transfer.json'));
    const before = bodyOf(invoke('Batches', 'batch-status.json'));
    const made = invoke('Batches', 'create-transfer.json');
    expect(made.statusCode).toBe(201);
    expect(bodyOf(made)).toEqual({ transferid: transfer.transferid, from_batchref: batch.ref, ref: transfer.transferid });
    expect(invoke('Batches', 'create-transfer.json')).toMatchObject({ statusCode: 200, body: made.body });
    expect(bodyOf(invoke('Batches', 'batch-status.json'))).toMatchObject({ qty: before.qty - transfer.qty, available: before.available - transfer.qty });
    expect(bodyOf(invoke('Batches', 'transfer-status.json'))).toEqual({ ...transfer, from_batchref: batch.ref, ref: transfer.transferid, status: 'active' });
    expect(invoke('Batches', 'cancel-transfer.json')).toMatchObject({ statusCode: 204 });
    expect(bodyOf(invoke('Batches', 'transfer-status.json'))).toMatchObject({ status: 'cancelled' });
    expect(bodyOf(invoke('Batches', 'batch-status.json'))).toEqual(before);
  }, 120_000);

  it("sweeps on the schedule's sample event: an expired hold ended, its units back on its batch", async () => {
    const sku = 'SWEPT-LAMP';
    await table.repository().addBatch({ ref: 'swept-lamp-1', sku, qty: 3, available: 3, eta: null });
    // Placed an hour ago for a minute: expired, and nothing has ended it.
    const anHourAgo = table.repository({ clock: () => Date.now() - 3_600_000 });
    await placeHold({ holdid: 'cart-swept', lines: [{ sku, qty: 2 }], ttlSeconds: 60 }, anHourAgo);

    const { SweepHolds } = functions;
    const sweep = invokeInNode(bundleOf(SweepHolds), eventFile('sweep-holds.json'), environmentOf(SweepHolds), SweepHolds.Properties.Timeout);

    expect(sweep).toEqual({ ended: 1, failed: 0, overdue: 0, stoppedAtDeadline: false });
    expect(await table.repository().hold('cart-swept')).toMatchObject({ status: 'expired' });
    const batch = await table.repository().batch('swept-lamp-1', sku);
    expect(batch?.available).toBe(3);
    expect(batch?.held ?? []).toEqual([]);
  }, 60_000);

  it('answers GET /openapi.json with docs/openapi.json, shipped beside the allocations bundle and not inside it', () => {
    const bundle = bundleOf(functions.Allocations);
    const document = readFileSync(OPENAPI_FILE, 'utf8');
    expect(readFileSync(join(bundle, '../openapi.json'), 'utf8')).toBe(document);
    // Imported, the document would be inlined, its text parsed at every cold start.
    expect(readFileSync(bundle, 'utf8')).not.toContain(JSON.parse(document).info.description.slice(0, 60));

    const answer = invokeInNode(bundle, eventFile('openapi-document.json'), environmentOf(functions.Allocations), functions.Allocations.Properties.Timeout);
    expect(answer).toMatchObject({ statusCode: 200, headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache' } });
    expect(answer.body).toBe(document);
  });
});
