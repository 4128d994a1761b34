/**
 * Imports of files as `npm start` runs them (local/import-runs.ts), each over a DynamoDB Local of
 * its own, each run a process of its own (./import-run.ts) so that its peak RSS is its own:
 *
 * - a feed of FEED_ROWS new batches, imported, against the floor: the same rows' batches added by
 *   `addBatch` itself, one after another, with no import around them, into a table of their own;
 * - the same file again under a new importid, every row unchanged;
 * - the peak RSS of a run over FEED_ROWS rows and over LARGE_FEED_ROWS rows, each a feed checked
 *   whole and failed by its last row (validate_first): the file streamed end to end, and nothing
 *   of it applied, so that the larger one takes seconds, not the hour its rows would.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createDynamoDbClient } from '../../functions/store/client';
import { startDynamoDbLocal } from '../../local/dynamodb-local';
import { ensureTable } from '../../local/table';
import { firstMessage, spawnTypeScript, stopChild } from './child-process';
import type { ImportRun } from './import-run';

export const FEED_ROWS = 10_000;
export const LARGE_FEED_ROWS = 100_000;
/** The import of a file again, every row unchanged, is at least this many times faster than its first. */
export const MIN_REPEAT_SPEEDUP = 5;
/** The peak RSS over LARGE_FEED_ROWS rows is at most this many times that over FEED_ROWS. */
export const MAX_RSS_GROWTH = 1.2;

export interface ImportMeasurement {
  readonly rows: number;
  readonly floor: ImportRun;
  readonly first: ImportRun;
  readonly again: ImportRun;
  /** Checked whole, failed by its last row: FEED_ROWS rows, then LARGE_FEED_ROWS. */
  readonly checked: { readonly small: ImportRun; readonly large: ImportRun };
  readonly rowsPerSecond: { readonly floor: number; readonly first: number; readonly again: number };
  /** The first import's rate over the floor's; how many times faster the repeat; the larger run's peak RSS over the smaller's. */
  readonly ratios: { readonly firstToFloor: number; readonly repeatSpeedup: number; readonly rssGrowth: number };
}

/** A JSON Lines feed of `rows` new batches over 100 SKUs; with `lastRowInvalid`, its last row lacks every field but `ref`. */
const writeFeed = async (path: string, rows: number, prefix: string, lastRowInvalid = false): Promise<void> => {
  const file = createWriteStream(path);
  for (let row = 1; row <= rows; row++) {
    const line = lastRowInvalid && row === rows ? `{"ref":"${prefix}-${row}"}\n` : `{"ref":"${prefix}-${row}","sku":"${prefix}-SKU-${row % 100}","qty":${(row % 50) + 1},"eta":null}\n`;
    if (!file.write(line)) await once(file, 'drain');
  }
  file.end();
  await once(file, 'finish');
};

const runIn = async (endpoint: string, tableName: string, args: string[]): Promise<ImportRun> => {
  const child = spawnTypeScript('tools/bench/import-run.ts', { args, env: { DYNAMODB_ENDPOINT: endpoint, TABLE_NAME: tableName } });
  try {
    return await firstMessage<ImportRun>(child);
  } finally {
    await stopChild(child);
  }
};

const rate = ({ rows, ms }: ImportRun) => rows / (ms / 1000);

/**
 * A DynamoDB Local of its own for `work`, with a table: one that has served other writes slows
 * later ones down (its transactions take several times as long after the floor's 10,000), so each
 * measurement starts from a store as fresh as the one it is compared with.
 */
const inFreshStore = async <Result>(tableName: string, work: (endpoint: string) => Promise<Result>): Promise<Result> => {
  const store = await startDynamoDbLocal();
  try {
    const admin = createDynamoDbClient(store.endpoint);
    await ensureTable(admin, tableName);
    admin.destroy();
    return await work(store.endpoint);
  } finally {
    await store.stop();
  }
};

export const measureImports = async (workDir: string, step: (what: string) => void): Promise<ImportMeasurement> => {
  const run = randomUUID().slice(0, 8);
  const [importTable, floorTable, checkTable] = ['import', 'floor', 'check'].map((name) => `bench-${name}-${run}`) as [string, string, string];
  const feed = `${workDir}/feed-${FEED_ROWS}.jsonl`;
  const small = `${workDir}/checked-${FEED_ROWS}.jsonl`;
  const large = `${workDir}/checked-${LARGE_FEED_ROWS}.jsonl`;
  await writeFeed(feed, FEED_ROWS, `b${run}`);
  await writeFeed(small, FEED_ROWS, `s${run}`, true);
  await writeFeed(large, LARGE_FEED_ROWS, `l${run}`, true);

  step(`  the floor: ${FEED_ROWS.toLocaleString('en')} batches added one after another`);
  const floor = await inFreshStore(floorTable, (endpoint) => runIn(endpoint, floorTable, [feed, 'floor']));
  step(`  a feed of ${FEED_ROWS.toLocaleString('en')} new batches imported, then the same file under a new importid`);
  const [first, again] = await inFreshStore(importTable, async (endpoint) => [await runIn(endpoint, importTable, [feed, 'jsonl', `first-${run}`]), await runIn(endpoint, importTable, [feed, 'jsonl', `again-${run}`])] as const);
  step(`  peak RSS: feeds of ${FEED_ROWS.toLocaleString('en')} and ${LARGE_FEED_ROWS.toLocaleString('en')} rows checked whole`);
  const [checkedSmall, checkedLarge] = await inFreshStore(checkTable, async (endpoint) => [await runIn(endpoint, checkTable, [small, 'jsonl', `small-${run}`]), await runIn(endpoint, checkTable, [large, 'jsonl', `large-${run}`])] as const);
  const rowsPerSecond = { floor: rate(floor), first: rate(first), again: rate(again) };
  return {
    rows: FEED_ROWS,
    floor,
    first,
    again,
    checked: { small: checkedSmall, large: checkedLarge },
    rowsPerSecond,
    ratios: { firstToFloor: rowsPerSecond.first / rowsPerSecond.floor, repeatSpeedup: first.ms / again.ms, rssGrowth: checkedLarge.peakRssBytes / checkedSmall.peakRssBytes },
  };
};

if (import.meta.url === `file://${process.argv[1]}`) {
  measureImports('.local/bench', (what) => console.error(what)).then((measurement) => console.log(JSON.stringify(measurement, null, 2)));
}
