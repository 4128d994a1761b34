import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAllocationsHandler } from '../../functions/allocations';
import { openApiDocumentFile } from '../../functions/http/openapi-document';
import { lambdaContext, routeEvent } from '../support/events';
import { FakeRepository } from '../support/fake-repository';

// The file system's own readFile, counted.
const { readFile } = vi.hoisted(() => ({ readFile: vi.fn() }));
vi.mock('node:fs/promises', async (original) => {
  const fs = await original<typeof import('node:fs/promises')>();
  readFile.mockImplementation(fs.readFile);
  return { ...fs, readFile };
});

describe('GET /openapi.json', () => {
  let directory: string;
  let file: string;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'openapi-document-'));
    file = join(directory, 'openapi.json');
    readFile.mockClear();
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  const get = (handler: ReturnType<typeof createAllocationsHandler>) => handler(routeEvent('GET /openapi.json'), lambdaContext());

  it('reads nothing until the first request asks for the document, then reads the file once for every request', async () => {
    writeFileSync(file, '{"openapi":"3.1.0"}');
    const handler = createAllocationsHandler(new FakeRepository(), openApiDocumentFile(pathToFileURL(file)));
    expect(readFile).not.toHaveBeenCalled();

    const answers = [await get(handler), await get(handler)];
    expect(answers.map(({ statusCode, body }) => ({ statusCode, body }))).toEqual([
      { statusCode: 200, body: '{"openapi":"3.1.0"}' },
      { statusCode: 200, body: '{"openapi":"3.1.0"}' },
    ]);
    expect(readFile).toHaveBeenCalledTimes(1);
  });

  it('reads the file again after a read that failed', async () => {
    const handler = createAllocationsHandler(new FakeRepository(), openApiDocumentFile(pathToFileURL(file)));
    expect((await get(handler)).statusCode).toBe(500);
    writeFileSync(file, '{}');
    expect(await get(handler)).toMatchObject({ statusCode: 200, body: '{}' });
  });

  it('answers the text as it is, as JSON that a client must fetch again before using a copy it kept', async () => {
    const text = '{ "openapi": "3.1.0" }\n';
    expect(await get(createAllocationsHandler(new FakeRepository(), async () => text))).toEqual({
      statusCode: 200,
      headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache' },
      body: text,
    });
  });
});
