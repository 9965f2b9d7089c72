// A de-duplicating, rate-limited work queue, as client-go's: a key is never processed by two
// workers at once, and a key added while being processed is processed again afterwards.
import type { Clock, Timer } from '../util/clock.js';
import { systemClock } from '../util/clock.js';
import type { QueueMetrics } from './metrics.js';

export class WorkQueue<K = string> {
  private queue: K[] = [];
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  private readonly failures = new Map<K, number>();
  private readonly delayed = new Map<K, { at: number; timer: Timer }>();
  private waiters: ((k: K | undefined) => void)[] = [];
  private shuttingDown = false;
  /** When each queued key was added, and when each key being worked on was taken (for metrics). */
  private readonly addedAt = new Map<K, number>();
  private readonly takenAt = new Map<K, number>();
  private metrics?: QueueMetrics;

  constructor(
    private readonly clock: Clock = systemClock,
    private readonly baseDelayMs = 5,
    private readonly maxDelayMs = 60_000,
  ) {}

  get length(): number {
    return this.queue.length;
  }

  /** Reports adds, waits, work and retries to `m` from now on. */
  instrument(m: QueueMetrics): void {
    this.metrics = m;
  }

  inFlightSince(): number[] {
    return [...this.takenAt.values()];
  }

  now(): number {
    return this.clock.now();
  }

  private take(key: K): void {
    this.dirty.delete(key);
    this.processing.add(key);
    if (!this.metrics) return;
    const now = this.clock.now();
    this.metrics.started(now - (this.addedAt.get(key) ?? now));
    this.addedAt.delete(key);
    this.takenAt.set(key, now);
  }

  add(key: K): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.metrics) {
      this.metrics.added();
      this.addedAt.set(key, this.clock.now());
    }
    if (this.processing.has(key)) return;
    this.enqueue(key);
  }

  /** To a waiting worker if one waits, else to the back of the queue. */
  private enqueue(key: K): void {
    const w = this.waiters.shift();
    if (w) {
      this.take(key);
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
    this.metrics?.retried();
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
      this.take(key);
      return Promise.resolve(key);
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  done(key: K): void {
    this.processing.delete(key);
    const taken = this.takenAt.get(key);
    if (taken !== undefined) {
      this.takenAt.delete(key);
      this.metrics?.finished(this.clock.now() - taken);
    }
    // Added again while it was being worked on: back in the queue now (counted and timed as an add then).
    if (this.dirty.has(key) && !this.shuttingDown) this.enqueue(key);
  }

  shutdown(): void {
    this.shuttingDown = true;
    for (const d of this.delayed.values()) d.timer.cancel();
    this.delayed.clear();
    for (const w of this.waiters) w(undefined);
    this.waiters = [];
  }
}
