// Test harness for the node-facing controllers: a real in-process API server, controllers started
// by hand on a chosen clock, and simulated nodes (Node + Lease) the test heartbeats itself.
import type { Node, NodeCondition, Taint } from '../../src/api/kinds/node.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { KubeList, KubeObject } from '../../src/api/types.js';
import type { ApiServerOptions } from '../../src/apiserver/server.js';
import type { ApiClient } from '../../src/client/rest.js';
import { EventRecorder } from '../../src/controller-kit/events.js';
import { SharedInformers } from '../../src/controller-kit/informers.js';
import { DEFAULT_CONTROLLER_OPTIONS, type Controller, type ControllerContext, type ControllerOptions } from '../../src/controller-kit/manager.js';
import { FakeClock, type Clock } from '../../src/util/clock.js';
import { silentLogger, type Logger } from '../../src/util/log.js';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';
import { eventually } from '../support/eventually.js';

export interface Harness {
  srv: InProcessServer;
  client: ApiClient;
  clock: Clock;
  ctx: ControllerContext;
  /** Starts controllers (and the informers they registered) under one abort signal. */
  start(...controllers: Controller[]): AbortController;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  clock?: Clock;
  options?: Partial<ControllerOptions>;
  /** The API server's own settings (e.g. default toleration seconds). */
  server?: Partial<ApiServerOptions>;
  /** Replaces the shared informers (e.g. to make a cache lag behind the API on purpose). */
  informers?: (client: ApiClient, clock: Clock, log: Logger) => SharedInformers;
  /** Informers read the server's caches directly, as in `skiff server` (default: over HTTP). */
  localReads?: boolean;
}

export async function harness(opts: HarnessOptions = {}): Promise<Harness> {
  const srv = await startInProcessServer(opts.server);
  const client = srv.client();
  const clock = opts.clock ?? new FakeClock(Date.now());
  const log = silentLogger();
  const running: AbortController[] = [];
  const makeCtx = (): ControllerContext => ({
    client,
    informers: opts.informers ? opts.informers(client, clock, log) : new SharedInformers(opts.localReads ? srv.api.localReads : client, clock, log),
    clock,
    log,
    options: { ...DEFAULT_CONTROLLER_OPTIONS, ...opts.options },
    recorder: (component) => new EventRecorder(client, { component }, clock, log),
  });
  const h: Harness = {
    srv,
    client,
    clock,
    ctx: makeCtx(),
    start(...controllers) {
      // Each start is a fresh "leadership term": new informers, new controller state.
      const ctx = makeCtx();
      h.ctx = ctx;
      const stop = new AbortController();
      running.push(stop);
      for (const c of controllers) c.start(ctx, stop.signal);
      ctx.informers.start(stop.signal);
      return stop;
    },
    async stop() {
      for (const r of running) r.abort();
      await srv.stop();
    },
  };
  return h;
}

/** A MicroTime; `micros` (0-999) tells apart renewals within the same millisecond. */
export function micro(ms: number, micros = 0): string {
  return new Date(ms).toISOString().replace('Z', `${String(micros).padStart(3, '0')}Z`);
}

export function rfc(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** A Node that posted Ready=status, and its Lease, both stamped with the given clock. */
export async function addNode(client: ApiClient, clock: Clock, name: string, o: { labels?: Record<string, string>; ready?: 'True' | 'False'; taints?: Taint[]; leaseRenewMs?: number } = {}): Promise<Node> {
  const now = clock.now();
  const node = await client.create<Node>('/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...o.labels } },
    spec: o.taints ? { taints: o.taints } : {},
    status: { conditions: [readyCondition(o.ready ?? 'True', now)] },
  });
  await client.create('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: node.metadata.uid! }] },
    spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: micro(o.leaseRenewMs ?? now) },
  });
  return node;
}

export function readyCondition(status: 'True' | 'False', now: number): NodeCondition {
  return { type: 'Ready', status, reason: status === 'True' ? 'KubeletReady' : 'KubeletNotReady', message: 'test', lastHeartbeatTime: rfc(now), lastTransitionTime: rfc(now) };
}

