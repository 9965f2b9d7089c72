// What every API server does with CustomResourceDefinitions, as upstream's apiextensions
// controllers do inside kube-apiserver: accept a CRD's names unless another CRD of its group holds
// them (NamesAccepted), serve its versions (Established), and on deletion remove its objects before
// the CRD goes (the customresourcecleanup finalizer). Every member of an HA cluster runs this on
// its own watch cache, so each serves every CRD; their status writes are idempotent.
import type { ResourceType } from '../api/resource.js';
import type { KubeObject } from '../api/types.js';
import { isStatusError } from '../api/errors.js';
import { CRD_CLEANUP_FINALIZER, asCRD, crdCondition, setCRDCondition, type CustomResourceDefinition, type CustomResourceDefinitionNames } from '../apiextensions/customresourcedefinition.js';
import { customResourceTypes } from '../apiextensions/custom-resource.js';
import type { Clock, Timer } from '../util/clock.js';
import { errorText } from '../util/error-text.js';
import { rfc3339 } from '../util/time.js';
import type { Logger } from '../util/log.js';
import type { ObjectStore } from './object-store.js';
import type { WriteContext } from './request-context.js';
import type { CacheWatcher } from './watch-cache.js';

export interface CustomResourceDefinitionsDeps {
  crds: ObjectStore;
  /** Serves `types` for the CRD `name` in place of what it served (none: stops). */
  serve(name: string, types: readonly ResourceType[]): Promise<void>;
  /** The store of a served custom type. */
  storeFor(rt: ResourceType): ObjectStore | undefined;
  /** How many objects storage holds under a prefix, read from the store itself (not a cache that may lag). */
  storedCount(prefix: string): Promise<number>;
  context(): WriteContext;
  clock: Clock;
  log: Logger;
}

const RETRY_MS = 1000;
const CRD_PREFIX = '/registry/apiextensions.k8s.io/customresourcedefinitions/';

/** The names a CRD's are compared with: every name a client can type for it. */
function nameSet(n: CustomResourceDefinitionNames | undefined): { resources: Set<string>; kinds: Set<string> } {
  const resources = new Set<string>();
  const kinds = new Set<string>();
  if (!n) return { resources, kinds };
  for (const r of [n.plural, n.singular, ...(n.shortNames ?? [])]) if (r) resources.add(r);
  for (const k of [n.kind, n.listKind]) if (k) kinds.add(k);
  return { resources, kinds };
}

export class CustomResourceDefinitions {
  private readonly queue = new Set<string>();
  private running = false;
  private stopped = false;
  private readonly retries = new Map<string, Timer>();
  /** What each served CRD was served from, so only a change that matters rebuilds its types. */
  private readonly servedFrom = new Map<string, string>();
  private readonly served = new Map<string, readonly ResourceType[]>();
  private watcher?: CacheWatcher;
  private idle: (() => void)[] = [];

  constructor(private readonly deps: CustomResourceDefinitionsDeps) {}

  /** Watches the CRDs and serves those already established; resolves once they are served. */
  async start(): Promise<void> {
    this.watch();
    await this.whenIdle();
  }

  stop(): void {
    this.stopped = true;
    if (this.watcher) this.deps.crds.cache.removeWatcher(this.watcher);
    for (const t of this.retries.values()) t.cancel();
  }

  private watch(): void {
    const w: CacheWatcher = {
      filter: { matches: () => true },
      send: (_type, ev) => {
        this.enqueue(ev.object.metadata.name ?? '');
        // A CRD that changes or goes may free names another CRD of its group waits for.
        const group = asCRD(ev.object).spec?.group;
        for (const o of this.all()) if (asCRD(o).spec?.group === group) this.enqueue(o.metadata.name ?? '');
      },
      end: (reason) => {
        if (reason !== 'relist' || this.stopped) return;
        // The cache installs its new state after ending its watchers: watch again once it has, and
        // look again at everything served, which may have gone while the cache was relisting.
        setImmediate(() => {
          if (this.stopped) return;
          this.watch();
          for (const name of this.served.keys()) this.enqueue(name);
        });
      },
    };
    this.watcher = w;
    this.deps.crds.cache.watch(w, undefined, CRD_PREFIX);
  }

