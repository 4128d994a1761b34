import { describe, expect, it } from 'vitest';
import { type Import, UsageError, allApplied, parseOptions, progressLine, summary } from '../../tools/import/command';

/*
 * `npm run import` (docs/api.md, "Imports"): what it takes, the progress it shows and what it
 * says at the end, apart from the requests it sends (test/integration/import-files.test.ts sends them).
 */

const running = (total: number, done: number): Import => ({
  importid: 'feed-1',
  format: 'csv',
  status: 'running',
  dry_run: false,
  validate_first: true,
  counts: { total, done, applied: done, unchanged: 0, conflicted: 0, stale: 0, invalid: 0, failed: 0 },
  started_at: '2026-12-03T10:00:00.000Z',
  errors: [],
});

describe('the import command', () => {
  it('takes one file, its format from the extension, and the service at npm start by default', () => {
    expect(parseOptions(['stock.csv'])).toEqual({ file: 'stock.csv', url: 'http://localhost:5005', dryRun: false, format: 'csv', validateFirst: true });
    expect(parseOptions(['feed.jsonl', '--url', 'https://x.example', '--dry-run', '--importid', 'i1', '--no-validate-first'])).toEqual({
      file: 'feed.jsonl',
      url: 'https://x.example',
      dryRun: true,
      format: 'jsonl',
      importid: 'i1',
      validateFirst: false,
    });
    expect(parseOptions(['feed.jsonl', '--results', 'out.jsonl'])).toMatchObject({ results: 'out.jsonl' });
    expect(parseOptions(['--help'])).toBe('help');
  });

  it('refuses an unknown option, no file or two, and a file whose format it cannot tell', () => {
    expect(() => parseOptions(['stock.csv', '--colour'])).toThrow(UsageError);
    expect(() => parseOptions([])).toThrow(/Name the feed file/);
    expect(() => parseOptions(['a.csv', 'b.csv'])).toThrow(/One file at a time/);
    expect(() => parseOptions(['stock.txt'])).toThrow(/--format jsonl or --format csv/);
    expect(() => parseOptions(['stock.csv', '--format', 'xml'])).toThrow(/not xml/);
  });

  it('shows the rows done of the total, the rate and the time left', () => {
    expect(progressLine(running(1000, 250), 5)).toBe(`[${'#'.repeat(8)}${'.'.repeat(22)}] 250/1,000 rows  50 rows/s  0:15 left`);
    expect(progressLine(running(300, 0), 1)).toBe('checking rows: 300 so far');
  });

  it('sums up the counts and the rows that did not apply, and says whether every row applied', () => {
    const done: Import = { ...running(2, 2), status: 'completed', counts: { ...running(2, 2).counts, applied: 1, conflicted: 1 }, errors: [{ row: 2, outcome: 'conflicted', code: 'qty_changed', message: 'Batch b2 has 20' }] };
    expect(summary(done)).toEqual(['import feed-1: completed', '  2 of 2 rows done: 1 applied, 0 unchanged, 1 conflicted, 0 stale, 0 invalid, 0 failed', '  row 2: conflicted (qty_changed): Batch b2 has 20']);
    expect(allApplied(done)).toBe(false);
    expect(allApplied({ ...done, counts: { ...done.counts, conflicted: 0, unchanged: 1 } })).toBe(true);
  });
});
