import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { Context } from 'aws-lambda';
import { toErrorResponse } from '../functions/http/errors';
import { type HttpEvent, type HttpResult, MAX_BODY_BYTES, json } from '../functions/http/route';

export type LambdaHttpHandler = (event: HttpEvent, context: Context) => Promise<HttpResult>;

/** Handlers by API Gateway route key, e.g. `POST /allocate`: the same table the CDK stack routes. */
type Routes = Readonly<Record<string, LambdaHttpHandler>>;

/**
 * Invocations that run at once; later requests wait their turn, as they would for a free Lambda
 * instance. On AWS each instance runs one invocation with a client of its own. Here all share one
 * client: a burst of hundreds would queue its calls behind the client's 50 sockets, or pile them on
 * DynamoDB Local, until they outwaited the client's timeouts and a store that keeps up answered 503.
 */
const MAX_CONCURRENT_INVOCATIONS = 16;

/**
 * A stand-in for API Gateway's HTTP API on one machine: each request becomes a payload 2.0 event
 * for the same handler modules Lambda runs. Routing answers 404 and 405 itself, as API Gateway would
 * before any function runs; everything else is the handler's to answer.
 */
export const createLocalServer = (routes: Routes): Server => {
  const invoke = limitConcurrency(MAX_CONCURRENT_INVOCATIONS);
  const methodsByPath = new Map<string, string[]>();
  for (const routeKey of Object.keys(routes)) {
    const [method = '', path = ''] = routeKey.split(' ');
    methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), method]);
  }

  return createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const method = request.method ?? 'GET';
    const routeKey = `${method} ${url.pathname}`;
    const handler = routes[routeKey];
    if (!handler) {
      const allowed = methodsByPath.get(url.pathname);
      request.resume();
      if (allowed) return sendJson(response, 405, { message: 'Method Not Allowed' }, { Allow: allowed.join(', ') });
      return sendJson(response, 404, { message: 'Not Found' });
    }
    const requestId = randomUUID();
    readBody(request)
      .then((body) => invoke(() => handler(toEvent(request, url, routeKey, body, requestId), lambdaContext(requestId))))
      .then((result) => sendResult(response, result, requestId))
      .catch((error: unknown) => {
        // The handlers answer every error themselves: this is the server failing (a broken upload).
        console.error(JSON.stringify({ level: 'error', requestId, route: routeKey, cause: String(error) }));
        if (!response.headersSent) sendResult(response, errorResult(error, requestId), requestId);
      });
  });
};

/** An error answered as a handler would answer it, for what the local server refuses itself. */
export const errorResult = (error: unknown, requestId: string): HttpResult => {
  const { statusCode, body, headers } = toErrorResponse(error, requestId);
  const result = json(statusCode, body);
  return { ...result, headers: { ...result.headers, ...headers } };
};

/** Runs at most `limit` tasks at a time; the others start in the order they came, as slots free up. */
const limitConcurrency = (limit: number) => {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running < limit) running++;
    // A finishing task hands its slot straight to the next waiter, so `running` stays the same.
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
};

interface RequestBody {
  readonly text: string;
  readonly isBase64Encoded: boolean;
}

/**
 * Keeps at most one chunk past the limit, so an oversized upload holds little memory (the rest is
 * read and dropped) and still reaches the handler, which owns the 413. Bytes that are not UTF-8 go
 * base64-encoded, as API Gateway passes binary, so the handler measures the size that was sent.
 */
const readBody = (request: IncomingMessage): Promise<RequestBody | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      if (size > MAX_BODY_BYTES) return;
      chunks.push(chunk);
      size += chunk.length;
    });
    request.on('end', () => {
      if (size === 0) return resolve(undefined);
      const bytes = Buffer.concat(chunks);
      resolve(isUtf8(bytes) ? { text: bytes.toString('utf8'), isBase64Encoded: false } : { text: bytes.toString('base64'), isBase64Encoded: true });
    });
    request.on('error', reject);
  });

const toEvent = (request: IncomingMessage, url: URL, routeKey: string, body: RequestBody | undefined, requestId: string): HttpEvent => {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const now = Date.now();
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      http: {
        method: request.method ?? 'GET',
        path: url.pathname,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp: request.socket.remoteAddress ?? '',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey,
      stage: '$default',
      time: new Date(now).toISOString(),
      timeEpoch: now,
    },
    body: body?.text,
    isBase64Encoded: body?.isBase64Encoded ?? false,
  };
};

const lambdaContext = (awsRequestId: string): Context =>
  ({ awsRequestId, functionName: 'local', callbackWaitsForEmptyEventLoop: false }) as Context;

const sendResult = (response: ServerResponse, result: HttpResult, requestId: string) => {
  const body = result.body === undefined ? '' : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  response.writeHead(result.statusCode ?? 200, {
    ...result.headers,
    'Apigw-Requestid': requestId,
    'Content-Length': body.length,
  });
  response.end(body);
};

const sendJson = (response: ServerResponse, statusCode: number, body: unknown, headers: Record<string, string> = {}) => {
  const payload = JSON.stringify(body);
  response.writeHead(statusCode, { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) });
  response.end(payload);
};
