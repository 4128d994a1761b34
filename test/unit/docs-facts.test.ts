import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { routeKeys, splitRouteKey } from '../../functions/http/route-keys';
import { ERROR_CODES } from '../../functions/http/errors';
import { type DocExample, documentedPages, examplesOf } from '../support/doc-examples';
import { responseProblems } from '../support/openapi-responses';

/*
 * What the docs state about the code, checked against the code, where no example runs it: a count
 * of the routes goes stale as soon as a route is added, and an answer shown without being run as
 * soon as a field is.
 */

const ROOT = process.cwd();

const NUMBER_WORDS = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen', 'twenty'];

/** Each "<number> routes" of a page that counts the API's routes: not "the five routes of holds", which counts some of them. */
const routeCountsIn = (markdown: string): number[] =>
  [...markdown.matchAll(/\b([a-z]+|\d+) routes\b(?! of)/gi)].flatMap(([, number = '']) => {
    const count = /^\d+$/.test(number) ? Number(number) : NUMBER_WORDS.indexOf(number.toLowerCase()) + 1;
    return count > 0 ? [count] : [];
  });

describe('the routes the docs count', () => {
  const routeCount = Object.values(routeKeys).flat().length;

  it.each(['docs/api.md', 'docs/deploy.md', 'docs/operations.md'])('are as many in %s as the route keys', (page) => {
    const counts = routeCountsIn(readFileSync(join(ROOT, page), 'utf8'));
    expect(counts.length).toBeGreaterThan(0);
    expect(counts).toEqual(counts.map(() => routeCount));
  });
});

/** The rows of docs/api.md's route index: each route, the function that serves it, and the statuses it lists. */
const routeIndexOf = (markdown: string) =>
  [...markdown.matchAll(/^\| \[`([A-Z]+ [^`]+)`\]\(#[^)]+\) \| (\w+) \| [^|]+ \| ([^|]+) \|$/gm)].map(([, routeKey = '', fn = '', statuses = '']) => ({
    routeKey,
    fn,
    statuses: statuses.split(',').map((status) => status.trim()),
  }));

/** The statuses any route may answer (docs/api.md, "Errors of every route"), which the index leaves out. */
const EVERY_ROUTES_STATUSES = ['400', '403', '404', '405', '413', '415', '429', '500', '503'];

describe("docs/api.md's route index", () => {
  const index = routeIndexOf(readFileSync(join(ROOT, 'docs/api.md'), 'utf8'));
  const openapi = JSON.parse(readFileSync(join(ROOT, 'docs/openapi.json'), 'utf8')) as { paths: Record<string, Record<string, { responses?: object }>> };

  it('lists every route the functions serve, once, with the function that serves it', () => {
    const served = Object.entries(routeKeys).flatMap(([fn, keys]) => keys.map((routeKey) => ({ routeKey, fn })));
    expect(index.map(({ routeKey, fn }) => ({ routeKey, fn }))).toEqual(expect.arrayContaining(served));
    expect(index).toHaveLength(served.length);
  });

  it.each(index.map((row) => [row.routeKey, row] as const))('lists for %s the statuses docs/openapi.json gives it, but those of every route', (routeKey, { statuses }) => {
    const { method, path } = splitRouteKey(routeKey);
    const documented = Object.keys(openapi.paths[path]?.[method.toLowerCase()]?.responses ?? {});
    expect(statuses.every((status) => documented.includes(status))).toBe(true);
    expect(documented.filter((status) => !EVERY_ROUTES_STATUSES.includes(status)).every((status) => statuses.includes(status))).toBe(true);
  });
});

/** The route key a request example calls: its method (`-X`, else GET) and the route whose path template matches. */
const routeKeyOf = ({ command }: DocExample): string | undefined => {
  const method = /-X\s+([A-Z]+)/.exec(command)?.[1] ?? 'GET';
  const path = /localhost:5005(\/[^\s'"]*)/.exec(command)?.[1] ?? '';
  return Object.values(routeKeys)
    .flat()
    .find((routeKey) => {
      const route = splitRouteKey(routeKey);
      const template = route.path.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
      return route.method === method && new RegExp(`^${template.join('[^/]+')}$`).test(path);
    });
};

describe('the answers the docs show without running them', () => {
  const shown = documentedPages(ROOT).flatMap((page) => examplesOf(ROOT, page, { shownOnly: true })).filter((example) => example.expected);

  it('include docs/development.md\'s example of the form', () => {
    expect(shown.map((example) => example.page)).toContain('docs/development.md');
  });

  it.each(shown.map((example) => [`${example.page}:${example.line}`, example] as const))('%s is an answer docs/openapi.json documents', (_where, example) => {
    const routeKey = routeKeyOf(example);
    const { status, body, headers } = example.expected ?? { status: 0, body: { text: '' }, headers: {} };
    expect(routeKey, example.command).toBeDefined();
    const response =
      'json' in body
        ? { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body.json) }
        : { status, headers: { 'content-type': 'text/plain', ...headers }, body: body.text };
    expect(responseProblems(routeKey ?? '', response)).toEqual([]);
  });
});

/** The rows of docs/api.md's table of error codes: each code and the statuses it lists. */
const errorCodeTableOf = (markdown: string) =>
  [...markdown.matchAll(/^\| `([a-z_]+)` \| ([\d, ]+) \| /gm)].map(([, code = '', statuses = '']) => ({ code, statuses: statuses.split(',').map((status) => Number(status.trim())) }));

describe("docs/api.md's table of error codes", () => {
  const table = errorCodeTableOf(readFileSync(join(ROOT, 'docs/api.md'), 'utf8'));

  it('lists every code an error body may carry, once, and no other', () => {
    expect(table.map(({ code }) => code).sort()).toEqual([...ERROR_CODES].sort());
  });

  it("gives each code the statuses the OpenAPI document's examples answer it with", () => {
    const document = JSON.parse(readFileSync(join(ROOT, 'docs/openapi.json'), 'utf8')) as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { examples?: Record<string, { value?: { code?: string } }> }> }> }>>;
    };
    const answered = new Map<string, Set<number>>();
    for (const operations of Object.values(document.paths)) {
      for (const { responses } of Object.values(operations) as { responses?: Record<string, { content?: Record<string, { examples?: Record<string, { value?: { code?: string } }> }> }> }[]) {
        for (const [status, { content }] of Object.entries(responses ?? {})) {
          for (const { examples } of Object.values(content ?? {})) {
            for (const { value } of Object.values(examples ?? {})) {
              if (value?.code) answered.set(value.code, (answered.get(value.code) ?? new Set()).add(Number(status)));
            }
          }
        }
      }
    }
    for (const [code, statuses] of answered) expect(table.find((row) => row.code === code)?.statuses, code).toEqual(expect.arrayContaining([...statuses]));
  });
});
