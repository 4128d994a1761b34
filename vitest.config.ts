import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/** The suites that race in real time or hold the service to a time: see the second project below. */
const REAL_TIME_SUITES = ['contention', 'holds-contention', 'model', 'stock-model', 'fuzz', 'faults'].map((name) => `test/reliability/${name}.test.ts`);

/**
 * The files that take longest, longest first (a run's JSON report gives each file's time): started
 * first, so that the two files at a time end together rather than one long file alone at the end.
 * Vitest orders by the last run's times when it has them, and a fresh clone has none.
 */
const LONGEST_FIRST = [
  'test/e2e/local-start.test.ts',
  'test/integration/spread-races.test.ts',
  'test/e2e/docs-page.test.ts',
  'test/integration/hot-sku.test.ts',
  'test/integration/conflict-model.test.ts',
  'test/e2e/docs-examples.test.ts',
  'test/reliability/invariants.test.ts',
  'test/integration/batch-repository.test.ts',
  'test/integration/event-stream.test.ts',
  'test/infra/bundled-handlers.test.ts',
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = LONGEST_FIRST.findIndex((path) => file.moduleId.endsWith(path));
      return index === -1 ? LONGEST_FIRST.length : index;
    };
    return (await super.sort(files)).sort((one, other) => one.project.config.sequence.groupOrder - other.project.config.sequence.groupOrder || rank(one) - rank(other));
  }
}

export default defineConfig({
  test: {
    // A DynamoDB Local for each file a project runs at once; each test file makes its own table in its worker's.
    globalSetup: ['test/support/dynamodb-local.global.ts'],
    // Request logs are printed only for tests that fail.
    silent: 'passed-only',
    // Powertools' Logger and Metrics write through the global console, which vitest holds back
    // for tests that pass and tests can spy on, rather than through consoles of their own onto
    // the terminal; metrics stay on, so that tests read what a function would publish.
    // A DynamoDB Local, on a loaded shared machine, can take seconds over a large
    // transaction: an attempt cut off at AWS's 2 s would be sent again and change what tests see.
    env: { POWERTOOLS_DEV: 'true', POWERTOOLS_METRICS_DISABLED: 'false', DYNAMODB_REQUEST_TIMEOUT_MS: '15000' },
    sequence: { sequencer: LongestFirst },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      // Two files at once (vitest's default on two cores is one): a test waits on DynamoDB Local for
      // most of its time, so one file leaves the machine mostly idle. The simulator's runs are on no
      // clock, so they run here too.
      {
        extends: true,
        test: {
          name: 'unit, integration, e2e, infra, simulation',
          include: ['test/**/*.test.ts'],
          exclude: REAL_TIME_SUITES,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      // The suites that race in real time, after the rest and one file at a time: the contention
      // suites send bursts of requests at once through the conflict model, and beside the rest on two
      // cores their requests passed the function's deadline ten times over; the faults suite waits
      // out a Retry-After. The model, stock model and fuzz suites send one request after another, with
      // no pause: beside the rest, sharing a DynamoDB Local, they made every other file several times slower.
      {
        extends: true,
        test: { name: 'real-time races', include: REAL_TIME_SUITES, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
