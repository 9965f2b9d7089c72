// pods/eviction: a delete that honours PodDisruptionBudgets. The budget's allowance is computed
// from the live pods and spent through a compare-and-swap on the PDB's status, so two API
// servers evicting at once cannot both take the last disruption.
import type { KubeObject } from '../../api/types.js';
import { StatusError, isStatusError, successStatus, tooManyRequests } from '../../api/errors.js';
import { matchLabelSelectorObject } from '../../api/labels.js';
import { computeBudget, pendingDisruptions, type PdbSpec, type PdbStatus } from '../../api/disruption-budget.js';
import { rfc3339 } from '../../util/time.js';
import type { ObjectStore, DeleteOptions } from '../object-store.js';
import type { WriteContext } from '../request-context.js';
import { alwaysMatch } from '../watch-cache.js';

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
    const pending = pendingDisruptions(((pdb.status ?? {}) as PdbStatus).disruptedPods, namespacePods, now()).pods;
    const budget = computeBudget((pdb.spec ?? {}) as PdbSpec, pending, namespacePods);
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
          // `current` is `pdb` (the precondition below), so `pending` is still its pending evictions.
          const status = { ...((current.status ?? {}) as PdbStatus) };
          status.disruptedPods = { ...pending, [name]: rfc3339(now()) };
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
