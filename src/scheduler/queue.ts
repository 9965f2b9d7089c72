// The scheduling queue, shaped like upstream's: an active heap (higher priority first, then the
// longest waiting), a back-off area for pods that just failed, and a parking lot of unschedulable
// pods that only cluster changes (or a slow periodic flush) bring back. Parking matters: retrying
// every unschedulable pod in a loop would burn CPU and flood the API with identical failures.
import type { Clock, Timer } from '../util/clock.js';

export interface QueuedPod {
  readonly key: string;
  priority: number;
  /** When the pod first entered the queue: among equal priorities the oldest goes first. */
  readonly initialAt: number;
  /** Failed attempts so far (drives the back-off). */
  attempts: number;
  /** When the last attempt failed. */
  failedAt: number;
  /**
   * Whether some node rejected the pod only for what removing pods frees (resources, ports), so
   * a pod leaving the cluster may help.
   */
  resolvable: boolean;
  readonly seq: number;
}

export interface QueueOptions {
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** An unschedulable pod is retried after this long even if nothing seemed to change. */
  maxUnschedulableMs: number;
}

export const DEFAULT_QUEUE_OPTIONS: QueueOptions = { initialBackoffMs: 1000, maxBackoffMs: 10_000, maxUnschedulableMs: 5 * 60_000 };

function before(a: QueuedPod, b: QueuedPod): boolean {
  if (a.priority !== b.priority) return a.priority > b.priority;
  if (a.initialAt !== b.initialAt) return a.initialAt < b.initialAt;
  return a.seq < b.seq;
}

/** A binary min-heap by `before`, with removal by key. */
class Heap {
  private items: QueuedPod[] = [];
  private readonly index = new Map<string, number>();

  get size(): number {
    return this.items.length;
  }
  has(key: string): boolean {
    return this.index.has(key);
  }
  get(key: string): QueuedPod | undefined {
    const i = this.index.get(key);
    return i === undefined ? undefined : this.items[i];
  }
  push(qp: QueuedPod): void {
    this.items.push(qp);
    this.index.set(qp.key, this.items.length - 1);
    this.up(this.items.length - 1);
  }
  pop(): QueuedPod | undefined {
    if (this.items.length === 0) return undefined;
    const top = this.items[0]!;
    this.removeAt(0);
    return top;
  }
  remove(key: string): QueuedPod | undefined {
    const i = this.index.get(key);
    if (i === undefined) return undefined;
    const qp = this.items[i]!;
    this.removeAt(i);
    return qp;
  }
  /** Re-establishes order after qp's priority changed. */
  fix(key: string): void {
    const i = this.index.get(key);
    if (i !== undefined) this.down(this.up(i));
  }
  private removeAt(i: number): void {
    this.index.delete(this.items[i]!.key);
    const last = this.items.pop()!;
    if (i < this.items.length) {
      this.items[i] = last;
      this.index.set(last.key, i);
      this.down(this.up(i));
    }
  }
  private swap(i: number, j: number): void {
    const a = this.items[i]!;
    const b = this.items[j]!;
    this.items[i] = b;
    this.items[j] = a;
    this.index.set(b.key, i);
    this.index.set(a.key, j);
  }
  private up(i: number): number {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(this.items[i]!, this.items[parent]!)) break;
      this.swap(i, parent);
      i = parent;
    }
    return i;
  }
  private down(i: number): void {
    const n = this.items.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && before(this.items[l]!, this.items[m]!)) m = l;
      if (r < n && before(this.items[r]!, this.items[m]!)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }
}

export class SchedulingQueue {
  private readonly active = new Heap();
  private readonly backoff = new Map<string, { qp: QueuedPod; timer: Timer }>();
  private readonly unschedulable = new Map<string, QueuedPod>();
  /** Popped and not yet handed back (being decided or bound). */
  private readonly inFlight = new Map<string, QueuedPod>();
  private waiter: ((qp: QueuedPod | undefined) => void) | undefined;
  private closed = false;
  private seq = 0;

  constructor(
    private readonly clock: Clock,
    private readonly opts: QueueOptions = DEFAULT_QUEUE_OPTIONS,
  ) {}

  get stats(): { active: number; backoff: number; unschedulable: number; inFlight: number } {
    return { active: this.active.size, backoff: this.backoff.size, unschedulable: this.unschedulable.size, inFlight: this.inFlight.size };
  }

  has(key: string): boolean {
    return this.active.has(key) || this.backoff.has(key) || this.unschedulable.has(key) || this.inFlight.has(key);
  }

