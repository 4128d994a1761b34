import { randomUUID } from 'node:crypto';
import type { Instant } from '../../domain/holds';

/**
 * What the DynamoDB adapter takes from outside the table: the time it reads and writes, the chance
 * behind its picks and backoffs, the ids it draws and its waits. In a function these are the
 * system's; the simulator (tools/simulate) hands in its own, so that a run is fixed by its seed
 * (docs/reliability.md, "The simulator").
 */
export interface World {
  /** Milliseconds since the epoch. */
  now(): Instant;
  /** A number in [0, 1), as Math.random. */
  random(): number;
  /** A new unique id, as crypto.randomUUID. */
  newId(): string;
  /** Resolves once `ms` have passed. */
  sleep(ms: number): Promise<void>;
}

export const systemWorld: World = {
  now: () => Date.now(),
  random: () => Math.random(),
  newId: () => randomUUID(),
  sleep: (ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
};

/** The system's world but for its clock, which a test sets. */
export const worldAt = (clock: () => Instant): World => ({ ...systemWorld, now: clock });
