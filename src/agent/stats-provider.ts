// What the agent serves at /stats/summary and /metrics/resource: each running container's CPU and
// memory as its runtime reads them (containerd: CRI ListContainerStats; processes: /proc; simulated:
// figures from the requests), the pods' as their containers' sums, and the node's own (the host's
// /proc, or for a simulated node its pods' plus a little of its own). Reading is done when asked,
// at most once a second, so an agent nobody scrapes does no work; the CPU rate is the growth of
// the cumulative counter since the reading before.
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { errorText } from '../util/error-text.js';
import { SamplePair } from '../resource-metrics/usage-rate.js';
import { SIMULATED_NODE_BYTES, SIMULATED_NODE_NANOCORES } from '../resource-metrics/simulated-usage.js';
import type { ContainerReport, PodReport, ReadUsage, UsageReport } from '../resource-metrics/summary.js';
import type { InstanceUsage, Runtime, UsageQuery } from './runtimes/runtime.js';
import type { PodWorker } from './pod-worker.js';

export interface StatsProviderDeps {
  clock: Clock;
  log: Logger;
  nodeName: string;
  runtime: Pick<Runtime, 'name' | 'usage'>;
  workers(): PodWorker[];
  /** The host's own figures (hostUsage); absent for a simulated node, whose figures are its pods'. */
  host?(now: number): (InstanceUsage & { availableBytes?: number }) | undefined;
}

/** Readings closer together than this are answered from the last one. */
const MIN_INTERVAL_MS = 1000;

export interface StatsReading {
  report: UsageReport;
  /** The runtime could not be read: the containers are missing from the report. */
  error?: string;
}

export class StatsProvider {
  private readonly startedAt: number;
  private readonly containers = new Map<string, SamplePair>();
  private readonly node = new SamplePair();
  private last?: { at: number; reading: Promise<StatsReading> };
  private failing = false;

  constructor(private readonly d: StatsProviderDeps) {
    this.startedAt = d.clock.now();
  }

  read(): Promise<StatsReading> {
    const now = this.d.clock.now();
    if (this.last && now - this.last.at < MIN_INTERVAL_MS) return this.last.reading;
    const previousAt = this.last?.at;
    const reading = this.take(now, previousAt);
    this.last = { at: now, reading };
    return reading;
  }

  private async take(now: number, previousAt: number | undefined): Promise<StatsReading> {
    const running = this.d.workers().map((w) => ({ w, instances: w.runningInstances() }));
    const queries: UsageQuery[] = running.flatMap(({ w, instances }) =>
      instances.map(({ container, spec, record }) => ({
        id: record.id,
        ...(record.pid !== undefined ? { pid: record.pid } : {}),
        startedAt: record.startedAt,
        key: `${w.uid}/${container}`,
        ...(spec?.resources?.requests ? { requests: spec.resources.requests as Record<string, string | number> } : {}),
      })),
    );
    let usage = new Map<string, InstanceUsage>();
    let error: string | undefined;
    if (this.d.runtime.usage) {
      try {
        usage = await this.d.runtime.usage(queries);
        if (this.failing) this.d.log.info('container stats can be read from the runtime again');
        this.failing = false;
      } catch (e) {
        error = errorText(e);
        if (!this.failing) this.d.log.warn({ err: error }, 'could not read container stats from the runtime');
        this.failing = true;
      }
    }
    const pods: PodReport[] = [];
    const seen = new Set<string>();
    for (const { w, instances } of running) {
      const containers: ContainerReport[] = [];
      for (const { container, record } of instances) {
        const u = usage.get(record.id);
        if (!u) continue;
        seen.add(record.id);
        let pair = this.containers.get(record.id);
        if (!pair) this.containers.set(record.id, (pair = new SamplePair()));
        pair.push(u);
        containers.push({ name: container, startedAtMs: record.startedAt, usage: withRate(u, pair.rate(record.startedAt, previousAt)?.nanoCores) });
      }
      if (containers.length > 0) pods.push({ name: w.name, namespace: w.namespace, uid: w.uid, startedAtMs: w.startTime, containers });
    }
    // Containers gone since the last reading are forgotten; a failed reading says nothing of them, and
    // forgetting all would cost every container its CPU rate at the next good one.
    if (error === undefined) for (const id of this.containers.keys()) if (!seen.has(id)) this.containers.delete(id);
    const node = this.nodeUsage(now, pods);
    this.node.push(node);
    return { report: { nodeName: this.d.nodeName, nodeStartedAtMs: this.startedAt, node: withRate(node, this.node.rate()?.nanoCores), pods }, ...(error !== undefined ? { error } : {}) };
  }

  private nodeUsage(now: number, pods: PodReport[]): InstanceUsage & { availableBytes?: number } {
    const host = this.d.host?.(now);
    if (host) return host;
    // A simulated node (or a host that cannot be read): its pods, and its own share since it started.
    let cpu = (SIMULATED_NODE_NANOCORES * (now - this.startedAt)) / 1000;
    let memory = SIMULATED_NODE_BYTES;
    for (const p of pods) for (const c of p.containers) {
      cpu += c.usage.cpuCoreNanoSeconds;
      memory += c.usage.memoryWorkingSetBytes;
    }
    return { timestampMs: now, cpuCoreNanoSeconds: cpu, memoryWorkingSetBytes: memory };
  }
}

function withRate(u: InstanceUsage & { availableBytes?: number }, nanoCores: number | undefined): ReadUsage {
  return nanoCores === undefined ? { ...u } : { ...u, nanoCores };
}
