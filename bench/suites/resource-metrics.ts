// Suite `resource-metrics`: what metrics.k8s.io costs over a `skiff sim` fleet, whose figures the
// server makes from the pods' requests when asked (no scrape). Reads of every pod's and every
// node's metrics (what `kubectl top pods -A` and `kubectl top nodes` ask), p50/p99 over sequential
// requests, beside the peer measured in the same run on the same server: a list of the same pods
// and nodes themselves. Also the server's CPU while the fleet idles, and the scrapes it makes.
// Sizes: --quick 100 nodes and 1,000 pods; otherwise 500 and 5,000 (SKIFF_BENCH_METRICS_NODES).
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import type { KubeList } from '../../src/api/types.js';
import type { ApiClient } from '../../src/client/rest.js';
import { startSkiffServer, type SkiffServer } from '../lib/servers.js';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { cpuSecondsOf, fmtInt, fmtMs, makeTempDir, percentile, progress, removeTempDir, skiffEntry, sleep, startChild, until, type ManagedChild, type Table } from '../lib/util.js';

const SAMPLES = 20;
const PODS_PER_NODE = 10;
const IDLE_MS = 30_000;

interface Timing {
  p50Ms: number;
  p99Ms: number;
}

async function timed(client: ApiClient, path: string): Promise<Timing> {
  const ms: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now();
    await client.get<KubeList>(path);
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { p50Ms: percentile(ms, 50), p99Ms: percentile(ms, 99) };
}

export const resourceMetricsSuite: Suite = {
  name: 'resource-metrics',
  description: 'metrics.k8s.io over a skiff sim fleet (figures from requests, no scrape): every pod’s and node’s metrics beside a list of the pods and nodes themselves',
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    const nodes = process.env.SKIFF_BENCH_METRICS_NODES ? Number(process.env.SKIFF_BENCH_METRICS_NODES) : ctx.quick ? 100 : 500;
    const pods = nodes * PODS_PER_NODE;
    const dir = makeTempDir('skiff-bench-metrics-');
    let server: SkiffServer | undefined;
    let sim: ManagedChild | undefined;
    try {
      server = await startSkiffServer();
      const admin = server.client(120_000);
      sim = startChild('skiff sim', process.execPath, [skiffEntry(), 'sim', '--kubeconfig', server.kubeconfig, '--nodes', String(nodes), '--name-prefix', 'met', '--data-dir', join(dir, 'sim'), '--log-format', 'json'], join(dir, 'sim.log'));
      progress(`resource-metrics: ${fmtInt(nodes)} simulated nodes registering`);
      await until(`${nodes} nodes`, 10 * 60_000, async () => (await admin.get<KubeList>('/api/v1/nodes')).items.length >= nodes, 2000);
      await admin.create('/apis/apps/v1/namespaces/default/deployments', {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'load' },
        spec: {
          replicas: pods,
          selector: { matchLabels: { app: 'load' } },
          template: { metadata: { labels: { app: 'load' } }, spec: { nodeSelector: { 'skiff.dev/simulated-by': 'met' }, containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '100m', memory: '64Mi' } } }] } },
        },
      });
      progress(`resource-metrics: ${fmtInt(pods)} pods starting`);
      await until(`${pods} pods Running`, 20 * 60_000, async () => (await admin.get<KubeList>('/api/v1/namespaces/default/pods?fieldSelector=status.phase%3DRunning')).items.length >= pods, 3000);
      const withFigures = (await admin.get<KubeList>('/apis/metrics.k8s.io/v1beta1/pods')).items.length;
      progress('resource-metrics: timing reads');
      const podMetrics = await timed(admin, '/apis/metrics.k8s.io/v1beta1/pods');
      const podList = await timed(admin, '/api/v1/pods');
      const nodeMetrics = await timed(admin, '/apis/metrics.k8s.io/v1beta1/nodes');
      const nodeList = await timed(admin, '/api/v1/nodes');
      progress(`resource-metrics: the server idling beside the fleet, ${IDLE_MS / 1000} s`);
      const cpu0 = cpuSecondsOf(server.pid) ?? 0;
      await sleep(IDLE_MS);
      const idleCpuPct = (((cpuSecondsOf(server.pid) ?? 0) - cpu0) / (IDLE_MS / 1000)) * 100;
      const scrapeFailures = (readFileSync(join(server.dataDir, 'server.log'), 'utf8').match(/could not scrape resource metrics/g) ?? []).length;
      admin.close();
      const row = (what: string, ours: Timing, peer: Timing, peerName: string): string[] => [what, fmtMs(ours.p50Ms), fmtMs(ours.p99Ms), `${peerName}: ${fmtMs(peer.p50Ms)} / ${fmtMs(peer.p99Ms)}`];
      const table: Table = {
        title: `resource-metrics: metrics.k8s.io over ${fmtInt(nodes)} simulated nodes and ${fmtInt(pods)} pods, one server, ${SAMPLES} sequential reads each`,
        headers: ['read', 'p50 ms', 'p99 ms', 'peer, same run: p50 / p99 ms'],
        rows: [
          row(`every pod's metrics (kubectl top pods -A), ${fmtInt(withFigures)} items`, podMetrics, podList, 'list of the pods'),
          row("every node's metrics (kubectl top nodes)", nodeMetrics, nodeList, 'list of the nodes'),
        ],
        notes: [`server CPU while the fleet idles: ${idleCpuPct.toFixed(1)} % of a core over ${IDLE_MS / 1000} s; scrape attempts at simulated nodes: none (failures logged: ${scrapeFailures})`],
      };
      return { tables: [table], data: { resourceMetrics: { nodes, pods, withFigures, podMetrics, podList, nodeMetrics, nodeList, idleCpuPct, scrapeFailures } } };
    } finally {
      await sim?.stop(30_000);
      await server?.stop();
      removeTempDir(dir);
    }
  },
};
