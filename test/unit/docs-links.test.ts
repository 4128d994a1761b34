import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { documentedPages } from '../support/doc-examples';

/*
 * Every relative link of the README and docs/ leads somewhere: to a file or folder of the
 * repository, and to a heading of the page it names when it carries a #fragment, by GitHub's
 * rule for heading anchors.
 */

const ROOT = process.cwd();

/** Markdown outside fenced code blocks, where a link is a link. */
const prose = (markdown: string) => markdown.replace(/^```[\s\S]*?^```/gm, '');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens; a repeat gets -1, -2... */
const anchorsOf = (markdown: string): Set<string> => {
  const anchors = new Set<string>();
  for (const [, heading = ''] of prose(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    let anchor = base;
    for (let repeat = 1; anchors.has(anchor); repeat++) anchor = `${base}-${repeat}`;
    anchors.add(anchor);
  }
  return anchors;
};

const linksOf = (markdown: string) =>
  [...prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)].map(([, target = '']) => target).filter((target) => !/^[a-z]+:/i.test(target));

describe.each(documentedPages(ROOT))('the links of %s', (page) => {
  const markdown = readFileSync(join(ROOT, page), 'utf8');

  it('lead to a file or folder of the repository, and to a heading of the page they name', () => {
    const broken = linksOf(markdown).filter((target) => {
      const [path = '', fragment] = target.split('#');
      const file = path === '' ? join(ROOT, page) : normalize(join(ROOT, dirname(page), path));
      if (!existsSync(file)) return true;
      if (fragment === undefined) return false;
      return statSync(file).isDirectory() || !anchorsOf(readFileSync(file, 'utf8')).has(fragment);
    });
    expect(broken).toEqual([]);
  });
});

describe('heading anchors', () => {
  it('are made as GitHub makes them', () => {
    expect([...anchorsOf('# The API\n## `GET /batches/{ref}`\n## Deploy\n### Deploy\n## Why no X-Ray')]).toEqual([
      'the-api',
      'get-batchesref',
      'deploy',
      'deploy-1',
      'why-no-x-ray',
    ]);
  });
});
