import { type ImportChunk, type ImportCounts, type ImportRecord, type ImportStatus, ROW_OUTCOMES, type RowError, type RowOutcome, IMPORT_CHUNK_ROWS, countsOf } from '../../domain/imports';
import { ITEM_IS_NEW } from './conditions';
import { SK, isAt, isNumber, isText, itemKey } from './fields';
import type { StoreCalls, TransactWriteItem } from './store-calls';
import type { TableReads } from './table-reads';
import { partitionKeyPrefix } from './table';

/*
 * Imports (domain/imports.ts; items.ts, "The table's items"): an import's record, which counts its
 * rows' outcomes, and in its partition one item for each chunk of rows recorded (its outcomes, so a
 * chunk is counted once; kept as long as the import, so that a chunk is never run or counted again)
 * and one for each chunk's rows that did not apply.
 */

const IMPORT_SORT_KEY = 'IMPORT';
const CHUNK_SORT_KEY_PREFIX = 'CHUNK#';
const ERRORS_SORT_KEY_PREFIX = 'ERRORS#';
/** A chunk's place, padded so that the sort keys' order is the rows' order. */
const chunkPlace = (index: number) => String(index).padStart(10, '0');

/** The import's counts, one attribute each, so that a chunk adds its outcomes with ADD. */
const COUNTED = ['done', ...ROW_OUTCOMES] as const;

const importPartition = (importid: string) => `${partitionKeyPrefix.import}${importid}`;
export const importKey = (importid: string) => itemKey(importPartition(importid), IMPORT_SORT_KEY);
const chunkKey = (importid: string, index: number) => itemKey(importPartition(importid), `${CHUNK_SORT_KEY_PREFIX}${chunkPlace(index)}`);
const errorsKey = (importid: string, index: number) => itemKey(importPartition(importid), `${ERRORS_SORT_KEY_PREFIX}${chunkPlace(index)}`);

/** A running import: a chunk counts into it, and it ends once. */
const IS_RUNNING = { ConditionExpression: '#status = :running', ExpressionAttributeNames: { '#status': 'status' } };

const importItem = ({ importid, dryRun, validateFirst, digest, status, counts, startedAt, finishedAt }: ImportRecord) => ({
  ...importKey(importid),
  type: 'Import',
  importid,
  dryRun,
  validateFirst,
  digest,
  status,
  ...counts,
  startedAt,
  ...(finishedAt === undefined ? {} : { finishedAt }),
});

const IMPORT_STATUSES: readonly ImportStatus[] = ['running', 'completed', 'failed'];

export type StoredImportItem =
  | { readonly kind: 'import'; readonly record: ImportRecord }
  | { readonly kind: 'import-chunk'; readonly importid: string; readonly index: number; readonly outcomes: readonly RowOutcome[] }
  | { readonly kind: 'import-errors'; readonly importid: string; readonly index: number; readonly errors: readonly RowError[] };

/** The record of an import as it stands. */
const parseRecord = (importid: string, item: Record<string, unknown>): StoredImportItem | undefined => {
  const { dryRun, validateFirst, digest, status, total, startedAt, finishedAt } = item;
  if (typeof dryRun !== 'boolean' || typeof validateFirst !== 'boolean' || !isText(digest) || !IMPORT_STATUSES.includes(status as ImportStatus)) return undefined;
  if (!isNumber(total) || !isText(startedAt) || !(finishedAt === undefined || isText(finishedAt)) || !COUNTED.every((name) => isNumber(item[name]))) return undefined;
  const counts = Object.fromEntries([['total', total], ...COUNTED.map((name) => [name, item[name]])]) as ImportCounts;
  return {
    kind: 'import',
    record: { importid, dryRun, validateFirst, digest, status: status as ImportStatus, counts, startedAt, ...(finishedAt === undefined ? {} : { finishedAt }) },
  };
};

/** The chunk's place its sort key names after `prefix`. */
const chunkIndexOf = (sortKey: unknown, prefix: string): number | undefined => {
  if (!isText(sortKey) || !sortKey.startsWith(prefix)) return undefined;
  const place = sortKey.slice(prefix.length);
  return /^\d{10}$/.test(place) ? Number(place) : undefined;
};

/** An import's record, a chunk's record or a chunk's errors, read back through its key. */
export const parseImportItem = (item: Record<string, unknown>): StoredImportItem | undefined => {
  const { importid, outcomes, errors } = item;
  if (!isText(importid)) return undefined;
  if (isAt(item, importKey(importid))) return parseRecord(importid, item);
  const chunk = chunkIndexOf(item[SK], CHUNK_SORT_KEY_PREFIX);
  if (chunk !== undefined && isAt(item, chunkKey(importid, chunk)) && isText(outcomes)) {
    const read = outcomes.split(',');
    if (read.every((outcome) => ROW_OUTCOMES.includes(outcome as RowOutcome))) return { kind: 'import-chunk', importid, index: chunk, outcomes: read as RowOutcome[] };
  }
  const errorsOf = chunkIndexOf(item[SK], ERRORS_SORT_KEY_PREFIX);
  if (errorsOf !== undefined && isAt(item, errorsKey(importid, errorsOf)) && Array.isArray(errors) && errors.every(isRowError)) return { kind: 'import-errors', importid, index: errorsOf, errors };
  return undefined;
};

const isRowError = (value: unknown): value is RowError => {
  const { row, outcome, code, message } = (value ?? {}) as Record<string, unknown>;
  return isNumber(row) && ROW_OUTCOMES.includes(outcome as RowOutcome) && isText(code) && isText(message);
};

