// Scoring: which feasible node is best? Upstream's default score plugins with their weights, each
// normalised to 0..100 over the feasible nodes:
//   NodeResourcesFit/LeastAllocated (1), NodeResourcesBalancedAllocation (1),
//   PodTopologySpread with the system default constraints (2), TaintToleration (3),
//   NodeAffinity preferred terms (2).
import type { Toleration } from '../api/kinds/pod.js';
import type { NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';
import { toleratesTaint } from '../api/tolerations.js';

export const MAX_NODE_SCORE = 100;

export const WEIGHTS = {
  leastAllocated: 1,
  balancedAllocation: 1,
  topologySpread: 2,
  taintToleration: 3,
  nodeAffinity: 2,
} as const;

/** The system default spread constraints (ScheduleAnyway): per node with skew 3, per zone with skew 5. */
const HOSTNAME_MAX_SKEW = 3;
const ZONE_MAX_SKEW = 5;

function leastRequested(requested: number, capacity: number): number {
  if (capacity <= 0 || requested > capacity) return 0;
  return Math.floor(((capacity - requested) * MAX_NODE_SCORE) / capacity);
}

/** Free share of cpu and memory after placing the pod, counting unset requests at their defaults. */
export function leastAllocatedScore(pod: PodInfo, node: NodeInfo): number {
  const cpu = leastRequested(node.nonZeroRequested.milliCpu + pod.nonZero.milliCpu, node.allocatable.milliCpu);
  const mem = leastRequested(node.nonZeroRequested.memory + pod.nonZero.memory, node.allocatable.memory);
  return Math.floor((cpu + mem) / 2);
}

/** Prefers nodes whose cpu and memory would be used in equal shares. */
export function balancedAllocationScore(pod: PodInfo, node: NodeInfo): number {
  const alloc = node.allocatable;
  if (alloc.milliCpu <= 0 || alloc.memory <= 0) return MAX_NODE_SCORE;
  const cpu = Math.min(1, (node.requested.milliCpu + pod.requests.milliCpu) / alloc.milliCpu);
  const mem = Math.min(1, (node.requested.memory + pod.requests.memory) / alloc.memory);
  const std = Math.abs(cpu - mem) / 2;
  return Math.floor((1 - std) * MAX_NODE_SCORE);
}

function preferNoScheduleTolerations(pod: PodInfo): Toleration[] {
  return pod.tolerations.filter((t) => !t.effect || t.effect === 'PreferNoSchedule');
}

/** PreferNoSchedule taints the pod does not tolerate (fewer is better). */
export function intolerablePreferNoSchedule(tolerations: readonly Toleration[], node: NodeInfo): number {
  if (!node.hasPreferNoSchedule) return 0;
  let n = 0;
  for (const taint of node.taints) {
    if (taint.effect !== 'PreferNoSchedule') continue;
    if (!tolerations.some((t) => toleratesTaint(t, taint))) n++;
  }
  return n;
}

/** Sum of the weights of the preferred node affinity terms the node matches. */
export function preferredAffinityWeight(pod: PodInfo, node: NodeInfo): number {
  let sum = 0;
  for (const t of pod.preferredAffinity) if (t.matches(node.labels, node.name)) sum += t.weight;
  return sum;
}

/** Upstream DefaultNormalizeScore: scale to 0..max by the highest raw score, optionally reversed. */
export function normalize(raw: Float64Array, n: number, reverse: boolean): void {
  let max = 0;
  for (let i = 0; i < n; i++) if (raw[i] > max) max = raw[i];
  for (let i = 0; i < n; i++) {
    if (max === 0) raw[i] = reverse ? MAX_NODE_SCORE : 0;
    else {
      const s = Math.floor((MAX_NODE_SCORE * raw[i]) / max);
      raw[i] = reverse ? MAX_NODE_SCORE - s : s;
    }
  }
}

// Scratch arrays reused across decisions (scoring is synchronous, so one set suffices).
let totals = new Float64Array(0);
let scratch = new Float64Array(0);

function ensure(n: number): void {
  if (totals.length < n) {
    totals = new Float64Array(Math.max(n, totals.length * 2));
    scratch = new Float64Array(totals.length);
  }
}

/**
 * Upstream PodTopologySpread scoring with the system default constraints: a node's raw score grows
 * with the pods of the same group on it (and in its zone), each constraint weighted by
 * log(domains + 2) plus maxSkew - 1, then inverted so the emptiest node scores 100.
 */
function spreadScores(nodes: readonly NodeInfo[], n: number, group: ReadonlyMap<NodeInfo, number>, zoned: boolean, out: Float64Array): void {
  let zoneCounts: Map<string, number> | undefined;
  let zoneWeight = 0;
  if (zoned) {
    // Zones of the feasible nodes are the domains; pods anywhere in such a zone count.
    zoneCounts = new Map();
    for (let i = 0; i < n; i++) {
      const z = nodes[i]!.zone;
      if (z !== undefined && !zoneCounts.has(z)) zoneCounts.set(z, 0);
    }
    zoneWeight = Math.log(zoneCounts.size + 2);
    for (const [ni, c] of group) {
      const have = ni.zone === undefined ? undefined : zoneCounts.get(ni.zone);
      if (have !== undefined) zoneCounts.set(ni.zone!, have + c);
    }
  }
  const hostWeight = Math.log(n + 2);
  let min = Infinity;
  let max = 0;
  for (let i = 0; i < n; i++) {
    const ni = nodes[i]!;
    let s = (group.get(ni) ?? 0) * hostWeight + (HOSTNAME_MAX_SKEW - 1);
    if (zoneCounts && ni.zone !== undefined) s += zoneCounts.get(ni.zone)! * zoneWeight + (ZONE_MAX_SKEW - 1);
    s = Math.round(s);
    out[i] = s;
    if (s < min) min = s;
    if (s > max) max = s;
  }
  for (let i = 0; i < n; i++) out[i] = max === 0 ? MAX_NODE_SCORE : Math.floor((MAX_NODE_SCORE * (max + min - out[i])) / max);
}

export interface ScoreOptions {
  /** Nodes running pods of the pod's spread group, with counts (undefined: none do). */
  spreadGroup: ReadonlyMap<NodeInfo, number> | undefined;
  /** Whether any node carries a zone label (otherwise zone spreading is skipped). */
  zoned: boolean;
}

/**
 * Weighted total score of nodes[0..n) for the pod. The returned array is scratch space, valid
 * until the next call.
 */
export function scoreNodes(pod: PodInfo, nodes: readonly NodeInfo[], n: number, opts: ScoreOptions): Float64Array {
  ensure(n);
  const total = totals;
  for (let i = 0; i < n; i++) {
    const ni = nodes[i]!;
    total[i] = WEIGHTS.leastAllocated * leastAllocatedScore(pod, ni) + WEIGHTS.balancedAllocation * balancedAllocationScore(pod, ni);
  }
  if (opts.spreadGroup !== undefined && n > 1) {
    spreadScores(nodes, n, opts.spreadGroup, opts.zoned, scratch);
    for (let i = 0; i < n; i++) total[i] += WEIGHTS.topologySpread * scratch[i];
  } else {
    // No pod of its group anywhere: every node scores the maximum (kept so totals stay on upstream's scale).
    for (let i = 0; i < n; i++) total[i] += WEIGHTS.topologySpread * MAX_NODE_SCORE;
  }
  const tolerations = preferNoScheduleTolerations(pod);
  for (let i = 0; i < n; i++) scratch[i] = intolerablePreferNoSchedule(tolerations, nodes[i]!);
  normalize(scratch, n, true);
  for (let i = 0; i < n; i++) total[i] += WEIGHTS.taintToleration * scratch[i];
  if (pod.preferredAffinity.length > 0) {
    for (let i = 0; i < n; i++) scratch[i] = preferredAffinityWeight(pod, nodes[i]!);
    normalize(scratch, n, false);
    for (let i = 0; i < n; i++) total[i] += WEIGHTS.nodeAffinity * scratch[i];
  }
  return total;
}

/** Index of the best node; ties are broken at random, as upstream does, so equal nodes share load. */
export function selectBest(scores: Float64Array, n: number, random: () => number = Math.random): number {
  let best = -1;
  let bestScore = -Infinity;
  let ties = 0;
  for (let i = 0; i < n; i++) {
    const s = scores[i];
    if (s > bestScore) {
      bestScore = s;
      best = i;
      ties = 1;
    } else if (s === bestScore) {
      ties++;
      if (random() * ties < 1) best = i;
    }
  }
  return best;
}
