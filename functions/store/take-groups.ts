/*
 * A process's takes from each spread batch, grouped when many wait at once (docs/capacity.md, "Takes
 * grouped in one process"). A Lambda instance serves one request at a time and never groups; a
 * process that serves many (`npm start`, a container) sends the lines that wait for the same batch in
 * one transaction: one decrement of their summed qty and one put per line, which costs the store
 * less per line than a transaction each. Which writes a group makes is the repository's.
 */

/**
 * The transactions one process keeps in flight on one spread batch before its next takes wait and
 * group: fewer than a sale's requests in flight, so that they group, and enough that the store is
 * never idle between them.
 */
export const TAKES_IN_FLIGHT_PER_BATCH = 8;
/**
 * The lines of one group: one transaction of this many puts and a take costs DynamoDB Local the
 * least per line (docs/performance.md), far within DynamoDB's 100 items.
 */
export const MAX_LINES_PER_GROUP = 8;

interface Group<Take, Outcome> {
  readonly takes: Take[];
  readonly keys: Set<string>;
  readonly waiters: { resolve: (outcome: Outcome) => void; reject: (error: unknown) => void }[];
  readonly together: (takes: readonly Take[]) => Promise<readonly Outcome[]>;
}

export class TakeGroups<Take, Outcome> {
  private readonly inFlight = new Map<string, number>();
  private readonly waiting = new Map<string, Group<Take, Outcome>[]>();

  /**
   * Runs `alone` at once while this process has fewer than TAKES_IN_FLIGHT_PER_BATCH transactions on
   * the batch. Else the take waits with the others of the batch, and the first group is sent by
   * `together` (of its first take) as soon as one of those transactions ends; `together` answers each
   * take's outcome at its place. `key` names the take's line: two takes of one line never share a
   * transaction, which may touch an item once.
   */
  take(ref: string, key: string, take: Take, alone: () => Promise<Outcome>, together: (takes: readonly Take[]) => Promise<readonly Outcome[]>): Promise<Outcome> {
    if ((this.inFlight.get(ref) ?? 0) < TAKES_IN_FLIGHT_PER_BATCH) return this.inFlightOn(ref, alone);
    const groups = this.waiting.get(ref) ?? [];
    this.waiting.set(ref, groups);
    let group = groups.find(({ takes, keys }) => takes.length < MAX_LINES_PER_GROUP && !keys.has(key));
    if (!group) {
      group = { takes: [], keys: new Set(), waiters: [], together };
      groups.push(group);
    }
    const joined = group;
    joined.takes.push(take);
    joined.keys.add(key);
    return new Promise<Outcome>((resolve, reject) => joined.waiters.push({ resolve, reject }));
  }

  private async inFlightOn<Result>(ref: string, send: () => Promise<Result>): Promise<Result> {
    this.inFlight.set(ref, (this.inFlight.get(ref) ?? 0) + 1);
    try {
      return await send();
    } finally {
      this.ended(ref);
    }
  }

  private ended(ref: string): void {
    const left = (this.inFlight.get(ref) ?? 1) - 1;
    if (left > 0) this.inFlight.set(ref, left);
    else this.inFlight.delete(ref);
    const groups = this.waiting.get(ref);
    const next = groups?.shift();
    if (groups?.length === 0) this.waiting.delete(ref);
    if (!next) return;
    this.inFlightOn(ref, () => next.together(next.takes)).then(
      (outcomes) => next.waiters.forEach(({ resolve }, index) => resolve(outcomes[index] as Outcome)),
      (error: unknown) => next.waiters.forEach(({ reject }) => reject(error)),
    );
  }
}
