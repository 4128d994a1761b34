import { describe, expect, it } from 'vitest';
import { adjustStock } from '../../domain/adjustment-services';
import { ImportExists, ImportNotFound, StoreUnavailable } from '../../domain/errors';
import { beginImport, checkImportRows, importById, importRows, importedRows, openImport, refuseImportFile, runImport } from '../../domain/import-services';
import { IMPORT_CHECK_ROWS, IMPORT_CHUNK_ROWS, type ImportRequest, type ImportRow, type ImportedRows, type ReadRow } from '../../domain/imports';
import { addBatch, allocate } from '../../domain/services';
import { readRow } from '../../functions/imports/rows';
import { FakeRepository } from '../support/fake-repository';

/*
 * Imports (docs/api.md, "Imports") over the fake repository: each row through the change its
 * request would make, once by its import and its row, counted once, and refused rows named by
 * their number.
 */

const numbered = (rows: readonly (ImportRow | ReadRow['read'])[]): ReadRow[] => rows.map((read, index) => ({ row: index + 1, read }));
const request = (importid: string, options: Partial<ImportRequest> = {}): ImportRequest => ({ importid, feed: 'rows', dryRun: false, validateFirst: true, digest: `${importid}-rows`, ...options });
const batchRow = (ref: string, qty: number, more: Partial<ImportRow> = {}): ImportRow => ({ kind: 'batch', ref, sku: 'LAMP', qty, eta: null, ...more }) as ImportRow;
const minutesAgo = (repository: FakeRepository, minutes: number) => new Date(repository.now - minutes * 60_000).toISOString();

describe('an import of batch rows', () => {
  it('adds the batches it names, and counts each row applied', async () => {
    const repository = new FakeRepository();
    const { report, created } = await importRows(request('i1'), numbered([batchRow('b1', 10), batchRow('b2', 5, { eta: '2027-01-01' })]), repository);
    expect(created).toBe(true);
    expect(report).toMatchObject({ status: 'completed', counts: { total: 2, done: 2, applied: 2, unchanged: 0 }, errors: [] });
    expect(repository.batches.get('b2')).toMatchObject({ qty: 5, eta: '2027-01-01' });
  });

  it('sets the qty of a batch it finds by a count, changes its eta, and leaves a batch as the row says it unchanged, writing nothing for it', async () => {
    const repository = new FakeRepository();
    await addBatch({ ref: 'b1', sku: 'LAMP', qty: 10, eta: '2027-01-01' }, repository);
    await addBatch({ ref: 'b2', sku: 'LAMP', qty: 7, eta: null }, repository);
    const { report } = await importRows(request('i1'), numbered([batchRow('b1', 12), batchRow('b2', 7)]), repository);
    expect(report.counts).toMatchObject({ applied: 1, unchanged: 1 });
    expect(repository.batches.get('b1')).toMatchObject({ qty: 12, eta: null });
    expect([...repository.adjustments.values()]).toEqual([expect.objectContaining({ adjustmentid: 'i1#1', ref: 'b1', reason: 'counted', before: 10, after: 12 })]);
  });

  it('judges a row on its batch as the rows before it in the chunk left it, not as the chunk first read it', async () => {
    const repository = new FakeRepository();
    await addBatch({ ref: 'b1', sku: 'LAMP', qty: 10, eta: null }, repository);
    const { report } = await importRows(request('i1'), numbered([batchRow('b1', 5), batchRow('b1', 10)]), repository);
    expect(report.counts).toMatchObject({ applied: 2, unchanged: 0 });
    expect(repository.batches.get('b1')).toMatchObject({ qty: 10 });
  });

  it('counts a batch added after its chunk’s read, of its SKU and place, as found: its qty set by the row, not refused as another batch', async () => {
    const repository = new FakeRepository();
    const addedMeanwhile = Object.assign(Object.create(repository) as FakeRepository, {
      importRowsRead: async (...args: Parameters<FakeRepository['importRowsRead']>) => {
        const read = await repository.importRowsRead(...args);
        await addBatch({ ref: 'b1', sku: 'LAMP', qty: 3, eta: null }, repository);
        return read;
      },
    });
    const { report } = await importRows(request('i1'), numbered([batchRow('b1', 5)]), addedMeanwhile);
    expect(report.counts).toMatchObject({ applied: 1, failed: 0 });
    expect(repository.batches.get('b1')).toMatchObject({ qty: 5 });
  });

  it('counts unchanged, with no write and no read of its own, a row its chunk’s read finds its batch as it says', async () => {
    const repository = new FakeRepository();
    await addBatch({ ref: 'b1', sku: 'LAMP', qty: 10, eta: '2027-01-01' }, repository);
    const reads: string[] = [];
    const watched = Object.assign(Object.create(repository) as FakeRepository, {
      batch: (ref: string) => {
        reads.push(ref);
        return repository.batch(ref);
      },
    });
    const { report } = await importRows(request('i1'), numbered([batchRow('b1', 10, { eta: '2027-01-01', expectedQty: 10 })]), watched);
    expect(report.counts).toMatchObject({ unchanged: 1 });
    expect(reads).toEqual([]);
    expect(repository.adjustments.size).toBe(0);
  });

  it('leaves a batch whose qty is not the row’s expected_qty as it is, counted conflicted with the qty it has', async () => {
    const repository = new FakeRepository();
    await addBatch({ ref: 'b1', sku: 'LAMP', qty: 10, eta: null }, repository);
    const { report } = await importRows(request('i1'), numbered([batchRow('b1', 12, { expectedQty: 9 }), batchRow('b9', 3, { expectedQty: 1 })]), repository);
    expect(report.counts).toMatchObject({ conflicted: 2, applied: 0 });
    expect(report.errors).toEqual([
      { row: 1, outcome: 'conflicted', code: 'qty_changed', message: expect.stringContaining('10') },
      { row: 2, outcome: 'conflicted', code: 'qty_changed', message: expect.any(String) },
    ]);
    expect(repository.batches.get('b1')?.qty).toBe(10);
    expect(repository.batches.has('b9')).toBe(false);
  });

  it('fails a row whose ref is a batch of another SKU, and applies the others', async () => {
    const repository = new FakeRepository();
    await addBatch({ ref: 'b1', sku: 'VASE', qty: 10, eta: null }, repository);
    const { report } = await importRows(request('i1'), numbered([batchRow('b1', 4), batchRow('b2', 4)]), repository);
    expect(report).toMatchObject({ status: 'completed', counts: { failed: 1, applied: 1 }, errors: [{ row: 1, outcome: 'failed', code: 'batch_exists' }] });
  });
});

