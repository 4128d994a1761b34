import {
  type FileRefusal,
  IMPORT_CHECK_ROWS,
  IMPORT_CHUNK_ROWS,
  IMPORT_FEEDS,
  IMPORT_STATUSES,
  type ImportCheck,
  type ImportChunk,
  type ImportChunkClaim,
  type ImportCounts,
  type ImportFeed,
  type ImportRecord,
  type ImportStatus,
  ROW_OUTCOMES,
  type RowError,
  type RowOutcome,
  countsOf,
} from '../../domain/imports';
import type { BatchCount } from '../../domain/place-counts';
import { ITEM_IS_NEW } from './conditions';
import { SK, isAt, isNumber, isText, itemKey } from './fields';
import type { StoreCalls, TransactWriteItem } from './store-calls';
import type { TableReads } from './table-reads';
import { partitionKeyPrefix } from './table';

/*
 * Imports (domain/imports.ts; items.ts, "The table's items"): an import's record, which counts its
 * rows' outcomes, and in its partition one item for each check of rows recorded and one for each
 * chunk of rows recorded (its outcomes), so that each is counted once (kept as long as the import,
 * so that neither is ever run or counted again), one for each chunk's claim (which send applies
 * it: domain/imports.ts, ImportChunkClaim), one for each check's or chunk's rows that did not
 * apply, each named by its first row, and one for each count at a place planned (the counts it
 * makes of its batches: domain/place-count-services.ts), named by its row.
 */

const IMPORT_SORT_KEY = 'IMPORT';
const CHECK_SORT_KEY_PREFIX = 'CHECK#';
const CHUNK_SORT_KEY_PREFIX = 'CHUNK#';
const CLAIM_SORT_KEY_PREFIX = 'CLAIM#';
const ERRORS_SORT_KEY_PREFIX = 'ERRORS#';
const PLACE_COUNT_SORT_KEY_PREFIX = 'PLACECOUNT#';
/** A first row, padded so that the sort keys' order is the rows' order. */
const rowPlace = (firstRow: number) => String(firstRow).padStart(10, '0');

/** The import's counts, one attribute each, so that a chunk adds its outcomes with ADD. */
const COUNTED = ['done', ...ROW_OUTCOMES] as const;

const importPartition = (importid: string) => `${partitionKeyPrefix.import}${importid}`;
export const importKey = (importid: string) => itemKey(importPartition(importid), IMPORT_SORT_KEY);
export const importCheckKey = (importid: string, firstRow: number) => itemKey(importPartition(importid), `${CHECK_SORT_KEY_PREFIX}${rowPlace(firstRow)}`);
export const importChunkKey = (importid: string, firstRow: number) => itemKey(importPartition(importid), `${CHUNK_SORT_KEY_PREFIX}${rowPlace(firstRow)}`);
const importClaimKey = (importid: string, firstRow: number) => itemKey(importPartition(importid), `${CLAIM_SORT_KEY_PREFIX}${rowPlace(firstRow)}`);
const errorsKey = (importid: string, firstRow: number) => itemKey(importPartition(importid), `${ERRORS_SORT_KEY_PREFIX}${rowPlace(firstRow)}`);
export const placeCountKey = (importid: string, row: number) => itemKey(importPartition(importid), `${PLACE_COUNT_SORT_KEY_PREFIX}${rowPlace(row)}`);

/** The chunk's claim is this send's, and the chunk not yet recorded. */
const CLAIM_HOLDS = {
  ConditionExpression: '#claimid = :claimid AND attribute_not_exists(#recorded)',
  ExpressionAttributeNames: { '#claimid': 'claimid', '#recorded': 'recorded' },
};

/** A running import: a chunk counts into it, and it ends once. */
const IS_RUNNING = { ConditionExpression: '#status = :running', ExpressionAttributeNames: { '#status': 'status' } };

const importItem = ({ importid, feed, dryRun, validateFirst, digest, status, counts, refused, startedAt }: ImportRecord) => ({
  ...importKey(importid),
  type: 'Import',
  importid,
  feed,
  dryRun,
  validateFirst,
  ...(digest === undefined ? {} : { digest }),
  status,
  ...counts,
  refused,
  startedAt,
});

