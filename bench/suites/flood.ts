// Suite `flood`: what a flood from ordinary users does to a cluster's heartbeats, with API Priority
// and Fairness (skiff's default) and, as the peer in the same run, with the plain in-flight limits
// kube-apiserver falls back to (--enable-priority-and-fairness=false). Each mode: a fresh server,
// a `skiff sim` fleet at upstream's agent timings with its pods Running, then four non-admin users
// run hundreds of concurrent loops (cluster-wide pod lists, ConfigMap create+delete, short
// watches) while a Deployment is created. Reported: the flood's requests and refusals, the
// fleet's Lease renewal and status latencies during it (as the nodes see them), false NotReady,
// the Deployment's rollout time, server CPU and RSS.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Node } from '../../src/api/kinds/node.js';
import type { KubeObject } from '../../src/api/types.js';
import { Informer } from '../../src/client/informer.js';
import type { CallFigures } from '../../src/sim/call-stats.js';
import { silentLogger } from '../../src/util/log.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';
import { flood, type FloodOutcome } from '../lib/flood.js';
import { startSkiffServer } from '../lib/servers.js';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { CpuMeter, fmtInt, makeTempDir, peakRssOf, progress, removeTempDir, round, skiffEntry, sleep, startChild, until, type Table } from '../lib/util.js';

interface ModeResult {
  mode: string;
  outcome: FloodOutcome;
  calls: Record<string, CallFigures>;
  falseNotReady: number;
  rolloutMs: number | undefined;
  serverCpuPct: number | undefined;
  serverPeakRssBytes: number | undefined;
}

async function runMode(mode: string, serverArgs: string[], sizes: { nodes: number; pods: number; floodMs: number; loops: { list: number; create: number; watch: number } }): Promise<ModeResult> {
  const dir = makeTempDir('skiff-bench-flood-');
  const users = ['f1', 'f2', 'f3', 'f4'].map((name) => ({ name, token: `flood-${name}-token`, namespace: `flood-${name}` }));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, users.map((u, i) => `${u.token},${u.name},${200 + i},"flooders"`).join('\n') + '\n');
  const server = await startSkiffServer({ serverArgs: ['--token-auth-file', tokens, ...serverArgs] });
  const statsFile = join(dir, 'stats.json');
  const sim = startChild('skiff sim', process.execPath, [skiffEntry(), 'sim', '--kubeconfig', server.kubeconfig, '--nodes', String(sizes.nodes), '--data-dir', join(dir, 'sim'), '--stats-file', statsFile, '--log-format', 'json'], join(dir, 'sim.log'));
  const admin = server.client(60_000);
  const abort = new AbortController();
  try {
    progress(`flood (${mode}): ${sizes.nodes} nodes, ${sizes.pods} pods`);
    await admin.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'flooders' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'flooders' }] });
    for (const u of users) await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: u.namespace } });
    let watching = false;
    let falseNotReady = 0;
    const ready = new Set<string>();
    const nodes = new Informer<Node>(admin, { path: '/api/v1/nodes', log: silentLogger(), readOnly: true });
    const onNode = (n: Node): void => {
      const ok = n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
      if (ok) ready.add(n.metadata.name!);
      else {
        ready.delete(n.metadata.name!);
        if (watching) falseNotReady++;
      }
    };
    nodes.addHandlers({ add: onNode, update: (_o, n) => onNode(n) });
    void nodes.run(abort.signal);
    await until(`${sizes.nodes} nodes Ready`, 10 * 60_000, async () => ready.size >= sizes.nodes, 500);
    const deployment = (name: string, replicas: number): KubeObject => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name },
      spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }] } } },
    });
    const readyReplicas = async (name: string): Promise<number> => ((await admin.get<KubeObject>(`/apis/apps/v1/namespaces/default/deployments/${name}`)).status as { readyReplicas?: number } | undefined)?.readyReplicas ?? 0;
    await admin.create('/apis/apps/v1/namespaces/default/deployments', deployment('background', sizes.pods));
    await until(`${sizes.pods} pods Running`, 10 * 60_000, async () => (await readyReplicas('background')) >= sizes.pods, 1000);

    progress(`flood (${mode}): ${users.length} users × ${sizes.loops.list + sizes.loops.create + sizes.loops.watch} loops for ${sizes.floodMs / 1000} s`);
    sim.proc.kill('SIGUSR2');
    watching = true;
    const cpu = new CpuMeter(server.pid);
    const ca = readFileSync(join(server.dataDir, 'tls', 'ca.crt'), 'utf8');
    const serverUrl = parseKubeconfig(readFileSync(server.kubeconfig, 'utf8'), (p) => readFileSync(p, 'utf8')).server;
    const flooding = flood({ server: serverUrl, caPem: ca, users, loops: sizes.loops, durationMs: sizes.floodMs });
    await sleep(2_000);
    const rolloutStart = performance.now();
    await admin.create('/apis/apps/v1/namespaces/default/deployments', deployment('during-flood', 20));
    let rolloutMs: number | undefined;
    const rollout = until('the Deployment rolled out', sizes.floodMs + 120_000, async () => (await readyReplicas('during-flood')) >= 20, 500).then(() => {
      rolloutMs = performance.now() - rolloutStart;
    });
    const outcome = await flooding;
    const serverCpu = cpu.read().pidPct;
    await rollout.catch(() => undefined);
    watching = false;
    // The fleet writes its figures every 10 s: the next file covers the flood (and at most 10 s after it).
    await sleep(11_000);
    const stats = JSON.parse(readFileSync(statsFile, 'utf8')) as { calls: Record<string, CallFigures> };
    return { mode, outcome, calls: stats.calls, falseNotReady, rolloutMs, serverCpuPct: serverCpu, serverPeakRssBytes: peakRssOf(server.pid) };
  } finally {
    abort.abort();
    admin.close();
    await sim.stop(5_000);
    await server.stop();
    removeTempDir(dir);
  }
}