describe('an import of counts', () => {
  it('applies a count as of its time, and counts unchanged one that leaves the batch as it is', async () => {
    const repository = new FakeRepository();
    repository.now -= 3_600_000;
    await addBatch({ ref: 'b1', sku: 'LAMP', qty: 50, eta: null }, repository);
    await addBatch({ ref: 'b2', sku: 'LAMP', qty: 8, eta: null }, repository);
    repository.now += 3_600_000;
    const countedAt = minutesAgo(repository, 30);
    await adjustStock({ adjustmentid: 'lost', ref: 'b1', reason: 'lost', delta: -2 }, repository);
    const { report } = await importRows(
      request('i1'),
      numbered([
        { kind: 'count', ref: 'b1', qty: 40, countedAt },
        { kind: 'count', ref: 'b2', qty: 8, countedAt },
      ]),
      repository,
    );
    expect(report.counts).toMatchObject({ applied: 1, unchanged: 1 });
    expect(repository.batches.get('b1')?.qty).toBe(38);
    expect(repository.adjustments.has('i1#2')).toBe(false);
  });

  it('counts stale a count older than one already applied to the batch, and changes nothing', async () => {
    const repository = new FakeRepository();
    repository.now -= 3_600_000;
    await addBatch({ ref: 'b1', sku: 'LAMP', qty: 50, eta: null }, repository);
    repository.now += 3_600_000;
    await adjustStock({ adjustmentid: 'c1', ref: 'b1', reason: 'counted', qty: 45, countedAt: minutesAgo(repository, 10) }, repository);
    const { report } = await importRows(request('i1'), numbered([{ kind: 'count', ref: 'b1', qty: 30, countedAt: minutesAgo(repository, 20) }]), repository);
    expect(report).toMatchObject({ counts: { stale: 1 }, errors: [{ row: 1, outcome: 'stale', code: 'stale_count' }] });
    expect(repository.batches.get('b1')?.qty).toBe(45);
  });

  it('fails a count of a batch that is not one', async () => {
    const repository = new FakeRepository();
    const { report } = await importRows(request('i1'), numbered([{ kind: 'count', ref: 'nope', qty: 3, countedAt: minutesAgo(repository, 1) }]), repository);
    expect(report.errors).toEqual([expect.objectContaining({ row: 1, outcome: 'failed', code: 'unknown_batch' })]);
  });
});

