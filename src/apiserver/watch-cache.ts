// One store watch per resource feeds an in-memory copy of the current objects plus a window of
// recent events. Every client watch and every cache-served list is answered from here, so
// thousands of agents watching their own pods cost the store nothing extra.
import type { KubeObject } from '../api/types.js';
import { isStoreError, type KeyValue, type Store, type StoreEvent } from '../store/store.js';
import type { Logger } from '../util/log.js';
import { forgetStoredText, rememberStoredText } from './stored-json.js';
import { SortedKeys } from '../util/sorted-keys.js';
import { internManagedFields } from './patch/fields-intern.js';

export type CacheEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface CacheEvent {
  type: CacheEventType;
  rv: number;
  key: string;
  object: KubeObject;
  /** The object before this event (for MODIFIED and DELETED). */
  prev?: KubeObject;
  /** Serialized once and shared by every watcher that sends the object as plain JSON. */
  json?: string;
  /** The whole watch line, framed as an HTTP chunk, for watchers that see this event unchanged: encoded once. */
  frame?: Buffer;
}

/** An event in the window, with what it costs to keep and when it arrived. */
interface WindowEvent extends CacheEvent {
  /** Length of the stored text: what the window's byte budget counts. */
  bytes: number;
  at: number;
}

export interface WatchFilter {
  /** Exact values of indexed fields (e.g. spec.nodeName) the watcher requires. */
  indexed?: { field: string; value: string };
  matches(obj: KubeObject): boolean;
}

export interface CacheWatcher {
  readonly filter: WatchFilter;
  /** Called for each event the filter lets through, already re-typed for this watcher. */
  send(type: CacheEventType, ev: CacheEvent): void;
  /** Called when the cache can no longer serve this watcher (relist, shutdown). */
  end(reason: 'relist' | 'shutdown'): void;
}

export class ExpiredError extends Error {
  constructor(readonly requested: number, readonly oldest: number) {
    super(`too old resource version: ${requested} (${oldest})`);
  }
}

export class TooLargeResourceVersionError extends Error {
  constructor(readonly requested: number, readonly current: number) {
    super(`Too large resource version: ${requested}, current: ${current}`);
  }
}

interface Entry {
  object: KubeObject;
  rv: number;
}

export interface WatchCacheOptions {
  store: Store;
  prefix: string;
  /** At most this many events are kept for resuming watches. */
  capacity?: number;
  /** …and at most this much stored text (the objects they hold cost about twice that in memory)… */
  maxBytes?: number;
  /** …and none older than this, once more than MIN_WINDOW_EVENTS are kept. */
  maxAgeMs?: number;
  /** The clock events are aged by. */
  now?: () => number;
  /** Fields whose exact values index objects and watchers (pods: spec.nodeName). */
  indexedFields?: Record<string, (obj: KubeObject) => string | undefined>;
  /**
   * What the served type does to an object read from storage (custom resources: their version's
   * apiVersion, as objects of every version share keys, and their schema's defaults).
   */
  onDecode?: (obj: KubeObject) => void;
  log: Logger;
}

/**
 * The window of events a watch can resume from is bounded three ways: by count (the flag), by the
 * stored size of what it holds, and by age. A burst (50,000 pods created) is kept as far as the
 * budget allows and then let go, instead of holding 10,000 old versions of every busy resource
 * for as long as nothing else happens; a watch that resumes from before the window gets 410 Gone
 * and relists, as upstream's. Upstream keeps events at least 75 s (eventFreshDuration) and sizes
 * its window to that; here the budget decides, and quiet resources keep their last events.
 */
export const DEFAULT_WINDOW_BYTES = 32 * 2 ** 20;
export const DEFAULT_WINDOW_AGE_MS = 5 * 60_000;
/** Upstream's smallest watch cache: this many events are always kept, however old. */
export const MIN_WINDOW_EVENTS = 100;

function afterPendingCallbacks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}


interface PendingWrite {
  value: string;
  object: KubeObject;
  /** Where the write landed, once its writer knows. */
  revision?: number;
}

export class WatchCache {
  private readonly store: Store;
  private readonly onDecode?: (obj: KubeObject) => void;
  readonly prefix: string;
  private readonly capacity: number;
  private readonly maxBytes: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;
  /** Stored bytes of the events in the window. */
  private windowBytes = 0;
  private readonly log: Logger;
  private readonly indexedFields: Record<string, (obj: KubeObject) => string | undefined>;

