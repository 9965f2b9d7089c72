// One pod on this node: its containers' instances, restarts with back-off, termination within a
// grace period, and what it looks like in status terms. Pod sync owns the decisions about *whether*
// a pod should run; a worker knows *how*. Its state is persisted on every transition so a restarted
// agent adopts running instances instead of starting duplicates.
import { join } from 'node:path';
import type { Container, ContainerState, Pod, PodCondition, PodPhase, RestartPolicy } from '../api/kinds/pod.js';
import type { Clock, Timer } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { errorText } from '../util/error-text.js';
import { rfc3339 } from '../util/time.js';
import { podPhase, type ContainerView } from './pod-status.js';
import { ContainerProbes, type ProbeAction } from './probes.js';
import type { RestartBackoff } from './restart-backoff.js';
import { CreateContainerError, type ContainerMount, type ExitInfo, type InstanceRecord, type LogFormat, type Runtime, type RunningContainer } from './runtimes/runtime.js';
import type { PodStateStore } from './state-dir.js';
import { formatDuration } from '../util/duration.js';

export interface PodWorkerDeps {
  runtime: Runtime;
  clock: Clock;
  log: Logger;
  state: PodStateStore;
  backoff: RestartBackoff;
  /** Environment for a container: resolves valueFrom/envFrom; throws CreateContainerError. */
  resolveEnv(pod: Pod, c: Container): Promise<Record<string, string>>;
  /** Readies what the pod's containers share (volumes, sandbox) before a container starts; throws CreateContainerError. */
  prepare?(pod: Pod): Promise<void>;
  /** The container's volume mounts on this node (after prepare). */
  mounts?(pod: Pod, c: Container): ContainerMount[];
  /** Something changed that the pod's status (or a pending restart) should reflect. */
  notify(uid: string): void;
  /** Pod events (Started, Killing, BackOff, Failed, Unhealthy). */
  event?(pod: Pod, reason: string, message: string, type: 'Normal' | 'Warning', container: string): void;
  /**
   * How a container's probes act (exec in it, HTTP or TCP to it). Without it (the simulated
   * runtime) probes are not run and a container is started and ready once running.
   */
  probeAction?(pod: Pod, c: Container, env: () => Promise<Record<string, string>>, workingDir: string, instanceId: string): ProbeAction;
}

interface ExitRecord extends ExitInfo {
  startedAt: number;
  id: string;
  imageRef?: string;
  /** Killed for failing a liveness or startup probe (recorded as exit 137 at least: never a success). */
  probeKilled?: boolean;
}

interface ContainerRecord {
  name: string;
  init: boolean;
  restartCount: number;
  current?: RunningContainer;
  starting?: Promise<void>;
  createError?: { reason: string; message: string; retry: boolean };
  lastExit?: ExitRecord;
  prevExit?: ExitRecord;
  timer?: Timer;
  backoffReported?: number;
  probes?: ContainerProbes;
  /** The running instance is being killed for a failed probe. */
  probeKill?: RunningContainer;
}

interface PersistedContainer {
  init: boolean;
  restartCount: number;
  current?: InstanceRecord;
  lastExit?: ExitRecord;
  prevExit?: ExitRecord;
}

export interface PersistedPod {
  version: 1;
  uid: string;
  namespace: string;
  name: string;
  startTime: number;
  terminated?: boolean;
  /** The pod as last seen, so restart policy still applies while the API is unreachable. */
  pod: Pod;
  containers: Record<string, PersistedContainer>;
}

export interface TerminalOverride {
  phase: Extract<PodPhase, 'Failed' | 'Succeeded'>;
  reason: string;
  message: string;
  condition?: PodCondition;
}

/** Pod-level restart decision for a container that has ended. */
export function shouldRestart(policy: RestartPolicy, exitCode: number): boolean {
  return policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0);
}

/** $(VAR) references in command and args expand from the container's env; $$ escapes. */
export function expandVars(s: string, env: Record<string, string>): string {
  return s.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (m, name: string | undefined) => {
    if (m === '$$') return '$';
    return name !== undefined && env[name] !== undefined ? env[name] : m;
  });
}

