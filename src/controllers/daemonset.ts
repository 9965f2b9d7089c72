// DaemonSet controller (upstream pkg/controller/daemon): one pod per eligible node — nodeSelector,
// required node affinity and taints vs tolerations decide eligibility; cordoned nodes still get
// their pod because DaemonSet pods tolerate node.kubernetes.io/unschedulable — and rolling updates
// within maxUnavailable (or maxSurge).
//
// Placement: pods are created already bound (spec.nodeName) *and* carry upstream's
// requiredDuringScheduling matchFields metadata.name=<node> affinity. Upstream leaves binding to
// the scheduler; binding here keeps DaemonSets working with no scheduler running (node agents and
// CNI-like daemons must start before anything else does) and makes the pods indistinguishable from
// scheduled upstream DaemonSet pods. What is lost is the scheduler's resource-fit check: a node
// without room gets the pod anyway, and its agent decides.
//
// Pods of a deleted Node are left alone: pod GC removes them after its quarantine, and a node that
// re-registers in time keeps them (DESIGN N9). Deleting them here would restart daemons every time
// a Node object is deleted and restored.
//
// Each template the DaemonSet runs is kept as a ControllerRevision (revision-history.ts); its hash
// labels pods as `controller-revision-hash`, and the server-kept
// `deprecated.daemonset.template.generation` annotation as `pod-template-generation`; either marks
// a pod as up to date.
import { tolerates } from '../api/tolerations.js';
import { compileTerms, type NodeMatcher, type NodeSelectorTerm } from '../api/node-selector.js';
import { isStatusError } from '../api/errors.js';
import { semanticEqual, deepClone, isObject, obj, arr, str } from '../api/kinds/json.js';
import { TEMPLATE_GENERATION_ANNOTATION, type DaemonSet, type DaemonSetStatus } from '../api/kinds/daemonset.js';
import type { Node, Taint } from '../api/kinds/node.js';
import { isPodReady, type Pod, type PodTemplateSpec, type Toleration } from '../api/kinds/pod.js';
import { workloadSelector } from '../api/kinds/replicaset.js';
import type { Informer } from '../client/informer.js';
import { objectKeyOf } from '../client/informer.js';
import type { EventRecorder } from '../controller-kit/events.js';
import { PATHS } from '../controller-kit/informers.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { scaledValue } from './deployment-rollout.js';
import {
  allowManyRequests,
  claimObjects,
  conflictsRequeue,
  controllerRefTo,
  creationMs,
  Expectations,
  isPodAvailable,
  isPodTerminal,
  msUntilAvailable,
  objectPath,
  OwnerIndex,
  ownerStillThere,
  PodControl,
  slowStartBatch,
  templateHash as hashTemplate,
  watchOwnedPods,
} from './pod-control.js';
import { ReconcileLoop, type Reconciler, type ReconcileResult } from '../controller-kit/reconciler.js';
import { CONTROLLER_REVISION_HASH_LABEL, RevisionHistory } from './revision-history.js';
import type { ControllerRevision } from '../api/kinds/controllerrevision.js';

export { CONTROLLER_REVISION_HASH_LABEL };

export const TEMPLATE_GENERATION_LABEL = 'pod-template-generation';
/** Upstream's per-sync cap for DaemonSets. */
const DS_BURST = 250;
const FAILED_POD_BACKOFF_INITIAL_MS = 1000;
const FAILED_POD_BACKOFF_MAX_MS = 15 * 60_000;

// ---------------------------------------------------------------------------------------------
// Eligibility (upstream NodeShouldRunDaemonPod and the scheduler predicates it borrows).

