// What the workload controllers (ReplicaSet, DaemonSet, Deployment) share: creating pods from a
// template under a controller ownerReference, deleting them, upstream's "expectations" that keep a
// controller from acting twice while its watch lags behind its own writes, claiming (adopting and
// releasing) objects by selector, and the stable template hash that names ReplicaSets and labels
// DaemonSet pods.
import { errorText } from '../util/error-text.js';
import { setMaxListeners } from 'node:events';
import type { KubeObject, OwnerReference } from '../api/types.js';
import { isStatusError } from '../api/errors.js';
import type { LabelSelector } from '../api/labels.js';
import { deepClone, isObject, semanticEqual } from '../api/kinds/json.js';
import { isPodReady, podReadySince, type Pod, type PodTemplateSpec } from '../api/kinds/pod.js';
import type { Informer } from '../client/informer.js';
import { objectKeyOf } from '../client/informer.js';
import type { ApiClient } from '../client/rest.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import type { EventRecorder } from '../controller-kit/events.js';

/** Upstream's cap on creates/deletes per sync, so one huge resize cannot monopolise the API. */
export const BURST_REPLICAS = 500;
/** Upstream's expectation TTL: a lost watch event can stall a controller for at most this long. */
export const EXPECTATIONS_TTL_MS = 5 * 60_000;

/**
 * Each in-flight request listens on the controller's stop signal; a burst of creates easily
 * passes Node's default of 10 listeners, which is a false leak warning here.
 */
export function allowManyRequests(signal: AbortSignal): void {
  setMaxListeners(10_000, signal);
}

// ---------------------------------------------------------------------------------------------
// Owner references.

/** The ownerReference a controller puts on what it creates: controller and blockOwnerDeletion set, as upstream's NewControllerRef. */
export function controllerRefTo(owner: KubeObject, apiVersion: string, kind: string): OwnerReference {
  return { apiVersion, kind, name: owner.metadata.name!, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true };
}

export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return (obj.metadata.ownerReferences ?? []).find((r) => r.controller === true);
}

export function isControlledBy(obj: KubeObject, owner: KubeObject): boolean {
  const ref = controllerOf(obj);
  return !!ref && ref.uid === owner.metadata.uid;
}

/** Path of a namespaced object, e.g. objectPath('/api/v1', 'pods', 'ns', 'x'). */
export function objectPath(prefix: string, resource: string, namespace: string, name?: string): string {
  return `${prefix}/namespaces/${namespace}/${resource}${name === undefined ? '' : `/${name}`}`;
}

// ---------------------------------------------------------------------------------------------
// Pod state (upstream pkg/api/v1/pod and controller_utils).

/** Not finished and not being deleted: what counts towards a controller's replicas. */
export function isPodActive(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata.deletionTimestamp;
}

