import { fork } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import type { Explored } from './explore';

/*
 * Exploring on every core. A run sends one store call at a time by design, so a lone explorer
 * leaves the machine waiting on the store most of the time. Explorers in processes of their own
 * take interleaved seeds (the first seed plus their number, by the number of explorers); the first
 * run to fail stops the others, and its explorer shrinks it.
 */

/** What an explorer process tells its parent. */
export type ExplorerMessage =
  | { readonly kind: 'ran'; readonly explored: Explored }
  | { readonly kind: 'failing'; readonly seed: number; readonly foundAfterSeconds: number }
  | { readonly kind: 'failed'; readonly seed: number; readonly foundAfterSeconds: number; readonly sizes: string; readonly story: string }
  | { readonly kind: 'finished' };

/** What the parent asks of an explorer process. */
export interface ExplorerOrders {
  readonly seconds: number;
  /** DynamoDB Local's, or none for the memory store. */
  readonly endpoint: string | undefined;
  readonly firstSeed: number;
  readonly stride: number;
}

export interface ExplorersFound {
  readonly runs: number;
  readonly calls: number;
  readonly faults: number;
  readonly seconds: number;
  readonly conflictOrders: number;
  readonly failed?: { readonly seed: number; readonly foundAfterSeconds: number; readonly sizes: string; readonly story: string };
}

export const exploreInProcesses = (seconds: number, explorers: number, endpoint: string | undefined, report: (line: string) => void): Promise<ExplorersFound> =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const firstSeed = randomInt(2 ** 31);
    const conflictOrders = new Set<string>();
    let [runs, calls, faults, finished] = [0, 0, 0, 0];
    let failing: number | undefined;
    const summary = () => ({ runs, calls, faults, seconds: (performance.now() - started) / 1000, conflictOrders: conflictOrders.size });
    const children = Array.from({ length: explorers }, (_, index) => {
      const child = fork(join(import.meta.dirname, 'explorer.ts'), [], { execArgv: ['--import', 'tsx'] });
      child.on('message', (message: ExplorerMessage) => {
        if (message.kind === 'ran') {
          if (failing !== undefined) return;
          runs++;
          calls += message.explored.calls;
          faults += message.explored.faults;
          for (const kind of message.explored.conflictOrders) conflictOrders.add(kind);
          report(message.explored.line);
        } else if (message.kind === 'failing') {
          if (failing !== undefined) return;
          failing = message.seed;
          for (const other of children) if (other !== child) other.kill();
        } else if (message.kind === 'failed') {
          if (message.seed === failing) resolve({ ...summary(), seconds: message.foundAfterSeconds, failed: message });
        } else if (++finished === explorers) resolve(summary());
      });
      child.on('exit', (code, signal) => {
        if (signal === null && code !== 0) reject(new Error(`explorer ${index} exited with ${code}`));
      });
      const orders: ExplorerOrders = { seconds, endpoint, firstSeed: (firstSeed + index) % 2 ** 31, stride: explorers };
      child.send(orders);
      return child;
    });
  });
