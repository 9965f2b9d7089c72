// The simulated runtime (KWOK-like): containers "run" without processes. Starting takes
// --sim-pod-start-delay, stopping --sim-pod-stop-delay; a line goes to the container's log so
// `kubectl logs` shows something. Nothing survives the agent, so adoption just resumes the record.
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../util/clock.js';
import type { ContainerLaunch, ExitInfo, InstanceRecord, Runtime, RunningContainer } from './runtime.js';

export interface SimulatedRuntimeOptions {
  clock: Clock;
  startDelayMs: number;
  stopDelayMs: number;
  /** Write a log line per start (off for large fleets). */
  writeLogs?: boolean;
}

interface SimContainer extends RunningContainer {
  finish(info: ExitInfo): void;
}

export class SimulatedRuntime implements Runtime {
  readonly name = 'simulated' as const;
  readonly idScheme = 'skiff-simulated';

  constructor(private readonly o: SimulatedRuntimeOptions) {}

  private make(record: InstanceRecord): SimContainer {
    let finish!: (info: ExitInfo) => void;
    const exited = new Promise<ExitInfo>((r) => (finish = r));
    return { record, exited, finish };
  }

  async start(l: ContainerLaunch): Promise<RunningContainer> {
    if (this.o.startDelayMs > 0) await this.o.clock.sleep(this.o.startDelayMs);
    const record: InstanceRecord = { id: randomBytes(16).toString('hex'), startedAt: this.o.clock.now(), logPath: l.logPath };
    if (this.o.writeLogs !== false) {
      try {
        mkdirSync(dirname(l.logPath), { recursive: true });
        appendFileSync(l.logPath, `simulated container ${l.containerName} of pod ${l.namespace}/${l.podName} started (instance ${l.instance})\n`);
      } catch {
        /* logs are a courtesy here */
      }
    }
    return this.make(record);
  }

  async stop(c: RunningContainer, _graceMs: number): Promise<ExitInfo> {
    if (this.o.stopDelayMs > 0) await this.o.clock.sleep(this.o.stopDelayMs);
    (c as SimContainer).finish?.({ exitCode: 0, reason: 'Completed', finishedAt: this.o.clock.now() });
    return c.exited;
  }

  adopt(record: InstanceRecord): RunningContainer | undefined {
    return this.make(record);
  }

  async reapOrphans(): Promise<number> {
    return 0;
  }

  close(): void {}
}
