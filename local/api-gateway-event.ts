import { isUtf8 } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type HttpEvent, LOCAL_API_ID } from '../functions/http/route';
import { LOCAL_ACCOUNT_ID } from './function-instances';

/* An HTTP request as API Gateway's HTTP API hands it to Lambda: a payload format 2.0 event. */

/** Shaped like API Gateway's, e.g. `JKJaXmPLvHcESHA=`, so that it is never taken for Lambda's UUID. */
export const apiGatewayRequestId = () => randomBytes(11).toString('base64');

export interface RequestTarget {
  readonly rawPath: string;
  readonly rawQueryString: string;
}

/** What is known of a request when it arrives, before its body. */
export interface Arrival extends RequestTarget {
  readonly requestId: string;
  readonly receivedAt: Date;
}

/**
 * API Gateway routes on the path as sent: `new URL()` would resolve `/x/../allocate` and `/./allocate`
 * to `/allocate`, a route API Gateway would not match.
 */
export const splitRequestTarget = (url: string): RequestTarget => {
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
export const readBodyWithin = (request: IncomingMessage, limitBytes: number): Promise<Buffer | undefined> =>
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
export interface MatchedRoute {
  readonly routeKey: string;
  readonly pathParameters: Readonly<Record<string, string>>;
}

/**
 * Payload format 2.0 as API Gateway documents it: header names in lower case, a repeated header's
 * values joined with commas (Node's `request.headers` keeps only the first Content-Type,
 * Authorization, User-Agent...), the Cookie headers in `cookies` instead, and
 * `queryStringParameters` and `pathParameters` only when there are some.
 */
export const toEvent = (request: IncomingMessage, arrival: Arrival, { routeKey, pathParameters }: MatchedRoute, body: Buffer): HttpEvent => {
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
      apiId: LOCAL_API_ID,
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
