// A de-duplicating, rate-limited work queue, as client-go's: a key is never processed by two
// workers at once, and a key added while being processed is processed again afterwards.
import type { Clock, Timer } from '../util/clock.js';
import { systemClock } from '../util/clock.js';

export class WorkQueue<K = string> {
  private queue: K[] = [];
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  private readonly failures = new Map<K, number>();
  private readonly delayed = new Map<K, { at: number; timer: Timer }>();
  private waiters: ((k: K | undefined) => void)[] = [];
  private shuttingDown = false;

  constructor(
    private readonly clock: Clock = systemClock,
    private readonly baseDelayMs = 5,
    private readonly maxDelayMs = 60_000,
  ) {}

  get length(): number {
    return this.queue.length;
  }

  add(key: K): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    const w = this.waiters.shift();
    if (w) {
      this.dirty.delete(key);
      this.processing.add(key);
      w(key);
    } else {
      this.queue.push(key);
    }
  }

  addAfter(key: K, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    const at = this.clock.now() + delayMs;
    const existing = this.delayed.get(key);
    if (existing && existing.at <= at) return;
    existing?.timer.cancel();
    const timer = this.clock.setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, delayMs);
    this.delayed.set(key, { at, timer });
  }

  /** Exponential back-off per key (5 ms, 10 ms, … up to the max), reset by forget(). */
  addRateLimited(key: K): void {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    this.addAfter(key, Math.min(this.baseDelayMs * 2 ** n, this.maxDelayMs));
  }

  forget(key: K): void {
    this.failures.delete(key);
  }

  retries(key: K): number {
    return this.failures.get(key) ?? 0;
  }

  /** The next key to process, or undefined once shut down. Call done(key) when finished. */
  get(): Promise<K | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) {
      this.dirty.delete(key);
      this.processing.add(key);
      return Promise.resolve(key);
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  done(key: K): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) {
      this.dirty.delete(key);
      this.add(key);
    }
  }

  shutdown(): void {
    this.shuttingDown = true;
    for (const d of this.delayed.values()) d.timer.cancel();
    this.delayed.clear();
    for (const w of this.waiters) w(undefined);
    this.waiters = [];
  }
}
