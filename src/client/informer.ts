// A shared informer: list, then watch from the list's resourceVersion, keeping a local cache and
// telling handlers about adds, updates and deletes. Relists on 410, re-watches when a stream ends,
// backs off on errors. Level-triggered controllers read its cache; they never trust one event.
import type { KubeList, KubeObject, WatchEvent } from '../api/types.js';
import { isStatusError } from '../api/errors.js';
import type { Clock } from '../util/clock.js';
import { systemClock } from '../util/clock.js';
import type { Logger } from '../util/log.js';

/**
 * Where an informer lists and watches: the API over HTTP (ApiClient), or, for a server's own
 * controllers, that server's watch caches. A 410 surfaces as a StatusError with code 410.
 */
export interface ListWatchSource {
  /** Whether read-only reads get shared objects rather than copies (see ReadOptions). */
  readonly sharesObjects?: boolean;
  list<T extends KubeObject>(path: string, query: Record<string, string>, signal: AbortSignal, opts?: ReadOptions): Promise<KubeList<T>>;
  watch<T extends KubeObject>(path: string, query: Record<string, string>, signal: AbortSignal, opts?: ReadOptions): AsyncIterable<WatchEvent<T>>;
}

export interface ReadOptions {
  /**
   * The reader never changes what it is given, so a source may hand out objects it shares with
   * others (a server's cache) instead of copies. Over HTTP every object is a copy anyway.
   */
  readOnly?: boolean;
}

export interface InformerHandlers<T extends KubeObject> {
  add?(obj: T): void;
  update?(oldObj: T, newObj: T): void;
  delete?(obj: T): void;
}

export interface InformerOptions<T extends KubeObject = KubeObject> {
  /** Collection path, e.g. /api/v1/pods or /apis/apps/v1/namespaces/default/deployments. */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  clock?: Clock;
  log?: Logger;
  /** Watch request lifetime; the informer re-watches after it. */
  watchTimeoutSeconds?: number;
  /** Handlers only read objects (never change them): a source may share them instead of copying. */
  readOnly?: boolean;
  /**
   * What is kept of each object, applied before it is cached or handed to handlers (client-go's
   * SetTransform): a reader that needs a few fields of many objects keeps only those.
   */
  transform?: (obj: T) => T;
  /** Told why a list or watch failed (a 403 the informer keeps retrying), and `undefined` once a list succeeds. */
  onError?: (e: unknown) => void;
}

/**
 * An informer transform (client-go's TransformStripManagedFields) for readers that never look at
 * who set which field: managedFields are about half of a pod as the API sends it. A copy, as a
 * server's own informers may share their objects. Safe to write back: an update that carries no
 * managedFields keeps the stored ones.
 */
export function stripManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata?.managedFields === undefined) return obj;
  const { managedFields: _dropped, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

export function objectKeyOf(obj: KubeObject): string {
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name!;
}

export class Informer<T extends KubeObject = KubeObject> {
  private readonly opts: InformerOptions<T>;
  private readonly cache = new Map<string, T>();
  private readonly handlers: InformerHandlers<T>[] = [];
  private resourceVersion = '';
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  private readonly clock: Clock;

  constructor(private readonly source: ListWatchSource, opts: InformerOptions<T>) {
    this.opts = opts;
    this.clock = opts.clock ?? systemClock;
  }

  addHandlers(h: InformerHandlers<T>): void {
    this.handlers.push(h);
    // Late handlers still see what is already known, as client-go's shared informers do.
    if (this.synced) for (const obj of this.cache.values()) h.add?.(obj);
  }

  get(key: string): T | undefined {
    return this.cache.get(key);
  }

  list(): T[] {
    return [...this.cache.values()];
  }

  get lastResourceVersion(): string {
    return this.resourceVersion;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((r) => this.syncWaiters.push(r));
  }

  /** Runs until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    let backoff = 200;
    let needList = true;
    // As client-go's reflector: first list from any cache ("0"), later ones at least as new as what
    // was already seen (another server's cache may lag), after a 410 the newest ("").
    let relistRv = '0';
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.relist(signal, relistRv);
          needList = false;
        }
        await this.watchOnce(signal);
        backoff = 200;
      } catch (e) {
        if (signal.aborted) return;
        this.opts.onError?.(e);
        if (isStatusError(e) && (e.code === 410 || e.reason === 'Expired' || e.reason === 'Gone')) {
          // The window moved past us: read the newest state, never an older cache.
          needList = true;
          relistRv = '';
          continue;
        }
        this.opts.log?.debug({ path: this.opts.path, err: (e as Error).message }, 'informer watch failed; retrying');
        await this.clock.sleep(backoff, signal).catch(() => {});
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }

  private query(): Record<string, string> {
    const q: Record<string, string> = {};
    if (this.opts.labelSelector) q.labelSelector = this.opts.labelSelector;
    if (this.opts.fieldSelector) q.fieldSelector = this.opts.fieldSelector;
    return q;
  }

  private async relist(signal: AbortSignal, resourceVersion: string): Promise<void> {
    const rv = resourceVersion === '0' && this.resourceVersion ? this.resourceVersion : resourceVersion;
    const query: Record<string, string> = { ...this.query() };
    if (rv) query.resourceVersion = rv;
    const list = await this.source.list<T>(this.opts.path, query, signal, { readOnly: this.opts.readOnly ?? false });
    const fresh = new Map<string, T>();
    const transform = this.opts.transform;
    for (const item of list.items) fresh.set(objectKeyOf(item), transform ? transform(item) : item);
    for (const [key, old] of this.cache) {
      if (!fresh.has(key)) {
        this.cache.delete(key);
        for (const h of this.handlers) h.delete?.(old);
      }
    }
    for (const [key, obj] of fresh) {
      const old = this.cache.get(key);
      this.cache.set(key, obj);
      if (!old) for (const h of this.handlers) h.add?.(obj);
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) for (const h of this.handlers) h.update?.(old, obj);
    }
    this.resourceVersion = list.metadata.resourceVersion ?? '';
    this.opts.onError?.(undefined);
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters) w();
      this.syncWaiters = [];
    }
  }

  private async watchOnce(signal: AbortSignal): Promise<void> {
    const timeout = this.opts.watchTimeoutSeconds ?? 300 + Math.floor(Math.random() * 300);
    const query = { ...this.query(), resourceVersion: this.resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds: String(timeout) };
    for await (const ev of this.source.watch<T>(this.opts.path, query, signal, { readOnly: this.opts.readOnly ?? false })) {
      const rv = ev.object.metadata?.resourceVersion;
      if (ev.type === 'BOOKMARK') {
        if (rv) this.resourceVersion = rv;
        continue;
      }
      const obj = this.opts.transform ? this.opts.transform(ev.object) : ev.object;
      const key = objectKeyOf(obj);
      const old = this.cache.get(key);
      if (ev.type === 'DELETED') {
        this.cache.delete(key);
        for (const h of this.handlers) h.delete?.(old ?? obj);
      } else {
        this.cache.set(key, obj);
        if (old) for (const h of this.handlers) h.update?.(old, obj);
        else for (const h of this.handlers) h.add?.(obj);
      }
      if (rv) this.resourceVersion = rv;
    }
  }
}
