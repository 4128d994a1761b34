import type { World } from '../../functions/store/world';
import type { Chance } from './chance';
import type { Waiting } from './scheduler';

/** Where every run's clock starts: a fixed moment, so that the times a run writes are its seed's. */
const RUN_STARTS_AT = Date.parse('2026-06-01T00:00:00.000Z');

/** The run's time: it moves only when the run moves it. */
export class SimulatedClock {
  private at = RUN_STARTS_AT;

  now(): number {
    return this.at;
  }

  advance(ms: number): void {
    this.at += ms;
  }

  /** Moves to `moment`, never back. */
  reach(moment: number): void {
    this.at = Math.max(this.at, moment);
  }
}

const hex = (chance: Chance, digits: number) => Array.from({ length: digits }, () => chance.int(0, 15).toString(16)).join('');

/** The world the store code sees in a run: the run's clock, chance drawn from the seed, ids from it, and sleeps that wait for the run's clock. */
export const simulatedWorld = (clock: SimulatedClock, chance: Chance, waiting: Waiting): World => ({
  now: () => clock.now(),
  random: () => chance.next(),
  newId: () => `${hex(chance, 8)}-${hex(chance, 4)}-4${hex(chance, 3)}-8${hex(chance, 3)}-${hex(chance, 12)}`,
  sleep: (ms) => waiting.sleep(clock.now() + ms),
});
