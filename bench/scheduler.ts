// Scheduler throughput: binds M pending pods onto N simulated nodes (Node objects only, nothing
// runs) and reports pods bound per second. The API server (SQLite store) runs in this process,
// as the scheduler does inside `skiff server`, so the figure includes the server's share of the
// work on the same event loop: bindings, the watch feeding the scheduler's informer, and the
// Scheduled events. Peer figure: upstream's scalability CI requires >= 90 pods/s at 5,000 nodes
// (kubernetes#74041 reached 100 pods/s); skiff's target is >= 300 pods/s at 1,000 nodes.
//
//   node .build/sched/bench/scheduler.js [nodes=1000] [pods=10000]
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import type { Node } from '../src/api/kinds/node.js';
import type { Pod } from '../src/api/kinds/pod.js';
import type { KubeList } from '../src/api/types.js';
import type { ApiClient } from '../src/client/rest.js';
import { DEFAULT_CONTROLLER_OPTIONS, controllerContext } from '../src/controller-kit/manager.js';
import { SchedulerController, type SchedulerOptions } from '../src/scheduler/scheduler.js';
import { systemClock } from '../src/util/clock.js';
import { silentLogger } from '../src/util/log.js';
import { startInProcessServer } from '../test/support/in-process.js';
import { CpuMeter } from './lib/util.js';

export interface SchedulerBenchOptions {
  nodes: number;
  pods: number;
  /** Requests in flight while creating nodes and pods. Default 64. */
  createConcurrency?: number;
  /** ReplicaSets the pods are spread over (each pod owned by one). Default 100. */
  owners?: number;
  scheduler?: Partial<SchedulerOptions>;
  /** Progress lines go here (default: none). */
  progress?: (msg: string) => void;
}

export interface SchedulerBenchResult {
  nodes: number;
  pods: number;
  podsPerSec: number;
  /** From starting the scheduler (cold caches) to the last successful binding. */
  seconds: number;
  /** Of which: until the scheduler's informers had listed nodes and pods. */
  syncSeconds: number;
  /** Binding throughput after the caches were synced. */
  podsPerSecAfterSync: number;
  setupSeconds: number;
  attempts: number;
  bindErrors: number;
  unschedulableAttempts: number;
  /** Pods still unbound afterwards, as the API reports them (should be 0). */
  unboundAfter: number;
  /** Fewest and most pods any node received. */
  podsPerNode: { min: number; max: number };
  /** CPU of this process (all threads) over the scheduling window, % of one core. */
  cpuPct: number;
  /** CPU of the whole machine over the window, % of one core (other processes skew the figure). */
  machineCpuPct?: number;
  /** The scheduling window on the monotonic clock V8 CPU profiles use (microseconds). */
  windowUs: { startUs: number; endUs: number };
}

function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

const NAMESPACE = 'bench-sched';

async function runBounded(total: number, concurrency: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < total) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
}

function benchNode(i: number): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: `sim-${String(i).padStart(5, '0')}`, labels: { 'kubernetes.io/hostname': `sim-${i}`, 'skiff.dev/simulated': 'true' } },
    spec: {},
    status: {
      capacity: { cpu: '32', memory: '128Gi', pods: '110' },
      allocatable: { cpu: '32', memory: '128Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'simulated node is ready' }],
    },
  };
}

function benchPod(i: number, owners: number): Pod {
  const owner = i % owners;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `pod-${String(i).padStart(6, '0')}`,
      namespace: NAMESPACE,
      labels: { app: `app-${owner}` },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `app-${owner}`, uid: `00000000-0000-4000-8000-${String(owner).padStart(12, '0')}`, controller: true }],
    },
    spec: { containers: [{ name: 'app', image: 'registry.example/app:1.0', resources: { requests: { cpu: '100m', memory: '128Mi' } } }] },
  };
}

async function countUnbound(client: ApiClient): Promise<number> {
  const list = await client.get<KubeList<Pod>>(`/api/v1/namespaces/${NAMESPACE}/pods`, { query: { fieldSelector: 'spec.nodeName=' } });
  return list.items.length;
}

