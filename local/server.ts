import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { toErrorResponse } from '../functions/http/errors';
import { type HttpResult, json } from '../functions/http/route';
import { pathParameterNames, splitRouteKey } from '../functions/http/route-keys';
import { type Arrival, apiGatewayRequestId, readBodyWithin, splitRequestTarget, toEvent } from './api-gateway-event';
import { type LocalPage, apiReferencePages } from './api-reference';
import {
  type FunctionRoutes,
  type InstanceStart,
  type LocalFunction,
  MAX_CONCURRENT_INVOCATIONS,
  lambdaFunction,
  limitConcurrency,
  sharedFunction,
} from './function-instances';

export { type FunctionRoutes, type LambdaHttpHandler, MAX_CONCURRENT_INVOCATIONS } from './function-instances';

/**
 * Lambda refuses a synchronous invocation whose payload is over 6 MiB, and for API Gateway that
 * payload is the whole event as JSON: the body as it travels in it (JSON-escaped text, or base64,
 * a third larger, for bytes that are not UTF-8) with the headers and the request context. API
 * Gateway's own 10 MB quota on a request is never the one a Lambda route reaches first.
 */
const MAX_INVOCATION_PAYLOAD_BYTES = 6 * 1024 * 1024;

/** A request as the server answered it, itself or through a function. */
export interface AnsweredRequest {
  readonly method: string;
  /** The path as sent, with its query string when it has one. */
  readonly path: string;
  readonly status: number;
  /** From the request's arrival to its answer's last byte handed to the socket. */
  readonly durationMs: number;
  /** API Gateway's, in the answer's Apigw-Requestid header. */
  readonly requestId: string;
  /** The answer's body as text; none for a page of the API reference or a body in base64. */
  readonly body?: string;
  /** The instance the request had to start first (the Lambda mode). */
  readonly startedInstance?: InstanceStart;
}

/** What the server tells of its work as it goes, for `npm start` to print (./log-lines). */
export interface ServerLog {
  /** An instance started, before the invocation that waits on it runs. */
  readonly instanceStarted?: (start: InstanceStart) => void;
  readonly requestAnswered?: (request: AnsweredRequest) => void;
}

/**
 * A stand-in for API Gateway's HTTP API on one machine: each request becomes a payload 2.0 event
 * for the same handler modules Lambda runs, one function per entry of `functions` (named by its
 * key), each serving its route keys. What API Gateway and Lambda answer before any function runs,
 * the server answers itself: a route that does not match (404, 405 here), a path parameter that
 * does not decode (400), a payload too large for Lambda (413), and a function that fails instead of
 * answering (500). Everything else is the handler's to answer. When a function serves the OpenAPI
 * document, the server also answers the API reference at `GET /docs` (./api-reference), which is
 * no route of the API. `log` hears of each instance started and each request answered.
 */
/** Takes a request that is no route of the API (an upload of an import's file) and answers it: its status. */
export type RequestReceiver = (request: IncomingMessage, response: ServerResponse, path: string, query: string) => Promise<number> | undefined;

export const createLocalServer = (functions: Readonly<Record<string, FunctionRoutes>>, log: ServerLog = {}, receive?: RequestReceiver): Server => {
  const sharedSlots = limitConcurrency(MAX_CONCURRENT_INVOCATIONS);
  const templates = Object.entries(functions).flatMap(([name, routes]) => {
    const fn = routes.handler ? sharedFunction(name, routes.handler, sharedSlots) : lambdaFunction(name, routes.newInstance);
    return routes.routeKeys.map((routeKey) => routeTemplate(routeKey, fn));
  });
  const pages = apiReferencePages(templates.map(({ routeKey }) => routeKey));

  return createServer((request, response) => {
    const arrivedAt = performance.now();
    const arrival: Arrival = { ...splitRequestTarget(request.url ?? '/'), requestId: apiGatewayRequestId(), receivedAt: new Date() };
    const { requestId } = arrival;
    const method = request.method ?? 'GET';
    let startedInstance: InstanceStart | undefined;
    const answered = (status: number, body: string | undefined) =>
      log.requestAnswered?.({
        method,
        path: arrival.rawQueryString === '' ? arrival.rawPath : `${arrival.rawPath}?${arrival.rawQueryString}`,
        status,
        durationMs: performance.now() - arrivedAt,
        requestId,
        ...(body === undefined ? {} : { body }),
        ...(startedInstance ? { startedInstance } : {}),
      });
    const answer = (result: HttpResult) => {
      sendResult(response, result, requestId);
      answered(result.statusCode ?? 200, result.isBase64Encoded ? undefined : result.body);
    };
    // RFC 9112 §3.2: a server must refuse more than one Host (Node itself refuses none).
    if ((request.headersDistinct.host?.length ?? 0) > 1) {
      request.resume();
      return answer(json(400, { message: 'Bad Request' }));
    }
    const received = receive?.(request, response, arrival.rawPath, arrival.rawQueryString);
    if (received) {
      return received.then(
        (status) => answered(status, undefined),
        (error: unknown) => {
          console.error(JSON.stringify({ level: 'error', requestId, path: arrival.rawPath, cause: String(error) }));
          if (!response.headersSent) answer(errorResult(error, requestId));
        },
      );
    }
    const page = method === 'GET' ? pages.get(arrival.rawPath) : undefined;
    if (page) {
      request.resume();
      return sendPage(response, page, requestId).then((status) => answered(status, undefined));
    }
    const matches = templates.flatMap((template) => {
      const captured = template.match(arrival.rawPath);
      return captured ? [{ template, captured }] : [];
    });
    const match = mostSpecific(matches.filter(({ template }) => template.method === method));
    if (!match) {
      request.resume();
      if (matches.length === 0) return answer(json(404, { message: 'Not Found' }));
      const allowed = [...new Set(matches.map(({ template }) => template.method))];
      const result = json(405, { message: 'Method Not Allowed' });
      return answer({ ...result, headers: { ...result.headers, Allow: allowed.join(', ') } });
    }
    const { template, captured } = match;
    const pathParameters = decodePathParameters(captured);
    if (!pathParameters) {
      request.resume();
      return answer(json(400, { message: 'Bad Request' }));
    }
    const { routeKey, fn } = template;
    readBodyWithin(request, MAX_INVOCATION_PAYLOAD_BYTES)
      .then((body) => {
        if (body === undefined) return payloadTooLarge();
        const event = toEvent(request, arrival, { routeKey, pathParameters }, body);
        if (Buffer.byteLength(JSON.stringify(event)) > MAX_INVOCATION_PAYLOAD_BYTES) return payloadTooLarge();
        const instanceStarted = (start: InstanceStart) => {
          startedInstance = start;
          log.instanceStarted?.(start);
        };
        return fn.invoke(event, instanceStarted).catch((error: unknown) => {
          // What Lambda does with a function that throws: logs it, and API Gateway answers a bare 500.
          console.error(JSON.stringify({ level: 'error', requestId, route: routeKey, functionError: String(error) }));
          return json(500, { message: 'Internal Server Error' });
        });
      })
      .then(answer)
      .catch((error: unknown) => {
        // A function's failure was answered above: this is the server's own (a broken upload).
        console.error(JSON.stringify({ level: 'error', requestId, route: routeKey, cause: String(error) }));
        if (!response.headersSent) answer(errorResult(error, requestId));
      });
  });
};

