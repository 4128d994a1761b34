import { isUtf8 } from 'node:buffer';
import middy, { type MiddlewareObj, type Request } from '@middy/core';
import httpErrorHandler from '@middy/http-error-handler';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type * as z from 'zod/mini';
import type { BatchRepository } from '../../domain/ports';
import { LOCAL_ACTOR } from '../../domain/stock-history';
import { logger } from '../telemetry';
import {
  BodyTooLarge,
  InvalidPathParameters,
  InvalidQueryParameters,
  InvalidRequestBody,
  InvalidUtf8Body,
  RouteNotFound,
  UnsupportedCharset,
  UnsupportedMediaType,
  toErrorResponse,
} from './errors';
import { RequestMeasures, type RouteCounter, recordRequest } from './request-telemetry';
import { pathParameterNames, splitRouteKey } from './route-keys';
import { noQuerySchema, pathParametersSchema } from './schemas';
import { TIME_TO_ANSWER_MS, startDeadline } from './time-budget';

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;
type HttpRequest = Request<HttpEvent, HttpResult, Error, Context>;
type HttpMiddleware = MiddlewareObj<HttpEvent, HttpResult, Error, Context>;

/** docs/api.md: a body over 16 KiB is refused with 413, on AWS as on the local server. */
export const MAX_BODY_BYTES = 16 * 1024;

/** Only reached if an error escapes the mapping below; still JSON, still no detail. */
const FALLBACK_ERROR_BODY = JSON.stringify({ message: 'Internal server error', code: 'internal_error' });

/** `orderid | sku` for `DELETE /allocations/{orderid}/{sku}`. */
type ParameterNames<Template extends string> = Template extends `${string}{${infer Name}}${infer Rest}`
  ? Name | ParameterNames<Rest>
  : never;

/** A route's path parameters by the names its key gives them, once they passed the identifier rules. */
export type PathParameters<RouteKey extends string> = { readonly [Name in ParameterNames<RouteKey>]: string };

type BodyOf<Schema> = Schema extends z.ZodMiniType ? z.output<Schema> : undefined;

/**
 * The query parameters a route is asked: all but a SigV4 presigned URL's (`X-Amz-Signature` and its
 * kin), which API Gateway checks and passes on, and which no route takes.
 */
const routeQueryOf = (parameters: Readonly<Record<string, string | undefined>> | undefined) =>
  Object.fromEntries(Object.entries(parameters ?? {}).filter(([name]) => !/^x-amz-/i.test(name)));

/** A route's query parameters once they passed its schema; none for a route that takes none. */
type QueryOf<Schema> = Schema extends z.ZodMiniType ? z.output<Schema> : Readonly<Record<string, never>>;

export interface RouteDefinition<RouteKey extends string, Schema extends z.ZodMiniType | undefined, Query extends z.ZodMiniType | undefined> {
  /**
   * A route with a body schema takes a JSON body: its Content-Type, size, UTF-8 and JSON are checked
   * before the schema. A route without one reads no body and ignores its headers.
   */
  readonly body?: Schema;
  /**
   * The query parameters a route takes, checked after its path parameters and before its body: one
   * issue per bad or unknown parameter. A route without one refuses any.
   */
  readonly query?: Query;
  /** What each success status means, for the request log. */
  readonly successOutcomes: Readonly<Record<number, string>>;
  /**
   * `store` is the handler's repository bound to this request's deadline: every call it makes gives
   * up when middy answers 503. `counter` takes what a success counts for the request's metrics.
   */
  readonly run: (
    input: { readonly pathParameters: PathParameters<RouteKey>; readonly query: QueryOf<Query>; readonly body: BodyOf<Schema> },
    store: BatchRepository,
    counter: RouteCounter,
  ) => Promise<HttpResult>;
}

/** One entry of a handler's route table, its input checked by schemas made once, with the handler. */
export interface Route<RouteKey extends string = string> {
  readonly routeKey: RouteKey;
  readonly pathParameters: z.ZodMiniType<Readonly<Record<string, string>>>;
  readonly body: z.ZodMiniType | undefined;
  readonly query: z.ZodMiniType | undefined;
  readonly successOutcomes: Readonly<Record<number, string>>;
  readonly run: (
    input: { readonly pathParameters: Readonly<Record<string, string>>; readonly query: unknown; readonly body: unknown },
    store: BatchRepository,
    counter: RouteCounter,
  ) => Promise<HttpResult>;
}

/** A route for `routeKey`, as API Gateway names it (e.g. `GET /batches/{ref}`); it also labels the request log. */
export const route = <const RouteKey extends string, Schema extends z.ZodMiniType | undefined = undefined, Query extends z.ZodMiniType | undefined = undefined>(
  routeKey: RouteKey,
  { body, query, successOutcomes, run }: RouteDefinition<RouteKey, Schema, Query>,
): Route<RouteKey> => ({
  routeKey,
  pathParameters: pathParametersSchema(pathParameterNames(splitRouteKey(routeKey).path)),
  body,
  query,
  successOutcomes,
  // The schemas above make the input what `run` was typed for.
  run: run as Route['run'],
});

