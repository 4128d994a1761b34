import middy, { type MiddlewareObj, type Request } from '@middy/core';
import httpErrorHandler from '@middy/http-error-handler';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type * as z from 'zod/mini';
import { BodyTooLarge, InvalidRequestBody, toErrorResponse } from './errors';

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;
type HttpRequest = Request<HttpEvent, HttpResult, Error, Context>;

/** CONTRACT.md: a body over 16 KiB is refused with 413, on AWS as on the local server. */
export const MAX_BODY_BYTES = 16 * 1024;

/** Only reached if an error escapes the mapping below; still JSON, still no detail. */
const FALLBACK_ERROR_BODY = JSON.stringify({ message: 'Internal server error' });

export interface RouteDefinition<Schema extends z.ZodMiniType> {
  /** As API Gateway names it, e.g. `POST /allocate`; it labels the request log. */
  readonly route: string;
  readonly schema: Schema;
  /** What each success status means, for the request log. */
  readonly successOutcomes: Readonly<Record<number, string>>;
  readonly run: (input: z.output<Schema>) => Promise<HttpResult>;
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
 * A Lambda handler for one JSON route: body size, Content-Type and JSON checks, the schema, then
 * `run`. Every error leaves through `toErrorResponse`, and every request logs one JSON line.
 */
export const jsonRoute = <Schema extends z.ZodMiniType>({ route, schema, successOutcomes, run }: RouteDefinition<Schema>) =>
  middy<HttpEvent, HttpResult, Error, Context>()
    // onError middlewares run in reverse order of use(): errorResponses shapes the error, then
    // httpErrorHandler renders it; requestLog, used first, sees the final response last.
    .use(requestLog(route, successOutcomes))
    .use(httpErrorHandler({ logger: false, fallbackMessage: FALLBACK_ERROR_BODY }))
    .use(errorResponses())
    .use(bodySizeLimit(MAX_BODY_BYTES))
    .use(normalizeContentType())
    .use(httpJsonBodyParser())
    .handler((event) => {
      const parsed = schema.safeParse(event.body);
      if (!parsed.success) throw new InvalidRequestBody(parsed.error.issues);
      return run(parsed.data);
    });

const requestIdOf = (request: HttpRequest): string =>
  request.event.requestContext?.requestId ?? request.context.awsRequestId ?? 'unknown';

const bodySizeLimit = (limitBytes: number): MiddlewareObj<HttpEvent, HttpResult, Error, Context> => ({
  before: function rejectLargeBody({ event }) {
    const { body, isBase64Encoded } = event;
    if (body !== undefined && Buffer.byteLength(body, isBase64Encoded ? 'base64' : 'utf8') > limitBytes) {
      throw new BodyTooLarge(limitBytes);
    }
  },
});

/**
 * Media types are case-insensitive and may carry spaced or empty parameters (RFC 9110), but middy's
 * JSON parser matches only `application/json` in lower case, optionally followed by `;` and more.
 * JSON is always UTF-8 (RFC 8259), so only the type and subtype matter.
 */
const normalizeContentType = (): MiddlewareObj<HttpEvent, HttpResult, Error, Context> => ({
  before: function keepMediaTypeOnly({ event }) {
    const contentType = event.headers?.['content-type'];
    if (contentType) event.headers['content-type'] = (contentType.split(';')[0] ?? '').trim().toLowerCase();
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
