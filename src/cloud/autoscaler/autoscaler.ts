// The cluster autoscaler (kubernetes/autoscaler's cluster-autoscaler, its flags and defaults),
// leader-elected with the other controllers. Every --scan-interval:
//  - instances that never registered a Node (or stopped having one) for --max-node-provision-time
//    are deleted, and a group whose new instances did not register backs off: no machine is left
//    running without a Node;
//  - pods the scheduler could not place grow the group the expander picks, within its maximum;
//  - nodes under --scale-down-utilization-threshold whose pods fit elsewhere, unneeded for
//    --scale-down-unneeded-time, are tainted ToBeDeletedByClusterAutoscaler, drained through the
//    eviction API (PodDisruptionBudgets hold it back) and their instances deleted;
//  - kube-system/cluster-autoscaler-status says where it stands.
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { isNodeReady, type Node } from '../../api/kinds/node.js';
import { isDaemonSetPod, isTerminal, type Pod } from '../../api/kinds/pod.js';
import type { KubeObject } from '../../api/types.js';
import { isStatusError } from '../../api/errors.js';
import { evictAll } from '../../client/eviction.js';
import type { EventRecorder } from '../../controller-kit/events.js';
import { PATHS } from '../../controller-kit/informers.js';
import type { Controller, ControllerContext } from '../../controller-kit/manager.js';
import { errorText } from '../../util/error-text.js';
import type { Logger } from '../../util/log.js';
import { rfc3339 } from '../../util/time.js';
import type { CloudProvider, NodeGroup } from '../provider.js';
import { autoscalerMetrics, type AutoscalerMetrics } from './metrics.js';
import { nodeReadiness, type NodeReadiness } from './readiness.js';
import { filterOutSchedulable, nodeInfoWith, planScaleUp, scaleDownBlocker, scaleDownCandidates, type Expander, type GroupSnapshot, type NodeSnapshot } from './plan.js';

export interface AutoscalerGroup {
  name: string;
  min: number;
  max: number;
}

export interface AutoscalerOptions {
  groups: AutoscalerGroup[];
  scanIntervalMs: number;
  expander: Expander;
  scaleDownUnneededMs: number;
  scaleDownDelayAfterAddMs: number;
  scaleDownUtilizationThreshold: number;
  maxNodeProvisionMs: number;
  maxGracefulTerminationSec: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  maxTotalUnreadyPercentage: number;
  okTotalUnreadyCount: number;
  skipNodesWithLocalStorage: boolean;
  /**
   * Remove an instance that has had no Node past the provision time even when that takes its
   * group below its minimum. Upstream's default is false, which leaves such a machine running
   * for good in a group at its minimum (a zombie); skiff's is true: the machine is replaced, so
   * none is left without a Node.
   */
  forceDeleteUnregisteredNodes: boolean;
}

export const AUTOSCALER_DEFAULTS: Omit<AutoscalerOptions, 'groups'> = {
  scanIntervalMs: 10_000,
  expander: 'least-waste',
  scaleDownUnneededMs: 600_000,
  scaleDownDelayAfterAddMs: 600_000,
  scaleDownUtilizationThreshold: 0.5,
  maxNodeProvisionMs: 900_000,
  maxGracefulTerminationSec: 600,
  initialBackoffMs: 300_000,
  maxBackoffMs: 1_800_000,
  maxTotalUnreadyPercentage: 45,
  okTotalUnreadyCount: 3,
  skipNodesWithLocalStorage: true,
  forceDeleteUnregisteredNodes: true,
};

export const TO_BE_DELETED_TAINT = 'ToBeDeletedByClusterAutoscaler';
const STATUS_PATH = '/api/v1/namespaces/kube-system/configmaps/cluster-autoscaler-status';
const PRIORITY_PATH = '/api/v1/namespaces/kube-system/configmaps/cluster-autoscaler-priority-expander';

