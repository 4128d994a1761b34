import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMPORT_CHUNK_ROWS, type ImportChunkClaim, ImportChunkTaken } from '../../domain/imports';
import { StoreUnavailable } from '../../domain/errors';
import type { DynamoDbBatchRepository } from '../../functions/store/batch-repository';
import { checkInvariants } from '../../tools/invariants';
import { type HandlerService, serviceOver } from '../reliability/support/service';
import { type TestTable, createTestTable, uniqueId } from '../support/dynamodb';
import { routeEvent } from '../support/events';

/*
 * Imports (docs/api.md, "Imports"), through the handlers over DynamoDB Local: rows applied through
 * the routes' own changes, counted once in the import's record, refused rows named by their number,
 * and a send cut off halfway finished by its repeat with each row applied once.
 */

let table: TestTable;
let service: HandlerService;
beforeAll(async () => {
  table = await createTestTable();
  service = serviceOver(table.repository());
});
afterAll(() => table.drop());

const invoke = (routeKey: string, options: Parameters<typeof routeEvent>[1]) => service.invoke(routeEvent(routeKey, options));
const importFeed = (body: Record<string, unknown>, over: HandlerService = service) => over.invoke(routeEvent('POST /imports', { body }));
const batch = async (ref: string) => (await invoke('GET /batches/{ref}', { pathParameters: { ref } })).body as Record<string, unknown>;

describe('an import', () => {
  it('adds batches, recounts those it finds, leaves as they are those it finds unchanged, and counts each row once', async () => {
    const [one, two] = [uniqueId('b'), uniqueId('b')];
    const sku = uniqueId('SKU');
    const first = await importFeed({ importid: uniqueId('feed'), rows: [{ ref: one, sku, qty: 10, eta: null }, { ref: two, sku, qty: 4, eta: '2027-06-01' }] });
    expect(first).toMatchObject({ status: 201, body: { status: 'completed', counts: { total: 2, done: 2, applied: 2 }, errors: [] } });

    const importid = uniqueId('feed');
    const rows = [
      { ref: one, sku, qty: 12, eta: null },
      { ref: two, sku, qty: 4, eta: '2027-06-01' },
      { ref: two, sku, qty: 9, eta: null, expected_qty: 5 },
    ];
    const second = await importFeed({ importid, rows });
    expect(second).toMatchObject({
      status: 201,
      body: { status: 'completed', counts: { total: 3, done: 3, applied: 1, unchanged: 1, conflicted: 1 }, errors: [{ row: 3, outcome: 'conflicted', code: 'qty_changed' }] },
    });
    expect(await batch(one)).toMatchObject({ qty: 12 });
    expect(await batch(two)).toMatchObject({ qty: 4, eta: '2027-06-01' });
    expect(await invoke('GET /imports/{importid}', { pathParameters: { importid } })).toMatchObject({ status: 200, body: second.body });
    expect(await importFeed({ importid, rows })).toMatchObject({ status: 200, body: second.body });
    expect(await importFeed({ importid, rows, dry_run: true })).toMatchObject({ status: 409, body: { code: 'import_exists' } });
    expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
  });

  it('fails before any row is applied when a row is refused, and keeps the refused rows by number', async () => {
    const ref = uniqueId('b');
    const importid = uniqueId('feed');
    const answer = await importFeed({ importid, rows: [{ ref, sku: 'LAMP', qty: 1, eta: null }, { ref: uniqueId('b'), sku: 'LAMP', qty: 1, eta: null, colour: 'red' }] });
    expect(answer).toMatchObject({
      status: 201,
      body: { status: 'failed', counts: { total: 2, done: 0, invalid: 1 }, errors: [{ row: 2, outcome: 'invalid', code: 'validation_failed', message: 'colour is not a field of a row' }] },
    });
    expect((await invoke('GET /batches/{ref}', { pathParameters: { ref } })).status).toBe(404);
  });

  it('sent twice at once, applies each row once and counts each chunk once', async () => {
    const sku = uniqueId('SKU');
    const refs = [uniqueId('b'), uniqueId('b'), uniqueId('b')];
    for (const ref of refs) expect((await invoke('POST /add_batch', { body: { ref, sku, qty: 1, eta: null } })).status).toBe(201);
    const rows = Array.from({ length: IMPORT_CHUNK_ROWS + 5 }, (_, index) => ({ ref: refs[index % 3], sku, qty: index + 2, eta: null }));
    const importid = uniqueId('feed');

    const answers = await Promise.all([importFeed({ importid, rows }), importFeed({ importid, rows })]);

    expect(answers.map(({ status }) => status).sort()).toEqual([200, 201]);
    const read = await invoke('GET /imports/{importid}', { pathParameters: { importid } });
    expect(read.body).toMatchObject({ status: 'completed', counts: { total: rows.length, done: rows.length } });
    for (const [index, ref] of refs.entries()) {
      const last = Math.max(...rows.flatMap((row, at) => (at % 3 === index ? [row.qty] : [])));
      expect(await batch(ref as string)).toMatchObject({ qty: last });
    }
    expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
  });

  it('cut off halfway, is finished by its repeat, each row applied once', async () => {
    const refs = [uniqueId('b'), uniqueId('b')];
    const sku = uniqueId('SKU');
    for (const ref of refs) expect((await invoke('POST /add_batch', { body: { ref, sku, qty: 1, eta: null } })).status).toBe(201);
    const rows = Array.from({ length: IMPORT_CHUNK_ROWS + 4 }, (_, index) => ({ ref: refs[index % 2], sku, qty: index + 2, eta: null }));
    const importid = uniqueId('feed');
    // The store stops answering after the first chunk and three rows of the second have changed their batches.
    let changes = 0;
    const failingAfterChanges = (repository: DynamoDbBatchRepository): DynamoDbBatchRepository => {
      const failing: DynamoDbBatchRepository = Object.assign(Object.create(repository) as DynamoDbBatchRepository, {
        withDeadline: () => failing,
        forImportChunk: (claim: ImportChunkClaim) => failingAfterChanges(repository.forImportChunk(claim)),
        changeBatch: (...args: Parameters<DynamoDbBatchRepository['changeBatch']>) => {
          if (++changes > IMPORT_CHUNK_ROWS + 3) return Promise.reject(new StoreUnavailable('The store did not answer'));
          return repository.changeBatch(...args);
        },
      });
      return failing;
    };
    expect((await importFeed({ importid, rows }, serviceOver(failingAfterChanges(table.repository())))).status).toBe(503);
    expect((await invoke('GET /imports/{importid}', { pathParameters: { importid } })).body).toMatchObject({ status: 'running', counts: { done: IMPORT_CHUNK_ROWS } });

    const finished = await importFeed({ importid, rows });

    expect(finished).toMatchObject({ status: 200, body: { status: 'completed', counts: { total: rows.length, done: rows.length, applied: rows.length } } });
    // Each batch has the qty of the last row that names it.
    expect(await batch(refs[0] as string)).toMatchObject({ qty: rows.length + 1 });
    expect(await batch(refs[1] as string)).toMatchObject({ qty: rows.length });
    expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
  });
});