  isUnschedulable(key: string): boolean {
    return this.unschedulable.has(key);
  }

  /**
   * A pod that needs scheduling appeared or changed. New pods go to the active heap; a parked pod
   * whose spec changed comes back (`changed`), since its tolerations or selector may now fit.
   */
  add(key: string, priority: number, changed = false): void {
    if (this.closed || this.inFlight.has(key)) return;
    const queued = this.active.get(key);
    if (queued) {
      if (queued.priority !== priority) {
        queued.priority = priority;
        this.active.fix(key);
      }
      return;
    }
    const parked = this.unschedulable.get(key) ?? this.backoff.get(key)?.qp;
    if (parked) {
      parked.priority = priority;
      if (changed && this.unschedulable.has(key)) {
        this.unschedulable.delete(key);
        this.activateOrBackoff(parked);
      }
      return;
    }
    this.pushActive({ key, priority, initialAt: this.clock.now(), attempts: 0, failedAt: 0, resolvable: true, seq: this.seq++ });
  }

  /** The pod no longer needs scheduling (deleted, bound elsewhere, not ours). */
  delete(key: string): void {
    this.active.remove(key);
    const b = this.backoff.get(key);
    if (b) {
      b.timer.cancel();
      this.backoff.delete(key);
    }
    this.unschedulable.delete(key);
    this.inFlight.delete(key);
  }

  /** The next pod to schedule; undefined once closed. */
  pop(): Promise<QueuedPod | undefined> {
    const qp = this.active.pop();
    if (qp) {
      this.inFlight.set(qp.key, qp);
      return Promise.resolve(qp);
    }
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  /** Scheduling finished for good (bound, or no longer ours): forget the pod's history. */
  done(key: string): void {
    this.inFlight.delete(key);
  }

  /** No node fits: park the pod until the cluster changes. */
  parkUnschedulable(qp: QueuedPod, resolvable: boolean): void {
    if (!this.inFlight.delete(qp.key) || this.closed) return;
    qp.attempts++;
    qp.failedAt = this.clock.now();
    qp.resolvable = resolvable;
    this.unschedulable.set(qp.key, qp);
  }

  /** An error (e.g. the binding call failed): retry after the pod's back-off. */
  retryAfterError(qp: QueuedPod): void {
    if (!this.inFlight.delete(qp.key) || this.closed) return;
    qp.attempts++;
    qp.failedAt = this.clock.now();
    this.activateOrBackoff(qp);
  }

  /**
   * Something changed that may let parked pods fit (a node appeared or became more permissive, a
   * pod left). `onlyResolvable` limits the move to pods that failed for freeable resources.
   */
  moveUnschedulable(onlyResolvable = false): number {
    let n = 0;
    for (const [key, qp] of this.unschedulable) {
      if (onlyResolvable && !qp.resolvable) continue;
      this.unschedulable.delete(key);
      this.activateOrBackoff(qp);
      n++;
    }
    return n;
  }

  /** Upstream's safety net: pods parked longer than maxUnschedulableMs are tried again. */
  flushLongParked(): number {
    const now = this.clock.now();
    let n = 0;
    for (const [key, qp] of this.unschedulable) {
      if (now - qp.failedAt < this.opts.maxUnschedulableMs) continue;
      this.unschedulable.delete(key);
      this.activateOrBackoff(qp);
      n++;
    }
    return n;
  }

  close(): void {
    this.closed = true;
    for (const b of this.backoff.values()) b.timer.cancel();
    this.backoff.clear();
    const w = this.waiter;
    this.waiter = undefined;
    w?.(undefined);
  }

  backoffMs(qp: QueuedPod): number {
    if (qp.attempts === 0) return 0;
    return Math.min(this.opts.initialBackoffMs * 2 ** (qp.attempts - 1), this.opts.maxBackoffMs);
  }

  private activateOrBackoff(qp: QueuedPod): void {
    const wait = qp.failedAt + this.backoffMs(qp) - this.clock.now();
    if (wait <= 0) return this.pushActive(qp);
    if (this.backoff.has(qp.key)) return;
    const timer = this.clock.setTimeout(() => {
      this.backoff.delete(qp.key);
      if (!this.closed) this.pushActive(qp);
    }, wait);
    this.backoff.set(qp.key, { qp, timer });
  }

  private pushActive(qp: QueuedPod): void {
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      this.inFlight.set(qp.key, qp);
      w(qp);
      return;
    }
    this.active.push(qp);
  }
}
