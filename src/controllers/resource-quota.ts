// Resource quota controller (upstream's resourcequota controller): counts what each quota's
// namespace holds of the resources it names and keeps status.hard and status.used in step. The
// ResourceQuota admission plugin charges every write as it happens; this recount is the truth it
// falls back on: when a quota is new or changed, when something it counted goes away (a pod that
// finished, a Service that changed type, any deleted object), and on a periodic resync that
// corrects charges for writes that failed after admission.
import { jsonEqual, obj } from '../api/kinds/json.js';
import { builtInType, collectionPath } from '../api/paths.js';
import { usageOf } from '../api/quota/check.js';
import { countedKinds, quotaEvaluatorFor } from '../api/quota/evaluators.js';
import { podCharged } from '../api/quota/pod-usage.js';
import { scopeRequirementsOf } from '../api/quota/scopes.js';
import { mask, resourceList, resourceListJson, type ResourceList } from '../api/resource-list.js';
import type { KubeObject } from '../api/types.js';
import { isStatusError } from '../api/errors.js';
import type { Informer } from '../client/informer.js';
import { objectKeyOf } from '../client/informer.js';
import { PATHS } from '../controller-kit/informers.js';
import { KeyIndex } from '../controller-kit/key-index.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { ReconcileLoop, type Reconciler } from '../controller-kit/reconciler.js';
import { objectPath } from './pod-control.js';

/** Upstream's --resource-quota-sync-period default. */
export const QUOTA_RESYNC_MS = 5 * 60_000;

interface Tracked {
  informer: Informer<KubeObject>;
  byNamespace: KeyIndex<KubeObject>;
}

const namespaceOf = (o: KubeObject): string[] => [o.metadata.namespace ?? ''];

export class ResourceQuotaController implements Controller {
  readonly name = 'resourcequota-controller';

  constructor(private readonly resyncMs = QUOTA_RESYNC_MS) {}

  start(ctx: ControllerContext, signal: AbortSignal): void {
    const quotas = ctx.informers.for<KubeObject>(PATHS.resourcequotas, { readOnly: true });
    const quotasByNamespace = new KeyIndex(quotas, namespaceOf);
    const counter = new QuotaCounter(ctx, quotas);
    const loop = new ReconcileLoop(counter, { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 1);
    counter.recountNamespace = (ns) => {
      for (const q of quotasByNamespace.get(ns)) loop.enqueue(objectKeyOf(q));
    };
    quotas.addHandlers({
      add: (q) => loop.enqueue(objectKeyOf(q)),
      // Its own status writes come back as updates: only a changed spec, or a status that does not
      // match it, needs a recount.
      update: (old, q) => {
        if (!jsonEqual(old.spec, q.spec) || !jsonEqual(obj(q.status).hard, resourceListJson(resourceList(obj(q.spec).hard)))) loop.enqueue(objectKeyOf(q));
      },
    });
    const resync = (): void => {
      if (signal.aborted) return;
      for (const q of quotas.list()) loop.enqueue(objectKeyOf(q));
      ctx.clock.setTimeout(resync, this.resyncMs);
    };
    void quotas.waitForSync().then(() => {
      ctx.clock.setTimeout(resync, this.resyncMs);
      return loop.run(signal);
    });
  }
}

/** What makes an update give something back to its namespace's quotas, by resource. */
function releases(group: string, resource: string, old: KubeObject, cur: KubeObject, nowMs: number): boolean {
  if (group !== '') return false;
  switch (resource) {
    case 'pods':
      return podCharged(old, nowMs) && !podCharged(cur, nowMs);
    case 'services': {
      const type = (o: KubeObject): string => {
        const t = obj(o.spec).type;
        return t === 'NodePort' || t === 'LoadBalancer' ? t : '';
      };
      return type(old) !== type(cur);
    }
    case 'persistentvolumeclaims':
      return !jsonEqual(obj(obj(old.status).allocatedResources).storage, obj(obj(cur.status).allocatedResources).storage);
    default:
      return false;
  }
}

class QuotaCounter implements Reconciler {
  readonly name = 'resourcequota-controller';
  /** Set by the controller: queue every quota of a namespace for a recount. */
  recountNamespace: (namespace: string) => void = () => {};
  private readonly tracked = new Map<string, Tracked>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly quotas: Informer<KubeObject>,
  ) {}

  async reconcile(key: string, signal: AbortSignal): Promise<void> {
    const quota = this.quotas.get(key);
    if (!quota) return;
    const ns = quota.metadata.namespace!;
    const hard = resourceList(obj(quota.spec).hard);
    const hardNames = [...hard.keys()];
    const scopes = scopeRequirementsOf(quota);
    // A resource no evaluator can count (a kind not served) keeps what it had.
    let used: ResourceList = resourceList(obj(quota.status).used);
    for (const { group, resource } of countedKinds(hardNames)) {
      const ev = quotaEvaluatorFor(group, resource);
      if (!ev) continue;
      const objects = await this.objectsOf(group, resource, ns, signal);
      if (!objects) continue;
      used = new Map([...used, ...usageOf(ev, hardNames, scopes, objects, this.ctx.clock.now())]);
    }
    const status = { hard: resourceListJson(hard), used: resourceListJson(mask(used, hardNames)) };
    if (jsonEqual(status, quota.status)) return;
    try {
      await this.ctx.client.replace(`${objectPath('/api/v1', 'resourcequotas', ns, quota.metadata.name!)}/status`, { ...quota, status }, { signal });
    } catch (e) {
      // Gone since: nothing to count. A conflict is retried from the informer's newer copy.
      if (isStatusError(e, 'NotFound')) return;
      throw e;
    }
  }

  /** A namespace's objects of one resource: from an informer for served kinds, listed for custom ones. */
  private async objectsOf(group: string, resource: string, ns: string, signal: AbortSignal): Promise<KubeObject[] | undefined> {
    const rt = builtInType(group, resource);
    if (rt) {
      if (!rt.namespaced) return undefined;
      const t = this.track(group, resource, collectionPath(rt));
      await t.informer.waitForSync();
      return t.byNamespace.get(ns);
    }
    // A custom resource: found through discovery, counted from a list (its deletions are seen at the next resync).
    try {
      const discovered = await this.ctx.client.get<{ preferredVersion?: { groupVersion?: string } }>(`/apis/${group}`, { signal });
      const gv = discovered.preferredVersion?.groupVersion;
      if (!gv) return undefined;
      const list = await this.ctx.client.list(`/apis/${gv}/namespaces/${ns}/${resource}`, {}, signal);
      return list.items;
    } catch (e) {
      if (isStatusError(e, 'NotFound')) return undefined;
      throw e;
    }
  }

  private track(group: string, resource: string, path: string): Tracked {
    const id = `${group}/${resource}`;
    let t = this.tracked.get(id);
    if (t) return t;
    const informer = this.ctx.informers.for<KubeObject>(path, { readOnly: true });
    const byNamespace = new KeyIndex(informer, namespaceOf);
    informer.addHandlers({
      update: (old, cur) => {
        if (releases(group, resource, old, cur, this.ctx.clock.now())) this.recountNamespace(cur.metadata.namespace ?? '');
      },
      delete: (o) => this.recountNamespace(o.metadata.namespace ?? ''),
    });
    this.tracked.set(id, (t = { informer, byNamespace }));
    return t;
  }
}