/** Tolerations every DaemonSet pod gets (upstream AddOrUpdateDaemonPodTolerations). */
export function daemonPodTolerations(hostNetwork: boolean): Toleration[] {
  const t: Toleration[] = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
  ];
  if (hostNetwork) t.push({ key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' });
  return t;
}

function withDaemonTolerations(existing: Toleration[] | undefined, hostNetwork: boolean): Toleration[] {
  const out = [...(existing ?? [])];
  for (const t of daemonPodTolerations(hostNetwork)) {
    const same = (x: Toleration) => x.key === t.key && (x.operator ?? 'Equal') === t.operator && (x.effect ?? '') === t.effect && (x.value ?? '') === '';
    if (!out.some(same)) out.push(t);
  }
  return out;
}


function untolerated(taints: Taint[], tolerations: Toleration[], effects: string[]): Taint | undefined {
  return taints.find((taint) => effects.includes(taint.effect) && !tolerates(tolerations, taint));
}

/** Compiled required terms by the (cached, unchanging) object holding them: a DaemonSet is matched against every node. */
const compiledTerms = new WeakMap<object, NodeMatcher>();

export function fitsNodeAffinity(spec: Pod['spec'], node: Node): boolean {
  const labels = node.metadata.labels ?? {};
  for (const [k, v] of Object.entries(spec?.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const required = obj(obj(obj(spec?.affinity).nodeAffinity).requiredDuringSchedulingIgnoredDuringExecution);
  if (!isObject(obj(spec?.affinity).nodeAffinity) || Object.keys(required).length === 0) return true;
  let matches = compiledTerms.get(required);
  if (!matches) compiledTerms.set(required, (matches = compileTerms(required.nodeSelectorTerms as NodeSelectorTerm[] | undefined)));
  return matches(labels, node.metadata.name ?? '');
}

/**
 * Whether a daemon pod should be started on the node, and whether one already there may stay:
 * NoSchedule taints only keep new pods away, NoExecute ones evict.
 */
export function nodeShouldRunDaemonPod(node: Node, ds: DaemonSet): { shouldRun: boolean; shouldContinueRunning: boolean } {
  const spec = ds.spec?.template?.spec;
  if (spec?.nodeName && spec.nodeName !== node.metadata.name) return { shouldRun: false, shouldContinueRunning: false };
  if (!fitsNodeAffinity(spec, node)) return { shouldRun: false, shouldContinueRunning: false };
  const tolerations = withDaemonTolerations(spec?.tolerations, spec?.hostNetwork === true);
  const taints = node.spec?.taints ?? [];
  if (untolerated(taints, tolerations, ['NoSchedule', 'NoExecute'])) {
    return { shouldRun: false, shouldContinueRunning: !untolerated(taints, tolerations, ['NoExecute']) };
  }
  return { shouldRun: true, shouldContinueRunning: true };
}

/** Upstream ReplaceDaemonSetPodNodeNameNodeAffinity: the pod's required node affinity becomes "this node". */
function nodeAffinityFor(affinity: Record<string, unknown> | undefined, nodeName: string): Record<string, unknown> {
  const a = deepClone(affinity ?? {});
  const nodeAffinity = isObject(a.nodeAffinity) ? a.nodeAffinity : (a.nodeAffinity = {});
  const term = { matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] };
  const required = isObject(nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution) ? nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution : {};
  nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = { ...required, nodeSelectorTerms: [term] };
  return a;
}

/** The node a daemon pod is for: its nodeName, or the node its affinity pins it to. */
function targetNode(pod: Pod): string | undefined {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  const terms = arr(obj(obj(obj(pod.spec?.affinity).nodeAffinity).requiredDuringSchedulingIgnoredDuringExecution).nodeSelectorTerms);
  for (const t of terms) {
    for (const f of arr(obj(t).matchFields)) {
      const r = obj(f);
      const values = arr(r.values).map(str);
      if (str(r.key) === 'metadata.name' && str(r.operator) === 'In' && values.length === 1) return values[0];
    }
  }
  return undefined;
}

function templateGeneration(ds: DaemonSet): string | undefined {
  return ds.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
}

/** Upstream IsPodUpdated: the current template hash, or the current template generation. */
function isPodUpdated(pod: Pod, hash: string, generation: string | undefined): boolean {
  const labels = pod.metadata.labels ?? {};
  return (!!hash && labels[CONTROLLER_REVISION_HASH_LABEL] === hash) || (generation !== undefined && labels[TEMPLATE_GENERATION_LABEL] === generation);
}

/** Scheduled first, then oldest, then by name (upstream podByCreationTimestampAndPhase). */
function byScheduledThenAge(a: Pod, b: Pod): number {
  const sa = !!a.spec?.nodeName;
  const sb = !!b.spec?.nodeName;
  if (sa !== sb) return sa ? -1 : 1;
  return creationMs(a) - creationMs(b) || (a.metadata.name! < b.metadata.name! ? -1 : a.metadata.name! > b.metadata.name! ? 1 : 0);
}

function strategyBudget(ds: DaemonSet, desired: number): { surge: number; unavailable: number } {
  const ru = ds.spec?.updateStrategy?.rollingUpdate ?? {};
  let unavailable = scaledValue(ru.maxUnavailable ?? 1, desired, true);
  const surge = scaledValue(ru.maxSurge ?? 0, desired, true);
  if (desired > 0 && unavailable === 0 && surge === 0) unavailable = 1;
  return { surge, unavailable };
}

function allowsSurge(ds: DaemonSet): boolean {
  return (ds.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate' && scaledValue(ds.spec?.updateStrategy?.rollingUpdate?.maxSurge ?? 0, 1, true) > 0;
}

// ---------------------------------------------------------------------------------------------

export class DaemonSetController implements Controller {
  readonly name = 'daemonset';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    allowManyRequests(signal);
    const daemonSets = ctx.informers.for<DaemonSet>(PATHS.daemonsets);
    const pods = ctx.informers.for<Pod>(PATHS.pods, { readOnly: true });
    const nodes = ctx.informers.for<Node>(PATHS.nodes);
    const revisions = ctx.informers.for<ControllerRevision>(PATHS.controllerrevisions);
    const podIndex = new OwnerIndex(pods);
    const expectations = new Expectations(ctx.clock);
    const history = new RevisionHistory(ctx, revisions, { kind: 'DaemonSet', resource: 'daemonsets' });
    const loop = new ReconcileLoop(new DaemonSetReconciler(ctx, daemonSets, nodes, podIndex, expectations, history), { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 2);
    const enqueue = (ds: DaemonSet) => loop.enqueue(objectKeyOf(ds));
    const enqueueAll = () => {
      for (const ds of daemonSets.list()) enqueue(ds);
    };

    daemonSets.addHandlers({
      add: enqueue,
      update: (_o, n) => enqueue(n),
      delete: (ds) => {
        expectations.forget(objectKeyOf(ds));
        enqueue(ds);
      },
    });
    // Nodes heartbeat through status; only labels and spec (taints, unschedulable) change eligibility.
    nodes.addHandlers({
      add: enqueueAll,
      update: (old, cur) => {
        if (!semanticEqual(old.metadata.labels, cur.metadata.labels) || !semanticEqual(old.spec, cur.spec)) enqueueAll();
      },
      delete: enqueueAll,
    });

    watchOwnedPods({ kind: 'DaemonSet', owners: daemonSets, pods, expectations, enqueue, selector: (ds) => workloadSelector(ds.spec?.selector) });
    // A revision changed or deleted by hand is put right by its DaemonSet's next sync.
    const enqueueOwner = (rev: ControllerRevision) => {
      const ref = rev.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === 'DaemonSet');
      if (ref) loop.enqueue(`${rev.metadata.namespace}/${ref.name}`);
    };
    revisions.addHandlers({ add: enqueueOwner, update: (_o, n) => enqueueOwner(n), delete: enqueueOwner });

    void Promise.all([daemonSets.waitForSync(), pods.waitForSync(), nodes.waitForSync(), revisions.waitForSync()]).then(() => loop.run(signal));
  }
}

interface Backoff {
  delayMs: number;
  lastUpdate: number;
}

class DaemonSetReconciler implements Reconciler {
  readonly name = 'daemonset';
  private readonly recorder: EventRecorder;
  private readonly pods: PodControl;
  private readonly failedPodBackoff = new Map<string, Backoff>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly daemonSets: Informer<DaemonSet>,
    private readonly nodes: Informer<Node>,
    private readonly podIndex: OwnerIndex<Pod>,
    private readonly expectations: Expectations,
    private readonly history: RevisionHistory,
  ) {
    this.recorder = ctx.recorder('daemonset-controller');
    this.pods = new PodControl(ctx.client, this.recorder, ctx.log);
  }

  reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    return conflictsRequeue(signal, () => this.sync(key, signal));
  }

  private async sync(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const ds = this.daemonSets.get(key);
    if (!ds) {
      this.expectations.forget(key);
      return;
    }
    const selector = workloadSelector(ds.spec?.selector);
    if (!selector || selector.isEmpty()) {
      this.recorder.event(ds, 'Warning', 'SelectingAll', 'This daemon set is selecting all pods. A non-empty selector is required.');
      return;
    }
    // Being deleted: the garbage collector removes the pods; status would only describe a teardown.
    if (ds.metadata.deletionTimestamp) return;
    const { current, old } = await this.history.construct(ds, selector, () => this.canAdopt(ds, signal), signal);
    const hash = current.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? templateHash(ds);
    const nodes = this.nodes.list();
    const satisfied = this.expectations.satisfied(key);
    const pods = await this.claimPods(ds, selector, signal);
    const byNode = groupByNode(pods.claimed);
    if (!satisfied) return this.updateStatus(ds, nodes, byNode, hash, false, signal);

    let requeue: number | undefined;
    let failure: unknown;
    try {
      requeue = await this.manage(ds, nodes, byNode, hash, signal);
      if (this.expectations.satisfied(key) && (ds.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate') {
        await this.rollingUpdate(ds, nodes, byNode, hash, signal);
      }
      await this.history.cleanup(ds, old, pods.claimed, signal);
    } catch (e) {
      if (signal.aborted) throw e;
      failure = e;
    }
    const statusResult = await this.updateStatus(ds, nodes, byNode, hash, true, signal);
    if (failure) throw failure;
    if (pods.errors.length > 0) throw pods.errors[0];
    const after = [requeue, statusResult?.requeueAfterMs].filter((x): x is number => x !== undefined);
    if (after.length > 0) return { requeueAfterMs: Math.min(...after) };
  }

  private claimPods(ds: DaemonSet, selector: NonNullable<ReturnType<typeof workloadSelector>>, signal: AbortSignal) {
    const ns = ds.metadata.namespace!;
    return claimObjects<Pod>({
      client: this.ctx.client,
      owner: ds,
      ownerRef: controllerRefTo(ds, 'apps/v1', 'DaemonSet'),
      selector,
      prefix: '/api/v1',
      resource: 'pods',
      candidates: [...this.podIndex.owned(ds.metadata.uid), ...this.podIndex.orphansIn(ns)],
      canAdopt: () => this.canAdopt(ds, signal),
      log: this.ctx.log,
      signal,
    });
  }

  /** A fresh check that the DaemonSet still exists and is not being deleted (upstream RecheckDeletionTimestamp). */
  private canAdopt(ds: DaemonSet, signal: AbortSignal): Promise<boolean> {
    return ownerStillThere(this.ctx.client, objectPath('/apis/apps/v1', 'daemonsets', ds.metadata.namespace!, ds.metadata.name!), ds, signal);
  }

  /** Creates missing daemon pods and deletes ones that must go; returns a requeue delay for failed-pod back-off. */
  private async manage(ds: DaemonSet, nodes: Node[], byNode: Map<string, Pod[]>, hash: string, signal: AbortSignal): Promise<number | undefined> {
    const needing: string[] = [];
    const toDelete: Pod[] = [];
    let requeue: number | undefined;
    const nodeNames = new Set(nodes.map((n) => n.metadata.name!));
    for (const node of nodes) {
      const r = this.podsShouldBeOnNode(ds, node, byNode, hash);
      needing.push(...r.create);
      toDelete.push(...r.remove);
      if (r.requeueAfterMs !== undefined) requeue = Math.min(requeue ?? Infinity, r.requeueAfterMs);
    }
    // Unbound pods aimed at a node that no longer exists would never be scheduled (upstream getUnscheduledPodsWithoutNode).
    for (const [nodeName, pods] of byNode) {
      if (nodeNames.has(nodeName)) continue;
      for (const p of pods) if (!p.spec?.nodeName && !p.metadata.deletionTimestamp) toDelete.push(p);
    }
    await this.syncNodes(ds, toDelete, needing, hash, signal);
    return requeue;
  }

  private podsShouldBeOnNode(ds: DaemonSet, node: Node, byNode: Map<string, Pod[]>, hash: string): { create: string[]; remove: Pod[]; requeueAfterMs?: number } {
    const nodeName = node.metadata.name!;
    const { shouldRun, shouldContinueRunning } = nodeShouldRunDaemonPod(node, ds);
    const pods = byNode.get(nodeName);
    const create: string[] = [];
    const remove: Pod[] = [];
    let requeueAfterMs: number | undefined;
    if (shouldRun && !pods) {
      create.push(nodeName);
    } else if (shouldContinueRunning && pods) {
      const running: Pod[] = [];
      for (const pod of pods) {
        if (pod.metadata.deletionTimestamp) continue;
        if (pod.status?.phase === 'Failed') {
          // Agents may keep rejecting a pod; back off instead of fighting them in a hot loop.
          const wait = this.backoffLeft(ds, nodeName);
          if (wait > 0) {
            requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, wait);
            continue;
          }
          this.recorder.event(ds, 'Warning', 'FailedDaemonPod', `Found failed daemon pod ${pod.metadata.namespace}/${pod.metadata.name} on node ${nodeName}, will try to kill it`);
          remove.push(pod);
        } else if (pod.status?.phase === 'Succeeded') {
          this.recorder.event(ds, 'Normal', 'SucceededDaemonPod', `Found succeeded daemon pod ${pod.metadata.namespace}/${pod.metadata.name} on node ${nodeName}, will try to delete it`);
          remove.push(pod);
        } else {
          running.push(pod);
        }
      }
      running.sort(byScheduledThenAge);
      if (!allowsSurge(ds)) {
        // One pod per node: keep the oldest.
        remove.push(...running.slice(1));
      } else if (running.length === 0) {
        if (shouldRun) create.push(nodeName);
      } else if (running.length > 1) {
        // Surging: an old and a new pod may overlap until the new one is available.
        const generation = templateGeneration(ds);
        let oldestNew: Pod | undefined;
        let oldestOld: Pod | undefined;
        for (const pod of running) {
          if (isPodUpdated(pod, hash, generation)) {
            if (!oldestNew) oldestNew = pod;
            else remove.push(pod);
          } else if (!oldestOld) oldestOld = pod;
          else remove.push(pod);
        }
        if (oldestNew && oldestOld) {
          if (!isPodReady(oldestOld) || isPodAvailable(oldestNew, ds.spec?.minReadySeconds ?? 0, this.ctx.clock.now())) remove.push(oldestOld);
        }
      }
    } else if (!shouldContinueRunning && pods) {
      for (const pod of pods) if (!pod.metadata.deletionTimestamp) remove.push(pod);
    }
    return requeueAfterMs === undefined ? { create, remove } : { create, remove, requeueAfterMs };
  }

  /** Milliseconds of back-off left for deleting a failed pod on this node; starts (or doubles) the back-off when 0. */
  private backoffLeft(ds: DaemonSet, nodeName: string): number {
    const key = `${ds.metadata.uid}/${nodeName}`;
    const now = this.ctx.clock.now();
    const b = this.failedPodBackoff.get(key);
    if (b && now - b.lastUpdate < b.delayMs) return b.lastUpdate + b.delayMs - now;
    const expired = !b || now - b.lastUpdate > 2 * FAILED_POD_BACKOFF_MAX_MS;
    this.failedPodBackoff.set(key, { delayMs: expired ? FAILED_POD_BACKOFF_INITIAL_MS : Math.min(b.delayMs * 2, FAILED_POD_BACKOFF_MAX_MS), lastUpdate: now });
    return 0;
  }

  /** Upstream rollingUpdate: replace old pods within maxUnavailable, or surge new ones within maxSurge. */
  private async rollingUpdate(ds: DaemonSet, nodes: Node[], byNode: Map<string, Pod[]>, hash: string, signal: AbortSignal): Promise<void> {
    const now = this.ctx.clock.now();
    const minReady = ds.spec?.minReadySeconds ?? 0;
    const generation = templateGeneration(ds);
    // Pods of deleted Nodes are not ours to replace: pod GC decides about them (see the top of this file).
    const nodeByName = new Map(nodes.map((n) => [n.metadata.name!, n]));
    const perNode = new Map([...byNode].filter(([name]) => nodeByName.has(name)));
    let desired = 0;
    for (const node of nodes) {
      if (!nodeShouldRunDaemonPod(node, ds).shouldRun) continue;
      desired++;
      if (!perNode.has(node.metadata.name!)) perNode.set(node.metadata.name!, []);
    }
    const { surge, unavailable } = strategyBudget(ds, desired);

    if (surge === 0) {
      let numUnavailable = 0;
      const replacements: Pod[] = [];
      const candidates: Pod[] = [];
      for (const [, pods] of [...perNode].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        const found = splitOnNode(pods, hash, generation);
        if (!found) {
          numUnavailable++;
          continue;
        }
        const { newPod, oldPod } = found;
        if ((!oldPod && !newPod) || (oldPod && newPod)) {
          numUnavailable++;
        } else if (newPod) {
          if (!isPodAvailable(newPod, minReady, now)) numUnavailable++;
        } else if (oldPod) {
          if (!isPodAvailable(oldPod, minReady, now)) {
            replacements.push(oldPod);
            numUnavailable++;
          } else if (numUnavailable < unavailable) {
            candidates.push(oldPod);
          }
        }
      }
      const remaining = Math.max(0, Math.min(unavailable - numUnavailable, candidates.length));
      const victims = [...replacements, ...candidates.slice(0, remaining)];
      if (victims.length > 0) this.ctx.log.debug({ daemonset: objectKeyOf(ds), replacing: victims.length, numUnavailable, unavailable }, 'rolling update');
      return this.syncNodes(ds, victims, [], hash, signal);
    }

    const oldToDelete: Pod[] = [];
    const shouldNotRunToDelete: Pod[] = [];
    const candidateNodes: string[] = [];
    const allowedNodes: string[] = [];
    let numSurge = 0;
    let numAvailable = 0;
    for (const [nodeName, pods] of perNode) {
      const found = splitOnNode(pods, hash, generation);
      if (!found) {
        numSurge++;
        continue;
      }
      const { newPod, oldPod } = found;
      if (oldPod ? isPodAvailable(oldPod, minReady, now) : newPod ? isPodAvailable(newPod, minReady, now) : false) numAvailable++;
      if (!oldPod) continue;
      const shouldRun = nodeShouldRunDaemonPod(nodeByName.get(nodeName)!, ds).shouldRun;
      if (!newPod) {
        if (!isPodAvailable(oldPod, minReady, now)) {
          if (!shouldRun) oldToDelete.push(oldPod);
          else allowedNodes.push(nodeName);
        } else if (!shouldRun) {
          shouldNotRunToDelete.push(oldPod);
        } else if (numSurge < surge) {
          candidateNodes.push(nodeName);
        }
      } else if (!isPodAvailable(newPod, minReady, now)) {
        numSurge++;
      } else {
        oldToDelete.push(oldPod);
      }
    }
    // Pods on nodes that no longer qualify go only once others are available in their place.
    const deletable = Math.min(numAvailable - desired, shouldNotRunToDelete.length);
    if (deletable > 0) oldToDelete.push(...shouldNotRunToDelete.slice(0, deletable));
    const remainingSurge = Math.max(0, Math.min(surge - numSurge, candidateNodes.length));
    return this.syncNodes(ds, oldToDelete, [...allowedNodes, ...candidateNodes.slice(0, remainingSurge)], hash, signal);
  }

  private async syncNodes(ds: DaemonSet, toDelete: Pod[], nodeNames: string[], hash: string, signal: AbortSignal): Promise<void> {
    const key = objectKeyOf(ds);
    const creates = nodeNames.slice(0, DS_BURST);
    const deletes = toDelete.slice(0, DS_BURST);
    if (creates.length === 0 && deletes.length === 0) return;
    this.expectations.expect(key, creates.length, deletes.map(objectKeyOf));
    const template = daemonPodTemplate(ds, hash);
    const ref = controllerRefTo(ds, 'apps/v1', 'DaemonSet');
    let next = 0;
    let createError: unknown;
    if (creates.length > 0) {
      const { successes, error } = await slowStartBatch(creates.length, 1, async () => {
        const nodeName = creates[next++]!;
        await this.pods.createPod(ds, template, ref, {
          mutate: (pod) => {
            pod.spec = { ...pod.spec!, nodeName, affinity: nodeAffinityFor(pod.spec?.affinity, nodeName) };
          },
        }, signal);
      });
      for (let i = successes; i < creates.length; i++) this.expectations.creationObserved(key);
      createError = error;
    }
    const results = await Promise.allSettled(deletes.map((p) => this.pods.deletePod(ds, p.metadata.namespace!, p.metadata.name!, signal)));
    let deleteError: unknown;
    results.forEach((r, i) => {
      if (r.status === 'fulfilled' && r.value) return;
      // Not deleted by us (already gone, or failed): no deletion event is coming for it.
      this.expectations.deletionObserved(key, objectKeyOf(deletes[i]!));
      if (r.status === 'rejected') deleteError ??= r.reason;
    });
    if (createError) throw createError;
    if (deleteError) throw deleteError;
  }

  private async updateStatus(ds: DaemonSet, nodes: Node[], byNode: Map<string, Pod[]>, hash: string, observed: boolean, signal: AbortSignal): Promise<ReconcileResult | void> {
    const now = this.ctx.clock.now();
    const minReady = ds.spec?.minReadySeconds ?? 0;
    const generation = templateGeneration(ds);
    let desired = 0;
    let current = 0;
    let misscheduled = 0;
    let ready = 0;
    let available = 0;
    let updated = 0;
    let nextAvailableIn: number | undefined;
    for (const node of nodes) {
      const { shouldRun } = nodeShouldRunDaemonPod(node, ds);
      const pods = byNode.get(node.metadata.name!) ?? [];
      if (!shouldRun) {
        if (pods.length > 0) misscheduled++;
        continue;
      }
      desired++;
      if (pods.length === 0) continue;
      current++;
      const pod = [...pods].sort(byScheduledThenAge)[0]!;
      if (isPodReady(pod)) {
        ready++;
        if (isPodAvailable(pod, minReady, now)) available++;
        else {
          const wait = msUntilAvailable(pod, minReady, now);
          if (wait !== undefined) nextAvailableIn = Math.min(nextAvailableIn ?? wait, wait);
        }
      }
      if (isPodUpdated(pod, hash, generation)) updated++;
    }
    const old: Partial<DaemonSetStatus> = ds.status ?? {};
    const status: DaemonSetStatus = {
      ...old,
      desiredNumberScheduled: desired,
      currentNumberScheduled: current,
      numberMisscheduled: misscheduled,
      numberReady: ready,
      updatedNumberScheduled: updated,
      numberAvailable: available,
      numberUnavailable: desired - available,
    };
    if (observed) status.observedGeneration = ds.metadata.generation ?? 0;
    if (!semanticEqual(status, old)) {
      try {
        await this.ctx.client.patch(`${objectPath('/apis/apps/v1', 'daemonsets', ds.metadata.namespace!, ds.metadata.name!)}/status`, { status }, 'merge', { signal });
      } catch (e) {
        if (!isStatusError(e, 'NotFound')) throw e;
      }
    }
    if (nextAvailableIn !== undefined) return { requeueAfterMs: nextAvailableIn };
  }
}

