// Node lifecycle controller (upstream's nodelifecycle, plus N8 node deletion): notices nodes that
// stopped heartbeating, marks them Ready=Unknown and their pods not Ready, mirrors conditions into
// NoSchedule taints, adds not-ready/unreachable NoExecute taints through per-zone rate limiters
// (which the taint eviction controller then acts on), and deletes Nodes out of contact for
// --node-gc-timeout. All liveness is judged on this controller's own clock: "when did I last see
// the Lease's renewTime or the Ready heartbeat change", never the agent's timestamps.
import { setMaxListeners } from 'node:events';
import type { Node, NodeCondition, NodeStatus, Taint } from '../api/kinds/node.js';
import type { Lease } from '../api/kinds/lease.js';
import type { Pod } from '../api/kinds/pod.js';
import { isStatusError } from '../api/errors.js';
import type { Informer } from '../client/informer.js';
import { objectKeyOf } from '../client/informer.js';
import type { Logger } from '../util/log.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import type { EventRecorder } from '../controller-kit/events.js';
import { PATHS } from '../controller-kit/informers.js';
import { ReconcileLoop, type Reconciler } from '../controller-kit/reconciler.js';
import { RateLimitedTimedQueue, type TryResult } from './node-lifecycle-rate-limiter.js';
import { computeZoneState, isExcludedFromDisruption, zoneKeyOf, zoneName, type ZoneState } from './node-lifecycle-zones.js';
import { PodsByNode, patchPodStatus, podCondition, podRef } from './node-lifecycle-pods.js';
import {
  CONDITION_TAINTS,
  CONTROLLER_NO_SCHEDULE_KEYS,
  NOT_READY_NO_EXECUTE,
  TAINT_UNSCHEDULABLE,
  UNREACHABLE_NO_EXECUTE,
  hasTaint,
  sameTaint,
  swapNodeTaints,
  taintsOf,
} from './node-lifecycle-taints.js';
import { rfc3339 } from '../util/time.js';
import { jsonEqual } from '../api/kinds/json.js';

/** How often the NoExecute tainting queues are drained (upstream NodeEvictionPeriod). */
export const NODE_EVICTION_PERIOD_MS = 100;
/** Nodes whose health is checked at once in a monitor pass. */
const NODE_UPDATE_WORKERS = 8;
/** Tries per node per pass when its status write conflicts (upstream NodeHealthUpdateRetry). */
const NODE_HEALTH_UPDATE_RETRY = 5;
/** Conditions set Unknown when heartbeats stop; NetworkUnavailable belongs to the network plugin. */
const STALE_CONDITION_TYPES = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'];
const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** What the controller remembers per node, on its own clock. A new leader starts empty. */
interface NodeHealth {
  /** When a heartbeat (Ready lastHeartbeatTime or Lease renewTime change) was last seen. */
  probeTimestamp: number;
  readyTransitionTimestamp: number;
  /** The status last seen with a new heartbeat, or last written by this controller. */
  status: NodeStatus | undefined;
  /** The Lease renewTime last seen (µs). */
  leaseRenewTime?: number;
  /** The Ready status last logged, so each transition is logged once. */
  loggedReady?: string;
  /** A note that GC was held back for this node, logged once until it changes. */
  gcHeldBack?: string;
}

interface HealthResult {
  observed: NodeCondition;
  current: NodeCondition | undefined;
}

function condition(status: NodeStatus | undefined, type: string): NodeCondition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/** A (Micro)Time in microseconds: renewals within one millisecond still differ. */
function parseMicros(s: string | undefined): number | undefined {
  if (!s) return undefined;
  const m = /^(.*?)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(s);
  if (!m) return undefined;
  const base = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(base)) return undefined;
  return base * 1000 + Number((m[2] ?? '').padEnd(6, '0').slice(0, 6));
}

function nodeRef(node: Node): Node {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name: node.metadata.name!, ...(node.metadata.uid ? { uid: node.metadata.uid } : {}) } };
}

async function inParallel<T>(items: T[], workers: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const run = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(workers, items.length) }, run));
}

export class NodeLifecycleController implements Controller {
  readonly name = 'node-lifecycle';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    // Every in-flight request listens on the term's signal; many at once are expected, not a leak.
    setMaxListeners(0, signal);
    // Fresh state per leadership term: a new leader gives every node a fresh grace period.
    new NodeLifecycle(ctx).run(signal);
  }
}