/** The errors' item of a chunk: which of its rows did not apply, and why. */
const errorsWrite = (tableName: string, importid: string, index: number, errors: readonly RowError[]): TransactWriteItem => ({
  Put: { TableName: tableName, Item: { ...errorsKey(importid, index), importid, errors: errors.map(({ row, outcome, code, message }) => ({ row, outcome, code, message })) } },
});

/** Each chunk's errors, in the order of their rows. */
const byChunk = (errors: readonly RowError[]): Map<number, RowError[]> => {
  const chunks = new Map<number, RowError[]>();
  for (const error of errors) {
    const index = Math.floor((error.row - 1) / IMPORT_CHUNK_ROWS);
    chunks.set(index, [...(chunks.get(index) ?? []), error]);
  }
  return chunks;
};

/** The writes of imports, through the repository (batch-repository.ts). */
export class ImportWrites {
  constructor(
    private readonly calls: StoreCalls,
    private readonly reads: TableReads,
    private readonly tableName: string,
  ) {}

  /** Puts the record on condition that its importid is new: an importid is one import. Answers the stored one when it is not. */
  async create(record: ImportRecord): Promise<ImportRecord | undefined> {
    const cancelled = await this.calls.transactWrite([{ Put: { TableName: this.tableName, Item: importItem(record), ConditionExpression: ITEM_IS_NEW } }]);
    if (!cancelled) return undefined;
    const stored = await this.record(record.importid);
    if (!stored) throw new Error(`Import ${record.importid} was refused as existing, and then not found`);
    return stored;
  }

  async record(importid: string): Promise<ImportRecord | undefined> {
    const item = await this.reads.item(importKey(importid));
    const stored = item && parseImportItem(item);
    return stored?.kind === 'import' ? stored.record : undefined;
  }

  async chunkRecorded(importid: string, index: number): Promise<boolean> {
    return (await this.reads.item(chunkKey(importid, index))) !== undefined;
  }

  /**
   * The chunk's record, new (a chunk is counted once: a second send finds it and writes nothing),
   * its errors' item, and its outcomes added to the running import's counts, all in one write.
   */
  async recordChunk(importid: string, { index, outcomes, errors }: ImportChunk): Promise<void> {
    const counts = countsOf(outcomes);
    const added = COUNTED.filter((name) => counts[name] > 0);
    await this.calls.transactWrite([
      {
        Put: {
          TableName: this.tableName,
          Item: { ...chunkKey(importid, index), importid, outcomes: outcomes.join(',') },
          ConditionExpression: ITEM_IS_NEW,
        },
      },
      {
        Update: {
          TableName: this.tableName,
          Key: importKey(importid),
          UpdateExpression: `ADD ${added.map((name) => `#${name} :${name}`).join(', ')}`,
          ConditionExpression: IS_RUNNING.ConditionExpression,
          ExpressionAttributeNames: { ...IS_RUNNING.ExpressionAttributeNames, ...Object.fromEntries(added.map((name) => [`#${name}`, name])) },
          ExpressionAttributeValues: { ':running': 'running', ...Object.fromEntries(added.map((name) => [`:${name}`, counts[name]])) },
        },
      },
      ...(errors.length > 0 ? [errorsWrite(this.tableName, importid, index, errors)] : []),
    ]);
  }

  /** Ends the running import as failed, its refused rows counted and the first of them kept, in one write. */
  async fail(importid: string, invalid: number, errors: readonly RowError[], finishedAt: string): Promise<void> {
    await this.calls.transactWrite([
      {
        Update: {
          TableName: this.tableName,
          Key: importKey(importid),
          UpdateExpression: 'SET #status = :failed, #finishedAt = :finishedAt, #invalid = :invalid',
          ConditionExpression: IS_RUNNING.ConditionExpression,
          ExpressionAttributeNames: { ...IS_RUNNING.ExpressionAttributeNames, '#finishedAt': 'finishedAt', '#invalid': 'invalid' },
          ExpressionAttributeValues: { ':running': 'running', ':failed': 'failed', ':finishedAt': finishedAt, ':invalid': invalid },
        },
      },
      ...[...byChunk(errors)].map(([index, chunkErrors]) => errorsWrite(this.tableName, importid, index, chunkErrors)),
    ]);
  }

  /** Ends the running import as completed, on condition that every row of it is done. */
  async complete(importid: string, finishedAt: string): Promise<void> {
    await this.calls.transactWrite([
      {
        Update: {
          TableName: this.tableName,
          Key: importKey(importid),
          UpdateExpression: 'SET #status = :completed, #finishedAt = :finishedAt',
          ConditionExpression: `${IS_RUNNING.ConditionExpression} AND #done = #total`,
          ExpressionAttributeNames: { ...IS_RUNNING.ExpressionAttributeNames, '#finishedAt': 'finishedAt', '#done': 'done', '#total': 'total' },
          ExpressionAttributeValues: { ':running': 'running', ':completed': 'completed', ':finishedAt': finishedAt },
        },
      },
    ]);
  }

  /** The first `limit` rows that did not apply: each errors' item holds at least one, so `limit` of them hold enough. */
  async errors(importid: string, limit: number): Promise<RowError[]> {
    const items = await this.reads.range(importPartition(importid), ERRORS_SORT_KEY_PREFIX, `${ERRORS_SORT_KEY_PREFIX}~`, { latestFirst: false, limit });
    return items.flatMap((item) => {
      const stored = parseImportItem(item);
      return stored?.kind === 'import-errors' ? stored.errors : [];
    }).slice(0, limit);
  }
}