  private objects = new Map<string, Entry>();
  /** The keys of `objects` in order: a list reads its prefix's range instead of sorting them all. */
  private readonly orderedKeys = new SortedKeys();
  /** Ring of recent events, oldest first. */
  private events: WindowEvent[] = [];
  private eventsStart = 0;
  /** All events with rv > windowStart are in `events`. */
  private windowStart = 0;
  /** The cache reflects the store through this revision. */
  private currentRv = 0;
  /** Counts changes to the objects (events applied, relists): a reader can tell cheaply that nothing changed. */
  private changes = 0;
  private readyPromise: Promise<void>;
  private resolveReady!: () => void;
  private ready = false;
  private readonly watchers = new Set<CacheWatcher>();
  private readonly indexedWatchers = new Map<string, Map<string, Set<CacheWatcher>>>();
  private readonly objectIndex = new Map<string, Map<string, Set<string>>>();
  private rvWaiters: { rv: number; resolve: () => void }[] = [];
  private readonly abort = new AbortController();
  /**
   * Writes this process has sent to the store, by key: the event that echoes one takes the
   * written object instead of parsing the stored text again (see expectWrite).
   */
  private readonly pendingWrites = new Map<string, PendingWrite>();

  constructor(opts: WatchCacheOptions) {
    this.store = opts.store;
    this.prefix = opts.prefix;
    this.capacity = opts.capacity ?? 10_000;
    this.maxBytes = opts.maxBytes ?? DEFAULT_WINDOW_BYTES;
    this.maxAgeMs = opts.maxAgeMs ?? DEFAULT_WINDOW_AGE_MS;
    this.now = opts.now ?? Date.now;
    this.log = opts.log;
    this.indexedFields = opts.indexedFields ?? {};
    if (opts.onDecode) this.onDecode = opts.onDecode;
    for (const f of Object.keys(this.indexedFields)) {
      this.indexedWatchers.set(f, new Map());
      this.objectIndex.set(f, new Map());
    }
    this.readyPromise = new Promise((r) => (this.resolveReady = r));
  }

  get revision(): number {
    return this.currentRv;
  }

  get size(): number {
    return this.objects.size;
  }

  /** Moves on whenever the cached objects change (progress alone does not move it). */
  get changeCount(): number {
    return this.changes;
  }

  get watcherCount(): number {
    return this.watchers.size;
  }

  whenReady(): Promise<void> {
    return this.readyPromise;
  }

  start(): void {
    void this.run();
  }

  stop(): void {
    this.abort.abort();
    for (const w of [...this.watchers]) this.removeWatcher(w, 'shutdown');
  }

