// Suite `containers`: real containers on one node through containerd. Pods are bound to the node
// (the scheduler is measured in `scheduler`): half arrive one every 500 ms, the rest at once, each
// timed from the create call to the first watch event that shows it Running: the agent's sandbox (network namespace,
// CNI address), image check, container create and start, and the status write. Beside it, the
// floor: `ctr run -d` of the same image against the same containerd, one container at a time
// (no sandbox, no network, nothing written to an API). The agent's RSS is read with 50 and with
// 100 containers running. Upstream's SLO for stateless pods: p99 ≤ 5 s from create to Running.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { eventually } from '../../test/support/eventually.js';
import { CriClient } from '../../src/cri/client.js';
import { Informer } from '../../src/client/informer.js';
import { systemClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/log.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import { ContainerdBenchNode, containerdSkipped, latencyStats, run } from '../lib/containerd-node.js';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { fmtMiB, makeTempDir, progress, removeTempDir, round, rssOf, sleep, type Table } from '../lib/util.js';

const TOKEN = 'bench0.containers000000';
const NODE = 'bench-ctd';
const IMAGE = 'skiff.local/busybox:1.36';
const BRIDGE = 'skiff-bench';
const BATCH = 10;
/** The paced half: one pod every this long (2 a second, upstream's density test's per-node rate is far lower). */
const PACE_MS = 500;

/** `ctr run -d` of the image, one at a time: what containerd alone takes to create and start a container. */
async function ctrFloor(socket: string, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    const r = await run('ctr', ['--address', socket, '--namespace', 'bench', 'run', '-d', IMAGE, `floor-${i}`, 'sleep', '3600']);
    if (r.code !== 0) throw new Error(`ctr run: ${r.stderr}`);
    out.push(performance.now() - t);
  }
  for (let i = 0; i < count; i++) {
    await run('ctr', ['--address', socket, '--namespace', 'bench', 'task', 'kill', '-s', 'KILL', `floor-${i}`]);
  }
  for (let i = 0; i < count; i++) {
    await eventually(async () => (await run('ctr', ['--address', socket, '--namespace', 'bench', 'task', 'delete', `floor-${i}`])).code === 0, 10_000, `floor-${i} stopped`, 100).catch(() => undefined);
    await run('ctr', ['--address', socket, '--namespace', 'bench', 'container', 'delete', `floor-${i}`]);
  }
  return out;
}

