import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One DynamoDB Local for the whole run; each test file makes its own table in it.
    globalSetup: ['test/support/dynamodb-local.global.ts'],
    // Request logs are printed only for tests that fail.
    silent: 'passed-only',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
