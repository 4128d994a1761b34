import { adjustStock } from './adjustment-services';
import { type AdjustmentRequest, adjustedQty, countTimeRefused, isSameAdjustment } from './adjustments';
import { changeBatch } from './batch-changes';
import { AdjustmentExists, AdjustmentRefused, BatchNotFound, DomainError, DuplicateBatch, ImportExists, ImportNotFound, QtyChanged, RefusedField, StaleCount, UnknownLocation } from './errors';
import {
  type BatchRow,
  type CountRow,
  IMPORT_CHUNK_ROWS,
  type ImportRecord,
  type ImportReport,
  type ImportRequest,
  type ImportRow,
  MAX_IMPORT_ERRORS,
  type ReadRow,
  type RowError,
  type RowOutcome,
  isSameImport,
  noRowsCounted,
  rowChangeId,
} from './imports';
import { allLocations } from './location-services';
import { locationOf } from './model';
import type { Instant } from './holds';
import type { BatchRepository } from './ports';
import { addBatch } from './services';

/*
 * Imports (domain/imports.ts; docs/api.md, "Imports"): each row goes through the service function
 * its request would (addBatch, adjustStock, changeBatch), under the id of its import and its row, so
 * a row applied again (an import resumed, a chunk sent twice) changes nothing more. A chunk's
 * outcomes are counted once, when it is recorded; a chunk recorded is not applied again.
 */

/** What a row did, and why, when it did not apply. */
interface RowResult {
  readonly outcome: RowOutcome;
  readonly error?: RowError;
}

const APPLIED: RowResult = { outcome: 'applied' };
const UNCHANGED: RowResult = { outcome: 'unchanged' };

/** The refusal of a row, as the outcome it counts as: an error of the rules is the row's, any other is the store's and fails the chunk. */
const refusedRow = (row: number, error: unknown): RowResult => {
  if (!(error instanceof DomainError)) throw error;
  const outcome: RowError['outcome'] =
    error instanceof QtyChanged ? 'conflicted' : error instanceof StaleCount ? 'stale' : error instanceof RefusedField ? 'invalid' : 'failed';
  return { outcome, error: { row, outcome, code: error.code, message: error.message } };
};

/** Whether this row's change was made (by a send of it cut off before its chunk was recorded); another adjustment under its id is AdjustmentExists. */
const madeBefore = async (request: AdjustmentRequest, repository: BatchRepository): Promise<boolean> => {
  const stored = await repository.adjustment(request.adjustmentid);
  if (stored && !isSameAdjustment(stored, request)) throw new AdjustmentExists(request.adjustmentid);
  return stored !== undefined;
};

/** A count this row made before: repeated, so that a count cut off before it moved the lines it left no room for moves them. */
const finishedRepeat = async (request: AdjustmentRequest, repository: BatchRepository): Promise<RowResult> => {
  await adjustStock(request, repository);
  return APPLIED;
};

/**
 * A batch row: a batch its ref does not name is added, named as this row's (its `expected_qty`, if
 * any, must be 0); one of the same SKU at the same place has its eta changed and its qty set by a
 * count taken now (reason `counted`, on the qty `expected_qty` names), each only where it differs.
 * A batch this row added, or counted, is the row applied: a send cut off before its chunk was
 * recorded made it, and the rows after it may have changed the batch since.
 */
const applyBatchRow = async ({ importid, dryRun }: ImportRecord, row: number, { ref, sku, qty, eta, location, expectedQty }: BatchRow, repository: BatchRepository): Promise<RowResult> => {
  const changeId = rowChangeId(importid, row);
  const batch = await repository.batch(ref);
  if (!batch) {
    if (expectedQty !== undefined && expectedQty !== 0) throw new QtyChanged(ref, expectedQty, 0);
    if (dryRun) return APPLIED;
    const { created } = await addBatch({ ref, sku, qty, eta, ...(location === undefined ? {} : { location }) }, repository, changeId);
    // Not created: another send of this row added it meanwhile, or another request the same batch.
    return created || (await repository.batchAddedBy(ref)) === changeId ? APPLIED : UNCHANGED;
  }
  if (batch.sku !== sku || locationOf(batch) !== locationOf({ location })) throw new DuplicateBatch(ref);
  if ((await repository.batchAddedBy(ref)) === changeId) return APPLIED;
  const count: AdjustmentRequest = { adjustmentid: changeId, ref, reason: 'counted', qty, ...(expectedQty === undefined ? {} : { expectedQty }) };
  // Its count is made last: once made, only what the count left undone (lines it had to move) is left, which its repeat finishes.
  if (await madeBefore(count, repository)) return finishedRepeat(count, repository);
  if (expectedQty !== undefined && batch.qty !== expectedQty) throw new QtyChanged(ref, expectedQty, batch.qty);
  const setsQty = batch.qty !== qty;
  const setsEta = batch.eta !== eta;
  if (!setsQty && !setsEta) return UNCHANGED;
  if (dryRun) return APPLIED;
  // The eta first: a change of the batch is refused at or before the moment of a count applied to it, and the count is taken now.
  if (setsEta) await changeBatch(ref, { eta }, repository);
  if (setsQty) await adjustStock(count, repository);
  return APPLIED;
};

