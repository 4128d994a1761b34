import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll } from 'vitest';
import { freePort } from '../../local/dynamodb-local';
import { dynamoDbEndpoint, uniqueId } from './dynamodb';

export interface RunningService {
  readonly process: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** What it printed on standard error alone. */
  errorOutput(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const runningService = (child: ChildProcess): RunningService => {
  let output = '';
  let errorOutput = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    errorOutput += chunk.toString();
  });
  return {
    process: child,
    output: () => output,
    errorOutput: () => errorOutput,
    stop: async (signal = 'SIGINT') => {
      if (child.exitCode !== null) return child.exitCode;
      child.kill(signal);
      const [code] = await once(child, 'exit');
      return code as number | null;
    },
  };
};

/** Runs `local/start.ts` as `npm start` does (through tsx, on this Node) with the given environment. */
export const startService = (env: NodeJS.ProcessEnv, args: string[] = []): RunningService =>
  runningService(spawn(process.execPath, ['--import', 'tsx', 'local/start.ts', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));

/**
 * Runs `npm start` itself, with `args` after its `--`: `process` is npm's. In a process group of its
 * own, npm leading it, as a terminal runs a command in the foreground: a signal to `-pid` reaches
 * every process of it, as a Ctrl-C does.
 */
export const startNpmStart = (env: NodeJS.ProcessEnv, args: string[] = []): RunningService =>
  runningService(
    spawn('npm', ['start', ...(args.length > 0 ? ['--', ...args] : [])], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true }),
  );

export interface ProcessInfo {
  readonly pid: number;
  readonly command: string;
}

/** Every process below `pid`, however deep, as `ps` lists them now. */
export const descendantsOf = (pid: number): ProcessInfo[] => {
  const rows = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((row) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(row))
    .filter((match) => match !== null)
    .map(([, child, parent, command]) => ({ pid: Number(child), parent: Number(parent), command: command ?? '' }));
  const below: ProcessInfo[] = [];
  const parents = [pid];
  while (parents.length > 0) {
    const parent = parents.pop();
    for (const row of rows.filter((candidate) => candidate.parent === parent)) {
      below.push({ pid: row.pid, command: row.command });
      parents.push(row.pid);
    }
  }
  return below;
};

/** Whether the process still exists (a zombie, not yet reaped by its parent, counts). */
export const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Waits until none of `processes` exists, or `timeoutMs` has passed; answers those still there. */
export const stillRunningAfter = async (processes: readonly ProcessInfo[], timeoutMs: number): Promise<ProcessInfo[]> => {
  const deadline = Date.now() + timeoutMs;
  let running = processes.filter(({ pid }) => isRunning(pid));
  while (running.length > 0 && Date.now() < deadline) {
    await sleep(50);
    running = running.filter(({ pid }) => isRunning(pid));
  }
  return running;
};

/** Resolves once the service prints that it listens; rejects if it exits first. */
export const listening = async (service: RunningService, timeoutMs = 60_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!/listening on/.test(service.output())) {
    if (service.process.exitCode !== null) throw new Error(`The service exited:\n${service.output()}`);
    if (Date.now() > deadline) throw new Error(`The service did not start:\n${service.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

/** Resolves with its exit code (null when a signal ended it); rejects if it still runs after `timeoutMs`. */
export const exited = async (service: RunningService, timeoutMs = 60_000): Promise<number | null> => {
  const { exitCode, signalCode } = service.process;
  if (exitCode !== null || signalCode !== null) return exitCode;
  try {
    const [code] = await once(service.process, 'exit', { signal: AbortSignal.timeout(timeoutMs) });
    return code as number | null;
  } catch {
    throw new Error(`The service still runs after ${timeoutMs / 1000} s:\n${service.output()}`);
  }
};

/**
 * For a test file: the service as `npm start` runs it, on a free port, over the run's DynamoDB
 * Local and a table of the file's own, started before its tests and stopped after them. Answers
 * the base URL, once the service listens.
 */
export const serviceForTheseTests = (tablePrefix: string): (() => string) => {
  let service: RunningService | undefined;
  let baseUrl = '';
  beforeAll(async () => {
    const port = await freePort();
    service = startService({ PORT: String(port), DYNAMODB_ENDPOINT: dynamoDbEndpoint(), TABLE_NAME: uniqueId(tablePrefix) });
    await listening(service);
    baseUrl = `http://127.0.0.1:${port}`;
  });
  afterAll(() => service?.stop());
  return () => baseUrl;
};
