// Everything the scheduler needs to know about a pod, computed once per pod version: requests as
// numbers, compiled node affinity, host ports, and the group it spreads with.
import type { Pod, Toleration } from '../api/kinds/pod.js';
import { compileTerm, compileTerms, type NodeAffinity, type NodeMatcher } from '../api/node-selector.js';
import { isZero, podNonZeroRequests, podRequests, type Resources } from './resources.js';

export interface HostPort {
  protocol: string;
  hostIP: string;
  port: number;
}

export interface PodInfo {
  readonly pod: Pod;
  /** namespace/name */
  readonly key: string;
  readonly uid: string;
  readonly priority: number;
  readonly requests: Resources;
  /** requests.scalar as a list (filtering iterates it for every node; most pods have none). */
  readonly scalarRequests: readonly (readonly [string, number])[];
  /** True when the pod requests nothing, so only the pod count limits it. */
  readonly requestsNothing: boolean;
  readonly nonZero: { milliCpu: number; memory: number };
  readonly tolerations: readonly Toleration[];
  readonly nodeSelector: readonly [string, string][];
  readonly requiredAffinity: NodeMatcher | undefined;
  readonly preferredAffinity: readonly { weight: number; matches: NodeMatcher }[];
  readonly hostPorts: readonly HostPort[];
  /** Pods with the same key should spread across nodes (same controller, or same labels when unowned). */
  readonly spreadKey: string | undefined;
  readonly preemptionNever: boolean;
}

export function podKey(pod: Pod): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

/**
 * Upstream spreads a pod's replicas by the selectors of the Services and controllers that match it.
 * The controller owner's uid stands for that selector; a pod without one spreads with the pods
 * of its namespace that carry exactly its labels.
 */
export function spreadKeyOf(pod: Pod): string | undefined {
  const owner = pod.metadata.ownerReferences?.find((o) => o.controller === true);
  if (owner?.uid) return `owner:${owner.uid}`;
  const labels = pod.metadata.labels;
  if (!labels) return undefined;
  const keys = Object.keys(labels);
  if (keys.length === 0) return undefined;
  keys.sort();
  return `labels:${pod.metadata.namespace ?? ''}:${keys.map((k) => `${k}=${labels[k]}`).join(',')}`;
}

function hostPortsOf(pod: Pod): HostPort[] {
  const out: HostPort[] = [];
  const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always')];
  for (const c of containers) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort || p.hostPort <= 0) continue;
      out.push({ protocol: p.protocol ?? 'TCP', hostIP: p.hostIP || '0.0.0.0', port: p.hostPort });
    }
  }
  return out;
}

export function podInfoOf(pod: Pod): PodInfo {
  const spec = pod.spec;
  const requests = podRequests(pod);
  const affinity = (spec?.affinity as { nodeAffinity?: NodeAffinity } | undefined)?.nodeAffinity;
  const required = affinity?.requiredDuringSchedulingIgnoredDuringExecution;
  return {
    pod,
    key: podKey(pod),
    uid: pod.metadata.uid ?? '',
    priority: spec?.priority ?? 0,
    requests,
    scalarRequests: [...requests.scalar].filter(([, q]) => q > 0),
    requestsNothing: isZero(requests),
    nonZero: podNonZeroRequests(pod),
    tolerations: spec?.tolerations ?? [],
    nodeSelector: Object.entries(spec?.nodeSelector ?? {}),
    requiredAffinity: required ? compileTerms(required.nodeSelectorTerms) : undefined,
    preferredAffinity: (affinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [])
      .filter((t) => t.weight > 0)
      .map((t) => ({ weight: t.weight, matches: compileTerm(t.preference) })),
    hostPorts: hostPortsOf(pod),
    spreadKey: spreadKeyOf(pod),
    preemptionNever: (spec as { preemptionPolicy?: string } | undefined)?.preemptionPolicy === 'Never',
  };
}
