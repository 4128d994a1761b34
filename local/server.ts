import { isUtf8 } from 'node:buffer';
import { randomBytes, randomUUID } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { Context } from 'aws-lambda';
import { toErrorResponse } from '../functions/http/errors';
import { type HttpEvent, type HttpResult, json } from '../functions/http/route';
import { pathParameterNames, splitRouteKey } from '../functions/http/route-keys';
import { FUNCTION_TIMEOUT_SECONDS } from '../functions/http/time-budget';
import { type LocalPage, apiReferencePages } from './api-reference';

export type LambdaHttpHandler = (event: HttpEvent, context: Context) => Promise<HttpResult>;

/**
 * A Lambda function to stand in for, and the route keys (e.g. `GET /batches/{ref}`) API Gateway sends
 * it: either one `handler` that serves many invocations at once, as a process in a container does
 * (what one request remembers, the next one knows), or `newInstance`, which builds the function anew
 * as Lambda starts an instance: each serves one invocation at a time, with module state of its own
 * (docs/development.md, "Shared and Lambda modes").
 */
export type FunctionRoutes = { readonly routeKeys: readonly string[] } & (
  | { readonly handler: LambdaHttpHandler; readonly newInstance?: never }
  | { readonly newInstance: () => LambdaHttpHandler; readonly handler?: never }
);

/**
 * Invocations that run at once: in the shared mode, of all the functions together; in the Lambda
 * mode, of each function, one an instance. Later requests wait their turn, as they would for a free
 * Lambda instance. On AWS each instance runs one invocation with a client of its own. In the shared
 * mode all share one client: a burst of hundreds would queue its calls behind the client's 50
 * sockets, or pile them on DynamoDB Local, until they outwaited the client's timeouts and a store
 * that keeps up answered 503.
 * Not fewer: through the conflict model a transaction holds its items 100 ms, and 16 at once would
 * cap a hot SKU at 160 allocations/s whatever its spread did (docs/reliability.md).
 */
export const MAX_CONCURRENT_INVOCATIONS = 64;

/**
 * Lambda refuses a synchronous invocation whose payload is over 6 MiB, and for API Gateway that
 * payload is the whole event as JSON: the body as it travels in it (JSON-escaped text, or base64,
 * a third larger, for bytes that are not UTF-8) with the headers and the request context. API
 * Gateway's own 10 MB quota on a request is never the one a Lambda route reaches first.
 */
const MAX_INVOCATION_PAYLOAD_BYTES = 6 * 1024 * 1024;

/** As the CDK stack configures each function. */
const FUNCTION_MEMORY_MB = 512;
const LOCAL_ACCOUNT_ID = '000000000000';
const LOCAL_REGION = process.env.AWS_REGION ?? 'us-east-1';

/** A Lambda function behind its routes, as this process stands in for it: how an invocation reaches one of its instances. */
interface LocalFunction {
  readonly invoke: (event: HttpEvent) => Promise<HttpResult>;
}

/** An instance of a function: its handler, and the log stream its invocations write to, one per instance as on Lambda. */
interface LocalInstance {
  readonly handler: LambdaHttpHandler;
  readonly functionName: string;
  readonly logStreamName: string;
}

/**
 * A stand-in for API Gateway's HTTP API on one machine: each request becomes a payload 2.0 event
 * for the same handler modules Lambda runs, one function per entry of `functions` (named by its
 * key), each serving its route keys. What API Gateway and Lambda answer before any function runs,
 * the server answers itself: a route that does not match (404, 405 here), a path parameter that
 * does not decode (400), a payload too large for Lambda (413), and a function that fails instead of
 * answering (500). Everything else is the handler's to answer. When a function serves the OpenAPI
 * document, the server also answers the API reference at `GET /docs` (./api-reference), which is
 * no route of the API.
 */
