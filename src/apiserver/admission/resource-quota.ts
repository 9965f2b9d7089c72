// ResourceQuota: a write that would take a namespace past one of its quotas is refused with
// upstream's 403, and one that fits is charged to each quota covering it before it is stored, so
// the next write in the namespace sees it at once (the controller's recount corrects any charge
// for a write that then failed, as upstream's does).
import { forbiddenObject, isStatusError } from '../../api/errors.js';
import { quotaEvaluatorFor } from '../../api/quota/evaluators.js';
import { checkRequest, quotaView, QuotaRefusal } from '../../api/quota/check.js';
import { resourceListJson, type ResourceList } from '../../api/resource-list.js';
import type { KubeObject } from '../../api/types.js';
import type { Clock } from '../../util/clock.js';
import type { AdmissionAttributes, AdmissionPlugin } from './plugin.js';

export interface QuotaAccess {
  /** A namespace's quotas as the watch cache holds them. */
  cached(namespace: string): readonly KubeObject[];
  /** A quota as stored (after a charge lost a race), undefined once deleted. */
  stored(namespace: string, name: string): Promise<KubeObject | undefined>;
  /** Writes a quota's status.used if the quota is still at `quota`'s resourceVersion; a 409 otherwise. */
  writeUsed(quota: KubeObject, used: Record<string, string>): Promise<KubeObject>;
}

/** How many times a charge lost to a concurrent write is tried again on fresh quotas (upstream's 3). */
const RETRIES = 3;

function newer(a: KubeObject, b: KubeObject | undefined): KubeObject {
  if (!b) return a;
  return BigInt(b.metadata.resourceVersion ?? '0') > BigInt(a.metadata.resourceVersion ?? '0') ? b : a;
}

export function resourceQuotaAdmission(access: QuotaAccess, clock: Clock): AdmissionPlugin {
  // Quotas this plugin wrote, by namespace/name: the watch cache may not have them yet, and the next
  // write must be checked against what the last one charged.
  const written = new Map<string, KubeObject>();
  // One check-and-charge at a time per namespace, so two writes never both take the last unit.
  const queues = new Map<string, Promise<void>>();

  const current = (namespace: string): KubeObject[] => {
    const cached = access.cached(namespace);
    // What we wrote is forgotten once the cache has caught up with it, or the quota is gone.
    for (const key of written.keys()) {
      const [ns, name] = key.split('/') as [string, string];
      if (ns === namespace && !cached.some((q) => q.metadata.name === name)) written.delete(key);
    }
    return cached.map((q) => {
      const key = `${namespace}/${q.metadata.name}`;
      const latest = newer(q, written.get(key));
      if (latest === q) written.delete(key);
      return latest;
    });
  };

  const charge = async (a: AdmissionAttributes): Promise<void> => {
    const ev = quotaEvaluatorFor(a.resource.group, a.resource.resource)!;
    const req = { operation: a.operation as 'CREATE' | 'UPDATE', subresource: a.subresource, object: a.object!, oldObject: a.oldObject };
    let quotas = current(a.namespace!);
    for (let attempt = 0; ; attempt++) {
      let next: (ResourceList | undefined)[];
      try {
        next = checkRequest(quotas.map(quotaView), req, ev, clock.now());
      } catch (e) {
        if (e instanceof QuotaRefusal) throw forbiddenObject(a.resource.resource, a.resource.group, a.name, e.message);
        throw e;
      }
      if (a.dryRun) return;
      const lost: string[] = [];
      let lastConflict: unknown;
      for (let i = 0; i < quotas.length; i++) {
        const used = next[i];
        if (!used) continue;
        try {
          const stored = await access.writeUsed(quotas[i]!, resourceListJson(used));
          written.set(`${a.namespace}/${stored.metadata.name}`, stored);
        } catch (e) {
          if (!isStatusError(e) || e.status.code !== 409) throw e;
          lost.push(quotas[i]!.metadata.name!);
          lastConflict = e;
        }
      }
      if (lost.length === 0) return;
      if (attempt >= RETRIES) throw lastConflict;
      // Only the quotas whose charge was lost are checked again; the others are charged already.
      const fresh = await Promise.all(lost.map((name) => access.stored(a.namespace!, name)));
      quotas = fresh.filter((q): q is KubeObject => q !== undefined);
    }
  };

  return {
    name: 'ResourceQuota',
    handles: (op, rt) => {
      if (!rt.namespaced || op === 'DELETE') return false;
      const ev = quotaEvaluatorFor(rt.group, rt.resource);
      return ev !== undefined && (op === 'CREATE' || ev.updates);
    },
    validate: (a) => {
      if (!a.namespace || !a.object || a.operation === 'DELETE') return undefined;
      const ev = quotaEvaluatorFor(a.resource.group, a.resource.resource);
      if (!ev || !ev.handles(a.operation, a.subresource, a.object, a.oldObject)) return undefined;
      // Most namespaces have no quota: decided from the cache, without waiting on anything.
      if (access.cached(a.namespace).length === 0) return undefined;
      const ns = a.namespace;
      const run = (queues.get(ns) ?? Promise.resolve()).then(() => charge(a));
      const settled = run.then(
        () => undefined,
        () => undefined,
      );
      queues.set(ns, settled);
      void settled.then(() => {
        if (queues.get(ns) === settled) queues.delete(ns);
      });
      return run;
    },
  };
}
