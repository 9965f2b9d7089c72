// A watch as newline-delimited JSON over one chunked response, fed by the watch cache.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResourceType } from '../../api/resource.js';
import type { KubeObject } from '../../api/types.js';
import { tooOldResourceVersion, timeout as timeoutError, type StatusError } from '../../api/errors.js';
import { apiVersionOf } from '../../api/types.js';
import {
  ExpiredError,
  TooLargeResourceVersionError,
  type CacheEvent,
  type CacheEventType,
  type CacheWatcher,
  type WatchCache,
  type WatchFilter,
} from '../watch-cache.js';
import { shapeObject, type IncludeObject, type ResponseShape } from './negotiate.js';

/** A watcher that falls this far behind is cut off; the client resumes from its last RV. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

/** What a watch request asks for, whatever carries it (HTTP, or the server's own controllers). */
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

export interface WatchRequest extends WatchTerms {
  rt: ResourceType;
  cache: WatchCache;
  shape: ResponseShape;
  include?: IncludeObject;
  now: () => number;
  onEnd?: () => void;
}

/** One chunk of a chunked HTTP/1.1 body: size in hex, CRLF, the data, CRLF. */
export function httpChunk(data: string): Buffer {
  const len = Buffer.byteLength(data);
  const head = `${len.toString(16)}\r\n`;
  const buf = Buffer.allocUnsafe(head.length + len + 2);
  buf.write(head, 0, 'latin1');
  buf.write(data, head.length, 'utf8');
  buf.write('\r\n', head.length + len, 'latin1');
  return buf;
}

/** A BOOKMARK event's object: only the kind and the revision the watcher has seen up to. */
export function bookmarkObject(rt: ResourceType, rv: number, annotations?: Record<string, string>): KubeObject {
  const metadata: KubeObject['metadata'] = { resourceVersion: String(rv) };
  if (annotations) metadata.annotations = annotations;
  return { kind: rt.kind, apiVersion: apiVersionOf(rt.group, rt.version), metadata };
}

export function serveWatch(req: IncomingMessage, res: ServerResponse, w: WatchRequest): void {
  // The client may have gone while the handler waited for the cache; its close events already fired.
  if (req.destroyed || res.destroyed) return;
  // No explicit Transfer-Encoding: Node frames HTTP/1.1 bodies as chunks itself, and knows that a
  // HEAD response has no body and that an HTTP/1.0 client cannot take chunks.
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  // Node holds headers until the first body write; kubectl waits for them.
  res.flushHeaders();
  let finished = false;
  // The opening burst (current state or replayed window) is written in one go and may be large;
  // the slow-consumer cap applies to live events after it.
  let live = false;
  let lastRv = w.fromRv ?? 0;
  const timers: NodeJS.Timeout[] = [];

  // Events go straight to the socket as ready-made chunks (size line, data, CRLF): a shared event
  // is framed once for every watcher, and each delivery is one socket write instead of
  // ServerResponse's four buffers, cork and uncork. ServerResponse still ends the stream (0-chunk).
  // A response without chunks (HEAD, an HTTP/1.0 client) or one queued behind a pipelined
  // request (no socket yet) is served through ServerResponse.
  const socket = res.chunkedEncoding ? res.socket : null;
  const out = (data: string): Buffer | string => (socket ? httpChunk(data) : data);
  const write = (chunk: Buffer | string): void => {
    if (finished) return;
    if (socket) socket.write(chunk);
    else res.write(chunk);
    if (live && (socket ?? res).writableLength > MAX_BUFFERED_BYTES) {
      // A consumer this far behind may never drain: drop the connection instead of waiting on it.
      res.destroy();
      finish();
    }
  };

  const line = (type: string, ev: CacheEvent): Buffer | string => {
    if (w.shape === 'object') {
      // Most watchers see the event as it happened: encode it once and share the bytes among them.
      if (type === ev.type && socket) return (ev.frame ??= httpChunk(`{"type":"${type}","object":${(ev.json ??= JSON.stringify(ev.object))}}\n`));
      ev.json ??= JSON.stringify(ev.object);
      return out(`{"type":"${type}","object":${ev.json}}\n`);
    }
    return out(`${JSON.stringify({ type, object: shapeObject(w.rt, ev.object, w.shape, w.now(), w.include) })}\n`);
  };

  const bookmark = (extra?: Record<string, string>): void => {
    write(out(`${JSON.stringify({ type: 'BOOKMARK', object: bookmarkObject(w.rt, Math.max(lastRv, w.cache.revision), extra) })}\n`));
  };

  const watcher: CacheWatcher = {
    filter: w.filter,
    send(type: CacheEventType, ev: CacheEvent) {
      if (ev.rv > lastRv) lastRv = ev.rv;
      write(line(type, ev));
    },
    end() {
      finish();
    },
  };

  function finish(): void {
    if (finished) return;
    finished = true;
    for (const t of timers) clearTimeout(t);
    w.cache.removeWatcher(watcher);
    res.end();
    w.onEnd?.();
  }

  const sendError = (err: StatusError): void => {
    write(out(`${JSON.stringify({ type: 'ERROR', object: err.status })}\n`));
    // client-node relists only once the stream ends after the ERROR.
    finish();
  };

  req.on('close', finish);
  res.on('close', finish);

  try {
    w.cache.watch(watcher, w.fromRv, w.keyPrefix);
  } catch (e) {
    if (e instanceof ExpiredError) return sendError(tooOldResourceVersion(e.requested, e.oldest));
    if (e instanceof TooLargeResourceVersionError) return sendError(timeoutError(e.message));
    throw e;
  }
  live = true;
  if (w.sendInitialEventsEnd) bookmark({ 'k8s.io/initial-events-end': 'true' });
  timers.push(setTimeout(() => {
    if (w.bookmarks) bookmark();
    finish();
  }, w.timeoutMs));
  if (w.bookmarks) {
    const tick = (): void => {
      if (finished) return;
      bookmark();
      timers.push(setTimeout(tick, w.bookmarkIntervalMs));
    };
    timers.push(setTimeout(tick, w.bookmarkIntervalMs));
  }
}
