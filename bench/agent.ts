// Node agent benchmark: a real `skiff server` and one real `skiff agent` (process runtime, default
// timings, joined with a bootstrap token).
//   - idle RSS and CPU of the agent with 0 and with N process pods (target ≤ 60 MB RSS; a k3s
//     agent uses ~256 MB);
//   - Node deletion → Node restored, p50/p99 over T trials (target p99 < 1 s; upstream: never).
//
// benchAgent() returns the figures; bench/run.ts prints and records them. Run alone:
//   node dist/bench/agent.js [--quick]
import { eventually } from '../test/support/eventually.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { startSkiffServer, type SkiffServer } from './lib/servers.js';
import { cpuSecondsOf, makeTempDir, percentile, progress, removeTempDir, rssOf, round, skiffEntry, sleep, startChild, type ManagedChild, type Table } from './lib/util.js';
import type { ApiClient } from '../src/client/rest.js';
import { parseKubeconfig } from '../src/pki/kubeconfig.js';
import type { Node } from '../src/api/kinds/node.js';
import type { Pod } from '../src/api/kinds/pod.js';
import type { KubeList } from '../src/api/types.js';
import type { Suite } from './lib/suite.js';

export interface AgentBenchOptions {
  /** Process pods for the loaded idle measurement. */
  pods?: number;
  /** Node deletions to time. */
  trials?: number;
  /** Measuring window for idle CPU. */
  idleMs?: number;
  /** Let the agent settle this long before measuring. */
  settleMs?: number;
}

export interface IdleFigures {
  pods: number;
  rssMiB: number;
  cpuPctOfOneCore: number;
}

export interface AgentBenchFigures {
  idle: IdleFigures[];
  reregistration: { trials: number; p50Ms: number; p99Ms: number; maxMs: number; meanMs: number; failures: number };
  peers: { k3sAgentRssMiB: number; upstreamKubeletReregistration: string };
  targets: { rssMiB: number; reregistrationP99Ms: number };
}

const TOKEN = 'benchx.0123456789abcdef';
const NODE = 'bench-node';


async function measureIdle(pid: number, pods: number, settleMs: number, idleMs: number): Promise<IdleFigures> {
  await sleep(settleMs);
  const cpu0 = cpuSecondsOf(pid) ?? 0;
  const t0 = performance.now();
  await sleep(idleMs);
  const cpu1 = cpuSecondsOf(pid) ?? 0;
  const wall = (performance.now() - t0) / 1000;
  return { pods, rssMiB: round((rssOf(pid) ?? 0) / 1024 / 1024, 1), cpuPctOfOneCore: round(((cpu1 - cpu0) / wall) * 100, 2) };
}

async function timeDeletion(client: ApiClient): Promise<number | undefined> {
  const before = await client.get<Node>(`/api/v1/nodes/${NODE}`);
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 10_000);
  try {
    const events = client.watch<Node>('/api/v1/nodes', { fieldSelector: `metadata.name=${NODE}`, resourceVersion: before.metadata.resourceVersion }, ac.signal);
    const t0 = performance.now();
    await client.delete(`/api/v1/nodes/${NODE}`);
    for await (const ev of events) {
      if (ev.type === 'ADDED' && ev.object.metadata.uid !== before.metadata.uid) return performance.now() - t0;
    }
    return undefined;
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
}

