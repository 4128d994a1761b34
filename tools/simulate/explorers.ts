import { type ChildProcess, fork } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import type { Explored } from './explore';
import type { PlantedDefect } from './planted-defects';

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
  readonly plant?: PlantedDefect;
}

export interface ExplorersFound {
  readonly runs: number;
  readonly calls: number;
  readonly faults: number;
  readonly seconds: number;
  readonly conflictOrders: number;
  readonly failed?: { readonly seed: number; readonly foundAfterSeconds: number; readonly sizes: string; readonly story: string };
}

export const exploreInProcesses = (seconds: number, explorers: number, endpoint: string | undefined, report: (line: string) => void, plant?: PlantedDefect): Promise<ExplorersFound> =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const firstSeed = randomInt(2 ** 31);
    const conflictOrders = new Set<string>();
    let [runs, calls, faults, finished] = [0, 0, 0, 0];
    let failing: { readonly seed: number; readonly foundAfterSeconds: number; readonly child: ChildProcess } | undefined;
    const stopped = new Set<ChildProcess>();
    const done = new Set<ChildProcess>();
    const stopAllBut = (kept?: ChildProcess) => {
      for (const other of children) {
        if (other === kept || done.has(other)) continue;
        stopped.add(other);
        other.kill();
      }
    };
    const summary = () => ({ runs, calls, faults, seconds: (performance.now() - started) / 1000, conflictOrders: conflictOrders.size });
    const children: ChildProcess[] = Array.from({ length: explorers }, (_, index) => {
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
          failing = { seed: message.seed, foundAfterSeconds: message.foundAfterSeconds, child };
          stopAllBut(child);
        } else if (message.kind === 'failed') {
          done.add(child);
          if (message.seed === failing?.seed) resolve({ ...summary(), seconds: message.foundAfterSeconds, failed: message });
        } else {
          done.add(child);
          if (++finished === explorers) resolve(summary());
        }
      });
      child.on('exit', (code, signal) => {
        if (done.has(child) || stopped.has(child)) return;
        done.add(child);
        if (failing?.child === child) {
          // It found a failing run and ended before it told the shrunk story: the seed still tells it.
          const { seed, foundAfterSeconds } = failing;
          resolve({ ...summary(), seconds: foundAfterSeconds, failed: { seed, foundAfterSeconds, sizes: 'a run its explorer ended before shrinking', story: `npm run simulate -- --seed ${seed} replays it and tells its story` } });
          return;
        }
        stopAllBut();
        reject(new Error(`explorer ${index} ended (${signal ?? `exit code ${code}`}) before it finished`));
      });
      const orders: ExplorerOrders = { seconds, endpoint, firstSeed: (firstSeed + index) % 2 ** 31, stride: explorers, ...(plant ? { plant } : {}) };
      child.send(orders);
      return child;
    });
  });
