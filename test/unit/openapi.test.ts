import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as domainErrors from '../../domain/errors';
import { StoreUnavailable } from '../../domain/errors';
import type { BatchRepository } from '../../domain/ports';
import { createAllocationsHandler } from '../../functions/allocations';
import { createBatchesHandler } from '../../functions/batches';
import * as httpErrors from '../../functions/http/errors';
import { MAX_BODY_BYTES } from '../../functions/http/route';
import { type AllocationsRouteKey, type BatchesRouteKey, pathParameterNames, routeKeys, splitRouteKey } from '../../functions/http/route-keys';
import { OPENAPI_FILE, openApiText } from '../../tools/openapi';
import { documentValidators } from '../../tools/openapi/validation';
import { type RouteEventOptions, lambdaContext, routeEvent, withBytes } from '../support/events';
import { FakeRepository } from '../support/fake-repository';
import { type ReceivedResponse, committedOpenApiDocument, responseProblems } from '../support/openapi-responses';
import { type CapturedTelemetry, captureTelemetry } from '../support/telemetry';

type RouteKey = BatchesRouteKey | AllocationsRouteKey;

const REGENERATE = 'run `npm run openapi` and commit docs/openapi.json';

const ALL_ROUTE_KEYS: readonly RouteKey[] = [...routeKeys.batches, ...routeKeys.allocations];

const DOCUMENT_ROUTE_KEY: RouteKey = 'GET /openapi.json';

/** Every route but the document's reads or writes the store. */
const STORE_ROUTE_KEYS = ALL_ROUTE_KEYS.filter((routeKey) => routeKey !== DOCUMENT_ROUTE_KEY);

interface MediaType {
  schema: unknown;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}
interface OperationObject {
  operationId: string;
  requestBody?: { content: Record<string, MediaType> };
  responses: Record<string, { headers?: Record<string, { example: unknown }>; content?: Record<string, MediaType> }>;
}
interface PathItem {
  parameters?: { name: string; in: string; required: boolean; schema: unknown; example: unknown }[];
  [method: string]: unknown;
}
interface Document {
  openapi: string;
  paths: Record<string, PathItem>;
  components: { schemas: Record<string, { examples?: unknown[] }> };
}

/** The committed file, the one clients read; read in a hook so that a missing file fails tests, not collection. */
let document: Document;
beforeAll(() => {
  document = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'));
});

const operationOf = (routeKey: string) => {
  const { method, path } = splitRouteKey(routeKey);
  return document.paths[path]?.[method.toLowerCase()] as OperationObject | undefined;
};

/** The fields the request body's component lists as required. */
/**
 * The fields a body must have: those its schema requires, those of its `oneOf` (exactly one of them,
 * NewAdjustment's `qty` or `delta`), and those its `dependentRequired` asks of a field it has.
 */
const requiredFieldsOf = (routeKey: string, example: Record<string, unknown> = {}): string[] => {
  const reference = (operationOf(routeKey)?.requestBody?.content['application/json']?.schema as { $ref: string }).$ref;
  const component = document.components.schemas[reference.split('/').pop() ?? ''] as {
    required?: string[];
    oneOf?: { required: string[] }[];
    dependentRequired?: Record<string, string[]>;
  };
  const oneOf = (component.oneOf ?? []).flatMap(({ required }) => required.filter((field) => field in example));
  const dependent = Object.entries(component.dependentRequired ?? {}).flatMap(([field, needs]) => (field in example ? needs : []));
  return [...(component.required ?? []), ...oneOf, ...dependent];
};

const exampleBodyOf = (routeKey: string) => operationOf(routeKey)?.requestBody?.content['application/json']?.example as Record<string, unknown>;

