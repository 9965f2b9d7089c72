// One scheduling decision: filter the nodes (a sample of them in big clusters), score the
// feasible ones, pick the best; or explain why none fits.
import type { SchedulerCache } from './cache.js';
import { Diagnosis } from './fit-error.js';
import { runFilters, type FilterFailure } from './filters.js';
import type { NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';
import { scoreNodes, selectBest } from './scores.js';

/** A filter that depends on more than the pod and the node (VolumeBinding reads claims and volumes). */
export type ExtraFilter = (ni: NodeInfo) => FilterFailure | undefined;

/** A node, or why none fits (no diagnosis: there are no nodes at all). */
export type Decision = { node: NodeInfo } | { diagnosis: Diagnosis | undefined; resolvable: boolean };

const MIN_FEASIBLE_NODES = 100;
const MIN_FEASIBLE_PERCENTAGE = 5;

/**
 * Upstream's percentageOfNodesToScore: below 100 nodes look at all of them; above, stop filtering
 * once this many feasible nodes are found (0 = adaptive: 50% minus 1% per 125 nodes, at least 5%).
 * Scores barely differ between the 400th and the 1000th empty-enough node; the time does.
 */
export function numFeasibleNodesToFind(total: number, percentage: number): number {
  if (total < MIN_FEASIBLE_NODES) return total;
  const pct = percentage > 0 ? percentage : Math.max(MIN_FEASIBLE_PERCENTAGE, 50 - Math.floor(total / 125));
  if (pct >= 100) return total;
  return Math.max(MIN_FEASIBLE_NODES, Math.floor((total * pct) / 100));
}

export class Decider {
  /** Where the next search starts, round-robin, so sampling visits every node over time. */
  private nextStart = 0;
  private feasible: NodeInfo[] = [];
  /** Pods nominated to a node by preemption, by node name: room on that node is kept for them. */
  private readonly nominated = new Map<string, Map<string, PodInfo>>();

  constructor(
    private readonly cache: SchedulerCache,
    private readonly percentageOfNodesToScore = 0,
    private readonly random: () => number = Math.random,
  ) {}

  /** Records (or, with no node, forgets) a pod's nomination. */
  nominate(pod: PodInfo, nodeName: string | undefined): void {
    for (const [node, pods] of this.nominated) {
      if (node === nodeName || !pods.delete(pod.uid)) continue;
      if (pods.size === 0) this.nominated.delete(node);
    }
    if (nodeName === undefined) return;
    let pods = this.nominated.get(nodeName);
    if (!pods) this.nominated.set(nodeName, (pods = new Map()));
    pods.set(pod.uid, pod);
  }

  /** The pods nominated to a node, for preemption to clear those it outranks. */
  nominatedTo(nodeName: string): PodInfo[] {
    return [...(this.nominated.get(nodeName)?.values() ?? [])];
  }

  /**
   * Upstream's filtering with nominated pods: a node's room promised to pods of at least this
   * priority (preemptors waiting for their victims to go) counts as taken.
   */
  private filter(pod: PodInfo, ni: NodeInfo, extra: ExtraFilter | undefined): FilterFailure | undefined {
    const failure = this.filterResources(pod, ni);
    return failure ?? extra?.(ni);
  }

  private filterResources(pod: PodInfo, ni: NodeInfo): FilterFailure | undefined {
    const nominated = this.nominated.get(ni.name);
    if (nominated) {
      const ahead = [...nominated.values()].filter((n) => n.uid !== pod.uid && n.priority >= pod.priority);
      if (ahead.length > 0) {
        const withThem = ni.clone();
        for (const n of ahead) withThem.addPod(n);
        return runFilters(pod, withThem);
      }
    }
    return runFilters(pod, ni);
  }

  /** `extra`: a filter after the built-in ones (the pod's volumes), when it has one. */
  decide(pod: PodInfo, extra?: ExtraFilter): Decision {
    const nodes = this.cache.nodeList();
    const total = nodes.length;
    if (total === 0) return { diagnosis: undefined, resolvable: false };
    const want = numFeasibleNodesToFind(total, this.percentageOfNodesToScore);
    if (this.feasible.length < want) this.feasible = new Array<NodeInfo>(want);
    const feasible = this.feasible;
    // Only failures need a diagnosis; most decisions never allocate one.
    let diagnosis: Diagnosis | undefined;
    const start = this.nextStart % total;
    let found = 0;
    let looked = 0;
    while (looked < total && found < want) {
      const ni = nodes[(start + looked) % total]!;
      looked++;
      const failure = this.filter(pod, ni, extra);
      if (failure) (diagnosis ??= new Diagnosis()).add(failure);
      else feasible[found++] = ni;
    }
    this.nextStart = (start + looked) % total;
    if (found === 0) {
      diagnosis ??= new Diagnosis();
      diagnosis.numAllNodes = total;
      return { diagnosis, resolvable: diagnosis.resolvableNodes > 0 };
    }
    if (found === 1) return { node: feasible[0]! };
    const spreadGroup = pod.spreadKey === undefined ? undefined : this.cache.spreadGroup(pod.spreadKey);
    const scores = scoreNodes(pod, feasible, found, { spreadGroup, zoned: this.cache.hasZones });
    return { node: feasible[selectBest(scores, found, this.random)]! };
  }
}
