import { LocationIdNotThePath } from '../domain/errors';
import { importById, importFile, importRows, importedRows } from '../domain/import-services';
import { type ImportReport, importRowsCursorOf, rowOfImportRowsCursor } from '../domain/imports';
import { allLocations, locationById, putLocation } from '../domain/location-services';
import type { Location } from '../domain/locations';
import { type Batch, type Reallocation, type StockLevels, allocatedOf, heldOf, locationOf } from '../domain/model';
import type { BatchRepository } from '../domain/ports';
import { adjustStock } from '../domain/adjustment-services';
import { changeBatch } from '../domain/batch-changes';
import { addBatch, batchStatus, skuStock } from '../domain/services';
import { ship, shipmentById } from '../domain/shipment-services';
import { stockHistory } from '../domain/history-services';
import { stockList } from '../domain/listing-services';
import { DEFAULT_LIST_LIMIT, type ListedStock, type SkuList, listCursorOf, listPositionOf } from '../domain/stock-listings';
import { DEFAULT_HISTORY_LIMIT, type HistoryEntry, cursorOf, positionOf } from '../domain/stock-history';
import type { Shipment } from '../domain/shipments';
import { cancelTransfer, createTransfer, transferById } from '../domain/transfer-services';
import type { Transfer } from '../domain/transfers';
import { countingHoldEndings } from './hold-endings';
import { json, noContent, route, routedHandler, text } from './http/route';
import type { BatchesRouteKey } from './http/route-keys';
import { importRowsQuerySchema, importSchema } from './http/import-schemas';
import { adjustmentSchema, batchChangeSchema, batchSchema, historyQuerySchema, listQuerySchema, locationSchema, shipmentSchema, stockQuerySchema, transferSchema } from './http/schemas';
import { readRow, rowsDigest } from './imports/rows';
import { type Upload, type UploadTarget, s3Uploads } from './imports/uploads';
import { batchRepository } from './store/repository';
import { metricNames } from './telemetry-names';

/*
 * The views name every field they show, so that what the store holds beside them never reaches a
 * client, and the contract's field names (snake case where docs/api.md has it) live here.
 */

/**
 * The batch as found now (its expired holds' units available again): `qty` = `allocated` + `held`
 * + `available`. `available` is below zero while a batch whose qty was lowered still has lines to
 * move: shown as 0.
 */
const batchView = (batch: Batch) => ({
  ref: batch.ref,
  sku: batch.sku,
  qty: batch.qty,
  allocated: allocatedOf(batch),
  held: heldOf(batch),
  available: Math.max(0, batch.available),
  eta: batch.eta,
  location: locationOf(batch),
});

const reallocationView = ({ orderid, sku, qty, from, batchref }: Reallocation) => ({ orderid, sku, qty, from, batchref });

const stockView = ({ sku, inStock, incoming, held, nextEta, onHand, committed, batches, locations }: StockLevels) => ({
  sku,
  in_stock: inStock,
  incoming,
  held,
  next_eta: nextEta,
  on_hand: onHand,
  committed,
  batches: batches.map((batch) => ({ ref: batch.ref, qty: batch.qty, held: heldOf(batch), available: batch.available, eta: batch.eta })),
  locations: locations.map((at) => ({
    location: at.location,
    in_stock: at.inStock,
    incoming: at.incoming,
    held: at.held,
    next_eta: at.nextEta,
    on_hand: at.onHand,
    committed: at.committed,
  })),
});

const historyEntryView = ({ at, kind, reason, batchref, location, delta, qtyAfter, reference, actor }: HistoryEntry) => ({
  at,
  kind,
  reason,
  batchref,
  location,
  delta,
  qty_after: qtyAfter,
  ...(reference === undefined ? {} : { reference }),
  actor,
});

const listedStockView = ({ sku, inStock, incoming, held, nextEta, onHand, committed, available }: ListedStock) => ({
  sku,
  on_hand: onHand,
  committed,
  held,
  available,
  in_stock: inStock,
  incoming,
  next_eta: nextEta,
});

