import { expect } from 'vitest';
import { routeKeys, splitRouteKey } from '../../functions/http/route-keys';
import { type ReceivedResponse, responseProblems } from '../support/openapi-responses';
import { type RawAnswer, type RawRequest, sendRaw } from './raw-request';

/*
 * Every answer the end-to-end tests get from the service goes through here and must be one that
 * docs/openapi.json documents, so an undocumented status, header or field fails the test that
 * provoked it, whatever that test itself checks.
 */

const ROUTE_KEYS: readonly string[] = [...routeKeys.batches, ...routeKeys.allocations];

const isParameter = (segment: string) => /^\{.+\}$/.test(segment);

/** A path as sent fits a route's template segment by segment: a literal one equal, a `{name}` one any segment but an empty one. */
const fits = (template: string, rawPath: string) => {
  const expected = template.split('/');
  const sent = rawPath.split('/');
  return sent.length === expected.length && expected.every((segment, index) => (isParameter(segment) ? sent[index] !== '' : sent[index] === segment));
};

/**
 * The routes whose documentation the answer must follow: the route of the method and path; for a
 * path whose routes take other methods, each of them (each documents the 405); for a path no route
 * fits, every route (each documents the 404).
 */
const routeKeysOf = (method: string, rawPath: string): readonly string[] => {
  const onPath = ROUTE_KEYS.filter((routeKey) => fits(splitRouteKey(routeKey).path, rawPath));
  const matched = onPath.filter((routeKey) => splitRouteKey(routeKey).method === method);
  if (matched.length > 0) return matched;
  return onPath.length > 0 ? onPath : ROUTE_KEYS;
};

const expectDocumented = (method: string, rawPath: string, answer: ReceivedResponse) => {
  for (const routeKey of routeKeysOf(method, rawPath)) {
    expect(responseProblems(routeKey, answer), `${method} ${rawPath} answered ${answer.status}, which ${routeKey} does not document so`).toEqual([]);
  }
};

/** Statuses whose answer has no body, which a Response must be made without. */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/** `fetch`, and the answer checked against the document; its body can still be read once, as fetch's can. */
export const fetchDocumented = async (url: string, init: RequestInit = {}): Promise<Response> => {
  const response = await fetch(url, init);
  const bytes = new Uint8Array(await response.arrayBuffer());
  expectDocumented(init.method ?? 'GET', new URL(url).pathname, {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: new TextDecoder().decode(bytes),
  });
  return new Response(NULL_BODY_STATUSES.has(response.status) ? null : bytes, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
};

/** `sendRaw`, and the answer checked against the document by the path as sent, query aside. */
export const sendRawDocumented = async (baseUrl: string, request: RawRequest & { readonly method: string }): Promise<RawAnswer> => {
  const answer = await sendRaw(baseUrl, request);
  const headers = Object.fromEntries(Object.entries(answer.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]));
  expectDocumented(request.method, request.path.split('?', 1)[0] ?? '', { status: answer.status, headers, body: answer.text });
  return answer;
};

/** `fetchDocumented` for a Request, as the typed client sends it (client/index.ts). */
export const fetchRequestDocumented = async (request: Request): Promise<Response> =>
  fetchDocumented(request.url, {
    method: request.method,
    headers: request.headers,
    body: request.body === null ? undefined : await request.arrayBuffer(),
  });