describe('a count at a place in an import', () => {
  it('spreads over the batches in stock at the place, and cut off between them, is finished by its repeat as it was planned', async () => {
    const sku = uniqueId('SKU');
    const [one, two] = [uniqueId('b'), uniqueId('b')];
    for (const [ref, qty] of [[one, 4], [two, 3]] as const) expect((await invoke('POST /add_batch', { body: { ref, sku, qty, eta: null } })).status).toBe(201);
    const importid = uniqueId('feed');
    const rows = [{ sku, location: 'default', on_hand: 1, counted_at: new Date().toISOString() }];
    // The 6 short come off the first batch, which has the most units free, and then the second; the store stops answering after the first.
    let changes = 0;
    const failingAfterOne = (repository: DynamoDbBatchRepository): DynamoDbBatchRepository => {
      const failing: DynamoDbBatchRepository = Object.assign(Object.create(repository) as DynamoDbBatchRepository, {
        withDeadline: () => failing,
        forImportChunk: (claim: ImportChunkClaim) => failingAfterOne(repository.forImportChunk(claim)),
        changeBatch: (...args: Parameters<DynamoDbBatchRepository['changeBatch']>) =>
          ++changes > 1 ? Promise.reject(new StoreUnavailable('The store did not answer')) : repository.changeBatch(...args),
      });
      return failing;
    };
    expect((await importFeed({ importid, rows }, serviceOver(failingAfterOne(table.repository())))).status).toBe(503);
    expect([(await batch(one)).qty, (await batch(two)).qty]).toEqual([0, 3]);

    const finished = await importFeed({ importid, rows });

    expect(finished).toMatchObject({ status: 200, body: { status: 'completed', counts: { done: 1, applied: 1 } } });
    expect([(await batch(one)).qty, (await batch(two)).qty]).toEqual([0, 1]);
    expect(await table.repository().placeCount(importid, 1)).toEqual([{ ref: one, qty: 0 }, { ref: two, qty: 1 }]);
    expect(await table.repository().adjustment(`${importid}#1#${two}`)).toMatchObject({ reason: 'counted', before: 3, after: 1 });
    expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
  });
});