/** A page of a list's SKUs with their levels, and the cursor of the next page while more may remain. */
const stockListPage = async (list: SkuList, { limit, cursor }: { limit?: string; cursor?: string }, store: BatchRepository) => {
  // The schema let only a cursor that names a position through.
  const after = cursor === undefined ? undefined : listPositionOf(cursor);
  const page = await stockList(list, { limit: limit === undefined ? DEFAULT_LIST_LIMIT : Number(limit), ...(after ? { after } : {}) }, store);
  return { skus: page.entries.map(listedStockView), ...(page.next ? { cursor: listCursorOf(page.next) } : {}) };
};

const locationView = ({ id, name, priority, serves, active, position, handlingDays, transitDays }: Location) => ({
  id,
  name,
  priority,
  serves,
  active,
  ...(position ? { position: { lat: position.lat, lng: position.lng } } : {}),
  ...(handlingDays === undefined ? {} : { handling_days: handlingDays }),
  ...(transitDays === undefined ? {} : { transit_days: { ...transitDays } }),
});

/** What POST /transfers answers: the transfer, the batch its units came from and the incoming batch's ref. */
const transferMadeView = ({ transferid, fromBatchref }: Transfer) => ({ transferid, from_batchref: fromBatchref, ref: transferid });

const transferView = ({ transferid, sku, qty, from, to, eta, fromBatchref, status }: Transfer) => ({
  transferid,
  sku,
  qty,
  from,
  to,
  eta,
  from_batchref: fromBatchref,
  ref: transferid,
  status,
});

const shipmentView = ({ shipmentid, orderid, location, shippedAt, lines }: Shipment) => ({
  shipmentid,
  orderid,
  location,
  shipped_at: shippedAt,
  lines: lines.map(({ sku, qty, parts }) => ({ sku, qty, parts: parts.map((part) => ({ batchref: part.batchref, qty: part.qty })) })),
});

const importView = ({ importid, feed, status, dryRun, validateFirst, counts, fileRefusal, startedAt, finishedAt, errors }: ImportReport, upload?: Upload) => ({
  importid,
  ...(feed === 'rows' ? {} : { format: feed }),
  status,
  dry_run: dryRun,
  validate_first: validateFirst,
  counts: {
    total: counts.total,
    done: counts.done,
    applied: counts.applied,
    unchanged: counts.unchanged,
    conflicted: counts.conflicted,
    stale: counts.stale,
    invalid: counts.invalid,
    failed: counts.failed,
  },
  started_at: startedAt,
  ...(finishedAt === undefined ? {} : { finished_at: finishedAt }),
  ...(fileRefusal ? { file_refused: { message: fileRefusal.message, ...(fileRefusal.row === undefined ? {} : { row: fileRefusal.row }) } } : {}),
  errors: errors.map(({ row, outcome, code, message }) => ({ row, outcome, code, message })),
  ...(upload ? { upload: { url: upload.url, method: upload.method, headers: upload.headers, expires_at: upload.expiresAt } } : {}),
});

/** Without a store of files: an import of rows inline runs, one of a file cannot be sent. */
const noUploads: UploadTarget = () => Promise.reject(new Error('No store of files for imports: set IMPORT_BUCKET'));

/**
 * The batches and their stock: adding a batch, reading and changing one, a SKU's stock levels; the
 * locations batches are at; the transfers that move stock between them; the shipments that take
 * it out of the building; the adjustments that set what is on the shelf; and the imports that
 * bring a feed of batches and counts through the same changes.
 */
