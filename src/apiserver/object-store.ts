// Kubernetes object semantics for one resource on top of the Store: defaulting, validation,
// generation, status/main-resource separation, compare-and-swap with retries, graceful deletion
// and finalizers. The HTTP layer decodes requests into these calls; controllers never see it.
import { randomUUID } from 'node:crypto';
import { hasStatusSubresource, storageSegment, type ResourceType } from '../api/resource.js';
import type { KubeList, KubeObject, ObjectMeta, Status } from '../api/types.js';
import { apiVersionOf } from '../api/types.js';
import {
  StatusError,
  alreadyExists,
  badRequest,
  conflict,
  expired,
  forbiddenObject,
  invalid,
  methodNotAllowed,
  notFound,
  successStatus,
  timeout,
} from '../api/errors.js';
import { StoreError, isStoreError, type KeyValue, type Store, type WriteOptions } from '../store/store.js';
import type { Clock } from '../util/clock.js';
import { rfc3339 } from '../util/time.js';
import { encodeStored } from './stored-json.js';
import { generatedNameSuffix } from '../util/random.js';
import { WatchCache, type WatchFilter } from './watch-cache.js';
import type { WriteContext } from './request-context.js';
import { updateManagedFields } from './patch/index.js';
import type { AdmissionAttributes, AdmissionChain, Operation } from './admission/plugin.js';
import { shared } from './shared-object.js';
import { deepClone, jsonEqual } from '../api/kinds/json.js';

export interface ListOptions {
  filter: WatchFilter;
  limit?: number;
  continueToken?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  preconditions?: { uid?: string; resourceVersion?: string };
}

export interface DeleteResult {
  /** The object (still terminating, or as deleted) or a Status for kinds that return one. */
  body: KubeObject | Status;
  deleted: boolean;
}

/**
 * How a type's objects convert between its versions when they differ in more than apiVersion (a
 * CRD with conversion Webhook). Objects are stored in the storage version; each read converts what
 * it returns to the version asked for, each write converts what it stores to the storage version.
 */
export interface ObjectConversion {
  readonly storageApiVersion: string;
  /** `objects`, each in the version it is stored in, in `apiVersion`; those already in it come back as they are. */
  convert(objects: readonly KubeObject[], apiVersion: string): Promise<KubeObject[]>;
}

/** What storage tells the rest of the server as it writes (admission is not among it: see ./admission/). */
export interface StorageHooks {
  /** Run just before an object is removed from storage (not for a deletion that only marks it). */
  beforeDelete?: (obj: KubeObject) => Promise<void>;
  /** The store acknowledged a write (the storage outage log learns that writes work again). */
  written?: () => void;
}

// Unconditional writes retry until they win, as upstream's GuaranteedUpdate: each round one contender succeeds.
const MAX_RETRIES = 1000;

/** The clock's time as upstream's metav1.Time writes it: RFC 3339, whole seconds. */
export function nowRfc3339(clock: Clock): string {
  return rfc3339(clock.now());
}

export function objectKey(rt: ResourceType, namespace: string | undefined, name: string): string {
  return rt.namespaced ? `/registry/${storageSegment(rt)}/${namespace}/${name}` : `/registry/${storageSegment(rt)}/${name}`;
}

export function keyPrefix(rt: ResourceType, namespace?: string): string {
  return rt.namespaced && namespace ? `/registry/${storageSegment(rt)}/${namespace}/` : `/registry/${storageSegment(rt)}/`;
}

/** Names drawn for one create with generateName before AlreadyExists (upstream: 8). */
const GENERATE_NAME_ATTEMPTS = 8;
/**
 * Writes under `first`, and while the name is taken under names from `draw`: upstream
 * (RetryGenerateName, on by default since 1.32) tries 8 generated names before AlreadyExists.
 */
export async function retryGeneratedName<T>(first: string, draw: () => string, write: (name: string) => Promise<T>, attempts = GENERATE_NAME_ATTEMPTS): Promise<T> {
  let name = first;
  for (let attempt = 1; ; attempt++) {
    try {
      return await write(name);
    } catch (e) {
      if (!isStoreError(e, 'exists') || attempt >= attempts) throw e;
      name = draw();
    }
  }
}