describe('an import’s rows refused', () => {
  const rows = () => numbered([batchRow('b1', 1), { kind: 'invalid', field: 'qty', message: 'must be an integer' }, batchRow('b3', 1, { location: 'nowhere' })]);

  it('fail the import before any row is applied when it validates first, each refused named by its row', async () => {
    const repository = new FakeRepository();
    const { report } = await importRows(request('i1'), rows(), repository);
    expect(report).toMatchObject({ status: 'failed', counts: { total: 3, done: 0, invalid: 2, applied: 0 } });
    expect(report.errors).toEqual([
      { row: 2, outcome: 'invalid', code: 'validation_failed', message: 'qty must be an integer' },
      { row: 3, outcome: 'invalid', code: 'unknown_location', message: expect.stringContaining('location') },
    ]);
    expect(repository.batches.size).toBe(0);
  });

  it('are counted invalid, and the others applied, when it does not validate first', async () => {
    const repository = new FakeRepository();
    const { report } = await importRows(request('i1', { validateFirst: false }), rows(), repository);
    expect(report).toMatchObject({ status: 'completed', counts: { total: 3, done: 3, invalid: 2, applied: 1 } });
    expect([...repository.batches.keys()]).toEqual(['b1']);
  });
});

describe('a dry run', () => {
  it('counts a refused row invalid and judges the others when it does not validate first, writing nothing', async () => {
    const repository = new FakeRepository();
    const { report } = await importRows(request('i1', { dryRun: true, validateFirst: false }), numbered([batchRow('b1', 1), { kind: 'invalid', field: 'qty', message: 'is wrong' }]), repository);
    expect(report).toMatchObject({ status: 'completed', counts: { applied: 1, invalid: 1 } });
    expect(repository.batches.size).toBe(0);
  });

  it('says what each row would do, and writes no stock', async () => {
    const repository = new FakeRepository();
    await addBatch({ ref: 'b1', sku: 'LAMP', qty: 10, eta: null }, repository);
    const { report } = await importRows(request('i1', { dryRun: true }), numbered([batchRow('b1', 10), batchRow('b1', 11), batchRow('b2', 1)]), repository);
    expect(report).toMatchObject({ status: 'completed', dryRun: true, counts: { unchanged: 1, applied: 2 } });
    expect(repository.batches.get('b1')?.qty).toBe(10);
    expect(repository.batches.has('b2')).toBe(false);
    expect(repository.adjustments.size).toBe(0);
  });
});