export const json = (statusCode: number, body: unknown): HttpResult => ({
  statusCode,
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
});

export const text = (statusCode: number, body: string): HttpResult => ({
  statusCode,
  headers: { 'Content-Type': 'text/plain; charset=utf-8' },
  body,
});

/** 204: no body, and so no Content-Type. */
export const noContent = (): HttpResult => ({ statusCode: 204 });

/**
 * One Lambda handler for several routes, chosen by the event's route key: its path parameters,
 * then, for a route with a body, the Content-Type, body size, UTF-8 and JSON checks and the schema,
 * then `run`, with `repository` bound to the request's deadline (here, once for every route).
 * Every error leaves through `toErrorResponse`, and every request writes one log entry and its
 * metrics (./request-telemetry).
 */
export const routedHandler = <RouteKey extends string>(repository: BatchRepository, routes: readonly Route<RouteKey>[]) => {
  const routesByKey = new Map<string, Route>(routes.map((entry) => [entry.routeKey, entry]));
  const telemetry = requestTelemetry((event) => routesByKey.get(event.routeKey)?.successOutcomes ?? {});
  /** The route of each request and its checked path and query parameters, from the first check to `run`. */
  const selected = new WeakMap<HttpEvent, { readonly route: Route; readonly pathParameters: Readonly<Record<string, string>>; readonly query: unknown }>();
  const takesBody = ({ event }: HttpRequest) => selected.get(event)?.route.body !== undefined;

  const selectRoute: HttpMiddleware = {
    before: function selectRouteAndCheckPathParameters({ event }) {
      const route = routesByKey.get(event.routeKey);
      if (!route) throw new RouteNotFound();
      const parsed = route.pathParameters.safeParse(event.pathParameters ?? {});
      if (!parsed.success) throw new InvalidPathParameters(parsed.error.issues);
      // API Gateway joins a repeated name's values with commas, which no value a route takes holds.
      const query = (route.query ?? noQuerySchema).safeParse(routeQueryOf(event.queryStringParameters));
      if (!query.success) throw new InvalidQueryParameters(query.error.issues);
      selected.set(event, { route, pathParameters: parsed.data, query: query.data });
    },
  };
  /** A route without a body answers the same whatever body or Content-Type came with it. */
  const forBodies = ({ before }: HttpMiddleware): HttpMiddleware => ({
    before: (request) => (takesBody(request) ? before?.(request) : undefined),
  });

  return (
    middy<HttpEvent, HttpResult, Error, Context>({ timeoutEarlyInMillis: TIME_TO_ANSWER_MS })
      // onError middlewares run in reverse order of use(): errorResponses shapes the error, then
      // httpErrorHandler renders it; the telemetry, used first, sees the final response last.
      .use(telemetry.middleware)
      .use(httpErrorHandler({ logger: false, fallbackMessage: FALLBACK_ERROR_BODY }))
      .use(errorResponses())
      // The path, then the query, name what the request is about: a bad one is refused whatever the body.
      .use(selectRoute)
      // In the order docs/api.md promises: 415 before the body is read, then 413.
      .use(forBodies(requireJsonMediaType()))
      .use(forBodies(bodySizeLimit(MAX_BODY_BYTES)))
      .use(forBodies(decodeUtf8Body()))
      .use(forBodies(httpJsonBodyParser()))
      .handler(async (event, context) => {
        const selection = selected.get(event);
        if (!selection) throw new RouteNotFound();
        const { route, pathParameters, query } = selection;
        let body: unknown;
        if (route.body) {
          const parsed = route.body.safeParse(event.body);
          if (!parsed.success) throw new InvalidRequestBody(parsed.error.issues);
          body = parsed.data;
        }
        // Our own signal, not middy's: middy shares one AbortController across the invocations of a
        // process, and the local server runs several at once.
        const deadline = startDeadline(context);
        try {
          const measures = telemetry.measuresOf(event);
          return await route.run({ pathParameters, query, body }, repository.withDeadline(deadline.signal, measures, actorOf(event)), measures);
        } finally {
          deadline.clear();
        }
      })
  );
};

/** The API id the local server's events carry (local/api-gateway-event.ts). */
export const LOCAL_API_ID = 'local';

/**
 * Who makes the request, for the history of what it changes (docs/api.md, "History"): the caller's
 * IAM principal, which API Gateway's IAM authorizer puts in the request's context; on a public API,
 * which has none, `anonymous`; on the local server, `local`.
 */
const actorOf = (event: HttpEvent): string => {
  const { authorizer, apiId } = event.requestContext as HttpEvent['requestContext'] & { authorizer?: { iam?: { userArn?: unknown } } };
  const principal = authorizer?.iam?.userArn;
  if (typeof principal === 'string' && principal !== '') return principal;
  return apiId === LOCAL_API_ID ? LOCAL_ACTOR : 'anonymous';
};

const requestIdOf = (request: HttpRequest): string =>
  request.event.requestContext?.requestId ?? request.context.awsRequestId ?? 'unknown';

