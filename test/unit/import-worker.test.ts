import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { openImport } from '../../domain/import-services';
import { IMPORT_CHUNK_ROWS } from '../../domain/imports';
import { type ImportItem, type ImportWorkerEvent, createImportWorker } from '../../functions/import-worker';
import { FakeRepository } from '../support/fake-repository';

/*
 * The import worker's steps (functions/import-worker.ts) over the fake repository, as the state
 * machine sends them: what each answers, and the steps it fails for the engine to run again.
 */

const context = { awsRequestId: 'request-1' } as Context;
const items = (from: number, count: number): ImportItem[] =>
  Array.from({ length: count }, (_, offset) => ({ index: from + offset, fields: { ref: `b${from + offset}`, sku: 'LAMP', qty: 1, eta: null } }));
const batchOf = (step: 'check' | 'apply', importid: string, records: ImportItem[]): ImportWorkerEvent => ({ BatchInput: { step, importid, format: 'jsonl' }, Items: records });

describe('the import worker', () => {
  it('fails a finish while a chunk is not recorded, and completes the import once every chunk is', async () => {
    const repository = new FakeRepository();
    const worker = createImportWorker(repository);
    await openImport({ importid: 'i1', feed: 'jsonl', dryRun: false, validateFirst: true }, repository);
    await repository.beginImport('i1', 'etag', new Date(repository.now).toISOString());
    const rows = items(0, IMPORT_CHUNK_ROWS + 2);
    await worker(batchOf('check', 'i1', rows), context);
    expect(await worker({ step: 'decide', importid: 'i1' }, context)).toMatchObject({ run: true });
    await worker(batchOf('apply', 'i1', rows.slice(0, IMPORT_CHUNK_ROWS)), context);

    await expect(worker({ step: 'finish', importid: 'i1' }, context)).rejects.toThrow(/rows not done/);

    await worker(batchOf('apply', 'i1', rows.slice(IMPORT_CHUNK_ROWS)), context);
    expect(await worker({ step: 'finish', importid: 'i1' }, context)).toEqual({ importid: 'i1', run: false });
    expect(await repository.importRecord('i1')).toMatchObject({ status: 'completed', counts: { done: rows.length, applied: rows.length } });
  });

  it('fails an apply whose chunk another run claimed from it, so that the engine sends it again', async () => {
    const repository = new FakeRepository();
    await openImport({ importid: 'i1', feed: 'jsonl', dryRun: false, validateFirst: true }, repository);
    await repository.beginImport('i1', 'etag', new Date(repository.now).toISOString());
    const rows = items(0, 2);
    await createImportWorker(repository)(batchOf('check', 'i1', rows), context);
    // Another run claims the chunk as soon as this one has.
    const overtaken = Object.assign(Object.create(repository) as FakeRepository, {
      claimImportChunk: async (importid: string, firstRow: number) => {
        const claim = await repository.claimImportChunk(importid, firstRow);
        await repository.claimImportChunk(importid, firstRow);
        return claim;
      },
    });

    await expect(createImportWorker(overtaken)(batchOf('apply', 'i1', rows), context)).rejects.toThrow(/not recorded by this run/);
    expect(repository.batches.size).toBe(0);
    expect(await createImportWorker(repository)(batchOf('apply', 'i1', rows), context)).toEqual({ run: true });
    expect(repository.batches.size).toBe(2);
  });
});