describe('docs/openapi.json', () => {
  it('equals a fresh generation', () => {
    expect(readFileSync(OPENAPI_FILE, 'utf8'), `docs/openapi.json is out of date: ${REGENERATE}`).toBe(openApiText());
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(document) as unknown as Record<string, unknown>);
    expect(result.errors, JSON.stringify(result.errors, null, 2)).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
  });

  it('describes every route key by its method and path, and no other operation', () => {
    const described = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((field) => field !== 'parameters')
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(described.sort()).toEqual([...ALL_ROUTE_KEYS].sort());
  });

  it('names each operation as client generators will, once', () => {
    expect(Object.fromEntries(ALL_ROUTE_KEYS.map((routeKey) => [routeKey, operationOf(routeKey)?.operationId]))).toEqual({
      'POST /add_batch': 'addBatch',
      'GET /batches/{ref}': 'getBatch',
      'PATCH /batches/{ref}': 'changeBatch',
      'GET /skus/{sku}/stock': 'getSkuStock',
      'GET /skus/{sku}/history': 'getSkuHistory',
      'GET /skus': 'listSkus',
      'GET /locations': 'getLocations',
      'GET /locations/{id}': 'getLocation',
      'GET /locations/{id}/stock': 'listLocationStock',
      'PUT /locations/{id}': 'putLocation',
      'POST /transfers': 'createTransfer',
      'GET /transfers/{transferid}': 'getTransfer',
      'DELETE /transfers/{transferid}': 'cancelTransfer',
      'POST /shipments': 'ship',
      'GET /shipments/{shipmentid}': 'getShipment',
      'POST /adjustments': 'adjustStock',
      'POST /imports': 'importRows',
      'GET /imports/{importid}': 'getImport',
      'GET /imports/{importid}/rows': 'listImportRows',
      'POST /allocate': 'allocate',
      'POST /orders': 'allocateOrder',
      'POST /promises': 'promiseCart',
      'GET /allocations/{orderid}': 'getOrderAllocations',
      'DELETE /allocations/{orderid}/{sku}': 'cancelAllocation',
      'POST /holds': 'placeHold',
      'GET /holds/{holdid}': 'getHold',
      'PATCH /holds/{holdid}': 'extendHold',
      'DELETE /holds/{holdid}': 'releaseHold',
      'POST /holds/{holdid}/confirm': 'confirmHold',
      'GET /openapi.json': 'getOpenApiDocument',
    });
  });

  it.each(ALL_ROUTE_KEYS)("%s: takes each parameter of its path as required, an identifier, or a location's id for {id}", (routeKey) => {
    const { path } = splitRouteKey(routeKey);
    const parameters = document.paths[path]?.parameters ?? [];
    const componentOf = (name: string) => (name === 'id' ? 'LocationId' : 'Identifier');
    expect(parameters.map(({ name, in: where, required, schema }) => ({ name, where, required, schema }))).toEqual(
      pathParameterNames(path).map((name) => ({ name, where: 'path', required: true, schema: { $ref: `#/components/schemas/${componentOf(name)}` } })),
    );
  });

  it('holds examples that its own schemas accept', () => {
    const validators = documentValidators(document);
    const checked: string[] = [];
    const check = (value: unknown, ...segments: string[]) => {
      const validate = validators.schemaAt(...segments);
      expect(validate, `no schema at ${segments.join(' ')}`).toBeDefined();
      expect(validate?.(value), `${segments.join(' ')}: ${validate && validators.errorsText(validate)}`).toBe(true);
      checked.push(segments.join(' '));
    };
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      for (const example of schema.examples ?? []) check(example, 'components', 'schemas', name);
    }
    for (const [path, item] of Object.entries(document.paths)) {
      for (const parameter of item.parameters ?? []) check(parameter.example, 'paths', path, 'parameters', String(item.parameters?.indexOf(parameter)), 'schema');
      for (const [method, operation] of Object.entries(item).filter(([field]) => field !== 'parameters') as [string, OperationObject][]) {
        for (const [mediaType, { example }] of Object.entries(operation.requestBody?.content ?? {})) {
          check(example, 'paths', path, method, 'requestBody', 'content', mediaType, 'schema');
        }
        for (const [status, response] of Object.entries(operation.responses)) {
          for (const [name, header] of Object.entries(response.headers ?? {})) check(header.example, 'paths', path, method, 'responses', status, 'headers', name, 'schema');
          for (const [mediaType, { examples = {} }] of Object.entries(response.content ?? {})) {
            for (const { value } of Object.values(examples)) check(value, 'paths', path, method, 'responses', status, 'content', mediaType, 'schema');
          }
        }
      }
    }
    // Every operation has examples of its answers, most have several.
    expect(checked.length).toBeGreaterThan(ALL_ROUTE_KEYS.length * 10);
  });
});

const isBatchesRoute = (routeKey: string): routeKey is BatchesRouteKey => (routeKeys.batches as readonly string[]).includes(routeKey);

/** Both handlers over one repository, each sent the route keys the stack sends it. */
const serviceOver = (repository: BatchRepository, readOpenApiDocument = committedOpenApiDocument) => {
  const batches = createBatchesHandler(repository);
  const allocations = createAllocationsHandler(repository, readOpenApiDocument);
  return async (routeKey: string, options: RouteEventOptions = {}): Promise<ReceivedResponse> => {
    const result = await (isBatchesRoute(routeKey) ? batches : allocations)(routeEvent(routeKey, options), lambdaContext());
    return { status: result.statusCode ?? 200, headers: result.headers ?? {}, ...(result.body === undefined ? {} : { body: result.body }) };
  };
};

/** A repository whose every call fails with `error`, as a store that is down fails them. */
const failingRepository = (error: Error): BatchRepository => {
  const repository: BatchRepository = new Proxy({} as BatchRepository, {
    get: (_, method) =>
      method === 'withDeadline'
        ? () => repository
        : // A store that is down leaves the clock going.
          method === 'currentTime'
          ? () => Date.parse('2026-11-25T10:00:00.000Z')
          : async () => {
            throw error;
          },
  });
  return repository;
};

/** The abstract bases: never thrown themselves. */
const ABSTRACT_ERRORS = new Set(['DomainError', 'TransientFailure', 'RefusedField']);

