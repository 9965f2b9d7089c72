// The kubelet's summary API (stats/v1alpha1, GET /stats/summary): the node's and each pod's CPU and
// memory, in the field names and units upstream uses. Only what skiff measures is filled in;
// absent fields are left out, as the kubelet leaves out what it cannot read.
import { rfc3339 } from '../util/time.js';

export interface CpuStats {
  /** RFC 3339 time of the reading. */
  time: string;
  /** Rate over the last interval the agent measured; absent until it has two readings. */
  usageNanoCores?: number;
  usageCoreNanoSeconds: number;
}

export interface MemoryStats {
  time: string;
  availableBytes?: number;
  usageBytes?: number;
  workingSetBytes: number;
  rssBytes?: number;
}

export interface ContainerStats {
  name: string;
  startTime: string;
  cpu: CpuStats;
  memory: MemoryStats;
}

export interface PodStats {
  podRef: { name: string; namespace: string; uid: string };
  startTime: string;
  containers: ContainerStats[];
  cpu: CpuStats;
  memory: MemoryStats;
}

export interface NodeStats {
  nodeName: string;
  startTime: string;
  cpu: CpuStats;
  memory: MemoryStats;
}

export interface Summary {
  node: NodeStats;
  pods: PodStats[];
}

/** A reading with its rate, as the agent keeps it (times in ms, which the summary's whole seconds would lose). */
export interface ReadUsage {
  timestampMs: number;
  cpuCoreNanoSeconds: number;
  /** Rate since the reading before; absent for a first reading. */
  nanoCores?: number;
  memoryWorkingSetBytes: number;
  memoryUsageBytes?: number;
  rssBytes?: number;
  availableBytes?: number;
}

export interface ContainerReport {
  name: string;
  startedAtMs: number;
  usage: ReadUsage;
}

export interface PodReport {
  name: string;
  namespace: string;
  uid: string;
  startedAtMs: number;
  containers: ContainerReport[];
}

/** What the agent read: the source of both /stats/summary and /metrics/resource. */
export interface UsageReport {
  nodeName: string;
  nodeStartedAtMs: number;
  node: ReadUsage;
  pods: PodReport[];
}

/** A pod's figures: its containers' added up (a rate only when each container has one). */
export function podUsage(p: PodReport): ReadUsage {
  const sum = (f: (u: ReadUsage) => number | undefined): number | undefined => {
    let total = 0;
    for (const c of p.containers) {
      const v = f(c.usage);
      if (v === undefined) return undefined;
      total += v;
    }
    return total;
  };
  const out: ReadUsage = {
    timestampMs: Math.max(0, ...p.containers.map((c) => c.usage.timestampMs)),
    cpuCoreNanoSeconds: sum((u) => u.cpuCoreNanoSeconds)!,
    memoryWorkingSetBytes: sum((u) => u.memoryWorkingSetBytes)!,
  };
  const rate = sum((u) => u.nanoCores);
  const used = sum((u) => u.memoryUsageBytes);
  const rss = sum((u) => u.rssBytes);
  if (rate !== undefined) out.nanoCores = rate;
  if (used !== undefined) out.memoryUsageBytes = used;
  if (rss !== undefined) out.rssBytes = rss;
  return out;
}

function cpuStats(u: ReadUsage): CpuStats {
  return { time: rfc3339(u.timestampMs), ...(u.nanoCores !== undefined ? { usageNanoCores: Math.round(u.nanoCores) } : {}), usageCoreNanoSeconds: Math.round(u.cpuCoreNanoSeconds) };
}

function memoryStats(u: ReadUsage): MemoryStats {
  return {
    time: rfc3339(u.timestampMs),
    ...(u.availableBytes !== undefined ? { availableBytes: u.availableBytes } : {}),
    ...(u.memoryUsageBytes !== undefined ? { usageBytes: u.memoryUsageBytes } : {}),
    workingSetBytes: u.memoryWorkingSetBytes,
    ...(u.rssBytes !== undefined ? { rssBytes: u.rssBytes } : {}),
  };
}

/** The summary API's answer for a report. */
export function summaryOf(r: UsageReport): Summary {
  return {
    node: { nodeName: r.nodeName, startTime: rfc3339(r.nodeStartedAtMs), cpu: cpuStats(r.node), memory: memoryStats(r.node) },
    pods: r.pods.map((p) => {
      const total = podUsage(p);
      return {
        podRef: { name: p.name, namespace: p.namespace, uid: p.uid },
        startTime: rfc3339(p.startedAtMs),
        containers: p.containers.map((c) => ({ name: c.name, startTime: rfc3339(c.startedAtMs), cpu: cpuStats(c.usage), memory: memoryStats(c.usage) })),
        cpu: cpuStats(total),
        memory: memoryStats(total),
      };
    }),
  };
}
