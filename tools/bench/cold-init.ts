import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';

export interface InitCase {
  readonly label: string;
  readonly file: string;
  readonly nodeOptions?: readonly string[];
}

/**
 * Time from the start to the end of `import()` of the bundle, inside a fresh process. Node's own
 * bootstrap (the same for every bundle, and the runtime's business on Lambda) is left out, so the
 * figure is what the bundle costs: reading, compiling and running its module scope.
 */
const IMPORT_TIMER = [
  'const startedAt = performance.now();',
  'await import(process.argv[1]);',
  'process.stdout.write(String(performance.now() - startedAt));',
].join('');

/** Lambda's environment as far as module scope reads it; no endpoint, so nothing points at DynamoDB Local. */
const lambdaLikeEnvironment = (): NodeJS.ProcessEnv => {
  const { NODE_OPTIONS, NODE_COMPILE_CACHE, DYNAMODB_ENDPOINT, ...inherited } = process.env;
  return { ...inherited, AWS_REGION: 'us-east-1', TABLE_NAME: 'allocations' };
};

const importMilliseconds = ({ file, nodeOptions = [] }: InitCase, env: NodeJS.ProcessEnv): number => {
  const child = spawnSync(process.execPath, [...nodeOptions, '--input-type=module', '-e', IMPORT_TIMER, pathToFileURL(file).href], {
    env,
    encoding: 'utf8',
  });
  const milliseconds = Number(child.stdout);
  if (child.status !== 0 || !Number.isFinite(milliseconds)) {
    throw new Error(`Importing ${file} failed (exit ${child.status}):\n${child.stderr}`);
  }
  return milliseconds;
};

/**
 * Import times of each case in `processes` fresh processes. The cases take turns, and the order
 * rotates each round, so a burst of load on the machine falls on every case alike.
 */
export const measureColdInit = (cases: readonly InitCase[], processes: number): Map<string, number[]> => {
  const env = lambdaLikeEnvironment();
  // One untimed import each, so the first timed one does not also pay for reading the disk.
  for (const initCase of cases) importMilliseconds(initCase, env);

  const samples = new Map(cases.map((initCase) => [initCase.label, [] as number[]]));
  for (let round = 0; round < processes; round++) {
    for (let turn = 0; turn < cases.length; turn++) {
      const initCase = cases[(round + turn) % cases.length] as InitCase;
      samples.get(initCase.label)?.push(importMilliseconds(initCase, env));
    }
  }
  return samples;
};