/** Upstream's cluster health: unready nodes within --ok-total-unready-count or --max-total-unready-percentage. */
export function clusterHealthy(total: number, unready: number, o: Pick<AutoscalerOptions, 'maxTotalUnreadyPercentage' | 'okTotalUnreadyCount'>): boolean {
  return unready <= o.okTotalUnreadyCount || unready <= (total * o.maxTotalUnreadyPercentage) / 100;
}

/** `MIN:MAX:GROUP`, as --nodes takes it. */
export function parseNodesFlag(v: string): AutoscalerGroup {
  const m = /^(\d+):(\d+):([a-z0-9]([a-z0-9-]*[a-z0-9])?)$/.exec(v);
  if (!m || Number(m[1]) > Number(m[2])) throw new Error(`--nodes ${v}: use MIN:MAX:GROUP with MIN <= MAX`);
  return { min: Number(m[1]), max: Number(m[2]), name: m[3]! };
}


function isUnschedulable(p: Pod): boolean {
  return !p.spec?.nodeName && !p.metadata.deletionTimestamp && (p.status?.conditions ?? []).some((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable');
}

/** An instance and Node that do not correspond one to one: `node` null for an instance without a Node. */
interface Unmatched {
  instance: string;
  node: string | null;
  since: string;
}

interface GroupState {
  backoffUntil?: number;
  backoffMs?: number;
}

export class ClusterAutoscaler implements Controller {
  readonly name = 'cluster-autoscaler';
  constructor(
    private readonly cloud: CloudProvider,
    private readonly opts: AutoscalerOptions,
  ) {}

  start(ctx: ControllerContext, signal: AbortSignal): void {
    new AutoscalerLoop(ctx, this.cloud, this.opts).run(signal);
  }
}

class AutoscalerLoop {
  private readonly log: Logger;
  private readonly recorder: EventRecorder;
  /** Instance id → when it was first seen without a Node. */
  private readonly unregisteredSince = new Map<string, number>();
  /** Long-unregistered instances left alone at their group's minimum (logged once each). */
  private readonly keptAtMin = new Set<string>();
  /** Instance ids that have had a Node: one without a Node now lost it rather than never booted. */
  private readonly registered = new Set<string>();
  /** Node name → since when it has been unneeded. */
  private readonly unneededSince = new Map<string, number>();
  private readonly groupState = new Map<string, GroupState>();
  /** Pod uid → the last reason it could not be helped, so NotTriggerScaleUp is said once per reason. */
  private readonly told = new Map<string, string>();
  private readonly deleting = new Set<string>();
  private lastScaleUp = 0;
  private badPriorities = false;
  private healthy = true;
  private status: Record<string, unknown> = {};
  private readonly metrics?: AutoscalerMetrics;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly cloud: CloudProvider,
    private readonly opts: AutoscalerOptions,
  ) {
    this.log = ctx.log.child({ controller: 'cluster-autoscaler' });
    this.recorder = ctx.recorder('cluster-autoscaler');
    if (ctx.metrics) this.metrics = autoscalerMetrics(ctx.metrics.registry);
  }

  run(signal: AbortSignal): void {
    const nodes = this.ctx.informers.for<Node>(PATHS.nodes);
    const pods = this.ctx.informers.for<Pod>(PATHS.pods, { readOnly: true });
    const pdbs = this.ctx.informers.for(PATHS.pdbs);
    void (async () => {
      await Promise.all([nodes.waitForSync(), pods.waitForSync(), pdbs.waitForSync()]);
      let failing = false;
      while (!signal.aborted) {
        try {
          await this.timed('main', () => this.loop(nodes.list(), pods.list(), pdbs.list(), signal));
          if (failing) this.log.info('autoscaling again');
          failing = false;
        } catch (e) {
          this.metrics?.errors.inc({ type: 'loop' });
          if (!failing) this.log.warn({ err: errorText(e) }, 'autoscaler loop failed; retrying every scan interval');
          failing = true;
        }
        await this.ctx.clock.sleep(this.opts.scanIntervalMs, signal).catch(() => {});
      }
    })();
  }

  private async timed<T>(fn: 'main' | 'scaleUp' | 'scaleDown', body: () => Promise<T>): Promise<T> {
    const end = this.metrics?.functionDuration.startTimer({ function: fn });
    try {
      return await body();
    } finally {
      end?.();
    }
  }

  private managed(): { spec: AutoscalerGroup; group: NodeGroup }[] {
    const byId = new Map(this.cloud.nodeGroups().map((g) => [g.id(), g]));
    return this.opts.groups.flatMap((spec) => {
      const group = byId.get(spec.name);
      return group ? [{ spec, group }] : [];
    });
  }

  private async loop(nodes: Node[], pods: Pod[], pdbs: KubeObject[], signal: AbortSignal): Promise<void> {
    await this.cloud.refresh();
    const now = this.ctx.clock.now();
    const managed = this.managed();
    const byProvider = new Map(nodes.filter((n) => n.spec?.providerID).map((n) => [n.spec!.providerID!, n]));
    const readiness = new Map(nodes.map((n) => [n, nodeReadiness(n, now, this.opts.maxNodeProvisionMs)]));
    const snapshots: GroupSnapshot[] = [];
    const unregistered: Record<string, number> = {};
    let longUnregistered = 0;
    const unmatched: Unmatched[] = [];
    const known = new Set<string>();
    for (const { spec, group } of managed) {
      const instances = await group.nodes();
      let size = instances.filter((i) => i.status !== 'Deleting').length;
      let upcoming = 0;
      for (const inst of instances) {
        known.add(inst.id);
        if (inst.status === 'Deleting') continue;
        const node = byProvider.get(inst.id);
        if (node) {
          this.registered.add(inst.id);
          this.unregisteredSince.delete(inst.id);
          this.keptAtMin.delete(inst.id);
          // Registered but still starting: it takes pods soon, as one still booting does.
          if (readiness.get(node) === 'notStarted') upcoming++;
          continue;
        }
        const since = this.unregisteredSince.get(inst.id) ?? now;
        this.unregisteredSince.set(inst.id, since);
        unmatched.push({ instance: inst.id, node: null, since: rfc3339(since) });
        if (now - since < this.opts.maxNodeProvisionMs) {
          upcoming++;
          continue;
        }
        longUnregistered++;
        if (size <= spec.min && !this.opts.forceDeleteUnregisteredNodes) {
          if (!this.keptAtMin.has(inst.id)) this.log.info({ group: spec.name, instance: inst.id, minSize: spec.min }, 'an instance has no Node, but its group is at its minimum size: keeping it (--force-delete-unregistered-nodes=false)');
          this.keptAtMin.add(inst.id);
          continue;
        }
        size--;
        await this.deleteUnregistered(spec.name, group, inst.id, !this.registered.has(inst.id), now);
      }
      unregistered[spec.name] = upcoming;
      const st = this.groupState.get(spec.name) ?? {};
      snapshots.push({ id: spec.name, min: spec.min, max: spec.max, target: instances.filter((i) => i.status !== 'Deleting').length, template: await group.templateNode(), backedOff: (st.backoffUntil ?? 0) > now });
    }
    // What is remembered of instances the cloud no longer lists goes with them.
    for (const id of this.unregisteredSince.keys()) if (!known.has(id)) this.unregisteredSince.delete(id);
    for (const id of this.keptAtMin) if (!known.has(id)) this.keptAtMin.delete(id);
    if (this.opts.expander === 'priority') {
      const priorities = await this.priorities(signal);
      for (const g of snapshots) g.priority = priorities(g.id);
    }

    // A Node of a managed group whose instance the cloud no longer lists (the cloud node lifecycle
    // controller deletes it once it is not Ready).
    const groupIds = new Set(managed.map((m) => m.spec.name));
    for (const n of nodes) {
      const id = n.spec?.providerID;
      if (!id || known.has(id) || !groupIds.has(this.cloud.nodeGroupForNode(n)?.id() ?? '')) continue;
      unmatched.push({ instance: id, node: n.metadata.name!, since: n.metadata.creationTimestamp ?? rfc3339(now) });
    }

    const podsByNode = new Map<string, Pod[]>();
    for (const p of pods) {
      if (!p.spec?.nodeName || !!isTerminal(p)) continue;
      const list = podsByNode.get(p.spec.nodeName) ?? [];
      list.push(p);
      podsByNode.set(p.spec.nodeName, list);
    }
    // As upstream: with too much of the cluster unready (a network or control-plane problem, most
    // likely) neither adding nor removing machines helps, and removing could make it worse. Nodes
    // still starting are not unready; machines long without a Node are.
    const counts = { ready: 0, notStarted: 0, unready: 0 };
    for (const r of readiness.values()) counts[r]++;
    const unready = counts.unready + longUnregistered;
    if (!clusterHealthy(nodes.length + longUnregistered, unready, this.opts)) {
      if (this.healthy) this.log.warn({ unready, total: nodes.length }, 'too many nodes unready: not scaling until they recover');
      this.healthy = false;
      this.metrics?.safeToAutoscale.set(0);
      await this.writeStatus(nodes, counts, snapshots, unregistered, longUnregistered, unmatched, 'NoActivity', 'NoCandidates', now, signal);
      return;
    }
    if (!this.healthy) this.log.info({ unready, total: nodes.length }, 'nodes recovered: scaling again');
    this.healthy = true;
    const scaleUp = await this.timed('scaleUp', () => this.scaleUp(pods, nodes, podsByNode, snapshots, unregistered, managed));
    const scaleDown = scaleUp ? 'NoCandidates' : await this.timed('scaleDown', () => this.scaleDown(nodes, podsByNode, pdbs, snapshots, managed, now, signal));
    await this.writeStatus(nodes, counts, snapshots, unregistered, longUnregistered, unmatched, scaleUp ? 'InProgress' : 'NoActivity', scaleDown, now, signal);
  }

  /**
   * The priority expander's table, as upstream reads it: ConfigMap
   * kube-system/cluster-autoscaler-priority-expander, data.priorities a YAML map of priority to
   * group-name regexps; a group takes the highest priority whose regexp matches it (none: 0).
   */
  private async priorities(signal: AbortSignal): Promise<(group: string) => number> {
    const cm = await this.ctx.client.get<KubeObject & { data?: Record<string, string> }>(PRIORITY_PATH, { signal }).catch(() => undefined);
    const table: [number, RegExp[]][] = [];
    try {
      const parsed = parseYaml(cm?.data?.['priorities'] ?? '') as Record<string, unknown> | null;
      for (const [k, v] of Object.entries(parsed ?? {})) {
        if (!Array.isArray(v) || !Number.isFinite(Number(k))) continue;
        table.push([Number(k), v.filter((x): x is string => typeof x === 'string').map((x) => new RegExp(`^(?:${x})$`))]);
      }
    } catch (e) {
      if (!this.badPriorities) this.log.warn({ err: errorText(e) }, 'the priority expander ConfigMap cannot be read; every group has priority 0');
      this.badPriorities = true;
      return () => 0;
    }
    this.badPriorities = false;
    return (group) => Math.max(0, ...table.filter(([, res]) => res.some((r) => r.test(group))).map(([p]) => p));
  }

  /** An instance without a Node past the provision time: replaced, as upstream removes long-unregistered nodes. */
  private async deleteUnregistered(groupName: string, group: NodeGroup, providerID: string, neverRegistered: boolean, now: number): Promise<void> {
    this.log.info({ group: groupName, instance: providerID, neverRegistered }, 'deleting an instance that has no Node');
    try {
      await group.deleteNodes([{ apiVersion: 'v1', kind: 'Node', metadata: { name: providerID }, spec: { providerID } } as Node]);
      this.unregisteredSince.delete(providerID);
      this.metrics?.unregisteredRemoved.inc();
      await this.statusEvent('Normal', 'DeleteUnregistered', `Removed unregistered node ${providerID}`);
    } catch (e) {
      await this.statusEvent('Warning', 'DeleteUnregisteredFailed', `Failed to remove node ${providerID}: ${errorText(e)}`);
    }
    if (neverRegistered) {
      // A scale-up whose machine never came up: do not keep asking the group for more at once.
      const st = this.groupState.get(groupName) ?? {};
      st.backoffMs = Math.min(this.opts.maxBackoffMs, st.backoffMs ? st.backoffMs * 2 : this.opts.initialBackoffMs);
      st.backoffUntil = now + st.backoffMs;
      this.groupState.set(groupName, st);
      this.log.info({ group: groupName, backoffMs: st.backoffMs }, 'node group backing off: its new instance never registered');
      this.metrics?.failedScaleUps.inc({ reason: 'timeout' });
      await this.statusEvent('Warning', 'ScaleUpTimedOut', `Nodes added to group ${groupName} failed to register within ${Math.round(this.opts.maxNodeProvisionMs / 1000)}s`);
    }
  }

  private async scaleUp(pods: Pod[], nodes: Node[], podsByNode: Map<string, Pod[]>, groups: GroupSnapshot[], upcoming: Record<string, number>, managed: { spec: AutoscalerGroup; group: NodeGroup }[]): Promise<boolean> {
    let pending = pods.filter(isUnschedulable);
    this.metrics?.unschedulablePods.set(pending.length);
    if (pending.length === 0) return false;
    // Pods that fit where nodes already are wait for the scheduler, not for a new machine.
    const usable = nodes.filter((n) => isNodeReady(n) && !n.metadata.deletionTimestamp && !(n.spec?.taints ?? []).some((t) => t.key === TO_BE_DELETED_TAINT));
    pending = filterOutSchedulable(pending, usable.map((n) => nodeInfoWith(n, podsByNode.get(n.metadata.name!) ?? [])));
    if (pending.length === 0) return true;
    // Pods the instances still booting will take do not ask for more.
    for (const g of groups) {
      const booting = upcoming[g.id] ?? 0;
      if (booting === 0 || pending.length === 0) continue;
      const fit = planScaleUp(pending, [{ ...g, target: 0, max: booting, backedOff: false }], 'most-pods');
      const taken = new Set((fit.plan?.pods ?? []).map((p) => p.metadata.uid));
      pending = pending.filter((p) => !taken.has(p.metadata.uid));
    }
    if (pending.length === 0) return true;
    const result = planScaleUp(pending, groups, this.opts.expander);
    for (const { pod, reason } of result.unhelpable) {
      if (this.told.get(pod.metadata.uid!) === reason) continue;
      this.told.set(pod.metadata.uid!, reason);
      this.recorder.event({ ...pod, apiVersion: 'v1', kind: 'Pod' }, 'Normal', 'NotTriggerScaleUp', `pod didn't trigger scale-up: ${reason}`);
    }
    if (!result.plan) return false;
    const { group: id, count, pods: helped } = result.plan;
    const g = managed.find((m) => m.spec.name === id)!;
    const before = groups.find((x) => x.id === id)!.target;
    this.log.info({ group: id, from: before, to: before + count, pods: helped.length }, 'scaling up');
    try {
      await g.group.increaseSize(count);
    } catch (e) {
      this.metrics?.failedScaleUps.inc({ reason: 'cloudProviderError' });
      throw e;
    }
    this.metrics?.scaledUpNodes.inc(count);
    this.lastScaleUp = this.ctx.clock.now();
    await this.statusEvent('Normal', 'ScaledUpGroup', `Scale-up: setting group ${id} size to ${before + count} instead of ${before} (max: ${g.spec.max})`);
    for (const p of helped) this.recorder.event({ ...p, apiVersion: 'v1', kind: 'Pod' }, 'Normal', 'TriggeredScaleUp', `pod triggered scale-up: [{${id} ${before}->${before + count} (max: ${g.spec.max})}]`);
    return true;
  }

  private async scaleDown(nodes: Node[], podsByNode: Map<string, Pod[]>, pdbs: KubeObject[], groups: GroupSnapshot[], managed: { spec: AutoscalerGroup; group: NodeGroup }[], now: number, signal: AbortSignal): Promise<string> {
    const snapshots: NodeSnapshot[] = [];
    for (const n of nodes) {
      const g = this.cloud.nodeGroupForNode(n);
      if (!g || !managed.some((m) => m.spec.name === g.id()) || !isNodeReady(n) || n.metadata.deletionTimestamp) continue;
      const on = podsByNode.get(n.metadata.name!) ?? [];
      const blocked = scaleDownBlocker(n, on, pdbs, this.opts) ?? ((n.spec?.taints ?? []).some((t) => t.key === TO_BE_DELETED_TAINT) ? 'being deleted' : undefined);
      snapshots.push({ node: n, group: g.id(), movable: on.filter((p) => !isDaemonSetPod(p)), ...(blocked ? { blocked } : {}) });
    }
    const sizes = new Map(groups.map((g) => [g.id, { min: g.min, target: g.target }]));
    const candidates = scaleDownCandidates(snapshots, podsByNode, sizes, this.opts.scaleDownUtilizationThreshold);
    const names = new Set(candidates.map((c) => c.metadata.name!));
    for (const name of [...this.unneededSince.keys()]) if (!names.has(name)) this.unneededSince.delete(name);
    for (const name of names) if (!this.unneededSince.has(name)) this.unneededSince.set(name, now);
    if (now - this.lastScaleUp < this.opts.scaleDownDelayAfterAddMs) return candidates.length ? 'CandidatesPresent' : 'NoCandidates';
    for (const node of candidates) {
      const name = node.metadata.name!;
      if (now - (this.unneededSince.get(name) ?? now) < this.opts.scaleDownUnneededMs || this.deleting.has(name)) continue;
      const group = managed.find((m) => m.spec.name === this.cloud.nodeGroupForNode(node)?.id())!.group;
      this.deleting.add(name);
      void this.removeNode(node, group, signal).finally(() => this.deleting.delete(name));
    }
    return candidates.length ? 'CandidatesPresent' : 'NoCandidates';
  }

  /** Taint, drain through evictions (PDBs honoured, retried up to the graceful bound), then delete the instance. */
  private async removeNode(node: Node, group: NodeGroup, signal: AbortSignal): Promise<void> {
    const name = node.metadata.name!;
    const path = `/api/v1/nodes/${encodeURIComponent(name)}`;
    try {
      const taints = [...(node.spec?.taints ?? []).filter((t) => t.key !== TO_BE_DELETED_TAINT), { key: TO_BE_DELETED_TAINT, value: String(Math.floor(this.ctx.clock.now() / 1000)), effect: 'NoSchedule' as const }];
      await this.ctx.client.patch(path, { metadata: { resourceVersion: node.metadata.resourceVersion }, spec: { taints } }, 'merge', { signal });
      this.log.info({ node: name, group: group.id() }, 'scaling down: node tainted, draining');
      this.recorder.event({ ...node, apiVersion: 'v1', kind: 'Node' }, 'Normal', 'ScaleDown', 'marked the node as toBeDeleted/unschedulable');
      // The agent's own drain: evictions through the API (budgets honoured, retried), until the pods are gone.
      const podsOn = (): Pod[] => this.ctx.informers.for<Pod>(PATHS.pods, { readOnly: true }).list().filter((p) => p.spec?.nodeName === name);
      const bound = new AbortController();
      const timer = this.ctx.clock.setTimeout(() => bound.abort(), this.opts.maxGracefulTerminationSec * 1000);
      try {
        await evictAll({ api: this.ctx.client, clock: this.ctx.clock, log: this.log, pods: podsOn, signal: AbortSignal.any([signal, bound.signal]) });
      } finally {
        timer.cancel();
      }
      if (signal.aborted) return;
      const left = podsOn().filter((p) => !isDaemonSetPod(p) && !isTerminal(p));
      if (left.length > 0) throw new Error(`pods still not evicted after ${this.opts.maxGracefulTerminationSec}s: ${left.map((p) => p.metadata.name).join(', ')}`);
      await group.deleteNodes([node]);
      this.metrics?.scaledDownNodes.inc();
      this.unneededSince.delete(name);
      this.log.info({ node: name, group: group.id() }, 'scaled down: instance deleted');
      await this.statusEvent('Normal', 'ScaleDown', `Scale-down: removing node ${name}, utilization below ${this.opts.scaleDownUtilizationThreshold}`);
    } catch (e) {
      if (signal.aborted) return;
      this.log.warn({ node: name, err: errorText(e) }, 'scale-down failed; the node stays');
      this.recorder.event({ ...node, apiVersion: 'v1', kind: 'Node' }, 'Warning', 'ScaleDownFailed', `failed to drain the node: ${errorText(e)}`);
      // Give the node back: it is not going after all.
      try {
        const fresh = await this.ctx.client.get<Node>(path, { signal });
        await this.ctx.client.patch(path, { metadata: { resourceVersion: fresh.metadata.resourceVersion }, spec: { taints: (fresh.spec?.taints ?? []).filter((t) => t.key !== TO_BE_DELETED_TAINT) } }, 'merge', { signal });
      } catch {
        /* next loop sees it */
      }
    }
  }

  private async statusEvent(type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const cm = await this.ctx.client.get<KubeObject>(STATUS_PATH).catch(() => undefined);
    if (cm) this.recorder.event({ ...cm, apiVersion: 'v1', kind: 'ConfigMap' }, type, reason, message);
  }

  private async writeStatus(nodes: Node[], counts: Record<NodeReadiness, number>, groups: GroupSnapshot[], unregistered: Record<string, number>, longUnregistered: number, unmatched: Unmatched[], scaleUp: string, scaleDown: string, now: number, signal: AbortSignal): Promise<void> {
    const upcoming = Object.values(unregistered).reduce((a, b) => a + b, 0);
    if (this.metrics) {
      this.metrics.safeToAutoscale.set(this.healthy ? 1 : 0);
      this.metrics.nodesCount.set({ state: 'ready' }, counts.ready);
      this.metrics.nodesCount.set({ state: 'unready' }, counts.unready);
      this.metrics.nodesCount.set({ state: 'notStarted' }, counts.notStarted);
      this.metrics.nodesCount.set({ state: 'unregistered' }, upcoming - counts.notStarted);
      this.metrics.nodesCount.set({ state: 'longUnregistered' }, longUnregistered);
    }
    const status = {
      time: rfc3339(now),
      autoscalerStatus: 'Running',
      clusterWide: {
        health: { status: this.healthy ? 'Healthy' : 'Unhealthy', nodeCounts: { registered: { total: nodes.length, ready: counts.ready, notStarted: counts.notStarted, unready: counts.unready, beingDeleted: this.deleting.size }, longUnregistered, unregistered: upcoming - counts.notStarted } },
        scaleUp: { status: scaleUp },
        scaleDown: { status: scaleDown, candidates: this.unneededSince.size },
        // Every instance without its Node and Node without its instance, and since when: at rest, none.
        unmatched,
      },
      nodeGroups: groups.map((g) => {
        const st = this.groupState.get(g.id);
        const backedOff = (st?.backoffUntil ?? 0) > now;
        return {
          name: g.id,
          health: { status: 'Healthy', cloudProviderTarget: g.target, minSize: g.min, maxSize: g.max, nodeCounts: { unregistered: unregistered[g.id] ?? 0 } },
          scaleUp: { status: backedOff ? 'Backoff' : g.target >= g.max ? 'NoActivity' : scaleUp, ...(backedOff ? { backoffInfo: { until: rfc3339(st!.backoffUntil!) } } : {}) },
        };
      }),
    };
    const comparable = JSON.stringify({ ...status, time: '' });
    if (comparable === JSON.stringify({ ...this.status, time: '' })) return;
    this.status = status;
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cluster-autoscaler-status', namespace: 'kube-system', annotations: { 'cluster-autoscaler.kubernetes.io/last-updated': status.time } }, data: { status: toYaml(status) } };
    try {
      await this.ctx.client.patch(STATUS_PATH, body, 'merge', { signal });
    } catch (e) {
      if (!isStatusError(e, 'NotFound')) throw e;
      await this.ctx.client.create('/api/v1/namespaces/kube-system/configmaps', body, { signal });
    }
  }
}