const isFileRefusal = (value: unknown): value is FileRefusal => {
  const { message, row } = (value ?? {}) as Record<string, unknown>;
  return isText(message) && (row === undefined || isNumber(row));
};

export type StoredImportItem =
  | { readonly kind: 'import'; readonly record: ImportRecord }
  | { readonly kind: 'import-check'; readonly importid: string; readonly firstRow: number; readonly rows: number }
  | { readonly kind: 'import-chunk'; readonly importid: string; readonly firstRow: number; readonly outcomes: readonly RowOutcome[] }
  | { readonly kind: 'import-claim'; readonly importid: string; readonly firstRow: number; readonly claimid: string; readonly recorded: boolean }
  | { readonly kind: 'import-errors'; readonly importid: string; readonly firstRow: number; readonly errors: readonly RowError[] }
  | { readonly kind: 'import-place-count'; readonly importid: string; readonly row: number; readonly counts: readonly BatchCount[] };

/** The record of an import as it stands. One stored before imports of files has no `feed` (its rows came inline) and no `refused` (none was kept). */
const parseRecord = (importid: string, item: Record<string, unknown>): StoredImportItem | undefined => {
  const { dryRun, validateFirst, digest, status, total, file, fileRefusal, startedAt, finishedAt } = item;
  const feed = item.feed ?? 'rows';
  const refused = item.refused ?? 0;
  if (!IMPORT_FEEDS.includes(feed as ImportFeed) || typeof dryRun !== 'boolean' || typeof validateFirst !== 'boolean' || !IMPORT_STATUSES.includes(status as ImportStatus)) return undefined;
  if (!(digest === undefined || isText(digest)) || !(file === undefined || isText(file)) || !(fileRefusal === undefined || isFileRefusal(fileRefusal))) return undefined;
  if (!isNumber(total) || !isNumber(refused) || !isText(startedAt) || !(finishedAt === undefined || isText(finishedAt)) || !COUNTED.every((name) => isNumber(item[name]))) return undefined;
  const counts = Object.fromEntries([['total', total], ...COUNTED.map((name) => [name, item[name]])]) as ImportCounts;
  return {
    kind: 'import',
    record: {
      importid,
      feed: feed as ImportFeed,
      dryRun,
      validateFirst,
      ...(digest === undefined ? {} : { digest }),
      status: status as ImportStatus,
      counts,
      refused,
      ...(file === undefined ? {} : { file }),
      ...(fileRefusal === undefined ? {} : { fileRefusal: { message: fileRefusal.message, ...(fileRefusal.row === undefined ? {} : { row: fileRefusal.row }) } }),
      startedAt,
      ...(finishedAt === undefined ? {} : { finishedAt }),
    },
  };
};

/** The first row its sort key names after `prefix`. */
const firstRowOf = (sortKey: unknown, prefix: string): number | undefined => {
  if (!isText(sortKey) || !sortKey.startsWith(prefix)) return undefined;
  const place = sortKey.slice(prefix.length);
  return /^\d{10}$/.test(place) ? Number(place) : undefined;
};

