/**
 * `npm run import -- FILE [--url URL] [--dry-run] [--results OUT]`: imports a feed file (docs/api.md,
 * "Imports"): creates the import, sends the file where the answer says, shows its progress until it
 * ends, and writes what each row did to OUT when asked.
 * Exit 0 when every row applied (or was unchanged), 1 when any did not or the import failed, 2 for a
 * wrong command or a service that could not be reached (tools/import/command.ts says which options).
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type AllocationClient, createAllocationClient } from '../client/index';
import { type Import, type Options, USAGE, UsageError, allApplied, parseOptions, progressLine, summary } from './import/command';

const POLL_MS = 500;

/** The import could not be made, sent or followed: said without the usage. */
class ImportStopped extends Error {}

const digestOf = async (file: string): Promise<string> => {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
};

/** Sends the file to the upload's URL as one PUT of its length (S3 takes no chunked upload), reporting the bytes sent. */
const upload = (file: string, bytes: number, { url, method, headers }: NonNullable<Import['upload']>, sent: (bytes: number) => void): Promise<void> =>
  new Promise((resolve, reject) => {
    const target = new URL(url);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(target, { method, headers: { ...headers, 'Content-Length': String(bytes) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const status = response.statusCode ?? 0;
        if (status >= 200 && status < 300) resolve();
        else reject(new ImportStopped(`The upload was refused (${status}): ${Buffer.concat(chunks).toString('utf8').slice(0, 500)}`));
      });
    });
    request.on('error', reject);
    let total = 0;
    const stream = createReadStream(file);
    stream.on('data', (chunk) => {
      total += chunk.length;
      sent(total);
    });
    stream.on('error', reject);
    stream.pipe(request);
  });

/** Writes what each row of the import did to `file`, a JSON line a row, reading them a page at a time; answers how many. */
const writeResults = async (client: AllocationClient, importid: string, file: string): Promise<number> => {
  const out = createWriteStream(file);
  let written = 0;
  let cursor: string | undefined;
  do {
    const { data: page, error } = await client.GET('/imports/{importid}/rows', { params: { path: { importid }, query: { limit: '100', ...(cursor === undefined ? {} : { cursor }) } } });
    if (!page) throw new ImportStopped(`GET /imports/${importid}/rows was refused: ${JSON.stringify(error)}`);
    for (const row of page.rows) if (!out.write(`${JSON.stringify(row)}\n`)) await once(out, 'drain');
    written += page.rows.length;
    cursor = page.cursor;
  } while (cursor !== undefined);
  out.end();
  await once(out, 'finish');
  return written;
};

const run = async (options: Options): Promise<number> => {
  const { size } = await stat(options.file).catch(() => {
    throw new ImportStopped(`No file ${options.file}`);
  });
  const importid = options.importid ?? `${basename(options.file)}-${(await digestOf(options.file)).slice(0, 16)}`;
  const client = createAllocationClient({ baseUrl: options.url });
  const { data: opened, error } = await client.POST('/imports', {
    body: { importid, format: options.format, dry_run: options.dryRun, validate_first: options.validateFirst },
  });
  if (!opened) throw new ImportStopped(`POST /imports was refused: ${JSON.stringify(error)}`);
  const terminal = process.stderr.isTTY === true;
  const show = (line: string) => (terminal ? process.stderr.write(`\r\x1b[2K${line}`) : undefined);
  if (opened.upload) {
    await upload(options.file, size, opened.upload, (bytes) => show(`sending ${options.file}: ${Math.round((bytes / Math.max(size, 1)) * 100)}%`));
  } else if (opened.status === 'awaiting_upload') {
    throw new ImportStopped('The import awaits its file, and the service gave no upload for it');
  } else process.stderr.write(`import ${importid} was made before: showing it as it stands (--importid to import the file again)\n`);
  const started = performance.now();
  let lastPrinted = 0;
  for (;;) {
    const { data: current, error: readError } = await client.GET('/imports/{importid}', { params: { path: { importid } } });
    if (!current) throw new ImportStopped(`GET /imports/${importid} was refused: ${JSON.stringify(readError)}`);
    const elapsed = (performance.now() - started) / 1000;
    const line = progressLine(current, elapsed);
    if (terminal) show(line);
    else if (elapsed - lastPrinted >= 5) {
      process.stderr.write(`${line}\n`);
      lastPrinted = elapsed;
    }
    if (current.status === 'completed' || current.status === 'failed') {
      if (terminal) process.stderr.write('\n');
      console.log(summary(current).join('\n'));
      if (options.results !== undefined) console.log(`  what each row did: ${await writeResults(client, importid, options.results)} rows in ${options.results}`);
      return allApplied(current) ? 0 : 1;
    }
    await sleep(POLL_MS);
  }
};

const main = async (): Promise<number> => {
  try {
    const options = parseOptions(process.argv.slice(2));
    if (options === 'help') {
      process.stdout.write(USAGE);
      return 0;
    }
    return await run(options);
  } catch (error) {
    if (error instanceof UsageError) process.stderr.write(`${error.message}\n\n${USAGE}`);
    else process.stderr.write(`${error instanceof ImportStopped ? '' : 'Cannot import: '}${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
};

// exitCode rather than exit(): output to a pipe is written asynchronously and exit() would cut it.
main().then((code) => {
  process.exitCode = code;
});
