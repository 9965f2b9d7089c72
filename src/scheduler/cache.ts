// The scheduler's view of the cluster: a NodeInfo per node with the pods bound to it, plus pods
// the scheduler has *assumed* onto a node while their binding is in flight. Assuming is what lets
// decisions run back to back: the next pod already sees the last one's resources, without waiting
// for the binding to come back through the watch (upstream's scheduler cache does the same).
import type { Node } from '../api/kinds/node.js';
import type { Pod } from '../api/kinds/pod.js';
import { NodeInfo } from './node-info.js';
import { podInfoOf, type PodInfo } from './pod-info.js';

interface PodRecord {
  info: PodInfo;
  nodeName: string;
  /** Placed by this scheduler and not yet seen bound through the informer. */
  assumed: boolean;
  /** When the binding call returned successfully (assumed pods only). */
  boundAt?: number;
}

export class SchedulerCache {
  private readonly nodes = new Map<string, NodeInfo>();
  private readonly pods = new Map<string, PodRecord>();
  /**
   * Spread group → the nodes running its pods, with counts. Scoring reads one group per decision,
   * so it touches only the nodes that matter instead of asking every node about the group.
   */
  private readonly groups = new Map<string, Map<NodeInfo, number>>();
  private ordered: NodeInfo[] = [];
  private orderedStale = true;
  private zoned = 0;
  /** How many placed pods have each priority: preemption asks whether anything ranks below a pod. */
  private readonly priorities = new Map<number, number>();

  /** Nodes that exist (have a Node object), in a stable order for round-robin sampling. */
  nodeList(): readonly NodeInfo[] {
    if (this.orderedStale) {
      this.ordered = [...this.nodes.values()].filter((n) => n.node !== undefined);
      this.orderedStale = false;
    }
    return this.ordered;
  }

  /** Whether any node carries a zone label. */
  get hasZones(): boolean {
    return this.zoned > 0;
  }

  /** The lowest priority of any placed pod; undefined when no pod is placed. */
  lowestPriority(): number | undefined {
    let low: number | undefined;
    for (const p of this.priorities.keys()) if (low === undefined || p < low) low = p;
    return low;
  }

  spreadGroup(key: string): ReadonlyMap<NodeInfo, number> | undefined {
    return this.groups.get(key);
  }

  private place(info: PodInfo, nodeName: string): void {
    const ni = this.nodeInfo(nodeName);
    if (!ni.addPod(info)) return;
    this.priorities.set(info.priority, (this.priorities.get(info.priority) ?? 0) + 1);
    if (info.spreadKey === undefined) return;
    let g = this.groups.get(info.spreadKey);
    if (!g) this.groups.set(info.spreadKey, (g = new Map()));
    g.set(ni, (g.get(ni) ?? 0) + 1);
  }

  getNode(name: string): NodeInfo | undefined {
    return this.nodes.get(name);
  }

  private nodeInfo(name: string): NodeInfo {
    let ni = this.nodes.get(name);
    if (!ni) {
      this.nodes.set(name, (ni = new NodeInfo(name)));
      this.orderedStale = true;
    }
    return ni;
  }

  setNode(node: Node): void {
    const ni = this.nodeInfo(node.metadata.name!);
    if (ni.node === undefined) this.orderedStale = true;
    if (ni.zone !== undefined) this.zoned--;
    ni.setNode(node);
    if (ni.zone !== undefined) this.zoned++;
  }

  removeNode(name: string): void {
    const ni = this.nodes.get(name);
    if (!ni) return;
    if (ni.zone !== undefined) this.zoned--;
    ni.node = undefined;
    ni.zone = undefined;
    // Pods still bound there keep their NodeInfo until they go, so a re-registered node comes back with its pods counted.
    if (ni.pods.size === 0) this.nodes.delete(name);
    this.orderedStale = true;
  }

  /** A pod the informer shows bound to a node and not finished: count it there (confirming an assumption). */
  addOrUpdatePod(pod: Pod): void {
    const uid = pod.metadata.uid ?? '';
    const nodeName = pod.spec?.nodeName ?? '';
    const rec = this.pods.get(uid);
    if (rec && rec.nodeName === nodeName && !rec.assumed && rec.info.pod === pod) return;
    if (rec) this.detach(uid, rec);
    const info = podInfoOf(pod);
    this.place(info, nodeName);
    this.pods.set(uid, { info, nodeName, assumed: false });
  }

  removePod(uid: string): void {
    const rec = this.pods.get(uid);
    if (rec) {
      this.detach(uid, rec);
      this.pods.delete(uid);
    }
  }

  private detach(uid: string, rec: PodRecord): void {
    const ni = this.nodes.get(rec.nodeName);
    if (!ni) return;
    const removed = ni.removePod(uid);
    if (removed) {
      const n = (this.priorities.get(removed.priority) ?? 0) - 1;
      if (n > 0) this.priorities.set(removed.priority, n);
      else this.priorities.delete(removed.priority);
    }
    const g = removed?.spreadKey !== undefined ? this.groups.get(removed.spreadKey) : undefined;
    if (g) {
      const n = (g.get(ni) ?? 0) - 1;
      if (n > 0) g.set(ni, n);
      else g.delete(ni);
      if (g.size === 0) this.groups.delete(removed!.spreadKey!);
    }
    if (ni.node === undefined && ni.pods.size === 0) {
      this.nodes.delete(rec.nodeName);
      this.orderedStale = true;
    }
  }

  assume(info: PodInfo, nodeName: string): void {
    this.place(info, nodeName);
    this.pods.set(info.uid, { info, nodeName, assumed: true });
  }

  isAssumed(uid: string): boolean {
    return this.pods.get(uid)?.assumed === true;
  }

  /** Whether the pod is counted on some node (assumed or seen bound). */
  hasPod(uid: string): boolean {
    return this.pods.has(uid);
  }

  bindingFinished(uid: string, now: number): void {
    const rec = this.pods.get(uid);
    if (rec?.assumed) rec.boundAt = now;
  }

  /** Drops an assumption whose binding failed; true if one was dropped (resources were freed). */
  forget(uid: string): boolean {
    const rec = this.pods.get(uid);
    if (!rec?.assumed) return false;
    this.removePod(uid);
    return true;
  }

  /**
   * Assumed pods whose binding succeeded long ago but never showed up bound (the watch missed it,
   * or the pod went away unseen): drop them and return their keys, so the
   * informer's view can win again.
   */
  expireAssumed(now: number, ttlMs: number): string[] {
    const expired: string[] = [];
    for (const [uid, rec] of this.pods) {
      if (rec.assumed && rec.boundAt !== undefined && now - rec.boundAt > ttlMs) {
        this.removePod(uid);
        expired.push(rec.info.key);
      }
    }
    return expired;
  }

  get podCount(): number {
    return this.pods.size;
  }
}