/** An import's record, a check's or a chunk's record, or their errors, read back through its key. */
export const parseImportItem = (item: Record<string, unknown>): StoredImportItem | undefined => {
  const { importid, outcomes, errors, rows } = item;
  if (!isText(importid)) return undefined;
  if (isAt(item, importKey(importid))) return parseRecord(importid, item);
  const check = firstRowOf(item[SK], CHECK_SORT_KEY_PREFIX);
  if (check !== undefined && isAt(item, importCheckKey(importid, check)) && isNumber(rows)) return { kind: 'import-check', importid, firstRow: check, rows };
  const chunk = firstRowOf(item[SK], CHUNK_SORT_KEY_PREFIX);
  if (chunk !== undefined && isAt(item, importChunkKey(importid, chunk)) && isText(outcomes)) {
    const read = outcomes.split(',');
    if (read.every((outcome) => ROW_OUTCOMES.includes(outcome as RowOutcome))) return { kind: 'import-chunk', importid, firstRow: chunk, outcomes: read as RowOutcome[] };
  }
  const claimed = firstRowOf(item[SK], CLAIM_SORT_KEY_PREFIX);
  if (claimed !== undefined && isAt(item, importClaimKey(importid, claimed)) && isText(item.claimid)) return { kind: 'import-claim', importid, firstRow: claimed, claimid: item.claimid, recorded: item.recorded === true };
  const errorsOf = firstRowOf(item[SK], ERRORS_SORT_KEY_PREFIX);
  if (errorsOf !== undefined && isAt(item, errorsKey(importid, errorsOf)) && Array.isArray(errors) && errors.every(isRowError)) return { kind: 'import-errors', importid, firstRow: errorsOf, errors };
  const counted = firstRowOf(item[SK], PLACE_COUNT_SORT_KEY_PREFIX);
  const { counts } = item;
  if (counted !== undefined && isAt(item, placeCountKey(importid, counted)) && Array.isArray(counts) && counts.every(isBatchCount)) return { kind: 'import-place-count', importid, row: counted, counts };
  return undefined;
};

const isBatchCount = (value: unknown): value is BatchCount => {
  const { ref, qty } = (value ?? {}) as Record<string, unknown>;
  return isText(ref) && isNumber(qty);
};

const isRowError = (value: unknown): value is RowError => {
  const { row, outcome, code, message } = (value ?? {}) as Record<string, unknown>;
  return isNumber(row) && ROW_OUTCOMES.includes(outcome as RowOutcome) && isText(code) && isText(message);
};

/** The errors' item of a check or a chunk: which of its rows did not apply, and why. */
const errorsWrite = (tableName: string, importid: string, firstRow: number, errors: readonly RowError[]): TransactWriteItem[] =>
  errors.length === 0 ? [] : [{ Put: { TableName: tableName, Item: { ...errorsKey(importid, firstRow), importid, errors: errors.map(({ row, outcome, code, message }) => ({ row, outcome, code, message })) } } }];

