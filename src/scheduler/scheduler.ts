// The scheduler (`default-scheduler`): assigns each pending pod to a node through pods/binding.
// It runs inside `skiff server` as one of the controllers, so only the process holding the
// controller Lease schedules.
//
// Decisions are made one pod at a time against an in-memory cache of nodes and the pods on them;
// each chosen node is *assumed* at once and the binding sent in the background (up to
// `parallelBinds` in flight), so the decision loop never waits for the API. A pod that fits nowhere
// gets PodScheduled=False with upstream's message and a FailedScheduling event, and is parked until
// the cluster changes in a way that may let it fit.
import { rfc3339 } from '../util/time.js';
import type { Node } from '../api/kinds/node.js';
import { isTerminal, type Pod, type PodCondition } from '../api/kinds/pod.js';
import { isStatusError } from '../api/errors.js';
import type { Informer } from '../client/informer.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import type { EventRecorder } from '../controller-kit/events.js';
import { PATHS } from '../controller-kit/informers.js';
import type { Timer } from '../util/clock.js';
import { SchedulerCache } from './cache.js';
import { Decider, type ExtraFilter } from './decide.js';
import { podInfoOf, podKey, type PodInfo } from './pod-info.js';
import { fitErrorMessage, NO_NODES_MESSAGE, noPreemptionMessage } from './fit-error.js';
import { findPreemption, type BudgetView, type Candidate } from './preemption.js';
import type { KubeObject } from '../api/types.js';
import { SELECTED_NODE_ANNOTATION } from '../api/kinds/volume-provisioning.js';
import { DEFAULT_QUEUE_OPTIONS, SchedulingQueue, type QueuedPod, type QueueOptions } from './queue.js';
import { Diagnosis } from './fit-error.js';
import { BIND_TIMEOUT_MS, preBindWrite, VolumeView, type DelayedClaim } from './volume-binding.js';
import { objectKeyOf } from '../client/informer.js';

export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

export interface SchedulerOptions {
  /** Pods whose spec.schedulerName is this are ours. */
  schedulerName: string;
  /**
   * Bindings in flight at once; decisions stay sequential. Upstream binds each pod in a goroutine
   * of its own, bounded only by its client's rate: a small cap here made the binding rate
   * cap/latency (16 at 130 ms under load: 120 pods/s) while the server had time to spare.
   */
  parallelBinds: number;
  /** Status patches (PodScheduled=False) in flight at once, so failures never crowd out bindings. */
  parallelStatusWrites: number;
  /** Upstream's percentageOfNodesToScore; 0 picks it by cluster size as upstream does. */
  percentageOfNodesToScore: number;
  queue: QueueOptions;
  /** How often long-parked pods and stale assumptions are looked at. */
  housekeepingIntervalMs: number;
  /** An assumed pod whose binding succeeded but never showed up bound is dropped after this. */
  assumedTtlMs: number;
  /** The same FailedScheduling event for a pod is repeated (counted) at most this often. */
  failedEventIntervalMs: number;
}

export const DEFAULT_SCHEDULER_OPTIONS: SchedulerOptions = {
  schedulerName: DEFAULT_SCHEDULER_NAME,
  parallelBinds: 128,
  parallelStatusWrites: 4,
  percentageOfNodesToScore: 0,
  queue: DEFAULT_QUEUE_OPTIONS,
  housekeepingIntervalMs: 30_000,
  assumedTtlMs: 30_000,
  failedEventIntervalMs: 60_000,
};

/** Running totals across leadership terms (for tests, benchmarks and metrics). */
export interface SchedulerCounters {
  attempts: number;
  scheduled: number;
  unschedulable: number;
  bindErrors: number;
}