function decode(kv: KeyValue): KubeObject {
  const obj = JSON.parse(kv.value) as KubeObject;
  obj.metadata.resourceVersion = String(kv.modRevision);
  return obj;
}


/** Everything but metadata and status: what a generation counts changes of. */
function specOf(obj: KubeObject): Record<string, unknown> {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = obj;
  return rest;
}

function withoutVolatile(obj: KubeObject): KubeObject {
  const { managedFields: _mf, resourceVersion: _rv, ...meta } = obj.metadata;
  return { ...obj, metadata: meta };
}

/**
 * Whether a write changes nothing: the same object, and the same field owners (an applier that
 * takes co-ownership of a value someone else set changes only managedFields, and is a write); new
 * timestamps alone are not a change, as upstream's field manager keeps the old ones then.
 */
function unchanged(prepared: KubeObject, current: KubeObject): boolean {
  if (!jsonEqual(withoutVolatile(prepared), withoutVolatile(current))) return false;
  const owners = (o: KubeObject) => (o.metadata.managedFields ?? []).map(({ time: _t, ...entry }) => entry);
  return jsonEqual(owners(prepared), owners(current));
}

/** Where an update starts: the current object and the revision its compare-and-swap expects. */
interface UpdateState {
  current: KubeObject;
  modRevision: number;
  /** From the watch cache (maybe behind the store), not read from the store. */
  cached: boolean;
}

interface ContinueToken {
  rv: number;
  start: string;
}

function encodeContinue(t: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: t.rv, start: t.start })).toString('base64url');
}

function decodeContinue(token: string): ContinueToken {
  try {
    const t = JSON.parse(Buffer.from(token, 'base64url').toString()) as { rv?: unknown; start?: unknown };
    if (typeof t.rv === 'number' && typeof t.start === 'string' && t.rv > 0) return { rv: t.rv, start: t.start };
  } catch {
    /* fall through */
  }
  throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
}

const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

export class ObjectStore {
  readonly cache: WatchCache;
  constructor(
    readonly rt: ResourceType,
    private readonly store: Store,
    private readonly clock: Clock,
    cache: WatchCache,
    /** The server's admission plugins, run on every create, update and delete. */
    private readonly admission: AdmissionChain,
    private readonly hooks: StorageHooks = {},
    /** How its objects are written: a TTL for Events (--event-ttl), renewed by every write, as upstream's. */
    private readonly writeOptions: WriteOptions = {},
    /** Set when its versions convert through a webhook: its cache and `read` then hold objects as stored. */
    readonly conversion?: ObjectConversion,
  ) {
    this.cache = cache;
  }

  private attributes(operation: Operation, object: KubeObject | undefined, oldObject: KubeObject | undefined, ctx: WriteContext, subresource = ''): AdmissionAttributes {
    const meta = (object ?? oldObject)!.metadata;
    return {
      operation,
      resource: this.rt,
      subresource,
      namespace: meta.namespace,
      name: meta.name ?? '',
      object,
      oldObject,
      user: ctx.user,
      dryRun: ctx.dryRun,
      fieldManager: ctx.fieldManager,
      warn: (text) => addWarnings(ctx, [text]),
    };
  }

  private get apiVersion(): string {
    return apiVersionOf(this.rt.group, this.rt.version);
  }

  private notFound(name: string): StatusError {
    return notFound(this.rt.resource, this.rt.group, name);
  }

  /**
   * Writes `obj` through `write` with its stored text, telling the watch cache to keep `obj` for
   * the event that echoes the write rather than parse the text again.
   */
  private async writeEchoed(key: string, obj: KubeObject, write: (value: string) => Promise<KeyValue>): Promise<KubeObject> {
    const value = encodeStored(obj);
    this.cache.expectWrite(key, value, obj);
    let kv: KeyValue;
    try {
      kv = await write(value);
    } catch (e) {
      this.cache.forgetWrite(key, value);
      throw e;
    }
    this.hooks.written?.();
    // The object is what was just written; no need to parse the stored text back.
    return this.cache.settleWrite(key, obj, kv.modRevision);
  }

  /** An object read from storage, as this type serves it (as stored, for a type that converts: see `served`). */
  private read(kv: KeyValue): KubeObject {
    const obj = decode(kv);
    if (this.conversion) return obj;
    this.rt.onRead?.(obj);
    return this.stamp(obj);
  }

