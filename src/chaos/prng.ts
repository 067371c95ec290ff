/**
 * A small seeded PRNG (mulberry32): the same seed gives the same workload and the same fault
 * plan on every machine. Each consumer forks its own stream (`fork(label)`), so adding a draw
 * in one place does not shift the draws of another.
 */
export class Prng {
  readonly #seed: number;
  #state: number;

  constructor(seed: number) {
    this.#seed = seed >>> 0;
    this.#state = this.#seed;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** An integer in [min, max] (both included). */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick: no items');
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** A stream of its own, derived from this seed and `label` (not from draws made so far). */
  fork(label: string): Prng {
    let h = 2_166_136_261 ^ this.#seed;
    for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 16_777_619);
    return new Prng(h >>> 0);
  }
}
