import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../local/dynamodb-local';
import { CLIENT_PACKAGE, type DocExample, type ExpectedAnswer, LOCAL_ORIGIN, documentedPages, examplesOf } from '../support/doc-examples';
import { dynamoDbEndpoint, uniqueId } from '../support/dynamodb';
import { type RunningService, listening, startService } from '../support/local-service';

/*
 * Every request example of the README and docs/ runs, as written, with the machine's curl, against
 * `npm start`'s server over a table of its page's own, in the order of the page; its answer must be
 * the one the page shows (docs/development.md, "The docs' examples and links").
 */

const ROOT = process.cwd();

interface Received {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

const SNIPPETS = mkdtempSync(join(tmpdir(), 'doc-snippets-'));

/**
 * A TypeScript example as a reader would run it against `npm start`: type-checked with the project's
 * compiler in strict mode, then run, importing the typed client from this repository.
 */
const runProgram = async (example: DocExample, origin: string) => {
  const file = join(SNIPPETS, `${example.page.replace(/\W/g, '-')}-${example.line}.mts`);
  writeFileSync(file, example.command.replaceAll(`'${CLIENT_PACKAGE}'`, `'${join(ROOT, 'client', 'index')}'`).replaceAll(LOCAL_ORIGIN, origin));
  const compilerOptions = ['--strict', '--module', 'esnext', '--moduleResolution', 'bundler', '--target', 'es2022', '--types', 'node', '--skipLibCheck'];
  await succeeds(join(ROOT, 'node_modules', '.bin', 'tsc'), ['--ignoreConfig', '--noEmit', ...compilerOptions, file]);
  await succeeds(process.execPath, ['--import', 'tsx', file]);
};

/** Runs a program; when it fails, the failure says what it printed (tsc prints its errors on stdout). */
const succeeds = async (program: string, args: string[]) => {
  try {
    await promisify(execFile)(program, args);
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${program} ${args.join(' ')} failed:\n${stdout}${stderr}`);
  }
};

const run = async (example: DocExample, origin: string): Promise<Received> => {
  const command = example.command.replaceAll(LOCAL_ORIGIN, origin);
  const { stdout } = await promisify(execFile)('bash', ['-o', 'pipefail', '-c', command], { encoding: 'latin1' });
  const bytes = Buffer.from(stdout, 'latin1');
  const headerEnd = bytes.indexOf('\r\n\r\n');
  const [statusLine = '', ...headerLines] = bytes.subarray(0, headerEnd).toString('latin1').split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: bytes.subarray(headerEnd + 4).toString('utf8') };
};

/** The JSON shown, with each "<...>" string standing for any string the service generated. */
const withPlaceholders = (shown: unknown): unknown => {
  if (typeof shown === 'string' && /^<.+>$/.test(shown)) return expect.any(String);
  if (Array.isArray(shown)) return shown.map(withPlaceholders);
  if (shown !== null && typeof shown === 'object') {
    return Object.fromEntries(Object.entries(shown).map(([key, value]) => [key, withPlaceholders(value)]));
  }
  return shown;
};

const expectAnswer = (received: Received, expected: ExpectedAnswer) => {
  const body = 'json' in expected.body ? JSON.parse(received.body) : received.body;
  expect({ status: received.status, body }).toEqual({
    status: expected.status,
    body: 'json' in expected.body ? withPlaceholders(expected.body.json) : expected.body.text,
  });
  expect(received.headers).toMatchObject(expected.headers);
};

const title = (example: DocExample) => `${example.page}:${example.line} ${example.command.split('\n')[0]?.slice(0, 90)}`;

const pages = documentedPages(ROOT).map((page) => ({ page, examples: examplesOf(ROOT, page) }));

it('finds the examples of the README and of the API page', () => {
  const localExamples = (page: string) => pages.find((entry) => entry.page === page)?.examples.filter((example) => example.local) ?? [];
  expect(localExamples('README.md').length).toBeGreaterThan(5);
  expect(localExamples('docs/api.md').length).toBeGreaterThan(20);
});

for (const { page, examples } of pages.filter((entry) => entry.examples.length > 0)) {
  describe(`the examples of ${page}, from an empty table`, () => {
    let service: RunningService | undefined;
    let origin = '';

    if (examples.some((example) => example.local)) {
      beforeAll(async () => {
        const port = await freePort();
        service = startService({ PORT: String(port), DYNAMODB_ENDPOINT: dynamoDbEndpoint(), TABLE_NAME: uniqueId('docs') });
        await listening(service);
        origin = `localhost:${port}`;
      });
      afterAll(() => service?.stop());
    }

    for (const example of examples) {
      if (!example.local) {
        it.skip(`${title(example)} (needs AWS or SAM: not run here)`, () => {});
        continue;
      }
      if (example.language === 'ts') {
        it(title(example), () => runProgram(example, origin));
        continue;
      }
      it(title(example), async () => {
        const received = await run(example, origin);
        if (example.expected) expectAnswer(received, example.expected);
        else expect(received.status, received.body).toBeLessThan(300);
      });
    }
  });
}
