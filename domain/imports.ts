import { cursorOfParts, partsOfCursor } from './cursors';
import type { DomainErrorCode } from './domain-error';

/*
 * Imports (docs/api.md, "Imports"): a feed of rows, each a batch to add or set, or a count of a
 * batch or of a SKU at a place, applied through the same service functions as POST /add_batch, PATCH /batches/{ref} and
 * POST /adjustments, each row's change made once by the import's id and the row's number.
 */

/** The most rows a request may carry inline, in `rows`. */
export const MAX_INLINE_ROWS = 100;
/** Rows are applied and recorded this many at a time: a chunk's outcomes are counted once, when it is recorded. */
export const IMPORT_CHUNK_ROWS = 25;
/** Rows are checked (and counted into the total) this many at a time, before any is applied: a check's rows are counted once. */
export const IMPORT_CHECK_ROWS = 250;
/** The longest message a row's error keeps: a field it names may be as long as its line. */
export const MAX_ROW_MESSAGE_CHARACTERS = 300;
/** The errors an import's record keeps, the first by row number. */
export const MAX_IMPORT_ERRORS = 10;

/** A batch: added, or, when its ref is a batch of the same SKU at the same place, its qty set by a count (reason `counted`) and its eta changed. */
export interface BatchRow {
  readonly kind: 'batch';
  readonly ref: string;
  readonly sku: string;
  readonly qty: number;
  readonly eta: string | null;
  readonly location?: string;
  /** The batch's qty as the feed last read it; 0 for a batch the feed adds. */
  readonly expectedQty?: number;
}

/** A count of a batch's units on hand, applied as of `countedAt` as POST /adjustments applies one. */
export interface CountRow {
  readonly kind: 'count';
  readonly ref: string;
  readonly qty: number;
  readonly countedAt: string;
  readonly expectedQty?: number;
}

/**
 * A count of a SKU's units on hand at a place, as of `countedAt`: spread over the SKU's batches in
 * stock there (domain/place-counts.ts), each counted as a count row counts one.
 */
export interface PlaceCountRow {
  readonly kind: 'place-count';
  readonly sku: string;
  readonly location: string;
  readonly onHand: number;
  readonly countedAt: string;
}

export type ImportRow = BatchRow | CountRow | PlaceCountRow;

/** A row its schema refused: which field, and why. */
export interface InvalidRow {
  readonly kind: 'invalid';
  readonly field: string;
  readonly message: string;
}

/** A row as read from the feed: numbered from 1, in the feed's order. */
export interface ReadRow {
  readonly row: number;
  readonly read: ImportRow | InvalidRow;
}

/**
 * What a row did: `applied` (it changed stock; in a dry run, it would), `unchanged` (stock was
 * already as it says: nothing written), `conflicted` (its `expected_qty` was not the batch's),
 * `stale` (a count older than one already applied to the batch), `invalid` (its fields, or a place
 * it names, refused) or `failed` (the rules refused it: another SKU under its ref, say).
 */
export const ROW_OUTCOMES = ['applied', 'unchanged', 'conflicted', 'stale', 'invalid', 'failed'] as const;
export type RowOutcome = (typeof ROW_OUTCOMES)[number];

/** A row that did not apply: its number, what it did, the error code a request would have had and why. */
export interface RowError {
  readonly row: number;
  readonly outcome: Exclude<RowOutcome, 'applied' | 'unchanged'>;
  readonly code: DomainErrorCode;
  readonly message: string;
}

/** How many rows are done, and how many of them did what. */
export type RowCounts = { readonly done: number } & { readonly [outcome in RowOutcome]: number };
export type ImportCounts = RowCounts & { readonly total: number };

/** The counts of rows' outcomes, each row counted done. */
export const countsOf = (outcomes: readonly RowOutcome[]): RowCounts => {
  const counts = { done: outcomes.length, applied: 0, unchanged: 0, conflicted: 0, stale: 0, invalid: 0, failed: 0 };
  for (const outcome of outcomes) counts[outcome]++;
  return counts;
};

export const noRowsCounted = (total: number): ImportCounts => ({ total, ...countsOf([]) });

/**
 * `awaiting_upload` until its file arrives; `running` while rows are checked, then applied;
 * `completed` once every row is done (some may not have applied); `failed` when its file was no
 * feed, or a row refused before any was applied left it undone.
 */
export const IMPORT_STATUSES = ['awaiting_upload', 'running', 'completed', 'failed'] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];

/** Where an import's rows come from: inline in its request, or a file uploaded in one of the formats. */
export const IMPORT_FEEDS = ['rows', 'jsonl', 'csv'] as const;
export type ImportFeed = (typeof IMPORT_FEEDS)[number];

export interface ImportRequest {
  readonly importid: string;
  readonly feed: ImportFeed;
  /** Answer what each row would do, and write no stock. */
  readonly dryRun: boolean;
  /** Check every row before applying any: one invalid row fails the import with nothing applied. */
  readonly validateFirst: boolean;
  /** What the rows sent inline are, to tell a repeat of the import from another import under its id; a file's is its own, once it arrives. */
  readonly digest?: string;
}

