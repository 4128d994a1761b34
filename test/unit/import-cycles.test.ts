import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * The modules form layers: a module that imports itself through others can be neither read nor
 * changed apart from the rest of its circle, and which of them runs first depends on which one was
 * imported first. `import type` counts: a type shared through a circle ties its modules as much.
 * `import()` does not, as it loads on a call rather than with the module.
 */

const ROOT = process.cwd();
const SOURCE_FOLDERS = ['domain', 'functions', 'local', 'tools'];

const sourcesUnder = (folder: string): string[] =>
  readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourcesUnder(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });

/** Comments out, so that a comment quoting an import is not read as one. */
const code = (source: string) => source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

/** The specifiers of a module's import and export declarations: `import … from`, `import '…'`, `export … from`. */
const specifiersOf = (source: string) => [...code(source).matchAll(/^(?:import|export)\s(?:[^;'"]*?\sfrom\s)?['"]([^'"]+)['"]/gm)].map(([, specifier = '']) => specifier);

/** The repository's .ts file a relative specifier names, as the bundler's resolution finds it. */
const resolved = (from: string, specifier: string): string | undefined => {
  const base = join(dirname(from), specifier);
  return [`${base}.ts`, join(base, 'index.ts'), base.replace(/\.js$/, '.ts')].find((path) => path.endsWith('.ts') && existsSync(join(ROOT, path)));
};

const importsOf = (module: string): string[] =>
  specifiersOf(readFileSync(join(ROOT, module), 'utf8'))
    .filter((specifier) => specifier.startsWith('.'))
    .flatMap((specifier) => resolved(module, specifier) ?? []);

/** Every circle a depth-first walk closes, each written from the module it came back to. */
const cyclesFrom = (roots: readonly string[]): string[] => {
  const cycles: string[] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (module: string) => {
    const onPath = path.indexOf(module);
    if (onPath !== -1) {
      cycles.push([...path.slice(onPath), module].join(' → '));
      return;
    }
    if (done.has(module)) return;
    path.push(module);
    for (const imported of importsOf(module)) visit(imported);
    path.pop();
    done.add(module);
  };
  for (const root of roots) visit(root);
  return cycles;
};

describe('the imports of domain/, functions/, local/ and tools/', () => {
  it('lead no module back to itself through others, type-only imports included', () => {
    expect(cyclesFrom(SOURCE_FOLDERS.flatMap(sourcesUnder))).toEqual([]);
  });
});

describe('reading imports', () => {
  it('finds type-only, multi-line and re-exporting imports, and none in comments or dynamic imports', () => {
    const source = [
      "import type { A } from './a';",
      'import {',
      '  B,',
      '  type C,',
      "} from './b';",
      "import './c';",
      "export { D } from './d';",
      "export * from './e';",
      "/** The same as `import { F } from './f'`. */",
      "// import { G } from './g';",
      "export const h = () => import('./h');",
      "export const from = 'i';",
    ].join('\n');
    expect(specifiersOf(source)).toEqual(['./a', './b', './c', './d', './e']);
  });
});
