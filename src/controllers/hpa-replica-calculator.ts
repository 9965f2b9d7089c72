// The HorizontalPodAutoscaler's replica count for one resource metric, with upstream's rules
// (pkg/controller/podautoscaler/replica_calculator.go): the usage ratio of ready pods against the
// target, no change within the tolerance, pods without metrics assumed at 100 % of their request
// (or the target) when scaling down and at 0 when scaling up, pods not yet ready counted at 0 only
// when they would hold back a scale-up, and no change when those assumptions reverse the direction.
import type { Pod } from '../api/kinds/pod.js';
import { milliValue } from '../api/quantity.js';

/** One pod's usage of a resource, in milli-units (millicores, millibytes), and when it was measured. */
export interface PodMetric {
  /** Milliseconds since epoch. */
  timestamp: number;
  windowMs: number;
  value: number;
}

export type PodMetrics = Map<string, PodMetric>;

export interface ReplicaCalculatorOptions {
  /** --horizontal-pod-autoscaler-tolerance: 0.1. */
  tolerance: number;
  /** --horizontal-pod-autoscaler-cpu-initialization-period: 5 min. */
  cpuInitializationPeriodMs: number;
  /** --horizontal-pod-autoscaler-initial-readiness-delay: 30 s. */
  delayOfInitialReadinessStatusMs: number;
}

export const DEFAULT_REPLICA_CALCULATOR_OPTIONS: ReplicaCalculatorOptions = {
  tolerance: 0.1,
  cpuInitializationPeriodMs: 5 * 60_000,
  delayOfInitialReadinessStatusMs: 30_000,
};

export interface UtilizationProposal {
  replicas: number;
  /** Average utilization, percent of request. */
  utilization: number;
  /** Average usage, milli-units. */
  rawUtilization: number;
  timestamp: number;
}

export interface AverageValueProposal {
  replicas: number;
  /** Average usage, milli-units. */
  usage: number;
  timestamp: number;
}

/** An error whose message is the whole of what upstream reports (wrapped by the caller). */
export class MetricComputeError extends Error {}

interface GroupedPods {
  readyPodCount: number;
  unready: Set<string>;
  missing: Set<string>;
  ignored: Set<string>;
}

function readyCondition(pod: Pod): { status?: string; lastTransitionTime?: string | null } | undefined {
  return pod.status?.conditions?.find((c) => c.type === 'Ready');
}

/** Upstream's groupPods: which pods count, which have no metric, which are unready or ignored. */
export function groupPods(pods: readonly Pod[], metrics: PodMetrics, resource: string, now: number, opts: ReplicaCalculatorOptions): GroupedPods {
  const out: GroupedPods = { readyPodCount: 0, unready: new Set(), missing: new Set(), ignored: new Set() };
  for (const pod of pods) {
    const name = pod.metadata.name!;
    if (pod.metadata.deletionTimestamp || pod.status?.phase === 'Failed') {
      out.ignored.add(name);
      continue;
    }
    if (pod.status?.phase === 'Pending') {
      out.unready.add(name);
      continue;
    }
    const metric = metrics.get(name);
    if (!metric) {
      out.missing.add(name);
      continue;
    }
    if (resource === 'cpu') {
      const condition = readyCondition(pod);
      const started = Date.parse(pod.status?.startTime ?? '');
      let unready: boolean;
      if (!condition || Number.isNaN(started)) unready = true;
      else {
        const transition = Date.parse(condition.lastTransitionTime ?? '') || 0;
        if (started + opts.cpuInitializationPeriodMs > now) {
          // Still initialising: a sample taken before a full window since the last transition is not trusted.
          unready = condition.status === 'False' || metric.timestamp < transition + metric.windowMs;
        } else {
          // Unready and never ready since it started.
          unready = condition.status === 'False' && started + opts.delayOfInitialReadinessStatusMs > transition;
        }
      }
      if (unready) {
        out.unready.add(name);
        continue;
      }
    }
    out.readyPodCount++;
  }
  return out;
}

/** Each pod's request of `resource` (milli-units), summed over its containers (or the one named). */
export function podRequests(pods: readonly Pod[], resource: string, container?: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const pod of pods) {
    let sum = 0;
    for (const c of pod.spec?.containers ?? []) {
      if (container && c.name !== container) continue;
      const request = c.resources?.requests?.[resource];
      if (request === undefined) throw new MetricComputeError(`missing request for ${resource} in container ${c.name} of Pod ${pod.metadata.name}`);
      sum += milliValue(request);
    }
    out.set(pod.metadata.name!, sum);
  }
  return out;
}

/** Upstream's GetResourceUtilizationRatio over the pods that have a metric. */
export function utilizationRatio(metrics: PodMetrics, requests: Map<string, number>, targetUtilization: number): { ratio: number; utilization: number; raw: number } {
  let metricsTotal = 0;
  let requestsTotal = 0;
  let entries = 0;
  for (const [name, metric] of metrics) {
    const request = requests.get(name);
    if (request === undefined) continue;
    metricsTotal += metric.value;
    requestsTotal += request;
    entries++;
  }
  if (requestsTotal === 0) throw new MetricComputeError('no metrics returned matched known pods');
  const utilization = Math.trunc((metricsTotal * 100) / requestsTotal);
  return { ratio: utilization / targetUtilization, utilization, raw: Math.trunc(metricsTotal / entries) };
}