  /**
   * Objects as stored, as this type serves them: converted to its version when they convert through
   * a webhook (one review for them all), stamped otherwise. Never changes what it is given.
   */
  async served(objects: readonly KubeObject[]): Promise<KubeObject[]> {
    if (!this.conversion) return objects.map((o) => this.stamp(o));
    const converted = await this.conversion.convert(objects, this.apiVersion);
    return converted.map((o, i) => {
      // Already in this version: the cache's own object, which defaulting must not write into.
      const own = o === objects[i] ? deepClone(o) : o;
      this.rt.onRead?.(own);
      return this.stamp(own);
    });
  }

  /** One object read as stored, as `served` gives it; the object itself, with no await, for a type that does not convert. */
  private servedIfConverted(obj: KubeObject): KubeObject | Promise<KubeObject> {
    return this.conversion ? this.served([obj]).then((o) => o[0]!) : obj;
  }

  /** What a write stores: the object in the storage version. */
  private async toStorage(obj: KubeObject): Promise<KubeObject> {
    if (!this.conversion) return obj;
    return (await this.conversion.convert([obj], this.conversion.storageApiVersion))[0]!;
  }

  private stamp(obj: KubeObject): KubeObject {
    // Cached objects pass through here too and are never written to: only set what is missing.
    if (obj.apiVersion !== this.apiVersion) obj.apiVersion = this.apiVersion;
    if (obj.kind !== this.rt.kind) obj.kind = this.rt.kind;
    return obj;
  }

  /** The object as this server's watch cache holds it (shared: never change it; may be behind the store). */
  cached(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.cache.get(objectKey(this.rt, namespace, name));
  }

  /** The cached object, or the stored one when the cache has none (yet): for lookups that tolerate a moment's lag. */
  async cachedOrStored(namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
    return this.cached(namespace, name) ?? (await this.tryGet(namespace, name));
  }

  async get(namespace: string | undefined, name: string): Promise<KubeObject> {
    const kv = await this.store.get(objectKey(this.rt, namespace, name));
    if (!kv) throw this.notFound(name);
    return this.servedIfConverted(this.read(kv));
  }

  async tryGet(namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
    const kv = await this.store.get(objectKey(this.rt, namespace, name));
    if (!kv) return undefined;
    return this.servedIfConverted(this.read(kv));
  }

  // ---- list ---------------------------------------------------------------------------------

  async list(namespace: string | undefined, opts: ListOptions): Promise<KubeList> {
    const prefix = keyPrefix(this.rt, namespace);
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    if (opts.continueToken) {
      const token = decodeContinue(opts.continueToken);
      return this.listFromStore(prefix, opts.filter, limit, token.rv, token.start);
    }
    if (opts.resourceVersionMatch === 'Exact') {
      const rv = Number(opts.resourceVersion);
      if (!Number.isInteger(rv) || rv <= 0) throw badRequest('resourceVersionMatch=Exact requires a resourceVersion other than 0');
      return this.listFromStore(prefix, opts.filter, limit, rv, undefined);
    }
    await this.cache.whenReady();
    const rvParam = opts.resourceVersion;
    if (rvParam !== '0') {
      // Unset: the newest data (a consistent read). A number: at least that fresh.
      const want = rvParam ? Number(rvParam) : await this.store.currentRevision();
      if (!Number.isInteger(want) || want < 0) throw badRequest(`invalid resourceVersion ${JSON.stringify(rvParam)}`);
      if (!(await this.cache.waitForRevision(want, 3000))) {
        if (rvParam) throw timeout(`Too large resource version: ${want}, current: ${this.cache.revision}`);
        return this.listFromStore(prefix, opts.filter, limit, 0, undefined);
      }
    }
    const { items, revision } = this.cache.list(opts.filter, prefix);
    // Upstream ignores limit for resourceVersion=0 reads served from its cache.
    if (limit && rvParam !== '0' && items.length > limit) {
      const page = items.slice(0, limit);
      const last = page[page.length - 1]!;
      return this.makeList(await this.served(page), revision, {
        continueToken: encodeContinue({ rv: revision, start: objectKey(this.rt, last.metadata.namespace, last.metadata.name!) }),
        remaining: items.length - limit,
      });
    }
    return this.makeList(await this.served(items), revision);
  }

