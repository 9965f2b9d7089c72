// What a PodDisruptionBudget allows right now, computed from the live pods: shared by the eviction
// subresource (which spends the allowance) and the disruption controller (which reports it in status).
import { badRequest } from './errors.js';
import { matchLabelSelectorObject, type LabelSelectorObject } from './labels.js';
import type { KubeObject } from './types.js';
import { isPodReady } from './kinds/pod.js';

export interface PdbSpec {
  selector?: LabelSelectorObject;
  minAvailable?: number | string;
  maxUnavailable?: number | string;
}

export interface PdbStatus {
  disruptedPods?: Record<string, string>;
  disruptionsAllowed?: number;
  currentHealthy?: number;
  desiredHealthy?: number;
  expectedPods?: number;
  observedGeneration?: number;
  conditions?: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string; observedGeneration?: number }[];
}

/** How long an eviction stays counted as a disruption before the pod's deletion is observed (upstream: 2 min). */
const DISRUPTED_POD_TTL_MS = 120_000;

function scaled(value: number | string, total: number, roundUp: boolean): number {
  if (typeof value === 'number') return value;
  const m = /^(\d+)%$/.exec(value);
  if (!m) throw badRequest(`invalid value for IntOrString: invalid type: string is not a percentage: ${JSON.stringify(value)}`);
  const v = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(v) : Math.floor(v);
}

export interface Budget {
  healthy: number;
  desired: number;
  expected: number;
  allowed: number;
}

/**
 * The evictions still in flight: their pod is there and not yet leaving, and the window in which
 * its deletion must be seen has not passed. `nextExpiry` is when the first of them lapses.
 */
export function pendingDisruptions(
  disrupted: Record<string, string> | undefined,
  pods: KubeObject[],
  now: number,
): { pods: Record<string, string>; nextExpiry?: number } {
  const live = new Map(pods.map((p) => [p.metadata.name!, p]));
  const out: Record<string, string> = {};
  let nextExpiry: number | undefined;
  for (const [name, at] of Object.entries(disrupted ?? {})) {
    const pod = live.get(name);
    const expires = Date.parse(at) + DISRUPTED_POD_TTL_MS;
    if (!pod || pod.metadata.deletionTimestamp || !(expires > now)) continue;
    out[name] = at;
    nextExpiry = Math.min(nextExpiry ?? expires, expires);
  }
  return nextExpiry === undefined ? { pods: out } : { pods: out, nextExpiry };
}

/** What the budget allows now, from the namespace's pods and the evictions still pending. */
export function computeBudget(spec: PdbSpec, pending: Record<string, string>, pods: KubeObject[]): Budget {
  const matching = pods.filter((p) => spec.selector && matchLabelSelectorObject(spec.selector, p.metadata.labels ?? {}));
  const expected = matching.length;
  const healthy = matching.filter((p) => !p.metadata.deletionTimestamp && isPodReady(p) && !(p.metadata.name! in pending)).length;
  let desired = 0;
  if (spec.minAvailable !== undefined) desired = scaled(spec.minAvailable, expected, true);
  else if (spec.maxUnavailable !== undefined) desired = expected - scaled(spec.maxUnavailable, expected, true);
  return { healthy, desired, expected, allowed: Math.max(0, healthy - desired) };
}
