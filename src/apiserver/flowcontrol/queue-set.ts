// One priority level's seats and queues: fair queuing with shuffle sharding, as upstream's
// queueset. A request runs at once while its level has seats free and nobody waits; otherwise its
// flow's hand of queues is dealt from a hash of the flow, it joins the shortest queue of the hand
// (or is refused when that queue is full), and each freed seat goes to the queue that has been
// served least (virtual time: seat-seconds used, corrected by how long each request really ran).
// A heavy flow fills only its own hand of queues, so a light flow beside it still gets its turn.
import { createHash } from 'node:crypto';
import type { Clock, Timer } from '../../util/clock.js';

export type Rejection = 'queue-full' | 'concurrency-limit' | 'time-out' | 'cancelled';

export interface QueuingConfig {
  queues: number;
  handSize: number;
  queueLengthLimit: number;
}

export interface QueueSetConfig {
  /** Seats this level may use at once. */
  concurrencyLimit: number;
  /** How to wait for a seat; none: refuse at once when no seat is free (limitResponse Reject). */
  queuing?: QueuingConfig;
}

/** Frees the request's seats; call once, when it is answered. */
export type Release = () => void;

interface Waiter {
  flowKey: string;
  width: number;
  queue: Queue;
  enqueuedAt: number;
  timer: Timer;
  settle(outcome: Release | Rejection): void;
}

interface Queue {
  waiting: Waiter[];
  /** Seats its dispatched requests hold now. */
  executingSeats: number;
  /** Seat-milliseconds it has been given, on the level's virtual clock. */
  virtualTime: number;
}

/** What a dispatched request is assumed to cost until it finishes and its real time is known. */
const ESTIMATED_SERVICE_MS = 50;
/** Hands kept per level; beyond it the memo starts again (flows are users or namespaces). */
const HAND_MEMO_LIMIT = 10_000;

/** `handSize` distinct queues of `deck`, dealt from a 64-bit hash as upstream's shuffle-sharding dealer does. */
export function dealHand(hash: bigint, deck: number, handSize: number): number[] {
  const chosen: number[] = [];
  let rest = hash;
  for (let i = 0; i < Math.min(handSize, deck); i++) {
    const left = BigInt(deck - i);
    let card = Number(rest % left);
    rest /= left;
    // The card-th of the cards still in the deck: step over those already dealt.
    for (const c of [...chosen].sort((a, b) => a - b)) if (c <= card) card++;
    chosen.push(card);
  }
  return chosen;
}

export function flowHash(flowKey: string): bigint {
  return createHash('sha256').update(flowKey).digest().readBigUInt64BE(0);
}

export class QueueSet {
  private config: QueueSetConfig;
  private queues: Queue[] = [];
  private seatsInUse = 0;
  private waitingCount = 0;
  private readonly hands = new Map<string, number[]>();

  constructor(config: QueueSetConfig, private readonly clock: Clock, private readonly maxWaitMs: number) {
    this.config = config;
    this.queues = makeQueues(config);
  }

  get concurrencyLimit(): number {
    return this.config.concurrencyLimit;
  }

  get executingSeats(): number {
    return this.seatsInUse;
  }

  get waiting(): number {
    return this.waitingCount;
  }

  /**
   * A seat for a request of `width` seats in flow `flowKey`: a Release when it may run now, a
   * Rejection when it may not wait, or a promise of either once it has waited in its queue
   * (rejected with 'time-out' after maxWaitMs, 'cancelled' when `signal` aborts).
   */
  enter(flowKey: string, width: number, signal?: AbortSignal): Release | Rejection | Promise<Release | Rejection> {
    const seats = Math.max(1, Math.min(width, this.config.concurrencyLimit || 1));
    const queuing = this.config.queuing;
    // The request is charged to its flow's queue even when it runs at once: what a flow has used
    // is what puts it behind others once they have to wait.
    const queue = this.shortestOfHand(flowKey);
    if (this.waitingCount === 0 && this.fits(seats)) {
      this.activate(queue);
      return this.dispatch(queue, seats);
    }
    if (!queuing) return 'concurrency-limit';
    if (queue.waiting.length >= queuing.queueLengthLimit) return 'queue-full';
    if (signal?.aborted) return 'cancelled';
    return new Promise<Release | Rejection>((resolve) => {
      const waiter: Waiter = {
        flowKey,
        width: seats,
        queue,
        enqueuedAt: this.clock.now(),
        timer: this.clock.setTimeout(() => this.remove(waiter, 'time-out'), this.maxWaitMs),
        settle: (outcome) => {
          waiter.timer.cancel();
          signal?.removeEventListener('abort', onAbort);
          resolve(outcome);
        },
      };
      const onAbort = (): void => this.remove(waiter, 'cancelled');
      signal?.addEventListener('abort', onAbort, { once: true });
      this.activate(queue);
      queue.waiting.push(waiter);
      this.waitingCount++;
    });
  }

