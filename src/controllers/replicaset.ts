// ReplicaSet controller (upstream pkg/controller/replicaset): keeps spec.replicas active pods
// matching the selector, adopting orphans and releasing pods that stopped matching, and reports
// replicas / fullyLabeledReplicas / readyReplicas / availableReplicas / observedGeneration.
// The same controller keeps core/v1 ReplicationControllers, as upstream's replication manager is
// the ReplicaSet controller behind an adapter: only the kind, its API path and its selector's
// shape (a plain label map) differ.
import { errorText } from '../util/error-text.js';
import { rfc3339 } from '../util/time.js';
import { isStatusError } from '../api/errors.js';
import { selectorFromSet, type LabelSelector } from '../api/labels.js';
import { semanticEqual } from '../api/kinds/json.js';
import { isPodReady, podReadySince, readyCondition, type Pod } from '../api/kinds/pod.js';
import { type ReplicaSet, type ReplicaSetStatus, workloadSelector } from '../api/kinds/replicaset.js';
import type { ReplicationController } from '../api/kinds/replicationcontroller.js';
import type { Informer } from '../client/informer.js';
import { objectKeyOf } from '../client/informer.js';
import { PATHS } from '../controller-kit/informers.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import {
  allowManyRequests,
  BURST_REPLICAS,
  claimObjects,
  conflictsRequeue,
  controllerOf,
  controllerRefTo,
  creationMs,
  Expectations,
  isPodActive,
  isPodAvailable,
  msUntilAvailable,
  objectPath,
  OwnerIndex,
  ownerStillThere,
  PodControl,
  slowStartBatch,
  watchOwnedPods,
} from './pod-control.js';
import { ReconcileLoop, type Reconciler, type ReconcileResult } from '../controller-kit/reconciler.js';
import type { EventRecorder } from '../controller-kit/events.js';

type Replicated = ReplicaSet | ReplicationController;

/**
 * How long a ReplicaSet waits, after one of its pods changed status or one of a batch of pods it
 * created or deleted showed up, before it syncs: pods of a large ReplicaSet turn Ready hundreds a
 * second, and each sync reads every pod it owns. The last pod it waits for wakes it at once.
 */
export const POD_UPDATE_BATCH_MS = 500;

/**
 * …and a large ReplicaSet waits longer, this much per pod it owns, so that its syncs, each a pass
 * over its pods, cost about the same share of the process at any size (10,000 pods: a sync every
 * 2.5 s at most, instead of one per pod created). In a server growing ten ReplicaSets of 10,000
 * pods, syncs every 500 ms took 57 % of its CPU (a profile at 47,000 pods).
 */
export const POD_UPDATE_BATCH_MS_PER_POD = 0.25;

export function podUpdateBatchMs(ownedPods: number): number {
  return Math.max(POD_UPDATE_BATCH_MS, ownedPods * POD_UPDATE_BATCH_MS_PER_POD);
}

/**
 * Whether a pod's change (same owner, labels and deletion unchanged) can move what a sync decides
 * or reports: whether it counts (active), is Ready, and since when.
 */
export function replicaCountsMayChange(old: Pod, cur: Pod): boolean {
  if (isPodActive(old) !== isPodActive(cur)) return true;
  const ready = isPodReady(cur);
  if (isPodReady(old) !== ready) return true;
  return ready && readyCondition(old)?.lastTransitionTime !== readyCondition(cur)?.lastTransitionTime;
}

/** A kind this controller keeps replicas of. */
export interface ReplicatedKind {
  /** The controller's name (logs, metrics). */
  name: string;
  kind: 'ReplicaSet' | 'ReplicationController';
  apiVersion: string;
  /** The API prefix and resource its objects live under. */
  api: string;
  resource: string;
  informerPath: string;
  /** The event source component, as upstream's. */
  component: string;
  /** What events call one of its objects. */
  noun: string;
  /** The parsed selector; undefined when malformed or empty (it selects nothing). */
  selector(o: Replicated): LabelSelector | undefined;
}

export const REPLICA_SETS: ReplicatedKind = {
  name: 'replicaset',
  kind: 'ReplicaSet',
  apiVersion: 'apps/v1',
  api: '/apis/apps/v1',
  resource: 'replicasets',
  informerPath: PATHS.replicasets,
  component: 'replicaset-controller',
  noun: 'replica set',
  selector: (o) => workloadSelector(o.spec?.selector),
};

export const REPLICATION_CONTROLLERS: ReplicatedKind = {
  name: 'replicationcontroller',
  kind: 'ReplicationController',
  apiVersion: 'v1',
  api: '/api/v1',
  resource: 'replicationcontrollers',
  informerPath: PATHS.replicationcontrollers,
  component: 'replication-controller',
  noun: 'replication controller',
  // An empty map would select every pod: upstream lets it select none.
  selector: (o) => {
    const set = (o as ReplicationController).spec?.selector;
    return set && Object.keys(set).length > 0 ? selectorFromSet(set) : undefined;
  },
};

