import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, inject } from 'vitest';
import { freePort } from '../../local/dynamodb-local';
import { uniqueId } from './dynamodb';

export interface RunningService {
  readonly process: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Runs `local/start.ts` as `npm start` does (through tsx, on this Node) with the given environment. */
export const startService = (env: NodeJS.ProcessEnv, args: string[] = []): RunningService => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return {
    process: child,
    output: () => output,
    stop: async (signal = 'SIGINT') => {
      if (child.exitCode !== null) return child.exitCode;
      child.kill(signal);
      const [code] = await once(child, 'exit');
      return code as number | null;
    },
  };
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

export const exited = async (service: RunningService): Promise<number | null> => {
  if (service.process.exitCode !== null) return service.process.exitCode;
  const [code] = await once(service.process, 'exit');
  return code as number | null;
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
    service = startService({ PORT: String(port), DYNAMODB_ENDPOINT: inject('dynamoDbEndpoint'), TABLE_NAME: uniqueId(tablePrefix) });
    await listening(service);
    baseUrl = `http://127.0.0.1:${port}`;
  });
  afterAll(() => service?.stop());
  return () => baseUrl;
};
