/** The batches function's routes as docs/openapi.json describes them, each answer with when, in the words of docs/api.md. */
import {
  AdjustmentExists,
  AdjustmentRefused,
  BatchNotFound,
  DuplicateBatch,
  ImportExists,
  ImportNotFound,
  InvalidSku,
  LocationNotFound,
  LineNotFound,
  OrderNotFound,
  QtyChanged,
  ShipmentExists,
  ShipmentLocationNeeded,
  ShipmentNotFound,
  ShipmentTooLarge,
  StaleCount,
  TooFewUnshipped,
  TransferConflict,
  TransferNotFound,
  TransferNotInStock,
  UnknownLocation,
  UnknownSku,
} from '../../domain/errors';
import { MAX_TRANSACTION_ITEMS } from '../../functions/store/store-calls';
import { IMPORT_CHECK_ROWS, IMPORT_CHUNK_ROWS, MAX_IMPORT_ERRORS, importRowsCursorOf } from '../../domain/imports';
import type { BatchesRouteKey } from '../../functions/http/route-keys';
import { importRowsQuerySchema } from '../../functions/http/import-schemas';
import { historyQuerySchema, listQuerySchema, stockQuerySchema } from '../../functions/http/schemas';
import { cursorOf } from '../../domain/stock-history';
import { listCursorOf } from '../../domain/stock-listings';
import { type Operation, json, mapped } from './answers';

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

export const batchOperations: Readonly<Record<BatchesRouteKey, Operation>> = {
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
};
