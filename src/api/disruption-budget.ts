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
export const DISRUPTED_POD_TTL_MS = 120_000;

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

export function computeBudget(pdb: KubeObject, pods: KubeObject[], now: number): Budget {
  const spec = (pdb.spec ?? {}) as PdbSpec;
  const disrupted = ((pdb.status ?? {}) as PdbStatus).disruptedPods ?? {};
  const matching = pods.filter((p) => spec.selector && matchLabelSelectorObject(spec.selector, p.metadata.labels ?? {}));
  const expected = matching.length;
  const healthy = matching.filter((p) => {
    if (p.metadata.deletionTimestamp || !isPodReady(p)) return false;
    const at = disrupted[p.metadata.name!];
    return !(at && now - Date.parse(at) < DISRUPTED_POD_TTL_MS);
  }).length;
  let desired = 0;
  if (spec.minAvailable !== undefined) desired = scaled(spec.minAvailable, expected, true);
  else if (spec.maxUnavailable !== undefined) desired = expected - scaled(spec.maxUnavailable, expected, true);
  return { healthy, desired, expected, allowed: Math.max(0, healthy - desired) };
}
