// One watch on a watch cache, whatever carries its events (an HTTP stream, or the server's own
// controllers): registration with its 410 and "too large" answers, the initial-events-end
// bookmark, periodic bookmarks and the timeout that ends it.
import type { ResourceType } from '../api/resource.js';
import type { KubeObject } from '../api/types.js';
import { apiVersionOf } from '../api/types.js';
import { timeout as timeoutError, tooOldResourceVersion } from '../api/errors.js';
import {
  ExpiredError,
  TooLargeResourceVersionError,
  type CacheEvent,
  type CacheEventType,
  type CacheWatcher,
  type WatchCache,
  type WatchFilter,
} from './watch-cache.js';

/** What a watch request asks for. */
export interface WatchTerms {
  filter: WatchFilter;
  keyPrefix: string;
  /** undefined: start with the current state (rv unset or 0). */
  fromRv: number | undefined;
  timeoutMs: number;
  bookmarks: boolean;
  bookmarkIntervalMs: number;
  sendInitialEventsEnd: boolean;
}

/** Where a watch's events go. */
export interface WatchSink {
  /** An event the filter let through, already re-typed for this watcher. */
  event(type: CacheEventType, ev: CacheEvent): void;
  bookmark(object: KubeObject): void;
  /** The watch is over: timed out, cut off by the cache, or stopped. Called once. */
  end(): void;
}

/** A BOOKMARK event's object: only the kind and the revision the watcher has seen up to. */
export function bookmarkObject(rt: ResourceType, rv: number, annotations?: Record<string, string>): KubeObject {
  const metadata: KubeObject['metadata'] = { resourceVersion: String(rv) };
  if (annotations) metadata.annotations = annotations;
  return { kind: rt.kind, apiVersion: apiVersionOf(rt.group, rt.version), metadata };
}

/**
 * Starts the watch; its opening events (current state or replayed window) reach the sink before
 * this returns. Throws a StatusError when it cannot start (410 Expired, 504 Timeout). Returns
 * stop(), which ends it (idempotent).
 */
export function startWatch(rt: ResourceType, cache: WatchCache, terms: WatchTerms, sink: WatchSink): () => void {
  let finished = false;
  let lastRv = terms.fromRv ?? 0;
  const timers: NodeJS.Timeout[] = [];
  const bookmark = (annotations?: Record<string, string>): void => sink.bookmark(bookmarkObject(rt, Math.max(lastRv, cache.revision), annotations));
  const stop = (): void => {
    if (finished) return;
    finished = true;
    for (const t of timers) clearTimeout(t);
    cache.removeWatcher(watcher);
    sink.end();
  };
  const watcher: CacheWatcher = {
    filter: terms.filter,
    send(type, ev) {
      if (ev.rv > lastRv) lastRv = ev.rv;
      sink.event(type, ev);
    },
    end: stop,
  };
  try {
    cache.watch(watcher, terms.fromRv, terms.keyPrefix);
  } catch (e) {
    if (e instanceof ExpiredError) throw tooOldResourceVersion(e.requested, e.oldest);
    if (e instanceof TooLargeResourceVersionError) throw timeoutError(e.message);
    throw e;
  }
  if (finished) return stop;
  if (terms.sendInitialEventsEnd) bookmark({ 'k8s.io/initial-events-end': 'true' });
  timers.push(
    setTimeout(() => {
      if (terms.bookmarks) bookmark();
      stop();
    }, terms.timeoutMs),
  );
  if (terms.bookmarks) {
    const tick = (): void => {
      if (finished) return;
      bookmark();
      timers.push(setTimeout(tick, terms.bookmarkIntervalMs));
    };
    timers.push(setTimeout(tick, terms.bookmarkIntervalMs));
  }
  return stop;
}
