import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import type { HttpEvent } from '../../functions/http/route';

/** An API Gateway HTTP API (payload 2.0) event, as Lambda receives it for a POST. */
export const postEvent = (
  path: string,
  body: unknown,
  { contentType = 'application/json', raw = false }: { contentType?: string | null; raw?: boolean } = {},
): HttpEvent => {
  const requestId = randomUUID();
  return {
    version: '2.0',
    routeKey: `POST ${path}`,
    rawPath: path,
    rawQueryString: '',
    headers: contentType === null ? {} : { 'content-type': contentType },
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'api.example.com',
      domainPrefix: 'api',
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId,
      routeKey: `POST ${path}`,
      stage: '$default',
      time: new Date().toISOString(),
      timeEpoch: Date.now(),
    },
    body: raw ? (body as string | undefined) : JSON.stringify(body),
    isBase64Encoded: false,
  };
};

export const lambdaContext = (): Context => ({ awsRequestId: randomUUID(), functionName: 'test' }) as Context;