let renewals = 0;
export async function renewLease(client: ApiClient, clock: Clock, name: string): Promise<void> {
  // Distinct renewTimes even when the fake clock has not moved.
  await client.patch(`/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`, { spec: { renewTime: micro(clock.now(), ++renewals % 1000) } }, 'merge');
}

/** What an agent does when it (re)posts status: Ready with a fresh heartbeat. */
export async function postReady(client: ApiClient, clock: Clock, name: string, status: 'True' | 'False'): Promise<void> {
  const now = clock.now();
  const node = await client.get<Node>(`/api/v1/nodes/${name}`);
  const old = node.status?.conditions?.find((c) => c.type === 'Ready');
  const c = readyCondition(status, now);
  // Heartbeats must differ from the last one seen even within a fake-clock second.
  c.lastHeartbeatTime = new Date(now + (++renewals % 1000)).toISOString();
  if (old && old.status === status) c.lastTransitionTime = old.lastTransitionTime!;
  await client.patch(`/api/v1/nodes/${name}/status`, { status: { conditions: [c] } }, 'strategic');
}

export async function addPod(client: ApiClient, ns: string, name: string, spec: Partial<Pod['spec']> & { nodeName?: string }, meta: Partial<KubeObject['metadata']> = {}): Promise<Pod> {
  return client.create<Pod>(`/api/v1/namespaces/${ns}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, ...meta },
    spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec },
  });
}

export async function getNode(client: ApiClient, name: string): Promise<Node | undefined> {
  try {
    return await client.get<Node>(`/api/v1/nodes/${name}`);
  } catch {
    return undefined;
  }
}

export async function getPod(client: ApiClient, ns: string, name: string): Promise<Pod | undefined> {
  try {
    return await client.get<Pod>(`/api/v1/namespaces/${ns}/pods/${name}`);
  } catch {
    return undefined;
  }
}

export function readyOf(n: Node | undefined): NodeCondition | undefined {
  return n?.status?.conditions?.find((c) => c.type === 'Ready');
}

export function taintKeys(n: Node | undefined): string[] {
  return (n?.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort();
}

export async function events(client: ApiClient, reason: string): Promise<KubeObject[]> {
  // From the watch cache (resourceVersion=0): a consistent list of a quiet resource can wait
  // seconds for the cache to reach the store's newest revision; callers poll anyway.
  const list = await client.get<KubeList>('/api/v1/events', { query: { resourceVersion: '0' } });
  return list.items.filter((e) => e.reason === reason);
}

/** Polls (real time, bounded) until fn holds. */
export function until<T>(fn: () => Promise<T | undefined | false> | T | undefined | false, what: string, timeoutMs = 10_000): Promise<T> {
  return eventually(fn, timeoutMs, what, 25);
}

/**
 * Moves a fake clock forward in steps, running `each` (heartbeats) before every step and giving
 * the controllers' real HTTP round-trips a moment, until `done` holds or `maxFakeMs` passed.
 * Returns the fake time that elapsed.
 */
export async function advanceUntil(
  clock: FakeClock,
  done: () => Promise<boolean> | boolean,
  o: { stepMs: number; maxFakeMs: number; each?: () => Promise<void>; what: string; realTimeoutMs?: number },
): Promise<number> {
  const start = clock.now();
  const realDeadline = Date.now() + (o.realTimeoutMs ?? 20_000);
  for (;;) {
    await o.each?.();
    // Let watches deliver what was just written before the controllers look.
    await new Promise((r) => setTimeout(r, 30));
    if (await done()) return clock.now() - start;
    if (clock.now() - start >= o.maxFakeMs || Date.now() > realDeadline) throw new Error(`not reached within ${o.maxFakeMs} ms (fake): ${o.what}`);
    await clock.advance(o.stepMs);
  }
}

/** Moves a fake clock forward by totalMs in steps, with heartbeats and I/O pauses as advanceUntil. */
export async function advanceFor(clock: FakeClock, totalMs: number, stepMs: number, each?: () => Promise<void>): Promise<void> {
  const end = clock.now() + totalMs;
  while (clock.now() < end) {
    await each?.();
    await new Promise((r) => setTimeout(r, 30));
    await clock.advance(Math.min(stepMs, end - clock.now()));
  }
}