/** Whether an update changed nothing a sync acts on: spec (generation), deletion, labels, owners. */
export function statusOnly(old: Replicated, cur: Replicated): boolean {
  const [o, c] = [old.metadata, cur.metadata];
  return (
    o.generation !== undefined &&
    o.generation === c.generation &&
    o.deletionTimestamp === c.deletionTimestamp &&
    semanticEqual(o.labels, c.labels) &&
    semanticEqual(o.ownerReferences, c.ownerReferences)
  );
}

export class ReplicaSetController implements Controller {
  readonly name: string;

  constructor(private readonly kind: ReplicatedKind = REPLICA_SETS) {
    this.name = kind.name;
  }

  start(ctx: ControllerContext, signal: AbortSignal): void {
    allowManyRequests(signal);
    const rsInformer = ctx.informers.for<Replicated>(this.kind.informerPath);
    const podInformer = ctx.informers.for<Pod>(PATHS.pods, { readOnly: true });
    const pods = new OwnerIndex(podInformer);
    const expectations = new Expectations(ctx.clock);
    const reconciler = new ReplicaSetReconciler(ctx, this.kind, rsInformer, pods, expectations);
    const loop = new ReconcileLoop(reconciler, { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 2);
    const enqueue = (rs: Replicated) => loop.enqueue(objectKeyOf(rs));
    const enqueueBatched = (rs: Replicated) => loop.queue.addAfter(objectKeyOf(rs), podUpdateBatchMs(pods.ownedCount(rs.metadata.uid)));

    rsInformer.addHandlers({
      add: enqueue,
      // Its own status write comes back as an update: at once, every sync of a growing ReplicaSet
      // would start the next (each a pass over its pods). Someone else's status edit is still
      // corrected, a batch period later.
      update: (o, n) => (statusOnly(o, n) ? enqueueBatched(n) : enqueue(n)),
      delete: (rs) => {
        expectations.forget(objectKeyOf(rs));
        enqueue(rs);
      },
    });

    watchOwnedPods({
      kind: this.kind.kind,
      owners: rsInformer,
      pods: podInformer,
      expectations,
      enqueue,
      selector: (rs) => this.kind.selector(rs),
      podUpdateMatters: replicaCountsMayChange,
      enqueueBatched,
      // A pod that just became Ready turns available minReadySeconds later: look again then.
      ownedPodUpdated: (rs, old, cur) => {
        const mrs = rs.spec?.minReadySeconds ?? 0;
        if (mrs > 0 && !isPodReady(old) && isPodReady(cur)) loop.queue.addAfter(objectKeyOf(rs), mrs * 1000 + 1);
      },
    });

    void Promise.all([rsInformer.waitForSync(), podInformer.waitForSync()]).then(() => loop.run(signal));
  }
}

class ReplicaSetReconciler implements Reconciler {
  readonly name: string;
  private readonly recorder: EventRecorder;
  private readonly pods: PodControl;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly kind: ReplicatedKind,
    private readonly rsInformer: Informer<Replicated>,
    private readonly podIndex: OwnerIndex<Pod>,
    private readonly expectations: Expectations,
  ) {
    this.name = kind.name;
    this.recorder = ctx.recorder(kind.component);
    this.pods = new PodControl(ctx.client, this.recorder, ctx.log);
  }

  reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    return conflictsRequeue(signal, () => this.sync(key, signal));
  }

  private async sync(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const rs = this.rsInformer.get(key);
    if (!rs) {
      this.expectations.forget(key);
      return;
    }
    const selector = this.kind.selector(rs);
    if (!selector) {
      this.recorder.event(rs, 'Warning', 'InvalidSelector', `the ${this.kind.noun} has an invalid label selector`);
      return;
    }
    // Decide before reading the cache: a pod observed after this point only makes us more careful.
    const needsSync = this.expectations.satisfied(key);
    const ns = rs.metadata.namespace!;
    const candidates = [...this.podIndex.owned(rs.metadata.uid), ...this.podIndex.orphansIn(ns)].filter(isPodActive);
    const claim = await claimObjects<Pod>({
      client: this.ctx.client,
      owner: rs,
      ownerRef: controllerRefTo(rs, this.kind.apiVersion, this.kind.kind),
      selector,
      prefix: '/api/v1',
      resource: 'pods',
      candidates,
      canAdopt: () => this.stillExists(rs, signal),
      log: this.ctx.log,
      signal,
    });
    const pods = claim.claimed;

    let manageError: unknown;
    if (needsSync && !rs.metadata.deletionTimestamp) {
      try {
        await this.manageReplicas(rs, pods, signal);
      } catch (e) {
        if (signal.aborted) throw e;
        manageError = e;
      }
    }
    const requeue = await this.updateStatus(rs, pods, manageError, signal);
    if (manageError) throw manageError;
    if (claim.errors.length > 0) throw claim.errors[0];
    return requeue;
  }

  /** Upstream RecheckDeletionTimestamp: an uncached read before adopting anything. */
  private stillExists(rs: Replicated, signal: AbortSignal): Promise<boolean> {
    return ownerStillThere(this.ctx.client, objectPath(this.kind.api, this.kind.resource, rs.metadata.namespace!, rs.metadata.name!), rs, signal);
  }

  private async manageReplicas(rs: Replicated, pods: Pod[], signal: AbortSignal): Promise<void> {
    const key = objectKeyOf(rs);
    const want = rs.spec?.replicas ?? 1;
    const diff = pods.length - want;
    if (diff < 0) {
      const count = Math.min(-diff, BURST_REPLICAS);
      this.expectations.expect(key, count);
      const ref = controllerRefTo(rs, this.kind.apiVersion, this.kind.kind);
      const { successes, error } = await slowStartBatch(count, 1, async () => {
        await this.pods.createPod(rs, rs.spec?.template, ref, {}, signal);
      });
      // Pods never attempted will not show up in the cache; stop waiting for them.
      for (let i = successes; i < count; i++) this.expectations.creationObserved(key);
      if (error) throw error;
      this.ctx.log.debug({ replicaset: key, created: successes }, 'too few replicas');
    } else if (diff > 0) {
      const count = Math.min(diff, BURST_REPLICAS);
      const victims = podsToDelete(pods, this.relatedPods(rs), count, this.ctx.clock.now());
      this.expectations.expect(key, 0, victims.map(objectKeyOf));
      const results = await Promise.allSettled(victims.map((p) => this.pods.deletePod(rs, p.metadata.namespace!, p.metadata.name!, signal)));
      let firstError: unknown;
      results.forEach((r, i) => {
        if (r.status === 'fulfilled' && r.value) return;
        // Not deleted by us (already gone, or failed): no deletion event is coming for it.
        this.expectations.deletionObserved(key, objectKeyOf(victims[i]!));
        if (r.status === 'rejected') firstError ??= r.reason;
      });
      if (firstError) throw firstError;
      this.ctx.log.debug({ replicaset: key, deleted: count }, 'too many replicas');
    }
  }

  /**
   * Pods of this RS and of its siblings (RSs with the same controller, i.e. one Deployment's):
   * scale-down prefers pods doubled up on a node with related pods (upstream getIndirectlyRelatedPods).
   */
  private relatedPods(rs: Replicated): Pod[] {
    const owner = controllerOf(rs);
    const siblings = owner
      ? this.rsInformer.list().filter((o) => o.metadata.namespace === rs.metadata.namespace && controllerOf(o)?.uid === owner.uid)
      : [rs];
    return siblings.flatMap((s) => this.podIndex.owned(s.metadata.uid));
  }

  private async updateStatus(rs: Replicated, pods: Pod[], manageError: unknown, signal: AbortSignal): Promise<ReconcileResult | void> {
    const now = this.ctx.clock.now();
    const minReady = rs.spec?.minReadySeconds ?? 0;
    const templateLabels = selectorFromSet(rs.spec?.template?.metadata?.labels);
    let fullyLabeled = 0;
    let ready = 0;
    let available = 0;
    let nextAvailableIn: number | undefined;
    for (const p of pods) {
      if (templateLabels.matches(p.metadata.labels)) fullyLabeled++;
      if (!isPodReady(p)) continue;
      ready++;
      if (isPodAvailable(p, minReady, now)) available++;
      else {
        const wait = msUntilAvailable(p, minReady, now);
        if (wait !== undefined) nextAvailableIn = Math.min(nextAvailableIn ?? wait, wait);
      }
    }
    const old = rs.status ?? { replicas: 0 };
    const status: ReplicaSetStatus = {
      ...old,
      replicas: pods.length,
      fullyLabeledReplicas: fullyLabeled,
      readyReplicas: ready,
      availableReplicas: available,
      observedGeneration: rs.metadata.generation ?? 0,
    };
    // Go omits these when zero (omitempty); replicas is always written.
    for (const k of ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration'] as const) if (status[k] === 0) delete status[k];
    const conditions = (old.conditions ?? []).filter((c) => c.type !== 'ReplicaFailure');
    const failure = (old.conditions ?? []).find((c) => c.type === 'ReplicaFailure');
    if (manageError && !failure) {
      const want = rs.spec?.replicas ?? 1;
      const reason = pods.length < want ? 'FailedCreate' : pods.length > want ? 'FailedDelete' : '';
      conditions.push({
        type: 'ReplicaFailure',
        status: 'True',
        reason,
        message: errorText(manageError),
        lastTransitionTime: rfc3339(now),
      });
    } else if (manageError && failure) {
      conditions.push(failure);
    }
    if (conditions.length > 0) status.conditions = conditions;
    else delete status.conditions;
    if (!semanticEqual(status, old)) {
      const path = objectPath(this.kind.api, this.kind.resource, rs.metadata.namespace!, rs.metadata.name!);
      try {
        // A merge patch removes only what it sets to null: counters that fell to zero (and are omitted) included.
        const removed = { conditions: null, fullyLabeledReplicas: null, readyReplicas: null, availableReplicas: null, observedGeneration: null };
        await this.ctx.client.patch(`${path}/status`, { status: { ...removed, ...status } }, 'merge', { signal });
      } catch (e) {
        if (!isStatusError(e, 'NotFound')) throw e;
      }
    }
    // Available comes with time, not with an event: look again when the next pod gets there.
    if (nextAvailableIn !== undefined) return { requeueAfterMs: nextAvailableIn };
  }
}

