import { ListTablesCommand, type ServiceInputTypes, type ServiceOutputTypes } from '@aws-sdk/client-dynamodb';
import type { FinalizeRequestMiddleware } from '@smithy/types';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dynamoDbEndpoint } from '../support/dynamodb';
import { createDynamoDbClient, reachInProcess } from '../../functions/store/client';

/** The headers of the request the client sends for one call, as they leave it. */
const headersSent = async (client: ReturnType<typeof createDynamoDbClient>): Promise<Record<string, string>> => {
  let sent: Record<string, string> = {};
  const capture: FinalizeRequestMiddleware<ServiceInputTypes, ServiceOutputTypes> = (next) => async (args) => {
    sent = { ...(args.request as { headers: Record<string, string> }).headers };
    return next(args);
  };
  client.middlewareStack.add(capture, { step: 'finalizeRequest', priority: 'low' });
  await client.send(new ListTablesCommand({ Limit: 1 }));
  client.destroy();
  return sent;
};

describe('the store client (functions/store/client.ts)', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('sends DynamoDB Local on loopback its access key in an Authorization header with no SigV4 signature, which it accepts', async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', '');
    const headers = await headersSent(createDynamoDbClient(dynamoDbEndpoint()));

    expect(headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=local\/.*Signature=0$/);
    expect(headers['x-amz-date']).toBeUndefined();
  });

  it('signs with SigV4 as usual when AWS credentials are set', async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY');
    vi.stubEnv('AWS_REGION', 'local');
    const headers = await headersSent(createDynamoDbClient(dynamoDbEndpoint()));

    expect(headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/.*Signature=[0-9a-f]{64}$/);
    expect(headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
  });

  it('gives a local endpoint\'s attempts the time DYNAMODB_REQUEST_TIMEOUT_MS says, 2 s when it is unset, and refuses one that is no number of milliseconds', () => {
    const endpoint = 'http://in-process.test:1';
    const timeoutsGiven: number[] = [];
    reachInProcess(endpoint, (requestTimeoutMs) => {
      timeoutsGiven.push(requestTimeoutMs);
      return { handle: () => Promise.reject(new Error('not sent')) };
    });

    vi.stubEnv('DYNAMODB_REQUEST_TIMEOUT_MS', '');
    createDynamoDbClient(endpoint);
    vi.stubEnv('DYNAMODB_REQUEST_TIMEOUT_MS', '15000');
    createDynamoDbClient(endpoint);

    expect(timeoutsGiven).toEqual([2_000, 15_000]);
    vi.stubEnv('DYNAMODB_REQUEST_TIMEOUT_MS', '15s');
    expect(() => createDynamoDbClient(endpoint)).toThrow("DYNAMODB_REQUEST_TIMEOUT_MS must be a whole number of milliseconds above 0, not '15s'");
  });

  it('copies no call for the SDK\'s logger: its logger middleware is not in the stack, on AWS either', () => {
    for (const endpoint of [dynamoDbEndpoint(), undefined]) {
      expect(createDynamoDbClient(endpoint).middlewareStack.identify().some((name) => name.startsWith('loggerMiddleware'))).toBe(false);
    }
  });
});