  private whenIdle(): Promise<void> {
    if (!this.running && this.queue.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private enqueue(name: string): void {
    if (!name || this.stopped) return;
    this.queue.add(name);
    if (!this.running) void this.drain();
  }

  private retryLater(name: string): void {
    if (this.retries.has(name) || this.stopped) return;
    this.retries.set(
      name,
      this.deps.clock.setTimeout(() => {
        this.retries.delete(name);
        this.enqueue(name);
      }, RETRY_MS),
    );
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.size > 0 && !this.stopped) {
        const name = this.queue.values().next().value as string;
        this.queue.delete(name);
        try {
          if (await this.reconcile(name)) this.retryLater(name);
        } catch (e) {
          if (!isStatusError(e, 'Conflict') && !isStatusError(e, 'NotFound')) this.deps.log.warn({ crd: name, err: errorText(e) }, 'could not reconcile CustomResourceDefinition');
          this.retryLater(name);
        }
      }
    } finally {
      this.running = false;
      const waiting = this.idle;
      this.idle = [];
      for (const r of waiting) r();
    }
  }

  private all(): KubeObject[] {
    return this.deps.crds.cache.objectsUnder(CRD_PREFIX);
  }

  private current(name: string): CustomResourceDefinition | undefined {
    const o = this.deps.crds.cache.get(`${CRD_PREFIX}${name}`);
    return o ? asCRD(o) : undefined;
  }

  /** Converges one CRD; returns true when it must be looked at again later (objects still going). */
  private async reconcile(name: string): Promise<boolean> {
    const crd = this.current(name);
    if (!crd) {
      await this.unserve(name);
      return false;
    }
    if (crd.metadata.deletionTimestamp) return this.finalize(crd);
    // Established means served: the types are served before the condition says so. A CRD whose
    // new names conflict keeps serving the names it was accepted with.
    if (!this.namesConflict(crd)) await this.serve({ ...crd, status: { ...crd.status, acceptedNames: crd.spec.names } });
    else if (crdCondition(crd, 'Established')?.status === 'True') await this.serve(crd);
    // Most events (every CRD of the group is looked at when one changes) need no write: say so
    // from the cache. A write computes on the stored object, inside the update: a stale cached copy
    // must not overwrite what another writer (a spec update's storedVersions, a deletion's
    // Terminating) just put there.
    const desired = structuredClone(crd);
    this.setNamingStatus(desired, this.namesConflict(crd));
    if (JSON.stringify(desired.status) === JSON.stringify(crd.status)) return false;
    await this.deps.crds.update(
      undefined,
      name,
      (cur) => {
        const next = asCRD(cur);
        if (!next.metadata.deletionTimestamp) this.setNamingStatus(next, this.namesConflict(next));
        return next;
      },
      this.deps.context(),
      { subresource: 'status' },
    );
    return false;
  }