function usageRatio(metrics: PodMetrics, target: number): { ratio: number; usage: number } {
  let total = 0;
  for (const m of metrics.values()) total += m.value;
  const usage = Math.trunc(total / metrics.size);
  return { ratio: usage / target, usage };
}

function within(ratio: number, tolerance: number): boolean {
  return Math.abs(1 - ratio) <= tolerance;
}

/**
 * The shared second pass: fill in the pods without a (trusted) metric, recompute the ratio, and keep
 * the current count when the assumption reverses the direction or lands within tolerance.
 */
function withAssumptions(
  currentReplicas: number,
  ratio: number,
  grouped: GroupedPods,
  metrics: PodMetrics,
  missingValue: (name: string) => number,
  recompute: (m: PodMetrics) => number,
  tolerance: number,
): number {
  const scaleUpWithUnready = grouped.unready.size > 0 && ratio > 1;
  if (grouped.missing.size > 0) {
    for (const name of grouped.missing) {
      if (ratio < 1) metrics.set(name, { timestamp: 0, windowMs: 0, value: missingValue(name) });
      else if (ratio > 1) metrics.set(name, { timestamp: 0, windowMs: 0, value: 0 });
    }
  }
  if (scaleUpWithUnready) for (const name of grouped.unready) metrics.set(name, { timestamp: 0, windowMs: 0, value: 0 });
  const newRatio = recompute(metrics);
  if (within(newRatio, tolerance) || (ratio < 1 && newRatio > 1) || (ratio > 1 && newRatio < 1)) return currentReplicas;
  const replicas = Math.ceil(newRatio * metrics.size);
  if ((newRatio < 1 && replicas > currentReplicas) || (newRatio > 1 && replicas < currentReplicas)) return currentReplicas;
  return replicas;
}

function trusted(pods: readonly Pod[], given: PodMetrics, resource: string, now: number, opts: ReplicaCalculatorOptions): { grouped: GroupedPods; metrics: PodMetrics } {
  if (pods.length === 0) throw new MetricComputeError('no pods returned by selector while calculating replica count');
  const grouped = groupPods(pods, given, resource, now, opts);
  const metrics: PodMetrics = new Map([...given].filter(([name]) => !grouped.ignored.has(name) && !grouped.unready.has(name)));
  // Metrics of pods the selector no longer matches do not count either.
  const names = new Set(pods.map((p) => p.metadata.name!));
  for (const name of [...metrics.keys()]) if (!names.has(name)) metrics.delete(name);
  if (metrics.size === 0) throw new MetricComputeError('did not receive metrics for targeted pods (pods might be unready)');
  return { grouped, metrics };
}

/** Upstream's GetResourceReplicas: a Utilization target, percent of request. */
export function resourceReplicas(
  currentReplicas: number,
  targetUtilization: number,
  resource: string,
  pods: readonly Pod[],
  given: PodMetrics,
  timestamp: number,
  now: number,
  opts: ReplicaCalculatorOptions,
  container?: string,
): UtilizationProposal {
  const { grouped, metrics } = trusted(pods, given, resource, now, opts);
  const requests = podRequests(pods, resource, container);
  const { ratio, utilization, raw } = utilizationRatio(metrics, requests, targetUtilization);
  const result = (replicas: number): UtilizationProposal => ({ replicas, utilization, rawUtilization: raw, timestamp });
  if (!(grouped.unready.size > 0 && ratio > 1) && grouped.missing.size === 0) {
    if (within(ratio, opts.tolerance)) return result(currentReplicas);
    return result(Math.ceil(ratio * grouped.readyPodCount));
  }
  const fallback = Math.max(100, targetUtilization);
  const replicas = withAssumptions(
    currentReplicas,
    ratio,
    grouped,
    metrics,
    (name) => Math.trunc(((requests.get(name) ?? 0) * fallback) / 100),
    (m) => utilizationRatio(m, requests, targetUtilization).ratio,
    opts.tolerance,
  );
  return result(replicas);
}

/** Upstream's GetRawResourceReplicas: an AverageValue target, milli-units per pod. */
export function rawResourceReplicas(
  currentReplicas: number,
  targetUsage: number,
  resource: string,
  pods: readonly Pod[],
  given: PodMetrics,
  timestamp: number,
  now: number,
  opts: ReplicaCalculatorOptions,
): AverageValueProposal {
  const { grouped, metrics } = trusted(pods, given, resource, now, opts);
  const { ratio, usage } = usageRatio(metrics, targetUsage);
  const result = (replicas: number): AverageValueProposal => ({ replicas, usage, timestamp });
  if (!(grouped.unready.size > 0 && ratio > 1) && grouped.missing.size === 0) {
    if (within(ratio, opts.tolerance)) return result(currentReplicas);
    return result(Math.ceil(ratio * grouped.readyPodCount));
  }
  return result(withAssumptions(currentReplicas, ratio, grouped, metrics, () => targetUsage, (m) => usageRatio(m, targetUsage).ratio, opts.tolerance));
}
