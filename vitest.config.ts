import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // One DynamoDB Local for each project's run; each test file makes its own table in it.
    globalSetup: ['test/support/dynamodb-local.global.ts'],
    // Request logs are printed only for tests that fail.
    silent: 'passed-only',
    // Powertools' Logger and Metrics write through the global console, which vitest holds back
    // for tests that pass and tests can spy on, rather than through consoles of their own onto
    // the terminal; metrics stay on, so that tests read what a function would publish.
    // The run's one DynamoDB Local, on a loaded shared machine, can take seconds over a large
    // transaction: an attempt cut off at AWS's 2 s would be sent again and change what tests see.
    env: { POWERTOOLS_DEV: 'true', POWERTOOLS_METRICS_DISABLED: 'false', DYNAMODB_REQUEST_TIMEOUT_MS: '15000' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'unit, integration, e2e, infra', include: ['test/**/*.test.ts'], exclude: ['test/reliability/**'], sequence: { groupOrder: 0 } } },
      // The reliability suites, after the rest and one file at a time: the races in real time send
      // bursts of requests at once through the conflict model, and beside the rest on two cores their
      // requests passed the function's deadline ten times over; the models and the fuzz, one request
      // at a time, ran four times slower beside the rest than alone. The simulator races in the order
      // of store calls, on no clock.
      {
        extends: true,
        test: { name: 'reliability', include: ['test/reliability/**/*.test.ts'], fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