const errorClassNames = (module: Record<string, unknown>) =>
  Object.values(module)
    .filter((value): value is { name: string } => typeof value === 'function' && value.prototype instanceof Error)
    .map(({ name }) => name)
    .filter((name) => !ABSTRACT_ERRORS.has(name));

describe('the answers of the handlers, checked against docs/openapi.json', () => {
  // The request log names what each request came to; the answers are checked, so the entries are only read for that.
  let telemetry: CapturedTelemetry;
  const outcomes = () => new Set(telemetry.requests().map(({ outcome }) => outcome));

  beforeAll(() => {
    telemetry = captureTelemetry();
  });
  afterAll(() => {
    telemetry.restore();
  });

  const expectDocumented = async (routeKey: string, answer: Promise<ReceivedResponse>, status: number) => {
    const response = await answer;
    expect(response.status, response.body).toBe(status);
    expect(responseProblems(routeKey, response)).toEqual([]);
  };

  it("a batch's life, sent the document's examples, gets the documented answer at each step", async () => {
    const send = serviceOver(new FakeRepository());
    const steps: readonly (readonly [RouteKey, RouteEventOptions, number])[] = [
      ['POST /add_batch', { body: exampleBodyOf('POST /add_batch') }, 201],
      ['POST /add_batch', { body: { ref: 'batch-7', sku: 'SOFA', qty: 5, eta: null } }, 201],
      ['POST /add_batch', { body: exampleBodyOf('POST /add_batch') }, 200],
      ['POST /add_batch', { body: { ...(exampleBodyOf('POST /add_batch') as object), qty: 21 } }, 409],
      ['POST /allocate', { body: exampleBodyOf('POST /allocate') }, 201],
      ['POST /allocate', { body: exampleBodyOf('POST /allocate') }, 200],
      ['POST /allocate', { body: { ...exampleBodyOf('POST /allocate'), qty: 4 } }, 409],
      ['POST /allocate', { body: { ...exampleBodyOf('POST /allocate'), destination: { country: 'BE' } } }, 409],
      ['POST /allocate', { body: { orderid: 'order-5', sku: 'NOPE', qty: 1 } }, 400],
      ['POST /promises', { body: exampleBodyOf('POST /promises') }, 200],
      ['POST /promises', { body: { lines: [{ sku: 'SOFA', qty: 99 }, { sku: 'NOPE', qty: 1 }] } }, 200],
      ['POST /promises', { body: { lines: [{ sku: 'SOFA', qty: 1 }], location: 'nowhere' } }, 400],
      ['POST /promises', { body: { lines: [] } }, 400],
      ['POST /allocate', { body: { orderid: 'order-5', sku: 'LAMP', qty: 1000 } }, 400],
      ['POST /orders', { body: exampleBodyOf('POST /orders') }, 201],
      ['POST /orders', { body: exampleBodyOf('POST /orders') }, 200],
      ['POST /orders', { body: { orderid: 'order-6', lines: [{ sku: 'NOPE', qty: 1 }] } }, 400],
      ['POST /orders', { body: { orderid: 'order-2', lines: [{ sku: 'LAMP', qty: 9 }] } }, 409],
      ['POST /orders', { body: { ...exampleBodyOf('POST /orders'), location: 'default' } }, 409],
      ['GET /allocations/{orderid}', { pathParameters: { orderid: 'order-1' } }, 200],
      ['GET /allocations/{orderid}', { pathParameters: { orderid: 'order-9' } }, 404],
      ['GET /batches/{ref}', { pathParameters: { ref: 'batch-1' } }, 200],
      ['GET /batches/{ref}', { pathParameters: { ref: 'batch-9' } }, 404],
      ['GET /skus/{sku}/stock', { pathParameters: { sku: 'LAMP' } }, 200],
      ['GET /skus/{sku}/stock', { pathParameters: { sku: 'NOPE' } }, 404],
      // Below what its lines hold: the newest line leaves its order, as no other batch of LAMP has stock.
      ['PATCH /batches/{ref}', { pathParameters: { ref: 'batch-1' }, body: exampleBodyOf('PATCH /batches/{ref}') }, 200],
      ['PATCH /batches/{ref}', { pathParameters: { ref: 'batch-9' }, body: { qty: 1 } }, 404],
      ['DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid: 'order-1', sku: 'LAMP' } }, 204],
      ['DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid: 'order-1', sku: 'LAMP' } }, 404],
    ];
    for (const [routeKey, options, status] of steps) await expectDocumented(routeKey, send(routeKey, options), status);
  });

  it("a split line's life gets the documented answer at each step", async () => {
    const send = serviceOver(new FakeRepository());
    const steps: readonly (readonly [RouteKey, RouteEventOptions, number])[] = [
      ['POST /add_batch', { body: { ref: 'batch-7', sku: 'SOFA', qty: 3, eta: null } }, 201],
      ['POST /add_batch', { body: { ref: 'batch-8', sku: 'SOFA', qty: 4, eta: null } }, 201],
      ['POST /allocate', { body: { orderid: 'order-1', sku: 'SOFA', qty: 5, split: 'batches' } }, 201],
      ['POST /allocate', { body: { orderid: 'order-1', sku: 'SOFA', qty: 5, split: 'batches' } }, 200],
      ['POST /allocate', { body: { orderid: 'order-1', sku: 'SOFA', qty: 5 } }, 409],
      ['POST /allocate', { body: { orderid: 'order-2', sku: 'SOFA', qty: 1, split: 'locations' } }, 201],
      ['POST /allocate', { body: { orderid: 'order-3', sku: 'SOFA', qty: 1, split: 'parcels' } }, 400],
      ['POST /orders', { body: { orderid: 'order-1', lines: [{ sku: 'SOFA', qty: 5 }] } }, 409],
      ['GET /allocations/{orderid}', { pathParameters: { orderid: 'order-1' } }, 200],
      ['PATCH /batches/{ref}', { pathParameters: { ref: 'batch-7' }, body: { qty: 0 } }, 200],
      ['DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid: 'order-2', sku: 'SOFA' } }, 204],
    ];
    for (const [routeKey, options, status] of steps) await expectDocumented(routeKey, send(routeKey, options), status);
  });

  it("a split order's life, and a split hold's, get the documented answer at each step", async () => {
    const repository = new FakeRepository();
    // Eight SKUs of six batches of 1: eight lines of six parts need 8 x (1 + 2 x 6) = 104 writes.
    const skus = Array.from({ length: 8 }, (_, index) => `SKU-${index}`);
    for (const sku of skus) for (let index = 0; index < 6; index++) await repository.addBatch({ ref: `${sku}-${index}`, sku, qty: 1, available: 1, eta: null });
    const send = serviceOver(repository);
    const order = { orderid: 'order-1', split: 'batches', lines: [{ sku: 'SOFA', qty: 5 }, { sku: 'LAMP', qty: 1, split: 'none' }] };
    const steps: readonly (readonly [RouteKey, RouteEventOptions, number])[] = [
      ['POST /add_batch', { body: { ref: 'batch-7', sku: 'SOFA', qty: 3, eta: null } }, 201],
      ['POST /add_batch', { body: { ref: 'batch-8', sku: 'SOFA', qty: 4, eta: null } }, 201],
      ['POST /add_batch', { body: { ref: 'batch-1', sku: 'LAMP', qty: 4, eta: null } }, 201],
      ['POST /orders', { body: order }, 201],
      ['POST /orders', { body: order }, 200],
      ['POST /orders', { body: { ...order, split: 'locations' } }, 409],
      ['POST /orders', { body: { ...order, split: 'parcels' } }, 400],
      ['POST /orders', { body: { orderid: 'order-2', split: 'batches', lines: skus.map((sku) => ({ sku, qty: 6 })) } }, 400],
      ['GET /allocations/{orderid}', { pathParameters: { orderid: 'order-1' } }, 200],
      ['POST /add_batch', { body: { ref: 'batch-9', sku: 'DESK', qty: 3, eta: null } }, 201],
      ['POST /add_batch', { body: { ref: 'batch-10', sku: 'DESK', qty: 3, eta: null } }, 201],
      ['POST /holds', { body: { holdid: 'cart-1', split: 'batches', lines: [{ sku: 'DESK', qty: 5 }] } }, 201],
      ['POST /holds', { body: { holdid: 'cart-1', split: 'batches', lines: [{ sku: 'DESK', qty: 5 }] } }, 200],
      ['POST /holds', { body: { holdid: 'cart-1', lines: [{ sku: 'DESK', qty: 5 }] } }, 409],
      ['GET /holds/{holdid}', { pathParameters: { holdid: 'cart-1' } }, 200],
      ['PATCH /holds/{holdid}', { pathParameters: { holdid: 'cart-1' }, body: { ttl_seconds: 60 } }, 200],
      ['POST /holds/{holdid}/confirm', { pathParameters: { holdid: 'cart-1' }, body: { orderid: 'order-3' } }, 201],
      ['GET /allocations/{orderid}', { pathParameters: { orderid: 'order-3' } }, 200],
    ];
    for (const [routeKey, options, status] of steps) await expectDocumented(routeKey, send(routeKey, options), status);
  });

  it('a batch at a location, and one at a location that does not exist, get the documented answers', async () => {
    const repository = new FakeRepository();
    await repository.saveLocation({ id: 'warehouse-lyon', name: 'Lyon', priority: 1, serves: ['FR'], active: true });
    const send = serviceOver(repository);
    const atLyon = { ...exampleBodyOf('POST /add_batch'), location: 'warehouse-lyon' };
    const steps: readonly (readonly [RouteKey, RouteEventOptions, number])[] = [
      ['POST /add_batch', { body: atLyon }, 201],
      ['POST /add_batch', { body: atLyon }, 200],
      ['POST /add_batch', { body: { ...atLyon, location: 'default' } }, 409],
      ['POST /add_batch', { body: { ...atLyon, ref: 'batch-2', location: 'nowhere' } }, 400],
      ['GET /batches/{ref}', { pathParameters: { ref: 'batch-1' } }, 200],
      ['GET /skus/{sku}/stock', { pathParameters: { sku: 'LAMP' } }, 200],
      ['GET /skus/{sku}/stock', { pathParameters: { sku: 'LAMP' }, queryStringParameters: { location: 'warehouse-lyon' } }, 200],
      ['GET /skus/{sku}/stock', { pathParameters: { sku: 'LAMP' }, queryStringParameters: { location: 'nowhere' } }, 404],
      ['GET /skus/{sku}/stock', { pathParameters: { sku: 'LAMP' }, queryStringParameters: { location: 'no where' } }, 400],
    ];
    for (const [routeKey, options, status] of steps) await expectDocumented(routeKey, send(routeKey, options), status);
  });

  it("the locations' life gets the documented answer at each step", async () => {
    const send = serviceOver(new FakeRepository());
    const lyon = { pathParameters: { id: 'warehouse-lyon' } };
    const steps: readonly (readonly [RouteKey, RouteEventOptions, number])[] = [
      ['GET /locations', {}, 200],
      ['GET /locations/{id}', { pathParameters: { id: 'default' } }, 200],
      ['GET /locations/{id}', lyon, 404],
      ['PUT /locations/{id}', { ...lyon, body: exampleBodyOf('PUT /locations/{id}') }, 201],
      ['PUT /locations/{id}', { ...lyon, body: exampleBodyOf('PUT /locations/{id}') }, 200],
      ['PUT /locations/{id}', { ...lyon, body: { ...exampleBodyOf('PUT /locations/{id}'), active: false } }, 200],
      ['PUT /locations/{id}', { pathParameters: { id: 'default' }, body: { name: 'Main', priority: 0, serves: ['*'] } }, 200],
      ['PUT /locations/{id}', { pathParameters: { id: 'default' }, body: { id: 'elsewhere', name: 'Main', priority: 0, serves: ['*'] } }, 400],
      ['GET /locations/{id}', lyon, 200],
      ['GET /locations', {}, 200],
    ];
    for (const [routeKey, options, status] of steps) await expectDocumented(routeKey, send(routeKey, options), status);
  });

  it('answers a location that keeps changing under its write with a documented 503', async () => {
    const repository = new FakeRepository();
    repository.saveLocation = async () => 'changed';
    const put = serviceOver(repository)('PUT /locations/{id}', { pathParameters: { id: 'lyon' }, body: exampleBodyOf('PUT /locations/{id}') });
    await expectDocumented('PUT /locations/{id}', put, 503);
  });

  describe.each(STORE_ROUTE_KEYS)('%s', (routeKey) => {
    const { path } = splitRouteKey(routeKey);
    const names = pathParameterNames(path);
    const validParameters = Object.fromEntries(names.map((name) => [name, 'x']));
    // As docs/api.md has it: the routes with a body are the POST, PUT and PATCH ones.
    const takesBody = ['POST', 'PUT', 'PATCH'].includes(splitRouteKey(routeKey).method);
    const validRequest = (): RouteEventOptions => ({ pathParameters: validParameters, ...(takesBody ? { body: exampleBodyOf(routeKey) } : {}) });

    it.each(names)('refuses a bad %s with a documented 400', async (name) => {
      const send = serviceOver(new FakeRepository());
      await expectDocumented(routeKey, send(routeKey, { ...validRequest(), pathParameters: { ...validParameters, [name]: ' ' } }), 400);
    });

    it('answers a store that is down with a documented 503 and its Retry-After', async () => {
      await expectDocumented(routeKey, serviceOver(failingRepository(new StoreUnavailable('down')))(routeKey, validRequest()), 503);
    });

    it('answers an unexpected failure with a documented 500', async () => {
      await expectDocumented(routeKey, serviceOver(failingRepository(new Error('disk on fire')))(routeKey, validRequest()), 500);
    });

    if (!takesBody) return;

    it('answers each bad body with its documented status', async () => {
      const send = serviceOver(new FakeRepository());
      const example = exampleBodyOf(routeKey);
      const badBodies: readonly (readonly [RouteEventOptions, number])[] = [
        [{ body: example, contentType: null }, 415],
        [{ body: example, contentType: 'application/json; charset=latin1' }, 415],
        [{ body: { ...example, padding: 'x'.repeat(MAX_BODY_BYTES) } }, 413],
        [{ body: withBytes('{"note": "@"}', [0xff]) }, 400],
        [{ body: '{"qty":', raw: true }, 400],
        [{ body: [example] }, 400],
      ];
      for (const [options, status] of badBodies) await expectDocumented(routeKey, send(routeKey, { pathParameters: validParameters, ...options }), status);
    });

    it("takes the document's example body, and refuses it without any one of the fields the document requires", async () => {
      const send = serviceOver(new FakeRepository());
      const example = exampleBodyOf(routeKey);
      const accepted = await send(routeKey, { pathParameters: validParameters, body: example });
      expect(accepted.body ?? '').not.toContain('Invalid request body');
      // A body that names no field as required needs some (BatchChange: qty or eta), and its example has just one.
      const required = requiredFieldsOf(routeKey, example);
      const mustHave = required.length > 0 ? required : Object.keys(example);
      for (const field of Object.keys(example)) {
        const { [field]: _, ...without } = example;
        const answer = await send(routeKey, { pathParameters: validParameters, body: without });
        if (mustHave.includes(field)) {
          expect(answer.status, `without ${field}`).toBe(400);
          expect(JSON.parse(answer.body ?? '').message).toBe('Invalid request body');
        } else {
          expect(answer.body ?? '', `without ${field}`).not.toContain('Invalid request body');
        }
      }
    });
  });

  it('answers a store that keeps changing under a write with a documented 503', async () => {
    const repository = new FakeRepository();
    const send = serviceOver(repository);
    await send('POST /add_batch', { body: exampleBodyOf('POST /add_batch') });
    repository.changeBatch = async () => ({ outcome: 'changed' });
    repository.saveAllocation = async () => ({ outcome: 'batch-changed' });
    await expectDocumented('PATCH /batches/{ref}', send('PATCH /batches/{ref}', { pathParameters: { ref: 'batch-1' }, body: { qty: 5 } }), 503);
    await expectDocumented('POST /allocate', send('POST /allocate', { body: exampleBodyOf('POST /allocate') }), 503);
  });

  it("the transfers' life gets the documented answer at each step, and a transfer that keeps losing its batch a documented 503", async () => {
    const repository = new FakeRepository();
    await repository.saveLocation({ id: 'warehouse-lyon', name: 'Lyon', priority: 1, serves: ['FR'], active: true });
    await repository.saveLocation({ id: 'closed', name: 'Closed', priority: 2, serves: ['FR'], active: false });
    const send = serviceOver(repository);
    const transfer = exampleBodyOf('POST /transfers') as Record<string, unknown>;
    const transferid = { pathParameters: { transferid: 'transfer-1' } };
    const steps: readonly (readonly [RouteKey, RouteEventOptions, number])[] = [
      ['POST /add_batch', { body: { ref: 'batch-1', sku: 'LAMP', qty: 10, eta: null } }, 201],
      ['POST /transfers', { body: transfer }, 201],
      ['POST /transfers', { body: transfer }, 200],
      ['POST /transfers', { body: { ...transfer, qty: 1 } }, 409],
      ['POST /transfers', { body: { ...transfer, transferid: 'transfer-2', to: 'closed' } }, 400],
      ['POST /transfers', { body: { ...transfer, transferid: 'transfer-2', to: 'default' } }, 400],
      ['POST /transfers', { body: { ...transfer, transferid: 'transfer-2', qty: 6 } }, 400],
      ['GET /transfers/{transferid}', transferid, 200],
      ['GET /transfers/{transferid}', { pathParameters: { transferid: 'transfer-9' } }, 404],
      ['POST /allocate', { body: { orderid: 'order-1', sku: 'LAMP', qty: 1, location: 'warehouse-lyon' } }, 201],
      ['DELETE /transfers/{transferid}', transferid, 409],
      ['DELETE /transfers/{transferid}', { pathParameters: { transferid: 'transfer-9' } }, 404],
      ['DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid: 'order-1', sku: 'LAMP' } }, 204],
      ['DELETE /transfers/{transferid}', transferid, 204],
      ['DELETE /transfers/{transferid}', transferid, 204],
    ];
    for (const [routeKey, options, status] of steps) await expectDocumented(routeKey, send(routeKey, options), status);
    repository.saveTransfer = async () => ({ outcome: 'batch-changed' });
    await expectDocumented('POST /transfers', send('POST /transfers', { body: { ...transfer, transferid: 'transfer-3' } }), 503);
  });

  it("the shipments' life gets the documented answer at each step, and a shipment that keeps losing its lines a documented 503", async () => {
    const repository = new FakeRepository();
    await repository.saveLocation({ id: 'warehouse-lyon', name: 'Lyon', priority: 1, serves: ['FR'], active: true });
    const send = serviceOver(repository);
    const shipment = exampleBodyOf('POST /shipments') as Record<string, unknown>;
    const { location: _, ...anywhere } = shipment;
    const line = { pathParameters: { orderid: 'order-1', sku: 'LAMP' } };
    const steps: readonly (readonly [RouteKey, RouteEventOptions, number])[] = [
      ['POST /shipments', { body: shipment }, 404],
      ['POST /add_batch', { body: { ref: 'batch-1', sku: 'LAMP', qty: 10, eta: null } }, 201],
      ['POST /add_batch', { body: { ref: 'batch-2', sku: 'CHAIR', qty: 10, eta: null, location: 'warehouse-lyon' } }, 201],
      ['POST /allocate', { body: { orderid: 'order-1', sku: 'LAMP', qty: 3 } }, 201],
      ['POST /shipments', { body: { ...shipment, lines: [{ sku: 'CHAIR', qty: 1 }] } }, 404],
      ['POST /allocate', { body: { orderid: 'order-1', sku: 'CHAIR', qty: 1 } }, 201],
      ['POST /shipments', { body: anywhere }, 400],
      ['POST /shipments', { body: { ...shipment, lines: [{ sku: 'LAMP', qty: 4 }] } }, 409],
      ['POST /shipments', { body: shipment }, 201],
      ['POST /shipments', { body: shipment }, 200],
      ['POST /shipments', { body: { ...shipment, lines: [{ sku: 'LAMP', qty: 1 }] } }, 409],
      ['GET /shipments/{shipmentid}', { pathParameters: { shipmentid: 'parcel-1' } }, 200],
      ['GET /shipments/{shipmentid}', { pathParameters: { shipmentid: 'parcel-9' } }, 404],
      ['GET /allocations/{orderid}', { pathParameters: { orderid: 'order-1' } }, 200],
      ['POST /shipments', { body: { ...shipment, shipmentid: 'parcel-2', lines: [{ sku: 'LAMP', qty: 1 }] } }, 201],
      ['DELETE /allocations/{orderid}/{sku}', line, 409],
      ['DELETE /allocations/{orderid}/{sku}', { pathParameters: { orderid: 'order-1', sku: 'CHAIR' } }, 204],
    ];
    for (const [routeKey, options, status] of steps) await expectDocumented(routeKey, send(routeKey, options), status);
    repository.saveShipment = async () => ({ outcome: 'changed' });
    await send('POST /allocate', { body: { orderid: 'order-2', sku: 'LAMP', qty: 1 } });
    await expectDocumented('POST /shipments', send('POST /shipments', { body: { ...shipment, shipmentid: 'parcel-3', orderid: 'order-2', lines: [{ sku: 'LAMP', qty: 1 }] } }), 503);
    repository.saveShipment = async () => ({ outcome: 'too-many-writes', writes: 101, maxWrites: 100 });
    await expectDocumented('POST /shipments', send('POST /shipments', { body: { ...shipment, shipmentid: 'parcel-4', orderid: 'order-2', lines: [{ sku: 'LAMP', qty: 1 }] } }), 400);
  });

  it("the adjustments' life gets the documented answer at each step, and one that keeps losing its batch a documented 503", async () => {
    const repository = new FakeRepository();
    const send = serviceOver(repository);
    const adjustment = exampleBodyOf('POST /adjustments') as Record<string, unknown>;
    const { counted_at: _, ...uncounted } = adjustment;
    const steps: readonly (readonly [RouteKey, RouteEventOptions, number])[] = [
      ['POST /adjustments', { body: adjustment }, 404],
      ['POST /add_batch', { body: { ref: 'batch-1', sku: 'LAMP', qty: 50, eta: null } }, 201],
      ['POST /adjustments', { body: { ...adjustment, expected_qty: 49 } }, 409],
      ['POST /adjustments', { body: { ...adjustment, counted_at: '2099-01-01T00:00:00Z' } }, 400],
      ['POST /adjustments', { body: { ...uncounted, adjustmentid: 'lost-1', reason: 'lost', qty: undefined, delta: -60, expected_qty: undefined } }, 400],
      ['POST /adjustments', { body: adjustment }, 201],
      ['POST /adjustments', { body: adjustment }, 200],
      ['POST /adjustments', { body: { ...adjustment, qty: 40 } }, 409],
      ['POST /adjustments', { body: { ...adjustment, adjustmentid: 'count-0', counted_at: '2026-11-25T07:00:00Z', expected_qty: undefined } }, 409],
    ];
    for (const [routeKey, options, status] of steps) await expectDocumented(routeKey, send(routeKey, options), status);
    repository.changeBatch = async () => ({ outcome: 'changed' });
    await expectDocumented('POST /adjustments', send('POST /adjustments', { body: { ...uncounted, adjustmentid: 'count-2', expected_qty: undefined } }), 503);
  });

  it("an import's life gets the documented answer at each step", async () => {
    const repository = new FakeRepository();
    await repository.saveLocation({ id: 'warehouse-lyon', name: 'Lyon', priority: 1, serves: ['FR'], active: true });
    const send = serviceOver(repository);
    const feed = exampleBodyOf('POST /imports') as Record<string, unknown>;
    const steps: readonly (readonly [RouteKey, RouteEventOptions, number])[] = [
      ['GET /imports/{importid}', { pathParameters: { importid: 'feed-2026-11-25' } }, 404],
      ['GET /imports/{importid}/rows', { pathParameters: { importid: 'feed-2026-11-25' } }, 404],
      ['POST /imports', { body: feed }, 201],
      ['POST /imports', { body: feed }, 200],
      ['POST /imports', { body: { ...feed, dry_run: true } }, 409],
      ['GET /imports/{importid}', { pathParameters: { importid: 'feed-2026-11-25' } }, 200],
      ['GET /imports/{importid}/rows', { pathParameters: { importid: 'feed-2026-11-25' }, queryStringParameters: { limit: '2' } }, 200],
      ['GET /imports/{importid}/rows', { pathParameters: { importid: 'feed-2026-11-25' }, queryStringParameters: { limit: '101' } }, 400],
    ];
    for (const [routeKey, options, status] of steps) await expectDocumented(routeKey, send(routeKey, options), status);
  });

  it("answers a hold's conflicts with documented 409s, and a hold that keeps changing under a write with a documented 503", async () => {
    const repository = new FakeRepository();
    const send = serviceOver(repository);
    await send('POST /add_batch', { body: { ref: 'batch-1', sku: 'LAMP', qty: 5, eta: null } });
    await expectDocumented('POST /holds', send('POST /holds', { body: exampleBodyOf('POST /holds') }), 201);
    const otherLines = { ...exampleBodyOf('POST /holds'), lines: [{ sku: 'LAMP', qty: 2 }] };
    await expectDocumented('POST /holds', send('POST /holds', { body: otherLines }), 409);
    await expectDocumented('POST /holds', send('POST /holds', { body: { ...exampleBodyOf('POST /holds'), location: 'default' } }), 409);
    repository.extendHold = async () => 'changed';
    await expectDocumented('PATCH /holds/{holdid}', send('PATCH /holds/{holdid}', { pathParameters: { holdid: 'cart-7' }, body: { ttl_seconds: 60 } }), 503);
  });

  it('answers GET /openapi.json with the committed document, as it documents itself', async () => {
    const response = serviceOver(new FakeRepository())(DOCUMENT_ROUTE_KEY);
    await expectDocumented(DOCUMENT_ROUTE_KEY, response, 200);
    expect((await response).body).toBe(readFileSync(OPENAPI_FILE, 'utf8'));
  });

  it('answers a document it cannot read with a documented 500', async () => {
    const unreadable = () => Promise.reject(Object.assign(new Error("ENOENT: no such file or directory, open '/var/task/openapi.json'"), { code: 'ENOENT' }));
    const response = serviceOver(new FakeRepository(), unreadable)(DOCUMENT_ROUTE_KEY);
    await expectDocumented(DOCUMENT_ROUTE_KEY, response, 500);
    expect((await response).body).not.toContain('ENOENT');
  });

  it('answers a method its path does not take with a documented 404, as API Gateway does', async () => {
    // API Gateway never sends such an event; a handler that got one answers what API Gateway would.
    const send = serviceOver(new FakeRepository());
    await expectDocumented('POST /allocate', send('GET /allocate'), 404);
  });

  // Runs last: it counts what the tests above provoked.
  it('has provoked every error the service defines, so each is documented where it comes', () => {
    const defined = [...errorClassNames(domainErrors), ...errorClassNames(httpErrors)];
    // One of each module: the list is not short by a slip of its own.
    expect(defined).toEqual(expect.arrayContaining(['OutOfStock', 'InvalidRequestBody']));
    const provoked = outcomes();
    expect(defined.filter((name) => !provoked.has(name))).toEqual([]);
  });
});

describe('responseProblems', () => {
  it('finds nothing wrong with an answer as documented', () => {
    expect(responseProblems('POST /allocate', { status: 201, headers: { 'content-type': 'application/json' }, body: '{"batchref":"batch-1","location":"default"}' })).toEqual([]);
  });

  it.each<[string, string, ReceivedResponse, RegExp]>([
    ['a status the route does not document', 'POST /allocate', { status: 418, headers: {}, body: '' }, /418/],
    ['a 503 without Retry-After', 'GET /batches/{ref}', { status: 503, headers: { 'Content-Type': 'application/json' }, body: '{"message":"m","request_id":"r"}' }, /Retry-After/],
    ['a Retry-After that is not a number of seconds', 'GET /batches/{ref}', { status: 503, headers: { 'Content-Type': 'application/json', 'Retry-After': 'soon' }, body: '{"message":"m","request_id":"r"}' }, /Retry-After/],
    ['a body on a 204', 'DELETE /allocations/{orderid}/{sku}', { status: 204, headers: { 'Content-Type': 'application/json' }, body: '{}' }, /204/],
    ['another media type', 'POST /add_batch', { status: 201, headers: { 'Content-Type': 'application/json' }, body: '"OK"' }, /text\/plain/],
    ['a body that is not JSON', 'POST /allocate', { status: 201, headers: { 'Content-Type': 'application/json' }, body: 'OK' }, /not JSON/],
    ['an identifier its rules refuse', 'POST /allocate', { status: 201, headers: { 'Content-Type': 'application/json' }, body: '{"batchref":" "}' }, /batchref/],
    ['a field the view does not name, such as a store key', 'GET /batches/{ref}', {
      status: 200,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ ref: 'b', sku: 'LAMP', qty: 1, allocated: 0, available: 1, eta: null, pk: 'SKU#LAMP' }),
    }, /additional properties/],
  ])('names %s', (_case, routeKey, response, problem) => {
    expect(responseProblems(routeKey, response).join('\n')).toMatch(problem);
  });
});
