import { describe, expect, it } from 'vitest';
import type { ReadRow } from '../../domain/imports';
import { FeedRefused, MAX_LINE_BYTES, feedRows } from '../../functions/imports/feed';
import type { FeedFormat } from '../../functions/imports/rows';

/*
 * Feed files (docs/api.md, "Feed files") read as they stream: JSON Lines and CSV (RFC 4180), each
 * row by its number, and the hostile files a warehouse system sends: quotes, byte order marks, CRLF,
 * a line of a megabyte, missing and extra columns, another encoding, a file cut short.
 */

/** The file's bytes in chunks of `size`, as a stream hands them over: a row, a character or a line end may straddle two. */
async function* chunked(file: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < file.length; at += size) yield file.subarray(at, at + size);
}

const bytes = (text: string) => new TextEncoder().encode(text);

const rowsOf = async (file: Uint8Array | string, format: FeedFormat, size = 7): Promise<ReadRow[]> => {
  const rows: ReadRow[] = [];
  for await (const row of feedRows(chunked(typeof file === 'string' ? bytes(file) : file, size), format)) rows.push(row);
  return rows;
};

const refusalOf = (file: Uint8Array | string, format: FeedFormat) =>
  rowsOf(file, format).then(
    () => undefined,
    (error: unknown) => (error instanceof FeedRefused ? { message: error.message, row: error.row } : Promise.reject(error)),
  );

const batch = (row: number, ref: string, more: Record<string, unknown> = {}): ReadRow => ({ row, read: { kind: 'batch', ref, sku: 'LAMP', qty: 3, eta: null, ...more } as ReadRow['read'] });
const invalid = (row: number, message: string | RegExp, field = 'the row'): ReadRow => ({ row, read: { kind: 'invalid', field, message: typeof message === 'string' ? message : expect.stringMatching(message) } });

describe('a JSON Lines feed', () => {
  it('is a row a line, numbered from 1, whatever its line ends and however its bytes are chunked', async () => {
    const file = '{"ref":"b1","sku":"LAMP","qty":3,"eta":null}\r\n{"ref":"b2","qty":4,"counted_at":"2026-11-25T08:00:00Z"}\n';
    const expected = [batch(1, 'b1'), { row: 2, read: { kind: 'count', ref: 'b2', qty: 4, countedAt: '2026-11-25T08:00:00Z' } }];
    for (const size of [1, 2, 3, 5, 64, 1024]) expect(await rowsOf(file, 'jsonl', size)).toEqual(expected);
  });

  it('reads past a byte order mark, and a last line with no line end', async () => {
    expect(await rowsOf('\uFEFF{"ref":"b1","sku":"LAMP","qty":3,"eta":null}', 'jsonl')).toEqual([batch(1, 'b1')]);
  });

  it('names each line that is no object, is not JSON, is empty or breaks a row rule, and reads on', async () => {
    const file = '[1]\n{"ref":\n\n{"ref":"b1","sku":"LAMP","qty":0,"eta":null}\n{"ref":"b2","sku":"LAMP","qty":3,"eta":null}\n';
    expect(await rowsOf(file, 'jsonl')).toEqual([
      invalid(1, 'must be a JSON object'),
      invalid(2, 'is not valid JSON'),
      invalid(3, 'is not valid JSON'),
      invalid(4, /^must be an integer/, 'qty'),
      batch(5, 'b2'),
    ]);
  });

  it('names a line of a megabyte without holding it, and reads on', async () => {
    const file = `{"ref":"b1","sku":"${'x'.repeat(1024 * 1024)}","qty":3,"eta":null}\n{"ref":"b2","sku":"LAMP","qty":3,"eta":null}\n`;
    expect(await rowsOf(file, 'jsonl', 4096)).toEqual([invalid(1, `is longer than ${MAX_LINE_BYTES} bytes`), batch(2, 'b2')]);
  });

  it('names a line in another encoding', async () => {
    const latin1 = Uint8Array.from([...bytes('{"ref":"caf'), 0xe9, ...bytes('","sku":"LAMP","qty":3,"eta":null}\n{"ref":"b2","sku":"LAMP","qty":3,"eta":null}\n')]);
    expect(await rowsOf(latin1, 'jsonl')).toEqual([invalid(1, 'is not UTF-8: send the file in UTF-8'), batch(2, 'b2')]);
  });

  it('refuses an empty file', async () => {
    expect(await refusalOf('', 'jsonl')).toEqual({ message: 'has no rows', row: undefined });
  });
});

