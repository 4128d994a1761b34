/**
 * Every route as docs/openapi.json describes it: what it takes, and each answer it can give, with
 * when, in the words of docs/api.md. The status, body and headers of every error the service answers
 * itself are what errors.ts's one mapping (`toErrorResponse`) makes of it, so the document cannot
 * drift from the handlers; what API Gateway or the local server answer before a function runs is
 * written out from docs/api.md.
 */
import type * as z from 'zod/mini';
import {
  AdjustmentExists,
  AdjustmentRefused,
  BatchNotFound,
  DuplicateBatch,
  HoldConflict,
  ImportExists,
  ImportNotFound,
  HoldNotFound,
  HoldNotPlaced,
  InvalidSku,
  LineAlreadyAllocated,
  LineShipped,
  LocationNotFound,
  LineNotFound,
  LineRoutedOtherwise,
  LineSplitOtherwise,
  OrderLinesAlreadyAllocated,
  OrderLinesRoutedOtherwise,
  OrderLinesSplitOtherwise,
  TooManyParts,
  OrderNotAllocated,
  OrderNotFound,
  OutOfStock,
  QtyChanged,
  ShipmentExists,
  ShipmentLocationNeeded,
  ShipmentNotFound,
  ShipmentTooLarge,
  StaleCount,
  StoreUnavailable,
  TooFewUnshipped,
  TransferConflict,
  TransferNotFound,
  TransferNotInStock,
  UnknownLocation,
  UnknownSku,
} from '../../domain/errors';
import {
  BodyTooLarge,
  InvalidPathParameters,
  InvalidQueryParameters,
  InvalidRequestBody,
  InvalidUtf8Body,
  UnsupportedMediaType,
  toErrorResponse,
} from '../../functions/http/errors';
import { MAX_TRANSACTION_ITEMS } from '../../functions/store/store-calls';
import { MAX_PARTS_PER_LINE } from '../../domain/split-lines';
import { IMPORT_CHECK_ROWS, IMPORT_CHUNK_ROWS, MAX_IMPORT_ERRORS, importRowsCursorOf } from '../../domain/imports';
import { OPENAPI_DOCUMENT_CACHE_CONTROL } from '../../functions/http/openapi-document';
import { MAX_BODY_BYTES } from '../../functions/http/route';
import { type AllocationsRouteKey, type BatchesRouteKey, pathParameterNames, splitRouteKey } from '../../functions/http/route-keys';
import { importRowsQuerySchema } from '../../functions/http/import-schemas';
import { historyQuerySchema, listQuerySchema, noQuerySchema, pathParametersSchema, stockQuerySchema } from '../../functions/http/schemas';
import { cursorOf } from '../../domain/stock-history';
import { listCursorOf } from '../../domain/stock-listings';
import { type ComponentName, type JsonSchema, OPENAPI_VERSION, type QuerySchema, type RequestBodyName, requestBodySchemas, schemaRef } from './components';

export type RouteKey = BatchesRouteKey | AllocationsRouteKey;

export const JSON_MEDIA_TYPE = 'application/json';

