// Garbage collector for ownerReferences (upstream's garbagecollector), behind `kubectl delete
// --cascade=background|foreground|orphan`:
//  - background: an object whose owners are all gone is deleted; a reference to a gone owner is
//    dropped when other owners remain. "Gone" is decided by a live GET (by name, then uid): an
//    object missing from an informer proves nothing.
//  - foreground: an owner deleted with propagationPolicy=Foreground carries the foregroundDeletion
//    finalizer; its dependents are deleted (those with dependents of their own in foreground too)
//    and the finalizer is removed once no dependent with blockOwnerDeletion remains.
//  - orphan: an owner carrying the orphan finalizer has its reference removed from every
//    dependent, then the finalizer.
// The owner→dependents graph is built from informers over every served resource but Events,
// custom resources included while their CRDs serve them.
import { setMaxListeners } from 'node:events';
import { isStorageVersion, type ResourceType } from '../api/resource.js';
import type { KubeObject, OwnerReference } from '../api/types.js';
import { isStatusError } from '../api/errors.js';
import { servedKindFor, servedKinds } from '../apiextensions/served-kinds.js';
import type { Informer } from '../client/informer.js';
import type { Logger } from '../util/log.js';
import type { EventRecorder } from '../controller-kit/events.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { ReconcileLoop, type Reconciler } from '../controller-kit/reconciler.js';
import { CustomResourceTypes } from '../controller-kit/custom-resource-types.js';

export const FINALIZER_ORPHAN = 'orphan';
export const FINALIZER_FOREGROUND = 'foregroundDeletion';

/** Upstream ignores Events: they are many, short-lived and never own anything. */
const IGNORED = new Set(['/v1/events', 'events.k8s.io/v1/events']);

export function collectionPathOf(rt: ResourceType, namespace?: string): string {
  const base = rt.group ? `/apis/${rt.group}/${rt.version}` : `/api/${rt.version}`;
  return rt.namespaced && namespace ? `${base}/namespaces/${namespace}/${rt.resource}` : `${base}/${rt.resource}`;
}

function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf('/');
  return i < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

interface GraphNode {
  uid: string;
  rt: ResourceType;
  obj: KubeObject;
}

function describe(n: GraphNode): string {
  const m = n.obj.metadata;
  return `${n.rt.kind} ${m.namespace ? `${m.namespace}/` : ''}${m.name}`;
}

function ownersOf(obj: KubeObject): OwnerReference[] {
  return obj.metadata.ownerReferences ?? [];
}

function hasFinalizer(obj: KubeObject, f: string): boolean {
  return (obj.metadata.finalizers ?? []).includes(f);
}

function deletingDependents(obj: KubeObject): boolean {
  return !!obj.metadata.deletionTimestamp && hasFinalizer(obj, FINALIZER_FOREGROUND);
}

export class GarbageCollectorController implements Controller {
  readonly name = 'garbage-collector';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    // Every in-flight request listens on the term's signal; many at once are expected, not a leak.
    setMaxListeners(0, signal);
    new GarbageCollector(ctx).run(signal);
  }
}

