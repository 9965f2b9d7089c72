// What the agent says about its machine: the Node it registers (labels, taints, machine id) and the
// status it reports (capacity, addresses, nodeInfo, conditions). Pure functions over a NodeConfig.
import { labelsNodeMayNotSet } from '../api/node-labels.js';
import { NODE_VERSION, SKIFF_VERSION } from '../version.js';
import { readFileSync, statfsSync } from 'node:fs';
import { availableParallelism, platform, release, totalmem } from 'node:os';
import { goArch } from '../util/go-arch.js';
import { RUNTIME_LABEL, UNINITIALIZED_TAINT, type Node, type NodeCondition, type NodeStatus, type Taint, type TaintEffect } from '../api/kinds/node.js';
import { MACHINE_ID_ANNOTATION, RETIRE_ANNOTATION } from './api.js';
import { rfc3339 } from '../util/time.js';
import type { ObservedNode } from './state-dir.js';
import type { RuntimeName } from './runtimes/runtime.js';

export const AGENT_VERSION = NODE_VERSION;

export interface NodeConfig {
  nodeName: string;
  machineId: string;
  nodeIP: string;
  runtime: RuntimeName;
  /** nodeInfo.containerRuntimeVersion: the runtime's own name and version where it has one (containerd://1.6.20). */
  runtimeVersion?: string;
  labels: Record<string, string>;
  taints: Taint[];
  capacity: Record<string, string>;
  /** Actual port of the log (kubelet) server, reported in daemonEndpoints. */
  kubeletPort: number;
  providerID?: string;
  cloudProvider?: 'external';
}


/** `k=v:Effect` or `k:Effect`, comma-separated, as --register-with-taints takes them. */
export function parseTaints(specs: string[]): Taint[] {
  const out: Taint[] = [];
  for (const spec of specs) {
    const m = /^([^=:]+)(?:=([^:]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(spec.trim());
    if (!m) throw new Error(`invalid taint ${JSON.stringify(spec)}: use key=value:Effect or key:Effect (Effect: NoSchedule, PreferNoSchedule, NoExecute)`);
    const t: Taint = { key: m[1]!, effect: m[3] as TaintEffect };
    if (m[2]) t.value = m[2];
    out.push(t);
  }
  return out;
}

/** `k=v`, comma-separated. */
export function parseLabels(specs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const spec of specs) {
    const i = spec.indexOf('=');
    if (i <= 0) throw new Error(`invalid label ${JSON.stringify(spec)}: use key=value`);
    out[spec.slice(0, i).trim()] = spec.slice(i + 1).trim();
  }
  // As the kubelet checks --node-labels: the API would refuse them from a node credential anyway.
  const refused = labelsNodeMayNotSet(Object.keys(out));
  if (refused.length > 0) {
    throw new Error(
      `a node may not set these labels on its own Node: ${refused.join(', ')}; labels in the kubernetes.io and k8s.io namespaces must be the kubelet's own (kubernetes.io/hostname, os, arch, instance type, zone, region) or begin with kubelet.kubernetes.io/ or node.kubernetes.io/ (an administrator sets the others, e.g. kubectl label node NAME node-role.kubernetes.io/worker=)`,
    );
  }
  return out;
}

/** Capacity of this host, for the process runtime. */
/** What a simulated node reports it has: --cpu, --memory and --max-pods, with generous defaults. */
export function simulatedCapacity(o: { cpu?: string; memory?: string; maxPods: number }): Record<string, string> {
  return { cpu: o.cpu ?? '32', memory: o.memory ?? '256Gi', pods: String(o.maxPods), 'ephemeral-storage': '1Ti' };
}

export function hostCapacity(dataDir: string, maxPods: number): Record<string, string> {
  const cap: Record<string, string> = {
    cpu: String(availableParallelism()),
    memory: `${Math.floor(totalmem() / 1024)}Ki`,
    pods: String(maxPods),
  };
  try {
    const fs = statfsSync(dataDir);
    cap['ephemeral-storage'] = `${Math.floor((fs.blocks * fs.bsize) / 1024)}Ki`;
  } catch {
    /* not reported */
  }
  return cap;
}

function osImage(): string {
  try {
    const m = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'));
    if (m) return m[1]!;
  } catch {
    /* not Linux */
  }
  return platform();
}

let cachedBootId: string | undefined;
function bootId(): string {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      cachedBootId = '';
    }
  }
  return cachedBootId;
}

/** The labels the agent always asserts (as the kubelet's default labels). */
export function defaultLabels(cfg: NodeConfig): Record<string, string> {
  const os = platform();
  return {
    'beta.kubernetes.io/arch': goArch(),
    'beta.kubernetes.io/os': os,
    'kubernetes.io/arch': goArch(),
    'kubernetes.io/hostname': cfg.nodeName,
    'kubernetes.io/os': os,
    [RUNTIME_LABEL]: cfg.runtime,
  };
}

/**
 * The Node to create. With a last observed copy (the Node was deleted, or the agent restarted after
 * its deletion) the operator-owned fields come from that copy, so labels, annotations, taints and a
 * cordon survive, and its pod CIDR; the agent's default labels and machine id are re-asserted on top.
 */
