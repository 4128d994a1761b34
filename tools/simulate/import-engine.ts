import { createHash } from 'node:crypto';
import { IMPORT_CHECK_ROWS, IMPORT_CHUNK_ROWS } from '../../domain/imports';
import type { ImportItem, ImportStepResult, ImportWorkerEvent } from '../../functions/import-worker';
import { importFileKey } from '../../functions/imports/uploads';

/*
 * The engine of imports as the stack runs it (docs/architecture.md, "Imports"), over the import
 * worker's own handler: the file's arrival begins the import, its records are checked a batch at a
 * time, then decided, then applied a chunk at a time, some chunks side by side, then the import is
 * finished. A step that fails is run again, as Step Functions' retries run it; an execution whose
 * worker died is sent again from its start by the run (the file's notice delivered again, an
 * execution redriven), and every step it already recorded changes nothing more.
 */

/** The attempts a step gets before its execution fails: the state machine retries one up to 5 times. */
const STEP_ATTEMPTS = 6;
/** Chunks applied at once: the Distributed Map's concurrency, as a small stack runs it. */
const CHUNKS_AT_ONCE = 2;

/** The file a feed of rows makes, as a client uploads it: one JSON line each. */
export const feedFile = (rows: readonly object[]): { readonly text: string; readonly etag: string } => {
  const text = `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`;
  return { text, etag: createHash('md5').update(text).digest('hex') };
};

const groupsOf = <Item>(items: readonly Item[], size: number): Item[][] => Array.from({ length: Math.ceil(items.length / size) }, (_, index) => items.slice(index * size, (index + 1) * size));

/**
 * Runs the import of `rows`, uploaded as the file of `importid`, through `step` (the worker's
 * handler): answers what its last step answered, or throws what a step kept failing with.
 */
export const runFileImport = async (importid: string, rows: readonly object[], step: (event: ImportWorkerEvent) => Promise<ImportStepResult>): Promise<ImportStepResult> => {
  const retried = async (event: ImportWorkerEvent): Promise<ImportStepResult> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await step(event);
      } catch (error) {
        if (attempt >= STEP_ATTEMPTS) throw error;
      }
    }
  };
  const { text, etag } = feedFile(rows);
  const begun = await retried({ step: 'begin', key: importFileKey(importid), etag, size: Buffer.byteLength(text) });
  if (!begun.run) return begun;
  const items: ImportItem[] = rows.map((fields, index) => ({ index, fields }));
  for (const Items of groupsOf(items, IMPORT_CHECK_ROWS)) await retried({ BatchInput: { step: 'check', importid, format: 'jsonl' }, Items });
  const decided = await retried({ step: 'decide', importid });
  if (!decided.run) return decided;
  const chunks = groupsOf(items, IMPORT_CHUNK_ROWS);
  const applyNext = async (): Promise<void> => {
    const Items = chunks.shift();
    if (!Items) return;
    await retried({ BatchInput: { step: 'apply', importid, format: 'jsonl' }, Items });
    await applyNext();
  };
  // Every chunk's run ends before the execution does: none is left running past its answer.
  const applied = await Promise.allSettled(Array.from({ length: CHUNKS_AT_ONCE }, applyNext));
  const failed = applied.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return retried({ step: 'finish', importid });
};