class GarbageCollector implements Reconciler {
  readonly name = 'garbage-collector';
  private readonly byUid = new Map<string, GraphNode>();
  /** owner uid → dependent uids, from the dependents' ownerReferences (owner seen or not). */
  private readonly dependents = new Map<string, Set<string>>();
  private readonly informers: { rt: ResourceType; informer: Informer }[] = [];
  private readonly customTypes: CustomResourceTypes;
  private readonly custom = new Map<string, { rt: ResourceType; informer: Informer; stop: AbortController }>();
  private readonly loop: ReconcileLoop;
  private readonly log: Logger;
  private readonly recorder: EventRecorder;
  private synced = false;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.log.child({ controller: 'garbage-collector' });
    this.recorder = ctx.recorder('garbage-collector-controller');
    this.loop = new ReconcileLoop(this, { clock: ctx.clock, log: this.log, metrics: ctx.metrics }, 4);
    this.customTypes = new CustomResourceTypes(ctx.informers);
    for (const rt of servedKinds) {
      if (IGNORED.has(`${rt.group}/${rt.version}/${rt.resource}`)) continue;
      // A kind served at several versions is watched once, in its storage version.
      if (!isStorageVersion(rt)) continue;
      // The graph only reads objects; every change goes through a fresh GET.
      this.informers.push({ rt, informer: ctx.informers.for(collectionPathOf(rt), { readOnly: true }) });
    }
  }

  run(signal: AbortSignal): void {
    for (const { rt, informer } of this.informers) this.handle(rt, informer);
    // Custom resources own and depend like any kind: one informer per stored resource (its versions
    // share the objects) while its CRD serves it.
    this.customTypes.onChange(() => this.syncCustomInformers());
    const builtins = Promise.all(this.informers.map((i) => i.informer.waitForSync()));
    const customs = this.customTypes.waitForSync().then(() => Promise.all([...this.custom.values()].map((c) => c.informer.waitForSync())));
    void Promise.all([builtins, customs]).then(() => {
      if (signal.aborted) return;
      this.synced = true;
      // Now the graph is whole: look at everything the initial lists may have left to do.
      for (const n of this.byUid.values()) if (this.needsAttention(n.obj)) this.loop.enqueue(n.uid);
      void this.loop.run(signal);
    });
  }

  private handle(rt: ResourceType, informer: Informer): void {
    informer.addHandlers({
      add: (o) => this.observe(rt, undefined, o),
      update: (old, o) => this.observe(rt, old, o),
      delete: (o) => this.forget(o),
    });
  }

  /** One informer per stored custom resource, on a version still served; objects of one no longer served leave the graph. */
  private syncCustomInformers(): void {
    const served = new Map<string, ResourceType[]>();
    for (const rt of this.customTypes.types()) {
      const list = served.get(rt.storageKey!) ?? [];
      list.push(rt);
      served.set(rt.storageKey!, list);
    }
    for (const [key, c] of [...this.custom]) {
      const versions = served.get(key);
      if (versions?.some((v) => v.version === c.rt.version && v.namespaced === c.rt.namespaced)) continue;
      c.stop.abort();
      this.custom.delete(key);
      for (const n of [...this.byUid.values()]) if (n.rt.storageKey === key) this.forget(n.obj);
    }
    for (const [key, versions] of served) {
      if (this.custom.has(key)) continue;
      const rt = versions.find((v) => v.version === v.storageVersion) ?? versions[0]!;
      const stop = new AbortController();
      const informer = this.ctx.informers.scoped(collectionPathOf(rt), stop.signal, { readOnly: true });
      this.custom.set(key, { rt, informer, stop });
      this.handle(rt, informer);
    }
  }

  // ---- the graph ---------------------------------------------------------------------------

  private observe(rt: ResourceType, old: KubeObject | undefined, obj: KubeObject): void {
    const uid = obj.metadata.uid;
    if (!uid) return;
    const before = this.byUid.get(uid);
    this.byUid.set(uid, { uid, rt, obj });
    const prev = before?.obj ?? old;
    const oldOwners = new Set(prev ? ownersOf(prev).map((r) => r.uid) : []);
    const newOwners = new Set(ownersOf(obj).map((r) => r.uid));
    for (const o of oldOwners) {
      if (newOwners.has(o)) continue;
      this.dependents.get(o)?.delete(uid);
      if (this.dependents.get(o)?.size === 0) this.dependents.delete(o);
      // A foreground-deleting owner may have been waiting for this reference to go.
      this.enqueueIfDeletingDependents(o);
    }
    for (const o of newOwners) {
      let set = this.dependents.get(o);
      if (!set) this.dependents.set(o, (set = new Set()));
      set.add(uid);
    }
    if (!this.synced) return;
    if (this.needsAttention(obj)) this.loop.enqueue(uid);
  }

  private forget(obj: KubeObject): void {
    const uid = obj.metadata.uid;
    if (!uid) return;
    const node = this.byUid.get(uid);
    this.byUid.delete(uid);
    for (const r of ownersOf(node?.obj ?? obj)) {
      this.dependents.get(r.uid)?.delete(uid);
      if (this.dependents.get(r.uid)?.size === 0) this.dependents.delete(r.uid);
      this.enqueueIfDeletingDependents(r.uid);
    }
    // Its dependents may have lost their last owner.
    for (const d of this.dependents.get(uid) ?? []) this.loop.enqueue(d);
  }

  private enqueueIfDeletingDependents(ownerUid: string): void {
    const owner = this.byUid.get(ownerUid);
    if (this.synced && owner && deletingDependents(owner.obj)) this.loop.enqueue(ownerUid);
  }

  /** Cheap, cache-only: is there possibly something to do for this object? */
  private needsAttention(obj: KubeObject): boolean {
    if (obj.metadata.deletionTimestamp) return hasFinalizer(obj, FINALIZER_ORPHAN) || hasFinalizer(obj, FINALIZER_FOREGROUND);
    return ownersOf(obj).some((r) => {
      const owner = this.byUid.get(r.uid);
      return !owner || deletingDependents(owner.obj);
    });
  }

  private dependentsOf(uid: string): GraphNode[] {
    const out: GraphNode[] = [];
    for (const d of this.dependents.get(uid) ?? []) {
      const n = this.byUid.get(d);
      if (n) out.push(n);
    }
    return out;
  }

  // ---- reconcile ---------------------------------------------------------------------------

  async reconcile(uid: string, signal: AbortSignal): Promise<void> {
    const node = this.byUid.get(uid);
    if (!node) return;
    const obj = node.obj;
    if (obj.metadata.deletionTimestamp) {
      if (hasFinalizer(obj, FINALIZER_ORPHAN)) await this.orphanDependents(node, signal);
      else if (hasFinalizer(obj, FINALIZER_FOREGROUND)) await this.processDeletingDependents(node, signal);
      return;
    }
    if (ownersOf(obj).length > 0) await this.attemptToDelete(node, signal);
  }

  /** Where an owner stands: present, present and deleting its dependents first, or gone. */
  private async ownerState(dependent: GraphNode, ref: OwnerReference, signal: AbortSignal): Promise<'solid' | 'waiting' | 'dangling'> {
    const cached = this.byUid.get(ref.uid);
    // Presence in the cache is good enough to wait: its deletion will enqueue us again.
    if (cached) return deletingDependents(cached.obj) ? 'waiting' : 'solid';
    const { group, version } = parseApiVersion(ref.apiVersion);
    const rt = servedKindFor(group, version, ref.kind) ?? this.customTypes.forKind(group, version, ref.kind);
    // An owner of a kind we do not serve cannot be checked; never delete on a guess.
    if (!rt) return 'solid';
    const ns = dependent.obj.metadata.namespace;
    if (rt.namespaced && !ns) {
      this.recorder.event(
        { ...dependent.obj, apiVersion: dependent.rt.group ? `${dependent.rt.group}/${dependent.rt.version}` : dependent.rt.version, kind: dependent.rt.kind },
        'Warning',
        'OwnerRefInvalidNamespace',
        `ownerRef ${JSON.stringify(ref)} does not exist in namespace ""`,
      );
      return 'solid';
    }
    try {
      const live = await this.ctx.client.get<KubeObject>(`${collectionPathOf(rt, ns)}/${ref.name}`, { signal });
      if (live.metadata.uid !== ref.uid) return 'dangling';
      return deletingDependents(live) ? 'waiting' : 'solid';
    } catch (e) {
      if (isStatusError(e, 'NotFound')) return 'dangling';
      throw e;
    }
  }

  /** Upstream attemptToDeleteItem, for an object that is not itself being deleted. */
  private async attemptToDelete(node: GraphNode, signal: AbortSignal): Promise<void> {
    const refs = ownersOf(node.obj);
    const solid: OwnerReference[] = [];
    const dangling: OwnerReference[] = [];
    const waiting: OwnerReference[] = [];
    for (const ref of refs) {
      const state = await this.ownerState(node, ref, signal);
      (state === 'solid' ? solid : state === 'dangling' ? dangling : waiting).push(ref);
    }
    if (solid.length > 0) {
      if (dangling.length === 0 && waiting.length === 0) return;
      // Other owners still hold it: only drop the references to the gone (or going) ones.
      const drop = new Set([...dangling, ...waiting].map((r) => r.uid));
      if (await this.patchOwnerRefs(node, (r) => !drop.has(r.uid), signal)) {
        this.log.info({ object: describe(node), removed: [...drop] }, 'removed references to gone owners; other owners remain');
      }
      return;
    }
    let policy: 'Background' | 'Foreground' | 'Orphan';
    if (waiting.length > 0 && (this.dependents.get(node.uid)?.size ?? 0) > 0) {
      // Its owner waits for it, and it has dependents of its own: they go first.
      policy = 'Foreground';
    } else if (hasFinalizer(node.obj, FINALIZER_ORPHAN)) {
      policy = 'Orphan';
    } else if (hasFinalizer(node.obj, FINALIZER_FOREGROUND)) {
      policy = 'Foreground';
    } else {
      policy = 'Background';
    }
    this.log.info({ object: describe(node), policy, owners: refs.map((r) => `${r.kind}/${r.name}`) }, waiting.length > 0 ? 'deleting dependent of an owner deleted in foreground' : 'deleting object: all its owners are gone');
    await this.deleteObject(node, policy, signal);
  }

  /** Owner deleted with propagationPolicy=Foreground: dependents first, then the owner. */
  private async processDeletingDependents(owner: GraphNode, signal: AbortSignal): Promise<void> {
    const deps = this.dependentsOf(owner.uid);
    const blocking = deps.filter((d) => ownersOf(d.obj).some((r) => r.uid === owner.uid && r.blockOwnerDeletion === true));
    if (blocking.length === 0) {
      if (await this.removeFinalizer(owner, FINALIZER_FOREGROUND, signal)) this.log.info({ object: describe(owner) }, 'dependents deleted; removed foregroundDeletion finalizer');
      return;
    }
    for (const d of deps) if (!d.obj.metadata.deletionTimestamp) this.loop.enqueue(d.uid);
  }

  /** Owner deleted with propagationPolicy=Orphan: its dependents lose the reference and stay. */
  private async orphanDependents(owner: GraphNode, signal: AbortSignal): Promise<void> {
    const deps = this.dependentsOf(owner.uid);
    for (const d of deps) await this.patchOwnerRefs(d, (r) => r.uid !== owner.uid, signal);
    if (await this.removeFinalizer(owner, FINALIZER_ORPHAN, signal)) this.log.info({ object: describe(owner), orphaned: deps.length }, 'orphaned dependents; removed orphan finalizer');
  }

  // ---- writes (live read, resourceVersion-guarded write, retry on conflict) -------------------

  private pathOf(node: GraphNode): string {
    return `${collectionPathOf(node.rt, node.obj.metadata.namespace)}/${node.obj.metadata.name}`;
  }

  /** Rewrites an object's metadata from its live state; false when it is gone or nothing changed. */
  private async patchMeta(node: GraphNode, change: (live: KubeObject) => Record<string, unknown> | undefined, signal: AbortSignal): Promise<boolean> {
    const path = this.pathOf(node);
    for (let attempt = 0; ; attempt++) {
      let live: KubeObject;
      try {
        live = await this.ctx.client.get<KubeObject>(path, { signal });
      } catch (e) {
        if (isStatusError(e, 'NotFound')) return false;
        throw e;
      }
      if (live.metadata.uid !== node.uid) return false;
      const meta = change(live);
      if (!meta) return false;
      try {
        await this.ctx.client.patch(path, { metadata: { ...meta, resourceVersion: live.metadata.resourceVersion } }, 'merge', { signal });
        return true;
      } catch (e) {
        if (isStatusError(e, 'NotFound')) return false;
        if (isStatusError(e, 'Conflict') && attempt < 5) continue;
        throw e;
      }
    }
  }

  private patchOwnerRefs(node: GraphNode, keep: (r: OwnerReference) => boolean, signal: AbortSignal): Promise<boolean> {
    return this.patchMeta(
      node,
      (live) => {
        const refs = ownersOf(live);
        const kept = refs.filter(keep);
        if (kept.length === refs.length) return undefined;
        return { ownerReferences: kept.length > 0 ? kept : null };
      },
      signal,
    );
  }

  private removeFinalizer(node: GraphNode, finalizer: string, signal: AbortSignal): Promise<boolean> {
    return this.patchMeta(
      node,
      (live) => {
        const fs = live.metadata.finalizers ?? [];
        if (!fs.includes(finalizer)) return undefined;
        const rest = fs.filter((f) => f !== finalizer);
        return { finalizers: rest.length > 0 ? rest : null };
      },
      signal,
    );
  }

  private async deleteObject(node: GraphNode, policy: 'Background' | 'Foreground' | 'Orphan', signal: AbortSignal): Promise<void> {
    try {
      await this.ctx.client.delete(this.pathOf(node), { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: policy, preconditions: { uid: node.uid } }, { signal });
    } catch (e) {
      // Gone, or replaced by a same-named object that is not ours to judge.
      if (isStatusError(e, 'NotFound') || isStatusError(e, 'Conflict')) return;
      throw e;
    }
  }
}
