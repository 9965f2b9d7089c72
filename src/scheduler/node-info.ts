// One node as the scheduler sees it: what it offers, its effective taints, and running totals of
// the pods on it (bound or assumed), kept incrementally so no decision rescans pods.
import type { Node, Taint } from '../api/kinds/node.js';
import type { Labels } from '../api/types.js';
import type { HostPort, PodInfo } from './pod-info.js';
import { addResources, emptyResources, nodeAllocatable, type Allocatable } from './resources.js';

export const TAINT_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const TAINT_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';
export const LABEL_ZONE = 'topology.kubernetes.io/zone';

/**
 * spec.taints plus the NoSchedule taint the node lifecycle controller puts on a node that is not
 * Ready (not-ready for False or no condition yet, unreachable for Unknown). Upstream filters only by
 * the taint, which the controller adds a moment after the condition changes; adding it here closes
 * that window, and a pod that tolerates the taint (a CNI DaemonSet, say) may still land there.
 */
export function effectiveTaints(node: Node): Taint[] {
  const taints = node.spec?.taints ?? [];
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status === 'True') return taints;
  const key = ready?.status === 'Unknown' ? TAINT_UNREACHABLE : TAINT_NOT_READY;
  if (taints.some((t) => t.key === key && t.effect === 'NoSchedule')) return taints;
  return [...taints, { key, effect: 'NoSchedule' }];
}

function portKey(p: HostPort): string {
  return `${p.protocol}/${p.port}`;
}

export class NodeInfo {
  /** Undefined while pods are known to be on a node the cache has not seen (or no longer sees). */
  node: Node | undefined;
  labels: Labels = {};
  allocatable: Allocatable = { milliCpu: 0, memory: 0, ephemeralStorage: 0, scalar: new Map(), pods: 0 };
  unschedulable = false;
  taints: Taint[] = [];
  zone: string | undefined;
  /** Whether any taint has effect PreferNoSchedule (scoring skips the rest). */
  hasPreferNoSchedule = false;

  readonly requested = emptyResources();
  readonly nonZeroRequested = { milliCpu: 0, memory: 0 };
  podCount = 0;
  readonly pods = new Map<string, PodInfo>();
  /** protocol/port → host IP → pods using it. */
  private readonly usedPorts = new Map<string, Map<string, number>>();

  constructor(readonly name: string) {}

  setNode(node: Node): void {
    this.node = node;
    this.labels = node.metadata.labels ?? {};
    this.allocatable = nodeAllocatable(node);
    this.unschedulable = node.spec?.unschedulable === true;
    this.taints = effectiveTaints(node);
    this.hasPreferNoSchedule = this.taints.some((t) => t.effect === 'PreferNoSchedule');
    this.zone = this.labels[LABEL_ZONE];
  }

  /**
   * A copy for what-if questions (would the pod fit with these pods gone, or those nominated pods
   * added?): the same node, its own pod totals, changed without touching the cache.
   */
  clone(): NodeInfo {
    const c = new NodeInfo(this.name);
    c.node = this.node;
    c.labels = this.labels;
    c.allocatable = this.allocatable;
    c.unschedulable = this.unschedulable;
    c.taints = this.taints;
    c.zone = this.zone;
    c.hasPreferNoSchedule = this.hasPreferNoSchedule;
    for (const p of this.pods.values()) c.addPod(p);
    return c;
  }

  /** False if the pod was already counted here. */
  addPod(p: PodInfo): boolean {
    if (this.pods.has(p.uid)) return false;
    this.pods.set(p.uid, p);
    this.account(p, 1);
    return true;
  }

  removePod(uid: string): PodInfo | undefined {
    const p = this.pods.get(uid);
    if (!p) return undefined;
    this.pods.delete(uid);
    this.account(p, -1);
    return p;
  }

  private account(p: PodInfo, sign: 1 | -1): void {
    addResources(this.requested, p.requests, sign);
    this.nonZeroRequested.milliCpu += sign * p.nonZero.milliCpu;
    this.nonZeroRequested.memory += sign * p.nonZero.memory;
    this.podCount += sign;
    for (const hp of p.hostPorts) {
      const k = portKey(hp);
      let ips = this.usedPorts.get(k);
      if (!ips) this.usedPorts.set(k, (ips = new Map()));
      const n = (ips.get(hp.hostIP) ?? 0) + sign;
      if (n <= 0) ips.delete(hp.hostIP);
      else ips.set(hp.hostIP, n);
      if (ips.size === 0) this.usedPorts.delete(k);
    }
  }

  /** Upstream's host port conflict rule: 0.0.0.0 overlaps every address of the same protocol and port. */
  portsConflict(ports: readonly HostPort[]): boolean {
    for (const p of ports) {
      const ips = this.usedPorts.get(portKey(p));
      if (!ips) continue;
      if (p.hostIP === '0.0.0.0' || ips.has('0.0.0.0') || ips.has(p.hostIP)) return true;
    }
    return false;
  }
}