/** The record's ADD of `added` to its counts, on condition that the import runs: a check or a chunk counts into a running import only. */
const countsAdded = (tableName: string, importid: string, added: Readonly<Record<string, number>>): TransactWriteItem => {
  const names = Object.keys(added).filter((name) => (added[name] as number) > 0);
  return {
    Update: {
      TableName: tableName,
      Key: importKey(importid),
      UpdateExpression: names.length > 0 ? `ADD ${names.map((name) => `#${name} :${name}`).join(', ')}` : 'SET #status = :running',
      ConditionExpression: IS_RUNNING.ConditionExpression,
      ExpressionAttributeNames: { ...IS_RUNNING.ExpressionAttributeNames, ...Object.fromEntries(names.map((name) => [`#${name}`, name])) },
      ExpressionAttributeValues: { ':running': 'running', ...Object.fromEntries(names.map((name) => [`:${name}`, added[name]])) },
    },
  };
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

  /** Runs the import awaiting its file, on condition that it awaits one: its file is set once. Answers it as it stands after. */
  async begin(importid: string, file: string, startedAt: string): Promise<ImportRecord> {
    await this.calls.transactWrite([
      {
        Update: {
          TableName: this.tableName,
          Key: importKey(importid),
          UpdateExpression: 'SET #status = :running, #file = :file, #startedAt = :startedAt',
          ConditionExpression: '#status = :awaiting',
          ExpressionAttributeNames: { '#status': 'status', '#file': 'file', '#startedAt': 'startedAt' },
          ExpressionAttributeValues: { ':running': 'running', ':awaiting': 'awaiting_upload', ':file': file, ':startedAt': startedAt },
        },
      },
    ]);
    const stored = await this.record(importid);
    if (!stored) throw new Error(`Import ${importid} was begun, and then not found`);
    return stored;
  }

  async checkRecorded(importid: string, firstRow: number): Promise<boolean> {
    return (await this.reads.item(importCheckKey(importid, firstRow))) !== undefined;
  }

  /** The check's record, new (a check is counted once), its rows added to the total and its refusals to `refused`, and its errors' item, in one write. */
  async recordCheck(importid: string, { firstRow, rows, refused, errors }: ImportCheck): Promise<void> {
    await this.calls.transactWrite([
      { Put: { TableName: this.tableName, Item: { ...importCheckKey(importid, firstRow), importid, rows }, ConditionExpression: ITEM_IS_NEW } },
      countsAdded(this.tableName, importid, { total: rows, refused }),
      ...errorsWrite(this.tableName, importid, firstRow, errors),
    ]);
  }

  /**
   * A new claim on the chunk, in place of any before it, on condition that the chunk is not
   * recorded: its claim is ended in the write that records it. Nothing once the chunk is recorded.
   */
  async claimChunk(importid: string, firstRow: number, claimid: string): Promise<ImportChunkClaim | undefined> {
    if ((await this.reads.item(importChunkKey(importid, firstRow))) !== undefined) return undefined;
    const cancelled = await this.calls.transactWrite([
      {
        Update: {
          TableName: this.tableName,
          Key: importClaimKey(importid, firstRow),
          UpdateExpression: 'SET #importid = :importid, #claimid = :claimid',
          ConditionExpression: 'attribute_not_exists(#recorded)',
          ExpressionAttributeNames: { '#importid': 'importid', '#claimid': 'claimid', '#recorded': 'recorded' },
          ExpressionAttributeValues: { ':importid': importid, ':claimid': claimid },
        },
      },
    ]);
    return cancelled ? undefined : { importid, firstRow, claimid };
  }

  /** Whether the claim holds: no other send claimed the chunk since, and it is not recorded (strongly consistent). */
  async claimStillHolds(claim: ImportChunkClaim): Promise<boolean> {
    const item = await this.reads.item(importClaimKey(claim.importid, claim.firstRow));
    const stored = item && parseImportItem(item);
    return stored?.kind === 'import-claim' && stored.claimid === claim.claimid && !stored.recorded;
  }

  /** A write's condition that the claim holds: no other send claimed the chunk since, and it is not recorded. */
  claimHolds({ importid, firstRow, claimid }: ImportChunkClaim): TransactWriteItem {
    return {
      ConditionCheck: {
        TableName: this.tableName,
        Key: importClaimKey(importid, firstRow),
        ...CLAIM_HOLDS,
        ExpressionAttributeValues: { ':claimid': claimid },
      },
    };
  }

  /**
   * The chunk's record, new (a chunk is counted once: a second send finds it and writes nothing),
   * its claim ended, on condition that it holds (a send whose claim was taken records nothing), its
   * errors' item, and its outcomes added to the running import's counts, all in one write. Whether
   * it was written: any of its conditions failed (recorded before, claimed since, the import no
   * longer running), nothing was.
   */
  async recordChunk({ importid, firstRow, claimid }: ImportChunkClaim, { outcomes, errors }: ImportChunk): Promise<boolean> {
    const counts = countsOf(outcomes);
    const cancelled = await this.calls.transactWrite([
      { Put: { TableName: this.tableName, Item: { ...importChunkKey(importid, firstRow), importid, outcomes: outcomes.join(',') }, ConditionExpression: ITEM_IS_NEW } },
      {
        Update: {
          TableName: this.tableName,
          Key: importClaimKey(importid, firstRow),
          UpdateExpression: 'SET #recorded = :recorded',
          ...CLAIM_HOLDS,
          ExpressionAttributeValues: { ':claimid': claimid, ':recorded': true },
        },
      },
      countsAdded(this.tableName, importid, Object.fromEntries(COUNTED.map((name) => [name, counts[name]]))),
      ...errorsWrite(this.tableName, importid, firstRow, errors),
    ]);
    if (cancelled) this.calls.raceLost(cancelled);
    return cancelled === undefined;
  }

  async placeCount(importid: string, row: number): Promise<readonly BatchCount[] | undefined> {
    const item = await this.reads.item(placeCountKey(importid, row));
    const stored = item && parseImportItem(item);
    return stored?.kind === 'import-place-count' ? stored.counts : undefined;
  }

  /**
   * The plan of the row's count at a place, on condition that the row has none (a row's counts are
   * planned once: a second send makes the first one's), with `conditions` (a chunk's claim). Whether
   * it was saved.
   */
  async savePlaceCount(importid: string, row: number, counts: readonly BatchCount[], conditions: readonly TransactWriteItem[]): Promise<boolean> {
    const Item = { ...placeCountKey(importid, row), importid, counts: counts.map(({ ref, qty }) => ({ ref, qty })) };
    return (await this.calls.transactWrite([{ Put: { TableName: this.tableName, Item, ConditionExpression: ITEM_IS_NEW } }, ...conditions])) === undefined;
  }

  /** Ends the running import as failed: its file refused, or else its refused rows counted as invalid (their errors kept by their checks). */
  async fail(importid: string, finishedAt: string, refusal?: FileRefusal): Promise<void> {
    await this.calls.transactWrite([
      {
        Update: {
          TableName: this.tableName,
          Key: importKey(importid),
          UpdateExpression: `SET #status = :failed, #finishedAt = :finishedAt, ${refusal ? '#fileRefusal = :fileRefusal' : '#invalid = #refused'}`,
          ConditionExpression: IS_RUNNING.ConditionExpression,
          ExpressionAttributeNames: { ...IS_RUNNING.ExpressionAttributeNames, '#finishedAt': 'finishedAt', ...(refusal ? { '#fileRefusal': 'fileRefusal' } : { '#invalid': 'invalid', '#refused': 'refused' }) },
          ExpressionAttributeValues: { ':running': 'running', ':failed': 'failed', ':finishedAt': finishedAt, ...(refusal ? { ':fileRefusal': refusal } : {}) },
        },
      },
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

  /**
   * The first `limit` rows from `fromRow` that did not apply. An errors' item holds a check's rows
   * (250) or a chunk's (25), and at least one error: the items from a check's length before
   * `fromRow` hold any that holds it, and `limit` items more hold enough.
   */
  async errors(importid: string, limit: number, fromRow = 1): Promise<RowError[]> {
    const first = errorsKey(importid, Math.max(1, fromRow - IMPORT_CHECK_ROWS + 1))[SK] as string;
    const items = await this.reads.range(importPartition(importid), first, `${ERRORS_SORT_KEY_PREFIX}~`, { latestFirst: false, limit: limit + IMPORT_CHECK_ROWS / IMPORT_CHUNK_ROWS });
    return items.flatMap((item) => {
      const stored = parseImportItem(item);
      return stored?.kind === 'import-errors' ? stored.errors : [];
    }).filter(({ row }) => row >= fromRow).slice(0, limit);
  }

  /** The recorded chunks from the one that holds `fromRow` (its first row at most a chunk's length before), at most `limit`, with their errors' items. */
  async chunks(importid: string, fromRow: number, limit: number): Promise<ImportChunk[]> {
    const partition = importPartition(importid);
    const first = importChunkKey(importid, Math.max(1, fromRow - IMPORT_CHUNK_ROWS + 1))[SK] as string;
    const recorded = (await this.reads.range(partition, first, `${CHUNK_SORT_KEY_PREFIX}~`, { latestFirst: false, limit })).flatMap((item) => {
      const stored = parseImportItem(item);
      return stored?.kind === 'import-chunk' ? [stored] : [];
    });
    const [earliest, latest] = [recorded[0], recorded.at(-1)];
    if (!earliest || !latest) return [];
    const errorItems = await this.reads.range(partition, errorsKey(importid, earliest.firstRow)[SK] as string, errorsKey(importid, latest.firstRow)[SK] as string, { latestFirst: false, limit: recorded.length });
    const errorsByFirstRow = new Map(errorItems.flatMap((item) => {
      const stored = parseImportItem(item);
      return stored?.kind === 'import-errors' ? [[stored.firstRow, stored.errors] as const] : [];
    }));
    return recorded.map(({ firstRow, outcomes }) => ({ firstRow, outcomes, errors: errorsByFirstRow.get(firstRow) ?? [] }));
  }
}
