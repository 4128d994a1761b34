import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { access, rename, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { MAX_FEED_BYTES } from '../functions/imports/feed';
import { UPLOAD_HEADERS, UPLOAD_SECONDS, type UploadTarget, importFileKey, importidOfFileKey } from '../functions/imports/uploads';

/*
 * The store of import files that `npm start` serves, in the place of the stack's bucket: the same
 * upload (a URL that takes one PUT of the file, with `If-None-Match: *`, until it expires), the file
 * kept in a directory of its own, and, once it has arrived, the import run on it. What S3 answers,
 * this answers: 200 with the file's ETag, 403 for a URL it did not sign or that has expired, 412
 * for an import that has its file, 400 for a file longer than any feed.
 */

const UPLOADS_PATH = '/uploads/';

export interface LocalUploads {
  /** The uploads the batches function answers with. */
  readonly target: UploadTarget;
  /** Takes the request when it is a PUT to an upload's URL, and answers it: its status. */
  receive(request: IncomingMessage, response: ServerResponse, path: string, query: string): Promise<number> | undefined;
  /** Where an import's file is kept once it has arrived. */
  fileOf(importid: string): string;
}

/** Called once a file has arrived, with its importid, where it is kept and its digest (an MD5, as S3's ETag of one PUT). */
export type FileArrived = (importid: string, path: string, digest: string) => void;

const answer = (response: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): number => {
  response.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify({ message }));
  return status;
};

/** The body, written to `path` through a temporary file, and its MD5; none when it is longer than `maxBytes`. */
const keepBody = async (request: IncomingMessage, path: string, maxBytes: number): Promise<string | undefined> => {
  const partial = `${path}.${randomBytes(4).toString('hex')}.partial`;
  const md5 = createHash('md5');
  let bytes = 0;
  try {
    await pipeline(
      request,
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          bytes += chunk.length;
          if (bytes > maxBytes) throw new RangeError('longer than a feed');
          md5.update(chunk);
          yield chunk;
        }
      },
      createWriteStream(partial, { flags: 'wx' }),
    );
  } catch (error) {
    await rm(partial, { force: true });
    if (error instanceof RangeError) return undefined;
    throw error;
  }
  await rename(partial, path);
  return md5.digest('hex');
};

const exists = (path: string) => access(path).then(() => true, () => false);

/** Uploads to `baseUrl()` (the server's own, once it listens), kept in `directory`, each URL signed with a secret of this process's. */
export const localUploads = (baseUrl: () => string, directory: string, arrived: FileArrived): LocalUploads => {
  const secret = randomBytes(32);
  const signatureOf = (key: string, expires: string) => createHmac('sha256', secret).update(`${key}\n${expires}`).digest();
  const fileOf = (importid: string) => join(directory, importFileKey(importid).replace('/', '-'));
  const arriving = new Set<string>();
  return {
    target: async (importid, now) => {
      const key = importFileKey(importid);
      const expires = String(Math.floor(now / 1000) + UPLOAD_SECONDS);
      return {
        url: `${baseUrl()}${UPLOADS_PATH}${key}?expires=${expires}&signature=${signatureOf(key, expires).toString('base64url')}`,
        method: 'PUT',
        headers: UPLOAD_HEADERS,
        expiresAt: new Date(Number(expires) * 1000).toISOString(),
      };
    },
    fileOf,
    receive: (request, response, path, query) => {
      if (!path.startsWith(UPLOADS_PATH) || request.method !== 'PUT') return undefined;
      return (async () => {
        const key = path.slice(UPLOADS_PATH.length);
        const importid = importidOfFileKey(key);
        const params = new URLSearchParams(query);
        const expires = params.get('expires') ?? '';
        const signature = Buffer.from(params.get('signature') ?? '', 'base64url');
        const expected = signatureOf(key, expires);
        request.on('error', () => undefined);
        if (importid === undefined || signature.length !== expected.length || !timingSafeEqual(signature, expected)) {
          request.resume();
          return answer(response, 403, 'This URL is not one this server signed for an upload');
        }
        if (Number(expires) * 1000 < Date.now()) {
          request.resume();
          return answer(response, 403, 'This upload URL has expired: send POST /imports again for a new one');
        }
        if (request.headers['if-none-match'] !== '*') {
          request.resume();
          return answer(response, 403, 'An upload sends the headers its URL came with: If-None-Match: *');
        }
        const file = fileOf(importid);
        if (arriving.has(importid) || (await exists(file))) {
          request.resume();
          return answer(response, 412, 'This import has its file: an import is one file');
        }
        arriving.add(importid);
        try {
          const digest = await keepBody(request, file, MAX_FEED_BYTES);
          if (digest === undefined) return answer(response, 400, `The file is longer than a feed may be: ${MAX_FEED_BYTES} bytes`);
          const status = answer(response, 200, 'Stored', { ETag: `"${digest}"` });
          arrived(importid, file, digest);
          return status;
        } finally {
          arriving.delete(importid);
        }
      })();
    },
  };
};