export function isPodTerminal(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** Ready for at least minReadySeconds (upstream IsPodAvailable). */
export function isPodAvailable(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  if (!isPodReady(pod)) return false;
  if (!minReadySeconds) return true;
  const since = podReadySince(pod);
  return since !== undefined && since + minReadySeconds * 1000 < nowMs;
}

/** Milliseconds until a Ready pod becomes available, or undefined if it is not Ready or already is. */
export function msUntilAvailable(pod: Pod, minReadySeconds: number, nowMs: number): number | undefined {
  if (!minReadySeconds || !isPodReady(pod)) return undefined;
  const since = podReadySince(pod);
  if (since === undefined) return undefined;
  const left = since + minReadySeconds * 1000 - nowMs;
  return left >= 0 ? left + 1 : undefined;
}

export function creationMs(obj: KubeObject): number {
  const t = obj.metadata.creationTimestamp ? Date.parse(obj.metadata.creationTimestamp) : NaN;
  return Number.isFinite(t) ? t : 0;
}

// ---------------------------------------------------------------------------------------------
// Expectations (upstream UIDTrackingControllerExpectations).

interface Expectation {
  adds: number;
  /** Keys of pods whose deletion we asked for and have not yet seen. */
  deletes: Set<string>;
  setAt: number;
}

/**
 * What a controller is waiting to see in its cache after its own creates and deletes. While a
 * controller has unobserved writes it must not manage replicas again, or a lagging watch would
 * make it create (or delete) the same pods twice. Kept in memory: after a restart the fresh
 * cache already reflects every completed write, so starting empty is correct.
 */
export class Expectations {
  private readonly records = new Map<string, Expectation>();
  constructor(private readonly clock: Clock, private readonly ttlMs = EXPECTATIONS_TTL_MS) {}

  /** True when nothing is pending (or what is pending is too old to keep waiting for). */
  satisfied(key: string): boolean {
    const r = this.records.get(key);
    if (!r) return true;
    if (r.adds <= 0 && r.deletes.size === 0) return true;
    return this.clock.now() - r.setAt > this.ttlMs;
  }

  /** Replaces the expectation for key (only called when satisfied, as upstream). */
  expect(key: string, adds: number, deleteKeys: string[] = []): void {
    this.records.set(key, { adds, deletes: new Set(deleteKeys), setAt: this.clock.now() });
  }

  creationObserved(key: string): void {
    const r = this.records.get(key);
    if (r) r.adds--;
  }

  /** Counts each pod once, whether seen as marked for deletion or as gone. */
  deletionObserved(key: string, podKey: string): void {
    this.records.get(key)?.deletes.delete(podKey);
  }

  forget(key: string): void {
    this.records.delete(key);
  }
}

/**
 * Runs fn `count` times in batches of 1, 2, 4, … (upstream slowStartBatch), stopping after the
 * first batch with an error: a quota or admission error then costs one request, not hundreds.
 */
export async function slowStartBatch(count: number, initialBatchSize: number, fn: () => Promise<void>): Promise<{ successes: number; error?: unknown }> {
  let remaining = count;
  let successes = 0;
  for (let batch = Math.min(remaining, initialBatchSize); batch > 0; batch = Math.min(2 * batch, remaining)) {
    const results = await Promise.allSettled(Array.from({ length: batch }, () => fn()));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    successes += results.filter((r) => r.status === 'fulfilled').length;
    if (failed) return { successes, error: failed.reason };
    remaining -= batch;
  }
  return { successes };
}

// ---------------------------------------------------------------------------------------------
// Creating and deleting pods.


/**
 * Runs a reconcile; a Conflict means we acted on a cache that was behind our own or someone
 * else's write, and the watch event that catches the cache up will requeue the key anyway:
 * look again shortly instead of logging a failure and backing off.
 */
export async function conflictsRequeue<R>(signal: AbortSignal, fn: () => Promise<R>): Promise<R | { requeueAfterMs: number }> {
  try {
    return await fn();
  } catch (e) {
    if (isStatusError(e, 'Conflict') && !signal.aborted) return { requeueAfterMs: 100 };
    throw e;
  }
}

/** Creation refused because the namespace is going away: nothing to do, not an error (upstream). */
export function isNamespaceTerminating(e: unknown): boolean {
  return isStatusError(e, 'Forbidden') && /being terminated/.test(e.message);
}

export interface PodCreateOptions {
  /** Last edits to the pod before it is sent (DaemonSet: node name, affinity, tolerations, labels). */
  mutate?(pod: Pod): void;
}

/** Upstream PodControl: pods from a template, with an Event on the owner for every create and delete. */
export class PodControl {
  constructor(
    private readonly client: ApiClient,
    private readonly recorder: EventRecorder,
    private readonly log: Logger,
  ) {}

  /** The pod a template stands for: its labels, annotations, finalizers and spec, owned by `ref`. */
  static podFromTemplate(template: PodTemplateSpec | undefined, owner: KubeObject, ref: OwnerReference): Pod {
    const meta = template?.metadata ?? {};
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: `${owner.metadata.name}-`,
        namespace: owner.metadata.namespace!,
        ownerReferences: [ref],
      },
      spec: deepClone(template?.spec) ?? { containers: [] },
    };
    if (meta.labels) pod.metadata.labels = { ...meta.labels };
    if (meta.annotations) pod.metadata.annotations = { ...meta.annotations };
    if (meta.finalizers) pod.metadata.finalizers = [...meta.finalizers];
    return pod;
  }

  async createPod(owner: KubeObject, template: PodTemplateSpec | undefined, ref: OwnerReference, opts: PodCreateOptions = {}, signal?: AbortSignal): Promise<Pod | undefined> {
    const pod = PodControl.podFromTemplate(template, owner, ref);
    opts.mutate?.(pod);
    const ns = owner.metadata.namespace!;
    try {
      const created = await this.client.create<Pod>(objectPath('/api/v1', 'pods', ns), pod, signal ? { signal } : {});
      this.recorder.event(owner, 'Normal', 'SuccessfulCreate', `Created pod: ${created.metadata.name}`);
      return created;
    } catch (e) {
      if (isNamespaceTerminating(e)) return undefined;
      this.recorder.event(owner, 'Warning', 'FailedCreate', `Error creating: ${errorText(e)}`);
      throw e;
    }
  }

  /**
   * Deletes with the pod's own grace period. Resolves false when the pod was already gone: its
   * deletion may have been observed before we asked, so callers must not keep expecting it.
   */
  async deletePod(owner: KubeObject, namespace: string, name: string, signal?: AbortSignal): Promise<boolean> {
    try {
      await this.client.delete(objectPath('/api/v1', 'pods', namespace, name), undefined, signal ? { signal } : {});
      this.recorder.event(owner, 'Normal', 'SuccessfulDelete', `Deleted pod: ${name}`);
      return true;
    } catch (e) {
      if (isStatusError(e, 'NotFound')) return false;
      this.recorder.event(owner, 'Warning', 'FailedDelete', `Error deleting: ${errorText(e)}`);
      this.log.debug({ pod: `${namespace}/${name}`, err: errorText(e) }, 'pod delete failed');
      throw e;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// An owner index over an informer: what a controller owns, and the orphans it might adopt,
// without scanning every object in the cluster on each reconcile.

export class OwnerIndex<T extends KubeObject> {
  private readonly byOwner = new Map<string, Set<string>>();
  private readonly orphans = new Map<string, Set<string>>();
  private readonly slot = new Map<string, { owner: string; ns: string }>();

  constructor(private readonly informer: Informer<T>) {
    informer.addHandlers({
      add: (o) => this.put(o),
      update: (_old, o) => this.put(o),
      delete: (o) => this.remove(objectKeyOf(o)),
    });
  }

  /** Objects whose controller reference has this uid. */
  owned(uid: string | undefined): T[] {
    return uid ? this.collect(this.byOwner.get(uid)) : [];
  }

  /** How many objects have a controller reference with this uid. */
  ownedCount(uid: string | undefined): number {
    return uid ? (this.byOwner.get(uid)?.size ?? 0) : 0;
  }

  /** Objects in a namespace that no controller owns. */
  orphansIn(namespace: string): T[] {
    return this.collect(this.orphans.get(namespace));
  }

  private collect(keys: Set<string> | undefined): T[] {
    const out: T[] = [];
    for (const k of keys ?? []) {
      const o = this.informer.get(k);
      if (o) out.push(o);
    }
    return out;
  }

  private put(o: T): void {
    const key = objectKeyOf(o);
    this.remove(key);
    const owner = controllerOf(o)?.uid ?? '';
    const ns = o.metadata.namespace ?? '';
    const map = owner ? this.byOwner : this.orphans;
    const bucketKey = owner || ns;
    let bucket = map.get(bucketKey);
    if (!bucket) map.set(bucketKey, (bucket = new Set()));
    bucket.add(key);
    this.slot.set(key, { owner, ns });
  }

  private remove(key: string): void {
    const s = this.slot.get(key);
    if (!s) return;
    const map = s.owner ? this.byOwner : this.orphans;
    const bucketKey = s.owner || s.ns;
    const bucket = map.get(bucketKey);
    bucket?.delete(key);
    if (bucket?.size === 0) map.delete(bucketKey);
    this.slot.delete(key);
  }
}

// ---------------------------------------------------------------------------------------------
// Claiming (upstream ControllerRefManager): adopt matching orphans, release owned objects that
// no longer match. Both are patches guarded by the object's resourceVersion, so a concurrent
// claim by another controller fails with a conflict instead of silently winning twice.

export interface ClaimOptions<T extends KubeObject> {
  client: ApiClient;
  owner: KubeObject;
  ownerRef: OwnerReference;
  selector: LabelSelector;
  /** Collection prefix and resource of the claimed objects, e.g. ['/api/v1', 'pods']. */
  prefix: string;
  resource: string;
  /** Owned objects plus orphans in the owner's namespace (the candidates to claim). */
  candidates: T[];
  /** Extra condition for adoption (e.g. pods must be active). */
  adoptable?(o: T): boolean;
  /** A fresh check that the owner still exists and is not being deleted (upstream RecheckDeletionTimestamp). */
  canAdopt(): Promise<boolean>;
  log: Logger;
  signal?: AbortSignal;
}

/**
 * A fresh read of an owner before it adopts orphans (upstream RecheckDeletionTimestamp): the
 * informer's copy may be of an owner already deleted, or of an earlier one with the same name.
 */
export async function ownerStillThere(client: ApiClient, path: string, owner: KubeObject, signal?: AbortSignal): Promise<boolean> {
  try {
    const fresh = await client.get<KubeObject>(path, signal ? { signal } : {});
    return fresh.metadata.uid === owner.metadata.uid && !fresh.metadata.deletionTimestamp;
  } catch (e) {
    if (isStatusError(e, 'NotFound')) return false;
    throw e;
  }
}

export interface ClaimResult<T> {
  claimed: T[];
  errors: unknown[];
}

export async function claimObjects<T extends KubeObject>(o: ClaimOptions<T>): Promise<ClaimResult<T>> {
  const claimed: T[] = [];
  const errors: unknown[] = [];
  const ownerUid = o.owner.metadata.uid;
  const ownerDeleting = !!o.owner.metadata.deletionTimestamp;
  let adoptionAllowed: boolean | undefined;
  for (const obj of o.candidates) {
    const ref = controllerOf(obj);
    const matches = o.selector.matches(obj.metadata.labels);
    if (ref) {
      if (ref.uid !== ownerUid) continue;
      if (matches) {
        claimed.push(obj);
        continue;
      }
      if (ownerDeleting) continue;
      const refs = (obj.metadata.ownerReferences ?? []).filter((r) => r.uid !== ownerUid);
      try {
        await patchOwnerRefs(o, obj, refs);
        o.log.info({ [o.resource]: objectKeyOf(obj), owner: o.owner.metadata.name }, 'released: labels no longer match the selector');
      } catch (e) {
        if (!isStatusError(e, 'NotFound')) errors.push(e);
      }
      continue;
    }
    if (ownerDeleting || !matches || obj.metadata.deletionTimestamp || obj.metadata.namespace !== o.owner.metadata.namespace) continue;
    if (o.adoptable && !o.adoptable(obj)) continue;
    adoptionAllowed ??= await o.canAdopt();
    if (!adoptionAllowed) continue;
    try {
      const adopted = await patchOwnerRefs(o, obj, [...(obj.metadata.ownerReferences ?? []), o.ownerRef]);
      claimed.push(adopted);
      o.log.info({ [o.resource]: objectKeyOf(obj), owner: o.owner.metadata.name }, 'adopted an orphan matching the selector');
    } catch (e) {
      if (!isStatusError(e, 'NotFound')) errors.push(e);
    }
  }
  return { claimed, errors };
}

function patchOwnerRefs<T extends KubeObject>(o: ClaimOptions<T>, obj: T, refs: OwnerReference[]): Promise<T> {
  const path = objectPath(o.prefix, o.resource, obj.metadata.namespace!, obj.metadata.name!);
  const body = { metadata: { ownerReferences: refs.length > 0 ? refs : null, resourceVersion: obj.metadata.resourceVersion } };
  return o.client.patch<T>(path, body, 'merge', o.signal ? { signal: o.signal } : {});
}

// ---------------------------------------------------------------------------------------------
// Template hashing.

/** JSON with sorted keys and without unset values (null, {}, []), so equal templates hash equal. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isObject(v)) {
    const parts: string[] = [];
    for (const k of Object.keys(v).sort()) {
      const val = v[k];
      if (val === undefined || val === null) continue;
      if (Array.isArray(val) && val.length === 0) continue;
      if (isObject(val) && Object.keys(val).length === 0) continue;
      parts.push(`${JSON.stringify(k)}:${canonicalJson(val)}`);
    }
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

function fnv1a32(bytes: Uint8Array, seed = 0x811c9dc5): number {
  let h = seed;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h >>> 0;
}

// Upstream rand.SafeEncodeString: no vowels (no words), no look-alike characters.
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/**
 * The pod-template-hash of a template, as upstream's ComputeHash: FNV-1a (32 bit) over the
 * template and the collision count, written with the safe alphabet. Ours hashes canonical JSON
 * rather than Go's struct dump, so values differ from upstream's, but they are stable across
 * restarts and versions of skiff and differ between templates.
 */
export function templateHash(template: unknown, collisionCount?: number): string {
  let h = fnv1a32(Buffer.from(canonicalJson(template), 'utf8'));
  if (collisionCount !== undefined && collisionCount !== null) {
    const extra = Buffer.alloc(8);
    extra.writeUInt32LE(collisionCount >>> 0, 0);
    h = fnv1a32(extra, h);
  }
  let out = '';
  for (const ch of String(h)) out += SAFE_ALPHABET[ch.charCodeAt(0) % SAFE_ALPHABET.length];
  return out;
}

/** A workload kind whose controller owns pods through a controller ownerReference and a selector. */
interface PodOwner extends KubeObject {
  spec?: { selector?: unknown };
}

export interface OwnedPodEvents<T extends PodOwner> {
  /** The owner's kind in ownerReferences ("ReplicaSet", "DaemonSet"). */
  kind: string;
  owners: Informer<T>;
  pods: Informer<Pod>;
  expectations: Expectations;
  enqueue(owner: T): void;
  /** The owner's label selector, parsed (undefined: selects nothing). */
  selector(owner: T): LabelSelector | undefined;
  /** Called when an owned pod changes (after the owner was enqueued), e.g. to look again later. */
  ownedPodUpdated?(owner: T, old: Pod, cur: Pod): void;
  /**
   * For owners whose sync reads little of a pod: whether a change of an owned pod (same owner,
   * not deleted) can change what the sync decides or reports. Others wake nobody.
   */
  podUpdateMatters?(old: Pod, cur: Pod): boolean;
  /**
   * Where an owned pod's event that only changes what its owner reports wakes the owner, if not
   * at once: a batch period, as upstream's Job controller waits one before syncing on pod events,
   * so that a thousand pods turning Ready cost a few syncs of their owner, not a thousand. Such
   * events are an update (same owner, not deleted) and, when this is set, a creation or deletion
   * the owner expected but that still leaves it waiting for others: the sync that could act again
   * comes with the last one it expects, at once.
   */
  enqueueBatched?(owner: T): void;
}

/**
 * The pod side of a pod-owning controller, as upstream's ReplicaSet and DaemonSet controllers wire
 * it: owned pods wake their owner (recording observed creations and deletions for expectations),
 * orphans wake every owner whose selector matches (so one may adopt them), and a pod that changes
 * owner wakes both.
 */
export function watchOwnedPods<T extends PodOwner>(o: OwnedPodEvents<T>): void {
  // The owner that controls a pod, if it is still the same object (uid) in the cache.
  const ownerOf = (pod: Pod): T | undefined => {
    const ref = controllerOf(pod);
    if (ref?.kind !== o.kind) return undefined;
    const owner = o.owners.get(`${pod.metadata.namespace}/${ref.name}`);
    return owner?.metadata.uid === ref.uid ? owner : undefined;
  };
  const enqueueMatching = (pod: Pod) => {
    for (const owner of o.owners.list()) {
      if (owner.metadata.namespace === pod.metadata.namespace && o.selector(owner)?.matches(pod.metadata.labels ?? {})) o.enqueue(owner);
    }
  };
  // After an expected creation or deletion: at once when the owner may act again, else batched.
  const enqueueObserved = (owner: T, key: string) => {
    if (o.enqueueBatched && !o.expectations.satisfied(key)) o.enqueueBatched(owner);
    else o.enqueue(owner);
  };
  const podDeleted = (pod: Pod) => {
    const owner = ownerOf(pod);
    if (!owner) return;
    const key = objectKeyOf(owner);
    o.expectations.deletionObserved(key, objectKeyOf(pod));
    enqueueObserved(owner, key);
  };
  o.pods.addHandlers({
    add: (pod) => {
      if (pod.metadata.deletionTimestamp) return podDeleted(pod);
      const owner = ownerOf(pod);
      if (owner) {
        const key = objectKeyOf(owner);
        o.expectations.creationObserved(key);
        enqueueObserved(owner, key);
      } else if (!controllerOf(pod)) {
        enqueueMatching(pod);
      }
    },
    update: (old, cur) => {
      if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
      const labelsChanged = !semanticEqual(old.metadata.labels, cur.metadata.labels);
      if (cur.metadata.deletionTimestamp) {
        podDeleted(cur);
        if (labelsChanged) podDeleted(old);
        return;
      }
      const oldRef = controllerOf(old);
      const curRef = controllerOf(cur);
      const refChanged = oldRef?.uid !== curRef?.uid;
      if (refChanged && oldRef) {
        const prev = ownerOf(old);
        if (prev) o.enqueue(prev);
      }
      const owner = ownerOf(cur);
      if (owner) {
        if (refChanged || labelsChanged || !o.podUpdateMatters) o.enqueue(owner);
        else if (o.podUpdateMatters(old, cur)) (o.enqueueBatched ?? o.enqueue)(owner);
        o.ownedPodUpdated?.(owner, old, cur);
      } else if (!curRef && (labelsChanged || refChanged)) {
        enqueueMatching(cur);
      }
    },
    delete: podDeleted,
  });
}