export const createLocalServer = (functions: Readonly<Record<string, FunctionRoutes>>): Server => {
  const sharedSlots = limitConcurrency(MAX_CONCURRENT_INVOCATIONS);
  const templates = Object.entries(functions).flatMap(([name, routes]) => {
    const fn = routes.handler ? sharedFunction(name, routes.handler, sharedSlots) : lambdaFunction(name, routes.newInstance);
    return routes.routeKeys.map((routeKey) => routeTemplate(routeKey, fn));
  });
  const pages = apiReferencePages(templates.map(({ routeKey }) => routeKey));

  return createServer((request, response) => {
    const arrival: Arrival = { ...splitRequestTarget(request.url ?? '/'), requestId: apiGatewayRequestId(), receivedAt: new Date() };
    const { requestId } = arrival;
    // RFC 9112 §3.2: a server must refuse more than one Host (Node itself refuses none).
    if ((request.headersDistinct.host?.length ?? 0) > 1) {
      request.resume();
      return sendResult(response, json(400, { message: 'Bad Request' }), requestId);
    }
    const method = request.method ?? 'GET';
    const page = method === 'GET' ? pages.get(arrival.rawPath) : undefined;
    if (page) {
      request.resume();
      return sendPage(response, page, requestId);
    }
    const matches = templates.flatMap((template) => {
      const captured = template.match(arrival.rawPath);
      return captured ? [{ template, captured }] : [];
    });
    const match = mostSpecific(matches.filter(({ template }) => template.method === method));
    if (!match) {
      request.resume();
      if (matches.length === 0) return sendResult(response, json(404, { message: 'Not Found' }), requestId);
      const allowed = [...new Set(matches.map(({ template }) => template.method))];
      const result = json(405, { message: 'Method Not Allowed' });
      return sendResult(response, { ...result, headers: { ...result.headers, Allow: allowed.join(', ') } }, requestId);
    }
    const { template, captured } = match;
    const pathParameters = decodePathParameters(captured);
    if (!pathParameters) {
      request.resume();
      return sendResult(response, json(400, { message: 'Bad Request' }), requestId);
    }
    const { routeKey, fn } = template;
    readBodyWithin(request, MAX_INVOCATION_PAYLOAD_BYTES)
      .then((body) => {
        if (body === undefined) return payloadTooLarge();
        const event = toEvent(request, arrival, { routeKey, pathParameters }, body);
        if (Buffer.byteLength(JSON.stringify(event)) > MAX_INVOCATION_PAYLOAD_BYTES) return payloadTooLarge();
        return fn.invoke(event).catch((error: unknown) => {
          // What Lambda does with a function that throws: logs it, and API Gateway answers a bare 500.
          console.error(JSON.stringify({ level: 'error', requestId, route: routeKey, functionError: String(error) }));
          return json(500, { message: 'Internal Server Error' });
        });
      })
      .then((result) => sendResult(response, result, requestId))
      .catch((error: unknown) => {
        // A function's failure was answered above: this is the server's own (a broken upload).
        console.error(JSON.stringify({ level: 'error', requestId, route: routeKey, cause: String(error) }));
        if (!response.headersSent) sendResult(response, errorResult(error, requestId), requestId);
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

const localInstance = (name: string, handler: LambdaHttpHandler): LocalInstance => {
  const startedOn = new Date().toISOString().slice(0, 10).replaceAll('-', '/');
  return { handler, functionName: `local-${name}`, logStreamName: `${startedOn}/[$LATEST]${randomBytes(16).toString('hex')}` };
};

/** One instance for the process's life, serving as many invocations at once as the server's slots allow. */
const sharedFunction = (name: string, handler: LambdaHttpHandler, slots: ReturnType<typeof limitConcurrency>): LocalFunction => {
  const instance = localInstance(name, handler);
  return { invoke: (event) => slots(() => instance.handler(event, invocationContext(instance))) };
};

/**
 * As Lambda serves a function: an invocation goes to an idle instance, the one used last, or, while
 * every instance is busy, to a new one (its module state built anew by `newInstance`), up to
 * MAX_CONCURRENT_INVOCATIONS instances; past that, it waits for the first to be free.
 */
const lambdaFunction = (name: string, newInstance: () => LambdaHttpHandler): LocalFunction => {
  const idle: LocalInstance[] = [];
  const waiting: Array<(instance: LocalInstance) => void> = [];
  let started = 0;
  const acquire = async (): Promise<LocalInstance> => {
    const warm = idle.pop();
    if (warm) return warm;
    if (started < MAX_CONCURRENT_INVOCATIONS) {
      started++;
      try {
        return localInstance(name, newInstance());
      } catch (error) {
        // An instance that failed to start is none: the next request starts another.
        started--;
        throw error;
      }
    }
    return new Promise((resolve) => waiting.push(resolve));
  };
  const release = (instance: LocalInstance) => {
    const next = waiting.shift();
    if (next) next(instance);
    else idle.push(instance);
  };
  return {
    invoke: async (event) => {
      const instance = await acquire();
      try {
        return await instance.handler(event, invocationContext(instance));
      } finally {
        release(instance);
      }
    },
  };
};

/** Shaped like API Gateway's, e.g. `JKJaXmPLvHcESHA=`, so that it is never taken for Lambda's UUID. */
const apiGatewayRequestId = () => randomBytes(11).toString('base64');

interface RequestTarget {
  readonly rawPath: string;
  readonly rawQueryString: string;
}

/** What is known of a request when it arrives, before its body. */
interface Arrival extends RequestTarget {
  readonly requestId: string;
  readonly receivedAt: Date;
}

/**
 * API Gateway routes on the path as sent: `new URL()` would resolve `/x/../allocate` and `/./allocate`
 * to `/allocate`, a route API Gateway would not match.
 */
const splitRequestTarget = (url: string): RequestTarget => {
  const queryStart = url.indexOf('?');
  return queryStart === -1
    ? { rawPath: url, rawQueryString: '' }
    : { rawPath: url.slice(0, queryStart), rawQueryString: url.slice(queryStart + 1) };
};

/**
 * The body whole, or `undefined` once it is past `limitBytes`: then the rest is read and dropped,
 * so that an oversized upload holds no more memory than the limit and its client, still sending,
 * reads the answer.
 */
const readBodyWithin = (request: IncomingMessage, limitBytes: number): Promise<Buffer | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limitBytes) chunks.push(chunk);
      else chunks.length = 0;
    });
    request.on('end', () => resolve(size <= limitBytes ? Buffer.concat(chunks) : undefined));
    request.on('error', reject);
  });

