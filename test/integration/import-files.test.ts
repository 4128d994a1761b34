import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMPORT_CHUNK_ROWS } from '../../domain/imports';
import { createBatchesHandler } from '../../functions/batches';
import { routeKeys } from '../../functions/http/route-keys';
import { UPLOAD_SECONDS } from '../../functions/imports/uploads';
import { runFileImport } from '../../local/import-runs';
import { createLocalServer } from '../../local/server';
import { type LocalUploads, localUploads } from '../../local/uploads';
import { checkInvariants } from '../../tools/invariants';
import { type TestTable, createTestTable, uniqueId } from '../support/dynamodb';

/*
 * Imports of files (docs/api.md, "Imports") as `npm start` serves them, over DynamoDB Local: the
 * import answers where to send its file, the file is sent as S3 takes one (a PUT with
 * `If-None-Match: *`), and once it has arrived the import runs, checked and then applied, as the
 * stack's state machine runs one.
 */

let table: TestTable;
let directory: string;
let uploads: LocalUploads;
let baseUrl: string;
const runs: Promise<void>[] = [];
let server: ReturnType<typeof createLocalServer>;

beforeAll(async () => {
  table = await createTestTable();
  directory = await mkdtemp(join(tmpdir(), 'import-files-'));
  const repository = table.repository();
  uploads = localUploads(() => baseUrl, directory, (importid, path, digest) => {
    runs.push(runFileImport(importid, path, digest, repository));
  });
  server = createLocalServer({ batches: { handler: createBatchesHandler(repository, uploads.target), routeKeys: routeKeys.batches } }, {}, uploads.receive);
  await new Promise<void>((listening) => server.listen(0, listening));
  baseUrl = `http://localhost:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((closed) => server.close(closed));
  await rm(directory, { recursive: true, force: true });
  await table.drop();
});

const post = async (path: string, body: unknown) => {
  const response = await fetch(`${baseUrl}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};
const read = async (path: string) => (await fetch(`${baseUrl}${path}`)).json() as Promise<Record<string, any>>;
const send = (upload: { url: string; method: string; headers: Record<string, string> }, file: string) => fetch(upload.url, { method: upload.method, headers: upload.headers, body: file });
/** Waits for the runs of the files sent so far. */
const ran = async () => {
  await Promise.all(runs.splice(0));
};

const csvOf = (rows: readonly string[]) => `ref,sku,qty,eta,location\r\n${rows.join('\r\n')}\r\n`;

describe('an import of a file', () => {
  it('awaits its file, then checks every row, applies each once and completes', async () => {
    const sku = uniqueId('SKU');
    const refs = Array.from({ length: IMPORT_CHUNK_ROWS * 2 + 3 }, () => uniqueId('b'));
    const importid = uniqueId('feed');
    const opened = await post('/imports', { importid, format: 'csv' });
    expect(opened).toMatchObject({ status: 201, body: { importid, format: 'csv', status: 'awaiting_upload', counts: { total: 0 }, upload: { method: 'PUT', headers: { 'If-None-Match': '*' } } } });
    expect(Date.parse(opened.body.upload.expires_at)).toBeGreaterThan(Date.parse(opened.body.started_at));

    const sent = await send(opened.body.upload, csvOf(refs.map((ref, index) => `${ref},${sku},${index + 1},,`)));
    expect(sent.status).toBe(200);
    expect(sent.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
    await ran();

    const done = await read(`/imports/${importid}`);
    expect(done).toMatchObject({ status: 'completed', counts: { total: refs.length, done: refs.length, applied: refs.length }, errors: [] });
    expect(done.upload).toBeUndefined();
    expect(await read(`/batches/${refs[7]}`)).toMatchObject({ sku, qty: 8, eta: null });
    expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
  });

  it('keeps the first file it gets: a second is refused as S3 refuses it (412), and a repeat of the request answers the import', async () => {
    const importid = uniqueId('feed');
    const ref = uniqueId('b');
    const { body } = await post('/imports', { importid, format: 'jsonl' });
    expect((await send(body.upload, `{"ref":"${ref}","sku":"LAMP","qty":4,"eta":null}\n`)).status).toBe(200);
    expect((await send(body.upload, `{"ref":"${ref}","sku":"LAMP","qty":9,"eta":null}\n`)).status).toBe(412);
    await ran();

    const repeat = await post('/imports', { importid, format: 'jsonl' });
    expect(repeat).toMatchObject({ status: 200, body: { status: 'completed', counts: { total: 1, applied: 1 } } });
    expect(repeat.body.upload).toBeUndefined();
    expect(await read(`/batches/${ref}`)).toMatchObject({ qty: 4 });
    expect((await post('/imports', { importid, format: 'csv' })).status).toBe(409);
  });

  it('refuses an upload to a URL it did not sign, one expired, and one without its headers', async () => {
    const importid = uniqueId('feed');
    const { body } = await post('/imports', { importid, format: 'csv' });
    const file = csvOf([`${uniqueId('b')},LAMP,1,,`]);
    // Another first character of the signature, whichever it was.
    const forged = body.upload.url.replace(/signature=(.)/, (_: string, first: string) => `signature=${first === 'A' ? 'B' : 'A'}`);
    expect((await send({ ...body.upload, url: forged }, file)).status).toBe(403);
    const expired = await uploads.target(importid, Date.now() - (UPLOAD_SECONDS + 1) * 1000);
    expect((await send(expired, file)).status).toBe(403);
    expect((await send({ ...body.upload, headers: {} }, file)).status).toBe(403);
    expect(await read(`/imports/${importid}`)).toMatchObject({ status: 'awaiting_upload' });
  });

  it('fails, with nothing applied, on a file that is no feed, and names the row where it broke', async () => {
    const empty = uniqueId('feed');
    const { body } = await post('/imports', { importid: empty, format: 'csv' });
    await send(body.upload, '');
    const unclosed = uniqueId('feed');
    const ref = uniqueId('b');
    const second = await post('/imports', { importid: unclosed, format: 'csv' });
    await send(second.body.upload, csvOf([`${ref},LAMP,1,,`, `${uniqueId('b')},"LAMP,1,,`]));
    await ran();

    expect(await read(`/imports/${empty}`)).toMatchObject({ status: 'failed', file_refused: { message: 'The file is empty: a CSV feed starts with a header row' }, counts: { done: 0 } });
    expect(await read(`/imports/${unclosed}`)).toMatchObject({ status: 'failed', file_refused: { message: 'The file ends inside a quoted field: a closing quote is missing', row: 2 }, counts: { done: 0 } });
    expect((await fetch(`${baseUrl}/batches/${ref}`)).status).toBe(404);
  });

  it('run again on the same file, or the same file under another importid, changes nothing more', async () => {
    const sku = uniqueId('SKU');
    const rows = Array.from({ length: IMPORT_CHUNK_ROWS + 5 }, (_, index) => `{"ref":"${sku}-${index}","sku":"${sku}","qty":${index + 1},"eta":null}`);
    const file = `${rows.join('\n')}\n`;
    const first = uniqueId('feed');
    const opened = await post('/imports', { importid: first, format: 'jsonl' });
    await send(opened.body.upload, file);
    await ran();
    const done = await read(`/imports/${first}`);
    expect(done).toMatchObject({ status: 'completed', counts: { total: rows.length, applied: rows.length } });

    const record = await table.repository().importRecord(first);
    await runFileImport(first, uploads.fileOf(first), record?.file as string, table.repository());
    expect(await read(`/imports/${first}`)).toEqual(done);

    const again = uniqueId('feed');
    const reopened = await post('/imports', { importid: again, format: 'jsonl' });
    await send(reopened.body.upload, file);
    await ran();
    expect(await read(`/imports/${again}`)).toMatchObject({ status: 'completed', counts: { total: rows.length, applied: 0, unchanged: rows.length } });
    expect(await checkInvariants(table.documentClient, table.tableName)).toEqual([]);
  });

  it('by npm run import: sends the file, follows it to the end, prints the counts, and exits 1 when a row did not apply', async () => {
    const sku = uniqueId('SKU');
    const good = join(directory, `${uniqueId('feed')}.csv`);
    await writeFile(good, csvOf([`${uniqueId('b')},${sku},3,,`, `${uniqueId('b')},${sku},4,2027-01-01,`]));
    const applied = await command([good, '--url', baseUrl]);
    expect(applied).toMatchObject({ code: 0, stdout: expect.stringContaining('2 of 2 rows done: 2 applied, 0 unchanged') });
    // The same file again is the same import: it changes nothing more.
    expect(await command([good, '--url', baseUrl])).toMatchObject({ code: 0, stderr: expect.stringContaining('was made before') });

    const bad = join(directory, `${uniqueId('feed')}.jsonl`);
    await writeFile(bad, `{"ref":"${uniqueId('b')}","sku":"${sku}","qty":1,"eta":null}\n{"ref":"b","qty":1}\n`);
    const results = join(directory, `${uniqueId('results')}.jsonl`);
    const refused = await command([bad, '--url', baseUrl, '--no-validate-first', '--results', results]);
    expect(refused).toMatchObject({ code: 1, stdout: expect.stringMatching(/1 applied.*1 invalid[\s\S]*row 2: invalid[\s\S]*2 rows in/) });
    expect((await readFile(results, 'utf8')).trim().split('\n').map((line) => JSON.parse(line))).toEqual([
      { row: 1, outcome: 'applied' },
      { row: 2, outcome: 'invalid', code: 'validation_failed', message: expect.any(String) },
    ]);
    expect(await command([bad, '--colour'])).toMatchObject({ code: 2, stderr: expect.stringContaining('Usage: npm run import') });
  });
});

/** `npm run import` with `args`, as a person runs it: its exit code and what it wrote. */
const command = (args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    execFile(join('node_modules', '.bin', 'tsx'), ['tools/import.ts', ...args], (error, stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stdout, stderr }));
  });
