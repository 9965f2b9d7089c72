// Figures for the pods of nodes that serve no endpoint to scrape (a `skiff sim` fleet's): made
// from each running container's requests when asked, the same figures a simulated agent reports
// (simulated-usage.ts), read over the last resolution interval. Nothing is stored or sampled.
import type { Pod } from '../../api/kinds/pod.js';
import { SIMULATED_NODE_BYTES, SIMULATED_NODE_NANOCORES, simulatedRate } from '../../resource-metrics/simulated-usage.js';
import type { UsageRate } from '../../resource-metrics/usage-rate.js';

type ContainerFigures = { container: string; nanoCores: number; memoryBytes: number }[];

/**
 * Each cached pod object's figures, made once: the cache hands out the same object until the pod
 * changes, and a changed or deleted pod's entry goes with its object.
 */
const figuresOf = new WeakMap<Pod, ContainerFigures>();

function podFigures(pod: Pod): ContainerFigures {
  let figures = figuresOf.get(pod);
  if (figures) return figures;
  figures = [];
  for (const s of pod.status?.containerStatuses ?? []) {
    const startedAt = s.state?.running?.startedAt;
    if (!startedAt) continue;
    const spec = pod.spec?.containers?.find((c) => c.name === s.name);
    const requests = spec?.resources?.requests as Record<string, string | number> | undefined;
    const r = simulatedRate({ key: `${pod.metadata.uid}/${s.name}`, startedAtMs: Date.parse(startedAt), ...(requests ? { requests } : {}) });
    figures.push({ container: s.name, nanoCores: r.nanoCores, memoryBytes: r.memoryBytes });
  }
  figuresOf.set(pod, figures);
  return figures;
}

/** The running containers' rates of a pod on a simulated node; undefined when none runs. */
export function simulatedPodRates(pod: Pod, nowMs: number, resolutionMs: number): { container: string; rate: UsageRate }[] | undefined {
  if (pod.status?.phase !== 'Running') return undefined;
  const figures = podFigures(pod);
  if (figures.length === 0) return undefined;
  const timestampMs = Math.floor(nowMs / resolutionMs) * resolutionMs;
  return figures.map((f) => ({ container: f.container, rate: { timestampMs, windowMs: resolutionMs, nanoCores: f.nanoCores, memoryWorkingSetBytes: f.memoryBytes } }));
}

/** A simulated node's figures: its own share and its running pods'. */
export function simulatedNodeRate(pods: readonly Pod[], nowMs: number, resolutionMs: number): UsageRate {
  let nanoCores = SIMULATED_NODE_NANOCORES;
  let memory = SIMULATED_NODE_BYTES;
  for (const p of pods) {
    for (const { rate } of simulatedPodRates(p, nowMs, resolutionMs) ?? []) {
      nanoCores += rate.nanoCores;
      memory += rate.memoryWorkingSetBytes;
    }
  }
  return { timestampMs: Math.floor(nowMs / resolutionMs) * resolutionMs, windowMs: resolutionMs, nanoCores, memoryWorkingSetBytes: memory };
}