describe('an import sent again', () => {
  it('with the same rows changes nothing more, and answers as the first did', async () => {
    const repository = new FakeRepository();
    const first = await importRows(request('i1'), numbered([batchRow('b1', 10)]), repository);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 4 }, repository);
    const again = await importRows(request('i1'), numbered([batchRow('b1', 10)]), repository);
    expect(again).toEqual({ report: first.report, created: false });
    expect(repository.batches.get('b1')).toMatchObject({ qty: 10, available: 6 });
  });

  it('with other rows or options is refused, and runs nothing', async () => {
    const repository = new FakeRepository();
    await importRows(request('i1'), numbered([batchRow('b1', 10)]), repository);
    await expect(importRows(request('i1', { digest: 'other' }), numbered([batchRow('b2', 10)]), repository)).rejects.toThrow(ImportExists);
    await expect(importRows(request('i1', { dryRun: true }), numbered([batchRow('b1', 10)]), repository)).rejects.toThrow(ImportExists);
    expect(repository.batches.has('b2')).toBe(false);
  });

  it('after a send cut off halfway applies each row once, and counts each once', async () => {
    const repository = new FakeRepository();
    for (const ref of ['b1', 'b2', 'b3']) await addBatch({ ref, sku: 'LAMP', qty: 1, eta: null }, repository);
    const rows = numbered(Array.from({ length: IMPORT_CHUNK_ROWS + 3 }, (_, index) => batchRow(['b1', 'b2', 'b3'][index % 3] as string, index + 2)));
    // The store stops answering after the first chunk and two rows of the second.
    let writes = 0;
    const failing = Object.assign(Object.create(repository) as FakeRepository, {
      changeBatch: (...args: Parameters<FakeRepository['changeBatch']>) => {
        if (++writes > IMPORT_CHUNK_ROWS + 2) return Promise.reject(new StoreUnavailable('The store did not answer'));
        return repository.changeBatch(...args);
      },
    });
    await expect(importRows(request('i1'), rows, failing)).rejects.toThrow(StoreUnavailable);
    expect((await importById('i1', repository)).counts).toMatchObject({ done: IMPORT_CHUNK_ROWS, applied: IMPORT_CHUNK_ROWS });

    const { report } = await importRows(request('i1'), rows, repository);

    expect(report).toMatchObject({ status: 'completed', counts: { total: IMPORT_CHUNK_ROWS + 3, done: IMPORT_CHUNK_ROWS + 3, applied: IMPORT_CHUNK_ROWS + 3 } });
    expect(repository.adjustments.size).toBe(IMPORT_CHUNK_ROWS + 3);
    const last = (ref: string) => Math.max(...rows.flatMap(({ read }) => (read.kind === 'batch' && read.ref === ref ? [read.qty] : [])));
    for (const ref of ['b1', 'b2', 'b3']) expect(repository.batches.get(ref)?.qty).toBe(last(ref));
  });
});

/** The repository with each chunk's read held (before the read, or after it) from `atGate` until `open()`. */
const holdingTheRead = (repository: FakeRepository, when: 'after' | 'before') => {
  let reached: () => void = () => undefined;
  const atGate = new Promise<void>((resolve) => (reached = resolve));
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const held = Object.assign(Object.create(repository) as FakeRepository, {
    importRowsRead: async (...args: Parameters<FakeRepository['importRowsRead']>) => {
      if (when === 'before') {
        reached();
        await opened;
      }
      const read = await repository.importRowsRead(...args);
      if (when === 'after') {
        reached();
        await opened;
      }
      return read;
    },
  });
  return { held, atGate, open };
};

describe('an import sent twice at once', () => {
  it('counts each row as the send that recorded its chunk judged it, and a send whose claim was taken writes nothing more', async () => {
    const repository = new FakeRepository();
    const rows = numbered([batchRow('b1', 3, { expectedQty: 7 }), batchRow('b2', 2)]);
    // The first send, its chunk claimed, waits before it reads the chunk's batches while a second send runs the whole import.
    const waiting = holdingTheRead(repository, 'before');
    const first = importRows(request('i1'), rows, waiting.held);
    await waiting.atGate;

    const second = await importRows(request('i1'), rows, repository);
    // b1 arrives after the second send judged its row: the first, resumed, finds it as the row expects.
    await addBatch({ ref: 'b1', sku: 'LAMP', qty: 7, eta: null }, repository);
    waiting.open();
    const firstAnswer = await first;

    expect(second.report).toMatchObject({ status: 'completed', counts: { done: 2, applied: 1, conflicted: 1 }, errors: [{ row: 1, outcome: 'conflicted' }] });
    expect(firstAnswer.report).toEqual(second.report);
    expect(repository.batches.get('b1')).toMatchObject({ qty: 7 });
    expect(repository.adjustments.has('i1#1')).toBe(false);
  });
});