// ---------------------------------------------------------------------------------------------
// Which pods go first on scale-down (upstream ActivePodsWithRanks with LogarithmicScaleDown).

const PHASE_ORDINAL: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

function maxRestarts(p: Pod): number {
  return Math.max(0, ...(p.status?.containerStatuses ?? []).map((c) => c.restartCount ?? 0));
}

function deletionCost(p: Pod): number {
  const v = Number(p.metadata.annotations?.['controller.kubernetes.io/pod-deletion-cost']);
  return Number.isInteger(v) ? v : 0;
}

/** floor(log2(age in ns)): pods of similar age rank the same, so ties fall to a random-ish uid order. */
function logRank(t: number, now: number): number {
  const d = (now - t) * 1e6;
  return d > 0 ? Math.floor(Math.log2(d)) : -1;
}

/** Negative when a should be deleted before b. */
export function compareForDeletion(a: Pod, b: Pod, rankA: number, rankB: number, now: number): number {
  const na = a.spec?.nodeName ?? '';
  const nb = b.spec?.nodeName ?? '';
  // 1. Unassigned before assigned.
  if (na !== nb && (!na || !nb)) return !na ? -1 : 1;
  // 2. Pending < Unknown < Running.
  const pa = PHASE_ORDINAL[a.status?.phase ?? ''] ?? 0;
  const pb = PHASE_ORDINAL[b.status?.phase ?? ''] ?? 0;
  if (pa !== pb) return pa - pb;
  // 3. Not ready before ready.
  const ra = isPodReady(a);
  const rb = isPodReady(b);
  if (ra !== rb) return ra ? 1 : -1;
  // 4. Lower pod-deletion-cost first.
  const ca = deletionCost(a);
  const cb = deletionCost(b);
  if (ca !== cb) return ca - cb;
  // 5. Doubled up (more related pods on the same node) first.
  if (rankA !== rankB) return rankB - rankA;
  const uidOrder = (a.metadata.uid ?? '') < (b.metadata.uid ?? '') ? -1 : (a.metadata.uid ?? '') > (b.metadata.uid ?? '') ? 1 : 0;
  // 6. Ready for less time first (by log2 buckets).
  if (ra && rb) {
    const ta = podReadySince(a);
    const tb = podReadySince(b);
    if (ta !== tb) {
      if (ta === undefined || tb === undefined) return ta === undefined ? -1 : 1;
      const diff = logRank(ta, now) - logRank(tb, now);
      return diff !== 0 ? diff : uidOrder;
    }
  }
  // 7. More container restarts first.
  const xa = maxRestarts(a);
  const xb = maxRestarts(b);
  if (xa !== xb) return xb - xa;
  // 8. Newer first.
  const ta = creationMs(a);
  const tb = creationMs(b);
  if (ta !== tb) {
    if (!ta || !tb) return !ta ? -1 : 1;
    const diff = logRank(ta, now) - logRank(tb, now);
    return diff !== 0 ? diff : uidOrder;
  }
  return 0;
}

export function podsToDelete(pods: Pod[], related: Pod[], count: number, now: number): Pod[] {
  if (count >= pods.length) return pods.slice(0, count);
  const onNode = new Map<string, number>();
  for (const p of related) if (isPodActive(p)) onNode.set(p.spec?.nodeName ?? '', (onNode.get(p.spec?.nodeName ?? '') ?? 0) + 1);
  const ranked = pods.map((p) => ({ p, rank: onNode.get(p.spec?.nodeName ?? '') ?? 0 }));
  ranked.sort((x, y) => compareForDeletion(x.p, y.p, x.rank, y.rank, now));
  return ranked.slice(0, count).map((r) => r.p);
}