  private setNamingStatus(crd: CustomResourceDefinition, conflict: { reason: string; message: string } | undefined): void {
    const now = rfc3339(this.deps.clock.now());
    if (conflict) {
      setCRDCondition(crd, { type: 'NamesAccepted', status: 'False', reason: conflict.reason, message: conflict.message }, now);
      if (crdCondition(crd, 'Established')?.status !== 'True') setCRDCondition(crd, { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' }, now);
      return;
    }
    (crd.status ??= {}).acceptedNames = structuredClone(crd.spec.names);
    setCRDCondition(crd, { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' }, now);
    setCRDCondition(crd, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }, now);
  }

  /** Another CRD of the group already holds one of these names (upstream NamingConditionController). */
  private namesConflict(crd: CustomResourceDefinition): { reason: string; message: string } | undefined {
    const mine = nameSet(crd.spec.names);
    for (const other of this.all()) {
      const o = asCRD(other);
      if (o.metadata.name === crd.metadata.name || o.spec?.group !== crd.spec.group) continue;
      const theirs = nameSet(o.status?.acceptedNames);
      for (const r of mine.resources) {
        if (theirs.resources.has(r)) return { reason: r === crd.spec.names.plural ? 'PluralConflict' : r === crd.spec.names.singular ? 'SingularConflict' : 'ShortNamesConflict', message: `"${r}" is already in use` };
      }
      for (const k of mine.kinds) if (theirs.kinds.has(k)) return { reason: k === crd.spec.names.kind ? 'KindConflict' : 'ListKindConflict', message: `"${k}" is already in use` };
    }
    return undefined;
  }

  private async serve(crd: CustomResourceDefinition, terminating = false): Promise<void> {
    const name = crd.metadata.name!;
    const from = JSON.stringify([crd.spec, crd.status?.acceptedNames, terminating]);
    if (this.servedFrom.get(name) === from) return;
    const types = customResourceTypes(crd);
    if (terminating) for (const rt of types) rt.refusesCreate = `create not allowed while custom resource definition is terminating`;
    await this.deps.serve(name, types);
    this.servedFrom.set(name, from);
    this.served.set(name, types);
    this.deps.log.info({ crd: name, versions: types.map((t) => t.version) }, terminating ? 'CustomResourceDefinition terminating' : 'serving CustomResourceDefinition');
  }

  private async unserve(name: string): Promise<void> {
    if (!this.served.has(name)) return;
    await this.deps.serve(name, []);
    this.served.delete(name);
    this.servedFrom.delete(name);
    this.deps.log.info({ crd: name }, 'stopped serving CustomResourceDefinition');
  }

  /** Deletes the CRD's objects, then lets it go; true while objects remain. */
  private async finalize(crd: CustomResourceDefinition): Promise<boolean> {
    const name = crd.metadata.name!;
    if (!(crd.metadata.finalizers ?? []).includes(CRD_CLEANUP_FINALIZER)) {
      await this.unserve(name);
      return false;
    }
    if (crdCondition(crd, 'Established')?.status === 'True') await this.serve(crd, true);
    const types = this.served.get(name) ?? [];
    const store = types[0] ? this.deps.storeFor(types[0]) : undefined;
    const left: KubeObject[] = store ? store.cache.objectsUnder(`/registry/${crd.spec.group}/${crd.spec.names.plural}/`) : [];
    for (const o of left) {
      if (o.metadata.deletionTimestamp) continue;
      try {
        await store!.delete(o.metadata.namespace, o.metadata.name!, {}, this.deps.context());
      } catch (e) {
        if (!isStatusError(e, 'NotFound')) throw e;
      }
    }
    // The cache may lag a create another member took before it saw the deletion: storage decides.
    const stored = left.length > 0 ? left.length : await this.deps.storedCount(`/registry/${crd.spec.group}/${crd.spec.names.plural}/`);
    if (stored > 0) {
      const now = rfc3339(this.deps.clock.now());
      const message = 'CustomResource deletion is in progress';
      if (crdCondition(crd, 'Terminating')?.message !== message) {
        await this.deps.crds.update(undefined, name, (cur) => {
          const next = asCRD(cur);
          setCRDCondition(next, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message }, now);
          return next;
        }, this.deps.context(), { subresource: 'status' });
      }
      return true;
    }
    await this.unserve(name);
    await this.deps.crds.update(undefined, name, (cur) => ({ ...cur, metadata: { ...cur.metadata, finalizers: (cur.metadata.finalizers ?? []).filter((f) => f !== CRD_CLEANUP_FINALIZER) } }), this.deps.context());
    return false;
  }
}
