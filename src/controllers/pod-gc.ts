// Pod garbage collector (upstream's podgc), N9: force-deletes pods nothing else will finish —
// pods of Nodes that are gone (after a quarantine, and only if a live read confirms the Node is
// still absent, so a re-registered node keeps its pods), terminating pods on nodes an admin
// declared out of service, terminating pods never scheduled, and the oldest finished pods beyond
// --terminated-pod-gc-threshold. Each pod is first marked Failed, as upstream, so nothing reads
// a dead pod as Running.
import { setMaxListeners } from 'node:events';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { isNodeReady, type Node } from '../api/kinds/node.js';
import type { Pod, PodCondition } from '../api/kinds/pod.js';
import { isStatusError } from '../api/errors.js';
import type { Informer } from '../client/informer.js';
import { objectKeyOf } from '../client/informer.js';
import type { Logger } from '../util/log.js';
import type { EventRecorder } from '../controller-kit/events.js';
import { PATHS } from '../controller-kit/informers.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { conditionDiffers, disruptionTarget, patchPodStatus, podPath } from './node-lifecycle-pods.js';
import { TAINT_OUT_OF_SERVICE, taintsOf } from './node-lifecycle-taints.js';
import { ReconcileLoop, type Reconciler, type ReconcileResult } from '../controller-kit/reconciler.js';

/** Upstream gcCheckPeriod. */
export const POD_GC_CHECK_PERIOD_MS = 20_000;

export interface PodGCOptions {
  /** How often the whole pass runs (tests shorten it). */
  checkPeriodMs?: number;
}

const GC_KEY = 'gc';

/**
 * The pass over every pod gives the event loop back this often: at 40,000 pods, five unbroken
 * passes held the server's requests for about a second every 20 s (a profile of a 10,000-node
 * benchmark).
 */
export const PODS_PER_TURN = 2000;

/** What one pass over the pods finds for each rule (upstream reads its one list four times). */
export interface Candidates {
  terminated: Pod[];
  /** Being deleted and bound to a node (the node may be out of service). */
  terminatingOnNode: Pod[];
  terminatingUnscheduled: Pod[];
  /** Pods bound to a node the informer lacks, by that node's name. */
  onMissingNodes: Map<string, Pod[]>;
  /** Every pod's uid, gathered only while some force-deleted pod is still remembered. */
  uids?: Set<string | undefined>;
}

function isTerminated(p: Pod): boolean {
  const phase = p.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}


/**
 * One pass over a snapshot of the pods, in turns of PODS_PER_TURN, sorting out what each rule
 * looks at. Every pod's uid is gathered only when asked for.
 */
export async function sortOutCandidates(pods: readonly Pod[], nodeKnown: (name: string) => boolean, withUids: boolean, signal: AbortSignal): Promise<Candidates> {
  const found: Candidates = { terminated: [], terminatingOnNode: [], terminatingUnscheduled: [], onMissingNodes: new Map() };
  if (withUids) found.uids = new Set();
  for (let i = 0; i < pods.length; i++) {
    if (i > 0 && i % PODS_PER_TURN === 0) {
      await nextTurn();
      signal.throwIfAborted();
    }
    const p = pods[i]!;
    found.uids?.add(p.metadata.uid);
    if (isTerminated(p)) found.terminated.push(p);
    const node = p.spec?.nodeName;
    if (p.metadata.deletionTimestamp) (node ? found.terminatingOnNode : found.terminatingUnscheduled).push(p);
    if (node && !nodeKnown(node)) {
      const onNode = found.onMissingNodes.get(node);
      if (onNode) onNode.push(p);
      else found.onMissingNodes.set(node, [p]);
    }
  }
  return found;
}

