// Disruption controller (upstream's disruption controller): keeps every PodDisruptionBudget's
// status true to its pods, so `kubectl get pdb` shows what an eviction would be allowed now:
// expected, healthy and desired pods, disruptionsAllowed, the DisruptionAllowed condition, and
// disruptedPods without the evictions that have been carried out (pod gone or leaving) or that
// were never carried out (older than the 2-minute window).
import { setMaxListeners } from 'node:events';
import { computeBudget, pendingDisruptions, type PdbSpec, type PdbStatus } from '../api/disruption-budget.js';
import { matchLabelSelectorObject } from '../api/labels.js';
import type { KubeObject } from '../api/types.js';
import { isStatusError } from '../api/errors.js';
import type { Informer } from '../client/informer.js';
import { rfc3339 } from '../util/time.js';
import { setCondition } from './deployment-rollout.js';
import { PATHS } from '../controller-kit/informers.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { ReconcileLoop, type ReconcileResult, type Reconciler } from '../controller-kit/reconciler.js';

export class DisruptionController implements Controller {
  readonly name = 'disruption';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    setMaxListeners(0, signal);
    const pdbs = ctx.informers.for<KubeObject>(PATHS.pdbs);
    const pods = ctx.informers.for<KubeObject>(PATHS.pods, { readOnly: true });
    const loop = new ReconcileLoop(new BudgetStatus(ctx, pdbs, pods), { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 1);
    const key = (o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`;
    pdbs.addHandlers({ add: (p) => loop.enqueue(key(p)), update: (_o, p) => loop.enqueue(key(p)) });
    // A pod matters to the budgets in its namespace that select it, before or after the change.
    const podChanged = (...versions: KubeObject[]) => {
      const ns = versions[0]!.metadata.namespace;
      for (const pdb of pdbs.list()) {
        if (pdb.metadata.namespace !== ns) continue;
        const sel = ((pdb.spec ?? {}) as PdbSpec).selector;
        if (versions.some((p) => matchLabelSelectorObject(sel, p.metadata.labels ?? {}))) loop.enqueue(key(pdb));
      }
    };
    pods.addHandlers({ add: (p) => podChanged(p), update: (old, p) => podChanged(old, p), delete: (p) => podChanged(p) });
    void Promise.all([pdbs.waitForSync(), pods.waitForSync()]).then(() => loop.run(signal));
  }
}

class BudgetStatus implements Reconciler {
  readonly name = 'disruption';

  constructor(
    private readonly ctx: ControllerContext,
    private readonly pdbs: Informer<KubeObject>,
    private readonly pods: Informer<KubeObject>,
  ) {}

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const pdb = this.pdbs.get(key);
    if (!pdb || pdb.metadata.deletionTimestamp) return;
    const namespace = pdb.metadata.namespace!;
    const now = this.ctx.clock.now();
    const pods = this.pods.list().filter((p) => p.metadata.namespace === namespace);
    const current = (pdb.status ?? {}) as PdbStatus;

    const { pods: disruptedPods, nextExpiry } = pendingDisruptions(current.disruptedPods, pods, now);
    let budget: ReturnType<typeof computeBudget>;
    try {
      budget = computeBudget((pdb.spec ?? {}) as PdbSpec, disruptedPods, pods);
    } catch {
      // A spec the API let through but that cannot be computed (a malformed percentage).
      budget = { healthy: 0, desired: 0, expected: 0, allowed: 0 };
    }
    const generation = pdb.metadata.generation ?? 0;
    const next: PdbStatus = {
      ...current,
      // Copies: the informer's objects are shared and must not change under it.
      ...(current.conditions ? { conditions: current.conditions.map((c) => ({ ...c })) } : {}),
      observedGeneration: generation,
      disruptionsAllowed: budget.allowed,
      currentHealthy: budget.healthy,
      desiredHealthy: budget.desired,
      expectedPods: budget.expected,
    };
    if (Object.keys(disruptedPods).length > 0) next.disruptedPods = disruptedPods;
    else delete next.disruptedPods;
    const allowed = budget.allowed > 0;
    setCondition(next, {
      type: 'DisruptionAllowed',
      status: allowed ? 'True' : 'False',
      reason: allowed ? 'SufficientPods' : 'InsufficientPods',
      message: '',
      lastTransitionTime: rfc3339(now),
      observedGeneration: generation,
    });
    // setCondition keeps an unchanged condition as it was; its observedGeneration still moves on.
    for (const c of next.conditions ?? []) if (c.type === 'DisruptionAllowed') c.observedGeneration = generation;

    const requeue = nextExpiry === undefined ? undefined : { requeueAfterMs: Math.max(0, nextExpiry - now) + 1 };
    if (JSON.stringify(next) === JSON.stringify(current)) return requeue;
    const path = `/apis/policy/v1/namespaces/${namespace}/poddisruptionbudgets/${pdb.metadata.name}/status`;
    try {
      await this.ctx.client.replace(path, { ...pdb, status: next }, { signal });
    } catch (e) {
      // Deleted meanwhile: nothing to report. A conflict (an eviction spent the budget) is retried.
      if (isStatusError(e, 'NotFound')) return;
      throw e;
    }
    return requeue;
  }
}