interface RouteTemplate {
  readonly routeKey: string;
  readonly method: string;
  /** Segments of the path that are not parameters: the more, the more specific the route. */
  readonly literalSegments: number;
  readonly fn: LocalFunction;
  /** Each parameter's raw segment by name when `rawPath` matches, else undefined. */
  readonly match: (rawPath: string) => Record<string, string> | undefined;
}

/**
 * A route key's path matched segment by segment against the path as sent, split on `/`: a literal
 * segment must be equal, a `{name}` segment takes any segment but an empty one. So `/batches/` and
 * `/batches//stock` match nothing, and `%2F` stays inside its segment until it is decoded.
 */
const routeTemplate = (routeKey: string, fn: LocalFunction): RouteTemplate => {
  const { method, path } = splitRouteKey(routeKey);
  const segments = path.split('/').map((segment) => ({ segment, parameter: pathParameterNames(segment)[0] }));
  return {
    routeKey,
    method,
    literalSegments: segments.filter(({ parameter }) => parameter === undefined).length,
    fn,
    match: (rawPath) => {
      const sent = rawPath.split('/');
      if (sent.length !== segments.length) return undefined;
      const captured: Record<string, string> = {};
      for (const [index, { segment, parameter }] of segments.entries()) {
        const value = sent[index] ?? '';
        if (parameter === undefined ? value !== segment : value === '') return undefined;
        if (parameter !== undefined) captured[parameter] = value;
      }
      return captured;
    },
  };
};

/**
 * API Gateway takes the most specific of the routes that match: here the one with the most literal
 * segments, so a `/batches/new` would win over `/batches/{ref}`.
 */
const mostSpecific = <Match extends { readonly template: RouteTemplate }>(matches: readonly Match[]): Match | undefined =>
  matches.reduce<Match | undefined>(
    (best, match) => (!best || match.template.literalSegments > best.template.literalSegments ? match : best),
    undefined,
  );

/** Each captured segment percent-decoded once, as API Gateway passes path parameters; undefined when one does not decode. */
const decodePathParameters = (captured: Readonly<Record<string, string>>): Record<string, string> | undefined => {
  try {
    return Object.fromEntries(Object.entries(captured).map(([name, value]) => [name, decodeURIComponent(value)]));
  } catch {
    return undefined;
  }
};

/** API Gateway's own answer when Lambda refuses the invocation's payload. */
const payloadTooLarge = () => json(413, { message: 'Request Entity Too Large' });

/** An error answered as a handler would answer it, for what the local server refuses itself. */
export const errorResult = (error: unknown, requestId: string): HttpResult => {
  const { statusCode, body, headers } = toErrorResponse(error, requestId);
  const result = json(statusCode, body);
  return { ...result, headers: { ...result.headers, ...headers } };
};

const sendResult = (response: ServerResponse, result: HttpResult, requestId: string) => {
  const body = result.body === undefined ? '' : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  response.writeHead(result.statusCode ?? 200, {
    ...result.headers,
    'Apigw-Requestid': requestId,
    'Content-Length': body.length,
  });
  response.end(body);
};

/** A page the server answers itself, or a 500 when its file cannot be read: resolves with the status sent. */
const sendPage = (response: ServerResponse, page: LocalPage, requestId: string): Promise<number> =>
  page.body().then(
    (body) => {
      const status = page.status ?? 200;
      response.writeHead(status, { ...page.headers, 'Content-Length': Buffer.byteLength(body) });
      response.end(body);
      return status;
    },
    (error: unknown) => {
      const result = errorResult(error, requestId);
      sendResult(response, result, requestId);
      return result.statusCode ?? 500;
    },
  );
