import type { ReadRow } from '../../domain/imports';
import { type FeedFormat, type FeedRecord, readFeedRecord } from './rows';

/*
 * A feed file read row by row, as it streams, for an import (docs/api.md, "Imports"): JSON Lines (one
 * object a line) or CSV (RFC 4180, with a header row). Neither the file nor a row is ever held
 * whole past its bound, so memory stays flat however long the file. A row the file breaks (not
 * UTF-8, not an object, a wrong number of fields, too long) is an invalid row named by its number;
 * what leaves no row to name (an empty file, a header that is not one) refuses the file.
 */

/** The longest line of a feed, in bytes: a row is a few hundred. */
export const MAX_LINE_BYTES = 64 * 1024;
/** The longest feed, in bytes: ten million rows of about a hundred bytes. */
export const MAX_FEED_BYTES = 1024 * 1024 * 1024;

/** The file is not a feed: nothing of it is applied. `row` names where, when there is a row to name. */
export class FeedRefused extends Error {
  override readonly name = 'FeedRefused';
  constructor(
    message: string,
    readonly row?: number,
  ) {
    super(message);
  }
}

/** A physical line of the file, decoded: its text, or why it has none. */
type Line = { readonly text: string } | { readonly refused: string };

const NEWLINE = 0x0a;
const UTF8_BOM = '\uFEFF';

/**
 * The file's lines, each decoded on its own (UTF-8 never has a newline byte inside a character, so a
 * line of other bytes is the only one refused), without their line ends (LF or CRLF); a last line
 * that is empty (the file ended with a newline) is none.
 */
async function* linesOf(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Line> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let overlong = false;
  let fileBytes = 0;
  let first = true;
  const line = (): Line => {
    const bytes = Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    if (overlong) {
      overlong = false;
      return { refused: `is longer than ${MAX_LINE_BYTES} bytes` };
    }
    try {
      let text = decoder.decode(bytes);
      if (first && text.startsWith(UTF8_BOM)) text = text.slice(UTF8_BOM.length);
      return { text: text.endsWith('\r') ? text.slice(0, -1) : text };
    } catch {
      return { refused: 'is not UTF-8: send the file in UTF-8' };
    } finally {
      first = false;
    }
  };
  const keep = (bytes: Uint8Array) => {
    if (overlong) return;
    if (pendingBytes + bytes.length > MAX_LINE_BYTES) {
      overlong = true;
      pending = [];
      pendingBytes = 0;
      return;
    }
    pending.push(bytes);
    pendingBytes += bytes.length;
  };
  for await (const chunk of chunks) {
    fileBytes += chunk.length;
    if (fileBytes > MAX_FEED_BYTES) throw new FeedRefused(`is longer than ${MAX_FEED_BYTES} bytes: send it as several feeds`);
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      keep(chunk.subarray(start, end));
      yield line();
      start = end + 1;
    }
    if (start < chunk.length) keep(chunk.subarray(start));
  }
  if (pendingBytes > 0 || overlong) yield line();
}

/** JSON Lines: each line one row, a JSON value (a row's schema takes an object only). */
async function* jsonLinesRecords(lines: AsyncIterable<Line>): AsyncGenerator<FeedRecord> {
  let row = 0;
  for await (const line of lines) {
    row++;
    if ('refused' in line) yield { row, refused: line.refused };
    else yield recordOfJson(line.text, row);
  }
  if (row === 0) throw new FeedRefused('has no rows');
}

const recordOfJson = (text: string, row: number): FeedRecord => {
  try {
    return { row, fields: JSON.parse(text) };
  } catch {
    return { row, refused: 'is not valid JSON' };
  }
};

/** The fields a CSV header may name: a row's. */
const CSV_COLUMNS = ['ref', 'sku', 'qty', 'eta', 'location', 'expected_qty', 'counted_at', 'on_hand'] as const;

/**
 * A record's fields by RFC 4180: separated by commas, each either plain or in double quotes (a
 * quote inside doubled, and commas and line breaks inside kept). Answers the fields, or, for a
 * record still in quotes at the line's end, none: it goes on at the next line.
 */
class CsvRecord {
  private fields: string[] = [];
  private field = '';
  private quoted = false;
  /** Inside quotes: a line break belongs to the field. */
  private inQuotes = false;
  private characters = 0;
  refused: string | undefined;

