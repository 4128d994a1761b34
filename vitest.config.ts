import { defineConfig } from 'vitest/config';

/** The suites whose requests race in real time through the conflict model, and a store that faults on a real clock. */
const RACES_IN_REAL_TIME = ['test/reliability/contention.test.ts', 'test/reliability/holds-contention.test.ts', 'test/reliability/faults.test.ts'];

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
      { extends: true, test: { name: 'unit, integration, e2e, infra, models', include: ['test/**/*.test.ts'], exclude: RACES_IN_REAL_TIME, sequence: { groupOrder: 0 } } },
      // The races in real time, after the rest and one file at a time: each sends a burst of requests
      // at once through the conflict model, and beside the rest on two cores their requests passed the
      // function's deadline ten times over, which is this machine, not the service. The simulator
      // (test/reliability/simulation.test.ts) races in the order of store calls, on no clock.
      { extends: true, test: { name: 'races in real time', include: RACES_IN_REAL_TIME, fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
