import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

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
export const MAX_ATTEMPTS = 3;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** DynamoDB Local accepts any credentials; a developer without an AWS profile should not need one. */
const localDefaults = (endpoint: string) =>
  LOOPBACK_HOSTS.has(new URL(endpoint).hostname) && !process.env.AWS_ACCESS_KEY_ID
    ? { region: process.env.AWS_REGION ?? 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
    : {};

/** `endpoint` is unset on AWS; locally it is DynamoDB Local's URL (`DYNAMODB_ENDPOINT`). */
export const createDynamoDbClient = (endpoint = process.env.DYNAMODB_ENDPOINT): DynamoDBClient =>
  new DynamoDBClient({
    ...(endpoint ? { endpoint, ...localDefaults(endpoint) } : {}),
    maxAttempts: MAX_ATTEMPTS,
    requestHandler: {
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      // Without it @smithy/node-http-handler 4 only logs a warning when requestTimeout passes and
      // keeps waiting (up to its 300 s socket default), so a hung store would hang every request.
      throwOnRequestTimeout: true,
    },
  });

export const createDocumentClient = (endpoint = process.env.DYNAMODB_ENDPOINT): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(createDynamoDbClient(endpoint));
