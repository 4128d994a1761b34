import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { applyImportRows, beginImport, checkImportRows, decideImport, finishImport, refuseImportFile } from '../domain/import-services';
import type { BatchRepository } from '../domain/ports';
import { MAX_FEED_BYTES } from './imports/feed';
import { type FeedFormat, readFeedRecord } from './imports/rows';
import { importidOfFileKey } from './imports/uploads';
import { batchRepository } from './store/repository';
import { describeError, logger, takeColdStart } from './telemetry';

/*
 * The import worker: each step of the stack's state machine of imports (docs/architecture.md,
 * "Imports"; infra/constructs/imports.ts), one invocation a step. Step Functions reads the file
 * from the bucket and hands the worker its records, a batch at a time; the worker runs each batch
 * through the service functions that `npm start` runs on a file (local/import-runs.ts). Each step
 * is recorded once, so that a batch Step Functions runs again (a worker that crashed or timed out)
 * changes nothing more.
 */

/** A record as the state machine's reader hands it on: its place in the file, from 0, and its fields. */
export interface ImportItem {
  readonly index: number;
  readonly fields: unknown;
}

export type ImportWorkerEvent =
  /** The file has arrived (S3's Object Created event, by EventBridge): its key, ETag and size. */
  | { readonly step: 'begin'; readonly key: string; readonly etag: string; readonly size: number }
  /** A batch of the file's records, checked or applied (ItemBatcher's input). */
  | { readonly BatchInput: { readonly step: 'check' | 'apply'; readonly importid: string; readonly format: FeedFormat }; readonly Items: readonly ImportItem[] }
  | { readonly step: 'decide' | 'finish'; readonly importid: string }
  /** The reader could not read the file as a feed of its format. */
  | { readonly step: 'refuse'; readonly importid: string; readonly cause: string };

/** What the state machine goes on with: the import, its format, and whether its rows are to be run. */
export interface ImportStepResult {
  readonly importid?: string;
  readonly format?: FeedFormat;
  readonly run: boolean;
}

/** The step found work it must leave undone (a chunk another run holds, rows not done): the engine is to run it again, and every step it recorded changes nothing more. */
export class ImportStepUndone extends Error {
  override readonly name = 'ImportStepUndone';
}

const stepOf = (event: ImportWorkerEvent): string => ('BatchInput' in event ? event.BatchInput.step : event.step);

const rowsOf = (items: readonly ImportItem[], format: FeedFormat) => items.map(({ index, fields }) => readFeedRecord({ row: index + 1, fields }, format));

const runStep = async (event: ImportWorkerEvent, repository: BatchRepository): Promise<ImportStepResult> => {
  if ('BatchInput' in event) {
    const { step, importid, format } = event.BatchInput;
    const rows = rowsOf(event.Items, format);
    if (step === 'check') await checkImportRows(importid, rows, repository);
    // Taken by another run of this batch of items (the engine runs one at least once): this run is
    // sent again, until the chunk is recorded, by whichever run ends holding it.
    else if (!(await applyImportRows(importid, rows, repository))) throw new ImportStepUndone(`The chunk of import ${importid} from row ${rows[0]?.row} was not recorded by this run`);
    return { run: true };
  }
  if (event.step === 'begin') {
    const importid = importidOfFileKey(event.key);
    if (importid === undefined) return { run: false };
    // S3 quotes an ETag; EventBridge's event of it does not. The local store states the same digest, an MD5 of one PUT.
    const record = await beginImport(importid, event.etag.replaceAll('"', ''), repository);
    if (record.status !== 'running' || record.feed === 'rows') return { importid, run: false };
    const refusal = event.size === 0 ? 'is empty' : event.size > MAX_FEED_BYTES ? `is longer than ${MAX_FEED_BYTES} bytes: send it as several feeds` : undefined;
    if (refusal === undefined) return { importid, format: record.feed, run: true };
    await refuseImportFile(importid, { message: `The file ${refusal}` }, repository);
    return { importid, run: false };
  }
  if (event.step === 'decide') return { importid: event.importid, run: await decideImport(event.importid, repository) };
  if (event.step !== 'refuse') {
    // Every chunk was recorded before this step: an import left running has rows undone, and fails the execution for its alarm.
    if (!(await finishImport(event.importid, repository))) throw new ImportStepUndone(`Import ${event.importid} still has rows not done`);
    return { importid: event.importid, run: false };
  }
  await refuseImportFile(event.importid, { message: `The file could not be read as a feed: ${event.cause}` }, repository);
  return { importid: event.importid, run: false };
};

export const createImportWorker = (repository: BatchRepository) =>
  middy<ImportWorkerEvent, ImportStepResult, Error, Context>().handler(async (event, context) => {
    try {
      const result = await runStep(event, repository);
      logger.info({ message: 'Import step', step: stepOf(event), cold_start: takeColdStart(), function_request_id: context.awsRequestId, ...result });
      return result;
    } catch (error) {
      // Thrown on, for the state machine to run the step again: every step is recorded once.
      logger.error({ message: 'Import step failed', step: stepOf(event), function_request_id: context.awsRequestId, cause: describeError(error) });
      throw error;
    }
  });

export const handler = createImportWorker(batchRepository);