describe('an import whose chunk another send claims', () => {
  it('stops there, though it wrote nothing since, and leaves the rows after it to the claimant, so rows run in their order', async () => {
    const repository = new FakeRepository();
    const rows = numbered(Array.from({ length: IMPORT_CHUNK_ROWS + 5 }, (_, index) => (index === 4 ? batchRow('x', 10) : index === IMPORT_CHUNK_ROWS + 4 ? batchRow('x', 20) : batchRow(`b${index}`, 1))));
    for (const { read } of rows) if (read.kind === 'batch' && read.ref !== 'x') await addBatch({ ref: read.ref, sku: 'LAMP', qty: 1, eta: null }, repository);
    await addBatch({ ref: 'x', sku: 'LAMP', qty: 10, eta: null }, repository);
    // The first send reads its first chunk; the second claims it from the first and waits before its own read.
    const first = holdingTheRead(repository, 'after');
    const firstSend = importRows(request('i1'), rows, first.held);
    await first.atGate;
    const second = holdingTheRead(repository, 'before');
    const secondSend = importRows(request('i1'), rows, second.held);
    await second.atGate;

    first.open();
    await firstSend;
    second.open();
    const { report } = await secondSend;

    expect(report).toMatchObject({ status: 'completed', counts: { done: rows.length, applied: 1, unchanged: rows.length - 1 } });
    expect(repository.batches.get('x')).toMatchObject({ qty: 20 });
  });
});

describe('an import cut off and sent again', () => {
  /** The repository, failing every write of a batch's qty after the first `changes`, as a store that stops answering. */
  const cutOffAfter = (repository: FakeRepository, changes: number) => {
    let made = 0;
    return Object.assign(Object.create(repository) as FakeRepository, {
      changeBatch: (...args: Parameters<FakeRepository['changeBatch']>) =>
        ++made > changes ? Promise.reject(new StoreUnavailable('The store did not answer')) : repository.changeBatch(...args),
    });
  };

  it('leaves a batch it added and then counted as the count left it, not as the row that added it', async () => {
    const repository = new FakeRepository();
    const rows = numbered([batchRow('b1', 10), batchRow('b1', 12), batchRow('b2', 1), batchRow('b2', 2)]);
    await expect(importRows(request('i1'), rows, cutOffAfter(repository, 1))).rejects.toThrow(StoreUnavailable);
    expect(repository.batches.get('b1')?.qty).toBe(12);

    const { report } = await importRows(request('i1'), rows, repository);

    expect(report.counts).toMatchObject({ done: 4, applied: 4 });
    expect(repository.batches.get('b1')?.qty).toBe(12);
    expect(repository.batches.get('b2')?.qty).toBe(2);
  });

  it('moves the lines a count it made left no room for, when the send that made it was cut off before', async () => {
    const repository = new FakeRepository();
    await addBatch({ ref: 'b1', sku: 'LAMP', qty: 10, eta: null }, repository);
    await addBatch({ ref: 'b2', sku: 'LAMP', qty: 10, eta: '2027-01-01' }, repository);
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 8 }, repository);
    const cutOff = Object.assign(Object.create(repository) as FakeRepository, {
      moveAllocations: () => Promise.reject(new StoreUnavailable('The store did not answer')),
    });
    await expect(importRows(request('i1'), numbered([batchRow('b1', 2)]), cutOff)).rejects.toThrow(StoreUnavailable);
    expect(repository.batches.get('b1')).toMatchObject({ qty: 2, available: -6 });

    const { report } = await importRows(request('i1'), numbered([batchRow('b1', 2)]), repository);

    expect(report.counts).toMatchObject({ done: 1, applied: 1 });
    expect(repository.batches.get('b1')).toMatchObject({ qty: 2, available: 2 });
    expect(repository.lines.get(JSON.stringify(['o1', 'LAMP']))).toMatchObject({ batchref: 'b2' });
  });

  it('fails a row whose change id another adjustment took, and applies nothing of it', async () => {
    const repository = new FakeRepository();
    await addBatch({ ref: 'b1', sku: 'LAMP', qty: 10, eta: null }, repository);
    await adjustStock({ adjustmentid: 'i1#1', ref: 'b1', reason: 'lost', delta: -1 }, repository);
    const { report } = await importRows(request('i1'), numbered([batchRow('b1', 20)]), repository);
    expect(report.errors).toEqual([expect.objectContaining({ row: 1, outcome: 'failed', code: 'adjustment_exists' })]);
    expect(repository.batches.get('b1')?.qty).toBe(9);
  });
});

