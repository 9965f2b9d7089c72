// Startup, liveness and readiness probes of one running container instance, with the kubelet's
// rules (pkg/kubelet/prober):
//  - each probe runs every periodSeconds, not before initialDelaySeconds have passed since the
//    container started, and fails when it takes longer than timeoutSeconds;
//  - a result changes only after successThreshold successes or failureThreshold failures in a row;
//  - until the startup probe has succeeded, liveness and readiness are not run and the container
//    is neither started nor ready; once it has, the startup probe stops;
//  - readiness starts as failed (a container with a readiness probe is not ready until it passes;
//    one without is ready once started);
//  - a startup or liveness failure kills the container, which then restarts as its pod's
//    restartPolicy says.
import { errorText } from '../util/error-text.js';
import type { Container, Probe } from '../api/kinds/pod.js';
import type { Clock, Timer } from '../util/clock.js';

export type ProbeKind = 'startup' | 'liveness' | 'readiness';

export interface ProbeOutcome {
  ok: boolean;
  /** What failed, as the kubelet words it in the Unhealthy event ("HTTP probe failed with statuscode: 500"). */
  output?: string;
}

/** Runs one probe action against the container (exec in it, or HTTP/TCP to its address). */
export type ProbeAction = (probe: Probe, timeoutMs: number) => Promise<ProbeOutcome>;

/** Thrown by an action that could not run at all (not the container's fault): the run is not counted. */
export class ProbeNotRun extends Error {}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** A probe's seconds field in ms; what validation lets through is a whole number, this guards the rest. */
function secondsMs(v: unknown, fallback: number, min: number): number {
  const n = typeof v === 'number' && Number.isFinite(v) ? v : fallback;
  return Math.min(Math.max(min, n) * 1000, MAX_TIMER_MS);
}

export interface ProbeHooks {
  clock: Clock;
  run: ProbeAction;
  /** started or ready changed: the pod's status should be reported again. */
  changed(): void;
  /** A probe failed (each time, as the kubelet records an Unhealthy event per failure). */
  failed(kind: ProbeKind, output: string): void;
  /** A startup or liveness probe crossed its failure threshold: the container must be killed. */
  kill(kind: 'startup' | 'liveness', graceMs: number | undefined): void;
}

const LABEL: Record<ProbeKind, string> = { startup: 'Startup', liveness: 'Liveness', readiness: 'Readiness' };

interface Worker {
  kind: ProbeKind;
  probe: Probe;
  timer?: Timer;
  /** The latest result and how many times in a row it came. */
  last?: boolean;
  run: number;
}

export class ContainerProbes {
  private readonly workers: Worker[] = [];
  private stopped = false;
  private startupDone: boolean;
  private readyResult: boolean;

  constructor(
    container: Container,
    /** When the instance started (ms since epoch); initialDelaySeconds count from it. */
    private readonly startedAt: number,
    private readonly h: ProbeHooks,
  ) {
    const add = (kind: ProbeKind, probe: Probe | undefined) => {
      if (probe && typeof probe === 'object') this.workers.push({ kind, probe, run: 0 });
    };
    add('startup', container.startupProbe);
    add('liveness', container.livenessProbe);
    add('readiness', container.readinessProbe);
    this.startupDone = !container.startupProbe;
    this.readyResult = !container.readinessProbe;
    for (const w of this.workers) this.schedule(w, this.firstDelay(w));
  }

  /** The container has passed its startup probe (or has none). */
  get started(): boolean {
    return this.startupDone;
  }

  get ready(): boolean {
    return this.startupDone && this.readyResult;
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.workers) w.timer?.cancel();
  }

  private firstDelay(w: Worker): number {
    return Math.max(0, secondsMs(w.probe.initialDelaySeconds, 0, 0) - (this.h.clock.now() - this.startedAt));
  }

  private schedule(w: Worker, ms: number): void {
    if (this.stopped) return;
    w.timer = this.h.clock.setTimeout(() => void this.tick(w), ms);
  }

  private periodMs(w: Worker): number {
    return secondsMs(w.probe.periodSeconds, 10, 1);
  }

  private async tick(w: Worker): Promise<void> {
    w.timer = undefined;
    if (this.stopped) return;
    // Liveness and readiness wait for the startup probe; the startup probe is done once it passed.
    if ((w.kind !== 'startup' && !this.startupDone) || (w.kind === 'startup' && this.startupDone)) {
      if (w.kind !== 'startup') this.schedule(w, this.periodMs(w));
      return;
    }
    const timeoutMs = secondsMs(w.probe.timeoutSeconds, 1, 1);
    let outcome: ProbeOutcome;
    try {
      outcome = await this.h.run(w.probe, timeoutMs);
    } catch (e) {
      if (e instanceof ProbeNotRun) {
        this.schedule(w, this.periodMs(w));
        return;
      }
      outcome = { ok: false, output: errorText(e) };
    }
    if (this.stopped) return;
    if (!outcome.ok) this.h.failed(w.kind, `${LABEL[w.kind]} probe failed: ${outcome.output ?? ''}`.trimEnd());
    this.record(w, outcome.ok);
    if (this.stopped) return;
    if (w.kind === 'startup' && this.startupDone) return;
    this.schedule(w, this.periodMs(w));
  }

  private record(w: Worker, ok: boolean): void {
    w.run = w.last === ok ? w.run + 1 : 1;
    w.last = ok;
    // A result counts once it has come threshold times in a row.
    const threshold = ok ? Math.max(1, w.probe.successThreshold ?? 1) : Math.max(1, w.probe.failureThreshold ?? 3);
    if (w.run < threshold) return;
    switch (w.kind) {
      case 'startup':
        if (!ok) return this.kill('startup', w);
        this.startupDone = true;
        return this.h.changed();
      case 'liveness':
        if (!ok) this.kill('liveness', w);
        return;
      case 'readiness':
        if (this.readyResult === ok) return;
        this.readyResult = ok;
        return this.h.changed();
    }
  }

  private kill(kind: 'startup' | 'liveness', w: Worker): void {
    this.stop();
    const grace = w.probe.terminationGracePeriodSeconds;
    this.h.kill(kind, typeof grace === 'number' && grace > 0 ? secondsMs(grace, 0, 0) : undefined);
  }
}
