// Builders for Node and Pod objects in scheduler tests.
import type { Node, Taint } from '../../src/api/kinds/node.js';
import type { Container, Pod, Toleration } from '../../src/api/kinds/pod.js';

export interface NodeSpecOptions {
  cpu?: string;
  memory?: string;
  pods?: string;
  extra?: Record<string, string>;
  labels?: Record<string, string>;
  taints?: Taint[];
  unschedulable?: boolean;
  /** Ready condition status; 'missing' leaves the condition out. */
  ready?: 'True' | 'False' | 'Unknown' | 'missing';
}

export function makeNode(name: string, o: NodeSpecOptions = {}): Node {
  const allocatable: Record<string, string> = { cpu: o.cpu ?? '4', memory: o.memory ?? '8Gi', pods: o.pods ?? '110', ...(o.extra ?? {}) };
  const ready = o.ready ?? 'True';
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(o.labels ?? {}) } },
    spec: { ...(o.taints ? { taints: o.taints } : {}), ...(o.unschedulable ? { unschedulable: true } : {}) },
    status: {
      capacity: { ...allocatable },
      allocatable,
      conditions: ready === 'missing' ? [] : [{ type: 'Ready', status: ready, reason: 'KubeletReady', message: 'ready' }],
    },
  };
}

export interface PodSpecOptions {
  namespace?: string;
  uid?: string;
  cpu?: string;
  memory?: string;
  labels?: Record<string, string>;
  owner?: string;
  tolerations?: Toleration[];
  nodeSelector?: Record<string, string>;
  affinity?: Record<string, unknown>;
  containers?: Container[];
  initContainers?: Container[];
  overhead?: Record<string, string>;
  nodeName?: string;
  hostPort?: number;
  priority?: number;
}

let uidSeq = 0;

export function makePod(name: string, o: PodSpecOptions = {}): Pod {
  const requests: Record<string, string> = {};
  if (o.cpu) requests.cpu = o.cpu;
  if (o.memory) requests.memory = o.memory;
  const container: Container = {
    name: 'app',
    image: 'registry.example/app:1',
    ...(Object.keys(requests).length ? { resources: { requests } } : {}),
    ...(o.hostPort ? { ports: [{ containerPort: 8080, hostPort: o.hostPort, protocol: 'TCP' as const }] } : {}),
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: o.namespace ?? 'default',
      uid: o.uid ?? `uid-${name}-${++uidSeq}`,
      ...(o.labels ? { labels: o.labels } : {}),
      ...(o.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: o.owner, uid: `rs-${o.owner}`, controller: true }] } : {}),
    },
    spec: {
      containers: o.containers ?? [container],
      ...(o.initContainers ? { initContainers: o.initContainers } : {}),
      ...(o.tolerations ? { tolerations: o.tolerations } : {}),
      ...(o.nodeSelector ? { nodeSelector: o.nodeSelector } : {}),
      ...(o.affinity ? { affinity: o.affinity } : {}),
      ...(o.overhead ? { overhead: o.overhead } : {}),
      ...(o.nodeName ? { nodeName: o.nodeName } : {}),
      ...(o.priority !== undefined ? { priority: o.priority } : {}),
      schedulerName: 'default-scheduler',
    } as Pod['spec'],
  };
}

/** A pod with required node affinity made of one term with one expression. */
export function affinityPod(name: string, key: string, operator: string, values?: string[]): Pod {
  return makePod(name, {
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key, operator, ...(values ? { values } : {}) }] }] },
      },
    },
  });
}
