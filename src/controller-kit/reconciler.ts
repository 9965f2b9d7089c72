// The controller-runtime shape: a level-triggered Reconcile(key) fed by a de-duplicating,
// rate-limited work queue. A failed reconcile is retried with back-off; a result may ask to be
// looked at again later (e.g. when a toleration expires).
import { WorkQueue } from '../client/workqueue.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import type { ClientMetrics } from '../client/metrics.js';

export interface ReconcileResult {
  requeueAfterMs?: number;
}

export interface Reconciler {
  readonly name: string;
  reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void>;
}

/** What a loop needs from its controller's context; with `metrics`, its queue reports workqueue_* under the reconciler's name. */
export interface LoopDeps {
  clock: Clock;
  log: Logger;
  metrics?: ClientMetrics;
}

export class ReconcileLoop {
  readonly queue: WorkQueue<string>;
  private readonly log: Logger;
  constructor(
    private readonly reconciler: Reconciler,
    deps: LoopDeps,
    private readonly workers = 2,
  ) {
    this.log = deps.log;
    this.queue = new WorkQueue<string>(deps.clock, 5, 30_000);
    if (deps.metrics) this.queue.instrument(deps.metrics.queue(reconciler.name, this.queue));
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  run(signal: AbortSignal): Promise<void> {
    signal.addEventListener('abort', () => this.queue.shutdown(), { once: true });
    return Promise.all(Array.from({ length: this.workers }, () => this.worker(signal))).then(() => undefined);
  }

  private async worker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined || signal.aborted) return;
      try {
        const result = await this.reconciler.reconcile(key, signal);
        this.queue.forget(key);
        if (result?.requeueAfterMs !== undefined) this.queue.addAfter(key, result.requeueAfterMs);
      } catch (e) {
        if (signal.aborted) return;
        const retries = this.queue.retries(key);
        // One line per failing key, not one per retry.
        if (retries === 0 || retries % 10 === 0) this.log.warn({ controller: this.reconciler.name, key, retries, err: (e as Error).message }, 'reconcile failed; will retry');
        this.queue.addRateLimited(key);
      } finally {
        this.queue.done(key);
      }
    }
  }
}