  private async run(): Promise<void> {
    let backoff = 100;
    while (!this.abort.signal.aborted) {
      try {
        const rv = await this.relist();
        backoff = 100;
        // Progress the store reports while a batch waits to be applied is held back: the cache must
        // never claim a revision whose events it has not applied (a list or watch at that revision
        // would miss them).
        let applying = false;
        let heldProgress = 0;
        const onProgress = (p: number): void => {
          if (applying) heldProgress = Math.max(heldProgress, p);
          else this.advance(p);
        };
        for await (const batch of this.store.watch(this.prefix, rv, this.abort.signal, onProgress)) {
          applying = true;
          // The writers of these events are answered first: their acknowledgements are already
          // due (microtasks), while fanning an event out to a thousand watchers takes milliseconds.
          await afterPendingCallbacks();
          for (const ev of batch) this.apply(ev);
          this.advance(batch[batch.length - 1]!.kv.modRevision);
          applying = false;
          if (heldProgress > 0) {
            this.advance(heldProgress);
            heldProgress = 0;
          }
        }
      } catch (e) {
        if (this.abort.signal.aborted) return;
        const compacted = isStoreError(e, 'compacted');
        this.log.warn({ prefix: this.prefix, err: String(e), compacted }, 'watch cache lost its store watch; relisting');
        if (!compacted) await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }

  private async relist(): Promise<number> {
    const objects = new Map<string, Entry>();
    let after: string | undefined;
    let revision = 0;
    for (;;) {
      const page = await this.store.list({ prefix: this.prefix, limit: 1000, ...(after ? { after } : {}), ...(revision ? { revision } : {}) });
      revision = page.revision;
      for (const kv of page.items) objects.set(kv.key, { object: this.decode(kv, kv.modRevision), rv: kv.modRevision });
      if (!page.more || page.items.length === 0) break;
      after = page.items[page.items.length - 1]!.key;
    }
    if (this.ready) {
      // Watchers saw a history that is now gone; they resume from their last RV and get 410.
      for (const w of [...this.watchers]) this.removeWatcher(w, 'relist');
    }
    this.objects = objects;
    this.orderedKeys.reset(objects.keys());
    this.changes++;
    this.pendingWrites.clear();
    for (const idx of this.objectIndex.values()) idx.clear();
    for (const [key, entry] of objects) this.indexObject(key, entry.object, undefined);
    this.events = [];
    this.eventsStart = 0;
    this.windowBytes = 0;
    this.windowStart = revision;
    this.currentRv = revision;
    if (!this.ready) {
      this.ready = true;
      this.resolveReady();
    }
    this.advance(revision);
    return revision;
  }

  private indexObject(key: string, obj: KubeObject | undefined, prev: KubeObject | undefined): void {
    for (const [field, get] of Object.entries(this.indexedFields)) {
      const idx = this.objectIndex.get(field)!;
      const before = prev ? get(prev) : undefined;
      const after = obj ? get(obj) : undefined;
      if (before === after) continue;
      if (before !== undefined) {
        const set = idx.get(before);
        set?.delete(key);
        if (set && set.size === 0) idx.delete(before);
      }
      if (after !== undefined) {
        let set = idx.get(after);
        if (!set) idx.set(after, (set = new Set()));
        set.add(key);
      }
    }
  }

  /**
   * `object`, stored as `value` under `key`, is about to be written: if the store's event for that
   * write arrives, the cache keeps `object` itself (with the event's resourceVersion) instead of
   * a parse of `value`. The writer must not change `object` after this but for its
   * resourceVersion, and calls forgetWrite if the write fails.
   */
  expectWrite(key: string, value: string, object: KubeObject): void {
    // Bounded: echoes lost to a relist or a stopped watch must not pile up.
    if (this.pendingWrites.size >= this.capacity) this.pendingWrites.clear();
    this.pendingWrites.set(key, { value, object });
  }

  /**
   * The write of `object` returned `revision`: the object the writer answers with. Two writes of
   * the same text (concurrent writers that computed the same object) can each take the other's
   * echo, so the object is changed only while it still waits for its own; once an echo adopted
   * it (it is shared from then on, maybe at another revision) the writer gets a copy.
   */
  settleWrite(key: string, object: KubeObject, revision: number): KubeObject {
    const rv = String(revision);
    if (object.metadata.resourceVersion === rv) return object;
    const pending = this.pendingWrites.get(key);
    // No longer waiting for its echo: adopted at another revision (or dropped by a relist, which
    // cannot be told apart): the copy is right either way, and this path is rare.
    if (pending?.object !== object) return { ...object, metadata: { ...object.metadata, resourceVersion: rv } };
    pending.revision = revision;
    object.metadata.resourceVersion = rv;
    return object;
  }

  forgetWrite(key: string, value: string): void {
    if (this.pendingWrites.get(key)?.value === value) this.pendingWrites.delete(key);
  }

  private decode(kv: KeyValue, rv: number): KubeObject {
    const obj = JSON.parse(kv.value) as KubeObject;
    obj.metadata.resourceVersion = String(rv);
    // Written by another member, or before a restart: its FieldsV1 trees shared as a write's are.
    internManagedFields(obj.metadata.managedFields);
    // Served as stored: answered from its text, as the objects this server wrote are. (A custom
    // resource is reshaped for the version it is served as, so its text would not do.)
    if (this.onDecode) this.onDecode(obj);
    else rememberStoredText(obj, kv.value);
    return obj;
  }

  /** The object an event carries: the written one when this process wrote it, else parsed. */
  private eventObject(kv: KeyValue, rv: number): KubeObject {
    const pending = this.pendingWrites.get(kv.key);
    // Another write of the same text, whose writer already knows it landed at another revision.
    if (pending === undefined || pending.value !== kv.value || (pending.revision !== undefined && pending.revision !== rv)) return this.decode(kv, rv);
    this.pendingWrites.delete(kv.key);
    const rvText = String(rv);
    // The writer sets the same resourceVersion when its write returns; whichever comes first.
    if (pending.object.metadata.resourceVersion !== rvText) pending.object.metadata.resourceVersion = rvText;
    return pending.object;
  }

  private apply(ev: StoreEvent): void {
    const rv = ev.kv.modRevision;
    this.changes++;
    let cacheEvent: CacheEvent;
    if (ev.type === 'delete') {
      const prevEntry = this.objects.get(ev.kv.key);
      const prev = prevEntry?.object ?? this.decode(ev.prev, ev.prev.modRevision);
      const object = this.decode(ev.kv, rv);
      if (this.objects.delete(ev.kv.key)) this.orderedKeys.delete(ev.kv.key);
      this.indexObject(ev.kv.key, undefined, prev);
      cacheEvent = { type: 'DELETED', rv, key: ev.kv.key, object, prev };
    } else {
      const object = this.eventObject(ev.kv, rv);
      const prevEntry = this.objects.get(ev.kv.key);
      const prev = prevEntry?.object ?? (ev.type === 'update' ? this.decode(ev.prev, ev.prev.modRevision) : undefined);
      if (!prevEntry) this.orderedKeys.add(ev.kv.key);
      this.objects.set(ev.kv.key, { object, rv });
      this.indexObject(ev.kv.key, object, prev);
      cacheEvent = prev ? { type: 'MODIFIED', rv, key: ev.kv.key, object, prev } : { type: 'ADDED', rv, key: ev.kv.key, object };
    }
    if (cacheEvent.prev) forgetStoredText(cacheEvent.prev);
    const windowed = cacheEvent as WindowEvent;
    windowed.bytes = ev.kv.value.length;
    windowed.at = this.now();
    this.push(windowed);
    this.dispatch(cacheEvent);
    // Every watcher has its encoding now; a watch resuming from the window later encodes again.
    // Kept, they would double what the window costs.
    cacheEvent.json = undefined;
    cacheEvent.frame = undefined;
  }

  private push(ev: WindowEvent): void {
    this.events.push(ev);
    this.windowBytes += ev.bytes;
    const oldestAllowed = ev.at - this.maxAgeMs;
    for (;;) {
      const live = this.events.length - this.eventsStart;
      const oldest = this.events[this.eventsStart]!;
      const over = live > this.capacity || (live > MIN_WINDOW_EVENTS && (this.windowBytes > this.maxBytes || oldest.at < oldestAllowed));
      if (!over) break;
      this.windowStart = oldest.rv;
      this.windowBytes -= oldest.bytes;
      this.events[this.eventsStart] = undefined as unknown as WindowEvent;
      this.eventsStart++;
    }
    // Compact the array occasionally instead of shifting on every event.
    if (this.eventsStart > 1024 && this.eventsStart > this.events.length / 2) {
      this.events = this.events.slice(this.eventsStart);
      this.eventsStart = 0;
    }
  }

  private advance(rv: number): void {
    if (rv <= this.currentRv) return;
    this.currentRv = rv;
    if (this.rvWaiters.length === 0) return;
    const still: typeof this.rvWaiters = [];
    for (const w of this.rvWaiters) (w.rv <= rv ? w.resolve() : still.push(w));
    this.rvWaiters = still;
  }

  /** Resolves once the cache has caught up with rv; false after timeoutMs. */
  async waitForRevision(rv: number, timeoutMs: number): Promise<boolean> {
    await this.readyPromise;
    if (this.currentRv >= rv) return true;
    return new Promise<boolean>((resolve) => {
      const waiter = { rv, resolve: () => (clearTimeout(t), resolve(true)) };
      const t = setTimeout(() => {
        this.rvWaiters = this.rvWaiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      this.rvWaiters.push(waiter);
    });
  }

  private candidates(ev: CacheEvent): Iterable<CacheWatcher> {
    if (this.indexedWatchers.size === 0) return this.watchers;
    const out = new Set<CacheWatcher>();
    for (const w of this.watchers) if (!w.filter.indexed) out.add(w);
    for (const [field, byValue] of this.indexedWatchers) {
      if (byValue.size === 0) continue;
      const get = this.indexedFields[field]!;
      for (const obj of [ev.object, ev.prev]) {
        const v = obj ? get(obj) : undefined;
        if (v === undefined) continue;
        for (const w of byValue.get(v) ?? []) out.add(w);
      }
    }
    return out;
  }

  private dispatch(ev: CacheEvent): void {
    if (this.watchers.size === 0) return;
    for (const w of this.candidates(ev)) this.deliver(w, ev);
  }

  private deliver(w: CacheWatcher, ev: CacheEvent): void {
    const type = retype(ev, w.filter);
    if (type) w.send(type, ev);
  }

  /** The cached object at key, if the cache has seen it (absence is not proof: the cache may lag). */
  get(key: string): KubeObject | undefined {
    return this.objects.get(key)?.object;
  }

  /**
   * The current objects under keyPrefix: for in-process readers that need no paging or revision.
   * Read from the prefix's range of the ordered keys, not a pass over every object: admission asks
   * for one namespace's LimitRanges or RoleBindings on every pod create or request.
   */
  objectsUnder(keyPrefix: string): KubeObject[] {
    const out: KubeObject[] = [];
    for (const key of this.orderedKeys.withPrefix(keyPrefix)) {
      const e = this.objects.get(key);
      if (e) out.push(e.object);
    }
    return out;
  }

  /** Current objects passing the filter, in key order, and the revision they reflect. */
  list(filter: WatchFilter, keyPrefix: string): { items: KubeObject[]; revision: number } {
    // An index's set is small (one node's pods): sorted on the spot.
    const keys = filter.indexed ? [...(this.objectIndex.get(filter.indexed.field)?.get(filter.indexed.value) ?? [])].sort() : this.orderedKeys.withPrefix(keyPrefix);
    const items: KubeObject[] = [];
    for (const key of keys) {
      if (!key.startsWith(keyPrefix)) continue;
      const e = this.objects.get(key);
      if (e && filter.matches(e.object)) items.push(e.object);
    }
    return { items, revision: this.currentRv };
  }

  /**
   * Registers a watcher. fromRv undefined: first an ADDED for every current object (upstream's
   * rv=0 semantics). Otherwise events strictly after fromRv, replayed from the window.
   */
  watch(w: CacheWatcher, fromRv: number | undefined, keyPrefix: string): void {
    if (fromRv !== undefined) {
      if (fromRv < this.windowStart) throw new ExpiredError(fromRv, this.windowStart + 1);
      if (fromRv > this.currentRv) throw new TooLargeResourceVersionError(fromRv, this.currentRv);
    }
    // Registered before the (synchronous) replay, so a watcher that ends itself during the replay
    // is really removed; no live event can interleave with the replay.
    this.watchers.add(w);
    if (w.filter.indexed) {
      const byValue = this.indexedWatchers.get(w.filter.indexed.field);
      if (byValue) {
        let set = byValue.get(w.filter.indexed.value);
        if (!set) byValue.set(w.filter.indexed.value, (set = new Set()));
        set.add(w);
      }
    }
    if (fromRv === undefined) {
      for (const obj of this.list(w.filter, keyPrefix).items) {
        w.send('ADDED', { type: 'ADDED', rv: Number(obj.metadata.resourceVersion), key: '', object: obj });
      }
    } else {
      // Binary search for the first event after fromRv.
      let lo = this.eventsStart;
      let hi = this.events.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (this.events[mid]!.rv <= fromRv) lo = mid + 1;
        else hi = mid;
      }
      for (let i = lo; i < this.events.length; i++) {
        const ev = this.events[i]!;
        if (ev.key.startsWith(keyPrefix)) this.deliver(w, ev);
      }
    }
  }

  removeWatcher(w: CacheWatcher, reason?: 'relist' | 'shutdown'): void {
    if (!this.watchers.delete(w)) return;
    if (w.filter.indexed) {
      const byValue = this.indexedWatchers.get(w.filter.indexed.field);
      const set = byValue?.get(w.filter.indexed.value);
      set?.delete(w);
      if (set && set.size === 0) byValue!.delete(w.filter.indexed.value);
    }
    if (reason) w.end(reason);
  }

  /** Whether the watch filter has an index the cache can use. */
  isIndexed(field: string): boolean {
    return field in this.indexedFields;
  }
}

/** How an event looks to a filtered watcher: objects entering or leaving the filter become ADDED/DELETED. */
function retype(ev: CacheEvent, filter: WatchFilter): CacheEventType | undefined {
  switch (ev.type) {
    case 'ADDED':
      return filter.matches(ev.object) ? 'ADDED' : undefined;
    case 'DELETED':
      return filter.matches(ev.prev ?? ev.object) ? 'DELETED' : undefined;
    case 'MODIFIED': {
      const now = filter.matches(ev.object);
      const before = ev.prev ? filter.matches(ev.prev) : false;
      if (now && before) return 'MODIFIED';
      if (now) return 'ADDED';
      if (before) return 'DELETED';
      return undefined;
    }
  }
}

/** A filter that lets everything through. */
export const alwaysMatch: WatchFilter = { matches: () => true };
