// The containerd runtime: pods run as OCI containers through the Container Runtime Interface, the
// way the kubelet runs them. Each pod gets a sandbox (its network namespace and IP, its cgroup under
// this node's cgroup root), each container instance a CRI container whose output containerd writes
// to the instance's log file in the CRI log format. Containers outlive the agent: a restarted agent
// adopts the ones its pod records name and removes whatever else carries its node label.
//
// Exits are found by relisting (as the kubelet's PLEG does): one ListContainers per interval while
// anything runs, then ContainerStatus for each container that has ended.
import { mkdirSync, statfsSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import type { Pod } from '../../api/kinds/pod.js';
import { CriClient, CriError } from '../../cri/client.js';
import type { AuthConfig, ContainerStatus, Image, PodSandboxConfig } from '../../cri/messages.js';
import type { Clock, Timer } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import { errorText } from '../../util/error-text.js';
import { CONTAINER_NAME_LABEL, NODE_LABEL, POD_UID_LABEL, containerConfig, pullPolicy, sandboxConfig } from './cri-config.js';
import { CreateContainerError, type ContainerLaunch, type ExitInfo, type InstanceRecord, type InstanceUsage, type KnownInstances, type Runtime, type RunningContainer, type StreamRequest, type UsageQuery } from './runtime.js';
import { status as grpcStatus } from '@grpc/grpc-js';
import type { ImageStore } from '../image-gc.js';
import type { PodDnsConfig } from '../../dns/resolv-conf.js';

export const DEFAULT_CRI_ENDPOINT = 'unix:///run/containerd/containerd.sock';

export interface ContainerdRuntimeOptions {
  clock: Clock;
  log: Logger;
  nodeName: string;
  endpoint: string;
  /** cgroupfs path under which each pod's cgroup is made (one per node, so nodes sharing a machine stay apart). */
  cgroupRoot: string;
  /** Where each pod's logs live: the sandbox's CRI log directory. */
  podLogDir(podUid: string): string;
  /** Registry credentials for the pod's imagePullSecrets, by registry host. */
  pullAuth?(pod: Pod, image: string): Promise<AuthConfig | undefined>;
  /** The pod's resolv.conf (the kubelet's GetPodDNS), handed to the sandbox. */
  dns?(pod: Pod): PodDnsConfig;
  relistMs?: number;
  client?: CriClient;
}

interface Sandbox {
  id: string;
  config: PodSandboxConfig;
}

interface Tracked {
  resolve(info: ExitInfo): void;
  done: boolean;
}

/** How status names an image, as the kubelet does: its repo digest when it has one, else its id. */
function imageRefOf(i: Image): string {
  return i.repoDigests[0] ?? i.id;
}

/** ns since the epoch (int64 as a decimal string) → ms; 0 when unset. */
function nsToMs(ns: string | undefined): number {
  if (!ns || ns === '0') return 0;
  return Number(BigInt(ns) / 1_000_000n);
}

/** How a CRI container status reads as an exit (containerd says OOMKilled, Completed, Error, ...). */
export function exitFromStatus(s: ContainerStatus, now: number): ExitInfo {
  const reason = s.reason || (s.exitCode === 0 ? 'Completed' : 'Error');
  const info: ExitInfo = { exitCode: s.exitCode, reason, finishedAt: nsToMs(s.finishedAt) || now };
  if (s.message) info.message = s.message;
  if (s.exitCode > 128 && s.exitCode < 160) info.signal = s.exitCode - 128;
  return info;
}

/**
 * At most `limit` of the runtime's heavy calls (sandbox, container create, start) at once, a pod's
 * container before another pod's sandbox. A burst of pods then starts pod after pod, the first
 * Running early, instead of all sharing the machine and all finishing at the end; the runtime's
 * throughput is the same.
 */
class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly first: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  /** `finishing`: the call finishes a pod already begun (its container), served before new pods' sandboxes. */
  async run<T>(fn: () => Promise<T>, finishing = false): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((r) => (finishing ? this.first : this.waiting).push(r));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.first.shift() ?? this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/** Heavy runtime calls in flight: enough to keep two cores busy while containerd waits on disks and the CNI plugins. */
const RUNTIME_CALLS_IN_FLIGHT = 4;

export class ContainerdRuntime implements Runtime {
  readonly name = 'containerd' as const;
  readonly idScheme = 'containerd';
  readonly logFormat = 'cri' as const;
  readonly images = true;
  readonly cri: CriClient;
  private readonly sandboxes = new Map<string, Promise<Sandbox>>();
  private readonly ips = new Map<string, string>();
  private readonly tracked = new Map<string, Tracked>();
  private relistTimer?: Timer;
  private relisting = false;
  private readonly gate = new Gate(RUNTIME_CALLS_IN_FLIGHT);
  private closed = false;

  constructor(private readonly o: ContainerdRuntimeOptions) {
    this.cri = o.client ?? new CriClient({ endpoint: o.endpoint });
  }

  /** Says which runtime answers (for the Node's containerRuntimeVersion); throws when none does. */
  async version(): Promise<string> {
    const v = await this.cri.version();
    return `${v.runtimeName}://${v.runtimeVersion}`;
  }

  podIP(podUid: string): string | undefined {
    return this.ips.get(podUid);
  }

  private nodeLabels(extra: Record<string, string> = {}): Record<string, string> {
    return { [NODE_LABEL]: this.o.nodeName, ...extra };
  }

  /** The pod's ready sandbox, made when it has none (one at a time per pod). */
  private sandbox(pod: Pod): Promise<Sandbox> {
    const uid = pod.metadata.uid!;
    let p = this.sandboxes.get(uid);
    if (!p) {
      p = this.findOrRunSandbox(pod);
      this.sandboxes.set(uid, p);
      p.catch(() => this.sandboxes.delete(uid));
    }
    return p;
  }

  private async findOrRunSandbox(pod: Pod): Promise<Sandbox> {
    const uid = pod.metadata.uid!;
    const all = await this.cri.listPodSandbox({ labels: this.nodeLabels({ [POD_UID_LABEL]: uid }) });
    const ready = all.filter((s) => s.state === 'SANDBOX_READY').sort((a, b) => (BigInt(b.createdAt) > BigInt(a.createdAt) ? 1 : -1));
    const attempt = ready[0] ? (ready[0].metadata?.attempt ?? 0) : all.reduce((m, s) => Math.max(m, (s.metadata?.attempt ?? 0) + 1), 0);
    const config = sandboxConfig({ pod, nodeName: this.o.nodeName, logDirectory: this.o.podLogDir(uid), cgroupRoot: this.o.cgroupRoot, attempt });
    const dns = this.o.dns?.(pod);
    if (dns) config.dnsConfig = dns;
    let id = ready[0]?.id;
    if (!id) {
      mkdirSync(config.logDirectory!, { recursive: true });
      try {
        id = await this.gate.run(() => this.cri.runPodSandbox(config));
      } catch (e) {
        throw new CreateContainerError('CreatePodSandboxError', `Failed to create pod sandbox: ${e instanceof CriError ? e.details : errorText(e)}`);
      }
      this.o.log.info({ pod: `${config.metadata.namespace}/${config.metadata.name}`, sandbox: id.slice(0, 12) }, 'pod sandbox started');
    }
    await this.learnIp(uid, id);
    return { id, config };
  }

  /** The pod's ready sandbox in the runtime, if it has one. */
  private async readySandbox(podUid: string): Promise<string | undefined> {
    return (await this.cri.listPodSandbox({ labels: this.nodeLabels({ [POD_UID_LABEL]: podUid }), state: 'SANDBOX_READY' }))[0]?.id;
  }

  /** Remembers the sandbox's IP as the pod's. */
  private async learnIp(podUid: string, sandboxId: string): Promise<void> {
    const ip = (await this.cri.podSandboxStatus(sandboxId)).network?.ip;
    if (ip) this.ips.set(podUid, ip);
  }

  /** The image on the node, pulled as its policy says; answers how status names it (a repo digest, else its id). */
  private async ensureImage(l: ContainerLaunch): Promise<string | undefined> {
    const c = l.container!;
    const image = c.image ?? '';
    if (!image.trim()) throw new CreateContainerError('InvalidImageName', `Failed to apply default image tag "${image}": couldn't parse image name`);
    const policy = pullPolicy(c);
    const present = policy === 'Always' ? undefined : await this.cri.imageStatus(image);
    if (present) return imageRefOf(present);
    if (policy === 'Never') {
      throw new CreateContainerError('ErrImageNeverPull', `Container image "${image}" is not present with pull policy of Never`);
    }
    try {
      const auth = await this.o.pullAuth?.(l.pod!, image);
      await this.cri.pullImage(image, auth);
    } catch (e) {
      // With Always, an image already on the node still runs when the registry cannot be reached.
      const stale = policy === 'Always' ? await this.cri.imageStatus(image).catch(() => undefined) : undefined;
      if (stale) return imageRefOf(stale);
      throw new CreateContainerError('ErrImagePull', `failed to pull image "${image}": ${e instanceof CriError ? e.details : errorText(e)}`);
    }
    const pulled = await this.cri.imageStatus(image).catch(() => undefined);
    return pulled ? imageRefOf(pulled) : undefined;
  }

  async prepare(pod: Pod): Promise<void> {
    if (pod.metadata.uid) await this.sandbox(pod);
  }

  async start(l: ContainerLaunch): Promise<RunningContainer> {
    if (!l.pod?.metadata.uid || !l.container) throw new CreateContainerError('CreateContainerConfigError', 'the containerd runtime needs the pod and container spec');
    const sandbox = await this.sandbox(l.pod);
    const imageRef = await this.ensureImage(l);
    // A first instance has none before it (what an earlier agent left, reapOrphans removed).
    if (l.instance > 0) await this.removeDeadInstances(l.podUid, l.containerName);
    mkdirSync(dirname(l.logPath), { recursive: true });
    const config = containerConfig({
      pod: l.pod,
      container: l.container,
      nodeName: this.o.nodeName,
      attempt: l.instance,
      command: l.command,
      args: l.args,
      env: l.env,
      logPath: relative(sandbox.config.logDirectory!, l.logPath),
      mounts: l.mounts ?? [],
    });
    let id: string;
    try {
      id = await this.gate.run(() => this.cri.createContainer(sandbox.id, config, sandbox.config), true);
    } catch (e) {
      throw new CreateContainerError('CreateContainerError', e instanceof CriError ? e.details : errorText(e));
    }
    const startedAt = this.o.clock.now();
    const record: InstanceRecord = { id, startedAt, logPath: l.logPath, ...(imageRef ? { imageRef } : {}) };
    const exited = this.track(id);
    try {
      await this.gate.run(() => this.cri.startContainer(id), true);
    } catch (e) {
      // The runtime records why (exec format, missing binary): report it as the instance's end.
      const status = await this.cri.containerStatus(id).catch(() => undefined);
      const message = status?.message || (e instanceof CriError ? e.details : errorText(e));
      this.settle(id, { exitCode: status?.exitCode || 128, reason: 'StartError', message, finishedAt: this.o.clock.now() });
      return { record, exited };
    }
    const status = await this.cri.containerStatus(id).catch(() => undefined);
    if (status) record.startedAt = nsToMs(status.startedAt) || startedAt;
    this.scheduleRelist();
    return { record, exited };
  }

  /** Keeps the last ended instance of a container (its status, `--previous` reads our own log copy) and removes older ones. */
  private async removeDeadInstances(podUid: string, name: string): Promise<void> {
    const all = await this.cri.listContainers({ labels: this.nodeLabels({ [POD_UID_LABEL]: podUid, [CONTAINER_NAME_LABEL]: name }) });
    const dead = all.filter((c) => c.state === 'CONTAINER_EXITED' && !this.tracked.has(c.id)).sort((a, b) => (BigInt(b.createdAt) > BigInt(a.createdAt) ? 1 : -1));
    for (const c of dead.slice(1)) await this.cri.removeContainer(c.id).catch(() => undefined);
  }

  private track(id: string): Promise<ExitInfo> {
    return new Promise<ExitInfo>((resolve) => {
      this.tracked.set(id, { resolve, done: false });
    });
  }

  private settle(id: string, info: ExitInfo): void {
    const t = this.tracked.get(id);
    if (!t || t.done) return;
    t.done = true;
    this.tracked.delete(id);
    t.resolve(info);
  }

  private scheduleRelist(): void {
    if (this.relistTimer || this.closed || this.tracked.size === 0) return;
    this.relistTimer = this.o.clock.setTimeout(() => {
      this.relistTimer = undefined;
      void this.relist().finally(() => this.scheduleRelist());
    }, this.o.relistMs ?? 1000);
  }

  /** One relist: every tracked container that has ended is settled with its exit. */
  async relist(): Promise<void> {
    if (this.relisting || this.tracked.size === 0) return;
    this.relisting = true;
    try {
      const states = new Map<string, string>();
      for (const c of await this.cri.listContainers({ labels: this.nodeLabels() })) states.set(c.id, c.state);
      for (const id of [...this.tracked.keys()]) {
        const state = states.get(id);
        if (state === 'CONTAINER_RUNNING' || state === 'CONTAINER_CREATED') continue;
        await this.settleFromRuntime(id);
      }
    } catch (e) {
      this.o.log.debug({ err: errorText(e) }, 'container relist failed; retrying');
    } finally {
      this.relisting = false;
    }
  }

  private async settleFromRuntime(id: string): Promise<void> {
    const now = this.o.clock.now();
    try {
      const s = await this.cri.containerStatus(id);
      if (s.state === 'CONTAINER_RUNNING' || s.state === 'CONTAINER_CREATED') return;
      this.settle(id, exitFromStatus(s, now));
    } catch (e) {
      if (!(e instanceof CriError && e.notFound)) throw e;
      this.settle(id, { exitCode: 137, reason: 'ContainerStatusUnknown', message: 'The container could not be located when the pod was terminated', finishedAt: now });
    }
  }

  /** An exec probe: the command runs in the container (ExecSync); output as the kubelet reports it. */
  async exec(instanceId: string, argv: string[], timeoutMs: number): Promise<{ ok: boolean; output?: string }> {
    try {
      const r = await this.cri.execSync(instanceId, argv, Math.max(1, Math.ceil(timeoutMs / 1000)));
      if (r.exitCode === 0) return { ok: true };
      const output = Buffer.concat([r.stdout, r.stderr]).toString('utf8').trim().slice(0, 10 * 1024);
      return { ok: false, output: output || `command ${JSON.stringify(argv.join(' '))} exited with code ${r.exitCode}` };
    } catch (e) {
      if (e instanceof CriError && e.code === grpcStatus.DEADLINE_EXCEEDED) return { ok: false, output: `command ${JSON.stringify(argv.join(' '))} timed out` };
      return { ok: false, output: e instanceof CriError ? e.details : errorText(e) };
    }
  }

  readonly imageStore: ImageStore = {
    usage: async () => {
      const fs = (await this.cri.imageFsInfo())[0];
      if (!fs?.mountpoint) return undefined;
      // As the kubelet reads it: the whole filesystem's use, not only the images' share of it.
      const st = statfsSync(fs.mountpoint);
      const capacityBytes = st.blocks * st.bsize;
      return { usedBytes: capacityBytes - st.bavail * st.bsize, capacityBytes };
    },
    images: async () => (await this.cri.listImages()).map((i) => ({ id: i.id, tags: i.repoTags, size: Number(i.size) })),
    // Every container of the runtime, whoever made it: an image another node's pod uses stays.
    inUse: async () => new Set((await this.cri.listContainers()).map((c) => c.imageRef)),
    pinned: async () => {
      const pause = await this.cri.sandboxImage();
      return pause ? [pause] : [];
    },
    remove: (id) => this.cri.removeImage(id),
  };

  async setPodCidr(cidr: string): Promise<void> {
    await this.cri.updatePodCidr(cidr);
  }

  /** As the kubelet words it: "container runtime network not ready: NetworkReady=false reason:... message:...". */
  async health(): Promise<string | undefined> {
    const conditions = await this.cri.status();
    for (const [type, what] of [
      ['RuntimeReady', 'container runtime not ready'],
      ['NetworkReady', 'container runtime network not ready'],
    ] as const) {
      const c = conditions.find((x) => x.type === type);
      if (c && !c.status) return `${what}: ${type}=false reason:${c.reason} message:${c.message}`;
    }
    return undefined;
  }

  async streamUrl(req: StreamRequest): Promise<string> {
    if (req.kind === 'exec') return this.cri.exec(req.instanceId, req.command, req.streams);
    if (req.kind === 'attach') return this.cri.attach(req.instanceId, req.streams);
    const sandbox = await this.readySandbox(req.podUid);
    if (!sandbox) throw new CriError('PortForward', grpcStatus.NOT_FOUND, 'the pod has no running sandbox');
    return this.cri.portForward(sandbox, req.ports);
  }

  async stop(c: RunningContainer, graceMs: number): Promise<ExitInfo> {
    const id = c.record.id;
    if (this.tracked.has(id)) {
      try {
        await this.cri.stopContainer(id, Math.ceil(Math.max(0, graceMs) / 1000));
      } catch (e) {
        if (!(e instanceof CriError && e.notFound)) this.o.log.warn({ container: id.slice(0, 12), err: errorText(e) }, 'could not stop a container');
      }
      await this.settleFromRuntime(id).catch(() => undefined);
    }
    return c.exited;
  }

  async adopt(record: InstanceRecord): Promise<RunningContainer | undefined> {
    let s: ContainerStatus;
    try {
      s = await this.cri.containerStatus(record.id);
    } catch (e) {
      if (e instanceof CriError && e.notFound) return undefined;
      throw e;
    }
    const podUid = s.labels[POD_UID_LABEL];
    // After a restart: the pod's IP from its ready sandbox.
    const sandbox = podUid && !this.ips.has(podUid) ? await this.readySandbox(podUid) : undefined;
    if (podUid && sandbox) await this.learnIp(podUid, sandbox);
    const exited = this.track(record.id);
    if (s.state === 'CONTAINER_RUNNING' || s.state === 'CONTAINER_CREATED') this.scheduleRelist();
    else this.settle(record.id, exitFromStatus(s, this.o.clock.now()));
    return { record, exited };
  }

  async reapOrphans(known: KnownInstances): Promise<number> {
    let removed = 0;
    for (const c of await this.cri.listContainers({ labels: this.nodeLabels() })) {
      const uid = c.labels[POD_UID_LABEL] ?? '';
      // A known pod's ended instances stay: the last one of each container backs its status.
      if (known.ids.has(c.id) || (known.podUids.has(uid) && c.state === 'CONTAINER_EXITED')) continue;
      this.o.log.warn({ container: c.id.slice(0, 12), pod: `${c.labels['io.kubernetes.pod.namespace']}/${c.labels['io.kubernetes.pod.name']}`, name: c.metadata?.name }, 'removing an orphaned container left by an earlier agent');
      await this.cri.stopContainer(c.id, 0).catch(() => undefined);
      await this.cri.removeContainer(c.id).catch(() => undefined);
      removed++;
    }
    for (const s of await this.cri.listPodSandbox({ labels: this.nodeLabels() })) {
      if (known.podUids.has(s.labels[POD_UID_LABEL] ?? '')) continue;
      await this.cri.stopPodSandbox(s.id).catch(() => undefined);
      await this.cri.removePodSandbox(s.id).catch(() => undefined);
    }
    return removed;
  }

  async stopPod(podUid: string): Promise<void> {
    this.sandboxes.delete(podUid);
    this.ips.delete(podUid);
    for (const s of await this.cri.listPodSandbox({ labels: this.nodeLabels({ [POD_UID_LABEL]: podUid }) })) {
      if (s.state === 'SANDBOX_READY') await this.cri.stopPodSandbox(s.id);
    }
  }

  async removePod(podUid: string): Promise<void> {
    this.sandboxes.delete(podUid);
    this.ips.delete(podUid);
    for (const s of await this.cri.listPodSandbox({ labels: this.nodeLabels({ [POD_UID_LABEL]: podUid }) })) {
      await this.cri.stopPodSandbox(s.id).catch(() => undefined);
      await this.cri.removePodSandbox(s.id);
    }
  }

  /** Each container's cgroup figures as containerd reads them (one ListContainerStats for the node's containers). */
  async usage(instances: readonly UsageQuery[]): Promise<Map<string, InstanceUsage>> {
    const wanted = new Set(instances.map((q) => q.id));
    const out = new Map<string, InstanceUsage>();
    if (wanted.size === 0) return out;
    const n = (v: { value: string } | undefined): number | undefined => (v === undefined ? undefined : Number(v.value));
    for (const s of await this.cri.listContainerStats({ labels: this.nodeLabels() })) {
      const id = s.attributes?.id;
      if (!id || !wanted.has(id) || !s.cpu || !s.memory) continue;
      const cpu = n(s.cpu.usageCoreNanoSeconds);
      const workingSet = n(s.memory.workingSetBytes);
      if (cpu === undefined || workingSet === undefined) continue;
      const usage: InstanceUsage = { timestampMs: nsToMs(s.cpu.timestamp) || this.o.clock.now(), cpuCoreNanoSeconds: cpu, memoryWorkingSetBytes: workingSet };
      const used = n(s.memory.usageBytes);
      const rss = n(s.memory.rssBytes);
      if (used !== undefined) usage.memoryUsageBytes = used;
      if (rss !== undefined) usage.rssBytes = rss;
      out.set(id, usage);
    }
    return out;
  }

  close(): void {
    this.closed = true;
    this.relistTimer?.cancel();
    this.cri.close();
  }
}
