/**
 * One run of the import worker as `npm start` runs it (local/import-runs.ts), in a process of its
 * own so that its peak RSS is its own: `import-run.ts <file> <format> <importid>` over the table
 * TABLE_NAME at DYNAMODB_ENDPOINT, or `import-run.ts <file> floor` for the floor: the same rows'
 * batches added by the service function itself, one after another, with no import around them.
 * Sends {ms, peakRssBytes, rows} to its parent when done.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { importById, openImport } from '../../domain/import-services';
import { addBatch } from '../../domain/services';
import { feedRows } from '../../functions/imports/feed';
import type { FeedFormat } from '../../functions/imports/rows';
import { DynamoDbBatchRepository } from '../../functions/store/batch-repository';
import { createDocumentClient } from '../../functions/store/client';
import { tableNameFromEnv } from '../../functions/store/table';
import { runFileImport } from '../../local/import-runs';

export interface ImportRun {
  readonly ms: number;
  readonly peakRssBytes: number;
  readonly rows: number;
  readonly counts: Readonly<Record<string, number>>;
  readonly status: string;
}

const [file, format, importid] = process.argv.slice(2) as [string, FeedFormat | 'floor', string | undefined];
const repository = new DynamoDbBatchRepository(createDocumentClient(process.env.DYNAMODB_ENDPOINT), tableNameFromEnv());

const run = async (): Promise<ImportRun> => {
  const started = performance.now();
  if (format === 'floor') {
    let rows = 0;
    for await (const { read } of feedRows(createReadStream(file), 'jsonl')) {
      if (read.kind !== 'batch') throw new Error('The floor adds batches only');
      await addBatch({ ref: read.ref, sku: read.sku, qty: read.qty, eta: read.eta }, repository);
      rows++;
    }
    return { ms: performance.now() - started, peakRssBytes: process.resourceUsage().maxRSS * 1024, rows, counts: {}, status: 'floor' };
  }
  if (importid === undefined) throw new Error('Usage: import-run.ts <file> <format> <importid>');
  await openImport({ importid, feed: format, dryRun: false, validateFirst: true }, repository);
  await runFileImport(importid, file, `${(await stat(file)).size}-${importid}`, repository);
  const { status, counts } = await importById(importid, repository);
  return { ms: performance.now() - started, peakRssBytes: process.resourceUsage().maxRSS * 1024, rows: counts.total, counts, status };
};

run().then(
  (result) => process.send?.(result, () => process.exit(0)),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