const CONFIG_RETRY_MS = 10_000;

export class PodWorker {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  pod: Pod;
  readonly startTime: number;
  private readonly records = new Map<string, ContainerRecord>();
  private terminating?: Promise<void>;
  terminated = false;
  override?: TerminalOverride;
  /** Stopped with its node's whole cluster (N6a): exits are no longer recorded, nothing starts. */
  private poweredOff = false;

  constructor(pod: Pod, private readonly d: PodWorkerDeps, startTime?: number) {
    this.pod = pod;
    this.uid = pod.metadata.uid!;
    this.namespace = pod.metadata.namespace ?? 'default';
    this.name = pod.metadata.name!;
    this.startTime = startTime ?? d.clock.now();
  }

  get key(): string {
    return `${this.namespace}/${this.name}`;
  }

  get isTerminating(): boolean {
    return this.terminating !== undefined;
  }

  private get policy(): RestartPolicy {
    return this.pod.spec?.restartPolicy ?? 'Always';
  }

  /** Process groups of running instances (for orphan reaping). */
  runningGroups(): number[] {
    const out: number[] = [];
    for (const r of this.records.values()) if (r.current?.record.pid !== undefined) out.push(r.current.record.pid);
    return out;
  }

  runningCount(): number {
    let n = 0;
    for (const r of this.records.values()) if (r.current) n++;
    return n;
  }

  hasRunning(): boolean {
    for (const r of this.records.values()) if (r.current || r.starting) return true;
    return false;
  }

  /** The id of the container's running instance (what exec and attach enter), undefined when none runs. */
  runningInstance(container: string): string | undefined {
    return this.records.get(container)?.current?.record.id;
  }

  /** Running instances with their container's name and spec (for resource usage). */
  runningInstances(): { container: string; spec?: Container; record: InstanceRecord }[] {
    const out: { container: string; spec?: Container; record: InstanceRecord }[] = [];
    for (const r of this.records.values()) {
      if (!r.current) continue;
      const spec = (r.init ? this.pod.spec?.initContainers : this.pod.spec?.containers)?.find((c) => c.name === r.name);
      out.push({ container: r.name, ...(spec ? { spec } : {}), record: r.current.record });
    }
    return out;
  }

  /** Instance ids this worker knows of, running or ended (for orphan reaping). */
  instanceIds(): string[] {
    const out: string[] = [];
    for (const r of this.records.values()) {
      if (r.current) out.push(r.current.record.id);
      if (r.lastExit) out.push(r.lastExit.id);
      if (r.prevExit) out.push(r.prevExit.id);
    }
    return out;
  }

  /** Rebuilds a worker from its persisted state, adopting instances that still run. */
  static async recover(p: PersistedPod, d: PodWorkerDeps): Promise<PodWorker> {
    const w = new PodWorker(p.pod, d, p.startTime);
    w.terminated = p.terminated === true;
    for (const [name, pc] of Object.entries(p.containers)) {
      const rec: ContainerRecord = { name, init: pc.init, restartCount: pc.restartCount };
      if (pc.lastExit) rec.lastExit = pc.lastExit;
      if (pc.prevExit) rec.prevExit = pc.prevExit;
      if (pc.current) {
        const rc = await d.runtime.adopt(pc.current);
        if (rc) {
          rec.current = rc;
          void rc.exited.then((info) => w.onExit(rec, rc, info));
          const c = p.pod.spec?.containers?.find((x) => x?.name === name);
          if (c && !pc.init) {
            // Resolved once, when a probe first needs it, and kept: probes must not hang on the API.
            let env: Promise<Record<string, string>> | undefined;
            const resolve = () => (env ??= d.resolveEnv(p.pod, c).catch((e: unknown) => {
              env = undefined;
              throw e;
            }));
            w.startProbes(rec, c, rc, resolve, typeof c.workingDir === 'string' && c.workingDir ? c.workingDir : d.state.podDir(p.uid));
          }
        } else {
          rec.prevExit = rec.lastExit;
          rec.lastExit = {
            exitCode: 137,
            reason: 'ContainerStatusUnknown',
            message: 'The container could not be located when the agent restarted',
            finishedAt: d.clock.now(),
            startedAt: pc.current.startedAt,
            id: pc.current.id,
          };
        }
      }
      w.records.set(name, rec);
    }
    return w;
  }