export async function benchAgent(opts: AgentBenchOptions = {}): Promise<AgentBenchFigures> {
  const podCount = opts.pods ?? 50;
  const trials = opts.trials ?? 50;
  const idleMs = opts.idleMs ?? 10_000;
  const settleMs = opts.settleMs ?? 3000;
  let server: SkiffServer | undefined;
  let agent: ManagedChild | undefined;
  const dataDir = makeTempDir('skiff-bench-agent-');
  try {
    server = await startSkiffServer({ serverArgs: ['--token', TOKEN] });
    const client = server.client(10_000);
    const serverUrl = parseKubeconfig(readFileSync(server.kubeconfig, 'utf8'), () => '').server;
    agent = startChild(
      'skiff agent',
      process.execPath,
      [skiffEntry(), 'agent', '--server', serverUrl, '--token', TOKEN, '--ca-file', join(server.dataDir, 'tls', 'ca.crt'), '--data-dir', dataDir, '--node-name', NODE, '--kubelet-port', '0'],
      join(dataDir, 'agent.log'),
    );
    await eventually(async () => (await client.get<Node>(`/api/v1/nodes/${NODE}`)).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'), 30_000, 'agent Ready', 50);
    progress(`skiff agent ready (pid ${agent.pid}); measuring idle with 0 pods`);
    const idle: IdleFigures[] = [await measureIdle(agent.pid, 0, settleMs, idleMs)];

    progress(`creating ${podCount} process pods`);
    for (let i = 0; i < podCount; i++) {
      await client.create('/api/v1/namespaces/default/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `bench-${i}` },
        spec: { nodeName: NODE, terminationGracePeriodSeconds: 2, containers: [{ name: 'c', image: 'none', command: ['sleep', '3600'] }] },
      });
    }
    await eventually(async () => {
      const list = await client.get<KubeList<Pod>>('/api/v1/namespaces/default/pods', { query: { fieldSelector: `spec.nodeName=${NODE}` } });
      return list.items.filter((p) => p.status?.phase === 'Running').length === podCount;
    }, 60_000, `${podCount} pods Running`, 50);
    progress(`measuring idle with ${podCount} pods`);
    idle.push(await measureIdle(agent.pid, podCount, settleMs, idleMs));

    progress(`timing ${trials} node deletions`);
    const samples: number[] = [];
    let failures = 0;
    for (let i = 0; i < trials; i++) {
      const ms = await timeDeletion(client).catch(() => undefined);
      if (ms === undefined) failures++;
      else samples.push(ms);
      // Let the Lease and status follow the new Node before the next deletion.
      await sleep(100);
    }
    samples.sort((a, b) => a - b);
    const mean = samples.reduce((a, b) => a + b, 0) / Math.max(1, samples.length);
    client.close();
    return {
      idle,
      reregistration: {
        trials,
        p50Ms: round(percentile(samples, 50), 1),
        p99Ms: round(percentile(samples, 99), 1),
        maxMs: round(samples.at(-1) ?? NaN, 1),
        meanMs: round(mean, 1),
        failures,
      },
      peers: { k3sAgentRssMiB: 256, upstreamKubeletReregistration: 'never (the kubelet does not re-create a deleted Node while it runs)' },
      targets: { rssMiB: 60, reregistrationP99Ms: 1000 },
    };
  } finally {
    // Graceful: the agent stops its pods and removes its Node.
    await agent?.stop(30_000);
    await server?.stop();
    removeTempDir(dataDir);
  }
}

export function agentTables(f: AgentBenchFigures): Table[] {
  return [
    {
      title: 'node agent at idle (process runtime, default timings)',
      headers: ['pods', 'RSS (MiB)', 'CPU (% of one core)', 'target RSS', 'k3s agent RSS'],
      rows: f.idle.map((i) => [String(i.pods), String(i.rssMiB), String(i.cpuPctOfOneCore), `≤ ${f.targets.rssMiB}`, `~${f.peers.k3sAgentRssMiB}`]),
    },
    {
      title: `Node deleted → restored by its agent (${f.reregistration.trials} trials)`,
      headers: ['p50 (ms)', 'p99 (ms)', 'max (ms)', 'failures', 'target p99', 'upstream kubelet'],
      rows: [[String(f.reregistration.p50Ms), String(f.reregistration.p99Ms), String(f.reregistration.maxMs), String(f.reregistration.failures), `< ${f.targets.reregistrationP99Ms}`, 'never']],
    },
  ];
}

export const agentSuite: Suite = {
  name: 'agent',
  description: 'node agent: idle RSS/CPU with 0 and 50 process pods; Node deletion → restored latency',
  async run(ctx) {
    const figures = await benchAgent(ctx.quick ? { trials: 20, idleMs: 3000, settleMs: 1500 } : {});
    return { tables: agentTables(figures), data: figures as unknown as Record<string, unknown> };
  },
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const quick = process.argv.includes('--quick');
  const f = await benchAgent(quick ? { trials: 20, idleMs: 3000, settleMs: 1500 } : {});
  console.log(JSON.stringify(f, null, 2));
}