  /** Takes the line; answers the record's fields when the line ends it. */
  take(text: string): string[] | undefined {
    this.characters += text.length;
    if (this.characters > MAX_LINE_BYTES) this.refused ??= `is longer than ${MAX_LINE_BYTES} characters`;
    for (let at = 0; at < text.length; at++) {
      const character = text[at] as string;
      if (this.inQuotes) {
        if (character !== '"') this.keep(character);
        else if (text[at + 1] === '"') {
          this.keep('"');
          at++;
        } else this.inQuotes = false;
      } else if (character === ',') {
        this.fields.push(this.field);
        this.field = '';
        this.quoted = false;
      } else if (character === '"' && this.field === '' && !this.quoted) {
        this.quoted = true;
        this.inQuotes = true;
      } else if (this.quoted) {
        this.refused ??= 'has text after a closing quote: a quote inside a field is doubled ("")';
      } else if (character === '"') {
        this.refused ??= 'has a quote inside a field that does not start with one: quote the whole field, and double the quote';
      } else this.keep(character);
    }
    if (this.inQuotes) {
      this.keep('\n');
      return undefined;
    }
    const fields = [...this.fields, this.field];
    this.fields = [];
    this.field = '';
    this.quoted = false;
    this.characters = 0;
    return fields;
  }

  /** A refused record's text is not kept: a quote never closed would otherwise hold the rest of the file. */
  private keep(text: string): void {
    if (this.refused === undefined) this.field += text;
  }

  /** The file ended inside quotes. */
  get open(): boolean {
    return this.inQuotes;
  }

  /** Forgets a refusal, for the next record. */
  forget(): void {
    this.refused = undefined;
  }
}

/** The header's columns, each a row's field and named once; anything else refuses the file. */
const columnsOf = (fields: readonly string[]): string[] => {
  const columns = fields.map((field) => field.trim());
  const unknown = columns.find((column) => !(CSV_COLUMNS as readonly string[]).includes(column));
  if (unknown !== undefined) throw new FeedRefused(`has a header that names ${JSON.stringify(unknown)}, which is not a field of a row: the header names some of ${CSV_COLUMNS.join(', ')}`);
  const twice = columns.find((column, index) => columns.indexOf(column) !== index);
  if (twice !== undefined) throw new FeedRefused(`has a header that names ${twice} twice`);
  return columns;
};

/** CSV: a header row of columns, then one row a record, its values as text by their columns. */
async function* csvRecords(lines: AsyncIterable<Line>): AsyncGenerator<FeedRecord> {
  const record = new CsvRecord();
  let columns: string[] | undefined;
  let row = 0;
  for await (const line of lines) {
    if ('refused' in line) {
      if (!columns) throw new FeedRefused(`has a header that ${line.refused}`);
      if (record.open) throw new FeedRefused(`has a line that ${line.refused}, inside a quoted field`, row + 1);
      yield { row: ++row, refused: line.refused };
      continue;
    }
    const fields = record.take(line.text);
    if (!fields) continue;
    const refused = record.refused;
    record.forget();
    if (!columns) {
      if (refused) throw new FeedRefused(`has a header that ${refused}`);
      columns = columnsOf(fields);
      continue;
    }
    row++;
    if (refused) yield { row, refused };
    else if (fields.length !== columns.length) yield { row, refused: `has ${fields.length} fields, and the header ${columns.length}` };
    else yield { row, fields: Object.fromEntries(columns.map((column, index) => [column, fields[index] as string])) };
  }
  if (record.open) throw new FeedRefused('ends inside a quoted field: a closing quote is missing', row + 1);
  if (!columns) throw new FeedRefused('is empty: a CSV feed starts with a header row');
  if (row === 0) throw new FeedRefused('has a header and no rows');
}

/** The feed's records, in order, as the file streams, as the engine of imports reads them. Throws FeedRefused when the file is no feed at all. */
export const feedRecords = (chunks: AsyncIterable<Uint8Array>, format: FeedFormat): AsyncGenerator<FeedRecord> =>
  format === 'jsonl' ? jsonLinesRecords(linesOf(chunks)) : csvRecords(linesOf(chunks));

/** The feed's rows, in order, as the file streams. Throws FeedRefused when the file is no feed at all. */
export async function* feedRows(chunks: AsyncIterable<Uint8Array>, format: FeedFormat): AsyncGenerator<ReadRow> {
  for await (const record of feedRecords(chunks, format)) yield readFeedRecord(record, format);
}