  private async listFromStore(prefix: string, filter: WatchFilter, limit: number, revision: number, after: string | undefined): Promise<KubeList> {
    const items: KubeObject[] = [];
    let rev = revision;
    let cursor = after;
    let more = false;
    let lastKey = '';
    try {
      for (;;) {
        const want = limit ? Math.max(limit - items.length, 50) : 1000;
        const page = await this.store.list({ prefix, limit: want, ...(cursor ? { after: cursor } : {}), ...(rev ? { revision: rev } : {}) });
        rev = page.revision;
        let i = 0;
        for (; i < page.items.length; i++) {
          const kv = page.items[i]!;
          lastKey = kv.key;
          const obj = this.read(kv);
          if (filter.matches(obj)) items.push(obj);
          if (limit && items.length >= limit) break;
        }
        if (limit && items.length >= limit) {
          more = i < page.items.length - 1 || page.more;
          break;
        }
        if (!page.more || page.items.length === 0) break;
        cursor = page.items[page.items.length - 1]!.key;
      }
    } catch (e) {
      if (isStoreError(e, 'compacted')) throw expired(after ? CONTINUE_EXPIRED : `too old resource version: ${revision} (${e.compactRevision ?? 0})`);
      throw e;
    }
    return this.makeList(this.conversion ? await this.served(items) : items, rev, more ? { continueToken: encodeContinue({ rv: rev, start: lastKey }) } : undefined);
  }

  private makeList(items: KubeObject[], revision: number, page?: { continueToken: string; remaining?: number }): KubeList {
    const metadata: KubeList['metadata'] = { resourceVersion: String(revision) };
    if (page) {
      metadata.continue = page.continueToken;
      if (page.remaining !== undefined) metadata.remainingItemCount = page.remaining;
    }
    return { apiVersion: this.apiVersion, kind: this.rt.listKind, metadata, items };
  }

  // ---- create -------------------------------------------------------------------------------

