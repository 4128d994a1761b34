import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type HttpEvent, json } from '../../functions/http/route';
import { MAX_CONCURRENT_INVOCATIONS, createLocalServer } from '../../local/server';
import { sendRaw } from './raw-request';

// The local server over HTTP in front of probe functions that record what they were given, to
// compare it with what API Gateway and Lambda document for payload format 2.0.

interface Invocation {
  readonly event: HttpEvent;
  readonly context: Context;
  /** Read as the function starts, by `/clock` only. */
  readonly remainingMsAtStart?: number;
}

const invocations: Invocation[] = [];
let heldInvocations = 0;
let releaseHeld: () => void = () => {};
let heldUntil = Promise.resolve();

let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createLocalServer({
    probe: {
      routeKeys: ['POST /probe', 'GET /probe/{first}/{second}', 'DELETE /probe/{first}/{second}', 'GET /probe/fixed/{second}'],
      handler: async (event, context) => {
        invocations.push({ event, context });
        return json(200, {});
      },
    },
    clock: {
      routeKeys: ['POST /clock'],
      handler: async (event, context) => {
        invocations.push({ event, context, remainingMsAtStart: context.getRemainingTimeInMillis() });
        return json(200, {});
      },
    },
    hold: {
      routeKeys: ['POST /hold'],
      handler: async () => {
        heldInvocations++;
        await heldUntil;
        return json(200, {});
      },
    },
    fail: { routeKeys: ['POST /fail'], handler: () => Promise.reject(new Error('the function broke')) },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.close();
  server.closeAllConnections();
});
beforeEach(() => {
  invocations.length = 0;
});

/** The one invocation the request made. */
const probe = async (path: string, headers: string[] = [], body = '{}', method = 'POST') => {
  const answer = await sendRaw(baseUrl, { method, path, headers, body });
  expect(answer.status).toBe(200);
  expect(invocations).toHaveLength(1);
  return invocations[0]!;
};

describe('the event, as API Gateway builds payload format 2.0', () => {
  it('joins the values of a repeated header with commas, under its lower-case name', async () => {
    const { event } = await probe('/probe', [
      'Content-Type', 'application/json',
      'content-type', 'text/plain',
      'User-Agent', 'first',
      'User-Agent', 'second',
      'X-Trace', 'a',
      'x-trace', 'b',
    ]);
    expect(event.headers).toMatchObject({ 'content-type': 'application/json,text/plain', 'user-agent': 'first,second', 'x-trace': 'a,b' });
    expect(Object.keys(event.headers).filter((name) => name !== name.toLowerCase())).toEqual([]);
    expect(event.requestContext.http.userAgent).toBe('first,second');
  });

  it('passes the pairs of every Cookie header in cookies, and no cookie header', async () => {
    const { event } = await probe('/probe', ['Cookie', 'a=1; b=2', 'Cookie', 'c=3']);
    expect(event.cookies).toEqual(['a=1', 'b=2', 'c=3']);
    expect(event.headers).not.toHaveProperty('cookie');
  });

  it('decodes the query string into queryStringParameters, a repeated name joined with commas, and keeps it raw in rawQueryString', async () => {
    const { event } = await probe('/probe?name=a%20b&name=c+d&flag');
    expect(event.rawQueryString).toBe('name=a%20b&name=c+d&flag');
    expect(event.queryStringParameters).toEqual({ name: 'a b,c d', flag: '' });
    expect(event.rawPath).toBe('/probe');
    expect(event.requestContext.http.path).toBe('/probe');
  });

  it('leaves cookies and queryStringParameters out of a request that has none', async () => {
    const { event } = await probe('/probe');
    expect(event).not.toHaveProperty('cookies');
    expect(event).not.toHaveProperty('queryStringParameters');
    expect(event.rawQueryString).toBe('');
  });

  it('fills the request context as API Gateway does: its own request id, the host without port, the time in CLF', async () => {
    const answer = await sendRaw(baseUrl, { path: '/probe', body: '{}' });
    const { event, context } = invocations[0]!;
    expect(answer.headers['apigw-requestid']).toBe(event.requestContext.requestId);
    expect(event.requestContext.requestId).not.toBe(context.awsRequestId);
    expect(event.requestContext.domainName).toBe('127.0.0.1');
    expect(event.requestContext.time).toMatch(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
    expect(event.requestContext.accountId).toMatch(/^\d{12}$/);
  });
});

describe('routes with path parameters', () => {
  it('passes the route key as its template and each parameter decoded once, keeping rawPath as sent', async () => {
    const { event } = await probe('/probe/a%20b/%252F%F0%9F%93%A6', [], '', 'GET');
    expect(event.routeKey).toBe('GET /probe/{first}/{second}');
    expect(event.requestContext.routeKey).toBe('GET /probe/{first}/{second}');
    expect(event.pathParameters).toEqual({ first: 'a b', second: '%2F📦' });
    expect(event.rawPath).toBe('/probe/a%20b/%252F%F0%9F%93%A6');
  });

  it('keeps an encoded slash inside its parameter', async () => {
    const { event } = await probe('/probe/a%2Fb/c', [], '', 'DELETE');
    expect(event.pathParameters).toEqual({ first: 'a/b', second: 'c' });
  });

  it('leaves pathParameters out of a route that has none', async () => {
    const { event } = await probe('/probe');
    expect(event).not.toHaveProperty('pathParameters');
  });

  it('prefers the route with more literal segments', async () => {
    const { event } = await probe('/probe/fixed/x', [], '', 'GET');
    expect(event.routeKey).toBe('GET /probe/fixed/{second}');
    expect(event.pathParameters).toEqual({ second: 'x' });
  });

  it('runs every route of a function in that one function', async () => {
    const { context } = await probe('/probe/a/b', [], '', 'GET');
    invocations.length = 0;
    const { context: other } = await probe('/probe');
    expect(context.functionName).toBe('local-probe');
    expect(other.functionName).toBe('local-probe');
    expect(other.logStreamName).toBe(context.logStreamName);
  });

  it.each(['/probe//b', '/probe/a/', '/probe/a/b/', '/probe/a'])('answers 404 for %s: a parameter is one whole, non-empty segment', async (path) => {
    const answer = await sendRaw(baseUrl, { method: 'GET', path });
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.text)).toEqual({ message: 'Not Found' });
    expect(invocations).toHaveLength(0);
  });

  it('answers 400 without invoking the function when a parameter does not percent-decode', async () => {
    const answer = await sendRaw(baseUrl, { method: 'GET', path: '/probe/%E0%A4/b' });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toEqual({ message: 'Bad Request' });
    expect(invocations).toHaveLength(0);
  });

  it('answers 405 with the methods of the matching template in Allow', async () => {
    const answer = await sendRaw(baseUrl, { method: 'PATCH', path: '/probe/a/b' });
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, DELETE');
    expect(invocations).toHaveLength(0);
  });
});

