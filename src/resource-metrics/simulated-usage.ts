// What a simulated container "uses": figures made from its requests, steady and different per
// container, and computed from the clock alone — no sampling, no state, nothing per node while
// nobody asks. The API server computes the same figures for a `skiff sim` fleet's nodes from
// its own caches (they serve no kubelet endpoint to scrape), and a standalone simulated agent
// serves them on its summary API.
import { parseQuantity } from '../api/quantity.js';

/** A container as the figures need it. */
export interface SimulatedContainer {
  /** Something unique and stable to the container (pod uid and container name). */
  key: string;
  requests?: Record<string, string | number>;
  startedAtMs: number;
}

/** Without a request: a few millicores and MiB, as an idle small process. */
const DEFAULT_NANOCORES = 2_000_000;
const DEFAULT_BYTES = 4 * 1024 * 1024;

/** A simulated node's own share, beside its pods: what an idle kubelet and its system use. */
export const SIMULATED_NODE_NANOCORES = 50_000_000;
export const SIMULATED_NODE_BYTES = 256 * 1024 * 1024;

/** A fraction in [0, 1) from the key: the same container always gets the same. */
function share(key: string): number {
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
  return (h >>> 0) / 2 ** 32;
}

function requested(requests: SimulatedContainer['requests'], name: string): number | undefined {
  const v = requests?.[name];
  if (v === undefined) return undefined;
  try {
    return parseQuantity(v);
  } catch {
    return undefined;
  }
}

/** Steady CPU rate (nanocores) and working set (bytes, whole pages) of a simulated container. */
export function simulatedRate(c: SimulatedContainer): { nanoCores: number; memoryBytes: number } {
  const f = share(c.key);
  const cpu = requested(c.requests, 'cpu');
  const memory = requested(c.requests, 'memory');
  // Between 30 % and 70 % of what it asked for.
  const nanoCores = Math.round((cpu !== undefined ? cpu * 1e9 : DEFAULT_NANOCORES) * (0.3 + 0.4 * f));
  const bytes = (memory ?? DEFAULT_BYTES) * (0.3 + 0.4 * f);
  return { nanoCores, memoryBytes: Math.max(4096, Math.round(bytes / 4096) * 4096) };
}

/** The container's counters at `nowMs`, as a runtime would report them. */
export function simulatedUsage(c: SimulatedContainer, nowMs: number): { cpuCoreNanoSeconds: number; memoryWorkingSetBytes: number } {
  const r = simulatedRate(c);
  const elapsedMs = Math.max(0, nowMs - c.startedAtMs);
  return { cpuCoreNanoSeconds: Math.round((r.nanoCores * elapsedMs) / 1000), memoryWorkingSetBytes: r.memoryBytes };
}
