/**
 * The simulator's only source of chance: a small seeded generator (sfc32), so that a run is a
 * function of its seed. Each part of a run draws from a stream of its own (`stream`), so that
 * drawing more in one part (a longer workload) does not change what another draws.
 */
export class Chance {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, stream = 0) {
    this.a = 0x9e3779b9 ^ stream;
    this.b = 0x243f6a88 ^ Math.imul(stream, 0x85ebca6b);
    this.c = 0xb7e15162;
    this.d = seed >>> 0;
    for (let warm = 0; warm < 15; warm++) this.next();
  }

  /** A named stream of the same seed: the workload's, the scheduler's, the world's. */
  static stream(seed: number, name: string): Chance {
    let hash = 2166136261;
    for (const character of name) hash = Math.imul(hash ^ (character.codePointAt(0) ?? 0), 16777619);
    return new Chance(seed, hash >>> 0);
  }

  /** A number in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** A whole number in [from, to]. */
  int(from: number, to: number): number {
    return from + Math.floor(this.next() * (to - from + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<Item>(items: readonly Item[]): Item {
    if (items.length === 0) throw new Error('Nothing to pick from');
    return items[Math.floor(this.next() * items.length)] as Item;
  }

  /** One of `choices`, each as likely as its weight. */
  weighted<Item>(choices: readonly (readonly [Item, number])[]): Item {
    const total = choices.reduce((sum, [, weight]) => sum + weight, 0);
    let left = this.next() * total;
    for (const [item, weight] of choices) {
      left -= weight;
      if (left < 0) return item;
    }
    return (choices[choices.length - 1] as readonly [Item, number])[0];
  }
}
