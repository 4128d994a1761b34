import { adjustStock } from './adjustment-services';
import { type AdjustmentRequest, adjustedQty, countTimeRefused, isSameAdjustment } from './adjustments';
import { changeBatch } from './batch-changes';
import { AdjustmentExists, AdjustmentRefused, BatchNotFound, DomainError, DuplicateBatch, ImportExists, ImportNotFound, QtyChanged, RefusedField, StaleCount, UnknownLocation } from './errors';
import {
  type BatchRow,
  type CountRow,
  type FileRefusal,
  IMPORT_CHECK_ROWS,
  IMPORT_CHUNK_ROWS,
  ImportChunkTaken,
  type ImportRecord,
  type ImportReport,
  type ImportRequest,
  type ImportRow,
  type ImportRowsRead,
  type ImportedRow,
  type ImportedRows,
  MAX_IMPORT_ERRORS,
  MAX_ROW_MESSAGE_CHARACTERS,
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
import { applyPlaceCount } from './place-count-services';
import { addBatch } from './services';

/*
 * Imports (domain/imports.ts; docs/api.md, "Imports"): each row goes through the service function
 * its request would (addBatch, adjustStock, changeBatch), under the id of its import and its row, so
 * a row applied again (an import resumed, a chunk sent twice) changes nothing more. A chunk's
 * outcomes are counted once, when it is recorded, by the send that claimed it last; a chunk
 * recorded is not applied again.
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
  return { outcome, error: rowError(row, outcome, error.code, error.message) };
};

/** A row's error, its message cut to its bound. */
const rowError = (row: number, outcome: RowError['outcome'], code: RowError['code'], message: string): RowError => ({
  row,
  outcome,
  code,
  message: message.length > MAX_ROW_MESSAGE_CHARACTERS ? `${message.slice(0, MAX_ROW_MESSAGE_CHARACTERS - 1)}…` : message,
});

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
 * recorded made it, and the rows after it may have changed the batch since. `absent`: its chunk's
 * read found no batch of its ref, so it is not read again (its add is conditional all the same).
 */
const applyBatchRow = async (record: ImportRecord, row: number, read: BatchRow, repository: BatchRepository, absent: boolean): Promise<RowResult> => {
  const { importid, dryRun } = record;
  const { ref, sku, qty, eta, location, expectedQty } = read;
  const changeId = rowChangeId(importid, row);
  const batch = absent ? undefined : await repository.batch(ref);
  if (!batch) {
    if (expectedQty !== undefined && expectedQty !== 0) throw new QtyChanged(ref, expectedQty, 0);
    if (dryRun) return APPLIED;
    let created: boolean;
    try {
      ({ created } = await addBatch({ ref, sku, qty, eta, ...(location === undefined ? {} : { location }) }, repository, changeId));
    } catch (error) {
      // A batch added since the chunk's read, unlike this row's: judged as one found, by its own read.
      if (absent && error instanceof DuplicateBatch) return applyBatchRow(record, row, read, repository, false);
      throw error;
    }
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

/**
 * Whether a batch row is unchanged as its chunk's read found its batch: one of its SKU at its place,
 * with its qty (its `expected_qty` too) and its eta, which no row of this import added and whose
 * count this row has not made. Then the row writes nothing, and needs no read of its own; any other
 * row is judged by its own reads, as applyBatchRow judges it.
 */
const unchangedAsRead = (importid: string, row: number, read: ImportRow, rowsRead: ImportRowsRead): boolean => {
  if (read.kind !== 'batch') return false;
  const batch = rowsRead.batches.get(read.ref);
  const changeId = rowChangeId(importid, row);
  if (!batch || rowsRead.adjusted.get(changeId) !== false || batch.addedBy === changeId) return false;
  const expected = read.expectedQty === undefined || read.expectedQty === batch.qty;
  return expected && batch.sku === read.sku && batch.location === locationOf(read) && batch.qty === read.qty && batch.eta === read.eta;
};

/** The chunk's read of what its batch rows judge first: their batches' references and their change ids' adjustments. */
const readChunkRows = (importid: string, rows: readonly { readonly row: number; readonly read: ImportRow }[], repository: BatchRepository): Promise<ImportRowsRead> => {
  const batchRows = rows.flatMap(({ row, read }) => (read.kind === 'batch' ? [{ row, ref: read.ref }] : []));
  if (batchRows.length === 0) return Promise.resolve({ batches: new Map(), adjusted: new Map() });
  return repository.importRowsRead([...new Set(batchRows.map(({ ref }) => ref))], batchRows.map(({ row }) => rowChangeId(importid, row)));
};

const appliedRow = (record: ImportRecord, row: number, read: ImportRow, repository: BatchRepository, absent: boolean): Promise<RowResult> => {
  if (read.kind === 'batch') return applyBatchRow(record, row, read, repository, absent);
  if (read.kind === 'count') return applyCountRow(record, row, read, repository);
  return applyPlaceCount(record, row, read, repository).then((outcome) => (outcome === 'applied' ? APPLIED : UNCHANGED));
};

const applyRow = (record: ImportRecord, row: number, read: ImportRow, repository: BatchRepository, absent = false): Promise<RowResult> =>
  appliedRow(record, row, read, repository, absent).catch((error: unknown) => refusedRow(row, error));

/** The row, or why it cannot be applied before any is: its schema refused it, it names a place that is not one, or a count's time is out of its window at `now` (none: not judged). */
const checkedRow = ({ row, read }: ReadRow, locations: ReadonlySet<string>, now?: Instant): { readonly row: ImportRow } | { readonly refusal: RowError } => {
  const refusal = (error: RefusedField): { readonly refusal: RowError } => ({ refusal: rowError(row, 'invalid', error.code, error.message) });
  if (read.kind === 'invalid') return { refusal: rowError(row, 'invalid', 'validation_failed', `${read.field} ${read.message}`) };
  if (read.kind !== 'count' && !locations.has(locationOf(read))) return refusal(new UnknownLocation(locationOf(read)));
  const outOfWindow = read.kind !== 'batch' && now !== undefined ? countTimeRefused(new Date(read.countedAt).toISOString(), now) : undefined;
  if (outOfWindow) return refusal(new AdjustmentRefused('counted_at', outOfWindow));
  return { row: read };
};

/** The import, running: a chunk or a check of one that is not (completed, failed, or not begun) is left undone. */
const runningImport = async (importid: string, repository: BatchRepository): Promise<ImportRecord | undefined> => {
  const record = await repository.importRecord(importid);
  if (!record) throw new ImportNotFound(importid);
  return record.status === 'running' ? record : undefined;
};

const placesOf = async (repository: BatchRepository): Promise<ReadonlySet<string>> => new Set((await allLocations(repository)).map(({ id }) => id));

const nowText = (repository: BatchRepository) => new Date(repository.currentTime()).toISOString();

/**
 * Opens the import: one of rows sent inline runs at once; one of a file awaits it. The same import
 * again (the same rows, or a file in the same format, and the same options) answers the one stored;
 * another under its importid is ImportExists.
 */
export const openImport = async (request: ImportRequest, repository: BatchRepository): Promise<{ readonly record: ImportRecord; readonly created: boolean }> => {
  const fresh: ImportRecord = { ...request, status: request.feed === 'rows' ? 'running' : 'awaiting_upload', counts: noRowsCounted(0), refused: 0, startedAt: nowText(repository) };
  const stored = await repository.createImport(fresh);
  if (stored && !isSameImport(stored, request)) throw new ImportExists(request.importid);
  return { record: stored ?? fresh, created: stored === undefined };
};

/**
 * The import's file has arrived, as `file` (its digest): the import awaiting it runs from now. The
 * same file arriving again (a notice of it delivered twice) answers the import as it stands; another
 * file, once one has arrived, is ImportExists, and changes nothing.
 */
export const beginImport = async (importid: string, file: string, repository: BatchRepository): Promise<ImportRecord> => {
  const record = await repository.importRecord(importid);
  if (!record) throw new ImportNotFound(importid);
  const begun = record.status === 'awaiting_upload' ? await repository.beginImport(importid, file, nowText(repository)) : record;
  if (begun.file !== file) throw new ImportExists(importid);
  return begun;
};

/**
 * Checks rows before any of the import's is applied, and records the check once: its rows counted
 * into the total, its refusals counted and, when they are to fail the import (`validateFirst`), kept.
 */
export const checkImportRows = async (importid: string, rows: readonly ReadRow[], repository: BatchRepository): Promise<void> => {
  const record = await runningImport(importid, repository);
  const firstRow = rows[0]?.row;
  if (!record || firstRow === undefined || (await repository.importCheckRecorded(importid, firstRow))) return;
  const locations = await placesOf(repository);
  const now = repository.currentTime();
  const refusals = rows.flatMap((read) => {
    const checked = checkedRow(read, locations, now);
    return 'refusal' in checked ? [checked.refusal] : [];
  });
  await repository.recordImportCheck(importid, { firstRow, rows: rows.length, refused: refusals.length, errors: record.validateFirst ? refusals : [] });
};

/**
 * Once every row is checked: whether the rows are to be applied. With `validateFirst`, one row the
 * check refused fails the import instead, with nothing applied and the first refusals kept.
 */
export const decideImport = async (importid: string, repository: BatchRepository): Promise<boolean> => {
  const record = await runningImport(importid, repository);
  if (!record) return false;
  if (!record.validateFirst || record.refused === 0) return true;
  await repository.failImport(importid, nowText(repository));
  return false;
};

/**
 * Applies a chunk of the import's rows, one after another, and records the chunk, under this send's
 * claim on it: a chunk recorded before is left as it is. Answers false when another send claimed
 * the chunk meanwhile: that send judges every row again (those this one applied are found made),
 * and is the one to go on with the rows after, so that rows run in their order.
 */
export const applyImportRows = async (importid: string, chunk: readonly ReadRow[], repository: BatchRepository): Promise<boolean> => {
  const record = await runningImport(importid, repository);
  const firstRow = chunk[0]?.row;
  if (!record || firstRow === undefined) return true;
  const claim = await repository.claimImportChunk(importid, firstRow);
  if (!claim) return true;
  const claimed = repository.forImportChunk(claim);
  const locations = await placesOf(repository);
  const now = repository.currentTime();
  const checked = chunk.map((read) => ({ row: read.row, checked: checkedRow(read, locations, now) }));
  const valid = checked.flatMap(({ row, checked: one }) => ('row' in one ? [{ row, read: one.row }] : []));
  const rowsRead = await readChunkRows(importid, valid, repository);
  // A batch an earlier row of the chunk names may have changed since the chunk's read: read again.
  // A count at a place may change any batch of its SKU there: no batch of that SKU is as read after it.
  const named = new Set<string>();
  const countedSkus = new Set<string>();
  const results: RowResult[] = [];
  try {
    for (const { row, checked: one } of checked) {
      if ('refusal' in one) {
        results.push({ outcome: one.refusal.outcome, error: one.refusal });
        continue;
      }
      if (one.row.kind === 'place-count') {
        countedSkus.add(one.row.sku);
        results.push(await applyRow(record, row, one.row, claimed));
        continue;
      }
      const fresh = !named.has(one.row.ref) && !countedSkus.has(rowsRead.batches.get(one.row.ref)?.sku ?? '');
      named.add(one.row.ref);
      if (fresh && unchangedAsRead(importid, row, one.row, rowsRead)) {
        results.push(UNCHANGED);
        continue;
      }
      // A row that expects a batch to have units is judged by its own read of it.
      const absent = fresh && one.row.kind === 'batch' && !one.row.expectedQty && rowsRead.batches.get(one.row.ref) === null;
      results.push(await applyRow(record, row, one.row, claimed, absent));
    }
  } catch (error) {
    if (error instanceof ImportChunkTaken) return false;
    throw error;
  }
  // Not recorded: another send claimed the chunk after this one's last write, or recorded it first.
  return repository.recordImportChunk(claim, { firstRow, outcomes: results.map(({ outcome }) => outcome), errors: results.flatMap(({ error }) => (error ? [error] : [])) });
};

/** Ends the import once every row of it is done: completed, and its counts final. Whether it has ended (completed now or before, or failed). */
export const finishImport = async (importid: string, repository: BatchRepository): Promise<boolean> => {
  if (!(await runningImport(importid, repository))) return true;
  await repository.completeImport(importid, nowText(repository));
  return (await runningImport(importid, repository)) === undefined;
};

/** The import's file is no feed (empty, not in its format, too long): the import fails, with nothing of it applied. */
export const refuseImportFile = async (importid: string, refusal: FileRefusal, repository: BatchRepository): Promise<void> => {
  if (await runningImport(importid, repository)) await repository.failImport(importid, nowText(repository), refusal);
};

/** The rows, `size` at a time. */
async function* groupsOf(rows: AsyncIterable<ReadRow> | Iterable<ReadRow>, size: number): AsyncGenerator<ReadRow[]> {
  let group: ReadRow[] = [];
  for await (const row of rows) {
    group.push(row);
    if (group.length === size) {
      yield group;
      group = [];
    }
  }
  if (group.length > 0) yield group;
}

/**
 * Runs a begun import over its rows, as the engine of imports runs one (docs/architecture.md,
 * "Imports"): every row checked, a check at a time; then, unless that failed it, every row
 * applied, a chunk at a time; then the import completed. `rows` reads the feed from its start, once
 * for the checks and once for the chunks: a feed is streamed, never held. Each step is recorded
 * once, so that the run repeated, or resumed after a crash, does none twice; a run another send
 * took a chunk from stops there, and leaves the rest to it.
 */
export const runImport = async (importid: string, rows: () => AsyncIterable<ReadRow> | Iterable<ReadRow>, repository: BatchRepository): Promise<void> => {
  for await (const check of groupsOf(rows(), IMPORT_CHECK_ROWS)) await checkImportRows(importid, check, repository);
  if (!(await decideImport(importid, repository))) return;
  for await (const chunk of groupsOf(rows(), IMPORT_CHUNK_ROWS)) if (!(await applyImportRows(importid, chunk, repository))) return;
  await finishImport(importid, repository);
};

/**
 * Imports rows sent inline under the request's importid, and answers the import as it stands once
 * they are run. The same import again is a repeat: it runs what a send cut off left undone.
 */
export const importRows = async (request: ImportRequest, rows: readonly ReadRow[], repository: BatchRepository): Promise<{ readonly report: ImportReport; readonly created: boolean }> => {
  const { record, created } = await openImport(request, repository);
  if (record.status === 'running') await runImport(request.importid, () => rows, repository);
  // Still running while another send of it applies a chunk it claimed from this one.
  return { report: await importById(request.importid, repository), created };
};

/** Opens an import of a file, which runs once the file has arrived; answers it as it stands. */
export const importFile = async (request: ImportRequest, repository: BatchRepository): Promise<{ readonly report: ImportReport; readonly created: boolean }> => {
  const { created } = await openImport(request, repository);
  return { report: await importById(request.importid, repository), created };
};

/** The import as it stands, with the first rows of it that did not apply, by row number. */
export const importById = async (importid: string, repository: BatchRepository): Promise<ImportReport> => {
  const record = await repository.importRecord(importid);
  if (!record) throw new ImportNotFound(importid);
  return { ...record, errors: await repository.importErrors(importid, MAX_IMPORT_ERRORS) };
};

/**
 * A page of the import's rows from `fromRow`, by number, as far as they are done: each row of a
 * recorded chunk with its outcome. An import failed by its check applied none: its page holds the
 * rows the check refused, and one whose file was refused holds none.
 */
export const importedRows = async (importid: string, { fromRow, limit }: { readonly fromRow: number; readonly limit: number }, repository: BatchRepository): Promise<ImportedRows> => {
  const record = await repository.importRecord(importid);
  if (!record) throw new ImportNotFound(importid);
  if (record.status === 'failed') {
    if (record.fileRefusal) return { rows: [] };
    const refused = await repository.importErrors(importid, limit + 1, fromRow);
    const next = refused[limit];
    return { rows: refused.slice(0, limit).map(importedRow), ...(next ? { next: next.row } : {}) };
  }
  // Enough chunks for the page and the row after it, however the first starts before `fromRow`.
  const chunks = await repository.importChunks(importid, fromRow, Math.ceil(limit / IMPORT_CHUNK_ROWS) + 1);
  const rows = chunks.flatMap(({ firstRow, outcomes, errors }) => {
    const byRow = new Map(errors.map((error) => [error.row, error]));
    return outcomes.map((outcome, index) => byRow.get(firstRow + index) ?? { row: firstRow + index, outcome });
  }).filter(({ row }) => row >= fromRow);
  const next = rows[limit];
  return { rows: rows.slice(0, limit).map(importedRow), ...(next ? { next: next.row } : {}) };
};

const importedRow = ({ row, outcome, ...why }: ImportedRow | RowError): ImportedRow => ({ row, outcome, ...('code' in why ? { code: why.code, message: why.message } : {}) });
