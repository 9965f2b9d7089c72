// Taint eviction controller (upstream's tainteviction): evicts pods from nodes with NoExecute
// taints they do not tolerate, or tolerate only for a while. Deadlines count from each taint's
// timeAdded (kept in the API, so a new leader does not restart them); a pod that tolerates a
// taint forever (DaemonSet pods) is never evicted for it; a taint removed in time cancels the
// eviction. Eviction = DisruptionTarget condition, then a graceful DELETE: a live agent stops the
// pod; on a dead node it stays Terminating while its ReplicaSet replaces it.
import { setMaxListeners } from 'node:events';
import type { Node, Taint } from '../api/kinds/node.js';
import type { Pod, Toleration } from '../api/kinds/pod.js';
import { isStatusError } from '../api/errors.js';
import type { Informer } from '../client/informer.js';
import { objectKeyOf } from '../client/informer.js';
import type { Logger } from '../util/log.js';
import type { EventRecorder } from '../controller-kit/events.js';
import { PATHS } from '../controller-kit/informers.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { PodsByNode, conditionDiffers, disruptionTarget, patchPodStatus, podPath } from './node-lifecycle-pods.js';
import { noExecuteTaints } from './node-lifecycle-taints.js';
import { toleratesTaint } from '../api/tolerations.js';
import { ReconcileLoop, type Reconciler, type ReconcileResult } from '../controller-kit/reconciler.js';

/** When a pod must go: a time (ms, possibly already past), or never. */
export type EvictionDeadline = number | 'never';

/**
 * Upstream's rule, per taint: a NoExecute taint no toleration matches evicts now; the first
 * matching toleration without tolerationSeconds tolerates it forever; otherwise the pod may stay
 * tolerationSeconds (<= 0 means none) after the taint's start. The earliest deadline wins.
 */
export function evictionDeadline(tolerations: Toleration[], taints: Taint[], taintStart: (t: Taint) => number, now: number): EvictionDeadline {
  let deadline = Infinity;
  for (const taint of taints) {
    const used = tolerations.find((tol) => toleratesTaint(tol, taint));
    if (!used) return now;
    const seconds = used.tolerationSeconds;
    if (seconds === undefined || seconds === null) continue;
    deadline = Math.min(deadline, taintStart(taint) + Math.max(0, seconds) * 1000);
  }
  return deadline === Infinity ? 'never' : deadline;
}

function tolerationsOf(p: Pod | undefined): Toleration[] {
  return p?.spec?.tolerations ?? [];
}

function sameNoExecute(a: Node | undefined, b: Node | undefined): boolean {
  return JSON.stringify(noExecuteTaints(a)) === JSON.stringify(noExecuteTaints(b));
}

export class TaintEvictionController implements Controller {
  readonly name = 'taint-eviction';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    // Every in-flight request listens on the term's signal; many at once are expected, not a leak.
    setMaxListeners(0, signal);
    new TaintEviction(ctx).run(signal);
  }
}

class TaintEviction implements Reconciler {
  readonly name = 'taint-eviction';
  private readonly nodes: Informer<Node>;
  private readonly pods: Informer<Pod>;
  private readonly podsByNode: PodsByNode;
  private readonly recorder: EventRecorder;
  private readonly log: Logger;
  private readonly loop: ReconcileLoop;
  /** Pods with an eviction pending, by key: which pod (uid) and when. */
  private readonly scheduled = new Map<string, { uid: string; deadline: number }>();
  /** When this controller first saw a NoExecute taint that has no timeAdded. */
  private readonly firstSeen = new Map<string, number>();

  constructor(private readonly ctx: ControllerContext) {
    this.nodes = ctx.informers.for<Node>(PATHS.nodes);
    this.pods = ctx.informers.for<Pod>(PATHS.pods, { readOnly: true });
    this.podsByNode = new PodsByNode(this.pods);
    this.recorder = ctx.recorder('taint-eviction-controller');
    this.log = ctx.log.child({ controller: 'taint-eviction' });
    this.loop = new ReconcileLoop(this, { clock: ctx.clock, log: this.log, metrics: ctx.metrics }, 4);
  }

  run(signal: AbortSignal): void {
    this.nodes.addHandlers({
      add: (n) => this.nodeChanged(n),
      update: (o, n) => !sameNoExecute(o, n) && this.nodeChanged(n),
      delete: (n) => this.nodeChanged(n),
    });
    this.pods.addHandlers({
      add: (p) => p.spec?.nodeName && this.loop.enqueue(objectKeyOf(p)),
      update: (o, p) => {
        const moved = o.spec?.nodeName !== p.spec?.nodeName;
        const tolerationsChanged = JSON.stringify(tolerationsOf(o)) !== JSON.stringify(tolerationsOf(p));
        const terminating = !o.metadata.deletionTimestamp && !!p.metadata.deletionTimestamp;
        if (moved || tolerationsChanged || terminating) this.loop.enqueue(objectKeyOf(p));
      },
      delete: (p) => this.loop.enqueue(objectKeyOf(p)),
    });
    void Promise.all([this.nodes.waitForSync(), this.pods.waitForSync()]).then(() => {
      if (!signal.aborted) void this.loop.run(signal);
    });
  }