class NodeLifecycle implements Reconciler {
  readonly name = 'node-lifecycle';
  private readonly nodes: Informer<Node>;
  private readonly leases: Informer<Lease>;
  private readonly pods: Informer<Pod>;
  private readonly podsByNode: PodsByNode;
  private readonly recorder: EventRecorder;
  private readonly loop: ReconcileLoop;
  private readonly health = new Map<string, NodeHealth>();
  private readonly knownNodes = new Map<string, Node>();
  private readonly zoneStates = new Map<string, ZoneState>();
  private readonly zoneTainters = new Map<string, RateLimitedTimedQueue>();
  /** Nodes whose pods could not all be marked not Ready; retried next pass. */
  private readonly nodesToRetry = new Set<string>();
  private readonly log: Logger;

  constructor(private readonly ctx: ControllerContext) {
    this.nodes = ctx.informers.for<Node>(PATHS.nodes);
    this.leases = ctx.informers.for<Lease>(PATHS.leases);
    this.pods = ctx.informers.for<Pod>(PATHS.pods, { readOnly: true });
    this.podsByNode = new PodsByNode(this.pods);
    this.recorder = ctx.recorder('node-controller');
    this.log = ctx.log.child({ controller: 'node-lifecycle' });
    this.loop = new ReconcileLoop(this, { clock: ctx.clock, log: this.log, metrics: ctx.metrics }, 4);
  }

  run(signal: AbortSignal): void {
    this.nodes.addHandlers({
      add: (n) => this.loop.enqueue(`node/${n.metadata.name}`),
      update: (_o, n) => this.loop.enqueue(`node/${n.metadata.name}`),
      delete: (n) => this.nodesToRetry.delete(n.metadata.name!),
    });
    this.pods.addHandlers({
      add: (p) => p.spec?.nodeName && this.loop.enqueue(`pod/${objectKeyOf(p)}`),
      update: (o, p) => p.spec?.nodeName && p.spec.nodeName !== o.spec?.nodeName && this.loop.enqueue(`pod/${objectKeyOf(p)}`),
    });
    void Promise.all([this.nodes.waitForSync(), this.leases.waitForSync(), this.pods.waitForSync()]).then(() => {
      if (signal.aborted) return;
      void this.loop.run(signal);
      void this.every(this.ctx.options.nodeMonitorPeriodMs, signal, 'monitor node health', (s) => this.monitorNodeHealth(s));
      void this.every(NODE_EVICTION_PERIOD_MS, signal, 'taint unhealthy nodes', (s) => this.doNoExecuteTaintingPass(s));
    });
  }

  private async every(periodMs: number, signal: AbortSignal, what: string, fn: (signal: AbortSignal) => Promise<void>): Promise<void> {
    let failing = false;
    while (!signal.aborted) {
      try {
        await fn(signal);
        failing = false;
      } catch (e) {
        if (signal.aborted) return;
        if (!failing) this.log.warn({ err: (e as Error).message }, `${what} failed; will retry`);
        failing = true;
      }
      try {
        await this.ctx.clock.sleep(periodMs, signal);
      } catch {
        return;
      }
    }
  }

  // ---- event-driven work: NoSchedule taints mirror conditions; late pods on bad nodes ----------

  async reconcile(key: string, signal: AbortSignal): Promise<void> {
    if (key.startsWith('node/')) return this.doNoScheduleTaintingPass(key.slice(5), signal);
    if (key.startsWith('pod/')) return this.processPod(key.slice(4), signal);
  }