  /** Creates `obj`, which the store takes over (callers pass a freshly decoded or built object). */
  async create(namespace: string | undefined, obj: KubeObject, ctx: WriteContext): Promise<KubeObject> {
    if (this.rt.refusesCreate) throw methodNotAllowed(this.rt.refusesCreate);
    const meta: ObjectMeta = (obj.metadata ??= {});
    if (this.rt.namespaced) {
      if (meta.namespace && namespace && meta.namespace !== namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      meta.namespace = namespace ?? meta.namespace;
    } else {
      delete meta.namespace;
    }
    const generated = !meta.name && !!meta.generateName;
    if (generated) meta.name = `${meta.generateName}${generatedNameSuffix()}`;
    this.stamp(obj);
    meta.uid = randomUUID();
    meta.creationTimestamp = nowRfc3339(this.clock);
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    if (this.rt.hasGeneration) meta.generation = 1;
    else delete meta.generation;
    if (hasStatusSubresource(this.rt) && !this.rt.keepsStatusOnCreate) delete obj.status;
    this.rt.defaults(obj);
    this.rt.prepareForCreate?.(obj, ctx.user);
    // The client's managedFields are the field manager's to read, not validation's (upstream's order).
    const requestedManagedFields = meta.managedFields;
    if (!ctx.managedFieldsSet) delete meta.managedFields;
    const attrs = this.attributes('CREATE', obj, undefined, ctx);
    await this.admission.mutate(attrs);
    const causes = this.rt.validate(obj, undefined);
    if (causes.length > 0) throw invalid(this.rt.kind, this.rt.group, meta.name ?? '', causes);
    addWarnings(ctx, this.rt.warningsFor?.(obj));
    await this.admission.validate(attrs);
    if (!ctx.managedFieldsSet) updateManagedFields(undefined, obj, { manager: ctx.fieldManager, operation: 'Update', now: nowRfc3339(this.clock), kind: this.rt, requested: requestedManagedFields });
    const rename = (name: string): void => {
      if (name === meta.name) return;
      meta.name = name;
      // Kinds may derive fields from the name (a Namespace's kubernetes.io/metadata.name label).
      this.rt.defaults(obj);
      this.rt.prepareForCreate?.(obj, ctx.user);
    };
    const draw = () => `${meta.generateName}${generatedNameSuffix()}`;
    const write = async (name: string): Promise<KubeObject> => {
      const key = objectKey(this.rt, meta.namespace, name);
      if (ctx.dryRun) {
        if (await this.store.get(key)) throw new StoreError('exists', `${key} already exists`);
        rename(name);
        return obj;
      }
      rename(name);
      if (!this.conversion) return this.writeEchoed(key, obj, (value) => this.store.create(key, value, this.writeOptions));
      const written = await this.writeEchoed(key, await this.toStorage(obj), (value) => this.store.create(key, value, this.writeOptions));
      return this.servedIfConverted(written);
    };
    try {
      // The name is not among the fields managedFields records, so a redrawn one changes nothing else.
      return generated ? await retryGeneratedName(meta.name!, draw, write) : await write(meta.name!);
    } catch (e) {
      if (isStoreError(e, 'exists')) throw alreadyExists(this.rt.resource, this.rt.group, meta.name!);
      throw e;
    }
  }

  // ---- update (PUT, PATCH, subresources) -------------------------------------------------------

  /**
   * Read-modify-write with compare-and-swap. `mutate` gets the current object (a private copy)
   * and returns the desired one. With `expectedRv` set by the client, a stale read is a 409;
   * otherwise conflicts are retried with a fresh read, as upstream's GuaranteedUpdate does.
   */
  async update(
    namespace: string | undefined,
    name: string,
    /**
     * `current` is a private copy to change or replace; `live` the same object as read, never to be
     * changed. Called once per attempt (a write that started from a stale cache is tried again), and
     * what it returns is the attempt's to change: return `current` changed, or a fresh object, never
     * one kept across calls.
     */
    mutate: (current: KubeObject, live: KubeObject) => KubeObject | Promise<KubeObject>,
    ctx: WriteContext,
    opts: { subresource?: string; preconditionRv?: (next: KubeObject) => string | undefined } = {},
  ): Promise<KubeObject> {
    const key = objectKey(this.rt, namespace, name);
    // The first attempt starts from the watch cache's object, as upstream's GuaranteedUpdate starts
    // from the cacher's: no store read and no parse on the common path. The cache may be behind;
    // the compare-and-swap then fails and the retry reads the store. Whatever a cached state
    // decides against the writer (a precondition, a refusal, a no-op) is decided again on the
    // stored state before it is answered.
    // A dry run has no compare-and-swap to catch a stale start: it reads the store, as upstream's does.
    let state = (ctx.dryRun ? undefined : this.cachedState(key)) ?? (await this.storedState(await this.store.get(key)));
    for (let attempt = 0; ; attempt++) {
      if (!state) throw this.notFound(name);
      const { current, modRevision, cached } = state;
      let prepared: KubeObject;
      let wantRv: string | undefined;
      try {
        const next = await mutate(deepClone(current), current);
        wantRv = opts.preconditionRv ? opts.preconditionRv(next) : next.metadata?.resourceVersion;
        if (wantRv && wantRv !== current.metadata.resourceVersion) throw conflict(this.rt.resource, this.rt.group, name);
        prepared = await this.prepareUpdate(current, next, ctx, opts.subresource);
        if (unchanged(prepared, current)) {
          if (!cached) return current;
          state = await this.storedState(await this.store.get(key));
          continue;
        }
      } catch (e) {
        if (!cached) throw e;
        state = await this.storedState(await this.store.get(key));
        continue;
      }
      if (ctx.dryRun) return prepared;
      try {
        if (shouldDeleteDuringUpdate(prepared, this.rt)) {
          await this.hooks.beforeDelete?.(current);
          const deleted = await this.store.delete(key, modRevision);
          this.hooks.written?.();
          prepared.metadata.resourceVersion = String(deleted.modRevision);
          return prepared;
        }
        if (!this.conversion) return await this.writeEchoed(key, prepared, (value) => this.store.update(key, value, modRevision, this.writeOptions));
        const written = await this.writeEchoed(key, await this.toStorage(prepared), (value) => this.store.update(key, value, modRevision, this.writeOptions));
        return await this.servedIfConverted(written);
      } catch (e) {
        if (isStoreError(e, 'conflict') && (cached || !wantRv) && attempt < MAX_RETRIES) {
          state = await this.storedState(e.current);
          continue;
        }
        if (isStoreError(e, 'not-found') && cached) {
          state = await this.storedState(await this.store.get(key));
          continue;
        }
        if (isStoreError(e, 'conflict')) throw conflict(this.rt.resource, this.rt.group, name);
        if (isStoreError(e, 'not-found')) throw this.notFound(name);
        throw e;
      }
    }
  }

  /**
   * The watch cache's object as a starting point for an update: shared (never changed here), so
   * only for kinds read as stored (no decoding on read) and in this store's own version.
   */
  private cachedState(key: string): UpdateState | undefined {
    if (this.rt.onRead || this.conversion) return undefined;
    const obj = this.cache.get(key);
    if (!obj || obj.apiVersion !== this.apiVersion || obj.kind !== this.rt.kind) return undefined;
    const modRevision = Number(obj.metadata.resourceVersion);
    if (!Number.isSafeInteger(modRevision) || modRevision <= 0) return undefined;
    return { current: shared(obj), modRevision, cached: true };
  }

  private async storedState(kv: KeyValue | undefined): Promise<UpdateState | undefined> {
    if (!kv) return undefined;
    const current = await this.servedIfConverted(this.read(kv));
    return { current, modRevision: kv.modRevision, cached: false };
  }

  private async prepareUpdate(old: KubeObject, input: KubeObject, ctx: WriteContext, subresource: string | undefined): Promise<KubeObject> {
    const name = old.metadata.name!;
    if (!input || typeof input !== 'object' || !input.metadata || typeof input.metadata !== 'object') {
      throw badRequest('the object provided has no metadata');
    }
    if (input.metadata.name !== undefined && input.metadata.name !== name) {
      throw badRequest(`the name of the object (${input.metadata.name}) does not match the name on the URL (${name})`);
    }
    if (this.rt.namespaced && input.metadata.namespace !== undefined && input.metadata.namespace !== old.metadata.namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    let next: KubeObject;
    if (subresource === 'status' || subresource === 'approval') {
      // Status writers (kubelets, controllers) change status only; labels and the rest stay.
      next = { ...deepClone({ ...old, status: undefined }), status: input.status };
      if (input.status === undefined) delete next.status;
      // Server-side apply to /status recorded its field owner on the object it built: keep that.
      if (ctx.managedFieldsSet) next.metadata.managedFields = input.metadata.managedFields;
    } else if (subresource === 'binding') {
      // The binding computed spec.nodeName and the PodScheduled condition itself.
      next = input;
    } else {
      next = input;
      if (hasStatusSubresource(this.rt)) {
        // A copy: `old` may be the watch cache's, and defaulting writes into what it is given.
        if (old.status === undefined) delete next.status;
        else next.status = deepClone(old.status);
      }
    }
    const meta = next.metadata;
    meta.name = name;
    if (this.rt.namespaced) meta.namespace = old.metadata.namespace;
    else delete meta.namespace;
    meta.uid = old.metadata.uid;
    meta.creationTimestamp = old.metadata.creationTimestamp;
    restore(meta, old.metadata, 'deletionTimestamp');
    restore(meta, old.metadata, 'deletionGracePeriodSeconds');
    if (old.metadata.deletionTimestamp) {
      // Once deleting, finalizers may only be removed, never added (upstream rule).
      const before = new Set(old.metadata.finalizers ?? []);
      const added = (meta.finalizers ?? []).filter((f) => !before.has(f));
      if (added.length > 0) {
        throw invalid(this.rt.kind, this.rt.group, name, [
          { reason: 'FieldValueForbidden', field: 'metadata.finalizers', message: 'Forbidden: no new finalizers can be added if the object is being deleted' },
        ]);
      }
    }
    this.stamp(next);
    this.rt.defaults(next);
    if (this.rt.hasGeneration) {
      const gen = old.metadata.generation ?? 1;
      meta.generation = jsonEqual(specOf(next), specOf(old)) ? gen : gen + 1;
    } else {
      delete meta.generation;
    }
    if (subresource === undefined || subresource === 'scale') this.rt.prepareForUpdate?.(next, old);
    else this.rt.prepareForSubresourceUpdate?.(subresource, next, old, nowRfc3339(this.clock));
    // What the client sent as managedFields goes to the field manager below; validation sees the stored ones.
    const requestedManagedFields = meta.managedFields;
    if (!ctx.managedFieldsSet) meta.managedFields = old.metadata.managedFields;
    // Admission sees every update, subresources too (a plugin says which it acts on). For a write
    // no plugin handles no attributes are built; one whose plugins all decide synchronously (a Lease
    // renewal no webhook's rules match) awaits nothing.
    const attrs = this.admission.admits('UPDATE', this.rt) ? this.attributes('UPDATE', next, old, ctx, subresource) : undefined;
    const mutated = attrs && this.admission.mutate(attrs);
    if (mutated) await mutated;
    // A binding is the one write allowed to set a pod's nodeName; upstream skips update validation for it.
    if (subresource !== 'binding') {
      const causes =
        subresource && this.rt.validateSubresourceUpdate
          ? this.rt.validateSubresourceUpdate(subresource, next, old)
          : subresource === 'status' && this.rt.validateStatusUpdate
            ? this.rt.validateStatusUpdate(next, old)
            : this.rt.validate(next, old);
      if (causes.length > 0) throw invalid(this.rt.kind, this.rt.group, name, causes);
      if (subresource === undefined) addWarnings(ctx, this.rt.warningsFor?.(next));
    }
    const validated = attrs && this.admission.validate(attrs);
    if (validated) await validated;
    if (ctx.managedFieldsSet) return next;
    updateManagedFields(old, next, {
      manager: ctx.fieldManager,
      operation: 'Update',
      now: nowRfc3339(this.clock),
      kind: this.rt,
      requested: requestedManagedFields,
      ...(subresource ? { subresource } : {}),
    });
    return next;
  }

  // ---- delete -------------------------------------------------------------------------------

  async delete(namespace: string | undefined, name: string, opts: DeleteOptions, ctx: WriteContext): Promise<DeleteResult> {
    const key = objectKey(this.rt, namespace, name);
    let kv = await this.store.get(key);
    for (let attempt = 0; ; attempt++) {
      if (!kv) throw this.notFound(name);
      const current = this.read(kv);
      // Admitted on the object as stored at each attempt: a retry may find another one of the name.
      // Both stages, as upstream's: a mutating webhook may refuse a deletion too.
      if (this.admission.admits('DELETE', this.rt)) {
        // Admission sees the object in the version the client deletes it through.
        const attrs = this.attributes('DELETE', undefined, await this.servedIfConverted(current), ctx);
        await this.admission.mutate(attrs);
        await this.admission.validate(attrs);
      }
      const refused = this.rt.refuseDelete?.(current);
      if (refused) throw forbiddenObject(this.rt.resource, this.rt.group, name, refused);
      const pre = opts.preconditions;
      if (pre?.uid && pre.uid !== current.metadata.uid) {
        throw conflict(this.rt.resource, this.rt.group, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid}`);
      }
      if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
        throw conflict(
          this.rt.resource,
          this.rt.group,
          name,
          `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`,
        );
      }
      const plan = this.planDeletion(current, opts);
      try {
        if (plan.kind === 'now') {
          if (ctx.dryRun) return { body: this.deletedBody(await this.servedIfConverted(current)), deleted: true };
          await this.hooks.beforeDelete?.(current);
          const deleted = this.read(await this.store.delete(key, kv.modRevision));
          this.hooks.written?.();
          return { body: this.deletedBody(await this.servedIfConverted(deleted)), deleted: true };
        }
        if (plan.kind === 'unchanged' || ctx.dryRun) return { body: await this.servedIfConverted(plan.object ?? current), deleted: false };
        const updated = this.read(await this.store.update(key, encodeStored(plan.object), kv.modRevision, this.writeOptions));
        return { body: await this.servedIfConverted(updated), deleted: false };
      } catch (e) {
        if (isStoreError(e, 'conflict') && attempt < MAX_RETRIES) {
          kv = e.current;
          continue;
        }
        if (isStoreError(e, 'not-found')) throw this.notFound(name);
        if (isStoreError(e, 'conflict')) throw conflict(this.rt.resource, this.rt.group, name);
        throw e;
      }
    }
  }

  private deletedBody(obj: KubeObject): KubeObject | Status {
    if (this.rt.returnsDeletedObject) return obj;
    const details: Status['details'] = { name: obj.metadata.name!, kind: this.rt.resource, uid: obj.metadata.uid! };
    if (this.rt.group) details.group = this.rt.group;
    return successStatus(200, details);
  }

  /** Graceful deletion (pods), finalizers and propagation policy, as upstream's BeforeDelete. */
  private planDeletion(current: KubeObject, opts: DeleteOptions): { kind: 'now' } | { kind: 'unchanged'; object?: KubeObject } | { kind: 'mark'; object: KubeObject } {
    const meta = current.metadata;
    const grace = this.gracePeriod(current, opts);
    const finalizers = new Set(meta.finalizers ?? []);
    // A kind's default applies only when neither the request nor the object's own finalizers decide.
    const decided = meta.finalizers?.some((f) => f === 'orphan' || f === 'foregroundDeletion') ?? false;
    const policy = opts.propagationPolicy ?? (decided ? undefined : this.rt.defaultPropagationPolicy);
    if (!meta.deletionTimestamp) {
      if (policy === 'Orphan') finalizers.add('orphan');
      if (policy === 'Foreground') finalizers.add('foregroundDeletion');
      for (const f of this.rt.deletionFinalizers ?? []) finalizers.add(f);
    }
    const now = this.clock.now();
    if (meta.deletionTimestamp) {
      // Already terminating: a shorter grace period may bring the deadline forward.
      const currentGrace = meta.deletionGracePeriodSeconds ?? 0;
      if (grace < currentGrace) {
        const next = deepClone(current);
        next.metadata.deletionGracePeriodSeconds = grace;
        next.metadata.deletionTimestamp = rfc3339(now + grace * 1000);
        if (grace === 0 && !blocksDeletion(next, this.rt)) return { kind: 'now' };
        return { kind: 'mark', object: next };
      }
      return blocksDeletion(current, this.rt) || currentGrace > 0 ? { kind: 'unchanged' } : { kind: 'now' };
    }
    const finalizerList = [...finalizers];
    if (grace === 0 && finalizers.size === 0 && !blocksDeletion(current, this.rt)) return { kind: 'now' };
    const next = deepClone(current);
    next.metadata.deletionTimestamp = rfc3339(now + grace * 1000);
    next.metadata.deletionGracePeriodSeconds = grace;
    if (finalizerList.length > 0) next.metadata.finalizers = finalizerList;
    if (this.rt.hasGeneration) next.metadata.generation = (meta.generation ?? 1) + 1;
    this.rt.prepareForDeletion?.(next);
    return { kind: 'mark', object: next };
  }

  private gracePeriod(obj: KubeObject, opts: DeleteOptions): number {
    return this.rt.deletionGracePeriod?.(obj, opts.gracePeriodSeconds) ?? 0;
  }

}

/** Adds each warning once: a write may be prepared more than once (conflict retries). */
function addWarnings(ctx: WriteContext, warnings: readonly string[] | undefined): void {
  for (const w of warnings ?? []) if (!ctx.warnings.includes(w)) ctx.warnings.push(w);
}

function restore(meta: ObjectMeta, old: ObjectMeta, field: 'deletionTimestamp' | 'deletionGracePeriodSeconds'): void {
  if (old[field] === undefined) delete meta[field];
  else (meta as Record<string, unknown>)[field] = old[field];
}


/** An update that removed the last finalizer of an object whose grace period is over deletes it. */
function shouldDeleteDuringUpdate(obj: KubeObject, rt: ResourceType): boolean {
  const m = obj.metadata;
  return !!m.deletionTimestamp && !blocksDeletion(obj, rt) && (m.deletionGracePeriodSeconds ?? 0) === 0;
}

/** Finalizers hold an object in the API after deletion; some kinds have more of their own (a namespace's spec.finalizers). */
function blocksDeletion(obj: KubeObject, rt: ResourceType): boolean {
  if ((obj.metadata.finalizers ?? []).length > 0) return true;
  return (rt.extraFinalizers?.(obj) ?? []).length > 0;
}
