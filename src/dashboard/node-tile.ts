// A node's row on the dashboard, computed from its Node, its Lease and the pods bound to it. Pure
// functions, so what a tile says is tested without a cluster.
import type { Lease } from '../api/kinds/lease.js';
import { nodeReadyState, nodeRoles, type Node } from '../api/kinds/node.js';
import { timestampMs } from '../api/kinds/printing.js';
import type { Pod } from '../api/kinds/pod.js';
import { RETIRE_ANNOTATION } from '../agent/api.js';
import { CONTROLLER_IDENTITY_ANNOTATION } from '../server/endpoint-reconciler.js';
import { nodeAllocatable, podRequests } from '../scheduler/resources.js';
import type { NodeTile, PodCounts, PodRow } from './view.js';

/**
 * What the dashboard keeps of a pod: enough for its node's counts and requests and for the pod
 * rows of a node's panel. At 50,000 pods a whole pod each would be most of the process.
 */
export function slimPod(p: Pod): Pod {
  const container = (c: { name: string; resources?: unknown; restartPolicy?: string }) => ({
    name: c.name,
    ...(c.resources ? { resources: c.resources } : {}),
    ...(c.restartPolicy ? { restartPolicy: c.restartPolicy } : {}),
  });
  const spec = p.spec;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: p.metadata.name,
      namespace: p.metadata.namespace,
      uid: p.metadata.uid,
      resourceVersion: p.metadata.resourceVersion,
      ...(p.metadata.deletionTimestamp ? { deletionTimestamp: p.metadata.deletionTimestamp } : {}),
      // Drain leaves DaemonSet pods alone: it needs to know who controls each.
      ...(p.metadata.ownerReferences ? { ownerReferences: p.metadata.ownerReferences.filter((r) => r.controller).map((r) => ({ apiVersion: r.apiVersion, kind: r.kind, name: r.name, uid: r.uid, controller: true })) } : {}),
    },
    spec: {
      ...(spec?.nodeName ? { nodeName: spec.nodeName } : {}),
      containers: (spec?.containers ?? []).map(container),
      ...(spec?.initContainers ? { initContainers: spec.initContainers.map(container) } : {}),
      ...((spec as { overhead?: unknown } | undefined)?.overhead ? { overhead: (spec as { overhead?: unknown }).overhead } : {}),
    } as Pod['spec'],
    status: {
      phase: p.status?.phase ?? 'Pending',
      containerStatuses: (p.status?.containerStatuses ?? []).map((c) => ({ name: c.name, ready: c.ready, restartCount: c.restartCount })),
    } as Pod['status'],
  };
}

/** What the dashboard keeps of a Lease: who holds it and when it was renewed. */
export function slimLease(l: Lease): Lease {
  // A member's endpoint Lease names its controllers' identity: the one annotation the page reads.
  const identity = l.metadata.annotations?.[CONTROLLER_IDENTITY_ANNOTATION];
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: l.metadata.name,
      namespace: l.metadata.namespace,
      resourceVersion: l.metadata.resourceVersion,
      ...(l.metadata.labels ? { labels: l.metadata.labels } : {}),
      ...(identity !== undefined ? { annotations: { [CONTROLLER_IDENTITY_ANNOTATION]: identity } } : {}),
    },
    spec: { ...(l.spec?.holderIdentity ? { holderIdentity: l.spec.holderIdentity } : {}), ...(l.spec?.renewTime ? { renewTime: l.spec.renewTime } : {}) },
  };
}

export function emptyPodCounts(): PodCounts {
  return { running: 0, pending: 0, succeeded: 0, failed: 0, terminating: 0 };
}

/** Which of the counts a pod adds to. */
export function podCountKey(p: Pod): keyof PodCounts {
  if (p.metadata.deletionTimestamp) return 'terminating';
  if (p.status?.phase === 'Running') return 'running';
  if (p.status?.phase === 'Succeeded') return 'succeeded';
  if (p.status?.phase === 'Failed') return 'failed';
  return 'pending';
}

export function countPod(counts: PodCounts, p: Pod): void {
  counts[podCountKey(p)]++;
}

export function taintText(t: { key: string; value?: string; effect: string }): string {
  return `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`;
}

export interface TileInputs {
  node: Node;
  lease?: Lease;
  /** The pods bound to it. */
  pods: Iterable<Pod>;
  renewalsPerMinute: number;
  reregistrations: number;
}

export function nodeTile(i: TileInputs): NodeTile {
  const n = i.node;
  const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
  const health = nodeReadyState(n);
  const pods = emptyPodCounts();
  let cpu = 0;
  let memory = 0;
  for (const p of i.pods) {
    countPod(pods, p);
    // Finished pods hold nothing; the scheduler counts the others.
    if (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') continue;
    const r = podRequests(p);
    cpu += r.milliCpu;
    memory += r.memory;
  }
  const alloc = nodeAllocatable(n);
  const since = timestampMs(ready?.lastTransitionTime);
  const renewed = timestampMs(i.lease?.spec?.renewTime);
  return {
    name: n.metadata.name!,
    health,
    cordoned: n.spec?.unschedulable === true,
    retiring: n.metadata.annotations?.[RETIRE_ANNOTATION] === 'true',
    roles: nodeRoles(n),
    ...(health !== 'Ready' && (ready?.reason || ready?.message) ? { reason: [ready.reason, ready.message].filter(Boolean).join(': ') } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(renewed !== undefined ? { leaseRenewedAt: renewed } : {}),
    renewalsPerMinute: i.renewalsPerMinute,
    reregistrations: i.reregistrations,
    taints: (n.spec?.taints ?? []).map(taintText),
    pods,
    cpu: { requested: cpu, allocatable: alloc.milliCpu },
    memory: { requested: memory, allocatable: alloc.memory },
    ...(n.spec?.providerID ? { providerID: n.spec.providerID } : {}),
  };
}

/** The row a node whose Node object is gone keeps, until it comes back or ages out. */
export function absentTile(last: NodeTile, at: number): NodeTile {
  return { ...last, health: 'absent', absentSince: at, pods: emptyPodCounts(), cpu: { ...last.cpu, requested: 0 }, memory: { ...last.memory, requested: 0 }, renewalsPerMinute: 0 };
}

export function podRow(p: Pod): PodRow {
  const statuses = p.status?.containerStatuses ?? [];
  const containers = (p.spec?.containers ?? []).map((c) => c.name);
  return {
    namespace: p.metadata.namespace ?? 'default',
    name: p.metadata.name!,
    phase: p.status?.phase ?? 'Pending',
    ready: `${statuses.filter((c) => c.ready).length}/${containers.length}`,
    restarts: statuses.reduce((n, c) => n + (c.restartCount ?? 0), 0),
    terminating: Boolean(p.metadata.deletionTimestamp),
    containers,
  };
}
