import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_FILE } from '../../tools/openapi';
import { serviceForTheseTests } from '../support/local-service';

// The API reference at GET /docs, as a browser shows it, in the machine's own Chromium (headless):
// playwright-core downloads no browser.

/** Tried in this order on PATH when CHROMIUM_PATH is not set. */
const CHROMIUM_NAMES = ['chromium', 'chromium-browser', 'google-chrome'];

const isExecutable = (file: string) => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** CHROMIUM_PATH as given (a wrong one fails the launch, not the search), else the first Chromium on PATH. */
const findChromium = (): string | undefined => {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  const directories = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  return CHROMIUM_NAMES.flatMap((name) => directories.map((directory) => join(directory, name))).find(isExecutable);
};

const chromiumPath = findChromium();
if (!chromiumPath) {
  // Not console.warn: the run prints the console of failed tests only (vitest.config.ts), and a skip does not fail.
  process.stderr.write(
    `Skipping test/e2e/docs-page.test.ts: no Chromium found (CHROMIUM_PATH is not set, and none of ${CHROMIUM_NAMES.join(', ')} ` +
      'is on PATH). Debian: apt-get install chromium; .ci/run installs it.\n',
  );
}

interface Operation {
  readonly method: string;
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
}

/** Every operation of the committed document, in a fixed order. */
const documentedOperations = (): Operation[] => {
  const { paths } = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as {
    paths: Record<string, Record<string, { operationId?: string; summary?: string }>>;
  };
  return Object.entries(paths)
    .flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([field]) => field !== 'parameters')
        .map(([method, { operationId = '', summary = '' }]) => ({ method: method.toUpperCase(), path, operationId, summary })),
    )
    .sort((a, b) => a.operationId.localeCompare(b.operationId));
};

describe.skipIf(!chromiumPath)('the API reference at GET /docs', () => {
  const baseUrlOf = serviceForTheseTests('e2e-docs');
  let browser: Browser;

  beforeAll(async () => {
    // Chromium refuses to start its sandbox as root, as in CI's container.
    browser = await chromium.launch({ executablePath: chromiumPath, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
  });
  afterAll(() => browser?.close());

  it('lists every operation of the document and opens each, logging no error and sending nothing off this server', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    const requested: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('request', (request) => requested.push(request.url()));
    page.on('requestfailed', (request) => errors.push(`${request.url()}: ${request.failure()?.errorText}`));
    const operations = documentedOperations();

    await page.goto(`${baseUrlOf()}/docs`);
    await page.locator('.opblock').nth(operations.length - 1).waitFor();
    const listed = await page.locator('.opblock-summary').evaluateAll((summaries) =>
      summaries.map((summary) => ({
        method: summary.querySelector('.opblock-summary-method')?.textContent ?? '',
        path: summary.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '',
        operationId: summary.querySelector('.opblock-summary-operation-id')?.textContent ?? '',
        summary: summary.querySelector('.opblock-summary-description')?.textContent ?? '',
      })),
    );
    expect(listed.sort((a, b) => a.operationId.localeCompare(b.operationId))).toEqual(operations);

    // Opened, each operation renders its parameters, body and every answer's schema and examples.
    for (const control of await page.locator('.opblock-summary-control').all()) await control.click();
    await expect.poll(() => page.locator('.opblock.is-open').count()).toBe(operations.length);
    await page.waitForLoadState('networkidle');

    expect(errors).toEqual([]);
    const server = new URL(baseUrlOf()).host;
    expect(requested.filter((url) => new URL(url).host !== server)).toEqual([]);
    expect(requested).toContain(`${baseUrlOf()}/openapi.json`);
    // Rendering every operation's schemas and examples in a browser takes 70 s alone on a 2-CPU machine, more beside the rest of the suite.
  }, 240_000);
});

describe("the local server's root", () => {
  const baseUrlOf = serviceForTheseTests('e2e-root');

  it('sends a browser on to the API reference at /docs', async () => {
    const answer = await fetch(`${baseUrlOf()}/`, { redirect: 'manual' });
    expect([answer.status, answer.headers.get('location')]).toEqual([302, '/docs']);
  });
});
