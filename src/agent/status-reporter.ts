// Node status (N2): computed every --node-status-update-frequency, PATCHed only when it changed
// (conditions compared without heartbeat times) or when --node-status-report-frequency has passed
// since the last report; one fast report right after start so a new node is Ready at once.
import type { NodeStatus } from '../api/kinds/node.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { type AgentApi, HEARTBEAT, isNotFound, nodePath } from './api.js';
import { errorText } from '../util/error-text.js';
import { statusChanged } from './node-object.js';
import { Waker } from './wake.js';

/** Upstream's nodeStatusUpdateRetry: tries per sync in classic mode. */
const CLASSIC_RETRIES = 5;

export interface StatusReporterOptions {
  api: AgentApi;
  clock: Clock;
  log: Logger;
  nodeName: string;
  updateFrequencyMs: number;
  reportFrequencyMs: number;
  /** The status as of now; `previous` is the last reported one (to keep transition times). */
  buildStatus(previous: NodeStatus | undefined, now: number): NodeStatus;
  /** The Node answered 404: the node keeper confirms with a live GET and acts. */
  onNodeMissing(source: string): void;
  /** Classic (upstream) mode: 5 tries per sync, each failure logged as the kubelet logs it. */
  classic?: boolean;
  /** After a report: the conditions whose status differs from the previous report (all, the first time). */
  onConditionsChanged?(changed: { type: string; status: string }[]): void;
}

export class StatusReporter {
  private last?: NodeStatus;
  private lastAt = -Infinity;
  private force = true;
  private failing = false;
  private stopped = false;
  private readonly waker = new Waker();
  /** PATCHes that succeeded, for tests. */
  reports = 0;

  constructor(private readonly o: StatusReporterOptions) {}

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted && !this.stopped) {
      const ok = await this.sync();
      // The fast first report retries quickly until it lands; after that the normal cadence.
      const wait = ok || this.reports > 0 ? this.o.updateFrequencyMs : Math.min(this.o.updateFrequencyMs, 500);
      await this.waker.sleep(this.o.clock, wait, signal);
    }
  }

  /** Report now, changed or not (after start, re-registration, or a readiness change). */
  kick(): void {
    this.force = true;
    this.waker.wake();
  }

  stop(): void {
    this.stopped = true;
    this.waker.wake();
  }

  get lastReported(): NodeStatus | undefined {
    return this.last;
  }

  async sync(): Promise<boolean> {
    return this.o.classic ? this.syncClassic() : this.syncOnce();
  }

  private async post(status: NodeStatus, now: number): Promise<void> {
    await this.o.api.patch(`${nodePath(this.o.nodeName)}/status`, { status }, 'merge', HEARTBEAT);
    const before = new Map((this.last?.conditions ?? []).map((c) => [c.type, c.status]));
    const changed = (status.conditions ?? []).filter((c) => before.get(c.type) !== c.status).map((c) => ({ type: c.type, status: c.status }));
    if (changed.length > 0) this.o.onConditionsChanged?.(changed);
    this.last = status;
    this.lastAt = now;
    this.force = false;
    this.reports++;
  }

  private due(status: NodeStatus, now: number): boolean {
    return this.force || statusChanged(this.last, status) || now - this.lastAt >= this.o.reportFrequencyMs;
  }

  private async syncOnce(): Promise<boolean> {
    const now = this.o.clock.now();
    const status = this.o.buildStatus(this.last, now);
    if (!this.due(status, now)) return true;
    try {
      await this.post(status, now);
      if (this.failing) {
        this.failing = false;
        this.o.log.info({ node: this.o.nodeName }, 'node status update recovered');
      }
      return true;
    } catch (e) {
      if (isNotFound(e)) {
        this.o.onNodeMissing('status');
      } else if (!this.failing) {
        this.failing = true;
        this.o.log.warn({ node: this.o.nodeName, err: errorText(e) }, 'node status update failing; retrying');
      }
      return false;
    }
  }

  /**
   * Upstream's updateNodeStatus: every tick it reads the Node, up to 5 tries, logging each failure
   * ("Error updating node status, will retry") and then "Unable to update node status" — so a
   * deleted Node yields 6 error lines per tick, forever. Kept for side-by-side comparison (N13).
   */
  private async syncClassic(): Promise<boolean> {
    for (let i = 0; i < CLASSIC_RETRIES; i++) {
      try {
        try {
          await this.o.api.get(nodePath(this.o.nodeName));
        } catch (e) {
          throw new Error(`error getting node "${this.o.nodeName}": ${errorText(e)}`);
        }
        const now = this.o.clock.now();
        const status = this.o.buildStatus(this.last, now);
        if (this.due(status, now)) await this.post(status, now);
        return true;
      } catch (e) {
        this.o.log.error({ err: errorText(e) }, 'Error updating node status, will retry');
      }
    }
    this.o.log.error({ err: 'update node status exceeds retry count' }, 'Unable to update node status');
    return false;
  }
}