/** Daemon pods by the node they are for; pods already finished and being removed are done with. */
function groupByNode(pods: Pod[]): Map<string, Pod[]> {
  const out = new Map<string, Pod[]>();
  for (const pod of pods) {
    if (isPodTerminal(pod) && pod.metadata.deletionTimestamp) continue;
    const node = targetNode(pod);
    if (!node) continue;
    const list = out.get(node);
    if (list) list.push(pod);
    else out.set(node, [pod]);
  }
  return out;
}

/** At most one current and one old (not terminating) pod on a node; undefined when there are more. */
function splitOnNode(pods: Pod[], hash: string, generation: string | undefined): { newPod?: Pod; oldPod?: Pod } | undefined {
  let newPod: Pod | undefined;
  let oldPod: Pod | undefined;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    if (isPodUpdated(pod, hash, generation)) {
      if (newPod) return undefined;
      newPod = pod;
    } else {
      if (oldPod) return undefined;
      oldPod = pod;
    }
  }
  return { ...(newPod ? { newPod } : {}), ...(oldPod ? { oldPod } : {}) };
}

function templateHash(ds: DaemonSet): string {
  return hashTemplate(ds.spec?.template, ds.status?.collisionCount);
}

/** The DaemonSet's template with the revision labels and daemon tolerations its pods carry. */
function daemonPodTemplate(ds: DaemonSet, hash: string): PodTemplateSpec {
  const t = deepClone(ds.spec?.template ?? {});
  const generation = templateGeneration(ds);
  t.metadata = {
    ...(t.metadata ?? {}),
    labels: { ...(t.metadata?.labels ?? {}), [CONTROLLER_REVISION_HASH_LABEL]: hash, ...(generation !== undefined ? { [TEMPLATE_GENERATION_LABEL]: generation } : {}) },
  };
  const spec = t.spec ?? { containers: [] };
  spec.tolerations = withDaemonTolerations(spec.tolerations, spec.hostNetwork === true);
  t.spec = spec;
  return t;
}
