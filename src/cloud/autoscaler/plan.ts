// What the cluster autoscaler decides, as pure functions over a snapshot: which group grows for
// the pods that fit nowhere (simulated on each group's template node with the scheduler's own
// filters), which nodes are unneeded (their pods fit elsewhere), and which instances never
// registered. The controller (./autoscaler.ts) acts on the answers.
import type { Node } from '../../api/kinds/node.js';
import { isDaemonSetPod, type Pod } from '../../api/kinds/pod.js';
import { NodeInfo } from '../../scheduler/node-info.js';
import { podInfoOf, type PodInfo } from '../../scheduler/pod-info.js';
import { runFilters } from '../../scheduler/filters.js';
import type { KubeObject } from '../../api/types.js';
import { matchLabelSelectorObject } from '../../api/labels.js';

export type Expander = 'least-waste' | 'random' | 'most-pods' | 'priority';
export const EXPANDERS: readonly Expander[] = ['least-waste', 'random', 'most-pods', 'priority'];

export interface GroupSnapshot {
  id: string;
  min: number;
  max: number;
  /** Instances asked for, registered or not. */
  target: number;
  template: Node;
  /** Backing off after a failed scale-up: not grown. */
  backedOff: boolean;
  /** For the priority expander: higher first. */
  priority?: number;
}

export interface ScaleUpPlan {
  group: string;
  count: number;
  /** The pods the new nodes take. */
  pods: Pod[];
}

export interface ScaleUpResult {
  plan?: ScaleUpPlan;
  /** Pods no group can take, with why (NotTriggerScaleUp). */
  unhelpable: { pod: Pod; reason: string }[];
}

function templateInfo(template: Node, n: number): NodeInfo {
  const info = new NodeInfo(`${template.metadata.name ?? 'template'}-${n}`);
  info.setNode(template);
  return info;
}

/** Packs pods first-fit onto as many template nodes as they need (at most `limit`); returns the nodes and the pods placed. */
function pack(pods: PodInfo[], template: Node, limit: number): { nodes: NodeInfo[]; placed: PodInfo[] } {
  const nodes: NodeInfo[] = [];
  const placed: PodInfo[] = [];
  for (const p of pods) {
    let home = nodes.find((n) => runFilters(p, n) === undefined);
    if (!home && nodes.length < limit) {
      const fresh = templateInfo(template, nodes.length);
      if (runFilters(p, fresh) === undefined) {
        nodes.push(fresh);
        home = fresh;
      }
    }
    if (home) {
      home.addPod(p);
      placed.push(p);
    }
  }
  return { nodes, placed };
}

/** Unused fraction of the new nodes' cpu and memory after the pods (least-waste's score: lower wins). */
function waste(nodes: NodeInfo[]): number {
  let cpuFree = 0;
  let memFree = 0;
  let cpu = 0;
  let mem = 0;
  for (const n of nodes) {
    cpu += n.allocatable.milliCpu;
    mem += n.allocatable.memory;
    cpuFree += n.allocatable.milliCpu - n.requested.milliCpu;
    memFree += n.allocatable.memory - n.requested.memory;
  }
  return (cpu ? cpuFree / cpu : 0) + (mem ? memFree / mem : 0);
}

/**
 * The scale-up for `pending` (pods the scheduler could not place), or why each pod cannot be
 * helped. `random` picks with `rand` (injected, for tests).
 */
