import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { documentedPages } from '../support/doc-examples';

/*
 * The README's first screen is a reader's first contact: what the service does and promises in
 * plain words, how to start it and with which options, and a client call that runs as written.
 */

const README = readFileSync('README.md', 'utf8');
const firstScreen = README.slice(0, README.indexOf('## Quick start'));

describe('the README', () => {
  it("says what the service does and promises without the store's internals", () => {
    expect(firstScreen.length).toBeGreaterThan(0);
    expect(firstScreen).not.toMatch(/\bpieces?\b|partition|grouped|spread|conditional|transaction/i);
  });

  it("lists the local server's options in a table, PORT among them", () => {
    const quickStart = README.slice(README.indexOf('## Quick start'), README.indexOf('With the server running'));
    const optionRows = quickStart.split('\n').filter((line) => /^\| `[^`]+` \|/.test(line));
    expect(optionRows.some((row) => row.includes('PORT'))).toBe(true);
    expect(optionRows.some((row) => row.includes('--lambda'))).toBe(true);
    expect(quickStart).not.toMatch(/npm start .*# .*--/);
  });

  it('shows a client call that type-checks as written, branching on the error code', () => {
    const snippet = /## Call it from code[\s\S]*?```ts\n([\s\S]*?)```/.exec(README)?.[1] ?? '';
    expect(snippet).toContain('error.code');
    // Inside the repository, where the package resolves; .local/ is git's to ignore.
    const file = '.local/readme-client-call.ts';
    mkdirSync('.local', { recursive: true });
    writeFileSync(file, `${snippet}export {};\n`);
    try {
      const flags = ['--noEmit', '--ignoreConfig', '--strict', '--module', 'esnext', '--moduleResolution', 'bundler', '--target', 'es2022', '--skipLibCheck', '--types', 'node'];
      const checked = spawnSync('node_modules/.bin/tsc', [...flags, file], { encoding: 'utf8' });
      expect(`${checked.stdout}${checked.stderr}`).toBe('');
      expect(checked.status).toBe(0);
    } finally {
      rmSync(file, { force: true });
    }
  }, 60_000);

  it('imports the typed client by its package name, which resolves in this repository once npm ci has run', () => {
    expect(README).toContain("from '@allocation-service/client';\n");
    const resolved = createRequire(import.meta.url).resolve('@allocation-service/client');
    expect(existsSync(resolved)).toBe(true);
  });
});

describe('the answers the docs show', () => {
  it.each(documentedPages(process.cwd()))("name a status with the words of its status line in %s (201 Created, not 201 OK)", (page) => {
    const wordsShown = [...readFileSync(page, 'utf8').matchAll(/^# (\d{3}) ([A-Z][A-Za-z ]*)(?:,|$)/gm)].map(([, status = '', words = '']) => ({ status: Number(status), words }));
    expect(wordsShown.filter(({ status, words }) => words !== STATUS_CODES[status])).toEqual([]);
  });
});
