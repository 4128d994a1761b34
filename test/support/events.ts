import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import type { HttpEvent } from '../../functions/http/route';
import { splitRouteKey } from '../../functions/http/route-keys';

export interface PostEventOptions {
  /** `null` sends no Content-Type at all. */
  readonly contentType?: string | null;
  /** The body is already the text to send (or undefined for none), not a value to send as JSON. */
  readonly raw?: boolean;
  /**
   * Base64-encode the body's bytes, as API Gateway passes a body that is not UTF-8. Bytes given as
   * a Uint8Array are always sent so, since an event's text cannot hold them.
   */
  readonly base64?: boolean;
}

const bodyOf = (body: unknown, { raw = false, base64 = false }: PostEventOptions) => {
  if (body instanceof Uint8Array) return { body: Buffer.from(body).toString('base64'), isBase64Encoded: true };
  const text = raw ? (body as string | undefined) : JSON.stringify(body);
  return base64 && text !== undefined
    ? { body: Buffer.from(text).toString('base64'), isBase64Encoded: true }
    : { body: text, isBase64Encoded: false };
};

export interface RouteEventOptions extends PostEventOptions {
  /** As API Gateway passes them, decoded; the raw path gets them percent-encoded. */
  readonly pathParameters?: Readonly<Record<string, string>>;
  /** As API Gateway passes them, decoded (a repeated name's values joined by commas); the raw query string gets them percent-encoded. */
  readonly queryStringParameters?: Readonly<Record<string, string>>;
  /** Sent as JSON, or as is with `raw`; no body at all when undefined. */
  readonly body?: unknown;
}

/**
 * An API Gateway HTTP API (payload 2.0) event, as Lambda receives it for the route `routeKey`
 * (e.g. `GET /batches/{ref}`). With a body it has a JSON Content-Type unless told otherwise;
 * without, no Content-Type, as a GET or a DELETE comes.
 */
export const routeEvent = (routeKey: string, { pathParameters, queryStringParameters, body, ...options }: RouteEventOptions = {}): HttpEvent => {
  const { method, path: template } = splitRouteKey(routeKey);
  const { contentType = body === undefined ? null : 'application/json' } = options;
  // A lone surrogate cannot be percent-encoded; the handler reads pathParameters, never rawPath.
  const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent((pathParameters?.[name] ?? '').toWellFormed()));
  const requestId = randomUUID();
  return {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: new URLSearchParams(queryStringParameters).toString(),
    headers: contentType === null ? {} : { 'content-type': contentType },
    ...(pathParameters ? { pathParameters: { ...pathParameters } } : {}),
    ...(queryStringParameters ? { queryStringParameters: { ...queryStringParameters } } : {}),
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'api.example.com',
      domainPrefix: 'api',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId,
      routeKey,
      stage: '$default',
      time: new Date().toISOString(),
      timeEpoch: Date.now(),
    },
    ...bodyOf(body, options),
  };
};

/** An event for `POST <path>`, with a JSON Content-Type unless told otherwise, even with no body. */
export const postEvent = (path: string, body: unknown, options: PostEventOptions = {}): HttpEvent =>
  routeEvent(`POST ${path}`, { contentType: 'application/json', ...options, body });

/** A body's UTF-8 bytes with `bytes` in place of the one `@` in `template`: how bytes that are not UTF-8 get into a body. */
export const withBytes = (template: string, bytes: ArrayLike<number>): Uint8Array => {
  const [before = '', after = ''] = template.split('@');
  return Buffer.concat([Buffer.from(before), Uint8Array.from(bytes), Buffer.from(after)]);
};

export const lambdaContext = (): Context => ({ awsRequestId: randomUUID(), functionName: 'test' }) as Context;