  private async doNoScheduleTaintingPass(name: string, signal: AbortSignal): Promise<void> {
    const node = this.nodes.get(name);
    if (!node) return;
    const want: Taint[] = [];
    for (const c of node.status?.conditions ?? []) {
      const key = CONDITION_TAINTS[c.type]?.[c.status];
      if (key) want.push({ key, effect: 'NoSchedule' });
    }
    if (node.spec?.unschedulable) want.push({ key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' });
    const have = taintsOf(node).filter((t) => t.effect === 'NoSchedule' && CONTROLLER_NO_SCHEDULE_KEYS.has(t.key));
    const add = want.filter((w) => !have.some((h) => sameTaint(h, w)));
    const remove = have.filter((h) => !want.some((w) => sameTaint(h, w)));
    if (add.length === 0 && remove.length === 0) return;
    await swapNodeTaints(this.ctx.client, this.ctx.clock, name, add, remove, signal);
  }

  /** A pod bound to a node already known to be unhealthy is marked not Ready at once. */
  private async processPod(key: string, signal: AbortSignal): Promise<void> {
    const pod = this.pods.get(key);
    const nodeName = pod?.spec?.nodeName;
    if (!pod || !nodeName) return;
    const h = this.health.get(nodeName);
    if (!h || !this.nodes.get(nodeName)) return;
    const ready = condition(h.status, 'Ready');
    if (ready && ready.status !== 'True') await this.markPodsNotReady([pod], nodeName, signal);
  }

  // ---- the monitor pass --------------------------------------------------------------------

  private async monitorNodeHealth(signal: AbortSignal): Promise<void> {
    const nodes = this.nodes.list();
    const seen = new Set(nodes.map((n) => n.metadata.name!));
    for (const node of nodes) {
      const name = node.metadata.name!;
      if (!this.knownNodes.has(name)) {
        this.log.info({ node: name }, 'controller observed a new Node');
        this.recorder.event(nodeRef(node), 'Normal', 'RegisteredNode', `Node ${name} event: Registered Node ${name} in Controller`);
        this.knownNodes.set(name, node);
        this.tainterFor(zoneKeyOf(node));
        // As upstream: a node seen for the first time (by this leader) starts without our
        // NoExecute taints; they come back only after it misses a full grace period again.
        await this.markNodeAsReachable(node, signal);
      } else {
        this.knownNodes.set(name, node);
        this.tainterFor(zoneKeyOf(node));
      }
    }
    for (const [name, node] of this.knownNodes) {
      if (seen.has(name)) continue;
      this.log.info({ node: name }, 'controller observed a Node deletion');
      this.recorder.event(nodeRef(node), 'Normal', 'RemovingNode', `Node ${name} event: Removing Node ${name} from Controller`);
      this.knownNodes.delete(name);
      this.health.delete(name);
      for (const q of this.zoneTainters.values()) q.remove(name);
    }

    const zoneConditions = new Map<string, (NodeCondition | undefined)[]>();
    await inParallel(nodes, NODE_UPDATE_WORKERS, async (cached) => {
      if (signal.aborted) return;
      const name = cached.metadata.name!;
      let node = cached;
      let result: HealthResult | undefined;
      for (let attempt = 0; attempt < NODE_HEALTH_UPDATE_RETRY && !result; attempt++) {
        try {
          result = await this.tryUpdateNodeHealth(node, signal);
        } catch (e) {
          if (signal.aborted) return;
          try {
            node = await this.ctx.client.get<Node>(`/api/v1/nodes/${name}`, { signal });
          } catch {
            this.log.debug({ node: name }, 'failed while getting a Node to retry updating node health; probably it was deleted');
            return;
          }
          if (attempt === NODE_HEALTH_UPDATE_RETRY - 1) this.log.warn({ node: name, err: (e as Error).message }, 'could not update node health; no pods will be evicted this pass');
        }
      }
      if (!result) return;
      if (!isExcludedFromDisruption(node)) {
        const zone = zoneKeyOf(node);
        let list = zoneConditions.get(zone);
        if (!list) zoneConditions.set(zone, (list = []));
        list.push(result.current);
      }
      if (!result.current) return;
      await this.processTaintBaseEviction(node, result.observed, signal);
      const needsRetry = this.nodesToRetry.has(name);
      const becameNotReady = result.current.status !== 'True' && result.observed.status === 'True';
      if (becameNotReady) {
        this.recorder.event(nodeRef(node), 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
      }
      if (becameNotReady || (needsRetry && result.observed.status !== 'True')) {
        try {
          await this.markPodsNotReady(this.podsByNode.podsOn(name), name, signal);
        } catch (e) {
          if (signal.aborted) return;
          this.log.warn({ node: name, err: (e as Error).message }, 'could not mark all pods NotReady; will retry');
          this.nodesToRetry.add(name);
          return;
        }
      }
      this.nodesToRetry.delete(name);
    });
    if (signal.aborted) return;
    await this.handleDisruption(zoneConditions, nodes, signal);
    await this.deleteLostNodes(nodes, signal);
  }

  /**
   * Upstream tryUpdateNodeHealth: refresh the probe time when the Ready heartbeat or the Lease
   * renewTime changed since last seen; past the grace period, set the node's conditions Unknown.
   */
  private async tryUpdateNodeHealth(node: Node, signal: AbortSignal): Promise<HealthResult> {
    const clock = this.ctx.clock;
    const name = node.metadata.name!;
    const now = clock.now();
    let h = this.health.get(name);
    const ready = condition(node.status, 'Ready');
    let observed: NodeCondition;
    let grace: number;
    if (!ready) {
      // Never posted: a synthetic Unknown, and the (longer) startup grace period.
      const created = node.metadata.creationTimestamp ?? undefined;
      observed = { type: 'Ready', status: 'Unknown', ...(created ? { lastHeartbeatTime: created, lastTransitionTime: created } : {}) };
      grace = this.ctx.options.nodeStartupGracePeriodMs;
      // Upstream starts a never-posted node's clock at its creationTimestamp (the API server's
      // clock); we start it when this controller first sees the node, keeping to one clock.
      if (h) h.status = node.status;
      else h = { probeTimestamp: now, readyTransitionTimestamp: now, status: node.status };
    } else {
      observed = { ...ready };
      grace = this.ctx.options.nodeMonitorGracePeriodMs;
    }
    const saved = h ? condition(h.status, 'Ready') : undefined;
    if (!h) {
      this.log.debug({ node: name }, 'missing timestamp for Node; assuming now');
      h = { probeTimestamp: now, readyTransitionTimestamp: now, status: node.status };
    } else if (!saved && ready) {
      h = { ...h, probeTimestamp: now, readyTransitionTimestamp: now, status: node.status };
    } else if (saved && !ready) {
      this.log.warn({ node: name }, 'Ready condition was removed from the status of Node');
      h = { ...h, probeTimestamp: now, readyTransitionTimestamp: now, status: node.status };
    } else if (saved && ready && saved.lastHeartbeatTime !== ready.lastHeartbeatTime) {
      const transition = saved.lastTransitionTime !== ready.lastTransitionTime ? now : h.readyTransitionTimestamp;
      h = { ...h, probeTimestamp: now, readyTransitionTimestamp: transition, status: node.status };
    }
    // A renewed Lease is a heartbeat too: a node that renews but never posts status is healthy.
    const lease = this.leases.get(`${NODE_LEASE_NAMESPACE}/${name}`);
    const renew = parseMicros(lease?.spec?.renewTime);
    if (renew !== undefined && (h.leaseRenewTime === undefined || h.leaseRenewTime < renew)) {
      h = { ...h, leaseRenewTime: renew, probeTimestamp: now };
    }
    this.health.set(name, h);

    let current = ready;
    if (now > h.probeTimestamp + grace) {
      const nowStr = rfc3339(now);
      const conditions = (node.status?.conditions ?? []).map((c) => ({ ...c }));
      const changed: NodeCondition[] = [];
      for (const type of STALE_CONDITION_TYPES) {
        const c = conditions.find((x) => x.type === type);
        if (!c) {
          const created = node.metadata.creationTimestamp ?? undefined;
          const added: NodeCondition = {
            type,
            status: 'Unknown',
            reason: 'NodeStatusNeverUpdated',
            message: 'Kubelet never posted node status.',
            ...(created ? { lastHeartbeatTime: created } : {}),
            lastTransitionTime: nowStr,
          };
          conditions.push(added);
          changed.push(added);
        } else if (c.status !== 'Unknown') {
          c.status = 'Unknown';
          c.reason = 'NodeStatusUnknown';
          c.message = 'Kubelet stopped posting node status.';
          c.lastTransitionTime = nowStr;
          changed.push(c);
        }
      }
      current = conditions.find((c) => c.type === 'Ready');
      if (!jsonEqual(current, observed)) {
        await this.ctx.client.patch(
          `/api/v1/nodes/${name}/status`,
          { metadata: { resourceVersion: node.metadata.resourceVersion }, status: { conditions: changed } },
          'strategic',
          { signal },
        );
        const silentFor = Math.round((now - h.probeTimestamp) / 1000);
        this.log.info({ node: name, silentForSeconds: silentFor, was: observed.status }, 'node stopped heartbeating; Ready is now Unknown');
        this.health.set(name, { ...h, status: { ...(node.status ?? {}), conditions }, readyTransitionTimestamp: now, loggedReady: 'Unknown' });
        return { observed, current };
      }
    }
    this.logReadyTransition(name, h, ready);
    return { observed, current };
  }

  /** One line when a node's reported Ready status changes (the agent's own transitions). */
  private logReadyTransition(name: string, h: NodeHealth, ready: NodeCondition | undefined): void {
    const status = ready?.status ?? 'None';
    if (h.loggedReady === status) return;
    const first = h.loggedReady === undefined;
    h.loggedReady = status;
    if (first && status === 'True') return;
    this.log.info({ node: name, ready: status, reason: ready?.reason }, status === 'True' ? 'node is Ready' : 'node is not Ready');
  }

  private async processTaintBaseEviction(node: Node, observed: NodeCondition, signal: AbortSignal): Promise<void> {
    const name = node.metadata.name!;
    switch (observed.status) {
      case 'False':
        // not-ready and unreachable mirror one condition: swap at once, past the rate limiter.
        if (hasTaint(node, UNREACHABLE_NO_EXECUTE)) await swapNodeTaints(this.ctx.client, this.ctx.clock, name, [NOT_READY_NO_EXECUTE], [UNREACHABLE_NO_EXECUTE], signal);
        else this.markNodeForTainting(node, NOT_READY_NO_EXECUTE);
        break;
      case 'Unknown':
        if (hasTaint(node, NOT_READY_NO_EXECUTE)) await swapNodeTaints(this.ctx.client, this.ctx.clock, name, [UNREACHABLE_NO_EXECUTE], [NOT_READY_NO_EXECUTE], signal);
        else this.markNodeForTainting(node, UNREACHABLE_NO_EXECUTE);
        break;
      case 'True':
        if (await this.markNodeAsReachable(node, signal)) this.log.info({ node: name }, 'node is healthy again; removed its NoExecute taints');
        break;
    }
  }

  private markNodeForTainting(node: Node, taint: Taint): void {
    const q = this.tainterFor(zoneKeyOf(node));
    const name = node.metadata.name!;
    // Someone removed our taint while the node stayed unhealthy: let it be queued again.
    if (!hasTaint(node, taint)) q.remove(name);
    if (q.add(name, node.metadata.uid ?? '')) this.log.debug({ node: name, taint: taint.key }, 'node queued for NoExecute tainting');
  }

  /** Removes both NoExecute taints and forgets any queued tainting; true if anything was removed. */
  private async markNodeAsReachable(node: Node, signal: AbortSignal): Promise<boolean> {
    const name = node.metadata.name!;
    let removed = false;
    if (hasTaint(node, UNREACHABLE_NO_EXECUTE) || hasTaint(node, NOT_READY_NO_EXECUTE)) {
      await swapNodeTaints(this.ctx.client, this.ctx.clock, name, [], [UNREACHABLE_NO_EXECUTE, NOT_READY_NO_EXECUTE], signal);
      removed = true;
    }
    return this.tainterFor(zoneKeyOf(node)).remove(name) || removed;
  }

  private tainterFor(zone: string): RateLimitedTimedQueue {
    let q = this.zoneTainters.get(zone);
    if (!q) {
      q = new RateLimitedTimedQueue(this.ctx.options.nodeEvictionRate, this.ctx.clock);
      this.zoneTainters.set(zone, q);
      this.zoneStates.set(zone, 'Initial');
      this.log.info({ zone: zoneName(zone) }, 'initializing eviction limiter for zone');
    }
    return q;
  }

  /** Drains each zone's queue through its limiter, adding the NoExecute taint that matches Ready. */
  private async doNoExecuteTaintingPass(signal: AbortSignal): Promise<void> {
    for (const q of [...this.zoneTainters.values()]) {
      if (signal.aborted) return;
      await q.try(async (name): Promise<TryResult> => {
        const node = this.nodes.get(name);
        if (!node) return { done: true };
        const ready = condition(node.status, 'Ready');
        if (!ready) return { done: false, retryAfterMs: 50 };
        let add: Taint;
        let opposite: Taint;
        if (ready.status === 'False') [add, opposite] = [NOT_READY_NO_EXECUTE, UNREACHABLE_NO_EXECUTE];
        else if (ready.status === 'Unknown') [add, opposite] = [UNREACHABLE_NO_EXECUTE, NOT_READY_NO_EXECUTE];
        else return { done: true }; // Ready again: nothing to taint.
        try {
          if (await swapNodeTaints(this.ctx.client, this.ctx.clock, name, [add], [opposite], signal)) {
            this.log.info({ node: name, taint: `${add.key}:NoExecute`, zone: zoneName(zoneKeyOf(node)) }, 'tainted unhealthy node; its pods are evicted as their tolerations run out');
          }
          return { done: true };
        } catch (e) {
          if (!signal.aborted) this.log.warn({ node: name, err: (e as Error).message }, 'could not taint node; will retry');
          return { done: false, retryAfterMs: 0 };
        }
      });
    }
  }

  // ---- zones and disruption ----------------------------------------------------------------

  private qpsFor(state: ZoneState, zoneSize: number): number {
    const o = this.ctx.options;
    switch (state) {
      case 'Normal':
        return o.nodeEvictionRate;
      case 'PartialDisruption':
        // Large zones keep evicting slowly; small ones stop: the outage is likely not the nodes'.
        return zoneSize > o.largeClusterSizeThreshold ? o.secondaryNodeEvictionRate : 0;
      case 'FullDisruption':
        // One zone fully down while others are fine: the zone really is down, evict normally.
        return o.nodeEvictionRate;
      default:
        return o.nodeEvictionRate;
    }
  }

  private async handleDisruption(zoneConditions: Map<string, (NodeCondition | undefined)[]>, nodes: Node[], signal: AbortSignal): Promise<void> {
    const newStates = new Map<string, ZoneState>();
    let allAreFullyDisrupted = true;
    for (const [zone, conds] of zoneConditions) {
      const { state } = computeZoneState(conds, this.ctx.options.unhealthyZoneThreshold);
      if (state !== 'FullDisruption') allAreFullyDisrupted = false;
      newStates.set(zone, state);
      if (!this.zoneStates.has(zone)) this.zoneStates.set(zone, 'Initial');
    }
    let allWereFullyDisrupted = true;
    for (const [zone, state] of [...this.zoneStates]) {
      if (!zoneConditions.has(zone)) {
        this.zoneStates.delete(zone);
        continue;
      }
      if (state !== 'FullDisruption') allWereFullyDisrupted = false;
    }
    if (allAreFullyDisrupted && allWereFullyDisrupted) return;

    if (allAreFullyDisrupted) {
      // Every node went silent at once: far likelier the control plane or its network is broken
      // than the whole fleet. Evict nothing, and take back the NoExecute taints already added.
      this.log.warn('controller detected that all Nodes are not-Ready; entering master disruption mode');
      for (const node of nodes) {
        try {
          await this.markNodeAsReachable(node, signal);
        } catch (e) {
          this.log.warn({ node: node.metadata.name, err: (e as Error).message }, 'failed to remove taints from Node');
        }
      }
      for (const [zone] of this.zoneStates) {
        this.tainterFor(zone).swapLimiter(0);
        this.zoneStates.set(zone, 'FullDisruption');
      }
      return;
    }
    if (allWereFullyDisrupted) {
      this.log.info('controller detected that some Nodes are Ready; exiting master disruption mode');
      // Every node gets a fresh grace period: their silence was likely ours.
      const now = this.ctx.clock.now();
      for (const node of nodes) {
        const h = this.health.get(node.metadata.name!);
        if (h) this.health.set(node.metadata.name!, { ...h, probeTimestamp: now, readyTransitionTimestamp: now });
      }
      for (const [zone] of this.zoneStates) {
        const state = newStates.get(zone)!;
        this.tainterFor(zone).swapLimiter(this.qpsFor(state, zoneConditions.get(zone)?.length ?? 0));
        this.zoneStates.set(zone, state);
      }
      return;
    }
    for (const [zone, old] of [...this.zoneStates]) {
      const state = newStates.get(zone)!;
      if (old === state) continue;
      const size = zoneConditions.get(zone)?.length ?? 0;
      const qps = this.qpsFor(state, size);
      this.log.info({ zone: zoneName(zone), state, was: old, nodes: size, evictionQps: qps }, 'zone is now in a new state');
      this.tainterFor(zone).swapLimiter(qps);
      this.zoneStates.set(zone, state);
    }
  }

  // ---- pods ----------------------------------------------------------------------------------

  /** Upstream MarkPodsNotReady: Ready=False on the node's pods, so they leave Service endpoints. */
  private async markPodsNotReady(pods: Pod[], nodeName: string, signal: AbortSignal): Promise<void> {
    const errors: string[] = [];
    const now = rfc3339(this.ctx.clock.now());
    for (const pod of pods) {
      if (pod.spec?.nodeName !== nodeName) continue;
      const ready = podCondition(pod, 'Ready');
      if (!ready || ready.status === 'False') continue;
      try {
        const updated = await patchPodStatus(
          this.ctx.client,
          pod.metadata.namespace!,
          pod.metadata.name!,
          pod.metadata.uid,
          (live) => {
            const c = podCondition(live, 'Ready');
            if (!c || c.status === 'False') return undefined;
            return { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: now }] };
          },
          signal,
        );
        if (updated) this.recorder.event(podRef(updated), 'Warning', 'NodeNotReady', 'Node is not ready');
      } catch (e) {
        errors.push(`${objectKeyOf(pod)}: ${(e as Error).message}`);
      }
    }
    if (errors.length > 0) throw new Error(`could not mark pods NotReady: ${errors.join('; ')}`);
  }

  // ---- N8: deleting Nodes out of contact for long ---------------------------------------------

  /**
   * Deletes a Node whose heartbeats this controller has not seen for --node-gc-timeout, only while
   * its zone is Normal: never in partial or full disruption, so a control-plane partition cannot
   * delete the fleet. Its Lease goes with it (owner reference); pod GC then frees its pods.
   */
  private async deleteLostNodes(nodes: Node[], signal: AbortSignal): Promise<void> {
    const timeout = this.ctx.options.nodeGcTimeoutMs;
    if (!(timeout > 0)) return;
    const now = this.ctx.clock.now();
    for (const node of nodes) {
      if (signal.aborted) return;
      const name = node.metadata.name!;
      const h = this.health.get(name);
      if (!h || condition(h.status, 'Ready')?.status !== 'Unknown') continue;
      const silentMs = now - h.probeTimestamp;
      if (silentMs < timeout) continue;
      const zone = zoneKeyOf(node);
      const state = this.zoneStates.get(zone);
      if (state !== 'Normal') {
        const note = `zone ${zoneName(zone)} is ${state ?? 'unknown'}`;
        if (h.gcHeldBack !== note) this.log.warn({ node: name, zoneState: state }, 'node out of contact past node-gc-timeout, but not deleting it: its zone is disrupted');
        h.gcHeldBack = note;
        continue;
      }
      try {
        await this.deleteLostNode(node, h, silentMs, signal);
      } catch (e) {
        if (!signal.aborted) this.log.warn({ node: name, err: (e as Error).message }, 'could not delete lost node; will retry');
      }
    }
  }

  private async deleteLostNode(node: Node, h: NodeHealth, silentMs: number, signal: AbortSignal): Promise<void> {
    const name = node.metadata.name!;
    const client = this.ctx.client;
    // The informer may lag: a live read of the Lease has the last word on "no heartbeat".
    try {
      const lease = await client.get<Lease>(`/apis/coordination.k8s.io/v1/namespaces/${NODE_LEASE_NAMESPACE}/leases/${name}`, { signal });
      const renew = parseMicros(lease.spec?.renewTime);
      if (renew !== undefined && (h.leaseRenewTime === undefined || renew > h.leaseRenewTime)) {
        this.health.set(name, { ...h, leaseRenewTime: renew, probeTimestamp: this.ctx.clock.now() });
        return;
      }
    } catch (e) {
      if (!isStatusError(e, 'NotFound')) throw e;
    }
    let live: Node;
    try {
      live = await client.get<Node>(`/api/v1/nodes/${name}`, { signal });
    } catch (e) {
      if (isStatusError(e, 'NotFound')) return;
      throw e;
    }
    if (live.metadata.uid !== node.metadata.uid || condition(live.status, 'Ready')?.status !== 'Unknown') return;
    const silentFor = Math.round(silentMs / 1000);
    this.log.warn({ node: name, silentForSeconds: silentFor }, 'deleting Node: out of contact longer than node-gc-timeout');
    this.recorder.event(nodeRef(live), 'Normal', 'DeletingNode', `Deleting Node ${name}: no heartbeat for ${silentFor}s (node-gc-timeout)`);
    try {
      await client.delete(`/api/v1/nodes/${name}`, { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: live.metadata.uid } }, { signal });
    } catch (e) {
      if (!isStatusError(e, 'NotFound') && !isStatusError(e, 'Conflict')) throw e;
    }
  }
}
