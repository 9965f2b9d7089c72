// Lists and watches for the server's own controllers, answered from this server's watch caches
// without the HTTP round trip. Over loopback HTTPS every write cost each event an encode, a TLS
// record each way and a parse of the chunked stream: a quarter of a create's CPU when the garbage
// collector watches every kind. Writes still go over HTTP, through authorization and admission.
// Controllers get their own copies of every object, as they would from the wire: the caches'
// objects are shared and must never be changed in place. Readers that promise only to read
// (ReadOptions.readOnly) get the cache's own objects (see shared-object.ts).
import { objectJson } from './stored-json.js';
import type { KubeList, KubeObject, WatchEvent } from '../api/types.js';
import { notFoundPath } from '../api/errors.js';
import type { ResourceType } from '../api/resource.js';
import type { ListWatchSource, ReadOptions } from '../client/informer.js';
import { parseRequestInfo, type ResourceRequest } from './http/request-info.js';
import { shapeList } from './http/negotiate.js';
import type { ObjectStore } from './object-store.js';
import type { ResourceHandler } from './resource-handler.js';
import { startWatch } from './watch-session.js';
import { shared } from './shared-object.js';

export interface LocalReadsDeps {
  handler: ResourceHandler;
  typeFor(group: string, version: string, resource: string): ResourceType | undefined;
  storeFor(rt: ResourceType): ObjectStore;
}

interface Collection {
  rt: ResourceType;
  store: ObjectStore;
  info: ResourceRequest;
}

function copyOf<T>(v: unknown): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

export class LocalReads implements ListWatchSource {
  readonly sharesObjects = true;

  constructor(private readonly deps: LocalReadsDeps) {}

  async list<T extends KubeObject>(path: string, query: Record<string, string>, _signal?: AbortSignal, opts: ReadOptions = {}): Promise<KubeList<T>> {
    const { rt, store, info } = this.collection(path);
    const list = await store.list(info.namespace, this.deps.handler.listOptions(rt, info, new URLSearchParams(query)));
    // Shaped as over HTTP: items of a typed list carry no kind or apiVersion (each item a new
    // object, its fields still the cache's).
    const shaped = shapeList(rt, list, 'object', Date.now()) as KubeList<T>;
    if (!opts.readOnly) return copyOf<KubeList<T>>(shaped);
    for (const item of shaped.items) shared(item);
    return shaped;
  }

  async *watch<T extends KubeObject>(path: string, query: Record<string, string>, signal: AbortSignal, opts: ReadOptions = {}): AsyncGenerator<WatchEvent<T>> {
    const readOnly = opts.readOnly ?? false;
    const { rt, store, info } = this.collection(path);
    const terms = await this.deps.handler.watchTerms(rt, store, info, new URLSearchParams(query));
    let queue: WatchEvent<T>[] = [];
    let ended = false;
    let wake: (() => void) | undefined;
    const notify = (): void => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    const push = (ev: WatchEvent<T>): void => {
      queue.push(ev);
      notify();
    };
    const stop = startWatch(rt, store.cache, terms, {
      // Read-only readers get the cache's object; others the same JSON HTTP watchers are sent
      // (encoded once per event for all of them), decoded into their own copy.
      event: (type, ev) => push({ type, object: (readOnly ? shared(ev.object) : JSON.parse((ev.json ??= objectJson(ev.object)))) as T }),
      bookmark: (object) => push({ type: 'BOOKMARK', object: object as T }),
      end: () => {
        ended = true;
        notify();
      },
    });
    signal.addEventListener('abort', stop, { once: true });
    try {
      for (;;) {
        if (queue.length > 0) {
          const batch = queue;
          queue = [];
          for (const ev of batch) {
            if (signal.aborted) return;
            yield ev;
          }
          continue;
        }
        if (ended || signal.aborted) return;
        await new Promise<void>((r) => (wake = r));
      }
    } finally {
      signal.removeEventListener('abort', stop);
      stop();
    }
  }

  /** The collection a path names; anything else is a 404, as over HTTP. */
  private collection(path: string): Collection {
    const info = parseRequestInfo('GET', path, new URLSearchParams(), (g, v, r) => this.deps.typeFor(g, v, r)?.namespaced ?? false);
    const rt = info.kind === 'resource' && info.name === undefined && !info.subresource ? this.deps.typeFor(info.group, info.version, info.resource) : undefined;
    if (!rt || info.kind !== 'resource') throw notFoundPath();
    return { rt, store: this.deps.storeFor(rt), info };
  }
}
