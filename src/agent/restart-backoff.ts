// Container restart back-off, as the kubelet's (flowcontrol.Backoff keyed by pod+container): the first
// restart is immediate, then each restart waits base, 2×base, … up to max (10 s doubling to 5 min
// upstream) counted from when the last instance finished; an entry untouched for 2×max is forgotten,
// so a container that ran well for long starts over at base.
import type { Clock } from '../util/clock.js';

interface Entry {
  backoffMs: number;
  lastUpdate: number;
}

export class RestartBackoff {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    readonly baseMs = 10_000,
    readonly maxMs = 300_000,
  ) {}

  private live(key: string, now: number): Entry | undefined {
    const e = this.entries.get(key);
    if (e && now - e.lastUpdate > 2 * this.maxMs) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }

  /** Milliseconds still to wait before `key` may restart, given when its last instance finished. */
  remaining(key: string, finishedAt: number): number {
    const now = this.clock.now();
    const e = this.live(key, now);
    if (!e) return 0;
    const waited = now - finishedAt;
    return waited < e.backoffMs ? e.backoffMs - waited : 0;
  }

  /** Records a restart now: the next one will wait longer. */
  restarted(key: string): void {
    const now = this.clock.now();
    const e = this.live(key, now);
    this.entries.set(key, { backoffMs: e ? Math.min(e.backoffMs * 2, this.maxMs) : this.baseMs, lastUpdate: now });
  }

  /** The back-off that applies to the next restart of `key` (for the CrashLoopBackOff message). */
  current(key: string): number {
    return this.live(key, this.clock.now())?.backoffMs ?? 0;
  }

  forget(prefix: string): void {
    for (const k of this.entries.keys()) if (k.startsWith(prefix)) this.entries.delete(k);
  }
}