/** A count row: applied as POST /adjustments applies a count (reason `counted`), unless it would leave the batch's qty as it is. */
const applyCountRow = async ({ importid, dryRun }: ImportRecord, row: number, { ref, qty, countedAt, expectedQty }: CountRow, repository: BatchRepository): Promise<RowResult> => {
  const request: AdjustmentRequest = { adjustmentid: rowChangeId(importid, row), ref, reason: 'counted', qty, countedAt: new Date(countedAt).toISOString(), ...(expectedQty === undefined ? {} : { expectedQty }) };
  const batch = await repository.batch(ref);
  // After the batch's read: a count another send of this row made since that read is found here, not judged as a change of the batch.
  if (await madeBefore(request, repository)) return finishedRepeat(request, repository);
  if (!batch) throw new BatchNotFound(ref);
  if (expectedQty !== undefined && batch.qty !== expectedQty) throw new QtyChanged(ref, expectedQty, batch.qty);
  const at = request.countedAt as string;
  const basis = await repository.countBasis(ref, at);
  if (basis.lastCountedAt !== undefined && basis.lastCountedAt > at) throw new StaleCount(ref, at, basis.lastCountedAt);
  if (adjustedQty(request, batch.qty, basis) === batch.qty) return UNCHANGED;
  if (dryRun) return APPLIED;
  await adjustStock(request, repository);
  return APPLIED;
};

const applyRow = (record: ImportRecord, row: number, read: ImportRow, repository: BatchRepository): Promise<RowResult> =>
  (read.kind === 'batch' ? applyBatchRow(record, row, read, repository) : applyCountRow(record, row, read, repository)).catch((error: unknown) => refusedRow(row, error));

/** The row, or why it cannot be applied before any is: its schema refused it, it names a place that is not one, or a count's time is out of its window at `now` (none: not judged). */
const checkedRow = ({ row, read }: ReadRow, locations: ReadonlySet<string>, now?: Instant): { readonly row: ImportRow } | { readonly refusal: RowError } => {
  const refusal = (error: RefusedField): { readonly refusal: RowError } => ({ refusal: { row, outcome: 'invalid', code: error.code, message: error.message } });
  if (read.kind === 'invalid') return { refusal: { row, outcome: 'invalid', code: 'validation_failed', message: `${read.field} ${read.message}` } };
  if (read.kind === 'batch' && !locations.has(locationOf(read))) return refusal(new UnknownLocation(locationOf(read)));
  const outOfWindow = read.kind === 'count' && now !== undefined ? countTimeRefused(new Date(read.countedAt).toISOString(), now) : undefined;
  if (outOfWindow) return refusal(new AdjustmentRefused('counted_at', outOfWindow));
  return { row: read };
};

/** Applies a chunk's rows, one after another, and records the chunk; a chunk recorded before is left as it is. */
const runChunk = async (record: ImportRecord, chunk: readonly ReadRow[], index: number, locations: ReadonlySet<string>, repository: BatchRepository): Promise<void> => {
  if (await repository.importChunkRecorded(record.importid, index)) return;
  const results: RowResult[] = [];
  for (const read of chunk) {
    const checked = checkedRow(read, locations, repository.currentTime());
    results.push('refusal' in checked ? { outcome: checked.refusal.outcome, error: checked.refusal } : await applyRow(record, read.row, checked.row, repository));
  }
  await repository.recordImportChunk(record.importid, {
    index,
    outcomes: results.map(({ outcome }) => outcome),
    errors: results.flatMap(({ error }) => (error ? [error] : [])),
  });
};

/**
 * Runs the import's rows: with `validateFirst`, one row refused before any is applied fails the
 * import, with nothing applied and the first refusals kept; otherwise each chunk of rows is applied
 * and recorded in turn, and the import completes once every one is.
 */
const runImport = async (record: ImportRecord, rows: readonly ReadRow[], resumed: boolean, repository: BatchRepository): Promise<void> => {
  const locations = new Set((await allLocations(repository)).map(({ id }) => id));
  if (record.validateFirst) {
    // A resumed import may have rows applied: what time alone changes (a count's window) does not fail it now, and refuses its row when it is applied.
    const now = resumed ? undefined : repository.currentTime();
    const refusals = rows.flatMap((read) => {
      const checked = checkedRow(read, locations, now);
      return 'refusal' in checked ? [checked.refusal] : [];
    });
    if (refusals.length > 0) {
      await repository.failImport(record.importid, refusals.length, refusals.slice(0, MAX_IMPORT_ERRORS), new Date(repository.currentTime()).toISOString());
      return;
    }
  }
  for (let index = 0; index * IMPORT_CHUNK_ROWS < rows.length; index++) {
    await runChunk(record, rows.slice(index * IMPORT_CHUNK_ROWS, (index + 1) * IMPORT_CHUNK_ROWS), index, locations, repository);
  }
  await repository.completeImport(record.importid, new Date(repository.currentTime()).toISOString());
};

/**
 * Imports the rows under the request's importid, and answers the import as it stands once they are
 * run. The same import again (the same rows and options) is a repeat: it runs what a send cut off
 * left undone, and answers; other rows or options under that importid are ImportExists.
 */
export const importRows = async (request: ImportRequest, rows: readonly ReadRow[], repository: BatchRepository): Promise<{ readonly report: ImportReport; readonly created: boolean }> => {
  const fresh: ImportRecord = { ...request, status: 'running', counts: noRowsCounted(rows.length), startedAt: new Date(repository.currentTime()).toISOString() };
  const stored = await repository.createImport(fresh);
  if (stored && !isSameImport(stored, request)) throw new ImportExists(request.importid);
  const record = stored ?? fresh;
  if (record.status === 'running') await runImport(record, rows, stored !== undefined, repository);
  // Still running only while another send of it records a chunk this one found it applying.
  return { report: await importById(request.importid, repository), created: stored === undefined };
};

/** The import as it stands, with the first rows of it that did not apply, by row number. */
export const importById = async (importid: string, repository: BatchRepository): Promise<ImportReport> => {
  const record = await repository.importRecord(importid);
  if (!record) throw new ImportNotFound(importid);
  return { ...record, errors: await repository.importErrors(importid, MAX_IMPORT_ERRORS) };
};
