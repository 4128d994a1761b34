import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema.js';

/*
 * A typed client of the allocation service (docs/client.md). The types come from docs/openapi.json
 * (`npm run client` writes schema.d.ts); openapi-fetch turns them into calls whose bodies, path
 * parameters, answers and errors are typed. What this file adds is what a caller of the deployed API
 * would otherwise write by hand: a SigV4 signature for API Gateway's IAM authorization, the retry
 * of a 503 after its Retry-After, which the API promises is safe for every route, and the reading of
 * POST /add_batch's text answer.
 */

export type { components, paths };
export type Schemas = components['schemas'];
export type AllocationClient = Client<paths>;

export interface AllocationClientOptions {
  /** The API's base URL: `http://localhost:5005` for `npm start`, or the stack's `ApiUrl` output. */
  readonly baseUrl: string;
  /**
   * Sign each request with SigV4 for `execute-api`. By default, exactly when `baseUrl` is an
   * API Gateway URL (`https://<api-id>.execute-api.<region>.amazonaws.com/`): say `true` for a
   * custom domain in front of the signed API.
   */
  readonly sign?: boolean;
  /** The region to sign for. By default the one in an API Gateway URL, or else `AWS_REGION`. */
  readonly region?: string;
  /** By default, the AWS SDK's credential chain for Node (environment, profile, SSO, container, instance). */
  readonly credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  /** Attempts of one request, the first included, while the answer is a 503. Default 3. */
  readonly maxAttempts?: number;
  /** The longest wait before a retry, whatever Retry-After asks. Default 5 s. */
  readonly maxRetryDelayMs?: number;
  /** The fetch requests go through. Default: the global one. */
  readonly fetch?: (request: Request) => Promise<Response>;
}

const API_GATEWAY_HOST = /^[a-z0-9]+\.execute-api\.([a-z0-9-]+)\.amazonaws\.com$/;

/** What Retry-After asks for, in milliseconds: delay-seconds or an HTTP date (RFC 9110); 1 s when it says neither. */
export const retryDelayMs = (retryAfter: string | null, now = Date.now()): number => {
  if (retryAfter !== null && /^\d+$/.test(retryAfter.trim())) return Number(retryAfter) * 1000;
  const date = retryAfter === null ? Number.NaN : Date.parse(retryAfter);
  return Number.isNaN(date) ? 1000 : Math.max(0, date - now);
};

const signerFor = (options: AllocationClientOptions, host: string): SignatureV4 | undefined => {
  const regionInUrl = API_GATEWAY_HOST.exec(host)?.[1];
  if (!(options.sign ?? regionInUrl !== undefined)) return undefined;
  const region = options.region ?? regionInUrl ?? process.env.AWS_REGION;
  if (region === undefined) throw new Error(`No region to sign requests to ${host} for: pass { region }, or set AWS_REGION`);
  return new SignatureV4({
    service: 'execute-api',
    region,
    credentials: options.credentials ?? defaultProvider(),
    sha256: Hash.bind(null, 'sha256'),
  });
};

/** The same request, signed: its body read once, so that every attempt sends and signs the same bytes. */
const signed = async (signer: SignatureV4, request: Request, body: ArrayBuffer | undefined): Promise<Request> => {
  const url = new URL(request.url);
  const query: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) query[name] = [...(query[name] ?? []), value];
  const { headers } = await signer.sign({
    method: request.method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port === '' ? undefined : Number(url.port),
    path: url.pathname,
    query,
    headers: { ...Object.fromEntries(request.headers), host: url.host },
    body,
  });
  // fetch sets Host from the URL, as it was signed.
  return new Request(url, { method: request.method, headers: Object.entries(headers).filter(([name]) => name !== 'host'), body });
};

/**
 * openapi-fetch parses a 2xx answer as JSON unless the call says `parseAs: 'text'`, and
 * POST /add_batch answers the text `OK`: a call that forgot would type-check, then throw a
 * SyntaxError after the batch was written. So a text answer to a call parsing JSON reaches
 * openapi-fetch as the JSON string of its text, and `data` is `"OK"`, as the route's types say.
 */
const textAsJsonString: Middleware = {
  onResponse: async ({ response, options }) => {
    if (options.parseAs !== 'json' || !/^text\/plain\b/i.test(response.headers.get('content-type') ?? '')) return undefined;
    const headers = new Headers(response.headers);
    headers.set('content-type', 'application/json');
    // The old one would not be the new body's length.
    headers.delete('content-length');
    return new Response(JSON.stringify(await response.text()), { status: response.status, statusText: response.statusText, headers });
  },
};

/**
 * A client of the API at `baseUrl`: `client.POST('/allocate', { body })` answers
 * `{ data, error, response }`, `data` typed by the route's 2xx bodies and `error` by its others.
 */
export const createAllocationClient = (options: AllocationClientOptions): AllocationClient => {
  const send = options.fetch ?? ((request: Request) => fetch(request));
  const signer = signerFor(options, new URL(options.baseUrl).host);
  const maxAttempts = options.maxAttempts ?? 3;
  const maxRetryDelayMs = options.maxRetryDelayMs ?? 5000;

  const fetchWithRetries = async (request: Request): Promise<Response> => {
    const body = request.body === null ? undefined : await request.arrayBuffer();
    for (let attempt = 1; ; attempt++) {
      const sent = signer ? await signed(signer, request, body) : new Request(request.url, { method: request.method, headers: request.headers, body });
      const response = await send(sent);
      if (response.status !== 503 || attempt >= maxAttempts) return response;
      await response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, Math.min(retryDelayMs(response.headers.get('retry-after')), maxRetryDelayMs)));
    }
  };

  const client = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/$/, ''), fetch: fetchWithRetries });
  client.use(textAsJsonString);
  return client;
};