  private nodeChanged(node: Node): void {
    const name = node.metadata.name!;
    const live = this.nodes.get(name);
    const present = new Set(noExecuteTaints(live).map((t) => `${name}\0${t.key}\0${t.value ?? ''}`));
    for (const k of this.firstSeen.keys()) if (k.startsWith(`${name}\0`) && !present.has(k)) this.firstSeen.delete(k);
    for (const p of this.podsByNode.podsOn(name)) this.loop.enqueue(objectKeyOf(p));
  }

  private taintStart(nodeName: string, taint: Taint, now: number): number {
    const added = taint.timeAdded ? Date.parse(taint.timeAdded) : NaN;
    // A timeAdded ahead of our clock (skew between servers) counts as now.
    if (!Number.isNaN(added)) return Math.min(added, now);
    const k = `${nodeName}\0${taint.key}\0${taint.value ?? ''}`;
    let seen = this.firstSeen.get(k);
    if (seen === undefined) this.firstSeen.set(k, (seen = now));
    return seen;
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const pod = this.pods.get(key);
    const nodeName = pod?.spec?.nodeName;
    // Gone, unbound or already terminating: nothing left to evict.
    if (!pod || !nodeName || pod.metadata.deletionTimestamp) {
      this.scheduled.delete(key);
      return;
    }
    const taints = noExecuteTaints(this.nodes.get(nodeName));
    const now = this.ctx.clock.now();
    const computed = taints.length === 0 ? 'never' : evictionDeadline(tolerationsOf(pod), taints, (t) => this.taintStart(nodeName, t, now), now);
    if (computed === 'never') return this.cancel(key, pod);
    // As upstream, an eviction already pending keeps its earlier deadline when the taints change
    // shape (e.g. not-ready swapped for unreachable).
    const pending = this.scheduled.get(key);
    const deadline = pending && pending.uid === pod.metadata.uid ? Math.min(pending.deadline, computed) : computed;
    if (deadline > now) {
      if (!pending || pending.deadline !== deadline) this.log.debug({ pod: key, node: nodeName, inMs: deadline - now }, 'eviction scheduled');
      this.scheduled.set(key, { uid: pod.metadata.uid ?? '', deadline });
      return { requeueAfterMs: deadline - now };
    }
    this.scheduled.delete(key);
    await this.evict(pod, nodeName, signal);
  }

  private cancel(key: string, pod: Pod): void {
    if (!this.scheduled.delete(key)) return;
    this.log.info({ pod: key }, 'cancelled pod eviction: taint gone or tolerated');
    this.recorder.event({ apiVersion: 'v1', kind: 'Pod', metadata: pod.metadata }, 'Normal', 'TaintManagerEviction', `Cancelling deletion of Pod ${key}`);
  }

  /** Upstream addConditionAndDeletePod: DisruptionTarget=True, then a graceful DELETE. */
  private async evict(pod: Pod, nodeName: string, signal: AbortSignal): Promise<void> {
    const ns = pod.metadata.namespace!;
    const name = pod.metadata.name!;
    const uid = pod.metadata.uid;
    const key = `${ns}/${name}`;
    const condition = disruptionTarget('DeletionByTaintManager', 'Taint manager: deleting due to NoExecute taint', this.ctx.clock);
    const live = await patchPodStatus(this.ctx.client, ns, name, uid, (p) => (conditionDiffers(p, condition) ? { conditions: [condition] } : undefined), signal);
    if (!live || live.metadata.deletionTimestamp) return;
    this.log.info({ pod: key, node: nodeName }, 'deleting pod: NoExecute taint not tolerated (any longer)');
    this.recorder.event({ apiVersion: 'v1', kind: 'Pod', metadata: live.metadata }, 'Normal', 'TaintManagerEviction', `Marking for deletion Pod ${key}`);
    try {
      await this.ctx.client.delete(podPath(ns, name), { apiVersion: 'v1', kind: 'DeleteOptions', ...(uid ? { preconditions: { uid } } : {}) }, { signal });
    } catch (e) {
      // Gone already, or replaced by a same-named pod: either way this one is not here any more.
      if (!isStatusError(e, 'NotFound') && !isStatusError(e, 'Conflict')) throw e;
    }
  }
}
