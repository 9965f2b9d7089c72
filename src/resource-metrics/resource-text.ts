// The kubelet's resource metrics endpoint (/metrics/resource): the few counters and gauges
// metrics-server scrapes, in the Prometheus text format with a timestamp on each sample (when the
// figure was read, not when it was served). The writer makes it from a summary; the parser reads
// it back (the API server's scraper), tolerating the other series a kubelet adds.
import { podUsage, type UsageReport } from './summary.js';

interface Series {
  name: string;
  type: 'counter' | 'gauge';
  help: string;
}

const CONTAINER_CPU: Series = { name: 'container_cpu_usage_seconds_total', type: 'counter', help: '[STABLE] Cumulative cpu time consumed by the container in core-seconds' };
const CONTAINER_MEMORY: Series = { name: 'container_memory_working_set_bytes', type: 'gauge', help: '[STABLE] Current working set of the container in bytes' };
const CONTAINER_START: Series = { name: 'container_start_time_seconds', type: 'gauge', help: '[STABLE] Start time of the container since unix epoch in seconds' };
const NODE_CPU: Series = { name: 'node_cpu_usage_seconds_total', type: 'counter', help: '[STABLE] Cumulative cpu time consumed by the node in core-seconds' };
const NODE_MEMORY: Series = { name: 'node_memory_working_set_bytes', type: 'gauge', help: '[STABLE] Current working set of the node in bytes' };
const POD_CPU: Series = { name: 'pod_cpu_usage_seconds_total', type: 'counter', help: '[STABLE] Cumulative cpu time consumed by the pod in core-seconds' };
const POD_MEMORY: Series = { name: 'pod_memory_working_set_bytes', type: 'gauge', help: '[STABLE] Current working set of the pod in bytes' };
const SCRAPE_ERROR: Series = { name: 'resource_scrape_error', type: 'gauge', help: '[STABLE] 1 if there was an error while getting container metrics, 0 otherwise' };

export const RESOURCE_METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function labels(l: Record<string, string>): string {
  const parts = Object.entries(l).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

/** /metrics/resource from a report; `scrapeError` when the runtime could not be read. */
export function resourceMetricsText(report: UsageReport, scrapeError = false): string {
  const out: string[] = [];
  const block = (s: Series, lines: string[]): void => {
    if (lines.length === 0) return;
    out.push(`# HELP ${s.name} ${s.help}`, `# TYPE ${s.name} ${s.type}`, ...lines);
  };
  const sample = (s: Series, l: Record<string, string>, value: number, timestampMs?: number): string => `${s.name}${labels(l)} ${value}${timestampMs !== undefined ? ` ${Math.round(timestampMs)}` : ''}`;
  const containers = report.pods.flatMap((p) => p.containers.map((c) => ({ c, l: { container: c.name, namespace: p.namespace, pod: p.name } })));
  block(CONTAINER_CPU, containers.map(({ c, l }) => sample(CONTAINER_CPU, l, c.usage.cpuCoreNanoSeconds / 1e9, c.usage.timestampMs)));
  block(CONTAINER_MEMORY, containers.map(({ c, l }) => sample(CONTAINER_MEMORY, l, c.usage.memoryWorkingSetBytes, c.usage.timestampMs)));
  block(CONTAINER_START, containers.map(({ c, l }) => sample(CONTAINER_START, l, c.startedAtMs / 1000)));
  const n = report.node;
  block(NODE_CPU, [sample(NODE_CPU, {}, n.cpuCoreNanoSeconds / 1e9, n.timestampMs)]);
  block(NODE_MEMORY, [sample(NODE_MEMORY, {}, n.memoryWorkingSetBytes, n.timestampMs)]);
  const pods = report.pods.filter((p) => p.containers.length > 0).map((p) => ({ p, u: podUsage(p), l: { namespace: p.namespace, pod: p.name } }));
  block(POD_CPU, pods.map(({ u, l }) => sample(POD_CPU, l, u.cpuCoreNanoSeconds / 1e9, u.timestampMs)));
  block(POD_MEMORY, pods.map(({ u, l }) => sample(POD_MEMORY, l, u.memoryWorkingSetBytes, u.timestampMs)));
  block(SCRAPE_ERROR, [sample(SCRAPE_ERROR, {}, scrapeError ? 1 : 0)]);
  return `${out.join('\n')}\n`;
}

/** One container's figures as scraped. */
export interface ScrapedContainer {
  namespace: string;
  pod: string;
  container: string;
  timestampMs: number;
  cpuCoreNanoSeconds: number;
  memoryWorkingSetBytes: number;
  startedAtMs?: number;
}

export interface ScrapedNode {
  node?: { timestampMs: number; cpuCoreNanoSeconds: number; memoryWorkingSetBytes: number };
  containers: ScrapedContainer[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(?:\s+(-?\d+))?\s*$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function parseLabels(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!text) return out;
  for (const m of text.matchAll(LABEL)) out[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  return out;
}

/**
 * The node's and containers' figures in a /metrics/resource answer. A sample without its own
 * timestamp is taken as read at `scrapedAtMs`; a container missing its CPU or memory is left out
 * (metrics-server drops such a container's pod).
 */
export function parseResourceMetrics(text: string, scrapedAtMs: number): ScrapedNode {
  const containers = new Map<string, Partial<ScrapedContainer> & { namespace: string; pod: string; container: string }>();
  let nodeCpu: { v: number; t: number } | undefined;
  let nodeMemory: { v: number; t: number } | undefined;
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) continue;
    const value = Number(m[3]);
    if (!Number.isFinite(value)) continue;
    const t = m[4] !== undefined ? Number(m[4]) : scrapedAtMs;
    const name = m[1]!;
    if (name === NODE_CPU.name) nodeCpu = { v: value, t };
    else if (name === NODE_MEMORY.name) nodeMemory = { v: value, t };
    else if (name === CONTAINER_CPU.name || name === CONTAINER_MEMORY.name || name === CONTAINER_START.name) {
      const l = parseLabels(m[2]);
      if (!l.namespace || !l.pod || !l.container) continue;
      const key = `${l.namespace}/${l.pod}/${l.container}`;
      let c = containers.get(key);
      if (!c) containers.set(key, (c = { namespace: l.namespace, pod: l.pod, container: l.container }));
      if (name === CONTAINER_CPU.name) {
        c.cpuCoreNanoSeconds = Math.round(value * 1e9);
        c.timestampMs = t;
      } else if (name === CONTAINER_MEMORY.name) c.memoryWorkingSetBytes = value;
      else c.startedAtMs = Math.round(value * 1000);
    }
  }
  const out: ScrapedNode = { containers: [] };
  if (nodeCpu && nodeMemory) out.node = { timestampMs: nodeCpu.t, cpuCoreNanoSeconds: Math.round(nodeCpu.v * 1e9), memoryWorkingSetBytes: nodeMemory.v };
  for (const c of containers.values()) {
    if (c.cpuCoreNanoSeconds === undefined || c.memoryWorkingSetBytes === undefined || c.timestampMs === undefined) continue;
    out.containers.push(c as ScrapedContainer);
  }
  return out;
}