/** Node changes that can make a parked pod fit (or change why it does not). */
export function nodeChangeMatters(old: Node, cur: Node): boolean {
  if ((old.spec?.unschedulable === true) !== (cur.spec?.unschedulable === true)) return true;
  const ready = (n: Node) => n.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  if (ready(old) !== ready(cur)) return true;
  if (JSON.stringify(old.spec?.taints ?? []) !== JSON.stringify(cur.spec?.taints ?? [])) return true;
  if (JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(cur.metadata.labels ?? {})) return true;
  return JSON.stringify(old.status?.allocatable ?? old.status?.capacity ?? {}) !== JSON.stringify(cur.status?.allocatable ?? cur.status?.capacity ?? {});
}

/**
 * A claim, volume or class edit that may let a parked pod's volumes fit: its spec, its phase, its
 * deletion or the node selected for it. Status and bookkeeping writes (the provisioner's
 * annotations, a class's default marker) do not, and claims and volumes see many of them.
 */
export function storageChangeMatters(old: KubeObject, cur: KubeObject): boolean {
  const phase = (o: KubeObject) => (o.status as { phase?: string } | undefined)?.phase;
  if (phase(old) !== phase(cur) || !old.metadata.deletionTimestamp !== !cur.metadata.deletionTimestamp) return true;
  if (old.metadata.annotations?.[SELECTED_NODE_ANNOTATION] !== cur.metadata.annotations?.[SELECTED_NODE_ANNOTATION]) return true;
  return JSON.stringify(old.spec) !== JSON.stringify(cur.spec);
}

/** A pod edit that may change where it fits (status-only and metadata bookkeeping changes do not). */
function podSpecChanged(old: Pod, cur: Pod): boolean {
  return JSON.stringify(old.spec) !== JSON.stringify(cur.spec) || JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(cur.metadata.labels ?? {});
}

/** A counting semaphore: async acquire, sync release. */
class Slots {
  private waiters: (() => void)[] = [];
  constructor(private free: number) {}
  acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((r) => this.waiters.push(r));
  }
  release(): void {
    const w = this.waiters.shift();
    if (w) w();
    else this.free++;
  }
}

export class SchedulerController implements Controller {
  readonly name = 'scheduler';
  readonly counters: SchedulerCounters = { attempts: 0, scheduled: 0, unschedulable: 0, bindErrors: 0 };
  private readonly opts: SchedulerOptions;

  constructor(opts: Partial<SchedulerOptions> = {}) {
    this.opts = { ...DEFAULT_SCHEDULER_OPTIONS, ...opts };
  }

  start(ctx: ControllerContext, signal: AbortSignal): void {
    // Fresh state per leadership term, like the informers the manager hands us.
    new SchedulingRun(ctx, this.opts, this.counters).start(signal);
  }
}