export const createBatchesHandler = (repository: BatchRepository, uploads: UploadTarget = noUploads) =>
  routedHandler<BatchesRouteKey>(repository, [
    route('POST /add_batch', {
      body: batchSchema,
      successOutcomes: { 201: 'BatchAdded', 200: 'BatchAlreadyAdded' },
      // The plain word OK, as the spec has it; 200 for a repeat.
      run: async ({ body }, store) => {
        const { created } = await addBatch(body, store);
        return text(created ? 201 : 200, 'OK');
      },
    }),
    route('GET /batches/{ref}', {
      successOutcomes: { 200: 'BatchRead' },
      run: async ({ pathParameters: { ref } }, store) =>
        json(200, batchView(await batchStatus(ref, store))),
    }),
    route('PATCH /batches/{ref}', {
      body: batchChangeSchema,
      successOutcomes: { 200: 'BatchChanged' },
      run: async ({ pathParameters: { ref }, body }, store, counter) => {
        // The holds it ends to make room count as they are written, even if the change then gives up.
        const { batch, reallocated } = await changeBatch(ref, body, countingHoldEndings(store, counter));
        counter.count(metricNames.linesReallocated, reallocated.length);
        return json(200, { ...batchView(batch), reallocated: reallocated.map(reallocationView) });
      },
    }),
    route('GET /skus/{sku}/stock', {
      query: stockQuerySchema,
      successOutcomes: { 200: 'StockRead' },
      run: async ({ pathParameters: { sku }, query: { location } }, store) => json(200, stockView(await skuStock(sku, store, location))),
    }),
    route('GET /skus/{sku}/history', {
      query: historyQuerySchema,
      successOutcomes: { 200: 'HistoryRead' },
      run: async ({ pathParameters: { sku }, query: { location, limit, cursor } }, store) => {
        // The schema let only a cursor that names a position through.
        const after = cursor === undefined ? undefined : positionOf(cursor);
        const page = await stockHistory(sku, { ...(location === undefined ? {} : { location }), limit: limit === undefined ? DEFAULT_HISTORY_LIMIT : Number(limit), ...(after ? { after } : {}) }, store);
        return json(200, { sku, entries: page.entries.map(historyEntryView), ...(page.next ? { cursor: cursorOf(page.next) } : {}) });
      },
    }),
    route('GET /skus', {
      query: listQuerySchema,
      successOutcomes: { 200: 'SkusListed' },
      run: async ({ query }, store) => json(200, await stockListPage({ kind: 'all' }, query, store)),
    }),
    route('GET /locations', {
      successOutcomes: { 200: 'LocationsRead' },
      run: async (_, store) => json(200, { locations: (await allLocations(store)).map(locationView) }),
    }),
    route('GET /locations/{id}', {
      successOutcomes: { 200: 'LocationRead' },
      run: async ({ pathParameters: { id } }, store) => json(200, locationView(await locationById(id, store))),
    }),
    route('GET /locations/{id}/stock', {
      query: listQuerySchema,
      successOutcomes: { 200: 'LocationStockListed' },
      run: async ({ pathParameters: { id }, query }, store) => json(200, { location: id, ...(await stockListPage({ kind: 'location', location: id }, query, store)) }),
    }),
    route('PUT /locations/{id}', {
      body: locationSchema,
      successOutcomes: { 201: 'LocationCreated', 200: 'LocationReplaced' },
      // 201 for a new location, 200 for one replaced, or the same again (a repeat, which writes nothing).
      run: async ({ pathParameters: { id }, body: { id: named, handling_days: handlingDays, transit_days: transitDays, ...body } }, store) => {
        if (named !== undefined && named !== id) throw new LocationIdNotThePath(id, named);
        const leadTimes = { ...(handlingDays === undefined ? {} : { handlingDays }), ...(transitDays === undefined ? {} : { transitDays }) };
        const { location, created } = await putLocation({ id, ...body, ...leadTimes }, store);
        return json(created ? 201 : 200, locationView(location));
      },
    }),
    route('POST /transfers', {
      body: transferSchema,
      successOutcomes: { 201: 'TransferCreated', 200: 'TransferRepeated' },
      run: async ({ body }, store) => {
        const { transfer, created } = await createTransfer(body, store);
        return json(created ? 201 : 200, transferMadeView(transfer));
      },
    }),
    route('GET /transfers/{transferid}', {
      successOutcomes: { 200: 'TransferRead' },
      run: async ({ pathParameters: { transferid } }, store) => json(200, transferView(await transferById(transferid, store))),
    }),
    route('DELETE /transfers/{transferid}', {
      successOutcomes: { 204: 'TransferCancelled' },
      // 204 for a transfer cancelled by this request or before it (a repeat).
      run: async ({ pathParameters: { transferid } }, store) => {
        await cancelTransfer(transferid, store);
        return noContent();
      },
    }),
    route('POST /shipments', {
      body: shipmentSchema,
      successOutcomes: { 201: 'Shipped', 200: 'ShipmentRepeated' },
      run: async ({ body }, store) => {
        const { shipment, created } = await ship(body, store);
        return json(created ? 201 : 200, shipmentView(shipment));
      },
    }),
    route('POST /adjustments', {
      body: adjustmentSchema,
      successOutcomes: { 201: 'Adjusted', 200: 'AdjustmentRepeated' },
      run: async ({ body: { counted_at, expected_qty, ...fields } }, store, counter) => {
        const request = { ...fields, ...(counted_at === undefined ? {} : { countedAt: counted_at }), ...(expected_qty === undefined ? {} : { expectedQty: expected_qty }) };
        const { adjustment, reallocated, created } = await adjustStock(request, countingHoldEndings(store, counter));
        counter.count(metricNames.linesReallocated, reallocated.length);
        const { adjustmentid, ref, reason, before, after } = adjustment;
        return json(created ? 201 : 200, { adjustmentid, ref, reason, before, after, reallocated: reallocated.map(reallocationView) });
      },
    }),
    route('POST /imports', {
      body: importSchema,
      successOutcomes: { 201: 'ImportRan', 200: 'ImportRepeated' },
      run: async ({ body: { importid, rows, format, dry_run = false, validate_first = true } }, store) => {
        const options = { importid, dryRun: dry_run, validateFirst: validate_first };
        if (rows) {
          const read = rows.map((fields, index) => readRow(fields, index + 1));
          const { report, created } = await importRows({ ...options, feed: 'rows', digest: rowsDigest(rows) }, read, store);
          return json(created ? 201 : 200, importView(report));
        }
        const { report, created } = await importFile({ ...options, feed: format ?? 'jsonl' }, store);
        return json(created ? 201 : 200, importView(report, report.status === 'awaiting_upload' ? await uploads(importid, store.currentTime()) : undefined));
      },
    }),
    route('GET /imports/{importid}', {
      successOutcomes: { 200: 'ImportRead' },
      run: async ({ pathParameters: { importid } }, store) => json(200, importView(await importById(importid, store))),
    }),
    route('GET /imports/{importid}/rows', {
      query: importRowsQuerySchema,
      successOutcomes: { 200: 'ImportRowsRead' },
      run: async ({ pathParameters: { importid }, query: { limit, cursor } }, store) => {
        // The schema let only a cursor that names a row through.
        const fromRow = cursor === undefined ? 1 : (rowOfImportRowsCursor(cursor) as number);
        const page = await importedRows(importid, { fromRow, limit: limit === undefined ? DEFAULT_LIST_LIMIT : Number(limit) }, store);
        return json(200, { importid, rows: page.rows, ...(page.next === undefined ? {} : { cursor: importRowsCursorOf(page.next) }) });
      },
    }),
    route('GET /shipments/{shipmentid}', {
      successOutcomes: { 200: 'ShipmentRead' },
      run: async ({ pathParameters: { shipmentid } }, store) => json(200, shipmentView(await shipmentById(shipmentid, store))),
    }),
  ]);

const importBucket = process.env.IMPORT_BUCKET;
export const handler = createBatchesHandler(batchRepository, importBucket ? s3Uploads(importBucket, process.env.AWS_REGION ?? '') : noUploads);