describe('the errors of an import', () => {
  it('are the first 10 rows that did not apply, by row number, across chunks', async () => {
    const repository = new FakeRepository();
    const rows = numbered(Array.from({ length: 2 * IMPORT_CHUNK_ROWS }, (_, index) => (index % 4 === 0 ? { kind: 'invalid' as const, field: 'qty', message: 'is wrong' } : batchRow(`b${index}`, 1))));
    const { report } = await importRows(request('i1', { validateFirst: false }), rows, repository);
    expect(report.counts).toMatchObject({ invalid: 13, applied: 37 });
    expect(report.errors.map(({ row }) => row)).toEqual([1, 5, 9, 13, 17, 21, 25, 29, 33, 37]);
  });

  it('fail an import that validates first when a count was taken in the future or too long ago', async () => {
    const repository = new FakeRepository();
    await addBatch({ ref: 'b1', sku: 'LAMP', qty: 10, eta: null }, repository);
    const future = new Date(repository.now + 60_000).toISOString();
    const { report } = await importRows(request('i1'), numbered([batchRow('b1', 11), { kind: 'count', ref: 'b1', qty: 3, countedAt: future }]), repository);
    expect(report).toMatchObject({ status: 'failed', errors: [{ row: 2, outcome: 'invalid', code: 'validation_failed', message: expect.stringMatching(/^counted_at must not be in the future/) }] });
    expect(repository.batches.get('b1')?.qty).toBe(10);
  });
});

describe('an import of a file', () => {
  const fileRequest = (importid: string, options: Partial<ImportRequest> = {}): ImportRequest => ({ importid, feed: 'csv', dryRun: false, validateFirst: true, ...options });

  it('awaits its file, and runs once it has arrived: every row checked into the total before any is applied', async () => {
    const repository = new FakeRepository();
    const { record } = await openImport(fileRequest('f1'), repository);
    expect(record).toMatchObject({ status: 'awaiting_upload', counts: { total: 0 } });
    await beginImport('f1', 'digest-1', repository);
    const rows = numbered(Array.from({ length: IMPORT_CHECK_ROWS + 1 }, (_, index) => batchRow(`b${index}`, 1)));
    await checkImportRows('f1', rows.slice(0, IMPORT_CHECK_ROWS), repository);
    await checkImportRows('f1', rows.slice(IMPORT_CHECK_ROWS), repository);
    expect(repository.imports.get('f1')).toMatchObject({ status: 'running', counts: { total: rows.length, done: 0 } });
    expect(repository.batches.size).toBe(0);

    await runImport('f1', () => rows, repository);

    expect(await importById('f1', repository)).toMatchObject({ status: 'completed', file: 'digest-1', counts: { total: rows.length, done: rows.length, applied: rows.length } });
  });

  it('takes its file once: the same file arriving again answers it, another is ImportExists', async () => {
    const repository = new FakeRepository();
    await openImport(fileRequest('f1'), repository);
    await beginImport('f1', 'digest-1', repository);
    await expect(beginImport('f1', 'digest-1', repository)).resolves.toMatchObject({ status: 'running', file: 'digest-1' });
    await expect(beginImport('f1', 'digest-2', repository)).rejects.toThrow(ImportExists);
    await expect(openImport(fileRequest('f1', { feed: 'jsonl' }), repository)).rejects.toThrow(ImportExists);
  });

  it('without validate_first, applies the rows the check refused none of, and counts the rest invalid', async () => {
    const repository = new FakeRepository();
    await openImport(fileRequest('f1', { validateFirst: false }), repository);
    await beginImport('f1', 'digest-1', repository);
    await runImport('f1', () => numbered([batchRow('b1', 1), { kind: 'invalid', field: 'qty', message: 'is wrong' }]), repository);
    expect(await importById('f1', repository)).toMatchObject({ status: 'completed', counts: { total: 2, applied: 1, invalid: 1 }, errors: [{ row: 2, outcome: 'invalid' }] });
  });

  it('fails with nothing applied when its file is no feed', async () => {
    const repository = new FakeRepository();
    await openImport(fileRequest('f1'), repository);
    await beginImport('f1', 'digest-1', repository);
    await refuseImportFile('f1', { message: 'The file is empty', row: 1 }, repository);
    expect(await importById('f1', repository)).toMatchObject({ status: 'failed', fileRefusal: { message: 'The file is empty', row: 1 }, counts: { done: 0 } });
    await runImport('f1', () => numbered([batchRow('b1', 1)]), repository);
    expect(repository.batches.size).toBe(0);
  });
});

