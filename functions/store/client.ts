import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { RequestSigner } from '@smithy/types';

/**
 * Timeouts and retries, chosen for a table a few milliseconds away:
 * - connect within 1 s: a healthy endpoint connects in single-digit ms, so a longer wait is an outage;
 * - each attempt answers within 2 s: a single-item call takes ~10 ms on AWS, a busy DynamoDB Local
 *   a few hundred, so 2 s is only reached by a store that is not coming back soon;
 * - 3 attempts in all (the SDK's standard mode: throttling and transient errors, jittered backoff).
 * Worst case ~6.5 s for one call. A request makes several, so these bounds alone do not keep it
 * inside the function's timeout: the request's deadline does (functions/http/time-budget.ts), by
 * aborting whatever call is in flight when it passes.
 */
const CONNECTION_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_000;

/**
 * The attempts against an endpoint set by configuration (DynamoDB Local; the functions on AWS have
 * none) may be given longer (`DYNAMODB_REQUEST_TIMEOUT_MS`): one DynamoDB Local
 * serving a whole test run on a loaded shared machine can take seconds over a 100-item transaction,
 * and an attempt cut off there is sent again, which a test sees as a 200 where a 201 was due, or as
 * a 503. On AWS (no endpoint) the 2 s stands.
 */
const requestTimeoutMs = (endpoint: string | undefined): number => {
  const configured = endpoint === undefined ? undefined : process.env.DYNAMODB_REQUEST_TIMEOUT_MS;
  if (configured === undefined || configured === '') return REQUEST_TIMEOUT_MS;
  const ms = Number(configured);
  if (!Number.isInteger(ms) || ms <= 0) throw new Error(`DYNAMODB_REQUEST_TIMEOUT_MS must be a whole number of milliseconds above 0, not '${configured}'`);
  return ms;
};
export const MAX_ATTEMPTS = 3;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * DynamoDB Local reads the access key from the Authorization header and checks no signature, so a
 * request to it carries that header alone: the SigV4 signature's hashing is about a twentieth of the
 * local server's CPU per request (docs/performance.md).
 */
const LOCAL_AUTHORIZATION = 'AWS4-HMAC-SHA256 Credential=local/20260101/local/dynamodb/aws4_request, SignedHeaders=host, Signature=0';
const unsignedForDynamoDbLocal: RequestSigner = {
  sign: async (request) => {
    request.headers.authorization = LOCAL_AUTHORIZATION;
    return request;
  },
};

/** DynamoDB Local accepts any credentials; a developer without an AWS profile should not need one. */
const localDefaults = (endpoint: string) =>
  LOOPBACK_HOSTS.has(new URL(endpoint).hostname) && !process.env.AWS_ACCESS_KEY_ID
    ? { region: process.env.AWS_REGION ?? 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, signer: unsignedForDynamoDbLocal }
    : {};

/**
 * Stores that clients reach inside this process rather than over a socket, by endpoint: the conflict
 * model that `npm start -- --conflict-model` runs beside the functions (local/start.ts). None on AWS.
 */
const inProcessStores = new Map<string, InProcessStore>();
type InProcessStore = (requestTimeoutMs: number) => NonNullable<DynamoDBClientConfig['requestHandler']>;

/** Clients of `endpoint` created from now on reach it through `handlerWithTimeout`, given their request timeout. */
export const reachInProcess = (endpoint: string, handlerWithTimeout: InProcessStore): void => {
  inProcessStores.set(endpoint, handlerWithTimeout);
};

/** `endpoint` is unset on AWS; locally it is DynamoDB Local's URL (`DYNAMODB_ENDPOINT`). */
export const createDynamoDbClient = (endpoint = process.env.DYNAMODB_ENDPOINT): DynamoDBClient => {
  const inProcess = endpoint === undefined ? undefined : inProcessStores.get(endpoint);
  const timeoutMs = requestTimeoutMs(endpoint);
  const client = new DynamoDBClient({
    ...(endpoint ? { endpoint, ...localDefaults(endpoint) } : {}),
    maxAttempts: MAX_ATTEMPTS,
    requestHandler: inProcess?.(timeoutMs) ?? {
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      requestTimeout: timeoutMs,
      // Without it @smithy/node-http-handler 4 only logs a warning when requestTimeout passes and
      // keeps waiting (up to its 300 s socket default), so a hung store would hang every request.
      throwOnRequestTimeout: true,
    },
  });
  // It copies every call's input and output, filtered for logging, even for a logger that drops
  // them: no SDK logger is set, and the adapter logs what matters itself (functions/telemetry.ts).
  client.middlewareStack.remove('loggerMiddleware');
  return client;
};

export const createDocumentClient = (endpoint = process.env.DYNAMODB_ENDPOINT): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(createDynamoDbClient(endpoint));
