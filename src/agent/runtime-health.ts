// Whether the container runtime can run pods, as the kubelet's runtime state check sees it: a
// runtime that is down, or whose network is not ready (no CNI configuration), makes the Node
// NotReady with the runtime's own words, instead of pods that fail one by one with sandbox errors.
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import type { Readiness } from './node-object.js';

/** The kubelet's cadence for asking the runtime's status. */
export const RUNTIME_CHECK_MS = 5_000;

export interface RuntimeHealthOptions {
  clock: Clock;
  log: Logger;
  /** Why the runtime cannot run pods now; undefined when it can. */
  check(): Promise<string | undefined>;
  /** Called when the answer changed. */
  changed(): void;
  intervalMs?: number;
}

export class RuntimeHealth {
  private problem: string | undefined;

  constructor(private readonly o: RuntimeHealthOptions) {}

  /** Not ready while the runtime says it cannot run pods; undefined when it can. */
  get readiness(): Readiness | undefined {
    return this.problem === undefined ? undefined : { ready: false, reason: 'KubeletNotReady', message: this.problem };
  }

  async probe(): Promise<void> {
    let problem: string | undefined;
    try {
      problem = await this.o.check();
    } catch (e) {
      problem = `container runtime is down: ${e instanceof Error ? e.message : String(e)}`;
    }
    if (problem === this.problem) return;
    if (problem === undefined) this.o.log.info({}, 'container runtime ready');
    else this.o.log.warn({ problem }, 'container runtime not ready');
    this.problem = problem;
    this.o.changed();
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.probe();
      await this.o.clock.sleep(this.o.intervalMs ?? RUNTIME_CHECK_MS, signal).catch(() => undefined);
    }
  }
}