export function planScaleUp(pending: Pod[], groups: GroupSnapshot[], expander: Expander, rand: () => number = Math.random): ScaleUpResult {
  const infos = pending.map(podInfoOf);
  const options: { group: GroupSnapshot; nodes: NodeInfo[]; placed: PodInfo[] }[] = [];
  for (const g of groups) {
    if (g.backedOff || g.target >= g.max) continue;
    const { nodes, placed } = pack(infos, g.template, g.max - g.target);
    if (placed.length > 0) options.push({ group: g, nodes, placed });
  }
  const helped = new Set(options.flatMap((o) => o.placed.map((p) => p.uid)));
  const unhelpable = infos
    .filter((p) => !helped.has(p.uid))
    .map((p) => {
      const atMax = groups.every((g) => g.target >= g.max || g.backedOff);
      const reason = atMax ? 'max node group size reached' : (groups.map((g) => runFilters(p, templateInfo(g.template, 0))?.reasons[0]).find(Boolean) ?? "pod didn't fit on any node group");
      return { pod: p.pod, reason };
    });
  if (options.length === 0) return { unhelpable };
  let best = options[0]!;
  switch (expander) {
    case 'random':
      best = options[Math.floor(rand() * options.length)] ?? best;
      break;
    case 'most-pods':
      best = options.reduce((a, b) => (b.placed.length > a.placed.length ? b : a));
      break;
    case 'priority':
      best = options.reduce((a, b) => ((b.group.priority ?? 0) > (a.group.priority ?? 0) ? b : a));
      break;
    case 'least-waste':
      best = options.reduce((a, b) => (waste(b.nodes) < waste(a.nodes) || (waste(b.nodes) === waste(a.nodes) && b.placed.length > a.placed.length) ? b : a));
      break;
  }
  return { plan: { group: best.group.id, count: best.nodes.length, pods: best.placed.map((p) => p.pod) }, unhelpable };
}

/**
 * The pending pods that fit on no existing node (upstream's filterOutSchedulable): a pod the
 * scheduler has not retried since room appeared, or that a node still starting will take, asks
 * for no new machine. `nodes` are the nodes that can take pods, with the pods they run; the pods
 * placed here are added to them, so two pods do not count on the same room.
 */
export function filterOutSchedulable(pending: Pod[], nodes: NodeInfo[]): Pod[] {
  const left: Pod[] = [];
  for (const pod of pending) {
    const info = podInfoOf(pod);
    const home = nodes.find((n) => runFilters(info, n) === undefined);
    if (home) home.addPod(info);
    else left.push(pod);
  }
  return left;
}

/** A NodeInfo for `node` with `pods` on it. */
export function nodeInfoWith(node: Node, pods: Pod[]): NodeInfo {
  const info = new NodeInfo(node.metadata.name ?? '');
  info.setNode(node);
  for (const p of pods) info.addPod(podInfoOf(p));
  return info;
}

export interface NodeSnapshot {
  node: Node;
  group: string;
  /** The pods it runs that are not DaemonSet or mirror pods: what must move for it to go. */
  movable: Pod[];
  /** Why it may not be removed at all, or undefined. */
  blocked?: string;
}

/** Upstream's utilization: the larger of requested cpu and memory over allocatable. */
export function utilization(node: Node, pods: Pod[]): number {
  const info = nodeInfoWith(node, pods);
  const cpu = info.allocatable.milliCpu ? info.requested.milliCpu / info.allocatable.milliCpu : 0;
  const mem = info.allocatable.memory ? info.requested.memory / info.allocatable.memory : 0;
  return Math.max(cpu, mem);
}

/**
 * Nodes that could go: under `threshold`, not blocked, in groups above their minimum, whose
 * movable pods all fit on the other nodes that stay (simulated, one candidate after another, so
 * two candidates do not both count on the same room).
 */