  persist(): void {
    const containers: Record<string, PersistedContainer> = {};
    for (const r of this.records.values()) {
      const pc: PersistedContainer = { init: r.init, restartCount: r.restartCount };
      if (r.current) pc.current = r.current.record;
      if (r.lastExit) pc.lastExit = r.lastExit;
      if (r.prevExit) pc.prevExit = r.prevExit;
      containers[r.name] = pc;
    }
    const p: PersistedPod = {
      version: 1,
      uid: this.uid,
      namespace: this.namespace,
      name: this.name,
      startTime: this.startTime,
      pod: { apiVersion: 'v1', kind: 'Pod', metadata: this.pod.metadata, ...(this.pod.spec ? { spec: this.pod.spec } : {}) },
      containers,
      ...(this.terminated ? { terminated: true } : {}),
    };
    try {
      this.d.state.writePodState(this.uid, p);
    } catch (e) {
      this.d.log.warn({ pod: this.key, err: errorText(e) }, 'could not persist pod state');
    }
  }

  /** Removes the pod's state and logs (the pod is gone from the API and stopped here). */
  dispose(): void {
    for (const r of this.records.values()) {
      r.timer?.cancel();
      r.probes?.stop();
    }
    this.d.backoff.forget(`${this.uid}/`);
    this.d.state.removePod(this.uid);
    this.d.runtime.removePod?.(this.uid).catch((e: unknown) => this.d.log.warn({ pod: this.key, err: errorText(e) }, 'could not remove the pod from the runtime'));
  }

  logPath(container: string, instance: number): string {
    return join(this.d.state.podDir(this.uid), 'logs', container, `${instance}.log`);
  }

  private record(name: string, init: boolean): ContainerRecord {
    let r = this.records.get(name);
    if (!r) {
      r = { name, init, restartCount: 0 };
      this.records.set(name, r);
    }
    return r;
  }

  /** Starts what should run and restarts what may restart. Never blocks on the runtime. */
  sync(pod: Pod): void {
    this.pod = pod;
    if (this.terminated || this.terminating || this.override || this.poweredOff) return;
    const spec = pod.spec;
    if (!spec || !Array.isArray(spec.containers)) return;
    for (const c of spec.initContainers ?? []) {
      if (!c || typeof c.name !== 'string') return;
      const r = this.record(c.name, true);
      if (r.current || r.starting || r.createError) return;
      if (!r.lastExit) return this.start(r, c);
      if (r.lastExit.exitCode === 0) continue;
      // A failed init container restarts unless the pod never restarts (then the pod has failed).
      if (this.policy !== 'Never') this.maybeRestart(r, c);
      return;
    }
    for (const c of spec.containers) {
      if (!c || typeof c.name !== 'string') continue;
      const r = this.record(c.name, false);
      if (r.current || r.starting || r.createError) continue;
      if (!r.lastExit) this.start(r, c);
      else if (shouldRestart(this.policy, r.lastExit.exitCode)) this.maybeRestart(r, c);
    }
  }

  private backoffKey(r: ContainerRecord): string {
    return `${this.uid}/${r.name}`;
  }

  private maybeRestart(r: ContainerRecord, c: Container): void {
    const key = this.backoffKey(r);
    const wait = this.d.backoff.remaining(key, r.lastExit!.finishedAt);
    if (wait > 0) {
      if (!r.timer) {
        r.timer = this.d.clock.setTimeout(() => {
          r.timer = undefined;
          this.d.notify(this.uid);
        }, wait);
        if (r.backoffReported !== r.lastExit!.finishedAt) {
          r.backoffReported = r.lastExit!.finishedAt;
          this.d.event?.(this.pod, 'BackOff', 'Back-off restarting failed container', 'Warning', r.name);
        }
      }
      return;
    }
    this.d.backoff.restarted(key);
    r.restartCount++;
    this.start(r, c);
  }