/** Why an import's file is no feed: where, when there is a row to name. */
export interface FileRefusal {
  readonly message: string;
  readonly row?: number;
}

export interface ImportRecord extends ImportRequest {
  readonly status: ImportStatus;
  /** `total` counts the rows checked so far: every row of the feed, once it is checked, before any is applied. */
  readonly counts: ImportCounts;
  /** Rows the check refused: with `validateFirst`, one fails the import before any row is applied. */
  readonly refused: number;
  /** What the uploaded file is (its digest, as the store of files states it), once it has arrived: a file sent again is the same one. */
  readonly file?: string;
  readonly fileRefusal?: FileRefusal;
  readonly startedAt: string;
  readonly finishedAt?: string;
}

/** The import as it stands, with the first rows of it that did not apply (at most MAX_IMPORT_ERRORS), by row number. */
export interface ImportReport extends ImportRecord {
  readonly errors: readonly RowError[];
}

/** A row of an import, as it went: its outcome, and, for one that did not apply, why. */
export interface ImportedRow {
  readonly row: number;
  readonly outcome: RowOutcome;
  readonly code?: RowError['code'];
  readonly message?: string;
}

/** A page of an import's rows, by number; `next`, the row the next page starts at, none once no row done is left. */
export interface ImportedRows {
  readonly rows: readonly ImportedRow[];
  readonly next?: number;
}

/** The most characters a cursor of an import's rows has: a row number, in base64. */
export const MAX_ROWS_CURSOR_CHARACTERS = 64;

/** The cursor a client sends for the page of an import's rows that starts at `row`: opaque, URL-safe. */
export const importRowsCursorOf = (row: number): string => cursorOfParts(['row', row]);

/** The row a cursor of an import's rows names, or undefined for a string that is no such cursor this service made. */
export const rowOfImportRowsCursor = (cursor: string): number | undefined => {
  const parts = partsOfCursor(cursor, MAX_ROWS_CURSOR_CHARACTERS, 2);
  const [kind, row] = parts ?? [];
  return kind === 'row' && typeof row === 'number' && Number.isSafeInteger(row) && row >= 1 ? row : undefined;
};

/**
 * One send's claim on a chunk of an import's rows: the rows are applied, and the chunk recorded,
 * only while it holds, that is until another send claims the chunk (a crash resumed, a repeat sent
 * meanwhile) or the chunk is recorded. So the outcomes recorded are the ones of the send that made
 * the changes, never a send that judged the rows before another applied them.
 */
export interface ImportChunkClaim {
  readonly importid: string;
  readonly firstRow: number;
  /** Which send holds it: new for each claim. */
  readonly claimid: string;
}

/**
 * Another send claimed the chunk of rows this one was applying, or recorded it (ImportChunkClaim):
 * this send stops, with the row it was writing unwritten, and leaves the chunk to its claimant. Not
 * a refusal of a request, so not among domain/errors.ts: a send that meets it answers the import as
 * it stands.
 */
export class ImportChunkTaken extends Error {
  override readonly name = 'ImportChunkTaken';
  constructor(readonly importid: string, readonly firstRow: number) {
    super(`Import ${importid}'s chunk from row ${firstRow} was claimed by another send`);
  }
}

/**
 * What a chunk's rows judge first, read at once for the whole chunk: each batch as its reference
 * describes it (the reference's copy of its sku, place, qty and eta, which every write of the batch
 * keeps in step) with the import row that added it, and which rows' change ids have an
 * adjustment. A ref or a change id the read did not answer for is in neither map: read it alone.
 */
export interface ImportRowsRead {
  /** By ref: the batch described, or null when no batch has that ref. */
  readonly batches: ReadonlyMap<string, DescribedBatch | null>;
  /** By change id: whether an adjustment was made under it. */
  readonly adjusted: ReadonlyMap<string, boolean>;
}

export interface DescribedBatch {
  readonly sku: string;
  readonly location: string;
  readonly qty: number;
  readonly eta: string | null;
  /** When it last changed. */
  readonly changedAt: string;
  /** The change id of the import row that added it, if one did. */
  readonly addedBy?: string;
}

/** A chunk of an import's rows, recorded once: its outcomes counted, its rows' errors kept. */
export interface ImportChunk {
  /** The number of the chunk's first row: a chunk is rows `firstRow` onwards, one outcome each. */
  readonly firstRow: number;
  readonly outcomes: readonly RowOutcome[];
  readonly errors: readonly RowError[];
}

/** A check of an import's rows, recorded once: its rows counted into the total, its refusals counted and, when they fail the import, kept. */
export interface ImportCheck {
  readonly firstRow: number;
  readonly rows: number;
  readonly refused: number;
  readonly errors: readonly RowError[];
}

/** The id a row's change is made under: the same row of the same import is one change, however often it is applied. */
export const rowChangeId = (importid: string, row: number) => `${importid}#${row}`;

/** The same import again: the same feed (the same rows, or a file in the same format), dry or not, validated first or not. */
export const isSameImport = (stored: ImportRequest, request: ImportRequest): boolean =>
  stored.feed === request.feed && stored.digest === request.digest && stored.dryRun === request.dryRun && stored.validateFirst === request.validateFirst;