export function initialNode(cfg: NodeConfig, observed: ObservedNode | undefined, status: NodeStatus): Node {
  const labels = observed ? { ...cfg.labels, ...observed.labels, ...defaultLabels(cfg) } : { ...defaultLabels(cfg), ...cfg.labels };
  const annotations: Record<string, string> = { ...(observed?.annotations ?? {}) };
  delete annotations[RETIRE_ANNOTATION];
  annotations[MACHINE_ID_ANNOTATION] = cfg.machineId;
  const taints = observed ? observed.taints.map((t) => ({ ...t })) : cfg.taints.map((t) => ({ ...t }));
  // A Node its cloud has not seen yet waits for the cloud node controller. One re-created from its
  // observed copy was initialised before: its cloud labels came back with it.
  if (cfg.cloudProvider === 'external' && !observed && !taints.some((t) => t.key === UNINITIALIZED_TAINT)) taints.push({ key: UNINITIALIZED_TAINT, value: 'true', effect: 'NoSchedule' });
  const node: Node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: cfg.nodeName, labels, annotations },
    spec: cfg.providerID ? { providerID: cfg.providerID } : {},
    status,
  };
  if (observed?.unschedulable) {
    node.spec!.unschedulable = true;
    // Registered cordoned: carry the matching taint from the first moment (as the kubelet does).
    if (!taints.some((t) => t.key === UNSCHEDULABLE_TAINT)) taints.push({ key: UNSCHEDULABLE_TAINT, effect: 'NoSchedule' });
  } else {
    const i = taints.findIndex((t) => t.key === UNSCHEDULABLE_TAINT);
    if (i >= 0) taints.splice(i, 1);
  }
  if (taints.length > 0) node.spec!.taints = taints;
  // Its pods keep their addresses: the Node comes back with the range they are from.
  if (observed?.podCIDRs?.length) {
    node.spec!.podCIDR = observed.podCIDRs[0];
    node.spec!.podCIDRs = [...observed.podCIDRs];
  }
  return node;
}

/**
 * Taints the control plane derives from the Node's conditions (node lifecycle controller). They are
 * not operator state: restoring a stale not-ready or unreachable taint on a re-created Node would
 * evict pods for no reason. (The operator's out-of-service taint is kept.)
 */
const DERIVED_TAINTS = new Set([
  'node.kubernetes.io/not-ready',
  'node.kubernetes.io/unreachable',
  'node.kubernetes.io/memory-pressure',
  'node.kubernetes.io/disk-pressure',
  'node.kubernetes.io/pid-pressure',
  'node.kubernetes.io/network-unavailable',
]);
const UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable';

/** The operator-owned part of a Node as seen in the API, to persist. */
export function observe(node: Node, at: number): ObservedNode {
  const annotations = { ...(node.metadata.annotations ?? {}) };
  // A retire request is an instruction, not state to restore.
  delete annotations[RETIRE_ANNOTATION];
  return {
    nodeName: node.metadata.name ?? '',
    labels: { ...(node.metadata.labels ?? {}) },
    annotations,
    taints: (node.spec?.taints ?? []).filter((t) => !DERIVED_TAINTS.has(t.key)).map((t) => ({ ...t })),
    unschedulable: node.spec?.unschedulable === true,
    ...(node.spec?.podCIDRs?.length ? { podCIDRs: [...node.spec.podCIDRs] } : {}),
    observedAt: rfc3339(at),
  };
}

export function sameObserved(a: ObservedNode | undefined, b: ObservedNode): boolean {
  if (!a) return false;
  return JSON.stringify({ ...a, observedAt: '' }) === JSON.stringify({ ...b, observedAt: '' });
}

export interface Readiness {
  ready: boolean;
  reason: string;
  message: string;
}

export const READY: Readiness = { ready: true, reason: 'KubeletReady', message: 'skiff agent is posting ready status' };

function condition(type: string, status: 'True' | 'False', reason: string, message: string): NodeCondition {
  return { type, status, reason, message };
}

/** Conditions as the agent sees them now; times are filled in by withTimes(). */
export function currentConditions(r: Readiness): NodeCondition[] {
  return [
    condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'skiff agent has sufficient memory available'),
    condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'skiff agent has no disk pressure'),
    condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'skiff agent has sufficient PID available'),
    condition('Ready', r.ready ? 'True' : 'False', r.reason, r.message),
  ];
}

/** Heartbeat now; transition time kept from the previous report while the status is unchanged. */
export function withTimes(conditions: NodeCondition[], previous: NodeCondition[] | undefined, now: number): NodeCondition[] {
  const t = rfc3339(now);
  return conditions.map((c) => {
    const prev = previous?.find((p) => p.type === c.type);
    const transition = prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : t;
    return { ...c, lastHeartbeatTime: t, lastTransitionTime: transition };
  });
}

export function nodeStatus(cfg: NodeConfig, conditions: NodeCondition[]): NodeStatus {
  return {
    capacity: { ...cfg.capacity },
    allocatable: { ...cfg.capacity },
    conditions,
    addresses: [
      { type: 'InternalIP', address: cfg.nodeIP },
      { type: 'Hostname', address: cfg.nodeName },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: cfg.kubeletPort } },
    nodeInfo: {
      machineID: cfg.machineId,
      systemUUID: cfg.machineId,
      bootID: bootId(),
      kernelVersion: release(),
      osImage: osImage(),
      containerRuntimeVersion: cfg.runtimeVersion ?? `skiff-${cfg.runtime}://${SKIFF_VERSION}`,
      kubeletVersion: AGENT_VERSION,
      kubeProxyVersion: '',
      operatingSystem: platform(),
      architecture: goArch(),
    },
  };
}

/** Status equality for "did anything change", ignoring heartbeat times (as the kubelet compares). */
export function statusChanged(a: NodeStatus | undefined, b: NodeStatus): boolean {
  if (!a) return true;
  const strip = (s: NodeStatus) => ({ ...s, conditions: (s.conditions ?? []).map((c) => ({ ...c, lastHeartbeatTime: '' })) });
  return JSON.stringify(strip(a)) !== JSON.stringify(strip(b));
}
