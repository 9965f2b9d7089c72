// Per-zone rate limiting of NoExecute tainting, as upstream's RateLimitedTimedQueue over a token
// bucket (burst 1): one node's worth of evictions per token, so a zone that loses many nodes at
// once sheds its pods gradually, and a disrupted zone (qps 0) sheds none.
import type { Clock } from '../util/clock.js';

/** A token bucket on an injected clock; qps <= 0 never admits anything. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly qps: number,
    private readonly burst: number,
    private readonly clock: Clock,
  ) {
    this.tokens = qps > 0 ? burst : 0;
    this.last = clock.now();
  }

  tryAccept(): boolean {
    if (this.qps <= 0) return false;
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

export const EVICTION_RATE_LIMITER_BURST = 1;

interface Queued {
  name: string;
  uid: string;
  processAt: number;
}

/** What an action tells the queue: done (drop the item), or try again after retryAfterMs. */
export type TryResult = { done: true } | { done: false; retryAfterMs: number };

/**
 * A de-duplicating FIFO of node names, drained through a swappable token bucket. As upstream's
 * UniqueQueue, a node stays a member after it was processed (so re-adding it every monitor pass
 * is a no-op) until remove() — the node became Ready again or lost its taint.
 */
export class RateLimitedTimedQueue {
  private items: Queued[] = [];
  private readonly members = new Set<string>();
  private limiter: TokenBucket;

  constructor(qps: number, private readonly clock: Clock) {
    this.limiter = new TokenBucket(qps, EVICTION_RATE_LIMITER_BURST, clock);
  }

  get qps(): number {
    return this.limiter.qps;
  }

  /** Nodes waiting to be processed. */
  get length(): number {
    return this.items.length;
  }

  has(name: string): boolean {
    return this.members.has(name);
  }

  /** Adds a node unless it is a member already; true if it was added. */
  add(name: string, uid: string): boolean {
    if (this.members.has(name)) return false;
    this.members.add(name);
    this.items.push({ name, uid, processAt: this.clock.now() });
    return true;
  }

  /** Forgets a node entirely; true if it was a member. */
  remove(name: string): boolean {
    this.items = this.items.filter((i) => i.name !== name);
    return this.members.delete(name);
  }

  /**
   * Processes due items in order while the limiter admits them. As upstream, a token is spent
   * per attempt, so a zone at qps 0 processes nothing at all.
   */
  async try(fn: (name: string, uid: string) => Promise<TryResult>): Promise<void> {
    for (;;) {
      const head = this.items[0];
      if (!head) return;
      if (!this.limiter.tryAccept()) return;
      const now = this.clock.now();
      if (now < head.processAt) return;
      const result = await fn(head.name, head.uid);
      // The item may have been removed while fn ran (the node became Ready again).
      const idx = this.items.indexOf(head);
      if (idx < 0) continue;
      this.items.splice(idx, 1);
      if (!result.done) this.items.push({ ...head, processAt: now + result.retryAfterMs + 1 });
    }
  }

  /**
   * Changes the rate. As upstream's SwapLimiter: a new non-zero bucket starts drained when the old
   * one had no token left, so swapping cannot be used to burst.
   */
  swapLimiter(qps: number): void {
    if (this.limiter.qps === qps) return;
    const next = new TokenBucket(qps, EVICTION_RATE_LIMITER_BURST, this.clock);
    if (qps > 0 && !this.limiter.tryAccept()) next.tryAccept();
    this.limiter = next;
  }
}