/** Evicted pods first (they are the kubelet's leftovers), then oldest, then by name. */
function byEvictionAndCreation(a: Pod, b: Pod): number {
  const ae = a.status?.reason === 'Evicted';
  const be = b.status?.reason === 'Evicted';
  if (ae !== be) return ae ? -1 : 1;
  const at = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
  const bt = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
  if (at !== bt) return at - bt;
  return (a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1;
}

export class PodGCController implements Controller {
  readonly name = 'pod-gc';
  constructor(private readonly opts: PodGCOptions = {}) {}

  start(ctx: ControllerContext, signal: AbortSignal): void {
    // Every in-flight request listens on the term's signal; many at once are expected, not a leak.
    setMaxListeners(0, signal);
    new PodGC(ctx, this.opts.checkPeriodMs ?? ctx.options.podGcPeriodMs ?? POD_GC_CHECK_PERIOD_MS).run(signal);
  }
}

class PodGC implements Reconciler {
  readonly name = 'pod-gc';
  private readonly nodes: Informer<Node>;
  private readonly pods: Informer<Pod>;
  private readonly recorder: EventRecorder;
  private readonly log: Logger;
  private readonly loop: ReconcileLoop;
  /** Node names pods point at but the informer lacks, with when that was first seen. */
  private readonly missingSince = new Map<string, number>();
  /** Pods (uids) already force-deleted that finalizers still hold: logged and recorded once. */
  private readonly forced = new Set<string>();

  constructor(private readonly ctx: ControllerContext, private readonly periodMs: number) {
    this.nodes = ctx.informers.for<Node>(PATHS.nodes);
    this.pods = ctx.informers.for<Pod>(PATHS.pods, { readOnly: true });
    this.recorder = ctx.recorder('pod-garbage-collector');
    this.log = ctx.log.child({ controller: 'pod-gc' });
    // One key, one worker: the pass is periodic, not event-driven.
    this.loop = new ReconcileLoop(this, { clock: ctx.clock, log: this.log, metrics: ctx.metrics }, 1);
  }

  run(signal: AbortSignal): void {
    void Promise.all([this.nodes.waitForSync(), this.pods.waitForSync()]).then(() => {
      if (signal.aborted) return;
      this.loop.enqueue(GC_KEY);
      void this.loop.run(signal);
    });
  }

  async reconcile(_key: string, signal: AbortSignal): Promise<ReconcileResult> {
    const found = await sortOutCandidates(this.pods.list(), (n) => this.nodes.get(n) !== undefined, this.forced.size > 0, signal);
    if (found.uids) for (const uid of this.forced) if (!found.uids.has(uid)) this.forced.delete(uid);
    if (this.ctx.options.terminatedPodGcThreshold > 0) await this.gcTerminated(found.terminated, signal);
    await this.gcTerminating(found.terminatingOnNode, signal);
    const nextQuarantineEnd = await this.gcOrphaned(found.onMissingNodes, signal);
    await this.gcUnscheduledTerminating(found.terminatingUnscheduled, signal);
    // Look again when the next quarantine ends if that is sooner than the regular period.
    const now = this.ctx.clock.now();
    const untilQuarantine = nextQuarantineEnd === undefined ? Infinity : Math.max(100, nextQuarantineEnd - now);
    return { requeueAfterMs: Math.min(this.periodMs, untilQuarantine) };
  }

  private async gcTerminated(terminated: Pod[], signal: AbortSignal): Promise<void> {
    const excess = terminated.length - this.ctx.options.terminatedPodGcThreshold;
    if (excess <= 0) return;
    this.log.info({ count: excess, threshold: this.ctx.options.terminatedPodGcThreshold }, 'garbage collecting terminated pods over the threshold');
    terminated.sort(byEvictionAndCreation);
    for (const p of terminated.slice(0, excess)) {
      if (signal.aborted) return;
      await this.forceDelete(p, undefined, signal).catch((e: unknown) => this.failed(p, e, signal));
    }
  }

  /** Non-graceful node shutdown: the admin vouches the node is off, so its pods can go now. */
  private async gcTerminating(terminating: Pod[], signal: AbortSignal): Promise<void> {
    for (const p of terminating) {
      const node = this.nodes.get(p.spec!.nodeName!);
      if (!node || isNodeReady(node) || !taintsOf(node).some((t) => t.key === TAINT_OUT_OF_SERVICE)) continue;
      if (signal.aborted) return;
      try {
        if (await this.forceDelete(p, undefined, signal)) {
          this.log.info({ pod: objectKeyOf(p), node: node.metadata.name }, 'forced deletion of terminating pod on out-of-service node');
          this.record(p, 'PodGC: node is out of service');
        }
      } catch (e) {
        this.failed(p, e, signal);
      }
    }
  }

  /** Returns when the earliest running quarantine ends, if any. */
  private async gcOrphaned(onMissingNodes: Map<string, Pod[]>, signal: AbortSignal): Promise<number | undefined> {
    const now = this.ctx.clock.now();
    const quarantine = this.ctx.options.podGcOrphanQuarantineMs;
    for (const n of onMissingNodes.keys()) if (!this.missingSince.has(n)) this.missingSince.set(n, now);
    const gone = new Set<string>();
    let nextEnd: number | undefined;
    for (const [n, since] of [...this.missingSince]) {
      if (!onMissingNodes.has(n)) {
        this.missingSince.delete(n);
        continue;
      }
      if (now - since < quarantine) {
        nextEnd = Math.min(nextEnd ?? Infinity, since + quarantine);
        continue;
      }
      // The informer lacking a Node proves nothing (it may lag or have relisted): ask the API.
      try {
        await this.ctx.client.get(`/api/v1/nodes/${n}`, { signal });
        this.missingSince.delete(n);
      } catch (e) {
        if (isStatusError(e, 'NotFound')) gone.add(n);
        else if (!signal.aborted) this.log.warn({ node: n, err: (e as Error).message }, 'could not check whether node exists; will retry');
      }
    }
    if (gone.size === 0) return nextEnd;
    const condition = disruptionTarget('DeletionByPodGC', 'PodGC: node no longer exists', this.ctx.clock);
    for (const n of gone) {
      for (const p of onMissingNodes.get(n)!) {
        if (signal.aborted) break;
        try {
          if (await this.forceDelete(p, condition, signal)) {
            this.log.info({ pod: objectKeyOf(p), node: n }, 'forced deletion of orphaned pod succeeded');
            this.record(p, 'PodGC: node no longer exists');
          }
        } catch (e) {
          this.failed(p, e, signal);
        }
      }
      this.missingSince.delete(n);
    }
    return nextEnd;
  }

  private async gcUnscheduledTerminating(terminating: Pod[], signal: AbortSignal): Promise<void> {
    for (const p of terminating) {
      if (signal.aborted) return;
      try {
        if (await this.forceDelete(p, undefined, signal)) this.log.info({ pod: objectKeyOf(p) }, 'forced deletion of unscheduled terminating pod');
      } catch (e) {
        this.failed(p, e, signal);
      }
    }
  }

  /**
   * Upstream markFailedAndDeletePodWithCondition: phase Failed (plus the condition) unless the
   * pod already finished, then DELETE with grace 0. Returns false when the pod was already gone.
   */
  private async forceDelete(p: Pod, condition: PodCondition | undefined, signal: AbortSignal): Promise<boolean> {
    const ns = p.metadata.namespace!;
    const name = p.metadata.name!;
    const uid = p.metadata.uid;
    if (!isTerminated(p)) {
      const live = await patchPodStatus(
        this.ctx.client,
        ns,
        name,
        uid,
        (cur) => {
          if (isTerminated(cur)) return undefined;
          return { phase: 'Failed', ...(condition && conditionDiffers(cur, condition) ? { conditions: [condition] } : {}) };
        },
        signal,
      );
      if (!live) return false;
    }
    try {
      await this.ctx.client.delete(podPath(ns, name), { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, ...(uid ? { preconditions: { uid } } : {}) }, { signal });
      if (uid && this.forced.has(uid)) return false;
      if (uid) this.forced.add(uid);
      return true;
    } catch (e) {
      if (isStatusError(e, 'NotFound') || isStatusError(e, 'Conflict')) return false;
      throw e;
    }
  }

  private record(p: Pod, message: string): void {
    this.recorder.event({ apiVersion: 'v1', kind: 'Pod', metadata: p.metadata }, 'Normal', 'DeletionByPodGC', message);
  }

  private failed(p: Pod, e: unknown, signal: AbortSignal): void {
    if (!signal.aborted) this.log.warn({ pod: objectKeyOf(p), err: (e as Error).message }, 'pod GC could not delete pod');
  }
}
