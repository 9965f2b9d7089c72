// Filters: can this pod run on this node at all? Upstream's default filter plugins, in upstream's
// order and with upstream's reason strings (users read them in `kubectl describe pod`):
// NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit. The first
// failing filter decides a node's reasons, as upstream stops at the first failing plugin.
import { tolerates } from '../api/tolerations.js';
import type { Taint } from '../api/kinds/node.js';
import { TAINT_UNSCHEDULABLE, type NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';

export interface FilterFailure {
  readonly reasons: readonly string[];
  /**
   * True when removing pods from the node could not help (a taint, affinity, a cordon), which
   * upstream calls UnschedulableAndUnresolvable: preemption skips such nodes, and pod deletions
   * are no reason to retry.
   */
  readonly unresolvable: boolean;
}

export const REASON_NODE_UNSCHEDULABLE = 'node(s) were unschedulable';
export const REASON_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector";
export const REASON_NODE_PORTS = "node(s) didn't have free ports for the requested pod ports";
export const REASON_TOO_MANY_PODS = 'Too many pods';

export function untoleratedTaintReason(t: Taint): string {
  return `node(s) had untolerated taint {${t.key}: ${t.value ?? ''}}`;
}

export function insufficientReason(resource: string): string {
  return `Insufficient ${resource}`;
}

// Shared failure objects for the common single-reason cases: filtering allocates nothing for them.
const UNSCHEDULABLE: FilterFailure = { reasons: [REASON_NODE_UNSCHEDULABLE], unresolvable: true };
const AFFINITY: FilterFailure = { reasons: [REASON_NODE_AFFINITY], unresolvable: true };
const PORTS: FilterFailure = { reasons: [REASON_NODE_PORTS], unresolvable: false };
const TOO_MANY_PODS: FilterFailure = { reasons: [REASON_TOO_MANY_PODS], unresolvable: false };


const UNSCHEDULABLE_TAINT: Taint = { key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' };

export function nodeUnschedulable(pod: PodInfo, node: NodeInfo): FilterFailure | undefined {
  if (!node.unschedulable || tolerates(pod.tolerations, UNSCHEDULABLE_TAINT)) return undefined;
  return UNSCHEDULABLE;
}

export function taintToleration(pod: PodInfo, node: NodeInfo): FilterFailure | undefined {
  for (const taint of node.taints) {
    if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
    if (!tolerates(pod.tolerations, taint)) return { reasons: [untoleratedTaintReason(taint)], unresolvable: true };
  }
  return undefined;
}

export function nodeAffinity(pod: PodInfo, node: NodeInfo): FilterFailure | undefined {
  const labels = node.labels;
  for (const [k, v] of pod.nodeSelector) {
    if (!Object.prototype.hasOwnProperty.call(labels, k) || labels[k] !== v) return AFFINITY;
  }
  if (pod.requiredAffinity && !pod.requiredAffinity(labels, node.name)) return AFFINITY;
  return undefined;
}

export function nodePorts(pod: PodInfo, node: NodeInfo): FilterFailure | undefined {
  if (pod.hostPorts.length === 0) return undefined;
  return node.portsConflict(pod.hostPorts) ? PORTS : undefined;
}

/** Upstream NodeResourcesFit: the pod count, then every requested resource against what is left. */
export function nodeResourcesFit(pod: PodInfo, node: NodeInfo): FilterFailure | undefined {
  const alloc = node.allocatable;
  const used = node.requested;
  let reasons: string[] | undefined;
  if (node.podCount + 1 > alloc.pods) {
    if (pod.requestsNothing) return TOO_MANY_PODS;
    reasons = [REASON_TOO_MANY_PODS];
  }
  if (pod.requestsNothing) return undefined;
  const req = pod.requests;
  if (req.milliCpu > 0 && req.milliCpu > alloc.milliCpu - used.milliCpu) (reasons ??= []).push(insufficientReason('cpu'));
  if (req.memory > 0 && req.memory > alloc.memory - used.memory) (reasons ??= []).push(insufficientReason('memory'));
  if (req.ephemeralStorage > 0 && req.ephemeralStorage > alloc.ephemeralStorage - used.ephemeralStorage) {
    (reasons ??= []).push(insufficientReason('ephemeral-storage'));
  }
  const scalars = pod.scalarRequests;
  for (let i = 0; i < scalars.length; i++) {
    const [name, q] = scalars[i]!;
    if (q > (alloc.scalar.get(name) ?? 0) - (used.scalar.get(name) ?? 0)) (reasons ??= []).push(insufficientReason(name));
  }
  return reasons ? { reasons, unresolvable: false } : undefined;
}

/** Runs the filters in order; undefined when the pod fits the node. */
export function runFilters(pod: PodInfo, node: NodeInfo): FilterFailure | undefined {
  return nodeUnschedulable(pod, node) ?? taintToleration(pod, node) ?? nodeAffinity(pod, node) ?? nodePorts(pod, node) ?? nodeResourcesFit(pod, node);
}