/** One leadership term of the scheduler. */
class SchedulingRun {
  private readonly cache = new SchedulerCache();
  private readonly queue: SchedulingQueue;
  private readonly nodes: Informer<Node>;
  private readonly pods: Informer<Pod>;
  private readonly budgets: Informer<KubeObject>;
  private readonly claims: Informer<KubeObject>;
  private readonly volumes: Informer<KubeObject>;
  private readonly classes: Informer<KubeObject>;
  private readonly volumeView: VolumeView;
  /** Bindings waiting for their pods' claims to be Bound: each looks again when a claim changes. */
  private readonly claimWaiters = new Set<() => void>();
  /** Uids of unbound pods the decider holds a nomination for. */
  private readonly nominatedUids = new Set<string>();
  private readonly recorder: EventRecorder;
  private readonly binds: Slots;
  private readonly statusWrites: Slots;
  private readonly decider: Decider;
  /** Per pod uid: the last PodScheduled=False message written, so it is written once. */
  private readonly writtenCondition = new Map<string, string>();
  /** Per pod uid: the last FailedScheduling message and when it was recorded. */
  private readonly lastFailedEvent = new Map<string, { message: string; at: number }>();
  /** Per pod uid: the condition waiting for a status-write slot (the latest wins). */
  private readonly pendingConditions = new Map<string, { key: string; reason: string; message: string }>();
  private signal!: AbortSignal;
  private housekeepingTimer: Timer | undefined;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly opts: SchedulerOptions,
    private readonly counters: SchedulerCounters,
  ) {
    this.queue = new SchedulingQueue(ctx.clock, opts.queue);
    this.nodes = ctx.informers.for<Node>(PATHS.nodes);
    this.pods = ctx.informers.for<Pod>(PATHS.pods, { readOnly: true });
    this.budgets = ctx.informers.for<KubeObject>(PATHS.pdbs, { readOnly: true });
    this.claims = ctx.informers.for<KubeObject>(PATHS.persistentvolumeclaims, { readOnly: true });
    this.volumes = ctx.informers.for<KubeObject>(PATHS.persistentvolumes, { readOnly: true });
    this.classes = ctx.informers.for<KubeObject>(PATHS.storageclasses, { readOnly: true });
    this.volumeView = new VolumeView(this.claims, this.volumes, this.classes, this.nodes);
    this.recorder = ctx.recorder(opts.schedulerName);
    this.binds = new Slots(opts.parallelBinds);
    this.statusWrites = new Slots(opts.parallelStatusWrites);
    this.decider = new Decider(this.cache, opts.percentageOfNodesToScore);
  }

  start(signal: AbortSignal): void {
    this.signal = signal;
    signal.addEventListener(
      'abort',
      () => {
        this.queue.close();
        this.housekeepingTimer?.cancel();
      },
      { once: true },
    );
    this.nodes.addHandlers({
      add: (n) => {
        this.cache.setNode(n);
        this.queue.moveUnschedulable();
      },
      update: (old, n) => {
        this.cache.setNode(n);
        if (nodeChangeMatters(old, n)) this.queue.moveUnschedulable();
      },
      delete: (n) => this.cache.removeNode(n.metadata.name!),
    });
    this.pods.addHandlers({
      add: (p) => this.onPod(p),
      update: (old, p) => this.onPod(p, old),
      delete: (p) => this.onPodGone(p),
    });
    // A claim, volume or class that appears, goes or changes what scheduling reads may let a
    // parked pod's volumes fit; bindings waiting for a claim look at every change.
    const storageChanged = (matters: boolean) => {
      if (matters) this.queue.moveUnschedulable();
      for (const check of [...this.claimWaiters]) check();
    };
    for (const informer of [this.claims, this.volumes, this.classes]) {
      informer.addHandlers({ add: () => storageChanged(true), update: (old, cur) => storageChanged(storageChangeMatters(old, cur)), delete: () => storageChanged(true) });
    }
    const synced = [this.nodes, this.pods, this.budgets, this.claims, this.volumes, this.classes].map((i) => i.waitForSync());
    void Promise.all(synced).then(() => {
      if (signal.aborted) return;
      this.ctx.log.info({ nodes: this.cache.nodeList().length, pending: this.queue.stats.active }, 'scheduler started');
      this.housekeeping();
      return this.loop();
    });
  }

  private responsible(pod: Pod): boolean {
    const spec = pod.spec;
    return (
      !spec?.nodeName &&
      (spec?.schedulerName || DEFAULT_SCHEDULER_NAME) === this.opts.schedulerName &&
      !pod.metadata.deletionTimestamp &&
      !isTerminal(pod) &&
      !spec?.schedulingGates?.length
    );
  }

  /** `old` is the previous version on an update; a parked pod whose spec changed is retried. */
  private onPod(pod: Pod, old?: Pod): void {
    const key = podKey(pod);
    const uid = pod.metadata.uid ?? '';
    this.trackNomination(pod);
    if (isTerminal(pod)) {
      // A finished pod no longer holds its node's resources.
      if (this.cache.hasPod(uid)) {
        this.cache.removePod(uid);
        this.queue.moveUnschedulable(true);
      }
      this.queue.delete(key);
      return;
    }
    if (pod.spec?.nodeName) {
      this.cache.addOrUpdatePod(pod);
      this.queue.delete(key);
      this.forgetPod(uid);
      return;
    }
    if (this.responsible(pod)) {
      // Comparing specs costs a little, so only for the pods it matters for: parked ones.
      const changed = old !== undefined && this.queue.isUnschedulable(key) && podSpecChanged(old, pod);
      if (!this.cache.hasPod(uid)) this.queue.add(key, pod.spec?.priority ?? 0, changed);
      return;
    }
    this.queue.delete(key);
    if (pod.spec?.schedulingGates?.length && !pod.metadata.deletionTimestamp) {
      this.writeCondition(pod, 'SchedulingGated', 'Scheduling is blocked due to non-empty scheduling gates');
    }
  }

  /** Keeps the decider's nominations in step with the pods' status.nominatedNodeName. */
  private trackNomination(pod: Pod, gone = false): void {
    const uid = pod.metadata.uid ?? '';
    const node = !gone && !pod.spec?.nodeName && !isTerminal(pod) ? pod.status?.nominatedNodeName || undefined : undefined;
    if (node === undefined && !this.nominatedUids.has(uid)) return;
    this.decider.nominate(podInfoOf(pod), node);
    if (node === undefined) this.nominatedUids.delete(uid);
    else this.nominatedUids.add(uid);
  }

  private onPodGone(pod: Pod): void {
    const uid = pod.metadata.uid ?? '';
    this.trackNomination(pod, true);
    if (this.cache.hasPod(uid)) {
      this.cache.removePod(uid);
      this.queue.moveUnschedulable(true);
    }
    this.queue.delete(podKey(pod));
    this.forgetPod(uid);
  }

  private forgetPod(uid: string): void {
    this.writtenCondition.delete(uid);
    this.lastFailedEvent.delete(uid);
  }

  private housekeeping(): void {
    if (this.signal.aborted) return;
    this.queue.flushLongParked();
    for (const key of this.cache.expireAssumed(this.ctx.clock.now(), this.opts.assumedTtlMs)) {
      const pod = this.pods.get(key);
      if (pod) this.onPod(pod);
    }
    this.housekeepingTimer = this.ctx.clock.setTimeout(() => this.housekeeping(), this.opts.housekeepingIntervalMs);
  }

  private async loop(): Promise<void> {
    while (!this.signal.aborted) {
      // Take a binding slot before choosing, so the decision sees every earlier assumption.
      await this.binds.acquire();
      const qp = await this.queue.pop();
      if (!qp || this.signal.aborted) {
        this.binds.release();
        return;
      }
      let binding = false;
      try {
        binding = this.scheduleOne(qp);
      } catch (e) {
        this.ctx.log.error({ pod: qp.key, err: (e as Error).message }, 'scheduling attempt failed');
        this.queue.retryAfterError(qp);
      } finally {
        if (!binding) this.binds.release();
      }
    }
  }

  /** Decides for one pod; true when a binding was started (it releases the slot itself). */
  private scheduleOne(qp: QueuedPod): boolean {
    const pod = this.pods.get(qp.key);
    if (!pod || !this.responsible(pod) || this.cache.hasPod(pod.metadata.uid ?? '')) {
      this.queue.done(qp.key);
      return false;
    }
    this.counters.attempts++;
    const info = podInfoOf(pod);
    const volumes = this.volumeView.preFilter(pod);
    if ('unschedulable' in volumes) {
      this.counters.unschedulable++;
      const diagnosis = new Diagnosis();
      diagnosis.numAllNodes = this.cache.nodeList().length;
      diagnosis.preFilterMsg = volumes.unschedulable;
      diagnosis.unresolvableNodes = diagnosis.numAllNodes;
      const message = diagnosis.numAllNodes > 0 ? fitErrorMessage(diagnosis, noPreemptionMessage(diagnosis)) : NO_NODES_MESSAGE;
      this.reportUnschedulable(pod, message);
      this.queue.parkUnschedulable(qp, false);
      return false;
    }
    const podVolumes = volumes.volumes;
    const volumeFilter: ExtraFilter | undefined = podVolumes ? (ni) => this.volumeView.filter(podVolumes, ni) : undefined;
    const decision = this.decider.decide(info, volumeFilter);
    if ('node' in decision) {
      this.cache.assume(info, decision.node.name);
      void this.bind(qp, pod, info, decision.node.name, podVolumes?.delayed ?? []);
      return true;
    }
    this.counters.unschedulable++;
    const message = decision.diagnosis ? fitErrorMessage(decision.diagnosis, this.postFilter(pod, info, decision.diagnosis, volumeFilter)) : NO_NODES_MESSAGE;
    this.ctx.log.debug({ pod: qp.key, message }, 'pod is unschedulable');
    this.reportUnschedulable(pod, message);
    this.queue.parkUnschedulable(qp, decision.resolvable);
    return false;
  }

  /**
   * Upstream's post-filter: preemption. Returns what it adds to the failure message; when it
   * nominates a node (and evicts the victims there) it adds nothing, as upstream's does.
   */
  private postFilter(pod: Pod, info: PodInfo, diagnosis: Diagnosis, extra: ExtraFilter | undefined): string | undefined {
    const lowest = this.cache.lowestPriority();
    // Nothing ranks below the pod anywhere: no victims, without looking at a node.
    if (!info.preemptionNever && (lowest === undefined || lowest >= info.priority)) return noPreemptionMessage(diagnosis);
    const nominated = pod.status?.nominatedNodeName ? this.cache.getNode(pod.status.nominatedNodeName) : undefined;
    const result = findPreemption(info, this.cache.nodeList(), this.budgetViews(), nominated, extra);
    if ('notEligible' in result) return `preemption: ${result.notEligible}`;
    if ('noCandidates' in result) return noPreemptionMessage(diagnosis);
    this.preempt(pod, info, result);
    return undefined;
  }

  private budgetViews(): BudgetView[] {
    return this.budgets.list().map((b) => {
      const spec = (b.spec ?? {}) as { selector?: unknown };
      const status = (b.status ?? {}) as { disruptionsAllowed?: number; disruptedPods?: Record<string, unknown> };
      return {
        namespace: b.metadata.namespace ?? '',
        selector: spec.selector,
        disruptionsAllowed: status.disruptionsAllowed ?? 0,
        disrupted: new Set(Object.keys(status.disruptedPods ?? {})),
      };
    });
  }

  /** Nominates the node, takes the nomination from lower-priority pods there, and evicts the victims. */
  private preempt(pod: Pod, info: PodInfo, c: Candidate): void {
    const node = c.node.name;
    this.ctx.log.info({ pod: info.key, node, victims: c.victims.map((v) => v.key) }, 'preempting lower-priority pods');
    this.decider.nominate(info, node);
    this.nominatedUids.add(info.uid);
    void this.patchNomination(pod, node);
    for (const other of this.decider.nominatedTo(node)) {
      if (other.uid === info.uid || other.priority >= info.priority) continue;
      this.decider.nominate(other, undefined);
      this.nominatedUids.delete(other.uid);
      void this.patchNomination(other.pod, undefined);
    }
    for (const v of c.victims) void this.evict(v, info, node);
  }

  private async patchNomination(pod: Pod, node: string | undefined): Promise<void> {
    const path = `/api/v1/namespaces/${pod.metadata.namespace ?? 'default'}/pods/${pod.metadata.name}/status`;
    try {
      await this.ctx.client.patch(path, { status: { nominatedNodeName: node ?? null } }, 'strategic');
    } catch (e) {
      if (!this.signal.aborted && !isStatusError(e, 'NotFound')) this.ctx.log.debug({ pod: podKey(pod), err: (e as Error).message }, 'could not update nominatedNodeName');
    }
  }

  /** Marks a victim as disrupted by preemption (as upstream's DisruptionTarget condition says), then deletes it. */
  private async evict(victim: PodInfo, preemptor: PodInfo, node: string): Promise<void> {
    const path = `/api/v1/namespaces/${victim.pod.metadata.namespace ?? 'default'}/pods/${victim.pod.metadata.name}`;
    const condition: PodCondition = {
      type: 'DisruptionTarget',
      status: 'True',
      reason: 'PreemptionByScheduler',
      message: `${this.opts.schedulerName}: preempting to accommodate a higher priority pod`,
      lastTransitionTime: rfc3339(this.ctx.clock.now()),
    };
    try {
      await this.ctx.client.patch(`${path}/status`, { status: { conditions: [condition] } }, 'strategic');
      await this.ctx.client.delete(path);
      this.recorder.event(victim.pod, 'Normal', 'Preempted', `Preempted by pod ${preemptor.uid} on node ${node}`);
    } catch (e) {
      if (!this.signal.aborted && !isStatusError(e, 'NotFound')) this.ctx.log.warn({ pod: victim.key, err: (e as Error).message }, 'could not preempt');
    }
  }

  /**
   * PreBind of the pod's claims that wait for it: each is pre-bound or given the node, then the
   * binding waits until all are Bound. False (the assumption dropped, the pod retried) when a write
   * fails or they are not Bound in time.
   */
  private async preBindVolumes(qp: QueuedPod, info: PodInfo, nodeName: string, delayed: readonly DelayedClaim[]): Promise<boolean> {
    const keys = delayed.map((d) => objectKeyOf(d.claim));
    try {
      for (const key of keys) {
        const claim = this.claims.get(key);
        const write = claim && preBindWrite(this.volumeView, claim, nodeName);
        if (write) await this.ctx.client.patch(write.path, write.patch, 'merge');
      }
      if (!(await this.claimsBound(keys))) throw new Error(`the pod's claims were not bound within ${BIND_TIMEOUT_MS / 1000} s`);
      return true;
    } catch (e) {
      if (this.signal.aborted) return false;
      this.ctx.log.info({ pod: qp.key, node: nodeName, err: (e as Error).message }, 'binding volumes failed; will retry');
      if (this.cache.forget(info.uid)) this.queue.moveUnschedulable(true);
      this.queue.retryAfterError(qp);
      return false;
    }
  }

  /** Resolves true once every claim is Bound, false when one goes away, the wait times out or leadership ends. */
  private claimsBound(keys: readonly string[]): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        timer.cancel();
        this.claimWaiters.delete(check);
        this.signal.removeEventListener('abort', aborted);
        resolve(ok);
      };
      const check = () => {
        const bound = this.volumeView.allBound(keys);
        if (bound !== false) done(bound === true);
      };
      const aborted = () => done(false);
      const timer = this.ctx.clock.setTimeout(() => done(false), BIND_TIMEOUT_MS);
      this.signal.addEventListener('abort', aborted, { once: true });
      this.claimWaiters.add(check);
      check();
    });
  }

  private async bind(qp: QueuedPod, pod: Pod, info: PodInfo, nodeName: string, delayed: readonly DelayedClaim[]): Promise<void> {
    const ns = pod.metadata.namespace ?? 'default';
    const name = pod.metadata.name!;
    if (delayed.length > 0 && !(await this.preBindVolumes(qp, info, nodeName, delayed))) {
      this.binds.release();
      return;
    }
    try {
      // No abort signal on single requests: each would add a listener to the term's signal, and
      // a binding in flight when leadership ends is harmless (the server refuses double binds).
      await this.ctx.client.create(
        `/api/v1/namespaces/${ns}/pods/${name}/binding`,
        { apiVersion: 'v1', kind: 'Binding', metadata: { name, namespace: ns, uid: info.uid }, target: { apiVersion: 'v1', kind: 'Node', name: nodeName } },
      );
      this.cache.bindingFinished(info.uid, this.ctx.clock.now());
      this.queue.done(qp.key);
      this.forgetPod(info.uid);
      this.counters.scheduled++;
      this.recorder.event(pod, 'Normal', 'Scheduled', `Successfully assigned ${ns}/${name} to ${nodeName}`);
    } catch (e) {
      if (this.signal.aborted) return;
      if (this.cache.forget(info.uid)) this.queue.moveUnschedulable(true);
      if (isStatusError(e, 'Conflict') || isStatusError(e, 'NotFound')) {
        // Bound by someone else, being deleted, or gone: the informer brings the truth.
        this.queue.done(qp.key);
        this.ctx.log.debug({ pod: qp.key, err: (e as Error).message }, 'binding refused');
      } else {
        this.counters.bindErrors++;
        // One line for a pod's first failure and every tenth after it, not one per retry.
        if (qp.attempts % 10 === 0) this.ctx.log.warn({ pod: qp.key, node: nodeName, attempts: qp.attempts, err: (e as Error).message }, 'binding failed; will retry');
        this.queue.retryAfterError(qp);
      }
    } finally {
      this.binds.release();
    }
  }

  private reportUnschedulable(pod: Pod, message: string): void {
    const uid = pod.metadata.uid ?? '';
    const now = this.ctx.clock.now();
    const last = this.lastFailedEvent.get(uid);
    if (!last || last.message !== message || now - last.at >= this.opts.failedEventIntervalMs) {
      this.lastFailedEvent.set(uid, { message, at: now });
      this.recorder.event(pod, 'Warning', 'FailedScheduling', message);
    }
    this.writeCondition(pod, 'Unschedulable', message);
  }

  /**
   * PodScheduled=False with reason and message, written only when it differs from what the pod
   * shows. Writes for one pod coalesce: a newer message replaces one still waiting for a slot.
   */
  private writeCondition(pod: Pod, reason: string, message: string): void {
    const uid = pod.metadata.uid ?? '';
    const memo = `${reason}\n${message}`;
    if (showsCondition(pod, reason, message) || this.writtenCondition.get(uid) === memo) return;
    this.writtenCondition.set(uid, memo);
    const key = podKey(pod);
    const queued = this.pendingConditions.has(uid);
    this.pendingConditions.set(uid, { key, reason, message });
    if (queued) return;
    void this.statusWrites.acquire().then(async () => {
      const want = this.pendingConditions.get(uid);
      this.pendingConditions.delete(uid);
      try {
        if (want) await this.patchCondition(want.key, uid, want.reason, want.message);
      } catch (e) {
        // Let the next attempt write it again.
        if (want && this.writtenCondition.get(uid) === `${want.reason}\n${want.message}`) this.writtenCondition.delete(uid);
        if (!this.signal.aborted && !isStatusError(e, 'NotFound')) this.ctx.log.debug({ pod: key, err: (e as Error).message }, 'could not update PodScheduled');
      } finally {
        this.statusWrites.release();
      }
    });
  }

  /**
   * The patch names the resourceVersion it was computed from: if the pod was bound meanwhile (the
   * binding sets PodScheduled=True), the stale False is refused instead of overwriting it.
   */
  private async patchCondition(key: string, uid: string, reason: string, message: string): Promise<void> {
    let pod = this.pods.get(key);
    for (let attempt = 0; attempt < 3; attempt++) {
      if (this.signal.aborted || !pod || pod.metadata.uid !== uid || pod.spec?.nodeName || this.cache.hasPod(uid)) return;
      if (showsCondition(pod, reason, message)) return;
      const current = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
      const condition: PodCondition = {
        type: 'PodScheduled',
        status: 'False',
        reason,
        message,
        lastProbeTime: null,
        // Upstream keeps the transition time while the status stays False.
        lastTransitionTime: current?.status === 'False' && current.lastTransitionTime ? current.lastTransitionTime : rfc3339(this.ctx.clock.now()),
      };
      const path = `/api/v1/namespaces/${pod.metadata.namespace ?? 'default'}/pods/${pod.metadata.name}/status`;
      try {
        await this.ctx.client.patch(path, { metadata: { resourceVersion: pod.metadata.resourceVersion }, status: { conditions: [condition] } }, 'strategic');
        return;
      } catch (e) {
        if (!isStatusError(e, 'Conflict')) throw e;
        pod = await this.ctx.client.get<Pod>(path.slice(0, -'/status'.length));
      }
    }
  }
}

function showsCondition(pod: Pod, reason: string, message: string): boolean {
  const c = pod.status?.conditions?.find((x) => x.type === 'PodScheduled');
  return c?.status === 'False' && c.reason === reason && c.message === message;
}