describe('a count at a place as of a moment before its batches changed', () => {
  it('takes in the batches emptied since and leaves out those that arrived since, as their records of changes say', async () => {
    const sku = uniqueId('SKU');
    const [kept, emptied, arriving] = [uniqueId('b'), uniqueId('b'), uniqueId('b')];
    for (const [ref, qty, eta] of [[kept, 10, null], [emptied, 5, null], [arriving, 20, '2030-01-01']] as const) {
      expect((await invoke('POST /add_batch', { body: { ref, sku, qty, eta } })).status).toBe(201);
    }
    // The count's moment, then changes a moment later: the store records them at its clock's millisecond.
    const countedAt = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await invoke('POST /adjustments', { body: { adjustmentid: uniqueId('lost'), ref: emptied, reason: 'lost', delta: -5 } })).status).toBe(201);
    expect((await invoke('PATCH /batches/{ref}', { pathParameters: { ref: arriving }, body: { eta: null } })).status).toBe(200);

    const answer = await importFeed({ importid: uniqueId('feed'), rows: [{ sku, location: 'default', on_hand: 15, counted_at: countedAt }] });

    expect(answer).toMatchObject({ status: 201, body: { counts: { unchanged: 1 } } });
    expect([(await batch(kept)).qty, (await batch(emptied)).qty, (await batch(arriving)).qty]).toEqual([10, 0, 20]);
  });
});

describe('a claim on a chunk of an import', () => {
  const running = async (importid: string) => {
    await table.repository().createImport({ importid, feed: 'rows', dryRun: false, validateFirst: true, status: 'running', counts: { total: 1, done: 0, applied: 0, unchanged: 0, conflicted: 0, stale: 0, invalid: 0, failed: 0 }, refused: 0, startedAt: new Date().toISOString() });
  };

  it('that another send took refuses each write of a batch in that write, with nothing of it made, and records nothing', async () => {
    const repository = table.repository();
    const importid = uniqueId('feed');
    await running(importid);
    const taken = (await repository.claimImportChunk(importid, 1)) as ImportChunkClaim;
    const holding = (await repository.claimImportChunk(importid, 1)) as ImportChunkClaim;
    const [refused, added] = [uniqueId('b'), uniqueId('b')];
    const sku = uniqueId('SKU');

    await expect(repository.forImportChunk(taken).addBatch({ ref: refused, sku, qty: 5, eta: null, available: 5 })).rejects.toThrow(ImportChunkTaken);
    await repository.forImportChunk(holding).addBatch({ ref: added, sku, qty: 5, eta: null, available: 5 });
    const batch = await repository.batch(added);
    await expect(repository.forImportChunk(taken).changeBatch(batch!, { ...batch!, qty: 9, available: 9 })).rejects.toThrow(ImportChunkTaken);
    expect(await repository.recordImportChunk(taken, { firstRow: 1, outcomes: ['applied'], errors: [] })).toBe(false);

    expect(await repository.batch(refused)).toBeUndefined();
    expect(await repository.batch(added)).toMatchObject({ qty: 5 });
    expect((await repository.importRecord(importid))?.counts).toMatchObject({ done: 0 });
  });

  it('saves the plan of a count at a place once, and none under a claim another send took', async () => {
    const repository = table.repository();
    const importid = uniqueId('feed');
    await running(importid);
    const taken = (await repository.claimImportChunk(importid, 1)) as ImportChunkClaim;
    const holding = (await repository.claimImportChunk(importid, 1)) as ImportChunkClaim;

    await expect(repository.forImportChunk(taken).savePlaceCount(importid, 1, [{ ref: 'b1', qty: 2 }])).rejects.toThrow(ImportChunkTaken);
    expect(await repository.placeCount(importid, 1)).toBeUndefined();
    expect(await repository.forImportChunk(holding).savePlaceCount(importid, 1, [{ ref: 'b1', qty: 3 }])).toEqual([{ ref: 'b1', qty: 3 }]);
    expect(await repository.forImportChunk(holding).savePlaceCount(importid, 1, [{ ref: 'b2', qty: 9 }])).toEqual([{ ref: 'b1', qty: 3 }]);
    expect(await repository.placeCount(importid, 1)).toEqual([{ ref: 'b1', qty: 3 }]);
  });

  it('ends when its chunk is recorded: no write under it, and no claim after it', async () => {
    const repository = table.repository();
    const importid = uniqueId('feed');
    await running(importid);
    const claim = (await repository.claimImportChunk(importid, 1)) as ImportChunkClaim;
    expect(await repository.recordImportChunk(claim, { firstRow: 1, outcomes: ['applied'], errors: [] })).toBe(true);

    await expect(repository.forImportChunk(claim).addBatch({ ref: uniqueId('b'), sku: uniqueId('SKU'), qty: 5, eta: null, available: 5 })).rejects.toThrow(ImportChunkTaken);
    expect(await repository.claimImportChunk(importid, 1)).toBeUndefined();
    expect((await repository.importRecord(importid))?.counts).toMatchObject({ done: 1, applied: 1 });
  });
});

