import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAllocationApp, stackName } from '../../infra/allocation-app';
import { OPENAPI_FILE } from '../../tools/openapi';
import { createTestTable, type TestTable } from '../support/dynamodb';
import { cdkApp, logicalIdOf } from './cdk-app';

interface FunctionResource {
  Properties: { Handler: string; Environment: { Variables: Record<string, unknown> } };
  Metadata: Record<string, string>;
}

/**
 * Loads a bundle in a fresh Node, as Lambda does (not through the test runner's module loader),
 * and calls its handler with one event. The handler's own log lines go to stdout; the result
 * comes back on fd 3.
 */
const invokeInNode = (bundle: string, eventFile: string, environment: Record<string, string>) => {
  const script = `
    import { readFileSync, writeSync } from 'node:fs';
    const [bundleUrl, eventFile] = process.argv.slice(1);
    const { handler } = await import(bundleUrl);
    const context = { awsRequestId: 'bundle-test', functionName: 'bundle-test', getRemainingTimeInMillis: () => 10000 };
    writeSync(3, JSON.stringify(await handler(JSON.parse(readFileSync(eventFile, 'utf8')), context)));
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script, pathToFileURL(bundle).href, eventFile], {
    env: { PATH: process.env.PATH, ...environment },
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    encoding: 'utf8',
    timeout: 20_000,
  });
  if (run.status !== 0) throw new Error(`The bundle failed (${run.status ?? run.signal}):\n${run.stderr.slice(-2000)}`);
  return JSON.parse(run.output[3] ?? '');
};

const eventFile = (name: string) => join(import.meta.dirname, '../../events', name);

describe('the functions as `cdk synth` bundles them', () => {
  let assembly: CloudAssembly;
  let functions: Record<'Batches' | 'Allocations', FunctionResource>;
  let table: TestTable;

  beforeAll(async () => {
    // The one synth of the suite that runs esbuild.
    const app = cdkApp({}, { bundle: true });
    const stack = defineAllocationApp(app);
    assembly = app.synth();
    const resources: Record<string, FunctionResource> = assembly.getStackByName(stackName).template.Resources;
    const resourceOf = (id: string) => resources[logicalIdOf(stack.api, id)] as FunctionResource;
    functions = { Batches: resourceOf('BatchesFunction'), Allocations: resourceOf('AllocationsFunction') };
    table = await createTestTable();
  }, 60_000);

  afterAll(async () => {
    await table?.drop();
    if (assembly) rmSync(assembly.directory, { recursive: true, force: true });
  });

  const bundleOf = (fn: FunctionResource) => join(assembly.directory, fn.Metadata['aws:asset:path'] ?? '', 'index.mjs');

  /** The function's environment from the template, pointed at the test's table as sam-env.json does. */
  const environmentOf = (fn: FunctionResource) => ({
    ...(fn.Properties.Environment.Variables as Record<string, string>),
    TABLE_NAME: table.tableName,
    DYNAMODB_ENDPOINT: table.endpoint,
  });

  it.each(['Batches', 'Allocations'] as const)('%s: the template points SAM at a bundle holding index.mjs', (name) => {
    const fn = functions[name];
    expect(fn.Metadata['aws:asset:property']).toBe('Code');
    expect(fn.Properties.Handler).toBe('index.handler');
    expect(existsSync(bundleOf(fn))).toBe(true);
    expect(existsSync(`${bundleOf(fn)}.map`)).toBe(true);
  });

  it("answers every sample event, through a batch's life, from the bundles", () => {
    const invoke = (name: keyof typeof functions, event: string) =>
      invokeInNode(bundleOf(functions[name]), eventFile(event), environmentOf(functions[name]));
    const bodyOf = (result: { body: string }) => JSON.parse(result.body);
    const batch = bodyOf(JSON.parse(readFileSync(eventFile('add-batch.json'), 'utf8')));
    const line = bodyOf(JSON.parse(readFileSync(eventFile('allocate.json'), 'utf8')));

    expect(invoke('Batches', 'add-batch.json')).toMatchObject({ statusCode: 201, body: 'OK' });

    const allocated = invoke('Allocations', 'allocate.json');
    expect(allocated.statusCode).toBe(201);
    expect(bodyOf(allocated)).toEqual({ batchref: batch.ref });

    const order = invoke('Allocations', 'order-allocations.json');
    expect(order.statusCode).toBe(200);
    expect(bodyOf(order)).toEqual({ orderid: line.orderid, lines: [{ sku: line.sku, qty: line.qty, batchref: batch.ref }] });

    const status = invoke('Batches', 'batch-status.json');
    expect(status.statusCode).toBe(200);
    expect(bodyOf(status)).toEqual({ ...batch, allocated: line.qty, held: 0, available: batch.qty - line.qty });

    const stock = invoke('Batches', 'sku-stock.json');
    expect(stock.statusCode).toBe(200);
    expect(bodyOf(stock)).toMatchObject({ sku: batch.sku, in_stock: batch.qty - line.qty, incoming: 0, next_eta: null });

    const changed = invoke('Batches', 'change-batch.json');
    expect(changed.statusCode).toBe(200);
    expect(bodyOf(changed)).toMatchObject({ ref: batch.ref, allocated: line.qty, reallocated: [] });

    expect(invoke('Allocations', 'cancel-allocation.json')).toMatchObject({ statusCode: 204 });
    expect(invoke('Allocations', 'order-allocations.json')).toMatchObject({ statusCode: 404 });

    const wholeOrder = invoke('Allocations', 'orders.json');
    const ordered = bodyOf(JSON.parse(readFileSync(eventFile('orders.json'), 'utf8')));
    expect(wholeOrder.statusCode).toBe(201);
    expect(bodyOf(wholeOrder)).toEqual({ orderid: ordered.orderid, lines: [{ ...ordered.lines[0], batchref: batch.ref }] });
  });

  it('answers GET /openapi.json with docs/openapi.json, shipped beside the allocations bundle and not inside it', () => {
    const bundle = bundleOf(functions.Allocations);
    const document = readFileSync(OPENAPI_FILE, 'utf8');
    expect(readFileSync(join(bundle, '../openapi.json'), 'utf8')).toBe(document);
    // Imported, the document would be inlined, its text parsed at every cold start.
    expect(readFileSync(bundle, 'utf8')).not.toContain(JSON.parse(document).info.description.slice(0, 60));

    const answer = invokeInNode(bundle, eventFile('openapi-document.json'), environmentOf(functions.Allocations));
    expect(answer).toMatchObject({ statusCode: 200, headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache' } });
    expect(answer.body).toBe(document);
  });
});