describe('a CSV feed', () => {
  it('has a header of columns and a row a record, its fields quoted or not, empty ones absent and an empty eta in stock', async () => {
    const file = 'ref,sku,qty,eta,location\r\nb1,LAMP,3,,\r\n"b,2","LAMP ""XL""",3,2027-01-01,lyon\r\n';
    expect(await rowsOf(file, 'csv')).toEqual([batch(1, 'b1'), batch(2, 'b,2', { sku: 'LAMP "XL"', eta: '2027-01-01', location: 'lyon' })]);
  });

  it('keeps a line break inside quotes, and reads past a byte order mark', async () => {
    const file = '\uFEFFref,sku,qty,eta\n"b\n1",LAMP,3,\n';
    // One row, not two: the line break is the ref's, which refuses it.
    expect(await rowsOf(file, 'csv', 1)).toEqual([invalid(1, 'must not contain invisible or control characters', 'ref')]);
    expect(await rowsOf('\uFEFFref,sku,qty,eta\nb1,LAMP,3,\n', 'csv')).toEqual([batch(1, 'b1')]);
  });

  it('reads a file of batches and counts, each row by its kind, the columns of the other kind left empty', async () => {
    const file = 'ref,sku,qty,eta,counted_at\nb1,LAMP,3,,\nb1,,2,,2026-11-25T08:00:00Z\n';
    expect(await rowsOf(file, 'csv')).toEqual([batch(1, 'b1'), { row: 2, read: { kind: 'count', ref: 'b1', qty: 2, countedAt: '2026-11-25T08:00:00Z' } }]);
  });

  it('is a count where a row has counted_at', async () => {
    expect(await rowsOf('ref,qty,counted_at,expected_qty\nb1,4,2026-11-25T08:00:00Z,5\n', 'csv')).toEqual([
      { row: 1, read: { kind: 'count', ref: 'b1', qty: 4, countedAt: '2026-11-25T08:00:00Z', expectedQty: 5 } },
    ]);
  });

  it('names a row with missing or extra fields, a stray quote, a value its column refuses, and reads on', async () => {
    const file = 'ref,sku,qty,eta\nb1,LAMP,3\nb2,LAMP,3,,extra\nb"3,LAMP,3,\n"b4"x,LAMP,3,\nb5,LAMP,three,\nb6,LAMP,3,\n';
    expect(await rowsOf(file, 'csv')).toEqual([
      invalid(1, 'has 3 fields, and the header 4'),
      invalid(2, 'has 5 fields, and the header 4'),
      invalid(3, /^has a quote inside a field/),
      invalid(4, /^has text after a closing quote/),
      invalid(5, /^must be an integer/, 'qty'),
      batch(6, 'b6'),
    ]);
  });

  it('names a row missing a column the header lacks, as its row rule says', async () => {
    expect(await rowsOf('ref,qty,eta\nb1,3,\n', 'csv')).toEqual([invalid(1, /^is required/, 'sku')]);
  });

  it('names a row of a megabyte, and a row in another encoding', async () => {
    const long = `ref,sku,qty,eta\nb1,${'x'.repeat(1024 * 1024)},3,\nb2,LAMP,3,\n`;
    expect(await rowsOf(long, 'csv', 4096)).toEqual([invalid(1, `is longer than ${MAX_LINE_BYTES} bytes`), batch(2, 'b2')]);
    const latin1 = Uint8Array.from([...bytes('ref,sku,qty,eta\ncaf'), 0xe9, ...bytes(',LAMP,3,\nb2,LAMP,3,\n')]);
    expect(await rowsOf(latin1, 'csv')).toEqual([invalid(1, 'is not UTF-8: send the file in UTF-8'), batch(2, 'b2')]);
  });

  it('refuses a header that names no row field, or one twice, an empty file, a header alone, and a quote never closed', async () => {
    expect(await refusalOf('ref,sku,qty,eta,colour\nb1,LAMP,3,,red\n', 'csv')).toMatchObject({ message: expect.stringContaining('"colour", which is not a field of a row') });
    expect(await refusalOf('ref,ref,qty\n', 'csv')).toMatchObject({ message: 'has a header that names ref twice' });
    expect(await refusalOf('', 'csv')).toMatchObject({ message: 'is empty: a CSV feed starts with a header row' });
    expect(await refusalOf('ref,sku,qty,eta\r\n', 'csv')).toMatchObject({ message: 'has a header and no rows' });
    expect(await refusalOf('ref,sku,qty,eta\nb1,"LAMP,3,\n', 'csv')).toEqual({ message: 'ends inside a quoted field: a closing quote is missing', row: 1 });
  });
});
