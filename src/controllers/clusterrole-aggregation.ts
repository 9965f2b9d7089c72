// ClusterRole aggregation (upstream's clusterrole-aggregation controller): a ClusterRole with an
// aggregationRule holds the rules of every other ClusterRole its selectors match, in name order,
// each rule once. That is how admin/edit/view grow when a chart adds a role labelled
// rbac.authorization.k8s.io/aggregate-to-edit, and how edit's rules reach admin.
import { isDeepStrictEqual } from 'node:util';
import { isStatusError } from '../api/errors.js';
import { arr, isObject, obj, objArr } from '../api/kinds/json.js';
import type { RoleLike } from '../api/kinds/rbac.js';
import { matchLabelSelectorObject } from '../api/labels.js';
import type { Informer } from '../client/informer.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { ReconcileLoop, type Reconciler } from '../controller-kit/reconciler.js';

const PATH = '/apis/rbac.authorization.k8s.io/v1/clusterroles';

type ClusterRole = RoleLike & { aggregationRule?: unknown };

function selectors(role: ClusterRole): unknown[] {
  return isObject(role.aggregationRule) ? arr(obj(role.aggregationRule).clusterRoleSelectors) : [];
}

/** The rules `role` aggregates from `all`: each matched role's rules, by role name, without repeats. */
export function aggregatedRules(role: ClusterRole, all: readonly ClusterRole[]): unknown[] {
  const sels = selectors(role);
  const sources = all
    .filter((r) => r.metadata.name !== role.metadata.name && sels.some((s) => matchLabelSelectorObject(s, r.metadata.labels)))
    .sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
  const out: unknown[] = [];
  for (const src of sources) for (const rule of objArr(src.rules)) if (!out.some((r) => isDeepStrictEqual(r, rule))) out.push(rule);
  return out;
}

export class ClusterRoleAggregationController implements Controller {
  readonly name = 'clusterrole-aggregation';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    const roles = ctx.informers.for<ClusterRole>(PATH);
    const loop = new ReconcileLoop(new Aggregation(ctx, roles), { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 1);
    // Any role's change may change what any aggregated role gathers (its labels or its rules).
    const enqueueAggregated = (): void => {
      for (const r of roles.list()) if (isObject(r.aggregationRule)) loop.enqueue(r.metadata.name!);
    };
    roles.addHandlers({ add: enqueueAggregated, update: enqueueAggregated, delete: enqueueAggregated });
    void roles.waitForSync().then(() => loop.run(signal));
  }
}

class Aggregation implements Reconciler {
  readonly name = 'clusterrole-aggregation';

  constructor(
    private readonly ctx: ControllerContext,
    private readonly roles: Informer<ClusterRole>,
  ) {}

  async reconcile(name: string, signal: AbortSignal): Promise<void> {
    const role = this.roles.get(name);
    if (!role || !isObject(role.aggregationRule)) return;
    const rules = aggregatedRules(role, this.roles.list());
    if (isDeepStrictEqual(objArr(role.rules), rules)) return;
    try {
      await this.ctx.client.patch(`${PATH}/${encodeURIComponent(name)}`, { metadata: { resourceVersion: role.metadata.resourceVersion }, rules }, 'merge', { signal });
    } catch (e) {
      // A newer version is on its way through the informer, which enqueues the role again.
      if (!isStatusError(e, 'Conflict') && !isStatusError(e, 'NotFound')) throw e;
    }
  }
}
