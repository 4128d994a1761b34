import { readFile } from 'node:fs/promises';
import type { HttpResult } from './route';

/** The text of docs/openapi.json, as `GET /openapi.json` answers it. */
export type OpenApiDocumentReader = () => Promise<string>;

/**
 * The document changes with each deploy, under the same URL: a client or cache may keep a copy,
 * but must ask again before using it.
 */
export const OPENAPI_DOCUMENT_CACHE_CONTROL = 'no-cache';

/**
 * Reads `file` at the first request that asks for it, then keeps its text for the life of the
 * instance: imported into the bundle, its 100-odd KB would be parsed at every cold start, and most
 * instances are never asked for it. A failed read is not kept, so the next request reads again.
 */
export const openApiDocumentFile = (file: URL): OpenApiDocumentReader => {
  let text: Promise<string> | undefined;
  return () =>
    (text ??= readFile(file, 'utf8').catch((error: unknown) => {
      text = undefined;
      throw error;
    }));
};

/** The document's text as it is: it is JSON already, and parsing it only to write it again would cost every request. */
export const openApiDocumentResult = (document: string): HttpResult => ({
  statusCode: 200,
  headers: { 'Content-Type': 'application/json', 'Cache-Control': OPENAPI_DOCUMENT_CACHE_CONTROL },
  body: document,
});