/** One answer a route can give, and when. */
export interface Answer {
  readonly status: number;
  /** Markdown, from docs/api.md. */
  readonly when: string;
  /** The example's name: where the service answers, the outcome its request log records. */
  readonly name: string;
  /** None for a 204. */
  readonly body?: { readonly mediaType: string; readonly schema: JsonSchema; readonly example: unknown };
  /** Each header it carries, with the value of the example. */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface Operation {
  readonly operationId: string;
  readonly summary: string;
  readonly description: string;
  readonly requestBody?: {
    readonly schema: RequestBodyName;
    readonly example: unknown;
    /** A body that breaks a bound: the example of its 400. */
    readonly refused: unknown;
  };
  /** The example of each path parameter. */
  readonly pathParameters?: Readonly<Record<string, string>>;
  /**
   * The query parameters the route takes: the schema its handler checks them with, what each says,
   * with its example, and a query that breaks a rule (the example of its 400).
   */
  readonly query?: {
    readonly schema: QuerySchema;
    readonly parameters: Readonly<Record<string, { readonly description: string; readonly example: string }>>;
    readonly refused: Readonly<Record<string, string>>;
  };
  /** Its successes and its own refusals; those of every route are added to them. */
  readonly answers: readonly Answer[];
  /** Its answers when it fails, for a route that never calls the store; otherwise the store's (`failureAnswers`). */
  readonly failures?: readonly Answer[];
}

/** Headers the answers carry, as the document describes them. */
export const HEADERS: Readonly<Record<string, { readonly description: string; readonly schema: JsonSchema }>> = {
  'Retry-After': { description: 'Seconds to wait before repeating the same request.', schema: { type: 'integer', minimum: 0 } },
  Allow: { description: 'The methods the path takes.', schema: { type: 'string', pattern: '^[A-Z]+(, [A-Z]+)*$' } },
  'Cache-Control': {
    description: 'The document changes with each deploy, under the same URL: a copy may be kept, but must be fetched again before it is used.',
    schema: { type: 'string', const: OPENAPI_DOCUMENT_CACHE_CONTROL },
  },
};

const EXAMPLE_REQUEST_ID = 'JKJaXmPLvHcESHA=';

const json = (name: ComponentName, example: unknown) => ({ mediaType: JSON_MEDIA_TYPE, schema: schemaRef(name), example });

/** What the mapping answers for `error`, named by the outcome it logs. */
/** An error's answer as the handlers give it, its example named for the error, or `name` where two of one status share an error. */
const mapped = (when: string, error: unknown, schema: ComponentName = 'Error', name?: string): Answer => {
  const { statusCode, body, headers, outcome } = toErrorResponse(error, EXAMPLE_REQUEST_ID);
  return { status: statusCode, when, name: name ?? outcome, body: json(schema, body), ...(headers ? { headers } : {}) };
};

const issuesOf = (schema: z.ZodMiniType, refused: unknown) => {
  const parsed = schema.safeParse(refused);
  if (parsed.success) throw new Error(`The example of a refused input is accepted: ${JSON.stringify(refused)}`);
  return parsed.error.issues;
};

/** As @middy/http-json-body-parser throws it for a body that does not parse. */
const malformedJson = new Error('Invalid or malformed JSON was provided', { cause: { package: '@middy/http-json-body-parser' } });

const pathParameterAnswers = (names: readonly string[]): Answer[] =>
  names.length === 0
    ? []
    : [
        mapped(
          'A path parameter breaks a rule of what it names (an identifier, or a location id): one issue per bad parameter, ' +
            'named by its name, for the first rule it breaks. Checked before anything of the body is read',
          new InvalidPathParameters(issuesOf(pathParametersSchema(names), { ...Object.fromEntries(names.map((name) => [name, 'x'])), [names[0] ?? '']: ' ' })),
          'InvalidPathParameters',
        ),
      ];

/** The path parameters' refusal's schema serves the query's too: the same shape, `Invalid request`, one issue per parameter. */
const queryAnswers = ({ schema, refused }: NonNullable<Operation['query']>): Answer[] => [
  mapped(
    'A query parameter breaks a rule of what it names, or the route does not take it: one issue per parameter, named ' +
      'by its name. A name sent twice is one value, the two joined by a comma (as API Gateway passes them), which no ' +
      'parameter takes',
    new InvalidQueryParameters(issuesOf(schema, refused)),
    'InvalidPathParameters',
  ),
];

/** A route that takes no query parameter refuses any. */
const noQueryAnswers = (): Answer[] => [
  mapped(
    'The route takes no query parameter: each one sent is refused, one issue per parameter, named by its name',
    new InvalidQueryParameters(issuesOf(noQuerySchema, { page: '2' })),
    'InvalidPathParameters',
  ),
];

/** In the order the chain checks them. */
const bodyAnswers = (name: RequestBodyName, refused: unknown): Answer[] => [
  mapped(
    'The `Content-Type` is missing, not JSON, names a `charset` other than `utf-8`, or was sent twice (API Gateway joins ' +
      'the two with a comma); checked before the body is read, so a 2 MB `text/plain` body gets 415, not 413',
    new UnsupportedMediaType(),
  ),
  mapped(`The body is over ${MAX_BODY_BYTES / 1024} KiB`, new BodyTooLarge(MAX_BODY_BYTES)),
  mapped("The body's bytes are not valid UTF-8: refused, never repaired; nothing is written", new InvalidUtf8Body()),
  mapped('The body is not valid JSON or is missing (a leading byte order mark counts as not JSON)', malformedJson),
  mapped(
    'A field is missing, of the wrong type, or out of bounds, an identifier breaks a rule, or the route does not take a ' +
      'field sent: one issue per field, for the first rule it breaks; `path` is `""` when the body is not an object',
    new InvalidRequestBody(issuesOf(requestBodySchemas[name], refused)),
    'InvalidRequestBody',
  ),
];

/** What API Gateway or the local server may answer for any route before its function runs; `allowed` is the methods its path takes. */
const answersBeforeTheFunction = (allowed: readonly string[]): Answer[] => [
  {
    status: 403,
    when:
      'On AWS, when the routes require IAM authorization (the default): the request is unsigned, or its principal is not ' +
      'allowed `execute-api:Invoke` on the route. API Gateway answers; no function runs',
    name: 'Forbidden',
    body: json('GatewayError', { message: 'Forbidden' }),
  },
  {
    status: 404,
    when:
      'No route matches the path as sent: `/allocate/`, `//allocate`, `/./allocate` and `/x/../allocate` are 404, and a ' +
      '`{param}` matches one whole, non-empty segment (`/batches/` is 404). On AWS, also a known path with another method. ' +
      'API Gateway answers (the local server as it would); no function runs',
    name: 'RouteNotFound',
    body: json('GatewayError', { message: 'Not Found' }),
  },
  {
    status: 400,
    when:
      'The local server (`npm start`) only: a path parameter does not percent-decode (`/batches/%FF`), or the request has ' +
      "two `Host` headers (RFC 9112); no function runs. API Gateway's answer to either is not documented",
    name: 'BadRequest',
    body: json('GatewayError', { message: 'Bad Request' }),
  },
  {
    status: 405,
    when: 'The local server (`npm start`) only: a known path with another method; `Allow` lists the methods it takes. API Gateway answers 404',
    name: 'MethodNotAllowed',
    body: json('GatewayError', { message: 'Method Not Allowed' }),
    headers: { Allow: allowed.join(', ') },
  },
  {
    status: 413,
    when:
      'The request, as the event Lambda would receive (the body, base64 when it is not UTF-8, with the headers and request ' +
      'context), is over 6 MiB: API Gateway answers before any function runs, and so does the local server',
    name: 'RequestEntityTooLarge',
    body: json('GatewayError', { message: 'Request Entity Too Large' }),
  },
  {
    status: 429,
    when: "On AWS: past the stage's throttling (by default 100 requests/s, bursts of 200)",
    name: 'TooManyRequests',
    body: json('GatewayError', { message: 'Too Many Requests' }),
  },
];

/** API Gateway's answer, or the local server's, when the function fails instead of answering. */
const functionError: Answer = {
  status: 500,
  when: 'The function failed instead of answering: API Gateway (or the local server) answers, with no request id',
  name: 'FunctionError',
  body: json('InternalError', { message: 'Internal Server Error' }),
};

/** What any route that calls the store answers when the store, or anything else, fails. */
const failureAnswers = (): Answer[] => [
  mapped(
    "The store is unreachable, too slow for the function's time budget, or throttling past the retries, or an allocation " +
      'kept losing the race for stock, or a batch, a hold or a location kept changing under a write; nothing was half-written (a ' +
      'PATCH may have written its qty and some moves, each whole), and repeating the request is safe',
    new StoreUnavailable('example'),
    'Unavailable',
  ),
  mapped('Anything else: never a stack trace or a store error text', new Error('example'), 'InternalError'),
  functionError,
];

const DEFAULT_LOCATION_EXAMPLE = { id: 'default', name: 'Default', priority: 0, serves: ['*'], active: true };
const LOCATION_EXAMPLE = {
  id: 'warehouse-lyon',
  name: 'Lyon warehouse',
  priority: 10,
  serves: ['FR', 'BE', 'CH'],
  active: true,
  position: { lat: 45.764, lng: 4.8357 },
  handling_days: 1,
  transit_days: { FR: 1, BE: 2, '*': 4 },
};

const TRANSFER_REQUEST_EXAMPLE = { transferid: 'transfer-1', sku: 'LAMP', qty: 5, from: 'default', to: 'warehouse-lyon', eta: '2026-06-01' };
const TRANSFER_MADE_EXAMPLE = { transferid: 'transfer-1', from_batchref: 'batch-1', ref: 'transfer-1' };
const TRANSFER_EXAMPLE = { ...TRANSFER_REQUEST_EXAMPLE, from_batchref: 'batch-1', ref: 'transfer-1', status: 'active' };

const SHIPMENT_REQUEST_EXAMPLE = { shipmentid: 'parcel-1', orderid: 'order-1', location: 'default', lines: [{ sku: 'LAMP', qty: 2 }] };
const SHIPMENT_EXAMPLE = {
  shipmentid: 'parcel-1',
  orderid: 'order-1',
  location: 'default',
  shipped_at: '2026-11-25T10:00:00.000Z',
  lines: [{ sku: 'LAMP', qty: 2, parts: [{ batchref: 'batch-1', qty: 2 }] }],
};

const ADJUSTMENT_REQUEST_EXAMPLE = { adjustmentid: 'count-1', ref: 'batch-1', reason: 'counted', qty: 47, counted_at: '2026-11-25T08:00:00Z', expected_qty: 50 };
const ADJUSTMENT_EXAMPLE = { adjustmentid: 'count-1', ref: 'batch-1', reason: 'counted', before: 50, after: 45, reallocated: [] };

const IMPORT_REQUEST_EXAMPLE = {
  importid: 'feed-2026-11-25',
  rows: [
    { ref: 'batch-1', sku: 'LAMP', qty: 50, eta: null },
    { ref: 'batch-2', sku: 'LAMP', qty: 20, eta: '2026-12-01', location: 'warehouse-lyon', expected_qty: 0 },
    { ref: 'batch-1', qty: 47, counted_at: '2026-11-25T08:00:00Z' },
  ],
};
const IMPORT_EXAMPLE = {
  importid: 'feed-2026-11-25',
  status: 'completed',
  dry_run: false,
  validate_first: true,
  counts: { total: 3, done: 3, applied: 2, unchanged: 0, conflicted: 1, stale: 0, invalid: 0, failed: 0 },
  started_at: '2026-11-25T10:00:00.000Z',
  finished_at: '2026-11-25T10:00:01.000Z',
  errors: [{ row: 2, outcome: 'conflicted', code: 'qty_changed', message: new QtyChanged('batch-2', 0, 20).message }],
};

/** A line of 30 split over two batches at one place, as an order's or a hold's answer shows it. */
const SPLIT_LINE_EXAMPLE = {
  sku: 'LAMP',
  qty: 30,
  parts: [
    { batchref: 'batch-1', location: 'default', qty: 20 },
    { batchref: 'batch-2', location: 'default', qty: 10 },
  ],
};

const HOLD_EXAMPLE = {
  holdid: 'cart-7',
  status: 'active',
  expires_at: '2026-11-25T10:15:00.000Z',
  lines: [{ sku: 'LAMP', qty: 1, batchref: 'batch-1', location: 'default' }],
};

/** What the two listings say of their pages, take as query parameters, and show of a SKU (docs/api.md, "Listings"). */
const LIST_PAGES =
  'Pages: `limit` SKUs at most, and a `cursor` while more may remain (a page may hold fewer, or none, and still have one). ' +
  'Each SKU is on one page only, whatever is written meanwhile; a SKU is listed a moment (under a second) after its first batch. ' +
  'A page costs a read of the list and, for each SKU on it, the reads of `GET /skus/{sku}/stock`: never a scan of the table.';
const LIST_QUERY = {
  schema: listQuerySchema,
  parameters: {
    limit: { description: 'The most SKUs on the page: 1 to 100; 50 when absent.', example: '20' },
    cursor: { description: 'The `cursor` of the page before: the page after it.', example: listCursorOf({ part: 0, sku: 'LAMP' }) },
  },
  refused: { limit: '0' },
};
const LISTED_SKU_EXAMPLE = { sku: 'LAMP', on_hand: 8, committed: 2, held: 1, available: 15, in_stock: 5, incoming: 10, next_eta: '2027-03-01' };

export const operations: Readonly<Record<RouteKey, Operation>> = {
  'POST /add_batch': {
    operationId: 'addBatch',
    summary: 'Add a batch',
    description: 'Adds a batch of a SKU: in stock (`eta` null) or a shipment arriving on `eta`.',
    requestBody: {
      schema: 'NewBatch',
      example: { ref: 'batch-1', sku: 'LAMP', qty: 20, eta: '2026-06-01' },
      refused: { ref: 'batch-1', sku: 'LAMP', qty: 20, eta: '2026-02-30' },
    },
    answers: [
      {
        status: 201,
        when: 'The batch was added: the plain word `OK` (`text/plain; charset=utf-8`)',
        name: 'BatchAdded',
        body: { mediaType: 'text/plain', schema: { type: 'string', const: 'OK' }, example: 'OK' },
      },
      {
        status: 200,
        when: 'The same batch (same `ref`, `sku`, `qty`, `eta` and `location` as it is now) was already added: a repeat, which changes nothing',
        name: 'BatchAlreadyAdded',
        body: { mediaType: 'text/plain', schema: { type: 'string', const: 'OK' }, example: 'OK' },
      },
      mapped(
        'The `location` named is well formed but no location has that id; nothing is written. Answered as the other field ' +
          'errors are, one issue naming `location`',
        new UnknownLocation('warehouse-9'),
        'InvalidRequestBody',
      ),
      mapped(
        'Another batch with this `ref` exists (under any SKU, or with another `qty`, `eta` or `location`); nothing changes',
        new DuplicateBatch('batch-1'),
      ),
    ],
  },
  'GET /batches/{ref}': {
    operationId: 'getBatch',
    summary: 'Read a batch',
    description:
      '`allocated` is the units on its lines, `held` the units set aside by active holds; `available` is `qty - allocated - ' +
      'held`, never shown below 0: what a new line or hold can take. Only while a `PATCH` ' +
      'that lowered `qty` still has lines to move is `allocated` above `qty` (and `available` 0); repeating that `PATCH` ' +
      'finishes moving them.',
    pathParameters: { ref: 'batch-1' },
    answers: [
      {
        status: 200,
        when: 'The batch exists',
        name: 'BatchRead',
        body: json('Batch', { ref: 'batch-1', sku: 'LAMP', qty: 20, allocated: 3, held: 2, available: 15, eta: '2026-06-01', location: 'default' }),
      },
      mapped('No batch has this `ref`', new BatchNotFound('batch-1')),
    ],
  },
  'PATCH /batches/{ref}': {
    operationId: 'changeBatch',
    summary: "Change a batch's qty or eta",
    description:
      'A new `eta` only changes the order in which later allocations prefer the batch, and a larger `qty` moves no line. ' +
      'When its lines and holds take more than the new `qty`, its holds end first: expired ones, then active ones with ' +
      'the latest `expires_at`, each released whole (on every batch it holds), until the lines fit. Then, when the lines ' +
      'still hold more than the new `qty`, lines come off the batch, most recently allocated first, until the ' +
      'rest fit: each goes to the batch the normal rule picks among the SKU\'s others, or leaves its order when no batch ' +
      'can take it whole. Moves are written in as few transactions as 100 items allow, each whole or not at all. `qty: 0` empties the batch.\n\n' +
      '**Idempotent, and resumable.** The same PATCH again answers 200 with `"reallocated": []` once nothing is left to ' +
      'move. One request moves as many lines as its time allows (about 9 s); a 503 may come after the new `qty` was ' +
      'written with lines still to move: repeat the same PATCH and it moves the rest.',
    pathParameters: { ref: 'batch-1' },
    requestBody: { schema: 'BatchChange', example: { qty: 3 }, refused: {} },
    answers: [
      {
        status: 200,
        when: 'The batch is changed (or already was as asked)',
        name: 'BatchChanged',
        body: json('ChangedBatch', {
          ref: 'batch-1',
          sku: 'LAMP',
          qty: 3,
          allocated: 3,
          held: 0,
          available: 0,
          eta: '2026-06-01',
          location: 'default',
          reallocated: [{ orderid: 'order-3', sku: 'LAMP', qty: 2, from: 'batch-1', batchref: 'batch-2' }],
        }),
      },
      mapped('No batch has this `ref`', new BatchNotFound('batch-1')),
    ],
  },
  'GET /skus/{sku}/stock': {
    operationId: 'getSkuStock',
    summary: 'Read the stock levels of a SKU',
    description:
      '`in_stock`: units available in batches on the shelf; `incoming`: units available in shipments; `next_eta`: the ' +
      'earliest `eta` among shipments with stock; `on_hand`: units on the shelf, available, held or on lines not yet ' +
      'shipped; `committed`: those of them on lines; `batches`: those with stock left, in the order allocation prefers them; ' +
      '`locations`: the same levels at each location that has one of those batches or units on the shelf, by the location\'s `priority`, then ' +
      'its `id` (the totals are their sums). `?location=<id>` limits the answer to that one location: its batches, its ' +
      'levels as the totals, and its one entry in `locations`, at zeros when it has no stock of the SKU.',
    pathParameters: { sku: 'LAMP' },
    query: {
      schema: stockQuerySchema,
      parameters: { location: { description: 'The one location whose stock to read, which must exist (404 otherwise); every location when absent.', example: 'warehouse-lyon' } },
      refused: { location: 'warehouse lyon' },
    },
    answers: [
      {
        status: 200,
        when: 'A batch of the SKU was ever added',
        name: 'StockRead',
        body: json('SkuStock', {
          sku: 'LAMP',
          in_stock: 7,
          incoming: 9,
          held: 2,
          next_eta: '2027-01-01',
          on_hand: 10,
          committed: 1,
          batches: [
            { ref: 'batch-1', qty: 10, held: 2, available: 7, eta: null },
            { ref: 'early', qty: 4, held: 0, available: 4, eta: '2027-01-01' },
            { ref: 'late', qty: 5, held: 0, available: 5, eta: '2027-06-01' },
          ],
          locations: [
            { location: 'default', in_stock: 7, incoming: 4, held: 2, next_eta: '2027-01-01', on_hand: 10, committed: 1 },
            { location: 'warehouse-lyon', in_stock: 0, incoming: 5, held: 0, next_eta: '2027-06-01', on_hand: 0, committed: 0 },
          ],
        }),
      },
      mapped('No batch of this SKU was ever added (whatever `location` names)', new UnknownSku('LAMP')),
      mapped('The `location` named is a location id, but no location has it', new LocationNotFound('warehouse-lyon')),
    ],
  },
  'GET /skus/{sku}/history': {
    operationId: 'getSkuHistory',
    summary: "Read a SKU's history of on-hand stock",
    description:
      "Every change of a batch's `qty`, and every batch's arrival, newest first: a batch added, arrived, shipped, adjusted, " +
      'transferred out or in, a transfer cancelled, a PATCH. Allocations and holds change what is available, not what is on hand: ' +
      'they are in the events, not here. A count is listed at its `counted_at`, which may be before changes listed above it. ' +
      'Pages: `limit` entries at most, and a `cursor` while more may remain (a page may hold fewer, or none, and still have one). ' +
      'Every entry is on one page only, whatever is written meanwhile; an entry is listed a moment (under a second) after its ' +
      'change, and kept as long as the history is set to keep it (90 days unless the stack says otherwise).',
    pathParameters: { sku: 'LAMP' },
    query: {
      schema: historyQuerySchema,
      parameters: {
        location: { description: 'The one location whose changes to list, which must exist (404 otherwise); every location when absent.', example: 'warehouse-lyon' },
        limit: { description: 'The most entries on the page: 1 to 100; 50 when absent.', example: '20' },
        cursor: { description: 'The `cursor` of the page before: the page after it.', example: cursorOf({ ref: 'batch-1', at: '2026-12-01T09:30:00.000Z', reason: 'shipped', id: 'shipment-1' }) },
      },
      refused: { limit: '0' },
    },
    answers: [
      {
        status: 200,
        when: 'A batch of the SKU was ever added',
        name: 'HistoryRead',
        body: json('History', {
          sku: 'LAMP',
          entries: [
            { at: '2026-12-01T09:30:00.000Z', kind: 'shipped', reason: 'shipped', batchref: 'batch-1', location: 'default', delta: -2, qty_after: 8, reference: 'shipment-1', actor: 'arn:aws:iam::123456789012:role/warehouse' },
            { at: '2026-12-01T08:00:00.000Z', kind: 'added', reason: 'received', batchref: 'batch-1', location: 'default', delta: 10, qty_after: 10, actor: 'arn:aws:iam::123456789012:role/warehouse' },
          ],
        }),
      },
      mapped('No batch of this SKU was ever added (whatever `location` names)', new UnknownSku('LAMP')),
      mapped('The `location` named is a location id, but no location has it', new LocationNotFound('warehouse-lyon')),
    ],
  },
  'GET /skus': {
    operationId: 'listSkus',
    summary: 'List every SKU with its stock',
    description:
      'Every SKU a batch of which was ever added, with its stock levels in all, a page at a time. ' +
      LIST_PAGES,
    query: LIST_QUERY,
    answers: [
      { status: 200, when: 'A page of the SKUs (none on the last page of an empty list)', name: 'SkusListed', body: json('SkuList', { skus: [LISTED_SKU_EXAMPLE] }) },
    ],
  },
  'GET /locations': {
    operationId: 'getLocations',
    summary: 'Read every location',
    description: 'Every location, the built-in `default` among them, sorted by `priority`, then `id`. One read, however few.',
    answers: [
      {
        status: 200,
        when: 'Always: `default` exists from the start',
        name: 'LocationsRead',
        body: json('Locations', { locations: [DEFAULT_LOCATION_EXAMPLE, LOCATION_EXAMPLE] }),
      },
    ],
  },
  'GET /locations/{id}': {
    operationId: 'getLocation',
    summary: 'Read a location',
    description: '`default` reads as `{"id": "default", "name": "Default", "priority": 0, "serves": ["*"], "active": true}` until it is replaced.',
    pathParameters: { id: 'warehouse-lyon' },
    answers: [
      { status: 200, when: 'The location exists (`default` always does)', name: 'LocationRead', body: json('Location', LOCATION_EXAMPLE) },
      mapped('No location has this `id`', new LocationNotFound('warehouse-lyon')),
    ],
  },
  'GET /locations/{id}/stock': {
    operationId: 'listLocationStock',
    summary: "List a location's SKUs with their stock there",
    description:
      'Every SKU a batch of which was ever at the location (an incoming batch among them), with its stock levels there, a page at a time. ' +
      LIST_PAGES,
    pathParameters: { id: 'warehouse-lyon' },
    query: LIST_QUERY,
    answers: [
      { status: 200, when: 'The location exists (`default` always does)', name: 'LocationStockListed', body: json('LocationSkuList', { location: 'warehouse-lyon', skus: [LISTED_SKU_EXAMPLE] }) },
      mapped('No location has this `id`', new LocationNotFound('warehouse-lyon')),
    ],
  },
  'PUT /locations/{id}': {
    operationId: 'putLocation',
    summary: 'Create or replace a location',
    description:
      'Creates the location, or replaces it whole: `active` absent is `true`, `position` absent is none. An inactive location ' +
      'takes no new line or hold; what it has stays, and batches may still ' +
      'be added there. The same location again is a repeat, which writes nothing and announces nothing.',
    pathParameters: { id: 'warehouse-lyon' },
    requestBody: {
      schema: 'LocationDefinition',
      example: {
        name: LOCATION_EXAMPLE.name,
        priority: LOCATION_EXAMPLE.priority,
        serves: LOCATION_EXAMPLE.serves,
        position: LOCATION_EXAMPLE.position,
        handling_days: LOCATION_EXAMPLE.handling_days,
        transit_days: LOCATION_EXAMPLE.transit_days,
      },
      refused: { name: 'Lyon', priority: 1001, serves: ['FR', 'FR'] },
    },
    answers: [
      { status: 201, when: 'The location was created; the body is the location as stored', name: 'LocationCreated', body: json('Location', LOCATION_EXAMPLE) },
      {
        status: 200,
        when: 'The location existed (`default` always does) and is replaced, or was already exactly this: a repeat, which changes nothing',
        name: 'LocationReplaced',
        body: json('Location', LOCATION_EXAMPLE),
      },
    ],
  },
  'POST /transfers': {
    operationId: 'createTransfer',
    summary: 'Transfer stock to another location',
    description:
      'Takes `qty` from one batch in stock at `from` (the one a line would take, among those there that have it whole), as ' +
      "a line's take is made: its `qty` and `available` fall by it. In the same transaction it adds the incoming batch, " +
      '`ref` the `transferid`, at `to`, arriving on `eta`: an ordinary shipment, which lines and holds may be routed onto, ' +
      'and which `PATCH /batches/{ref}` with `eta` null receives. The same transfer again is a repeat, answered as stored.',
    requestBody: { schema: 'NewTransfer', example: TRANSFER_REQUEST_EXAMPLE, refused: { ...TRANSFER_REQUEST_EXAMPLE, eta: null } },
    answers: [
      { status: 201, when: 'The transfer was made', name: 'TransferCreated', body: json('TransferMade', TRANSFER_MADE_EXAMPLE) },
      { status: 200, when: 'The same transfer (every field the same) was already made: a repeat, which takes nothing more', name: 'TransferRepeated', body: json('TransferMade', TRANSFER_MADE_EXAMPLE) },
      mapped(
        '`from` or `to` names no location, or an inactive one, or `to` is `from`; nothing is written. Answered as the other ' +
          'field errors are, one issue naming the field',
        new UnknownLocation('warehouse-9', 'to'),
        'InvalidRequestBody',
      ),
      mapped('No batch of the SKU was ever added', new InvalidSku('LAMP')),
      mapped('No batch in stock (`eta` null) at `from` has `qty` available, whole; nothing is written', new TransferNotInStock('LAMP', 'default', 5)),
      mapped(
        'Another transfer has this `transferid` (other fields), or it was cancelled; nothing changes',
        new TransferConflict('transfer-1', 'transfer_exists', 'already exists with other fields'),
      ),
      mapped(
        'A batch already has the `transferid` as its `ref`, which the incoming batch would take; nothing changes',
        new TransferConflict('transfer-1', 'batch_exists', "cannot be made: transferid transfer-1 is a batch's ref, which its incoming batch would take"),
        'Error',
        'TransferIdIsABatchRef',
      ),
    ],
  },
  'GET /transfers/{transferid}': {
    operationId: 'getTransfer',
    summary: 'Read a transfer',
    description: 'The transfer as made, and whether it was cancelled. A cancelled transfer stays readable for at least two days, until time to live removes its record.',
    pathParameters: { transferid: 'transfer-1' },
    answers: [
      { status: 200, when: 'The transfer exists', name: 'TransferRead', body: json('Transfer', TRANSFER_EXAMPLE) },
      mapped('No transfer has this `transferid`, or time to live removed its cancelled record (at least two days after the cancel)', new TransferNotFound('transfer-1')),
    ],
  },
  'DELETE /transfers/{transferid}': {
    operationId: 'cancelTransfer',
    summary: 'Cancel a transfer',
    description:
      'Gives the units back to the batch they came from and removes the incoming batch, in one transaction, while nothing ' +
      'has been taken from that batch (no line, no hold, its `qty` unchanged) and it has not been received.',
    pathParameters: { transferid: 'transfer-1' },
    answers: [
      { status: 204, when: 'The transfer is cancelled, or already was (a repeat); no body', name: 'TransferCancelled' },
      mapped('No transfer has this `transferid`, or time to live removed its cancelled record (at least two days after the cancel)', new TransferNotFound('transfer-1')),
      mapped(
        'A line or a hold is on the incoming batch, its `qty` was changed, or it was received; nothing changes, and the message says which',
        new TransferConflict('transfer-1', 'transfer_in_use', 'cannot be cancelled: lines have units on its batch transfer-1'),
      ),
    ],
  },
  'POST /shipments': {
    operationId: 'ship',
    summary: 'Ship units of an order',
    description:
      "Records that units of the order's lines left `location`, one parcel: each line's units there, from its parts there in " +
      "their order (a whole line: its batch). In one transaction, each batch's `qty` falls by the units that left it (its " +
      "`available` does not change: the units were the line's), each line records them as `shipped`, and the shipment is " +
      "stored. `location` may be left out when the order's unshipped units are all at one place. The same shipment again " +
      'is a repeat, answered as stored.',
    requestBody: { schema: 'NewShipment', example: SHIPMENT_REQUEST_EXAMPLE, refused: { ...SHIPMENT_REQUEST_EXAMPLE, lines: [] } },
    answers: [
      { status: 201, when: 'The units shipped', name: 'Shipped', body: json('Shipment', SHIPMENT_EXAMPLE) },
      { status: 200, when: 'The same shipment (same order, lines and location) was already made: a repeat, which ships nothing more', name: 'ShipmentRepeated', body: json('Shipment', SHIPMENT_EXAMPLE) },
      mapped(
        "`location` is absent and the order's unshipped units are at several locations; nothing is shipped. Answered as the " +
          'other field errors are, one issue naming `location`',
        new ShipmentLocationNeeded(['default', 'warehouse-lyon']),
        'InvalidRequestBody',
      ),
      mapped(
        `The shipment needs more than DynamoDB's ${MAX_TRANSACTION_ITEMS} writes in one transaction (a line's record, each part it ships from, three for each batch); nothing is shipped`,
        new ShipmentTooLarge('parcel-1', 131, MAX_TRANSACTION_ITEMS),
      ),
      mapped('The order has no line', new OrderNotFound('order-1')),
      mapped('The order has no line for a SKU named', new LineNotFound('order-1', 'LAMP')),
      mapped(
        'Some lines have fewer units not yet shipped at `location` than asked; nothing is shipped, and each such line is named with what it has there',
        new TooFewUnshipped('parcel-1', 'default', [{ sku: 'LAMP', qty: 2, unshipped: 1 }]),
        'TooFewUnshipped',
      ),
      mapped('Another shipment has this `shipmentid` (another order, lines or location); nothing changes', new ShipmentExists('parcel-1')),
    ],
  },
  'POST /adjustments': {
    operationId: 'adjustStock',
    summary: "Adjust a batch's units on hand",
    description:
      "Sets (`qty`) or changes (`delta`) one batch's units on hand, for a `reason`, in one transaction with its record, as " +
      '`PATCH /batches/{ref}` changes its `qty`: when the new `qty` leaves fewer units than its lines and holds take, holds ' +
      'end first, then its newest lines (their units not yet shipped) move by their own rule. A count (`counted_at`) is ' +
      'applied as of its time: the units the batch shipped after it are taken off what it counted. `expected_qty` makes it ' +
      "a compare and set. The same adjustment again is a repeat, answered as stored.",
    requestBody: { schema: 'NewAdjustment', example: ADJUSTMENT_REQUEST_EXAMPLE, refused: { ...ADJUSTMENT_REQUEST_EXAMPLE, delta: 2 } },
    answers: [
      { status: 201, when: 'The adjustment was made: `after` is the batch\'s new `qty`', name: 'Adjusted', body: json('Adjustment', ADJUSTMENT_EXAMPLE) },
      { status: 200, when: 'The same adjustment (every field the same) was already made: a repeat, which changes nothing more (but lines it had left to move)', name: 'AdjustmentRepeated', body: json('Adjustment', ADJUSTMENT_EXAMPLE) },
      mapped(
        '`counted_at` is in the future or more than 30 days ago, or a `delta` would take more units than the batch has; nothing changes. ' +
          'Answered as the other field errors are, one issue naming the field',
        new AdjustmentRefused('counted_at', 'must not be in the future: it is 2026-11-25T12:00:00.000Z, and now is 2026-11-25T10:00:00.000Z'),
        'InvalidRequestBody',
      ),
      mapped('No batch has this `ref`', new BatchNotFound('batch-1')),
      mapped("The batch's `qty` is not `expected_qty`; nothing changes, and the body says what it is", new QtyChanged('batch-1', 50, 48), 'QtyChanged'),
      mapped('The batch was counted after `counted_at`; nothing changes', new StaleCount('batch-1', '2026-11-25T08:00:00.000Z', '2026-11-25T09:00:00.000Z')),
      mapped('Another adjustment has this `adjustmentid` (other fields); nothing changes', new AdjustmentExists('count-1')),
    ],
  },
  'POST /imports': {
    operationId: 'importRows',
    summary: 'Import a feed of batches and counts',
    description:
      'Applies each row of the feed through the change its own request would make: a batch row adds the batch (as ' +
      '`POST /add_batch`), or, for a batch of the same SKU at the same place, sets its `qty` by a count taken now (reason ' +
      '`counted`) and its `eta` (as `PATCH /batches/{ref}`); a count row (one with `counted_at`) is applied as of its time ' +
      `(as \`POST /adjustments\`). Every row is checked first, ${IMPORT_CHECK_ROWS} at a time; then rows are applied ` +
      `${IMPORT_CHUNK_ROWS} at a time, and each row's change is made once, by the import and the row: the same import again ` +
      'runs what a send cut off left undone, and changes nothing more. A row that would leave stock as it is writes nothing. ' +
      'With `validate_first` (the default), one row its schema or an unknown location refuses fails the import with nothing ' +
      'applied. With `dry_run`, each row is judged and counted as if applied, and no stock is written. Rows sent inline ' +
      `(\`rows\`) are run before the answer, which is the import with its counts and the first ${MAX_IMPORT_ERRORS} rows that ` +
      'did not apply. A file (`format`) is sent to `upload` as it says; the import runs once the file has arrived: read ' +
      '`GET /imports/{importid}` until its `status` is `completed` or `failed`.',
    requestBody: { schema: 'NewImport', example: IMPORT_REQUEST_EXAMPLE, refused: { importid: 'feed-2026-11-25', rows: [] } },
    answers: [
      {
        status: 201,
        when: 'The import of rows ran: `status` is `completed` (some rows may not have applied: see `counts` and `errors`), or `failed` when it validated first and a row was refused. The import of a file awaits it: `status` is `awaiting_upload`, and `upload` says where to send it',
        name: 'ImportRan',
        body: json('Import', IMPORT_EXAMPLE),
      },
      {
        status: 200,
        when: 'The same import (the same rows, or a file in the same format, and the same options) was sent before: a repeat, which runs only what that send left undone; one still awaiting its file has a new `upload`',
        name: 'ImportRepeated',
        body: json('Import', IMPORT_EXAMPLE),
      },
      mapped('Another import has this `importid` (other rows, format or options); nothing runs', new ImportExists('feed-2026-11-25')),
    ],
  },
  'GET /imports/{importid}': {
    operationId: 'getImport',
    summary: 'Read an import',
    description: `The import as it stands: its status, its counts, and the first ${MAX_IMPORT_ERRORS} rows that did not apply, by row number.`,
    pathParameters: { importid: 'feed-2026-11-25' },
    answers: [
      { status: 200, when: 'The import exists', name: 'ImportRead', body: json('Import', IMPORT_EXAMPLE) },
      mapped('No import has this `importid`', new ImportNotFound('feed-2026-11-25')),
    ],
  },
  'GET /imports/{importid}/rows': {
    operationId: 'listImportRows',
    summary: "List an import's rows, and what each did",
    description:
      'Every row of the import done so far, by number, with its outcome, and for one that did not apply its `code` and `message`: the ' +
      'results of a whole feed, a page at a time (`npm run import -- FILE --results OUT` writes them to a file). Rows are done a chunk of ' +
      '25 at a time, so a running import lists the rows of its chunks recorded so far. An import that validated first and was failed by ' +
      'its check applied none: it lists the rows the check refused; one whose file was refused lists none. Pages: `limit` rows at most, ' +
      'and a `cursor` while more may remain. A page costs a Query of at most 5 of the import\'s chunks and one of their errors.',
    pathParameters: { importid: 'feed-2026-11-25' },
    query: {
      schema: importRowsQuerySchema,
      parameters: {
        limit: { description: 'The most rows on the page: 1 to 100; 50 when absent.', example: '2' },
        cursor: { description: 'The `cursor` of the page before: the page after it.', example: importRowsCursorOf(3) },
      },
      refused: { limit: '101' },
    },
    answers: [
      {
        status: 200,
        when: 'The import exists',
        name: 'ImportRowsRead',
        body: json('ImportRows', {
          importid: 'feed-2026-11-25',
          rows: [
            { row: 1, outcome: 'applied' },
            { row: 2, outcome: 'conflicted', code: 'qty_changed', message: 'Batch batch-2 has qty 12, not the 10 expected: nothing changed' },
          ],
          cursor: importRowsCursorOf(3),
        }),
      },
      mapped('No import has this `importid`', new ImportNotFound('feed-2026-11-25')),
    ],
  },
  'GET /shipments/{shipmentid}': {
    operationId: 'getShipment',
    summary: 'Read a shipment',
    description: 'The shipment as made.',
    pathParameters: { shipmentid: 'parcel-1' },
    answers: [
      { status: 200, when: 'The shipment exists', name: 'ShipmentRead', body: json('Shipment', SHIPMENT_EXAMPLE) },
      mapped('No shipment has this `shipmentid`', new ShipmentNotFound('parcel-1')),
    ],
  },
  'POST /allocate': {
    operationId: 'allocate',
    summary: 'Allocate an order line',
    description:
      'Allocates the line whole to one batch of its SKU, at an active location the request allows (all of them, unless it ' +
      'names a `destination` or a `location`): in stock before shipments, the earliest `eta` among shipments, then the ' +
      "location's priority, its distance to the destination, its id, and the batch's `ref`. With `split`, the line may " +
      'come from several batches (`batches`: at one location; `locations`: at several): every part in stock first, then ' +
      `the fewest locations, then the fewest parts (at most ${MAX_PARTS_PER_LINE}), then the rule above, batch by batch; ` +
      'all parts are taken in one transaction. A line is identified by (`orderid`, `sku`): the same line again is a retry, ' +
      'answered with the batch (or the parts) it has.',
    requestBody: {
      schema: 'OrderLine',
      example: { orderid: 'order-1', sku: 'LAMP', qty: 3, destination: { country: 'FR', position: { lat: 48.86, lng: 2.35 } } },
      refused: { orderid: 'order-1', sku: 'LAMP', qty: 0 },
    },
    answers: [
      { status: 201, when: 'The line was allocated', name: 'Allocated', body: json('BatchRef', { batchref: 'batch-1', location: 'default' }) },
      {
        status: 200,
        when: 'The same line (same `orderid`, `sku`, `qty`, `destination` and `location`) was already allocated: a retry, answered with the batch it has',
        name: 'AlreadyAllocated',
        body: json('BatchRef', { batchref: 'batch-1', location: 'default' }),
      },
      {
        status: 201,
        when: 'A line whose request allowed a `split` was allocated: its parts, each on its batch (a line in one part names its batch and location too)',
        name: 'SplitLineAllocated',
        body: json('BatchRef', {
          parts: [
            { batchref: 'batch-7', location: 'default', qty: 3 },
            { batchref: 'batch-8', location: 'default', qty: 2 },
          ],
        }),
      },
      mapped('No batch of that SKU was ever added', new InvalidSku('LAMP')),
      mapped(
        'No batch at an eligible location can take the whole line (`reason` `out_of_stock`), or no location is eligible ' +
          '(`no_location`: `No location serves the request for sku <sku>: <why>`, why the request\'s `location` or `destination` left none)',
        new OutOfStock('LAMP'),
        'LineRefused',
      ),
      mapped(
        'The `location` named is well formed but no location has that id. Answered as the other field errors are, one issue naming `location`',
        new UnknownLocation('warehouse-9'),
        'InvalidRequestBody',
      ),
      mapped('The same (`orderid`, `sku`) is allocated with another `qty`; nothing changes', new LineAlreadyAllocated('order-1', 'LAMP', 4)),
      mapped(
        'The same (`orderid`, `sku`) is allocated with the same `qty` for a request that named another `destination` or `location` ' +
          '(one named where the other named none among them); nothing changes',
        new LineRoutedOtherwise('order-1', 'LAMP'),
      ),
      mapped(
        'The same (`orderid`, `sku`) is allocated with the same `qty` and routing for a request that allowed another `split` ' +
          '(absent counts as `none`); nothing changes',
        new LineSplitOtherwise('order-1', 'LAMP'),
      ),
    ],
  },
  'POST /orders': {
    operationId: 'allocateOrder',
    summary: 'Allocate a whole order',
    description:
      'Every line allocated, or none, all lines planned at once among the batches at the active locations the request ' +
      'allows (`destination`, `location`, as for one line): as few lines on shipments as can be, then as few locations ' +
      'as can be, then as few parts as can be (a line whose `split` allows it may come from several batches), then each ' +
      'line by the rule of `POST /allocate`; all the new lines are written in one transaction, which holds at most ' +
      `${MAX_TRANSACTION_ITEMS} writes: each line's record and each part's, and each take from a batch (a whole line's one, a split line's one a part), ` +
      'two when it empties its batch. ' +
      'Idempotent per line: a line already allocated with the same `qty`, routing and `split` counts as done and keeps its batch (or its parts).',
    requestBody: {
      schema: 'Order',
      example: {
        orderid: 'order-2',
        lines: [
          { sku: 'LAMP', qty: 1 },
          { sku: 'SOFA', qty: 2 },
        ],
      },
      refused: {
        orderid: 'order-2',
        lines: [
          { sku: 'LAMP', qty: 1 },
          { sku: 'SOFA', qty: 2 },
          { sku: 'CHAIR', qty: 4 },
          { sku: 'LAMP', qty: 3 },
        ],
      },
    },
    answers: [
      {
        status: 201,
        when: 'At least one new line was allocated. The body holds every line of this request (not other lines the same `orderid` got elsewhere), sorted by `sku`',
        name: 'OrderAllocated',
        body: json('RoutedOrder', {
          orderid: 'order-2',
          lines: [
            { sku: 'LAMP', qty: 1, batchref: 'batch-1', location: 'default' },
            { sku: 'SOFA', qty: 2, batchref: 'batch-7', location: 'default' },
          ],
        }),
      },
      {
        status: 201,
        when: 'An order whose `split` allowed a line to come from several batches: that line names its parts',
        name: 'SplitOrderAllocated',
        body: json('RoutedOrder', {
          orderid: 'order-3',
          lines: [
            SPLIT_LINE_EXAMPLE,
            { sku: 'SOFA', qty: 2, batchref: 'batch-7', location: 'default', parts: [{ batchref: 'batch-7', location: 'default', qty: 2 }] },
          ],
        }),
      },
      {
        status: 200,
        when: 'Every line was already allocated with the same `qty`, `destination` and `location`: a repeat',
        name: 'OrderAlreadyAllocated',
        body: json('RoutedOrder', {
          orderid: 'order-2',
          lines: [
            { sku: 'LAMP', qty: 1, batchref: 'batch-1', location: 'default' },
            { sku: 'SOFA', qty: 2, batchref: 'batch-7', location: 'default' },
          ],
        }),
      },
      mapped(
        'Some new line cannot be allocated; nothing was allocated. `lines` names every line that fails, and why: ' +
          '`unknown_sku`, `out_of_stock` (no batch at an eligible location can take it), `no_location` (no location is eligible)',
        new OrderNotAllocated('order-2', [
          { sku: 'NOPE', reason: 'unknown_sku' },
          { sku: 'SOFA', reason: 'out_of_stock' },
        ]),
        'OrderNotAllocated',
      ),
      mapped(
        'The `location` named is well formed but no location has that id. Answered as the other field errors are, one issue naming `location`',
        new UnknownLocation('warehouse-9'),
        'InvalidRequestBody',
      ),
      mapped(
        'A line is already allocated with another `qty`; nothing changes. `lines` names each, with the qty it has',
        new OrderLinesAlreadyAllocated('order-2', [{ sku: 'LAMP', qty: 4 }]),
        'OrderLinesConflict',
      ),
      mapped(
        'Lines are already allocated with the same `qty` for a request that named another `destination` or `location`; ' +
          'nothing changes. `lines` names each',
        new OrderLinesRoutedOtherwise('order-2', [{ sku: 'LAMP' }]),
        'OrderLinesRoutedOtherwise',
      ),
      mapped(
        'Lines are already allocated for a request that allowed them another `split` (absent counts as `none`); nothing changes. `lines` names each',
        new OrderLinesSplitOtherwise('order-2', [{ sku: 'LAMP' }]),
        'OrderLinesSplitOtherwise',
      ),
      mapped(
        `The plan, its lines split as they allow, needs more than the ${MAX_TRANSACTION_ITEMS} writes of one transaction; nothing was ` +
          'allocated. Fewer lines allowed a `split`, or fewer lines, fit',
        new TooManyParts('order', 'order-2', 104, MAX_TRANSACTION_ITEMS),
      ),
    ],
  },
  'POST /promises': {
    operationId: 'promiseCart',
    summary: 'Promise a cart: where, and by when, it can ship',
    description:
      'The plan `POST /orders` would make for these lines at this moment, made by the same code on the same reads, with ' +
      'nothing written and no event sent: its parcels, a location each, with each line\'s parts and their batches\' `eta`, ' +
      'the day each ships and, where the location states its `transit_days`, the day it arrives at the `destination`\'s country. ' +
      'Units of expired holds count as free, as the order would give them back, but no hold is ended. An order sent right ' +
      'after with the same lines, routing and `split`, with no other write between, takes the same batches and parts. A line ' +
      'no plan can hold is named with its reason, as the order would refuse it, and the most units a line of its SKU could ' +
      'be promised; the order would then refuse the whole cart, so no parcel is promised.',
    requestBody: {
      schema: 'Cart',
      example: {
        lines: [
          { sku: 'LAMP', qty: 1 },
          { sku: 'SOFA', qty: 2 },
        ],
        destination: { country: 'FR' },
      },
      refused: { lines: [] },
    },
    answers: [
      {
        status: 200,
        when: 'Every line can be promised: the parcels, and when the cart ships (and arrives, when every parcel says)',
        name: 'CartPromised',
        body: json('CartPromise', {
          ships_on: '2026-11-26',
          arrives_by: '2026-11-27',
          parcels: [
            {
              location: 'default',
              ships_on: '2026-11-26',
              arrives_by: '2026-11-27',
              lines: [
                { sku: 'LAMP', qty: 1, parts: [{ batchref: 'batch-1', qty: 1, eta: null }] },
                { sku: 'SOFA', qty: 2, parts: [{ batchref: 'batch-7', qty: 2, eta: null }] },
              ],
            },
          ],
          refused: [],
        }),
      },
      {
        status: 200,
        when: 'A line cannot be promised: no parcel, and each line refused with the most a line of its SKU could be',
        name: 'CartLinesRefused',
        body: json('CartPromise', { parcels: [], refused: [{ sku: 'SOFA', reason: 'out_of_stock', promisable_qty: 2 }] }),
      },
      mapped(
        'The `location` named is well formed but no location has that id. Answered as the other field errors are, one issue naming `location`',
        new UnknownLocation('warehouse-9'),
        'InvalidRequestBody',
      ),
      mapped(
        `The plan, its lines split as they allow, needs more than the ${MAX_TRANSACTION_ITEMS} writes of the order's one transaction, as the order would be refused`,
        new TooManyParts('cart', '', 104, MAX_TRANSACTION_ITEMS),
      ),
    ],
  },
  'GET /allocations/{orderid}': {
    operationId: 'getOrderAllocations',
    summary: "Read an order's lines",
    description:
      'Once `POST /orders` has answered, every read sees all of its lines; one sent while the order is still committing ' +
      'may see only some of them.',
    pathParameters: { orderid: 'order-1' },
    answers: [
      {
        status: 200,
        when: 'The order has lines',
        name: 'OrderRead',
        body: json('OrderAllocations', { orderid: 'order-1', lines: [{ sku: 'LAMP', qty: 3, batchref: 'batch-1', location: 'default' }] }),
      },
      mapped(
        'The order has no line: never allocated, or every line cancelled or taken off it by a batch change',
        new OrderNotFound('order-1'),
      ),
    ],
  },
  'DELETE /allocations/{orderid}/{sku}': {
    operationId: 'cancelAllocation',
    summary: 'Cancel an order line',
    description:
      "Removes the line and gives its `qty` back to its batch, in one transaction. After a cancel the same (`orderid`, `sku`) " +
      'is a new line: `POST /allocate` answers 201 for any `qty`. A line that shipped some of its units gives back only the ' +
      'others and stays, as what it shipped.',
    pathParameters: { orderid: 'order-1', sku: 'LAMP' },
    answers: [
      { status: 204, when: 'The line was removed, or gave back the units it had not shipped (or a cancel did before: a repeat); no body, and no `Content-Type`', name: 'LineCancelled' },
      mapped('The line shipped every unit it was allocated: nothing is left to cancel', new LineShipped('order-1', 'LAMP', 3)),
      mapped(
        'The order has no line for this SKU: never allocated, already cancelled (a repeat), or taken off its order by a ' +
          'batch change; nothing changes',
        new LineNotFound('order-1', 'LAMP'),
      ),
    ],
  },
  'POST /holds': {
    operationId: 'placeHold',
    summary: 'Hold stock through checkout',
    description:
      'Sets aside every line, whole, in one batch (or, as far as its `split` allows, in parts over several), or none, in one ' +
      'transaction, the lines planned at once as an order\'s are, ' +
      'among the batches at the active locations the request allows (`destination`, `location`): what a checkout holds ' +
      'no one else can allocate or hold until the hold is confirmed, released, or expires. An expired hold never blocks a ' +
      'sale: its units are available again the moment `expires_at` passes. A `holdid` is used once.',
    requestBody: {
      schema: 'NewHold',
      example: { holdid: 'cart-7', lines: [{ sku: 'LAMP', qty: 1 }], ttl_seconds: 900 },
      refused: { holdid: 'cart-7', lines: [{ sku: 'LAMP', qty: 1 }], ttl_seconds: 86401 },
    },
    answers: [
      { status: 201, when: 'Every line is held, until `expires_at`', name: 'HoldPlaced', body: json('Hold', HOLD_EXAMPLE) },
      {
        status: 201,
        when: 'A hold whose `split` allowed a line to come from several batches: that line names its parts, which a confirm makes the order line\'s',
        name: 'SplitHoldPlaced',
        body: json('Hold', { ...HOLD_EXAMPLE, lines: [SPLIT_LINE_EXAMPLE] }),
      },
      {
        status: 200,
        when: 'The same `holdid` with the same lines, `destination`, `location` and `split`, while the hold is active: a repeat, which does not extend it',
        name: 'HoldAlreadyPlaced',
        body: json('Hold', HOLD_EXAMPLE),
      },
      mapped(
        'Some line cannot be held; nothing was held. `lines` names every line that fails, and why: `unknown_sku`, ' +
          '`out_of_stock` (no batch at an eligible location can take it), `no_location` (no location is eligible)',
        new HoldNotPlaced('cart-7', [
          { sku: 'NOPE', reason: 'unknown_sku' },
          { sku: 'SOFA', reason: 'out_of_stock' },
        ]),
        'HoldNotPlaced',
      ),
      mapped(
        'The `location` named is well formed but no location has that id. Answered as the other field errors are, one issue naming `location`',
        new UnknownLocation('warehouse-9'),
        'InvalidRequestBody',
      ),
      mapped(
        'The `holdid` exists with other lines, or with the same lines for a request that named another `destination` or ' +
          '`location` (`Hold <holdid> already exists with another destination or location`), or has ended (confirmed, ' +
          'released or expired): a holdid is used once',
        new HoldConflict('cart-7', 'hold_exists', 'already exists with other lines'),
      ),
      mapped(
        'The `holdid` exists with the same lines and routing for a request that allowed another `split` (absent counts as `none`); nothing changes',
        new HoldConflict('cart-7', 'split_otherwise', 'already exists with another split'),
        'Error',
        'HoldSplitOtherwise',
      ),
      mapped(
        `The plan, its lines split as they allow, needs more than the ${MAX_TRANSACTION_ITEMS} writes of one transaction, to hold ` +
          'its lines or to confirm them; nothing was held. Fewer lines allowed a `split`, or fewer lines, fit',
        new TooManyParts('hold', 'cart-7', 104, MAX_TRANSACTION_ITEMS),
      ),
    ],
  },
  'GET /holds/{holdid}': {
    operationId: 'getHold',
    summary: 'Read a hold',
    description: 'The hold as of now: `expired` the moment its `expires_at` passes. An ended hold stays readable for at least 24 hours.',
    pathParameters: { holdid: 'cart-7' },
    answers: [
      { status: 200, when: 'The hold exists', name: 'HoldRead', body: json('Hold', HOLD_EXAMPLE) },
      mapped('No hold has this `holdid`, or it ended more than 24 hours ago', new HoldNotFound('cart-7')),
    ],
  },
  'PATCH /holds/{holdid}': {
    operationId: 'extendHold',
    summary: "Change a hold's expiry",
    description: "Sets an active hold's `expires_at` to now + `ttl_seconds` (longer or shorter), for a checkout whose payment runs long.",
    pathParameters: { holdid: 'cart-7' },
    requestBody: { schema: 'HoldExtension', example: { ttl_seconds: 600 }, refused: { ttl_seconds: 0 } },
    answers: [
      { status: 200, when: 'The hold lasts until its new `expires_at`', name: 'HoldExtended', body: json('Hold', HOLD_EXAMPLE) },
      mapped('No hold has this `holdid`', new HoldNotFound('cart-7')),
      mapped('The hold is no longer active: it expired, was released, or was confirmed', new HoldConflict('cart-7', 'hold_ended', 'has expired: only an active hold can be extended')),
    ],
  },
  'DELETE /holds/{holdid}': {
    operationId: 'releaseHold',
    summary: 'Release a hold',
    description: 'Gives an active hold\'s units back to their batches at once, in one transaction.',
    pathParameters: { holdid: 'cart-7' },
    answers: [
      { status: 204, when: 'The hold is released, or had already been released or expired (a repeat); no body', name: 'HoldReleased' },
      mapped('No hold has this `holdid`', new HoldNotFound('cart-7')),
      mapped(
        "The hold was confirmed: its lines are an order's, cancelled with `DELETE /allocations/{orderid}/{sku}`",
        new HoldConflict('cart-7', 'hold_ended', "was confirmed to order order-7: cancel the order's lines instead"),
      ),
    ],
  },
  'POST /holds/{holdid}/confirm': {
    operationId: 'confirmHold',
    summary: 'Confirm a hold as an order',
    description:
      "The held lines become the order's lines, on the same batches, taking exactly the held units: they never compete " +
      'for stock again. One transaction. Confirmed lines are like any allocated line: read, cancelled, moved by a batch `PATCH`.',
    pathParameters: { holdid: 'cart-7' },
    requestBody: { schema: 'HoldConfirmation', example: { orderid: 'order-7' }, refused: { orderid: '' } },
    answers: [
      {
        status: 201,
        when: "The hold's lines are the order's",
        name: 'HoldConfirmed',
        body: json('OrderAllocations', { orderid: 'order-7', lines: [{ sku: 'LAMP', qty: 1, batchref: 'batch-1', location: 'default' }] }),
      },
      {
        status: 200,
        when: 'The hold was already confirmed to this order: a repeat',
        name: 'HoldAlreadyConfirmed',
        body: json('OrderAllocations', { orderid: 'order-7', lines: [{ sku: 'LAMP', qty: 1, batchref: 'batch-1', location: 'default' }] }),
      },
      mapped('No hold has this `holdid`', new HoldNotFound('cart-7')),
      mapped(
        'Nothing changed, and the message says why: the hold expired, was released, was confirmed to another order, or the ' +
          'order already has a line for one of its SKUs',
        new HoldConflict('cart-7', 'hold_ended', 'has expired: only an active hold can be confirmed'),
      ),
    ],
  },
  'GET /openapi.json': {
    operationId: 'getOpenApiDocument',
    summary: 'Read this OpenAPI document',
    description:
      'This document, as the deployed functions were built with it: what client generators and API references read. ' +
      `\`Cache-Control: ${OPENAPI_DOCUMENT_CACHE_CONTROL}\`: it changes with each deploy, under the same URL.`,
    answers: [
      {
        status: 200,
        when: 'Always: the document (the example is an excerpt)',
        name: 'OpenApiDocumentRead',
        body: json('OpenApiDocument', { openapi: OPENAPI_VERSION, info: { title: 'Allocation service', version: '0.2.0' }, paths: {} }),
        headers: { 'Cache-Control': OPENAPI_DOCUMENT_CACHE_CONTROL },
      },
    ],
    failures: [
      mapped(
        'The function ran out of its time budget, or, on the local server, its table is not ready yet: repeat the request ' +
          'after `Retry-After` seconds',
        new StoreUnavailable('example'),
        'Unavailable',
      ),
      mapped('The document could not be read: never a stack trace or a file system error text', new Error('example'), 'InternalError'),
      functionError,
    ],
  },
};

/** Every answer of the route, in the order of the checks that lead to them; `allowed` is the methods its path takes. */
export const answersOf = (routeKey: RouteKey, allowed: readonly string[]): Answer[] => {
  const operation = operations[routeKey];
  return [
    ...answersBeforeTheFunction(allowed),
    ...pathParameterAnswers(pathParameterNames(splitRouteKey(routeKey).path)),
    ...(operation.query ? queryAnswers(operation.query) : noQueryAnswers()),
    ...(operation.requestBody ? bodyAnswers(operation.requestBody.schema, operation.requestBody.refused) : []),
    ...operation.answers,
    ...(operation.failures ?? failureAnswers()),
  ];
};
