// Namespace controller: empties a terminating namespace, then lets it go (upstream's namespace
// deletion: delete every namespaced object, wait for them to be gone, remove the "kubernetes"
// finalizer through /finalize).
import type { KubeList, KubeObject } from '../api/types.js';
import { isStatusError } from '../api/errors.js';
import { allResourceTypes } from '../api/registry.js';
import { apiVersionOf } from '../api/types.js';
import type { Controller, ControllerContext } from './manager.js';
import { PATHS } from './informers.js';
import { ReconcileLoop, type Reconciler, type ReconcileResult } from './reconciler.js';

const NAMESPACED = allResourceTypes.filter((rt) => rt.namespaced);

function collectionPath(group: string, version: string, resource: string, ns: string): string {
  return group ? `/apis/${group}/${version}/namespaces/${ns}/${resource}` : `/api/${version}/namespaces/${ns}/${resource}`;
}

export class NamespaceController implements Controller {
  readonly name = 'namespace';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    const informer = ctx.informers.for(PATHS.namespaces);
    const loop = new ReconcileLoop(new NamespaceReconciler(ctx), ctx.clock, ctx.log, 2);
    const enqueue = (ns: KubeObject) => ns.metadata.deletionTimestamp && loop.enqueue(ns.metadata.name!);
    informer.addHandlers({ add: enqueue, update: (_o, n) => enqueue(n) });
    void informer.waitForSync().then(() => loop.run(signal));
  }
}

class NamespaceReconciler implements Reconciler {
  readonly name = 'namespace';
  constructor(private readonly ctx: ControllerContext) {}

  async reconcile(name: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const ctx = this.ctx;
    const ns = ctx.informers.for(PATHS.namespaces).get(name);
    if (!ns?.metadata.deletionTimestamp) return;
    let remaining = 0;
    for (const rt of NAMESPACED) {
      const path = collectionPath(rt.group, rt.version, rt.resource, name);
      try {
        await ctx.client.delete(path, { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' }, { signal });
        const left = await ctx.client.get<KubeList>(path, { query: { limit: 1 }, signal });
        remaining += left.items.length;
      } catch (e) {
        if (!isStatusError(e, 'NotFound')) throw e;
      }
    }
    // Pods stop within their grace periods on their nodes; look again shortly.
    if (remaining > 0) return { requeueAfterMs: 1000 };
    const fresh = await ctx.client.get<KubeObject>(`/api/v1/namespaces/${name}`, { signal });
    const finalizers = ((fresh.spec ?? {}) as { finalizers?: string[] }).finalizers ?? [];
    if (finalizers.includes('kubernetes')) {
      await ctx.client.replace(
        `/api/v1/namespaces/${name}/finalize`,
        { ...fresh, apiVersion: apiVersionOf('', 'v1'), spec: { ...((fresh.spec as object) ?? {}), finalizers: finalizers.filter((f) => f !== 'kubernetes') } },
        { signal },
      );
      ctx.log.info({ namespace: name }, 'namespace emptied and finalized');
    }
  }
}