export function scaleDownCandidates(nodes: NodeSnapshot[], allPods: Map<string, Pod[]>, groups: Map<string, { min: number; target: number }>, threshold: number): Node[] {
  const infos = new Map<string, NodeInfo>();
  for (const n of nodes) {
    const info = nodeInfoWith(n.node, allPods.get(n.node.metadata.name ?? '') ?? []);
    infos.set(info.name, info);
  }
  const out: Node[] = [];
  const removed = new Set<string>();
  const sizes = new Map([...groups].map(([k, v]) => [k, v.target]));
  for (const n of nodes) {
    const name = n.node.metadata.name ?? '';
    const g = groups.get(n.group);
    if (!g || n.blocked || (sizes.get(n.group) ?? 0) <= g.min) continue;
    if (utilization(n.node, allPods.get(name) ?? []) >= threshold) continue;
    const others = [...infos.values()].filter((i) => i.name !== name && !removed.has(i.name) && !i.unschedulable);
    const moves: [NodeInfo, PodInfo][] = [];
    let fits = true;
    for (const p of n.movable.map(podInfoOf)) {
      const home = others.find((o) => runFilters(p, o) === undefined);
      if (!home) {
        fits = false;
        break;
      }
      home.addPod(p);
      moves.push([home, p]);
    }
    if (!fits) {
      for (const [home, p] of moves) home.removePod(p.uid);
      continue;
    }
    removed.add(name);
    sizes.set(n.group, (sizes.get(n.group) ?? 0) - 1);
    out.push(n.node);
  }
  return out;
}

const SAFE_TO_EVICT = 'cluster-autoscaler.kubernetes.io/safe-to-evict';
const SCALE_DOWN_DISABLED = 'cluster-autoscaler.kubernetes.io/scale-down-disabled';
const SAFE_LOCAL_VOLUMES = 'cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes';

/** A volume whose data lives on the node and would be lost with it: emptyDir or hostPath, unless the pod names it safe. */
function localVolume(p: Pod): string | undefined {
  const safe = new Set((p.metadata.annotations?.[SAFE_LOCAL_VOLUMES] ?? '').split(',').map((v) => v.trim()).filter(Boolean));
  const volumes = ((p.spec as { volumes?: { name: string; emptyDir?: unknown; hostPath?: unknown }[] } | undefined)?.volumes ?? []);
  return volumes.find((v) => (v.emptyDir !== undefined || v.hostPath !== undefined) && !safe.has(v.name))?.name;
}

/** Why a node may not be removed, or undefined (upstream's scale-down blockers). */
export function scaleDownBlocker(node: Node, podsOn: Pod[], pdbs: KubeObject[], opts: { skipNodesWithLocalStorage: boolean } = { skipNodesWithLocalStorage: true }): string | undefined {
  if (node.metadata.annotations?.[SCALE_DOWN_DISABLED] === 'true') return 'scale-down disabled by annotation';
  for (const p of podsOn) {
    if (isDaemonSetPod(p)) continue;
    const safe = p.metadata.annotations?.[SAFE_TO_EVICT];
    if (safe === 'false') return `pod ${p.metadata.namespace}/${p.metadata.name} is not safe to evict`;
    if (safe === 'true') continue;
    if (!(p.metadata.ownerReferences ?? []).some((o) => o.controller)) return `pod ${p.metadata.namespace}/${p.metadata.name} has no controller`;
    const budgets = pdbs.filter((b) => b.metadata.namespace === p.metadata.namespace && matchLabelSelectorObject((b.spec as { selector?: unknown } | undefined)?.selector, p.metadata.labels));
    const local = opts.skipNodesWithLocalStorage ? localVolume(p) : undefined;
    if (local) return `pod ${p.metadata.namespace}/${p.metadata.name} has local storage (volume ${local})`;
    if (p.metadata.namespace === 'kube-system' && budgets.length === 0) return `kube-system pod ${p.metadata.name} has no PodDisruptionBudget`;
    for (const b of budgets) {
      const allowed = (b.status as { disruptionsAllowed?: number } | undefined)?.disruptionsAllowed ?? 0;
      const here = podsOn.filter((x) => matchLabelSelectorObject((b.spec as { selector?: unknown } | undefined)?.selector, x.metadata.labels)).length;
      if (here > allowed) return `not enough pod disruption budget to move ${p.metadata.namespace}/${p.metadata.name}`;
    }
  }
  return undefined;
}