describe('the rows of an import', () => {
  it('are listed by number, a page at a time across chunks, each with its outcome and, for one that did not apply, why', async () => {
    const repository = new FakeRepository();
    await addBatch({ ref: 'b1', sku: 'LAMP', qty: 10, eta: null }, repository);
    const rows = numbered(Array.from({ length: IMPORT_CHUNK_ROWS + 4 }, (_, index) => (index === IMPORT_CHUNK_ROWS ? batchRow('b1', 3, { expectedQty: 9 }) : batchRow(`n${index}`, 1))));
    await importRows(request('i1'), rows, repository);

    const pages = [];
    let fromRow: number | undefined = 1;
    while (fromRow !== undefined) {
      const page: ImportedRows = await importedRows('i1', { fromRow, limit: 7 }, repository);
      pages.push(page.rows);
      fromRow = page.next;
    }

    expect(pages.map((page) => page.length)).toEqual([7, 7, 7, 7, 1]);
    const listed = pages.flat();
    expect(listed.map(({ row }) => row)).toEqual(rows.map(({ row }) => row));
    expect(listed[IMPORT_CHUNK_ROWS]).toEqual({ row: IMPORT_CHUNK_ROWS + 1, outcome: 'conflicted', code: 'qty_changed', message: expect.stringContaining('b1') });
    expect(listed[0]).toEqual({ row: 1, outcome: 'applied' });
  });

  it('of an import its check failed are the rows the check refused', async () => {
    const repository = new FakeRepository();
    const rows = numbered([batchRow('b1', 1), { kind: 'invalid', field: 'qty', message: 'must be a number' }, batchRow('b2', 1, { location: 'nowhere' })]);
    await importRows(request('i1'), rows, repository);
    expect(await importedRows('i1', { fromRow: 1, limit: 50 }, repository)).toEqual({
      rows: [
        { row: 2, outcome: 'invalid', code: 'validation_failed', message: 'qty must be a number' },
        { row: 3, outcome: 'invalid', code: 'unknown_location', message: expect.stringContaining('nowhere') },
      ],
    });
  });

  it('of no import are ImportNotFound', async () => {
    await expect(importedRows('i9', { fromRow: 1, limit: 50 }, new FakeRepository())).rejects.toThrow(ImportNotFound);
  });
});

describe('a row as the feed sends it', () => {
  it('is a count when it has counted_at, and a batch otherwise', () => {
    expect(readRow({ ref: 'b1', qty: 3, counted_at: '2026-11-25T09:00:00Z' }, 1)).toEqual({ row: 1, read: { kind: 'count', ref: 'b1', qty: 3, countedAt: '2026-11-25T09:00:00Z' } });
    expect(readRow({ ref: 'b1', sku: 'LAMP', qty: 3, eta: null, expected_qty: 0 }, 2)).toEqual({ row: 2, read: { kind: 'batch', ref: 'b1', sku: 'LAMP', qty: 3, eta: null, expectedQty: 0 } });
  });

  it('is refused naming its first field wrong, or a field no row takes', () => {
    expect(readRow({ ref: 'b1', sku: 'LAMP', qty: 0, eta: null }, 4)).toEqual({ row: 4, read: { kind: 'invalid', field: 'qty', message: expect.stringMatching(/^must be an integer/) } });
    expect(readRow({ ref: 'b1', sku: 'LAMP', qty: 1, eta: null, colour: 'red' }, 5)).toEqual({ row: 5, read: { kind: 'invalid', field: 'colour', message: 'is not a field of a row' } });
    expect(readRow({ ref: 'b1', qty: 1, counted_at: 'yesterday' }, 6)).toMatchObject({ read: { kind: 'invalid', field: 'counted_at' } });
  });
});
