import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { eventSchemaFiles } from '../../tools/event-schemas';

/*
 * One casing in every body, query and event (docs/api.md, "Conventions"): snake_case. The
 * OpenAPI document is held to the handlers' answers by test/unit/openapi.test.ts and the event
 * schemas to the events by test/unit/event-schemas.test.ts, so the names these documents give are
 * the names callers meet.
 */

const SNAKE_CASE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;

/** Every property and parameter name a JSON Schema or an OpenAPI document gives, with where it stands. */
const namesIn = (node: unknown, at: string, found: { name: string; at: string }[] = []): { name: string; at: string }[] => {
  if (Array.isArray(node)) {
    node.forEach((item, index) => namesIn(item, `${at}[${index}]`, found));
    return found;
  }
  if (node === null || typeof node !== 'object') return found;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' && value && typeof value === 'object') {
      for (const name of Object.keys(value)) found.push({ name, at: `${at}.properties` });
    }
    if (key === 'required' && Array.isArray(value)) {
      for (const name of value) found.push({ name: String(name), at: `${at}.required` });
    }
    if (key === 'parameters' && Array.isArray(value)) {
      for (const parameter of value as { name?: string; in?: string }[]) {
        if (parameter.in !== 'header' && parameter.name !== undefined) found.push({ name: parameter.name, at: `${at}.parameters` });
      }
    }
    namesIn(value, `${at}.${key}`, found);
  }
  return found;
};

const notSnakeCase = (names: readonly { name: string; at: string }[]) => names.filter(({ name }) => !SNAKE_CASE.test(name)).map(({ name, at }) => `${name} (${at})`);

describe('the contract speaks snake_case', () => {
  it('names every field of every body and answer, and every path and query parameter, in snake_case', () => {
    const document = JSON.parse(readFileSync('docs/openapi.json', 'utf8')) as { paths: unknown; components: unknown };
    expect(notSnakeCase([...namesIn(document.paths, 'paths'), ...namesIn(document.components, 'components')])).toEqual([]);
  });

  it('names every field of every event in snake_case', () => {
    const names = eventSchemaFiles().flatMap(({ fileName, text }) => namesIn(JSON.parse(text), fileName));
    expect(names.length).toBeGreaterThan(0);
    expect(notSnakeCase(names)).toEqual([]);
  });
});