/** Any JSON media type, `application/json` or `application/<something>+json`, in lower case. */
const JSON_MEDIA_TYPE = /^application\/([^\s/;]+\+)?json$/;
/** UTF-8 by its common names in the WHATWG Encoding Standard. */
const UTF8_LABELS = new Set(['utf-8', 'utf8']);
/** A `charset` parameter, its value quoted (group 1) or bare (group 2). */
const CHARSET_PARAMETER = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/gi;

/**
 * Media types are case-insensitive and may carry spaced or empty parameters (RFC 9110). JSON is
 * UTF-8 (RFC 8259): a body declared in another charset would be read as other text than was meant.
 * middy's JSON parser matches only `application/json` in lower case, optionally followed by `;` and
 * more, so it is handed the media type alone once this check has passed.
 */
const requireJsonMediaType = (): HttpMiddleware => ({
  before: function refuseOtherMediaTypes({ event }) {
    const contentType = event.headers?.['content-type'];
    // API Gateway joins a repeated header with commas: a list of media types names none.
    if (!contentType || contentType.includes(',')) throw new UnsupportedMediaType();
    const mediaType = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
    if (!JSON_MEDIA_TYPE.test(mediaType)) throw new UnsupportedMediaType();
    for (const [, quoted, bare] of contentType.matchAll(CHARSET_PARAMETER)) {
      if (!UTF8_LABELS.has((quoted ?? bare ?? '').toLowerCase())) throw new UnsupportedCharset();
    }
    event.headers['content-type'] = mediaType;
  },
});

const bodySizeLimit = (limitBytes: number): HttpMiddleware => ({
  before: function rejectLargeBody({ event }) {
    const { body, isBase64Encoded } = event;
    if (body !== undefined && Buffer.byteLength(body, isBase64Encoded ? 'base64' : 'utf8') > limitBytes) {
      throw new BodyTooLarge(limitBytes);
    }
  },
});

/**
 * API Gateway and the local server pass a body that is not UTF-8 base64-encoded; middy's parser
 * would decode it leniently, turning every bad byte into U+FFFD, and bodies that differ only there
 * would become the same order. So the body reaches it already decoded here, or refused: `isUtf8`
 * (Node's validator, no decoder to build at cold start) then a decode that can no longer repair
 * anything. A BOM is kept as text, so the JSON parser refuses it: RFC 8259 forbids sending one.
 */
const decodeUtf8Body = (): HttpMiddleware => ({
  before: function decodeBodyAsUtf8({ event }) {
    if (event.body === undefined) return;
    if (!event.isBase64Encoded) {
      // Half a surrogate pair: text that no UTF-8 bytes decode to.
      if (!event.body.isWellFormed()) throw new InvalidUtf8Body();
      return;
    }
    const bytes = Buffer.from(event.body, 'base64');
    if (!isUtf8(bytes)) throw new InvalidUtf8Body();
    event.body = bytes.toString('utf8');
    event.isBase64Encoded = false;
  },
});

/** What the request log records of a failed request; set while shaping its response. */
const failures = new WeakMap<HttpRequest, { outcome: string; cause: unknown }>();

const errorResponses = (): HttpMiddleware => ({
  onError: function shapeErrorResponse(request) {
    const { statusCode, body, headers, outcome } = toErrorResponse(request.error, requestIdOf(request));
    failures.set(request, { outcome, cause: request.error });
    // httpErrorHandler sends `message` as the body, as JSON because it parses as JSON.
    request.error = Object.assign(new Error(JSON.stringify(body)), { statusCode, headers, expose: true });
  },
});

/**
 * One log entry and the metrics of each request, under its route key; `successOutcomesOf` names
 * what a success status means for its route. Each request's measures are its own, so invocations
 * that run at once (the local server's) never count into each other's.
 */
const requestTelemetry = (successOutcomesOf: (event: HttpEvent) => Readonly<Record<number, string>>) => {
  const started = new WeakMap<HttpEvent, { readonly at: number; readonly measures: RequestMeasures }>();
  /** Set by the first middleware of the chain, so every later step finds it. */
  const startOf = (event: HttpEvent) => {
    const start = started.get(event);
    if (!start) throw new Error('The request was not measured from its start');
    return start;
  };
  const write = (request: HttpRequest) => {
    const { at, measures } = startOf(request.event);
    const status = request.response?.statusCode ?? 500;
    const failure = failures.get(request);
    recordRequest(
      {
        requestId: requestIdOf(request),
        functionRequestId: request.context.awsRequestId,
        route: request.event.routeKey,
        status,
        durationMs: Math.round((performance.now() - at) * 10) / 10,
        outcome: failure?.outcome ?? successOutcomesOf(request.event)[status] ?? 'ok',
        error: failure?.cause,
      },
      measures,
    );
  };
  const middleware: HttpMiddleware = {
    before: function startMeasuring(request) {
      // Each invocation draws anew whether it logs at DEBUG (POWERTOOLS_LOGGER_SAMPLE_RATE).
      logger.refreshSampleRateCalculation();
      started.set(request.event, { at: performance.now(), measures: new RequestMeasures(requestIdOf(request), request.event.routeKey) });
    },
    after: write,
    onError: write,
  };
  return { middleware, measuresOf: (event: HttpEvent): RequestMeasures => startOf(event).measures };
};
