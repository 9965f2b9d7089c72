// Pod sync: one level-triggered reconcile per pod key (namespace/name), comparing desired state
// (the pod in the API, from a watch with fieldSelector spec.nodeName=<node>) with actual state
// (the pod's worker and its container instances). Nothing is killed before the first list has
// arrived, nor for lack of the API (N11): a stale cache keeps its pods running.
import { rfc3339 } from '../util/time.js';
import { API_ACCESS_VOLUME_PREFIX, type Container, type Pod } from '../api/kinds/pod.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { WorkQueue } from '../client/workqueue.js';
import { type AgentApi, isConflict, isNotFound, podPath } from './api.js';
import { errorText } from '../util/error-text.js';
import type { EventRecorder } from './events.js';
import { buildPodStatus, statusFingerprint, statusPatch } from './pod-status.js';
import { PodWorker, type PersistedPod, type TerminalOverride } from './pod-worker.js';
import { probeAction } from './probe-actions.js';
import { RestartBackoff } from './restart-backoff.js';
import { CreateContainerError, type KnownInstances, type Runtime } from './runtimes/runtime.js';
import type { PodStateStore } from './state-dir.js';
import { fieldRefValue, resourceFieldValue, type FieldRefContext } from './field-ref.js';
import { VolumeManager } from './volumes/volume-manager.js';
import { kindWord, readConfigData, type ConfigKind } from './config-data.js';

export interface PodSyncOptions {
  api: AgentApi;
  clock: Clock;
  log: Logger;
  nodeName: string;
  nodeIP: string;
  runtime: Runtime;
  state: PodStateStore;
  events?: EventRecorder;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  concurrency?: number;
  /** The process runtime's tag for this agent's processes; probe commands carry it too. */
  agentTag?: string;
  /** The node's allocatable resources: what resourceFieldRef reads for a limit the container does not set. */
  allocatable?: () => Record<string, string>;
  /** Told how long each pod sync took (kubelet_pod_worker_duration_seconds). */
  synced?(seconds: number): void;
  /** The API server the agent talks to now (an https URL): what in-cluster clients of image containers are pointed at. */
  apiServer?(): string;
  /** How often API-backed volumes (configMap, secret, projected) of running pods are rewritten. */
  volumeRefreshMs?: number;
}

/** A ConfigMap or Secret change reaches a running pod's volume within this (the kubelet: its sync period, 1 min, plus cache TTL). */
const VOLUME_REFRESH_MS = 10_000;

export const SHUTDOWN_OVERRIDE: TerminalOverride = {
  phase: 'Failed',
  reason: 'Terminated',
  message: 'Pod was terminated in response to imminent node shutdown.',
  condition: { type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message: 'Pod was terminated in response to imminent node shutdown.' },
};

