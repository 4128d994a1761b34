import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/*
 * Where `npm start`'s DynamoDB Local answers, for the commands run beside it: the server writes its
 * endpoint here once the store is up, and removes it when it stops, so that `npm run check` with no
 * option reads the table the server serves.
 */

export const STORE_ENDPOINT_FILE = '.local/dynamodb-endpoint';

export const recordStoreEndpoint = (endpoint: string): void => {
  mkdirSync(dirname(STORE_ENDPOINT_FILE), { recursive: true });
  writeFileSync(STORE_ENDPOINT_FILE, `${endpoint}\n`);
};

export const forgetStoreEndpoint = (): void => rmSync(STORE_ENDPOINT_FILE, { force: true });

/** The endpoint of the DynamoDB Local a running `npm start` serves, if one does. */
export const recordedStoreEndpoint = (): string | undefined => {
  try {
    return readFileSync(STORE_ENDPOINT_FILE, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
};
