// A watch as newline-delimited JSON over one chunked response, fed by the watch cache.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResourceType } from '../../api/resource.js';
import { StatusError, internalError } from '../../api/errors.js';
import type { KubeObject } from '../../api/types.js';
import type { CacheEvent, WatchCache } from '../watch-cache.js';
import { startWatch, type WatchTerms } from '../watch-session.js';
import { clientGone } from './listener.js';
import { objectJson } from '../stored-json.js';
import { shapeObject, type IncludeObject, type ResponseShape } from './negotiate.js';

/** A watcher that falls this far behind is cut off; the client resumes from its last RV. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

export interface WatchRequest extends WatchTerms {
  rt: ResourceType;
  cache: WatchCache;
  shape: ResponseShape;
  include?: IncludeObject;
  now: () => number;
  onEnd?: () => void;
  /**
   * Makes each event's object the one the watcher asked for (a custom resource converted through its
   * webhook). Events then go out in order as their conversions finish; a failed conversion ends the
   * watch with an ERROR event carrying the Status.
   */
  convert?: (obj: KubeObject) => Promise<KubeObject>;
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

export function serveWatch(req: IncomingMessage, res: ServerResponse, w: WatchRequest): void {
  // The client may have gone while the handler waited for the cache; its close events already fired.
  if (clientGone(req, res)) return;
  // No explicit Transfer-Encoding: Node frames HTTP/1.1 bodies as chunks itself, and knows that a
  // HEAD response has no body and that an HTTP/1.0 client cannot take chunks.
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  // Node holds headers until the first body write; kubectl waits for them.
  res.flushHeaders();
  let ended = false;
  // The opening burst (current state or replayed window) is written in one go and may be large;
  // the slow-consumer cap applies to live events after it.
  let live = false;
  let stopWatch = (): void => {};

  // Events go straight to the socket as ready-made chunks (size line, data, CRLF): a shared event
  // is framed once for every watcher, and each delivery is one socket write instead of
  // ServerResponse's four buffers, cork and uncork. ServerResponse still ends the stream (0-chunk).
  // A response without chunks (HEAD, an HTTP/1.0 client) or one queued behind a pipelined
  // request (no socket yet) is served through ServerResponse.
  const socket = res.chunkedEncoding ? res.socket : null;
  const out = (data: string): Buffer | string => (socket ? httpChunk(data) : data);
  const write = (chunk: Buffer | string): void => {
    if (ended) return;
    if (socket) socket.write(chunk);
    else res.write(chunk);
    if (live && (socket ?? res).writableLength > MAX_BUFFERED_BYTES) {
      // A consumer this far behind may never drain: drop the connection instead of waiting on it.
      res.destroy();
      stopWatch();
    }
  };
  const endResponse = (): void => {
    if (ended) return;
    ended = true;
    res.end();
    w.onEnd?.();
  };

  const line = (type: string, ev: CacheEvent): Buffer | string => {
    if (w.shape === 'object') {
      // Most watchers see the event as it happened: encode it once and share the bytes among them.
      if (type === ev.type && socket) return (ev.frame ??= httpChunk(`{"type":"${type}","object":${(ev.json ??= objectJson(ev.object))}}\n`));
      ev.json ??= objectJson(ev.object);
      return out(`{"type":"${type}","object":${ev.json}}\n`);
    }
    return out(`${JSON.stringify({ type, object: shapeObject(w.rt, ev.object, w.shape, w.now(), w.include) })}\n`);
  };

  const bookmarkLine = (object: KubeObject): Buffer | string => out(`${JSON.stringify({ type: 'BOOKMARK', object })}\n`);
  let sink: Parameters<typeof startWatch>[3] = { event: (type, ev) => write(line(type, ev)), bookmark: (object) => write(bookmarkLine(object)), end: endResponse };
  const convert = w.convert;
  if (convert) {
    // Conversions finish in any order; a chain keeps the events, bookmarks and the end in theirs.
    let chain: Promise<void> = Promise.resolve();
    const ordered = (step: () => Promise<void> | void): void => {
      chain = chain.then(step).catch((e: unknown) => {
        if (ended) return;
        const status = e instanceof StatusError ? e.status : internalError(e instanceof Error ? e.message : String(e)).status;
        write(out(`${JSON.stringify({ type: 'ERROR', object: status })}\n`));
        stopWatch();
        endResponse();
      });
    };
    sink = {
      event: (type, ev) =>
        ordered(async () => {
          const object = await convert(ev.object);
          if (!ended) write(out(`${JSON.stringify({ type, object: w.shape === 'object' ? object : shapeObject(w.rt, object, w.shape, w.now(), w.include) })}\n`));
        }),
      bookmark: (object) => ordered(() => write(bookmarkLine(object))),
      end: () => ordered(endResponse),
    };
  }
  try {
    stopWatch = startWatch(w.rt, w.cache, w, sink);
  } catch (e) {
    if (!(e instanceof StatusError)) throw e;
    write(out(`${JSON.stringify({ type: 'ERROR', object: e.status })}\n`));
    // client-node relists only once the stream ends after the ERROR.
    return endResponse();
  }
  live = true;
  req.on('close', stopWatch);
  res.on('close', stopWatch);
}