describe('the read of a chunk of rows', () => {
  it('describes each batch as its last change left it, with the row that added it, says which change ids have an adjustment, and names a ref of no batch', async () => {
    const [patched, imported, missing] = [uniqueId('b'), uniqueId('b'), uniqueId('b')];
    const sku = uniqueId('SKU');
    expect((await invoke('POST /add_batch', { body: { ref: patched, sku, qty: 5, eta: null } })).status).toBe(201);
    expect((await invoke('PATCH /batches/{ref}', { pathParameters: { ref: patched }, body: { qty: 8, eta: '2027-03-01' } })).status).toBe(200);
    const importid = uniqueId('feed');
    expect((await importFeed({ importid, rows: [{ ref: imported, sku, qty: 3, eta: null }, { ref: patched, qty: 6, counted_at: new Date().toISOString() }] })).status).toBe(201);

    const read = await table.repository().importRowsRead([patched, imported, missing], [`${importid}#1`, `${importid}#2`]);

    expect(read.batches).toEqual(new Map([
      [patched, { sku, location: 'default', qty: 6, eta: '2027-03-01', changedAt: expect.any(String) }],
      [imported, { sku, location: 'default', qty: 3, eta: null, changedAt: expect.any(String), addedBy: `${importid}#1` }],
      [missing, null],
    ]));
    expect(read.adjusted).toEqual(new Map([[`${importid}#1`, false], [`${importid}#2`, true]]));
  });
});

describe('the rows of an import, read through the route', () => {
  it('list every row by number across chunks and pages, with why a row did not apply, and refuse a cursor the service did not make', async () => {
    const sku = uniqueId('SKU');
    const ref = uniqueId('b');
    expect((await invoke('POST /add_batch', { body: { ref, sku, qty: 4, eta: null } })).status).toBe(201);
    const rows = Array.from({ length: IMPORT_CHUNK_ROWS + 3 }, (_, index) => (index === IMPORT_CHUNK_ROWS + 1 ? { ref, sku, qty: 6, eta: null, expected_qty: 5 } : { ref: uniqueId('b'), sku, qty: 1, eta: null }));
    const importid = uniqueId('feed');
    expect((await importFeed({ importid, rows })).status).toBe(201);

    const listed: Record<string, unknown>[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await invoke('GET /imports/{importid}/rows', { pathParameters: { importid }, queryStringParameters: { limit: '10', ...(cursor === undefined ? {} : { cursor }) } });
      expect(page.status).toBe(200);
      const body = page.body as { rows: Record<string, unknown>[]; cursor?: string };
      listed.push(...body.rows);
      cursor = body.cursor;
      pages++;
    } while (cursor !== undefined);

    expect(pages).toBe(3);
    expect(listed.map(({ row }) => row)).toEqual(rows.map((_, index) => index + 1));
    expect(listed[IMPORT_CHUNK_ROWS + 1]).toEqual({ row: IMPORT_CHUNK_ROWS + 2, outcome: 'conflicted', code: 'qty_changed', message: expect.stringContaining('not the 5 expected') });
    expect(listed.filter(({ outcome }) => outcome === 'applied')).toHaveLength(rows.length - 1);
    expect(await invoke('GET /imports/{importid}/rows', { pathParameters: { importid }, queryStringParameters: { cursor: 'made-up' } })).toMatchObject({ status: 400, body: { code: 'validation_failed' } });
    expect(await invoke('GET /imports/{importid}/rows', { pathParameters: { importid: uniqueId('feed') } })).toMatchObject({ status: 404, body: { code: 'unknown_import' } });
  });
});

describe('the rows of an import its check failed, read through the route', () => {
  it('are the rows the check refused, by number, a page at a time', async () => {
    const sku = uniqueId('SKU');
    const rows = [{ ref: uniqueId('b'), sku, qty: 1, eta: null }, { ref: uniqueId('b'), sku, qty: 0, eta: null }, { ref: uniqueId('b'), sku, qty: 1, eta: null, location: 'nowhere' }];
    const importid = uniqueId('feed');
    expect((await importFeed({ importid, rows })).body).toMatchObject({ status: 'failed' });

    const first = await invoke('GET /imports/{importid}/rows', { pathParameters: { importid }, queryStringParameters: { limit: '1' } });
    const { cursor } = first.body as { cursor: string };
    const second = await invoke('GET /imports/{importid}/rows', { pathParameters: { importid }, queryStringParameters: { limit: '1', cursor } });

    expect(first.body).toMatchObject({ rows: [{ row: 2, outcome: 'invalid', code: 'validation_failed' }] });
    expect(second.body).toEqual({ importid, rows: [{ row: 3, outcome: 'invalid', code: 'unknown_location', message: expect.stringContaining('nowhere') }] });
  });
});