  private start(r: ContainerRecord, c: Container): void {
    const instance = r.restartCount;
    r.createError = undefined;
    const p = (async () => {
      try {
        await this.d.prepare?.(this.pod);
        const env = await this.d.resolveEnv(this.pod, c);
        const mounts = this.d.mounts?.(this.pod, c);
        const command = Array.isArray(c.command) ? c.command.map((s) => expandVars(String(s), env)) : [];
        const args = Array.isArray(c.args) ? c.args.map((s) => expandVars(String(s), env)) : [];
        const argv = command.length > 0 ? [...command, ...args] : [];
        const workingDir = typeof c.workingDir === 'string' && c.workingDir ? c.workingDir : this.d.state.podDir(this.uid);
        const rc = await this.d.runtime.start({
          podUid: this.uid,
          namespace: this.namespace,
          podName: this.name,
          containerName: r.name,
          instance,
          argv,
          command,
          args,
          env,
          workingDir,
          logPath: this.logPath(r.name, instance),
          podMeta: this.pod.metadata,
          pod: this.pod,
          container: c,
          ...(mounts ? { mounts } : {}),
        });
        r.current = rc;
        this.persist();
        void rc.exited.then((info) => this.onExit(r, rc, info));
        if (!r.init) this.startProbes(r, c, rc, async () => env, workingDir);
        if (rc.record.pid !== undefined || this.d.runtime.name !== 'process') {
          this.d.event?.(this.pod, 'Started', `Started container ${r.name}`, 'Normal', r.name);
        }
        // Terminated (or switched off) while starting: stop it right away.
        if (this.terminating || this.poweredOff) void this.d.runtime.stop(rc, 0);
      } catch (e) {
        const err = e instanceof CreateContainerError ? e : new CreateContainerError('CreateContainerError', errorText(e));
        const retry = err.reason !== 'CreateContainerConfigError' || !/has no command/.test(err.message);
        r.createError = { reason: err.reason, message: err.message, retry };
        this.d.event?.(this.pod, 'Failed', `Error: ${err.message}`, 'Warning', r.name);
        if (retry) {
          r.timer?.cancel();
          r.timer = this.d.clock.setTimeout(() => {
            r.timer = undefined;
            r.createError = undefined;
            this.d.notify(this.uid);
          }, CONFIG_RETRY_MS);
        }
      } finally {
        r.starting = undefined;
        this.d.notify(this.uid);
      }
    })();
    r.starting = p;
  }

