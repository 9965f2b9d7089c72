// The simulated runtime (KWOK-like): containers "run" without processes. Starting takes
// --sim-pod-start-delay, stopping --sim-pod-stop-delay, unless a stage (--sim-stages, see
// sim-stages.ts) says otherwise for the pod — and a stage may make a container exit by itself
// after a while, with an exit code. A line goes to the container's log so `kubectl logs` shows
// something. Nothing survives the agent, so adoption just resumes the record.
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../util/clock.js';
import type { ContainerLaunch, ExitInfo, InstanceRecord, InstanceUsage, Runtime, RunningContainer, UsageQuery } from './runtime.js';
import { simulatedUsage } from '../../resource-metrics/simulated-usage.js';
import { draw, stageFor, type PodStage } from './sim-stages.js';

export interface SimulatedRuntimeOptions {
  clock: Clock;
  startDelayMs: number;
  stopDelayMs: number;
  /** Write a log line per start (off for large fleets). */
  writeLogs?: boolean;
  stages?: readonly PodStage[];
  /** For the stages' jitter (tests pass a fixed one). */
  random?: () => number;
}

interface SimContainer extends RunningContainer {
  finish(info: ExitInfo): void;
  stage?: PodStage;
}

export class SimulatedRuntime implements Runtime {
  readonly name = 'simulated' as const;
  readonly idScheme = 'skiff-simulated';

  constructor(private readonly o: SimulatedRuntimeOptions) {}

  private make(record: InstanceRecord, stage?: PodStage): SimContainer {
    let done = false;
    let resolve!: (info: ExitInfo) => void;
    const exited = new Promise<ExitInfo>((r) => (resolve = r));
    const finish = (info: ExitInfo) => {
      if (done) return;
      done = true;
      resolve(info);
    };
    return { record, exited, finish, ...(stage ? { stage } : {}) };
  }

  private random(): number {
    return (this.o.random ?? Math.random)();
  }

  async start(l: ContainerLaunch): Promise<RunningContainer> {
    const stage = this.o.stages && l.podMeta ? stageFor(this.o.stages, { meta: l.podMeta, container: l.containerName }) : undefined;
    const startMs = stage?.start ? draw(stage.start, () => this.random()) : this.o.startDelayMs;
    if (startMs > 0) await this.o.clock.sleep(startMs);
    const record: InstanceRecord = { id: randomBytes(16).toString('hex'), startedAt: this.o.clock.now(), logPath: l.logPath };
    if (this.o.writeLogs !== false) {
      try {
        mkdirSync(dirname(l.logPath), { recursive: true });
        // The only line it will have: say why, and where real output comes from.
        appendFileSync(
          l.logPath,
          `simulated container ${l.containerName} of pod ${l.namespace}/${l.podName} started (instance ${l.instance}); it runs no process, so no output follows: for a pod's real output, run it on a node whose agent has --runtime process or containerd\n`,
        );
      } catch {
        /* logs are a courtesy here */
      }
    }
    const c = this.make(record, stage);
    const exit = stage?.exit;
    if (exit) {
      // It ends by itself: a Job's container completing, or one that crashes.
      void this.o.clock.sleep(draw(exit, () => this.random())).then(() =>
        c.finish({ exitCode: exit.code, reason: exit.code === 0 ? 'Completed' : 'Error', finishedAt: this.o.clock.now() }),
      );
    }
    return c;
  }

  async stop(c: RunningContainer, _graceMs: number): Promise<ExitInfo> {
    const stage = (c as SimContainer).stage;
    const stopMs = stage?.stop ? draw(stage.stop, () => this.random()) : this.o.stopDelayMs;
    if (stopMs > 0) await this.o.clock.sleep(stopMs);
    (c as SimContainer).finish?.({ exitCode: 0, reason: 'Completed', finishedAt: this.o.clock.now() });
    return c.exited;
  }

  async adopt(record: InstanceRecord): Promise<RunningContainer | undefined> {
    return this.make(record);
  }

  async reapOrphans(): Promise<number> {
    return 0;
  }

  /** Figures made from each container's requests (no process to measure): see simulated-usage.ts. */
  async usage(instances: readonly UsageQuery[]): Promise<Map<string, InstanceUsage>> {
    const now = this.o.clock.now();
    const out = new Map<string, InstanceUsage>();
    for (const q of instances) {
      out.set(q.id, { timestampMs: now, ...simulatedUsage({ key: q.key, startedAtMs: q.startedAt, ...(q.requests ? { requests: q.requests } : {}) }, now) });
    }
    return out;
  }

  close(): void {}
}
