// A periodic loop that can be woken early: the agent's heartbeat loops sleep on the injected clock
// until their next tick, or until something (a re-registration, a shutdown) asks for a sync now.
import type { Clock } from '../util/clock.js';

export class Waker {
  private controller = new AbortController();
  private pending = false;

  /** Sleeps ms on the clock; returns early when wake() is called or the outer signal aborts. */
  async sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return;
    }
    const c = new AbortController();
    this.controller = c;
    const onAbort = () => c.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await clock.sleep(Math.max(0, ms), c.signal);
    } catch {
      /* woken or aborted */
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.pending = false;
    }
  }

  wake(): void {
    this.pending = true;
    this.controller.abort();
  }
}

/** Exponential back-off: base, doubling, capped; reset() after a success. */
export class Backoff {
  private n = 0;
  constructor(private readonly baseMs: number, private readonly maxMs: number) {}
  next(): number {
    const d = Math.min(this.baseMs * 2 ** this.n, this.maxMs);
    if (d < this.maxMs) this.n++;
    return d;
  }
  reset(): void {
    this.n = 0;
  }
}