  /** Probes the instance until it ends; a failed startup or liveness probe kills it. */
  private startProbes(r: ContainerRecord, c: Container, rc: RunningContainer, env: () => Promise<Record<string, string>>, workingDir: string): void {
    if (!this.d.probeAction || !(c.startupProbe || c.livenessProbe || c.readinessProbe)) return;
    r.probes?.stop();
    r.probes = new ContainerProbes(c, rc.record.startedAt, {
      clock: this.d.clock,
      run: this.d.probeAction(this.pod, c, env, workingDir, rc.record.id),
      changed: () => this.d.notify(this.uid),
      failed: (_kind, output) => this.d.event?.(this.pod, 'Unhealthy', output, 'Warning', r.name),
      kill: (kind, graceMs) => {
        if (r.current !== rc || this.terminating) return;
        this.d.log.info({ pod: this.key, container: r.name, probe: kind }, 'killing a container that failed its probe');
        this.d.event?.(this.pod, 'Killing', `Container ${r.name} failed ${kind} probe, will be restarted`, 'Normal', r.name);
        const grace = graceMs ?? (this.pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
        r.probeKill = rc;
        void this.d.runtime.stop(rc, grace);
      },
    });
  }

  private onExit(r: ContainerRecord, rc: RunningContainer, info: ExitInfo): void {
    if (r.current !== rc || this.poweredOff) return;
    r.probes?.stop();
    r.probes = undefined;
    r.current = undefined;
    r.prevExit = r.lastExit;
    r.lastExit = { ...info, startedAt: rc.record.startedAt, id: rc.record.id, ...(rc.record.imageRef ? { imageRef: rc.record.imageRef } : {}) };
    if (r.probeKill === rc) {
      r.probeKill = undefined;
      // Whatever the process answered to SIGTERM, the agent killed it: never a success.
      r.lastExit.probeKilled = true;
      if (r.lastExit.exitCode === 0) r.lastExit = { ...r.lastExit, exitCode: 137, reason: 'Error' };
    }
    this.persist();
    this.d.notify(this.uid);
  }

  /** Stops every instance within graceMs (SIGTERM, then SIGKILL); no more starts afterwards. */
  terminate(graceMs: number, override?: TerminalOverride): Promise<void> {
    if (override && !this.override) this.override = override;
    if (this.terminating) return this.terminating;
    this.terminating = (async () => {
      for (const r of this.records.values()) {
        r.timer?.cancel();
        r.probes?.stop();
      }
      await Promise.all([...this.records.values()].map((r) => r.starting));
      const running = [...this.records.values()].filter((r) => r.current);
      if (running.length > 0) this.d.event?.(this.pod, 'Killing', `Stopping container${running.length > 1 ? 's' : ''} ${running.map((r) => r.name).join(', ')}`, 'Normal', running[0]!.name);
      await Promise.all(running.map((r) => this.d.runtime.stop(r.current!, graceMs)));
      // onExit runs from the exited promise; make sure it has before reporting.
      await Promise.all(running.map(async (r) => r.current && this.onExit(r, r.current, await r.current.exited)));
      await this.d.runtime.stopPod?.(this.uid).catch((e: unknown) => this.d.log.warn({ pod: this.key, err: errorText(e) }, 'could not stop the pod sandbox'));
      this.terminated = true;
      this.persist();
      this.d.notify(this.uid);
    })();
    return this.terminating;
  }

  /**
   * The node is switched off with its whole cluster (N6a): every instance stops within graceMs
   * (SIGTERM, then SIGKILL), and none of it is recorded. The persisted state still names the
   * instances that ran, so the agent started next finds them gone and starts them again in the
   * same pod (restart count + 1), as a kubelet does after its machine restarts.
   */
  async powerOff(graceMs: number): Promise<void> {
    this.poweredOff = true;
    for (const r of this.records.values()) {
      r.timer?.cancel();
      r.probes?.stop();
    }
    await Promise.all([...this.records.values()].map((r) => r.starting));
    await Promise.all([...this.records.values()].filter((r) => r.current).map((r) => this.d.runtime.stop(r.current!, graceMs)));
    await this.d.runtime.stopPod?.(this.uid).catch((e: unknown) => this.d.log.warn({ pod: this.key, err: errorText(e) }, 'could not stop the pod sandbox'));
  }

  // --- status ------------------------------------------------------------------------------

  private terminatedState(e: ExitRecord): ContainerState {
    const t: NonNullable<ContainerState['terminated']> = {
      exitCode: e.exitCode,
      reason: e.reason,
      startedAt: rfc3339(e.startedAt),
      finishedAt: rfc3339(e.finishedAt),
      containerID: `${this.d.runtime.idScheme}://${e.id}`,
    };
    if (e.message) t.message = e.message;
    return { terminated: t };
  }

  private view(c: Container, init: boolean, blockedByInit: boolean): ContainerView {
    const r = this.records.get(c.name);
    const v: ContainerView = { name: c.name, image: typeof c.image === 'string' ? c.image : '', state: {}, lastState: {}, ready: false, started: false, restartCount: r?.restartCount ?? 0 };
    const stopping = this.terminating !== undefined || this.terminated || this.override !== undefined;
    if (!r || (!r.current && !r.starting && !r.lastExit && !r.createError)) {
      v.state = { waiting: { reason: blockedByInit ? 'PodInitializing' : 'ContainerCreating' } };
      return v;
    }
    if (r.lastExit) v.lastState = this.terminatedState(r.lastExit);
    if (r.current) {
      v.state = { running: { startedAt: rfc3339(r.current.record.startedAt) } };
      v.containerID = `${this.d.runtime.idScheme}://${r.current.record.id}`;
      if (r.current.record.imageRef) v.imageID = r.current.record.imageRef;
      v.started = r.probes ? r.probes.started : true;
      v.ready = !init && !stopping && (r.probes ? r.probes.ready : true);
      return v;
    }
    if (r.starting) {
      v.state = { waiting: { reason: 'ContainerCreating' } };
      return v;
    }
    if (r.createError) {
      v.state = { waiting: { reason: r.createError.reason, message: r.createError.message } };
      return v;
    }
    const last = r.lastExit!;
    v.containerID = `${this.d.runtime.idScheme}://${last.id}`;
    if (last.imageRef) v.imageID = last.imageRef;
    const restarting = !stopping && shouldRestart(this.policy, last.exitCode) && !(init && last.exitCode === 0);
    if (restarting) {
      const backoff = this.d.backoff.current(this.backoffKey(r));
      v.state = {
        waiting: {
          reason: 'CrashLoopBackOff',
          message: `back-off ${formatDuration(backoff || this.d.backoff.baseMs)} restarting failed container=${c.name} pod=${this.name}_${this.namespace}(${this.uid})`,
        },
      };
      return v;
    }
    v.state = this.terminatedState(last);
    v.lastState = r.prevExit ? this.terminatedState(r.prevExit) : {};
    return v;
  }

  /** Everything status needs, as of now. */
  snapshot(): { phase: PodPhase; containers: ContainerView[]; initContainers: ContainerView[]; initIncomplete: string[]; reason?: string; message?: string; condition?: PodCondition } {
    const spec = this.pod.spec;
    const inits = (spec?.initContainers ?? []).filter((c) => c && typeof c.name === 'string');
    const mains = (Array.isArray(spec?.containers) ? spec!.containers : []).filter((c) => c && typeof c.name === 'string');
    const initIncomplete = inits.filter((c) => this.records.get(c.name)?.lastExit?.exitCode !== 0).map((c) => c.name);
    const initFailed = this.policy === 'Never' && inits.some((c) => {
      const r = this.records.get(c.name);
      return r && !r.current && !r.starting && r.lastExit !== undefined && r.lastExit.exitCode !== 0;
    });
    const initContainers = inits.map((c) => this.view(c, true, false));
    const containers = mains.map((c) => this.view(c, false, initIncomplete.length > 0));
    let phase = podPhase(this.policy, containers, { pending: initIncomplete.length > 0 && !initFailed, failed: initFailed });
    if (this.override) {
      return { phase: this.override.phase, containers, initContainers, initIncomplete, reason: this.override.reason, message: this.override.message, ...(this.override.condition ? { condition: this.override.condition } : {}) };
    }
    if (this.terminated && phase !== 'Succeeded' && phase !== 'Failed') {
      // A pod stopped for good is terminal: Succeeded only if every container succeeded.
      const all = containers.every((c) => c.state.terminated?.exitCode === 0);
      phase = all && containers.length > 0 ? 'Succeeded' : 'Failed';
    }
    return { phase, containers, initContainers, initIncomplete };
  }

  /** Log files of a container: the current (or last) instance and the one before. */
  logs(container: string): { known: boolean; current?: { path: string; running: boolean }; previous?: string; waiting?: string; format?: LogFormat } {
    const inSpec = [...(this.pod.spec?.containers ?? []), ...(this.pod.spec?.initContainers ?? [])].some((c) => c?.name === container);
    const r = this.records.get(container);
    if (!inSpec && !r) return { known: false };
    if (!r || (!r.current && !r.lastExit)) return { known: true, waiting: r?.createError?.reason ?? 'ContainerCreating' };
    const out: { known: boolean; current?: { path: string; running: boolean }; previous?: string; format?: LogFormat } = { known: true };
    if (this.d.runtime.logFormat) out.format = this.d.runtime.logFormat;
    const instance = r.restartCount;
    if (r.current || r.lastExit) out.current = { path: this.logPath(container, instance), running: r.current !== undefined };
    if (instance > 0) out.previous = this.logPath(container, instance - 1);
    return out;
  }
}
