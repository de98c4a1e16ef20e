/** The generator's seeded randomness: a run's seed, each case's own seed, and picks from them. */

/** mulberry32: a small, fast 32-bit PRNG; the same seed gives the same numbers everywhere. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** One case's own seed, mixed from the run's seed and its index (so cases are independent). */
export function caseSeed(seed: number, index: number): number {
  let h = (seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/** A run's seed: `MONEY_SEED` when given, else a fresh one (always printed by the caller). */
export function runSeed(env: string | undefined): number {
  if (env !== undefined && env !== '') {
    const seed = Number(env);
    if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`MONEY_SEED ${env} is not a seed`);
    return seed >>> 0;
  }
  return Math.floor(Math.random() * 4_294_967_296);
}

export class Rng {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from nothing');
    return item;
  }
  weighted<T>(choices: readonly (readonly [T, number])[]): T {
    const total = choices.reduce((sum, [, w]) => sum + w, 0);
    let roll = this.next() * total;
    for (const [value, weight] of choices) {
      roll -= weight;
      if (roll < 0) return value;
    }
    const last = choices.at(-1);
    if (!last) throw new Error('weighted pick from nothing');
    return last[0];
  }
}
