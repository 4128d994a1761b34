import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

/**
 * Runs a TypeScript module in its own Node process (this Node, through tsx), with an IPC channel
 * for its results. Its stdout, where handlers write their log entries and metrics, goes to
 * `stdout`: a file descriptor or 'ignore' (/dev/null), so that logging costs what a write costs
 * and no more, or 'pipe' for the bench to read what it prints. Its stderr, where the entries of
 * level WARN and ERROR go, is this process's unless `stderr` says otherwise.
 */
export const spawnTypeScript = (
  script: string,
  {
    args = [],
    env = {},
    stdout = 'ignore',
    stderr = 'inherit',
  }: { args?: string[]; env?: NodeJS.ProcessEnv; stdout?: number | 'ignore' | 'pipe'; stderr?: number | 'inherit' } = {},
): ChildProcess =>
  spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', stdout, stderr, 'ipc'],
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