describe('the body, within what Lambda accepts', () => {
  const sixMiB = 6 * 1024 * 1024;

  it('passes a body of several MiB whole', async () => {
    const body = 'x'.repeat(5 * 1024 * 1024);
    const { event } = await probe('/probe', [], body);
    expect(event.body).toBe(body);
    expect(event.isBase64Encoded).toBe(false);
  });

  it('answers 413 with API Gateway’s message for a body over 6 MiB, without invoking the function', async () => {
    const answer = await sendRaw(baseUrl, { path: '/probe', body: 'x'.repeat(sixMiB + 1) });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.text)).toEqual({ message: 'Request Entity Too Large' });
    expect(invocations).toHaveLength(0);
  });

  it('counts a body as the event carries it: bytes that are not UTF-8 travel in base64, a third larger', async () => {
    const notUtf8 = new Uint8Array(5 * 1024 * 1024).fill(0xff);
    const answer = await sendRaw(baseUrl, { path: '/probe', body: notUtf8 });
    expect(answer.status).toBe(413);
    expect(invocations).toHaveLength(0);
  });
});

describe('the Lambda context', () => {
  it('counts the remaining time down from the function’s 10 s timeout', async () => {
    const { context, remainingMsAtStart = 0 } = await probe('/clock');
    expect(remainingMsAtStart).toBeLessThanOrEqual(10_000);
    expect(remainingMsAtStart).toBeGreaterThan(9_000);
    await sleep(100);
    expect(context.getRemainingTimeInMillis()).toBeLessThanOrEqual(remainingMsAtStart - 100);
  });

  it('names the function, its version, memory, ARN and logs, and gives each invocation its own request id', async () => {
    const { context } = await probe('/probe');
    expect(context).toMatchObject({ functionVersion: '$LATEST', memoryLimitInMB: '512', logGroupName: `/aws/lambda/${context.functionName}` });
    expect(context.invokedFunctionArn).toMatch(new RegExp(`^arn:aws:lambda:[a-z0-9-]+:\\d{12}:function:${context.functionName}$`));
    expect(context.logStreamName).toMatch(/^\d{4}\/\d{2}\/\d{2}\/\[\$LATEST\][0-9a-f]{32}$/);
    expect(context.awsRequestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    invocations.length = 0;
    const { context: next } = await probe('/probe');
    expect(next.awsRequestId).not.toBe(context.awsRequestId);
  });

  it('starts the clock when the invocation gets one of the slots of invocations at once, not when the request arrived', async () => {
    heldInvocations = 0;
    heldUntil = new Promise((resolve) => (releaseHeld = resolve));
    const held = Array.from({ length: MAX_CONCURRENT_INVOCATIONS }, () => sendRaw(baseUrl, { path: '/hold', body: '{}' }));
    while (heldInvocations < MAX_CONCURRENT_INVOCATIONS) await sleep(10);

    const queued = sendRaw(baseUrl, { path: '/clock', body: '{}' });
    await sleep(1_500);
    expect(invocations).toHaveLength(0);
    releaseHeld();
    await Promise.all([...held, queued]);

    expect(invocations[0]!.remainingMsAtStart).toBeGreaterThan(9_000);
  });
});

describe('what API Gateway answers itself', () => {
  it('answers a function that throws with API Gateway’s bare 500', async () => {
    const answer = await sendRaw(baseUrl, { path: '/fail', body: '{}' });
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.text)).toEqual({ message: 'Internal Server Error' });
  });

  it('refuses a request with two Host headers with 400, as RFC 9112 requires', async () => {
    const answer = await sendRaw(baseUrl, { path: '/probe', headers: ['Host', 'elsewhere.example'], body: '{}' });
    expect(answer.status).toBe(400);
    expect(invocations).toHaveLength(0);
  });
});

describe('the API reference, a page of the local server only', () => {
  it('is not served at /docs when no function serves the OpenAPI document', async () => {
    const answer = await sendRaw(baseUrl, { method: 'GET', path: '/docs' });
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.text)).toEqual({ message: 'Not Found' });
  });
});
