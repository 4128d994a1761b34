import { isUtf8 } from 'node:buffer';
import middy, { type MiddlewareObj, type Request } from '@middy/core';
import httpErrorHandler from '@middy/http-error-handler';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type * as z from 'zod/mini';
import {
  BodyTooLarge,
  InvalidRequestBody,
  InvalidUtf8Body,
  UnsupportedCharset,
  UnsupportedMediaType,
  toErrorResponse,
} from './errors';
import { TIME_TO_ANSWER_MS, startDeadline } from './time-budget';

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;
type HttpRequest = Request<HttpEvent, HttpResult, Error, Context>;

/** The README's API section: a body over 16 KiB is refused with 413, on AWS as on the local server. */
export const MAX_BODY_BYTES = 16 * 1024;

/** Only reached if an error escapes the mapping below; still JSON, still no detail. */
const FALLBACK_ERROR_BODY = JSON.stringify({ message: 'Internal server error' });

export interface RouteDefinition<Schema extends z.ZodMiniType> {
  /** As API Gateway names it, e.g. `POST /allocate`; it labels the request log. */
  readonly route: string;
  readonly schema: Schema;
  /** What each success status means, for the request log. */
  readonly successOutcomes: Readonly<Record<number, string>>;
  /** `deadline` aborts when middy answers 503 for lack of time: hand it to every store call. */
  readonly run: (input: z.output<Schema>, request: { readonly deadline: AbortSignal }) => Promise<HttpResult>;
}

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

/**
 * A Lambda handler for one JSON route: Content-Type, body size, UTF-8 and JSON checks, the schema,
 * then `run`. Every error leaves through `toErrorResponse`, and every request logs one JSON line.
 */
export const jsonRoute = <Schema extends z.ZodMiniType>({ route, schema, successOutcomes, run }: RouteDefinition<Schema>) =>
  middy<HttpEvent, HttpResult, Error, Context>({ timeoutEarlyInMillis: TIME_TO_ANSWER_MS })
    // onError middlewares run in reverse order of use(): errorResponses shapes the error, then
    // httpErrorHandler renders it; requestLog, used first, sees the final response last.
    .use(requestLog(route, successOutcomes))
    .use(httpErrorHandler({ logger: false, fallbackMessage: FALLBACK_ERROR_BODY }))
    .use(errorResponses())
    // In the order the README's API section promises: 415 before the body is read, then 413.
    .use(requireJsonMediaType())
    .use(bodySizeLimit(MAX_BODY_BYTES))
    .use(decodeUtf8Body())
    .use(httpJsonBodyParser())
    .handler(async (event, context) => {
      const parsed = schema.safeParse(event.body);
      if (!parsed.success) throw new InvalidRequestBody(parsed.error.issues);
      // Our own signal, not middy's: middy shares one AbortController across the invocations of a
      // process, and the local server runs several at once.
      const deadline = startDeadline(context);
      try {
        return await run(parsed.data, { deadline: deadline.signal });
      } finally {
        deadline.clear();
      }
    });

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
const requireJsonMediaType = (): MiddlewareObj<HttpEvent, HttpResult, Error, Context> => ({
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

const bodySizeLimit = (limitBytes: number): MiddlewareObj<HttpEvent, HttpResult, Error, Context> => ({
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
const decodeUtf8Body = (): MiddlewareObj<HttpEvent, HttpResult, Error, Context> => ({
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

const errorResponses = (): MiddlewareObj<HttpEvent, HttpResult, Error, Context> => ({
  onError: function shapeErrorResponse(request) {
    const { statusCode, body, headers, outcome } = toErrorResponse(request.error, requestIdOf(request));
    failures.set(request, { outcome, cause: request.error });
    // httpErrorHandler sends `message` as the body, as JSON because it parses as JSON.
    request.error = Object.assign(new Error(JSON.stringify(body)), { statusCode, headers, expose: true });
  },
});

const requestLog = (
  route: string,
  successOutcomes: Readonly<Record<number, string>>,
): MiddlewareObj<HttpEvent, HttpResult, Error, Context> => {
  const startedAt = new WeakMap<HttpRequest, number>();
  const write = (request: HttpRequest) => {
    const status = request.response?.statusCode ?? 500;
    const failure = failures.get(request);
    const line: Record<string, unknown> = {
      level: status >= 500 ? 'error' : 'info',
      requestId: requestIdOf(request),
      route,
      status,
      durationMs: Math.round((performance.now() - (startedAt.get(request) ?? performance.now())) * 10) / 10,
      outcome: failure?.outcome ?? successOutcomes[status] ?? 'ok',
    };
    if (status >= 500 && failure) line.cause = describe(failure.cause);
    console.log(JSON.stringify(line));
  };
  return {
    before: function startClock(request) {
      startedAt.set(request, performance.now());
    },
    after: write,
    onError: write,
  };
};

/** An error and its causes by name and message, for the log only: no stack, no request data. */
const describe = (error: unknown): unknown => {
  if (!(error instanceof Error)) return typeof error === 'object' && error !== null ? JSON.stringify(error) : String(error);
  return { name: error.name, message: error.message, ...(error.cause ? { cause: describe(error.cause) } : {}) };
};