/** The route a request matched: its key, and its path parameters, decoded. */
interface MatchedRoute {
  readonly routeKey: string;
  readonly pathParameters: Readonly<Record<string, string>>;
}

/**
 * Payload format 2.0 as API Gateway documents it: header names in lower case, a repeated header's
 * values joined with commas (Node's `request.headers` keeps only the first Content-Type,
 * Authorization, User-Agent...), the Cookie headers in `cookies` instead, and
 * `queryStringParameters` and `pathParameters` only when there are some.
 */
const toEvent = (request: IncomingMessage, arrival: Arrival, { routeKey, pathParameters }: MatchedRoute, body: Buffer): HttpEvent => {
  const headers: Record<string, string> = {};
  for (const [name, values] of Object.entries(request.headersDistinct)) {
    if (name !== 'cookie' && values) headers[name] = values.join(',');
  }
  const cookies = (request.headersDistinct.cookie ?? []).flatMap((header) => header.split(';').map((pair) => pair.trim()).filter(Boolean));
  const domainName = (headers.host ?? 'localhost').replace(/:\d+$/, '');
  return {
    version: '2.0',
    routeKey,
    rawPath: arrival.rawPath,
    rawQueryString: arrival.rawQueryString,
    ...(cookies.length > 0 ? { cookies } : {}),
    headers,
    ...(arrival.rawQueryString ? { queryStringParameters: queryStringParameters(arrival.rawQueryString) } : {}),
    ...(Object.keys(pathParameters).length > 0 ? { pathParameters: { ...pathParameters } } : {}),
    requestContext: {
      accountId: LOCAL_ACCOUNT_ID,
      apiId: 'local',
      domainName,
      domainPrefix: domainName.split('.')[0] ?? domainName,
      http: {
        method: request.method ?? 'GET',
        path: arrival.rawPath,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp: request.socket.remoteAddress ?? '',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: arrival.requestId,
      routeKey,
      stage: '$default',
      time: commonLogFormatTime(arrival.receivedAt),
      timeEpoch: arrival.receivedAt.getTime(),
    },
    ...(body.length > 0 ? bodyFields(body) : { isBase64Encoded: false }),
  };
};

/** Decoded as a form would be (`+` is a space); a repeated name's values joined with commas. */
const queryStringParameters = (rawQueryString: string): Record<string, string> => {
  const values = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(rawQueryString)) {
    const earlier = values.get(name);
    values.set(name, earlier === undefined ? value : `${earlier},${value}`);
  }
  return Object.fromEntries(values);
};

/** Bytes that are not UTF-8 go base64-encoded, as API Gateway passes binary. */
const bodyFields = (body: Buffer) =>
  isUtf8(body) ? { body: body.toString('utf8'), isBase64Encoded: false } : { body: body.toString('base64'), isBase64Encoded: true };

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** API Gateway's `requestContext.time`, e.g. `12/Mar/2020:19:03:58 +0000`. */
const commonLogFormatTime = (time: Date): string => {
  const twoDigits = (value: number) => String(value).padStart(2, '0');
  const date = `${twoDigits(time.getUTCDate())}/${MONTHS[time.getUTCMonth()]}/${time.getUTCFullYear()}`;
  return `${date}:${twoDigits(time.getUTCHours())}:${twoDigits(time.getUTCMinutes())}:${twoDigits(time.getUTCSeconds())} +0000`;
};

/**
 * Lambda's context for one invocation, its clock started now: when the invocation has a slot, as
 * Lambda's starts when an instance takes it. middy arms its early timeout only when
 * `getRemainingTimeInMillis` is there, so locally it fires as on Lambda.
 */
const invocationContext = ({ functionName, logStreamName }: LocalInstance): Context => {
  const deadline = performance.now() + FUNCTION_TIMEOUT_SECONDS * 1000;
  const context: Omit<Context, 'done' | 'fail' | 'succeed'> = {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT_ID}:function:${functionName}`,
    memoryLimitInMB: String(FUNCTION_MEMORY_MB),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName,
    getRemainingTimeInMillis: () => Math.max(0, Math.floor(deadline - performance.now())),
  };
  // The callback-era methods are left out: the handlers are async and never call them.
  return context as Context;
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

/** A page the server answers itself, or a 500 when its file cannot be read. */
const sendPage = (response: ServerResponse, page: LocalPage, requestId: string) =>
  page.body().then(
    (body) => {
      response.writeHead(200, { ...page.headers, 'Content-Length': Buffer.byteLength(body) });
      response.end(body);
    },
    (error: unknown) => sendResult(response, errorResult(error, requestId), requestId),
  );
