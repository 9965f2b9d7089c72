// Namespace controller: empties a terminating namespace, then lets it go (upstream's namespace
// deletion: delete every namespaced object, wait for them to be gone, remove the "kubernetes"
// finalizer through /finalize).
import type { KubeList, KubeObject } from '../api/types.js';
import { isStatusError } from '../api/errors.js';
import { allResourceTypes } from '../api/registry.js';
import { isStorageVersion, type ResourceType } from '../api/resource.js';
import { CustomResourceTypes } from '../controller-kit/custom-resource-types.js';
import { apiVersionOf } from '../api/types.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { PATHS } from '../controller-kit/informers.js';
import { ReconcileLoop, type Reconciler, type ReconcileResult } from '../controller-kit/reconciler.js';
import { rfc3339 } from '../util/time.js';

// A kind served at several versions shares its objects: one (its storage version) is enough.
const NAMESPACED = allResourceTypes.filter((rt) => rt.namespaced && isStorageVersion(rt));

function collectionPath(group: string, version: string, resource: string, ns: string): string {
  return group ? `/apis/${group}/${version}/namespaces/${ns}/${resource}` : `/api/${version}/namespaces/${ns}/${resource}`;
}

export class NamespaceController implements Controller {
  readonly name = 'namespace';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    const informer = ctx.informers.for(PATHS.namespaces);
    const customTypes = new CustomResourceTypes(ctx.informers);
    const loop = new ReconcileLoop(new NamespaceReconciler(ctx, customTypes), { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 2);
    const enqueue = (ns: KubeObject) => ns.metadata.deletionTimestamp && loop.enqueue(ns.metadata.name!);
    informer.addHandlers({ add: enqueue, update: (_o, n) => enqueue(n) });
    void Promise.all([informer.waitForSync(), customTypes.waitForSync()]).then(() => loop.run(signal));
  }
}

class NamespaceReconciler implements Reconciler {
  readonly name = 'namespace';
  constructor(
    private readonly ctx: ControllerContext,
    private readonly customTypes: CustomResourceTypes,
  ) {}

  /** Every namespaced resource: the built-in ones, and one version of each custom one (they share objects). */
  private namespacedTypes(): ResourceType[] {
    const seen = new Set<string>();
    const custom = this.customTypes.types().filter((rt) => rt.namespaced && !seen.has(rt.storageKey!) && seen.add(rt.storageKey!));
    return [...NAMESPACED, ...custom];
  }

  async reconcile(name: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const ctx = this.ctx;
    const ns = ctx.informers.for(PATHS.namespaces).get(name);
    if (!ns?.metadata.deletionTimestamp) return;
    let remaining = 0;
    const left = new Map<string, number>();
    const heldBy = new Map<string, number>();
    for (const rt of this.namespacedTypes()) {
      const path = collectionPath(rt.group, rt.version, rt.resource, name);
      try {
        await ctx.client.delete(path, { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' }, { signal });
        const { items } = await ctx.client.get<KubeList>(path, { signal });
        remaining += items.length;
        if (items.length > 0) left.set(`${rt.resource}.${rt.group}`, items.length);
        for (const item of items) for (const f of item.metadata.finalizers ?? []) heldBy.set(f, (heldBy.get(f) ?? 0) + 1);
      } catch (e) {
        if (!isStatusError(e, 'NotFound')) throw e;
        // An established CRD's kind not served (yet) by the server asked proves nothing: its objects may exist.
        if (rt.storageKey && this.customTypes.types().includes(rt)) remaining++;
      }
    }
    await this.report(ns, left, heldBy, signal);
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

  /** Upstream's deletion conditions, so `kubectl describe ns` tells what a stuck namespace waits for. */
  private async report(ns: KubeObject, left: Map<string, number>, finalizers: Map<string, number>, signal: AbortSignal): Promise<void> {
    const list = (m: Map<string, number>, fmt: (k: string, n: number) => string) => [...m].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, n]) => fmt(k, n)).join(', ');
    const wanted: [string, 'True' | 'False', string, string][] = [
      ['NamespaceDeletionDiscoveryFailure', 'False', 'ResourcesDiscovered', 'All resources successfully discovered'],
      ['NamespaceDeletionGroupVersionParsingFailure', 'False', 'ParsedGroupVersions', 'All legacy kube types successfully parsed'],
      ['NamespaceDeletionContentFailure', 'False', 'ContentDeleted', 'All content successfully deleted, may be waiting on finalization'],
      left.size > 0
        ? ['NamespaceContentRemaining', 'True', 'SomeResourcesRemain', `Some resources are remaining: ${list(left, (r, n) => `${r} has ${n} resource instances`)}`]
        : ['NamespaceContentRemaining', 'False', 'ContentRemoved', 'All content successfully removed'],
      finalizers.size > 0
        ? ['NamespaceFinalizersRemaining', 'True', 'SomeFinalizersRemain', `Some content in the namespace has finalizers remaining: ${list(finalizers, (f, n) => `${f} in ${n} resource instances`)}`]
        : ['NamespaceFinalizersRemaining', 'False', 'ContentHasNoFinalizers', 'All content-preserving finalizers finished'],
    ];
    const status = (ns.status ?? {}) as { phase?: string; conditions?: NamespaceCondition[] };
    const current = status.conditions ?? [];
    const now = rfc3339(this.ctx.clock.now());
    const conditions = wanted.map(([type, st, reason, message]): NamespaceCondition => {
      const prior = current.find((c) => c.type === type);
      return { type, status: st, lastTransitionTime: prior?.status === st && prior.lastTransitionTime ? prior.lastTransitionTime : now, reason, message };
    });
    const same = conditions.every((c) => current.some((p) => p.type === c.type && p.status === c.status && p.reason === c.reason && p.message === c.message));
    if (same && current.length === conditions.length) return;
    try {
      await this.ctx.client.replace(`/api/v1/namespaces/${ns.metadata.name}/status`, { ...ns, status: { ...status, conditions } }, { signal });
    } catch (e) {
      // A newer version is on its way; the next pass reports again.
      if (!isStatusError(e, 'Conflict') && !isStatusError(e, 'NotFound')) throw e;
    }
  }
}

interface NamespaceCondition {
  type: string;
  status: 'True' | 'False';
  lastTransitionTime: string;
  reason: string;
  message: string;
}