function lat(c: CallFigures | undefined): string {
  return c ? `${round(c.p50Ms, 1)} / ${round(c.p99Ms, 1)} ms (max ${round(c.maxMs, 0)}; ${fmtInt(c.count)} calls, ${c.errors} refused or failed)` : 'none';
}

function codes(o: FloodOutcome): string {
  const part = (label: string, n: number | undefined) => (n ? `${fmtInt(n)} ${label}` : '');
  const other = Object.entries(o.byCode).filter(([c]) => !['200', '201', '429', '0'].includes(c)).map(([c, n]) => `${fmtInt(n)} × ${c}`);
  return [part('served', (o.byCode[200] ?? 0) + (o.byCode[201] ?? 0)), part('× 429', o.byCode[429]), part('unanswered', o.byCode[0]), ...other].filter(Boolean).join(', ');
}

export const floodSuite: Suite = {
  name: 'flood',
  description: 'four ordinary users flood the API beside a simulated fleet: Lease latency, false NotReady and a rollout, with Priority and Fairness and without',
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    const sizes = ctx.quick
      ? { nodes: 100, pods: 500, floodMs: 30_000, loops: { list: 60, create: 30, watch: 30 } }
      : { nodes: 300, pods: 3000, floodMs: 60_000, loops: { list: 100, create: 50, watch: 50 } };
    // SKIFF_BENCH_FLOOD_SERVER_ARGS: extra server flags for the Priority and Fairness run (e.g. other in-flight limits).
    const extra = (process.env.SKIFF_BENCH_FLOOD_SERVER_ARGS ?? '').split(' ').filter(Boolean);
    const apf = await runMode('priority and fairness', extra, sizes);
    if (process.env.SKIFF_BENCH_FLOOD_ONLY_APF === '1') return { tables: [], data: { sizes, results: [apf] } };
    const plain = await runMode('plain in-flight limits', ['--enable-priority-and-fairness=false'], sizes);
    const row = (label: string, f: (r: ModeResult) => string): string[] => [label, f(apf), f(plain)];
    const loops = (sizes.loops.list + sizes.loops.create + sizes.loops.watch) * 4;
    const table: Table = {
      title: `flood: 4 non-admin users × ${loops / 4} concurrent loops for ${sizes.floodMs / 1000} s beside ${fmtInt(sizes.nodes)} simulated nodes and ${fmtInt(sizes.pods)} pods (2 cores)`,
      headers: ['figure', 'skiff (Priority and Fairness)', 'peer: plain in-flight limits (upstream with --enable-priority-and-fairness=false)'],
      rows: [
        row('flood requests: served, refused', (r) => `${fmtInt(r.outcome.requests)}: ${codes(r.outcome)}`),
        row('Lease renewals p50 / p99 during the flood', (r) => lat(r.calls['PUT lease'])),
        row('node status updates p50 / p99', (r) => lat(r.calls['PATCH node status'])),
        row('false NotReady during the flood', (r) => String(r.falseNotReady)),
        row('a 20-replica Deployment created 2 s into the flood → ready', (r) => (r.rolloutMs === undefined ? 'not within the flood + 2 min' : `${round(r.rolloutMs / 1000, 1)} s`)),
        row('server CPU during the flood (% of one core)', (r) => `${round(r.serverCpuPct ?? 0, 0)}`),
        row('server peak RSS', (r) => `${round((r.serverPeakRssBytes ?? 0) / 2 ** 20, 0)} MiB`),
      ],
      notes: [
        'Goals: every node stays Ready (0 false NotReady), Lease renewals p99 < 1 s, the Deployment rolls out.',
        'The flood does not honour Retry-After (a refused loop pauses 50 ms); its generator, the fleet and the server share the 2 cores.',
        'Latencies are the nodes\' own, client-side, over the flood and up to 10 s after it.',
      ],
    };
    return { tables: [table], data: { sizes, results: [apf, plain] } };
  },
};