export const containersSuite: Suite = {
  name: 'containers',
  description: 'pods create → Running on one containerd node, beside ctr run; agent RSS with 50 and 100 containers',
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    const skipped = containerdSkipped('containers');
    if (skipped) return skipped;
    const pods = ctx.quick ? 40 : 100;
    const work = makeTempDir('skiff-bench-ctd-');
    const node = new ContainerdBenchNode({ work, bridge: BRIDGE, image: IMAGE, token: TOKEN, nodeName: NODE, serverArgs: ['--allocate-node-cidrs', 'true', '--cluster-cidr', '10.250.0.0/16'] });
    const containerd = node.containerd;
    try {
      const archive = await node.startContainerd();
      await run('ctr', ['--address', containerd.socket, '--namespace', 'bench', 'images', 'import', archive]);

      progress(`containers: ctr run -d, ${pods} containers one at a time (the floor)`);
      const floor = await ctrFloor(containerd.socket, pods);

      const client = await node.startNode();
      const agent = node.agent!;
      const rssIdle = rssOf(agent.pid);

      const created = new Map<string, number>();
      const running = new Map<string, number>();
      const informer = new Informer<Pod>(client, { path: '/api/v1/pods', fieldSelector: `spec.nodeName=${NODE}`, clock: systemClock, log: silentLogger() });
      const seen = (p: Pod) => {
        const name = p.metadata.name!;
        if (p.status?.phase === 'Running' && !running.has(name)) running.set(name, performance.now());
      };
      informer.addHandlers({ add: seen, update: (_o, p) => seen(p) });
      const stop = new AbortController();
      void informer.run(stop.signal);
      await informer.waitForSync();

      const createPod = async (i: number) => {
        const name = `bench-${i}`;
        created.set(name, performance.now());
        await client.create('/api/v1/namespaces/default/pods', {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name },
          spec: { nodeName: NODE, terminationGracePeriodSeconds: 1, automountServiceAccountToken: false, containers: [{ name: 'c', image: IMAGE, imagePullPolicy: 'Never', command: ['sleep', '3600'] }] },
        });
      };
      const allRunning = (to: number) => eventually(() => [...created.keys()].every((n) => running.has(n)), 300_000, `${to} pods Running`, 50);
      const latencies = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => `bench-${from + k}`).map((n) => running.get(n)! - created.get(n)!);
      const half = pods / 2;
      // Paced, as upstream's SLO is measured (pods arrive over time, not all at once): one every PACE_MS.
      progress(`containers: ${half} pods, one every ${PACE_MS} ms`);
      for (let i = 0; i < half; i++) {
        const t = performance.now();
        await createPod(i);
        await sleep(Math.max(0, PACE_MS - (performance.now() - t)));
      }
      await allRunning(half);
      const paced = latencyStats(latencies(0, half));
      const rssHalf = rssOf(agent.pid);
      // A burst: the rest at once, BATCH creates in flight; how long until the last one runs.
      progress(`containers: ${pods - half} more at once`);
      const burstStart = performance.now();
      for (let i = half; i < pods; i += BATCH) await Promise.all(Array.from({ length: Math.min(BATCH, pods - i) }, (_, k) => createPod(i + k)));
      await allRunning(pods);
      const burstSeconds = (Math.max(...latencies(half, pods).map((ms, k) => created.get(`bench-${half + k}`)! + ms)) - burstStart) / 1000;
      const burst = latencyStats(latencies(half, pods));
      const rssAll = rssOf(agent.pid);
      stop.abort();
      const peer = latencyStats(floor);

      progress('containers: deleting the pods');
      await client.delete('/api/v1/namespaces/default/pods', undefined, { query: { fieldSelector: `spec.nodeName=${NODE}` } }).catch(() => undefined);
      await eventually(async () => (await client.get<{ items: unknown[] }>('/api/v1/namespaces/default/pods')).items.length === 0, 120_000, 'pods gone', 200).catch(() => undefined);
      client.close();

      const cri = new CriClient({ endpoint: containerd.endpoint });
      const version = await cri.version().then((v) => v.runtimeVersion, () => '?');
      cri.close();
      const table: Table = {
        title: `containers: ${pods} pods on one node (containerd ${version})`,
        headers: ['', 'p50', 'p99', 'max', 'agent RSS after'],
        rows: [
          [`skiff: pod create → Running, ${half} pods one every ${PACE_MS} ms`, `${round(paced.p50, 0)} ms`, `${round(paced.p99, 0)} ms`, `${round(paced.max, 0)} ms`, `${fmtMiB(rssHalf)} with ${half} (idle ${fmtMiB(rssIdle)})`],
          [`skiff: the same, ${pods - half} more at once (last Running after ${round(burstSeconds, 1)} s: ${round((pods - half) / burstSeconds, 1)} pods/s)`, `${round(burst.p50, 0)} ms`, `${round(burst.p99, 0)} ms`, `${round(burst.max, 0)} ms`, `${fmtMiB(rssAll)} with ${pods}`],
          [`peer floor: ctr run -d, one at a time (no sandbox, no network, no API)`, `${round(peer.p50, 0)} ms`, `${round(peer.p99, 0)} ms`, `${round(peer.max, 0)} ms`, '-'],
        ],
        notes: ['upstream SLO: p99 ≤ 5 s from create to Running for stateless pods (image present), measured with pods arriving over time', 'a burst is bound by what the machine can start: each pod is a sandbox (network namespace, CNI, pause container) and a container'],
      };
      return { tables: [table], data: { pods, pacedMs: paced, burstMs: burst, burstSeconds, ctrMs: peer, agentRssBytes: { idle: rssIdle, half: rssHalf, all: rssAll } } };
    } finally {
      await node.stop();
      // SKIFF_BENCH_KEEP=1 keeps the agent's log for a look afterwards.
      if (process.env.SKIFF_BENCH_KEEP === '1') {
        copyFileSync(join(work, 'agent.log'), 'bench-containers-agent.log');
        progress('containers: the agent log is in bench-containers-agent.log');
      }
      removeTempDir(work);
    }
  },
};
