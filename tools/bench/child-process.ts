import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

/**
 * Runs a TypeScript module in its own Node process (this Node, through tsx), with an IPC channel
 * for its results. Its stdout, where handlers write their request log, goes to `stdout`: a file
 * descriptor or 'ignore' (/dev/null), so that logging costs what a write costs and no more, or
 * 'pipe' for the bench to read what it prints.
 */
export const spawnTypeScript = (
  script: string,
  { args = [], env = {}, stdout = 'ignore' }: { args?: string[]; env?: NodeJS.ProcessEnv; stdout?: number | 'ignore' | 'pipe' } = {},
): ChildProcess =>
  spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', stdout, 'inherit', 'ipc'],
  });

/** The first message the child sends; rejects if it exits before sending one. */
export const firstMessage = <Message>(child: ChildProcess): Promise<Message> =>
  new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`${child.spawnargs.join(' ')} exited (${code}) before answering`));
    child.once('exit', onExit);
    child.once('message', (message) => {
      child.off('exit', onExit);
      resolve(message as Message);
    });
  });

export const stopChild = async (child: ChildProcess): Promise<void> => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exit = once(child, 'exit');
  child.kill('SIGTERM');
  await exit;
};