function keyOf(pod: Pod): string {
  return `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
}

function graceMsOf(pod: Pod | undefined): number {
  const s = pod?.metadata.deletionGracePeriodSeconds ?? pod?.spec?.terminationGracePeriodSeconds ?? 30;
  return Math.max(0, Number(s) || 0) * 1000;
}

/** How long a status just written is taken as in place while the watch has not shown it yet (the kubelet's status sync period). */
const STATUS_ECHO_WAIT_MS = 10_000;

interface LastWrite {
  /** The fingerprint of what was sent, and of what the API answered it stored. */
  sent: string;
  stored: string;
  /**
   * Versions of the pod that are no news, newest last (a few): those the node's own status writes
   * were computed from, and those they produced.
   */
  stale: string[];
  at: number;
}

/** How many of a pod's versions are remembered as no news. */
const STALE_VERSIONS = 8;

export class PodSync {
  private readonly workers = new Map<string, PodWorker>();
  private readonly queue: WorkQueue<string>;
  private readonly backoff: RestartBackoff;
  private desired: (key: string) => Pod | undefined = () => undefined;
  private desiredKeys: () => string[] = () => [];
  private synced = false;
  private admitting = true;
  /** Last status written per pod uid, to write each status once (see writeStatus). */
  private readonly lastWritten = new Map<string, LastWrite>();

  /** Pods' volumes, for a runtime whose containers have a filesystem of their own. */
  private readonly volumes?: VolumeManager;

  constructor(private readonly o: PodSyncOptions) {
    this.queue = new WorkQueue<string>(o.clock, 200, 10_000);
    this.backoff = new RestartBackoff(o.clock, o.backoffBaseMs ?? 10_000, o.backoffMaxMs ?? 300_000);
    // Host processes get their claims only (see VolumeManager); simulated containers nothing.
    if (o.runtime.images || o.runtime.name === 'process') {
      this.volumes = new VolumeManager({
        api: o.api,
        clock: o.clock,
        log: o.log,
        podDir: (uid) => o.state.podDir(uid),
        fieldRefs: (pod) => this.fieldRefs(pod),
        allocatable: () => o.allocatable?.() ?? {},
        claimsOnly: !o.runtime.images,
      });
    }
  }

  private fieldRefs(pod: Pod): FieldRefContext {
    return { nodeName: this.o.nodeName, nodeIP: this.o.nodeIP, podIP: this.podIP(pod) || this.o.nodeIP };
  }

  /** Keeps configMap, secret, downwardAPI and projected volumes of running pods current (the kubelet's sync period). */
  private async refreshVolumes(signal: AbortSignal): Promise<void> {
    const volumes = this.volumes;
    if (!volumes) return;
    while (!signal.aborted) {
      await this.o.clock.sleep(this.o.volumeRefreshMs ?? VOLUME_REFRESH_MS, signal).catch(() => undefined);
      await volumes.refresh([...this.workers.values()].filter((w) => !w.terminated && !w.isTerminating && w.hasRunning()).map((w) => w.pod));
    }
  }

  get podCount(): number {
    return this.workers.size;
  }

  /** Re-attaches to what an earlier agent left: adopt recorded instances, kill untracked processes. */
  async recover(): Promise<{ pods: number; adopted: number; reaped: number }> {
    let adopted = 0;
    for (const uid of this.o.state.podUids()) {
      const p = this.o.state.readPodState<PersistedPod>(uid);
      if (!p || p.version !== 1 || !p.pod?.metadata?.uid) {
        this.o.state.removePod(uid);
        continue;
      }
      const w = await PodWorker.recover(p, this.workerDeps());
      adopted += w.runningCount();
      this.workers.set(w.uid, w);
    }
    const known: KnownInstances = { pids: new Set(), ids: new Set(), podUids: new Set(this.workers.keys()) };
    for (const w of this.workers.values()) {
      for (const g of w.runningGroups()) known.pids.add(g);
      for (const id of w.instanceIds()) known.ids.add(id);
    }
    const reaped = await this.o.runtime.reapOrphans(known);
    if (this.workers.size > 0 || reaped > 0) this.o.log.info({ pods: this.workers.size, adopted, reaped }, 'recovered pods from the data dir');
    // Restart policy keeps applying from the persisted spec even before the API answers.
    for (const w of this.workers.values()) this.queue.add(w.key);
    return { pods: this.workers.size, adopted, reaped };
  }

  /** Where desired state comes from (the pod informer's cache). */
  setDesired(get: (key: string) => Pod | undefined, keys: () => string[]): void {
    this.desired = get;
    this.desiredKeys = keys;
  }

  /** The first list has arrived: desired state is known, reconcile everything. */
  markSynced(): void {
    this.synced = true;
    for (const k of this.desiredKeys()) this.queue.add(k);
    for (const w of this.workers.values()) this.queue.add(w.key);
  }

  podChanged(pod: Pod): void {
    if (!pod?.metadata?.name) return;
    this.queue.add(keyOf(pod));
  }

  podDeleted(pod: Pod): void {
    if (!pod?.metadata?.name) return;
    // Keep the final object: its deletion grace period decides how the containers are stopped.
    const w = pod.metadata.uid ? this.workers.get(pod.metadata.uid) : undefined;
    if (w) w.pod = pod;
    this.queue.add(keyOf(pod));
  }

  /** New pods are refused from now on (node shutting down). */
  stopAdmitting(): void {
    this.admitting = false;
  }

  workerFor(namespace: string, name: string): PodWorker | undefined {
    let found: PodWorker | undefined;
    for (const w of this.workers.values()) if (w.namespace === namespace && w.name === name && (!found || !w.terminated)) found = w;
    return found;
  }

  allWorkers(): PodWorker[] {
    return [...this.workers.values()];
  }

  async run(signal: AbortSignal): Promise<void> {
    signal.addEventListener('abort', () => this.queue.shutdown(), { once: true });
    const refreshing = this.refreshVolumes(signal);
    const loops = Array.from({ length: this.o.concurrency ?? 4 }, async () => {
      for (;;) {
        const key = await this.queue.get();
        if (key === undefined) return;
        const started = performance.now();
        try {
          await this.reconcile(key);
          this.o.synced?.((performance.now() - started) / 1000);
          this.queue.forget(key);
        } catch (e) {
          this.o.log.debug({ pod: key, err: errorText(e) }, 'pod sync failed; retrying');
          this.queue.addRateLimited(key);
        } finally {
          this.queue.done(key);
        }
      }
    });
    await Promise.all([...loops, refreshing]);
  }

  private workerDeps() {
    return {
      runtime: this.o.runtime,
      clock: this.o.clock,
      log: this.o.log,
      state: this.o.state,
      backoff: this.backoff,
      resolveEnv: (pod: Pod, c: Container) => this.resolveEnv(pod, c),
      ...(this.volumes
        ? {
            prepare: async (pod: Pod) => {
              await this.volumes!.setUp(pod);
              await this.o.runtime.prepare?.(pod);
            },
            ...(this.o.runtime.images ? { mounts: (pod: Pod, c: Container) => this.volumes!.mounts(pod, c) } : {}),
          }
        : {}),
      notify: (uid: string) => {
        const w = this.workers.get(uid);
        if (w) this.queue.add(w.key);
      },
      event: (pod: Pod, reason: string, message: string, type: 'Normal' | 'Warning', container: string) => {
        void this.o.events?.pod(pod, reason, message, type, `spec.containers{${container}}`);
      },
      // Simulated containers run nothing a probe could reach: they are ready once running.
      ...(this.o.runtime.name !== 'simulated'
        ? {
            probeAction: (pod: Pod, container: Container, env: () => Promise<Record<string, string>>, workingDir: string, instanceId: string) => {
              const exec = this.o.runtime.exec;
              return probeAction({
                container,
                podIP: this.podIP(pod),
                env,
                workingDir,
                agentTag: this.o.agentTag ?? '',
                ...(exec ? { exec: (argv: string[], timeoutMs: number) => exec.call(this.o.runtime, instanceId, argv, timeoutMs) } : {}),
              });
            },
          }
        : {}),
    };
  }

  /** The pod's address: its sandbox's with pod networking, else (host network, host processes) the node's. */
  private podIP(pod: Pod): string {
    if (pod.spec?.hostNetwork || !this.o.runtime.podIP) return this.o.nodeIP;
    return this.o.runtime.podIP(pod.metadata.uid ?? '') ?? '';
  }

  /** Host processes see the host's filesystem: say so instead of letting a pod expect its volumes. */
  private warnVolumes(pod: Pod): void {
    if (this.o.runtime.name !== 'process') return;
    // The token volume ServiceAccount admission adds to every pod is not the pod's own wish: no warning for it alone.
    // Nor for claims: their directories are given to the processes (see VolumeManager).
    const names = (pod.spec?.volumes ?? [])
      .filter((v) => !v?.persistentVolumeClaim)
      .map((v) => v?.name)
      .filter((n): n is string => typeof n === 'string' && !n.startsWith(API_ACCESS_VOLUME_PREFIX));
    if (names.length === 0) return;
    void this.o.events?.pod(pod, 'VolumesNotMounted', `the process runtime runs containers as host processes and mounts no volumes: ${names.join(', ')}`, 'Warning');
  }

  /** The reconcile for one pod key. Idempotent; never blocks on a grace period. */
  async reconcile(key: string): Promise<void> {
    const workers = [...this.workers.values()].filter((w) => w.key === key);
    if (!this.synced) {
      // Desired state unknown yet: keep what runs running, restart per the persisted spec, kill nothing.
      for (const w of workers) w.sync(w.pod);
      return;
    }
    const pod = this.desired(key);
    for (const w of workers) {
      if (pod && w.uid === pod.metadata.uid) continue;
      // Deleted from the API (or replaced by a pod with the same name): stop it, then forget it.
      if (!w.terminated) {
        if (!w.isTerminating) {
          this.o.log.info({ pod: key, uid: w.uid }, 'pod deleted from the API; stopping its containers');
          void w.terminate(graceMsOf(w.pod));
        }
        continue;
      }
      this.volumes?.tearDown(w.uid);
      w.dispose();
      this.workers.delete(w.uid);
      this.lastWritten.delete(w.uid);
    }
    if (!pod) return;
    const uid = pod.metadata.uid;
    if (!uid || !pod.spec) return;
    let w = this.workers.get(uid);
    const phase = pod.status?.phase;
    const terminalInApi = phase === 'Succeeded' || phase === 'Failed';
    if (!w) {
      if (pod.metadata.deletionTimestamp) return this.finishDeletion(pod);
      if (terminalInApi) return; // finished before; never started again
      if (!this.admitting) return this.reject(pod);
      w = new PodWorker(pod, this.workerDeps());
      this.workers.set(uid, w);
      w.persist();
      this.warnVolumes(pod);
    }
    if (pod.metadata.deletionTimestamp) {
      if (!w.terminated) {
        if (!w.isTerminating) {
          this.o.log.info({ pod: key, graceSeconds: graceMsOf(pod) / 1000 }, 'pod is terminating; stopping its containers');
          void w.terminate(graceMsOf(pod));
        }
        await this.writeStatus(w, pod);
        return;
      }
      await this.writeStatus(w, pod);
      return this.finishDeletion(pod);
    }
    if (terminalInApi && !w.override) {
      // Finished (or failed by someone else, e.g. pod GC): nothing restarts; stop anything left.
      w.pod = pod;
      if (w.hasRunning() && !w.isTerminating) void w.terminate(graceMsOf(pod));
      return;
    }
    w.sync(pod);
    await this.writeStatus(w, pod);
  }

  private async writeStatus(w: PodWorker, pod: Pod): Promise<void> {
    const snap = w.snapshot();
    const now = this.o.clock.now();
    const status = buildPodStatus({
      pod,
      phase: snap.phase,
      containers: snap.containers,
      initContainers: snap.initContainers,
      initIncomplete: snap.initIncomplete,
      hostIP: this.o.nodeIP,
      podIP: this.podIP(pod),
      startTime: w.startTime,
      now,
      ...(snap.reason ? { reason: snap.reason } : {}),
      ...(snap.message ? { message: snap.message } : {}),
      ...(snap.condition ? { extraConditions: [snap.condition] } : {}),
    });
    const want = statusFingerprint(status);
    const have = statusFingerprint(pod.status);
    const last = this.lastWritten.get(w.uid);
    if (want === have) return;
    if (last && last.sent === want) {
      // The API normalised what we sent: writing it again would change nothing.
      if (last.stored === have) return;
      // The pod in hand is one a write was computed from, or the echo of an earlier write of ours
      // (a pod starting writes waiting, then running, faster than the watch shows the first): the
      // watch has not brought the last write's echo yet, and the status is already there. Once
      // the pod moved on otherwise (or a while passed), a status that still differs was changed
      // by someone else and is written again; the queue looks again when the wait is over, as
      // nothing else may bring the pod back.
      const waited = now - last.at;
      const rv = pod.metadata.resourceVersion;
      if (rv !== undefined && last.stale.includes(rv) && waited < STATUS_ECHO_WAIT_MS) {
        this.queue.addAfter(w.key, STATUS_ECHO_WAIT_MS - waited);
        return;
      }
    }
    try {
      const updated = await this.o.api.patch<Pod>(`${podPath(w.namespace, w.name)}/status`, statusPatch(status, pod.status), 'merge');
      const stale = [...(last?.stale ?? []), pod.metadata.resourceVersion, updated.metadata.resourceVersion].filter((v): v is string => v !== undefined).slice(-STALE_VERSIONS);
      this.lastWritten.set(w.uid, { sent: want, stored: statusFingerprint(updated.status), stale, at: now });
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
  }

  /** Upstream's last step of graceful deletion: the node removes the pod with grace 0. */
  private async finishDeletion(pod: Pod): Promise<void> {
    try {
      await this.o.api.delete(podPath(pod.metadata.namespace ?? 'default', pod.metadata.name!), { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } });
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
  }

  private async reject(pod: Pod): Promise<void> {
    const t = rfc3339(this.o.clock.now());
    try {
      await this.o.api.patch(
        `${podPath(pod.metadata.namespace ?? 'default', pod.metadata.name!)}/status`,
        { status: { phase: 'Failed', reason: 'NodeShutdown', message: 'Pod was rejected as the node is shutting down.', startTime: t } },
        'merge',
      );
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  /**
   * Node shutdown (N6): stop every pod within its grace period; each ends Failed with reason
   * Terminated and a DisruptionTarget condition, as the kubelet's graceful node shutdown reports.
   */
  async terminateAll(override: TerminalOverride | undefined, deadlineMs: number): Promise<void> {
    this.stopAdmitting();
    const ws = [...this.workers.values()].filter((w) => !w.terminated || w.hasRunning());
    await Promise.all(
      ws.map(async (w) => {
        await w.terminate(graceMsOf(w.pod), override);
        if (!override) return;
        // Best effort within the deadline: the API may be unreachable (the pods are stopped regardless).
        for (let i = 0; i < 5 && this.o.clock.now() < deadlineMs; i++) {
          try {
            const pod = await this.o.api.get<Pod>(podPath(w.namespace, w.name));
            if (pod.metadata.uid !== w.uid) return;
            await this.writeStatus(w, pod);
            return;
          } catch (e) {
            if (isNotFound(e)) return;
            await this.o.clock.sleep(200).catch(() => {});
          }
        }
      }),
    );
  }

  /**
   * The whole cluster stops (N6a): every pod's containers stop within its grace period, and the
   * API hears nothing of it — the pods stay Running there for the next start to resume.
   */
  async powerOff(): Promise<void> {
    this.stopAdmitting();
    await Promise.all([...this.workers.values()].filter((w) => !w.terminated).map((w) => w.powerOff(graceMsOf(w.pod))));
  }

  /**
   * Where in-cluster clients find the API (KUBERNETES_SERVICE_HOST/PORT, as the kubelet sets them).
   * The kubelet names the `kubernetes` Service's cluster IP; nothing routes cluster IPs in skiff
   * yet, so these name the API server this agent uses, which pods reach over the node's network.
   */
  private apiServerEnv(): Record<string, string> {
    const url = this.o.apiServer?.();
    if (!url) return {};
    const u = new URL(url);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    const port = u.port || '443';
    const hostPort = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    return {
      KUBERNETES_SERVICE_HOST: host,
      KUBERNETES_SERVICE_PORT: port,
      KUBERNETES_SERVICE_PORT_HTTPS: port,
      KUBERNETES_PORT: `tcp://${hostPort}`,
      KUBERNETES_PORT_443_TCP: `tcp://${hostPort}`,
      KUBERNETES_PORT_443_TCP_PROTO: 'tcp',
      KUBERNETES_PORT_443_TCP_ADDR: host,
      KUBERNETES_PORT_443_TCP_PORT: port,
    };
  }

  /** Env for a container: plain values, fieldRef, configMap/secret refs and envFrom, read through the API. */
  async resolveEnv(pod: Pod, c: Container): Promise<Record<string, string>> {
    // Host processes need a PATH and are told their pod's name; an image brings its own environment.
    const env: Record<string, string> = this.o.runtime.images ? this.apiServerEnv() : { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', HOSTNAME: pod.metadata.name ?? '' };
    const ns = pod.metadata.namespace ?? 'default';
    const cache = new Map<string, Record<string, string> | undefined>();
    const fetchData = async (kind: ConfigKind, name: string, optional: boolean): Promise<Record<string, string> | undefined> => {
      const k = `${kind}/${name}`;
      if (cache.has(k)) return cache.get(k);
      let bytes: Map<string, Buffer> | undefined;
      try {
        bytes = await readConfigData(this.o.api, ns, kind, name);
      } catch (e) {
        throw new CreateContainerError('CreateContainerConfigError', `cannot read ${kindWord(kind)} "${name}": ${errorText(e)}`);
      }
      if (!bytes && !optional) throw new CreateContainerError('CreateContainerConfigError', `${kindWord(kind)} "${name}" not found`);
      const data = bytes ? Object.fromEntries([...bytes].map(([key, v]) => [key, v.toString('utf8')])) : undefined;
      cache.set(k, data);
      return data;
    };
    const envFrom = (c as unknown as { envFrom?: unknown }).envFrom;
    for (const ef of Array.isArray(envFrom) ? (envFrom as Record<string, unknown>[]) : []) {
      const prefix = typeof ef.prefix === 'string' ? ef.prefix : '';
      const cm = ef.configMapRef as { name?: string; optional?: boolean } | undefined;
      const sec = ef.secretRef as { name?: string; optional?: boolean } | undefined;
      const data = cm?.name ? await fetchData('configmaps', cm.name, cm.optional === true) : sec?.name ? await fetchData('secrets', sec.name, sec.optional === true) : undefined;
      for (const [k, v] of Object.entries(data ?? {})) env[prefix + k] = v;
    }
    for (const e of Array.isArray(c.env) ? c.env : []) {
      if (!e || typeof e.name !== 'string') continue;
      if (e.valueFrom) {
        const vf = e.valueFrom as Record<string, Record<string, unknown> | undefined>;
        if (vf.fieldRef) env[e.name] = fieldRefValue(pod, String(vf.fieldRef.fieldPath ?? ''), this.fieldRefs(pod));
        else if (vf.configMapKeyRef || vf.secretKeyRef) {
          const ref = (vf.configMapKeyRef ?? vf.secretKeyRef)!;
          const kind = vf.configMapKeyRef ? 'configmaps' : 'secrets';
          const data = await fetchData(kind, String(ref.name ?? ''), ref.optional === true);
          const v = data?.[String(ref.key ?? '')];
          if (v !== undefined) env[e.name] = v;
          else if (ref.optional !== true && data) throw new CreateContainerError('CreateContainerConfigError', `couldn't find key ${String(ref.key)} in ${kind === 'configmaps' ? 'ConfigMap' : 'Secret'} ${ns}/${String(ref.name)}`);
        } else if (vf.resourceFieldRef) {
          const ref = vf.resourceFieldRef;
          // containerName points at another container of the pod; by default it is this one.
          const named = typeof ref.containerName === 'string' && ref.containerName ? [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((x) => x.name === ref.containerName) : c;
          const v = resourceFieldValue(named?.resources, String(ref.resource ?? ''), ref.divisor, this.o.allocatable?.() ?? {});
          if (v !== undefined) env[e.name] = v;
        }
      } else {
        env[e.name] = e.value === undefined || e.value === null ? '' : String(e.value);
      }
    }
    if (!this.o.runtime.images && this.volumes) Object.assign(env, this.volumes.claimEnv(pod, c));
    return env;
  }
}
