// pods/eviction: a delete that honours PodDisruptionBudgets. The budget's allowance is computed
// from the live pods and spent through a compare-and-swap on the PDB's status, so two API
// servers evicting at once cannot both take the last disruption.
import type { KubeObject } from '../../api/types.js';
import { StatusError, badRequest, isStatusError, successStatus, tooManyRequests } from '../../api/errors.js';
import { matchLabelSelectorObject, type LabelSelectorObject } from '../../api/labels.js';
import type { ObjectStore, DeleteOptions } from '../object-store.js';
import type { WriteContext } from '../request-context.js';
import { alwaysMatch } from '../watch-cache.js';

interface PdbSpec {
  selector?: LabelSelectorObject;
  minAvailable?: number | string;
  maxUnavailable?: number | string;
}

interface PdbStatus {
  disruptedPods?: Record<string, string>;
  disruptionsAllowed?: number;
  currentHealthy?: number;
  desiredHealthy?: number;
  expectedPods?: number;
  observedGeneration?: number;
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

function isReady(pod: KubeObject): boolean {
  const conditions = ((pod.status ?? {}) as { conditions?: { type: string; status: string }[] }).conditions ?? [];
  return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
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
    if (p.metadata.deletionTimestamp || !isReady(p)) return false;
    const at = disrupted[p.metadata.name!];
    return !(at && now - Date.parse(at) < DISRUPTED_POD_TTL_MS);
  }).length;
  let desired = 0;
  if (spec.minAvailable !== undefined) desired = scaled(spec.minAvailable, expected, true);
  else if (spec.maxUnavailable !== undefined) desired = expected - scaled(spec.maxUnavailable, expected, true);
  return { healthy, desired, expected, allowed: Math.max(0, healthy - desired) };
}

export async function evictPod(
  pods: ObjectStore,
  pdbs: ObjectStore,
  namespace: string,
  name: string,
  eviction: KubeObject,
  ctx: WriteContext,
  now: () => number,
): Promise<unknown> {
  const deleteOptions = (eviction.deleteOptions ?? {}) as DeleteOptions & { dryRun?: string[] };
  const opts: DeleteOptions = {};
  if (typeof deleteOptions.gracePeriodSeconds === 'number') opts.gracePeriodSeconds = deleteOptions.gracePeriodSeconds;
  if (deleteOptions.preconditions) opts.preconditions = deleteOptions.preconditions;
  const writeCtx: WriteContext = Array.isArray(deleteOptions.dryRun) && deleteOptions.dryRun.includes('All') ? { ...ctx, dryRun: true } : ctx;

  for (let attempt = 0; attempt < 8; attempt++) {
    const pod = await pods.get(namespace, name);
    const phase = ((pod.status ?? {}) as { phase?: string }).phase;
    // Pods that are not running or already leaving disrupt nothing (upstream's canIgnorePDB).
    if (phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || pod.metadata.deletionTimestamp) {
      await pods.delete(namespace, name, opts, writeCtx);
      return successStatus(201);
    }
    const all = (await pdbs.list(namespace, { filter: alwaysMatch })).items;
    const matching = all.filter((p) => {
      const sel = ((p.spec ?? {}) as PdbSpec).selector;
      return sel && matchLabelSelectorObject(sel, pod.metadata.labels ?? {});
    });
    if (matching.length > 1) {
      throw tooManyRequests('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
    }
    const pdb = matching[0];
    if (!pdb) {
      await pods.delete(namespace, name, opts, writeCtx);
      return successStatus(201);
    }
    const namespacePods = (await pods.list(namespace, { filter: alwaysMatch })).items;
    const budget = computeBudget(pdb, namespacePods, now());
    if (budget.allowed < 1) {
      throw tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", [
        {
          reason: 'DisruptionBudget',
          message: `The disruption budget ${pdb.metadata.name} needs ${budget.desired} healthy pods and has ${budget.healthy} currently`,
        },
      ]);
    }
    if (writeCtx.dryRun) return successStatus(201);
    try {
      await pdbs.update(
        namespace,
        pdb.metadata.name!,
        (current) => {
          const status = { ...((current.status ?? {}) as PdbStatus) };
          const disrupted = { ...(status.disruptedPods ?? {}) };
          for (const [pod, at] of Object.entries(disrupted)) if (now() - Date.parse(at) >= DISRUPTED_POD_TTL_MS) delete disrupted[pod];
          disrupted[name] = new Date(now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
          status.disruptedPods = disrupted;
          status.disruptionsAllowed = budget.allowed - 1;
          status.currentHealthy = budget.healthy;
          status.desiredHealthy = budget.desired;
          status.expectedPods = budget.expected;
          return { ...current, status };
        },
        { ...writeCtx, fieldManager: 'skiff-eviction' },
        { subresource: 'status', preconditionRv: () => pdb.metadata.resourceVersion },
      );
    } catch (e) {
      if (isStatusError(e, 'Conflict')) continue;
      throw e;
    }
    await pods.delete(namespace, name, opts, writeCtx);
    return successStatus(201);
  }
  throw new StatusError(429, 'TooManyRequests', 'the disruption budget is changing too quickly; retry the eviction', { retryAfterSeconds: 1 });
}
