import { createReadStream } from 'node:fs';
import { beginImport, refuseImportFile, runImport } from '../domain/import-services';
import type { BatchRepository } from '../domain/ports';
import { FeedRefused, feedRows } from '../functions/imports/feed';
import type { FeedFormat } from '../functions/imports/rows';

/*
 * The engine of imports as `npm start` runs it, on a file that has arrived (./uploads): the same
 * steps as the stack's state machine (docs/architecture.md, "Imports"), one after another in this
 * process, over the file streamed from disk, once for the checks and once for the chunks. Each step
 * is recorded once, so the run of a file that arrives again, or of an import cut off, does none twice.
 */

/** Runs the import of the file at `path`, whose digest is `digest`; a file that is no feed fails the import, with nothing of it applied. */
export const runFileImport = async (importid: string, path: string, digest: string, repository: BatchRepository): Promise<void> => {
  const record = await beginImport(importid, digest, repository);
  if (record.status !== 'running' || record.feed === 'rows') return;
  const format: FeedFormat = record.feed;
  try {
    await runImport(importid, () => feedRows(createReadStream(path), format), repository);
  } catch (error) {
    if (!(error instanceof FeedRefused)) throw error;
    await refuseImportFile(importid, { message: `The file ${error.message}`, ...(error.row === undefined ? {} : { row: error.row }) }, repository);
  }
};
