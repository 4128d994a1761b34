import { setTimeout as sleep } from 'node:timers/promises';
import type { AddressInfo } from 'node:net';
import type { BatchRepository } from '../../../domain/ports';
import { createAllocationsHandler } from '../../../functions/allocations';
import { createBatchesHandler } from '../../../functions/batches';
import type { HttpEvent } from '../../../functions/http/route';
import { routeKeys } from '../../../functions/http/route-keys';
import { createLocalServer } from '../../../local/server';
import { lambdaContext, postEvent } from '../../support/events';

/** A response as a client reads it: the body parsed when it is JSON, the text otherwise. */
export interface Answer {
  readonly status: number;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
  readonly text: string;
}

export type Route = '/allocate' | '/add_batch';

export interface Service {
  allocate(body: unknown): Promise<Answer>;
  addBatch(body: unknown): Promise<Answer>;
}

export interface HandlerService extends Service {
  /** Any event, for bodies that are not JSON at all, arrive with another Content-Type, or in base64. */
  send(route: Route, event: HttpEvent): Promise<Answer>;
  /** Any event, to the handler that serves its route key, as API Gateway routes it. */
  invoke(event: HttpEvent): Promise<Answer>;
}

export interface LocalService extends Service {
  /** Any request; `body`, when given, is sent as JSON. `path` is sent as given: percent-encode what needs it. */
  request(method: string, path: string, body?: unknown): Promise<Answer>;
  close(): Promise<void>;
}

const answer = (status: number, headers: Record<string, string>, text: string): Answer => ({
  status,
  headers,
  body: headers['content-type']?.startsWith('application/json') ? JSON.parse(text) : text,
  text,
});

const handlersOver = (repository: BatchRepository) => {
  const batches = createBatchesHandler(repository);
  const allocations = createAllocationsHandler(repository);
  return { batches, allocations, byRoute: { '/allocate': allocations, '/add_batch': batches } };
};

const isBatchesRoute = (routeKey: string) => (routeKeys.batches as readonly string[]).includes(routeKey);

/** Both Lambda handlers over one repository, called as Lambda calls them. */
export const serviceOver = (repository: BatchRepository): HandlerService => {
  const handlers = handlersOver(repository);
  const call = async (handler: typeof handlers.batches, event: HttpEvent): Promise<Answer> => {
    const result = await handler(event, lambdaContext());
    const headers = Object.fromEntries(Object.entries(result.headers ?? {}).map(([name, value]) => [name.toLowerCase(), String(value)]));
    return answer(result.statusCode ?? 200, headers, result.body ?? '');
  };
  const send = (route: Route, event: HttpEvent) => call(handlers.byRoute[route], event);
  return {
    allocate: (body) => send('/allocate', postEvent('/allocate', body)),
    addBatch: (body) => send('/add_batch', postEvent('/add_batch', body)),
    send,
    invoke: (event) => call(isBatchesRoute(event.routeKey) ? handlers.batches : handlers.allocations, event),
  };
};

/** Both handlers behind the local server, reached over HTTP on loopback as a developer's load test reaches them. */
export const startLocalService = async (repository: BatchRepository): Promise<LocalService> => {
  const handlers = handlersOver(repository);
  const server = createLocalServer({
    batches: { handler: handlers.batches, routeKeys: routeKeys.batches },
    allocations: { handler: handlers.allocations, routeKeys: routeKeys.allocations },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const request = async (method: string, path: string, body?: unknown): Promise<Answer> => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    return answer(response.status, Object.fromEntries(response.headers), await response.text());
  };
  return {
    allocate: (body) => request('POST', '/allocate', body),
    addBatch: (body) => request('POST', '/add_batch', body),
    request,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};

/** A 503 as the contract words it: Retry-After in seconds, and a body of a message and the request id only. */
export const isRetryLater = (answer: Pick<Answer, 'status' | 'headers' | 'body'>): boolean =>
  answer.status === 503 &&
  Number(answer.headers['retry-after']) > 0 &&
  JSON.stringify(Object.keys(answer.body as object)) === JSON.stringify(['message', 'code', 'request_id']);

/**
 * As a client does: a request answered 503 is sent again, the same, after Retry-After, until it is
 * answered otherwise or `maxAttempts` have been made. Every answer, in order; a 503 without a
 * Retry-After is not waited on, and ends the attempts, for the test to report it.
 */
export const sendUntilAnswered = async <A extends Pick<Answer, 'status' | 'headers' | 'body'>>(send: () => Promise<A>, maxAttempts = 10): Promise<A[]> => {
  let last = await send();
  const attempts = [last];
  while (isRetryLater(last) && attempts.length < maxAttempts) {
    await sleep(Number(last.headers['retry-after']) * 1000);
    last = await send();
    attempts.push(last);
  }
  return attempts;
};
