import { createHash, createHmac } from 'node:crypto';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { type IncomingHttpHeaders, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { type Schemas, createAllocationClient, retryDelayMs } from '../../client/index';

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session-token' };
const API_URL = 'https://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com/';

const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
/** RFC 3986 unreserved characters stay; everything else is percent-encoded, as SigV4 asks. */
const uriEncode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The signature AWS would compute for a request, written from the SigV4 documentation ("Create a
 * signed AWS API request"), independently of the signer the client uses: for execute-api, as for
 * every service but S3, each path segment is encoded twice, once by the URL and once here.
 */
const expectedSignature = async (request: Request, secretAccessKey: string) => {
  const authorization = request.headers.get('authorization') ?? '';
  const [, scope = '', signedHeaders = ''] = /Credential=[^/]+\/([^,]+), SignedHeaders=([^,]+), Signature=/.exec(authorization) ?? [];
  const [date = '', region = '', service = ''] = scope.split('/');
  const url = new URL(request.url);
  const canonicalHeaders = signedHeaders
    .split(';')
    .map((name) => `${name}:${(name === 'host' ? url.host : (request.headers.get(name) ?? '')).trim()}\n`)
    .join('');
  const canonicalRequest = [
    request.method,
    url.pathname.split('/').map(uriEncode).join('/'),
    [...url.searchParams].map(([name, value]) => `${uriEncode(name)}=${uriEncode(value)}`).sort().join('&'),
    canonicalHeaders,
    signedHeaders,
    sha256(new Uint8Array(await request.clone().arrayBuffer())),
  ].join('\n');
  const stringToSign = ['AWS4-HMAC-SHA256', request.headers.get('x-amz-date'), scope, sha256(canonicalRequest)].join('\n');
  const signingKey = [region, service, 'aws4_request'].reduce((key, part) => hmac(key, part), hmac(`AWS4${secretAccessKey}`, date));
  return { signature: createHmac('sha256', signingKey).update(stringToSign).digest('hex'), region, service, signedHeaders };
};

const signatureOf = (request: Request) => /Signature=([0-9a-f]+)$/.exec(request.headers.get('authorization') ?? '')?.[1];

/** A fetch that records what it is sent and answers from a list, the last answer again once the list runs out. */
const recordingFetch = (...answers: Array<() => Response>) => {
  const sent: Request[] = [];
  const fetch = async (request: Request) => {
    sent.push(request.clone());
    return (answers[Math.min(sent.length, answers.length) - 1] as () => Response)();
  };
  return { sent, fetch };
};

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

describe('the typed client, given the deployed API URL', () => {
  it('signs each request with SigV4 for execute-api in the region of the URL, a signature AWS would compute the same', async () => {
    const { sent, fetch } = recordingFetch(() => json(201, { batchref: 'batch-001' }));
    const client = createAllocationClient({ baseUrl: API_URL, credentials, fetch });

    const { data } = await client.POST('/allocate', { body: { orderid: 'order 1/é', sku: 'SMALL-TABLE', qty: 5 } });
    await client.GET('/allocations/{orderid}', { params: { path: { orderid: 'order 1/é' } } });

    expect(data).toEqual({ batchref: 'batch-001' });
    expect(sent.map((request) => new URL(request.url).pathname)).toEqual(['/allocate', '/allocations/order%201%2F%C3%A9']);
    for (const request of sent) {
      const expected = await expectedSignature(request, credentials.secretAccessKey);
      expect(signatureOf(request)).toBe(expected.signature);
      expect(expected).toMatchObject({ region: 'eu-west-1', service: 'execute-api' });
      expect(expected.signedHeaders.split(';')).toContain('host');
      expect(request.headers.get('x-amz-security-token')).toBe('session-token');
    }
  });

  it('signs again each attempt of a request answered 503, with the same body', async () => {
    const { sent, fetch } = recordingFetch(
      () => json(503, { message: 'Service unavailable, retry', request_id: 'r-1' }, { 'retry-after': '0' }),
      () => json(200, { batchref: 'batch-001' }),
    );
    const client = createAllocationClient({ baseUrl: API_URL, credentials, fetch });

    const { data, response } = await client.POST('/allocate', { body: { orderid: 'order-1', sku: 'SMALL-TABLE', qty: 5 } });

    expect({ status: response.status, data }).toEqual({ status: 200, data: { batchref: 'batch-001' } });
    expect(sent).toHaveLength(2);
    for (const request of sent) {
      expect(signatureOf(request)).toBe((await expectedSignature(request, credentials.secretAccessKey)).signature);
      expect(await request.text()).toBe('{"orderid":"order-1","sku":"SMALL-TABLE","qty":5}');
    }
  });

  it('refuses to sign for a URL whose region it cannot tell, when none is given', () => {
    const before = process.env.AWS_REGION;
    delete process.env.AWS_REGION;
    try {
      expect(() => createAllocationClient({ baseUrl: 'https://api.example.com/', sign: true, credentials })).toThrow(/No region/);
    } finally {
      if (before !== undefined) process.env.AWS_REGION = before;
    }
  });
});

describe('the typed client, given the local server', () => {
  const servers: Array<ReturnType<typeof createServer>> = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  });

  /** A server on 127.0.0.1 that answers from a list, the last answer again once the list runs out. */
  const serve = async (...answers: Array<{ status: number; headers?: Record<string, string>; body: unknown }>) => {
    const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
    const server = createServer(async (request, response) => {
      let body = '';
      for await (const chunk of request) body += chunk;
      received.push({ headers: request.headers, body });
      const answer = answers[Math.min(received.length, answers.length) - 1] as (typeof answers)[number];
      response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(JSON.stringify(answer.body));
    });
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { received, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  };

  const unavailable = { status: 503, headers: { 'retry-after': '0' }, body: { message: 'Service unavailable, retry', request_id: 'r-1' } };

  it('sends plain requests, unsigned', async () => {
    const { received, baseUrl } = await serve({ status: 200, body: { orderid: 'order-1', lines: [] } });
    await createAllocationClient({ baseUrl, credentials }).GET('/allocations/{orderid}', { params: { path: { orderid: 'order-1' } } });
    expect(received[0]?.headers.authorization).toBeUndefined();
    expect(received[0]?.headers['x-amz-date']).toBeUndefined();
  });

  it('retries a 503 after its Retry-After and answers what comes next', async () => {
    const { received, baseUrl } = await serve(unavailable, { status: 201, body: { batchref: 'batch-001' } });
    const client = createAllocationClient({ baseUrl });

    const { data, response } = await client.POST('/allocate', { body: { orderid: 'order-1', sku: 'SMALL-TABLE', qty: 5 } });

    expect({ status: response.status, data }).toEqual({ status: 201, data: { batchref: 'batch-001' } });
    expect(received.map(({ body }) => body)).toEqual(Array(2).fill('{"orderid":"order-1","sku":"SMALL-TABLE","qty":5}'));
  });

  it('gives up after maxAttempts and answers the last 503 as a typed error', async () => {
    const { received, baseUrl } = await serve(unavailable);
    const client = createAllocationClient({ baseUrl, maxAttempts: 4 });

    const { error, response } = await client.POST('/allocate', { body: { orderid: 'order-1', sku: 'SMALL-TABLE', qty: 5 } });

    expect({ status: response.status, error }).toEqual({ status: 503, error: unavailable.body });
    expect(received).toHaveLength(4);
  });

  it('waits no longer than maxRetryDelayMs, whatever Retry-After asks', async () => {
    const { received, baseUrl } = await serve({ ...unavailable, headers: { 'retry-after': '3600' } }, { status: 201, body: { batchref: 'batch-001' } });

    const { response } = await createAllocationClient({ baseUrl, maxRetryDelayMs: 10 }).POST('/allocate', {
      body: { orderid: 'order-1', sku: 'SMALL-TABLE', qty: 5 },
    });

    expect(response.status).toBe(201);
    expect(received).toHaveLength(2);
  });

  it('answers every other error at once, typed, without a retry', async () => {
    const refusal = { message: 'Out of stock for sku SMALL-TABLE', code: 'out_of_stock' };
    const { received, baseUrl } = await serve({ status: 400, body: refusal });

    const { error } = await createAllocationClient({ baseUrl }).POST('/allocate', { body: { orderid: 'order-1', sku: 'SMALL-TABLE', qty: 500 } });

    expect(error).toEqual(refusal);
    expect(received).toHaveLength(1);
  });
});

describe('the typed client, given POST /add_batch', () => {
  /** As the batches function answers it. */
  const ok = (status: number) => () => new Response('OK', { status, headers: { 'content-type': 'text/plain; charset=utf-8' } });
  const batch = { ref: 'batch-001', sku: 'SMALL-TABLE', qty: 20, eta: null };

  it('answers its text OK as data when the call says nothing of parsing, instead of throwing once the batch is written', async () => {
    const { sent, fetch } = recordingFetch(ok(201));
    const { data, response } = await createAllocationClient({ baseUrl: 'http://localhost:5005', fetch }).POST('/add_batch', { body: batch });
    expect({ status: response.status, data }).toEqual({ status: 201, data: 'OK' });
    expect(sent).toHaveLength(1);
  });

  it("answers the same with parseAs: 'text'", async () => {
    const { fetch } = recordingFetch(ok(200));
    const { data } = await createAllocationClient({ baseUrl: 'http://localhost:5005', fetch }).POST('/add_batch', { body: batch, parseAs: 'text' });
    expect(data).toBe('OK');
  });
});

describe("the typed client, given the locations' routes", () => {
  const lyon = { id: 'warehouse-lyon', name: 'Lyon warehouse', priority: 10, serves: ['FR', 'BE'], active: true };
  it('puts a location by its id, its body and answer typed as a location', async () => {
    const { sent, fetch } = recordingFetch(() => json(201, lyon));
    const client = createAllocationClient({ baseUrl: 'http://localhost:5005', fetch });

    const { data, response } = await client.PUT('/locations/{id}', {
      params: { path: { id: 'warehouse-lyon' } },
      body: { name: 'Lyon warehouse', priority: 10, serves: ['FR', 'BE'] },
    });

    const location: Schemas['Location'] | undefined = data;
    expect({ status: response.status, location }).toEqual({ status: 201, location: lyon });
    expect([sent[0]?.method, new URL(sent[0]?.url ?? '').pathname, await sent[0]?.text()]).toEqual([
      'PUT',
      '/locations/warehouse-lyon',
      '{"name":"Lyon warehouse","priority":10,"serves":["FR","BE"]}',
    ]);
  });

  it('reads every location, and one, typed', async () => {
    const { sent, fetch } = recordingFetch(
      () => json(200, { locations: [lyon] }),
      () => json(404, { message: 'Location nowhere not found', code: 'unknown_location' }),
    );
    const client = createAllocationClient({ baseUrl: 'http://localhost:5005', fetch });

    const all = await client.GET('/locations');
    const missing = await client.GET('/locations/{id}', { params: { path: { id: 'nowhere' } } });

    const locations: Schemas['Location'][] | undefined = all.data?.locations;
    expect(locations).toEqual([lyon]);
    expect(missing.error).toEqual({ message: 'Location nowhere not found', code: 'unknown_location' });
    expect(sent.map((request) => new URL(request.url).pathname)).toEqual(['/locations', '/locations/nowhere']);
  });
});

describe('the wait before a retry', () => {
  it('is what Retry-After asks, in seconds or as a date, and a second when it says neither', () => {
    const now = Date.parse('2026-11-25T10:00:00Z');
    expect(retryDelayMs('2', now)).toBe(2000);
    expect(retryDelayMs('Wed, 25 Nov 2026 10:00:03 GMT', now)).toBe(3000);
    expect(retryDelayMs('Wed, 25 Nov 2026 09:59:00 GMT', now)).toBe(0);
    expect(retryDelayMs(null, now)).toBe(1000);
    expect(retryDelayMs('soon', now)).toBe(1000);
  });
});

describe('client/schema.d.ts', () => {
  it('is what `npm run client` generates from docs/openapi.json now', async () => {
    const fresh = join(tmpdir(), `client-schema-${process.pid}.d.ts`);
    const cli = join('client', 'node_modules', 'openapi-typescript', 'bin', 'cli.js');
    await promisify(execFile)(process.execPath, [cli, 'docs/openapi.json', '--output', fresh]);
    expect(readFileSync(fresh, 'utf8'), 'client/schema.d.ts is out of date: run `npm run client` and commit it').toBe(
      readFileSync('client/schema.d.ts', 'utf8'),
    );
  });
});