  /** New limits (and queues, when their shape changed); those waiting keep their place in arrival order. */
  setConfig(config: QueueSetConfig): void {
    const reshaped = JSON.stringify(config.queuing) !== JSON.stringify(this.config.queuing);
    this.config = config;
    if (reshaped) {
      const waiters = this.queues.flatMap((q) => q.waiting).sort((a, b) => a.enqueuedAt - b.enqueuedAt);
      // Requests running keep their seats in seatsInUse; releasing them later only frees seats.
      this.queues = makeQueues(config);
      this.hands.clear();
      for (const w of waiters) {
        w.queue = this.shortestOfHand(w.flowKey);
        w.queue.waiting.push(w);
      }
    }
    this.dispatchWaiting();
  }

  private fits(seats: number): boolean {
    // A level always runs one request when idle, even one wider than its limit (or a zero limit's jail holds it).
    return this.config.concurrencyLimit > 0 && (this.seatsInUse === 0 || this.seatsInUse + seats <= this.config.concurrencyLimit);
  }

  private shortestOfHand(flowKey: string): Queue {
    if (this.queues.length === 1) return this.queues[0]!;
    let hand = this.hands.get(flowKey);
    if (!hand) {
      if (this.hands.size >= HAND_MEMO_LIMIT) this.hands.clear();
      hand = dealHand(flowHash(flowKey), this.queues.length, this.config.queuing?.handSize ?? 1);
      this.hands.set(flowKey, hand);
    }
    let best = this.queues[hand[0]!]!;
    for (const i of hand) {
      const q = this.queues[i]!;
      if (load(q) < load(best)) best = q;
    }
    return best;
  }

  /**
   * A queue that was idle starts level with the least-served active one, counting what that one
   * has finished (not what it is running now): idleness earns no credit, and a newcomer is not
   * put behind work that is still in progress.
   */
  private activate(queue: Queue): void {
    if (queue.waiting.length > 0 || queue.executingSeats > 0) return;
    let floor = Infinity;
    for (const q of this.queues) {
      if (q !== queue && (q.waiting.length > 0 || q.executingSeats > 0)) floor = Math.min(floor, q.virtualTime - q.executingSeats * ESTIMATED_SERVICE_MS);
    }
    if (floor !== Infinity && queue.virtualTime < floor) queue.virtualTime = floor;
  }

  private dispatch(q: Queue, seats: number): Release {
    this.seatsInUse += seats;
    q.executingSeats += seats;
    q.virtualTime += seats * ESTIMATED_SERVICE_MS;
    const started = this.clock.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.seatsInUse -= seats;
      q.executingSeats -= seats;
      q.virtualTime += seats * (this.clock.now() - started - ESTIMATED_SERVICE_MS);
      this.dispatchWaiting();
    };
  }

  private dispatchWaiting(): void {
    while (this.waitingCount > 0) {
      let next: Queue | undefined;
      for (const q of this.queues) if (q.waiting.length > 0 && (!next || q.virtualTime < next.virtualTime)) next = q;
      const head = next!.waiting[0]!;
      if (!this.fits(head.width)) return;
      next!.waiting.shift();
      this.waitingCount--;
      head.settle(this.dispatch(next!, head.width));
    }
  }

  private remove(waiter: Waiter, why: Rejection): void {
    const i = waiter.queue.waiting.indexOf(waiter);
    if (i < 0) return;
    waiter.queue.waiting.splice(i, 1);
    this.waitingCount--;
    waiter.settle(why);
    // The head that left may have been the one too wide to fit.
    this.dispatchWaiting();
  }
}

function makeQueues(config: QueueSetConfig): Queue[] {
  const n = Math.max(1, config.queuing?.queues ?? 1);
  return Array.from({ length: n }, () => ({ waiting: [], executingSeats: 0, virtualTime: 0 }));
}

function load(q: Queue): number {
  let seats = q.executingSeats;
  for (const w of q.waiting) seats += w.width;
  return seats;
}