export async function benchScheduler(opts: SchedulerBenchOptions): Promise<SchedulerBenchResult> {
  const say = opts.progress ?? (() => {});
  const concurrency = opts.createConcurrency ?? 64;
  const owners = opts.owners ?? 100;
  const srv = await startInProcessServer();
  const client = srv.client();
  const ac = new AbortController();
  try {
    const setupStart = performance.now();
    await client.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    await runBounded(opts.nodes, concurrency, (i) => client.create('/api/v1/nodes', benchNode(i)));
    say(`created ${opts.nodes} nodes`);
    await runBounded(opts.pods, concurrency, (i) => client.create(`/api/v1/namespaces/${NAMESPACE}/pods`, benchPod(i, owners)));
    const setupSeconds = (performance.now() - setupStart) / 1000;
    say(`created ${opts.pods} pending pods in ${setupSeconds.toFixed(1)} s`);

    const log = silentLogger();
    const ctx = controllerContext(client, systemClock, log, DEFAULT_CONTROLLER_OPTIONS);
    const informers = ctx.informers;
    const controller = new SchedulerController(opts.scheduler ?? {});
    const cpu0 = process.cpuUsage();
    const machine = new CpuMeter();
    const startUs = monotonicUs();
    const t0 = performance.now();
    controller.start(ctx, ac.signal);
    informers.start(ac.signal);
    await informers.waitForSync();
    const tSync = performance.now();
    let lastReport = tSync;
    while (controller.counters.scheduled < opts.pods) {
      await new Promise((r) => setTimeout(r, 10));
      if (performance.now() - lastReport > 2000) {
        lastReport = performance.now();
        say(`${controller.counters.scheduled} bound`);
      }
      if (performance.now() - t0 > 600_000) throw new Error(`only ${controller.counters.scheduled}/${opts.pods} pods bound after 10 min`);
    }
    const t1 = performance.now();
    const endUs = monotonicUs();
    const cpu = process.cpuUsage(cpu0);
    const machinePct = machine.read().machinePct;
    ac.abort();
    const seconds = (t1 - t0) / 1000;
    const unboundAfter = await countUnbound(client);
    const perNode = new Map<string, number>();
    const all = await client.get<KubeList<Pod>>(`/api/v1/namespaces/${NAMESPACE}/pods`);
    for (const p of all.items) if (p.spec?.nodeName) perNode.set(p.spec.nodeName, (perNode.get(p.spec.nodeName) ?? 0) + 1);
    const counts = Array.from({ length: opts.nodes }, (_, i) => perNode.get(benchNode(i).metadata.name!) ?? 0);
    return {
      nodes: opts.nodes,
      pods: opts.pods,
      podsPerSec: Math.round(opts.pods / seconds),
      seconds: Math.round(seconds * 100) / 100,
      syncSeconds: Math.round(((tSync - t0) / 1000) * 100) / 100,
      podsPerSecAfterSync: Math.round(opts.pods / ((t1 - tSync) / 1000)),
      setupSeconds: Math.round(setupSeconds * 10) / 10,
      attempts: controller.counters.attempts,
      bindErrors: controller.counters.bindErrors,
      unschedulableAttempts: controller.counters.unschedulable,
      unboundAfter,
      podsPerNode: { min: Math.min(...counts), max: Math.max(...counts) },
      cpuPct: Math.round(((cpu.user + cpu.system) / 1000 / (t1 - t0)) * 100),
      ...(machinePct !== undefined ? { machineCpuPct: Math.round(machinePct) } : {}),
      windowUs: { startUs, endUs },
    };
  } finally {
    ac.abort();
    await srv.stop();
  }
}

async function main(): Promise<void> {
  const nodes = Number(process.argv[2] ?? 1000);
  const pods = Number(process.argv[3] ?? 10_000);
  const r = await benchScheduler({ nodes, pods, progress: (m) => process.stderr.write(`${m}\n`) });
  console.log(JSON.stringify(r, null, 2));
  console.log(`scheduler: ${r.pods} pods on ${r.nodes} nodes in ${r.seconds} s = ${r.podsPerSec} pods/s (target >= 300; upstream CI >= 90 at 5,000 nodes)`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
