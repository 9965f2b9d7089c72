// Shared by the ReplicaSet, Deployment and DaemonSet controller tests: a real in-process API
// server, controllers started the way the manager starts them, and a stand-in for the kubelet
// (nothing runs pods in these tests: we mark them Running/Ready and finish their deletion).
import type { KubeList, KubeObject, WatchEvent } from '../../src/api/types.js';
import { isStatusError } from '../../src/api/errors.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import { Informer } from '../../src/client/informer.js';
import type { ApiClient } from '../../src/client/rest.js';
import { SharedInformers } from '../../src/controller-kit/informers.js';
import { type Controller, DEFAULT_CONTROLLER_OPTIONS, controllerContext } from '../../src/controller-kit/manager.js';
import { systemClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/log.js';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';

export { eventually } from '../support/cluster.js';

export interface Harness {
  srv: InProcessServer;
  client: ApiClient;
  /** A fresh namespace per test keeps tests independent on one server. */
  namespace(prefix: string): Promise<string>;
  close(): Promise<void>;
}

let seq = 0;

export async function startHarness(): Promise<Harness> {
  const srv = await startInProcessServer();
  const client = srv.client();
  return {
    srv,
    client,
    async namespace(prefix) {
      const name = `${prefix}-${++seq}-${Math.floor(Math.random() * 1e6).toString(36)}`;
      await client.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      return name;
    },
    close: () => srv.stop(),
  };
}

export interface RunningControllers {
  informers: SharedInformers;
  stop(): void;
}

/** Starts controllers as the manager does for one leadership term; stop() ends the term. */
export function startControllers(client: ApiClient, controllers: Controller[]): RunningControllers {
  const ac = new AbortController();
  const log = silentLogger();
  const ctx = controllerContext(client, systemClock, log, DEFAULT_CONTROLLER_OPTIONS);
  for (const c of controllers) c.start(ctx, ac.signal);
  ctx.informers.start(ac.signal);
  return { informers: ctx.informers, stop: () => ac.abort() };
}

export function nsPath(ns: string, resource: string, name?: string, group = 'apps/v1'): string {
  const prefix = group === 'v1' ? '/api/v1' : `/apis/${group}`;
  return `${prefix}/namespaces/${ns}/${resource}${name ? `/${name}` : ''}`;
}

export async function list<T extends KubeObject>(client: ApiClient, path: string, labelSelector?: string): Promise<T[]> {
  const l = await client.get<KubeList<T>>(path, labelSelector ? { query: { labelSelector } } : {});
  return l.items;
}

export async function pods(client: ApiClient, ns: string, labelSelector?: string): Promise<Pod[]> {
  return list<Pod>(client, nsPath(ns, 'pods', undefined, 'v1'), labelSelector);
}

export function isReady(p: Pod): boolean {
  return (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** What a kubelet reports for a started, healthy pod. */
export async function markReady(client: ApiClient, pod: Pod): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const cond = (type: string) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: now });
  try {
    await client.patch(
      `${nsPath(pod.metadata.namespace!, 'pods', pod.metadata.name!, 'v1')}/status`,
      { status: { phase: 'Running', startTime: now, conditions: [cond('Initialized'), cond('Ready'), cond('ContainersReady'), cond('PodScheduled')] } },
      'merge',
    );
  } catch (e) {
    if (!isStatusError(e, 'NotFound')) throw e;
  }
}

export async function forceDelete(client: ApiClient, pod: Pod): Promise<void> {
  try {
    await client.delete(nsPath(pod.metadata.namespace!, 'pods', pod.metadata.name!, 'v1'), { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 });
  } catch (e) {
    if (!isStatusError(e, 'NotFound')) throw e;
  }
}

export interface KubeletOptions {
  /** Which pods become Ready by themselves (default: all). */
  ready?: (pod: Pod) => boolean;
  /** Finish graceful deletions at once, as a kubelet does once containers stop (default: true). */
  finishDeletes?: boolean;
}

/** A watch on one namespace's pods that plays every node's kubelet. */
export function simulateKubelet(client: ApiClient, ns: string, opts: KubeletOptions = {}): { stop(): void; informer: Informer<Pod> } {
  const ac = new AbortController();
  const informer = new Informer<Pod>(client, { path: nsPath(ns, 'pods', undefined, 'v1'), log: silentLogger() });
  const busy = new Set<string>();
  const act = (pod: Pod) => {
    const key = `${pod.metadata.name}/${pod.metadata.uid}`;
    if (busy.has(key) || ac.signal.aborted) return;
    let work: Promise<void> | undefined;
    if (pod.metadata.deletionTimestamp) {
      if (opts.finishDeletes !== false) work = forceDelete(client, pod);
    } else if (!isReady(pod) && (opts.ready ?? (() => true))(pod)) {
      work = markReady(client, pod);
    }
    if (!work) return;
    busy.add(key);
    void work.catch(() => {}).finally(() => busy.delete(key));
  };
  informer.addHandlers({ add: act, update: (_o, n) => act(n) });
  void informer.run(ac.signal);
  return { informer, stop: () => ac.abort() };
}

/** A namespace-scoped informer for assertions that must hold at every observed step. */
export function watchAll<T extends KubeObject>(client: ApiClient, path: string, onChange: (all: T[]) => void): { stop(): void; informer: Informer<T> } {
  const ac = new AbortController();
  const informer = new Informer<T>(client, { path, log: silentLogger() });
  // The initial list arrives one add at a time: judge only whole states.
  const fire = () => informer.hasSynced() && onChange(informer.list());
  informer.addHandlers({ add: fire, update: fire, delete: fire });
  void informer.run(ac.signal);
  void informer.waitForSync().then(fire);
  return { informer, stop: () => ac.abort() };
}

export async function events(client: ApiClient, ns: string, name?: string): Promise<{ reason: string; message: string; involvedObject: { name: string; kind: string } }[]> {
  const l = await list<KubeObject & { reason: string; message: string; involvedObject: { name: string; kind: string } }>(client, nsPath(ns, 'events', undefined, 'v1'));
  return l.filter((e) => !name || e.involvedObject.name === name);
}

export const CONTAINERS = (image: string) => [{ name: 'app', image }];

/**
 * The same client, but watch events on paths containing `pathPart` reach the caller `lagMs`
 * late (order kept): a controller then acts while its cache is behind its own writes, which is
 * what expectations exist for.
 */
export function laggingWatches(client: ApiClient, pathPart: string, lagMs: number): ApiClient {
  async function* lagging<T>(path: string, query: Parameters<ApiClient['watch']>[1], signal: AbortSignal): AsyncGenerator<WatchEvent<T>> {
    const source = client.watch<T>(path, query, signal);
    if (!path.includes(pathPart)) return yield* source;
    const queue: { ev: WatchEvent<T>; at: number }[] = [];
    let done = false;
    let failure: unknown;
    let wake: (() => void) | undefined;
    void (async () => {
      try {
        for await (const ev of source) {
          queue.push({ ev, at: Date.now() + lagMs });
          wake?.();
        }
      } catch (e) {
        failure = e;
      } finally {
        done = true;
        wake?.();
      }
    })();
    for (;;) {
      const next = queue.shift();
      if (next) {
        const wait = next.at - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        yield next.ev;
        continue;
      }
      if (done) {
        if (failure) throw failure;
        return;
      }
      await new Promise<void>((r) => (wake = r));
      wake = undefined;
    }
  }
  return new Proxy(client, {
    get(target, prop) {
      if (prop === 'watch') return lagging;
      const v: unknown = Reflect.get(target, prop);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
