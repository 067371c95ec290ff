/** {@link KeyValue} in this process: one embedded node (nothing to share). */
import type { Clock } from '../../shared/clock.js';
import type { KeyValue } from '../../shared/key-value.js';

interface Entry {
  value: string;
  expiresAtMs: number;
}

/** Expired entries are dropped every this many writes, so abandoned keys cost no memory. */
const SWEEP_EVERY = 1_024;

export class MemoryKeyValue implements KeyValue {
  readonly #entries = new Map<string, Entry>();
  readonly #clock: Clock;
  #writes = 0;

  constructor(deps: { clock: Clock }) {
    this.#clock = deps.clock;
  }

  /** Keys held, expired or not yet swept (for tests). */
  get size(): number {
    return this.#entries.size;
  }

  get(key: string): Promise<string | null> {
    return Promise.resolve(this.#live(key)?.value ?? null);
  }

  set(key: string, value: string, ttlMs: number): Promise<void> {
    this.#write(key, value, ttlMs);
    return Promise.resolve();
  }

  del(key: string): Promise<void> {
    this.#entries.delete(key);
    return Promise.resolve();
  }

  incr(key: string, ttlMs: number): Promise<number> {
    const current = this.#live(key)?.value ?? '0';
    const parsed = /^-?\d+$/.test(current) ? Number(current) : NaN;
    if (!Number.isSafeInteger(parsed)) {
      return Promise.reject(new TypeError(`value of ${key} is not an integer`));
    }
    this.#write(key, String(parsed + 1), ttlMs);
    return Promise.resolve(parsed + 1);
  }

  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    if (this.#live(key)) return Promise.resolve(false);
    this.#write(key, value, ttlMs);
    return Promise.resolve(true);
  }

  getCappingTtl(key: string, maxTtlMs: number): Promise<string | null> {
    const entry = this.#live(key);
    if (!entry) return Promise.resolve(null);
    const cap = this.#clock.nowMs() + Math.max(1, Math.ceil(maxTtlMs));
    if (entry.expiresAtMs > cap) entry.expiresAtMs = cap;
    return Promise.resolve(entry.value);
  }

  #live(key: string): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry && entry.expiresAtMs <= this.#clock.nowMs()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  #write(key: string, value: string, ttlMs: number): void {
    const now = this.#clock.nowMs();
    if (++this.#writes >= SWEEP_EVERY) {
      this.#writes = 0;
      for (const [k, e] of this.#entries) if (e.expiresAtMs <= now) this.#entries.delete(k);
    }
    this.#entries.set(key, { value, expiresAtMs: now + Math.max(1, Math.ceil(ttlMs)) });
  }
}
