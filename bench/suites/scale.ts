// Suite `scale`: a fleet on one machine. A real `skiff server` (SQLite) and a `skiff sim` fleet of
// N nodes at upstream's agent timings (Lease renewed every 10 s, status computed every 10 s and
// posted at least every 60 s); then N×10 pods (Deployments of simulated pods) created → Running;
// then a hold, watching every Node for a Ready condition that is not True (a false NotReady: the
// fleet is alive throughout). Reported: nodes Ready-time, pods/s created → Running, p50/p99 of the
// fleet's Lease renewals, node status updates and pod status updates as the nodes see them (the
// sim's --stats-file, reset when the hold starts), server CPU and RSS, and the watch delay to the
// nodes (a pod created → its node reports it Running, at the end). Sizes: --quick 1,000 nodes
// and a 2-minute hold; otherwise 5,000 and 10 minutes (SKIFF_BENCH_SCALE_NODES, _HOLD_S override).
// SKIFF_BENCH_SCALE_HTTP1=1 has the fleet use HTTP/1.1 instead of one HTTP/2 connection.
// SKIFF_BENCH_SCALE_STORE=etcd puts the server on a 3-member etcd (data on disk, as a user's
// would be) instead of SQLite.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Node } from '../../src/api/kinds/node.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import { Informer } from '../../src/client/informer.js';
import { silentLogger } from '../../src/util/log.js';
import type { CallFigures } from '../../src/sim/call-stats.js';
import { profileTable, profilesIn, summarizeNewProfiles } from '../lib/cpuprofile.js';
import { startSkiffServer } from '../lib/servers.js';
import { startEtcd, type LocalEtcdCluster } from '../../src/etcd/local-cluster.js';
import { cpus, tmpdir } from 'node:os';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { CpuMeter, fmtInt, groupCpuMeter, makeTempDir, peakRssOf, progress, removeTempDir, round, rssOf, skiffEntry, sleep, startChild, until, type Table } from '../lib/util.js';

const PODS_PER_NODE = 10;
// The profiler's clock (monotonic, microseconds).
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const DEPLOYMENTS = 10;
/** On etcd a server seals the cluster CA it shares with its peers with the cluster's join token. */
const ETCD_CLUSTER_TOKEN = 'benchs.0123456789abcdef';

export const scaleSuite: Suite = {
  name: 'scale',
  description: 'N simulated nodes (skiff sim) and N×10 pods on one server: Ready-time, pods/s, call latencies, false NotReady, CPU, RSS',
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    const nodes = Number(process.env.SKIFF_BENCH_SCALE_NODES ?? (ctx.quick ? 1000 : 5000));
    const holdMs = Number(process.env.SKIFF_BENCH_SCALE_HOLD_S ?? (ctx.quick ? 120 : 600)) * 1000;
    const pods = nodes * PODS_PER_NODE;
    const onEtcd = process.env.SKIFF_BENCH_SCALE_STORE === 'etcd';
    // V8's default heap limit (about 4 GiB here) is too close to what 10,000 nodes and 100,000
    // pods keep alive: above 5,000 nodes the server and the fleet get 8 GiB, as an operator of
    // such a cluster would give them (the table says so).
    const heapArgs = nodes > 5000 ? ['--max-old-space-size=8192'] : [];
    const etcd: LocalEtcdCluster | undefined = onEtcd ? await startEtcd({ members: 3, dataRoot: tmpdir(), startTimeoutMs: 60_000 }) : undefined;
    // With --cpu-prof the server of this very run is profiled (its figures then include the profiler's cost).
    const server = await startSkiffServer({
      nodeArgs: [...heapArgs, ...(ctx.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', ctx.cpuProfDir] : [])],
      ...(etcd ? { serverArgs: ['--storage', 'etcd', '--etcd-endpoints', etcd.endpoints.join(','), '--token', ETCD_CLUSTER_TOKEN] } : {}),
    }).catch(async (e: unknown) => {
      await etcd?.destroy();
      throw e;
    });
    const etcdPids = (etcd?.members ?? []).map((m) => m.pid).filter((p): p is number => p !== undefined);
    const profilesBefore = ctx.cpuProfDir ? profilesIn(ctx.cpuProfDir) : undefined;
    const dir = makeTempDir('skiff-bench-scale-');
    const statsFile = join(dir, 'stats.json');
    const admin = server.client(60_000);
    const sim = startChild(
      'skiff sim',
      process.execPath,
      [...heapArgs, skiffEntry(), 'sim', '--kubeconfig', server.kubeconfig, '--nodes', String(nodes), '--data-dir', join(dir, 'sim'), '--stats-file', statsFile, '--cpu', '16', '--memory', '64Gi', '--max-pods', '110', '--log-format', 'json', ...(process.env.SKIFF_BENCH_SCALE_HTTP1 === '1' ? ['--no-http2'] : [])],
      join(dir, 'sim.log'),
    );
    // A Ready condition that turns anything but True once every node was Ready: while pods start, and in the hold.
    const falseNotReady: string[] = [];
    const falseNotReadyGrowing: string[] = [];
    const growWindowUs = { startUs: 0, endUs: 0 };
    let tables: Table[] = [];
    const abort = new AbortController();
    try {
      progress(`scale: ${nodes} nodes registering`);
      // Nodes and pods watched throughout (one watcher each: cheaper for the server than lists).
      // Once every node is Ready, a Ready condition that turns anything but True is a false NotReady.
      let phase: 'registering' | 'growing' | 'holding' = 'registering';
      const isReady = (n: Node) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
      const readyNodes = new Set<string>();
      const nodeWatch = new Informer<Node>(admin, { path: '/api/v1/nodes', log: silentLogger(), readOnly: true });
      const onNode = (n: Node) => {
        if (isReady(n)) readyNodes.add(n.metadata.name!);
        else {
          readyNodes.delete(n.metadata.name!);
          const r = n.status?.conditions?.find((c) => c.type === 'Ready');
          const what = `${n.metadata.name} ${r?.status ?? 'none'} ${r?.reason ?? ''}`;
          if (phase === 'holding') falseNotReady.push(what);
          else if (phase === 'growing') falseNotReadyGrowing.push(what);
        }
      };
      nodeWatch.addHandlers({ add: onNode, update: (_o, n) => onNode(n), delete: (n) => readyNodes.delete(n.metadata.name!) });
      const runningPods = new Set<string>();
      const podWatch = new Informer<Pod>(admin, { path: '/api/v1/pods', log: silentLogger(), readOnly: true });
      const onPod = (p: Pod) => (p.status?.phase === 'Running' ? runningPods.add(p.metadata.uid!) : runningPods.delete(p.metadata.uid!));
      podWatch.addHandlers({ add: onPod, update: (_o, p) => onPod(p), delete: (p) => runningPods.delete(p.metadata.uid!) });
      void nodeWatch.run(abort.signal);
      void podWatch.run(abort.signal);
      const readyMs = await until(`${nodes} nodes Ready`, 20 * 60_000, async () => readyNodes.size >= nodes, 200);
      phase = 'growing';
      progress(`scale: ${nodes} nodes Ready in ${(readyMs / 1000).toFixed(1)} s; creating ${pods} pods`);

      const serverCpu = new CpuMeter(server.pid);
      const simCpu = new CpuMeter(sim.pid);
      // No pid: this process (its watches) and the whole machine.
      const benchCpu = new CpuMeter();
      const etcdGrow = groupCpuMeter(etcdPids);
      const t0 = performance.now();
      growWindowUs.startUs = nowUs();
      for (let i = 0; i < DEPLOYMENTS; i++) {
        await admin.create('/apis/apps/v1/namespaces/default/deployments', {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: `load-${i}` },
          spec: {
            replicas: pods / DEPLOYMENTS,
            selector: { matchLabels: { app: `load-${i}` } },
            template: { metadata: { labels: { app: `load-${i}` } }, spec: { containers: [{ name: 'c', image: 'registry.example/load:1', resources: { requests: { cpu: '10m', memory: '16Mi' } } }] } },
          },
        });
      }
      let said = 0;
      // 30 minutes, or 20 pods a second where that is longer (100,000 pods at 10,000 nodes ran at 36/s).
      const runMs = await until(`${pods} pods Running`, Math.max(30 * 60_000, (pods / 20) * 1000), async () => {
        if (performance.now() - said > 5000) {
          progress(`scale: ${fmtInt(runningPods.size)} of ${fmtInt(pods)} pods Running`);
          said = performance.now();
        }
        return runningPods.size >= pods;
      }, 200);
      const podsPerS = pods / ((performance.now() - t0) / 1000);
      growWindowUs.endUs = nowUs();
      const growCpu = serverCpu.read();
      const simGrowCpu = simCpu.read();
      const benchGrowCpu = benchCpu.read();
      // CPU each pod start cost, all processes: what bounds pods/s on this machine (its cores ÷ the sum).
      const growMs = (pods / podsPerS) * 1000;
      const perPodMs = (pct: number | undefined) => (((pct ?? 0) / 100) * growMs) / pods;
      const costs = { server: perPodMs(growCpu.pidPct), serverMain: perPodMs(growCpu.mainThreadPct), sim: perPodMs(simGrowCpu.pidPct), bench: perPodMs(benchGrowCpu.selfPct), machine: perPodMs(benchGrowCpu.machinePct) };
      const etcdGrowPct = etcdGrow();
      progress(`scale: ${pods} pods Running in ${(runMs / 1000).toFixed(1)} s (${podsPerS.toFixed(0)}/s), false NotReady meanwhile ${falseNotReadyGrowing.length}; holding ${holdMs / 1000} s`);
      phase = 'holding';

      // The grow's figures as the sim last wrote them (at most 10 s old), then the hold's from here on.
      const growStats = JSON.parse(readFileSync(statsFile, 'utf8')) as { calls: Record<string, CallFigures> };
      sim.proc.kill('SIGUSR2');
      const holdCpu = new CpuMeter(server.pid);
      const etcdHold = groupCpuMeter(etcdPids);
      let maxRss = 0;
      let simRss = 0;
      const holdEnd = performance.now() + holdMs;
      while (performance.now() < holdEnd) {
        maxRss = Math.max(maxRss, rssOf(server.pid) ?? 0);
        simRss = Math.max(simRss, rssOf(sim.pid) ?? 0);
        progress(`scale: holding, ${Math.round((holdEnd - performance.now()) / 1000)} s left; false NotReady so far ${falseNotReady.length}`);
        await sleep(Math.min(10_000, Math.max(0, holdEnd - performance.now())));
      }
      const hold = holdCpu.read();
      const etcdHoldPct = etcdHold();
      // The newest figures (the sim writes them every 10 s).
      await sleep(11_000);
      const stats = JSON.parse(readFileSync(statsFile, 'utf8')) as { calls: Record<string, CallFigures> };

      // Watch delay to the nodes: one pod created now → Running as its node reports it.
      const probeT = performance.now();
      await admin.create('/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe' }, spec: { containers: [{ name: 'c', image: 'x' }] } });
      await until('the probe pod Running', 60_000, async () => (await admin.get<Pod>('/api/v1/namespaces/default/pods/probe')).status?.phase === 'Running', 20);
      const probeMs = performance.now() - probeT;

      const lat = (k: string, from = stats) => {
        const c = from.calls[k];
        return c ? `${round(c.p50Ms, 1)} / ${round(c.p99Ms, 1)} ms (max ${round(c.maxMs, 0)}; ${fmtInt(c.count)} calls, ${c.errors} errors)` : 'none';
      };
      const rssPeak = peakRssOf(server.pid) ?? maxRss;
      const simRssPeak = peakRssOf(sim.pid) ?? simRss;
      const table: Table = {
        title: `scale: ${fmtInt(nodes)} simulated nodes (one skiff sim) + ${fmtInt(pods)} pods, one server on ${etcd ? 'a 3-member etcd' : 'SQLite'}, ${holdMs / 60_000} min hold (2 cores)`,
        headers: ['figure', 'skiff', 'goal / peer'],
        rows: [
          [`${fmtInt(nodes)} nodes registered → Ready`, `${(readyMs / 1000).toFixed(1)} s`, 'KWOK benchmark: 5,000 nodes Ready within 60 s'],
          [`${fmtInt(pods)} pods created → Running`, `${(runMs / 1000).toFixed(1)} s, ${podsPerS.toFixed(0)} pods/s`, '≥ 500 pods/s; KWOK: "20 nodes or pods per second"'],
          ['Lease renewals p50 / p99 (hold)', lat('PUT lease'), 'p99 < 250 ms (5,000 nodes), < 1 s (10,000)'],
          ['Lease renewals p50 / p99 (while the pods start)', lat('PUT lease', growStats), 'a node is NotReady after 40 s without one'],
          ['node status updates p50 / p99 (hold)', lat('PATCH node status'), 'p99 < 250 ms'],
          ['pod status updates p50 / p99 (while the pods start)', lat('PATCH pod status', growStats), 'p99 < 250 ms'],
          ['false NotReady during the hold', String(falseNotReady.length), '0'],
          ['false NotReady while the pods start', `${falseNotReadyGrowing.length} (${new Set(falseNotReadyGrowing.map((x) => x.split(' ')[0])).size} nodes)`, '0'],
          ['server CPU, growing / holding (% of one core; its main thread)', `${round(growCpu.pidPct ?? 0, 0)} / ${round(hold.pidPct ?? 0, 0)} (main ${round(growCpu.mainThreadPct ?? 0, 0)} / ${round(hold.mainThreadPct ?? 0, 0)})`, 'the main thread is one core at most'],
          ['CPU per pod start: server (its main thread) / the fleet / this benchmark\'s watches / the whole machine', `${round(costs.server, 2)} (${round(costs.serverMain, 2)}) / ${round(costs.sim, 2)} / ${round(costs.bench, 2)} / ${round(costs.machine, 2)} ms`, `the machine's ceiling: ${Math.round((cpus().length * 1000) / Math.max(costs.machine, 0.001))} pods/s (${cpus().length} cores ÷ the whole machine's cost)`],
          ...(etcd ? [['etcd CPU, 3 members together, growing / holding (% of one core)', `${round(etcdGrowPct, 0)} / ${round(etcdHoldPct, 0)}`, '']] : []),
          ['server RSS at the end of the hold (peak)', `${round(maxRss / 2 ** 20, 0)} MiB (peak ${round(rssPeak / 2 ** 20, 0)} MiB)`, '≤ 1.5 GB (5,000 nodes), ≤ 2.5 GB (10,000); k3s sizes 2 CPU / 4 GB for 350 agents'],
          ['the fleet\'s RSS in the hold (peak)', `${round(simRss / 2 ** 20, 0)} MiB (peak ${round(simRssPeak / 2 ** 20, 0)} MiB), ${round(simRss / nodes / 1024, 0)} KiB a node`, 'KWOK (its issue 1252): 2,000 nodes + 20,000 pods in about 0.5 GB, 7 GB after a night'],
          ['a pod created → Running, reported by its node', `${round(probeMs, 0)} ms`, ''],
        ],
        notes: [
          'The fleet is one process beside the server on the same 2 cores: its CPU is taken from the server being measured.',
          ...(heapArgs.length > 0 ? ['The server and the fleet ran with an 8 GiB heap limit (--max-old-space-size=8192) instead of V8\'s default of about 4 GiB.'] : []),
          'Latencies are the nodes\' own (client-side, from request to answer), every call of the hold, exact percentiles.',
          ...(falseNotReady.length > 0 ? [`first false NotReady in the hold: ${falseNotReady.slice(0, 3).join('; ')}`] : []),
          ...(falseNotReadyGrowing.length > 0 ? [`first false NotReady while pods start: ${falseNotReadyGrowing.slice(0, 3).join('; ')}`] : []),
        ],
      };
      tables = [table];
      return {
        tables,
        data: { store: etcd ? 'etcd-3' : 'sqlite', nodes, pods, holdMs, readyMs: round(readyMs), runMs: round(runMs), podsPerS: round(podsPerS), calls: stats.calls, falseNotReady: falseNotReady.length, falseNotReadyGrowing: falseNotReadyGrowing.length, serverCpuGrowPct: growCpu.pidPct, serverCpuHoldPct: hold.pidPct, serverMainThreadGrowPct: growCpu.mainThreadPct, serverMainThreadHoldPct: hold.mainThreadPct, cpuMsPerPodStart: costs, serverRssBytes: maxRss, serverPeakRssBytes: rssPeak, simRssBytes: simRss, simPeakRssBytes: simRssPeak, probeMs: round(probeMs) },
      };
    } finally {
      abort.abort();
      admin.close();
      // The fleet's nodes leave like agents do; at thousands that takes a while, so the server goes with it.
      await sim.stop(5_000);
      await server.stop();
      await etcd?.destroy();
      removeTempDir(dir);
      if (ctx.cpuProfDir && profilesBefore) {
        for (const p of summarizeNewProfiles(ctx.cpuProfDir, profilesBefore, growWindowUs.endUs > 0 ? growWindowUs : undefined, 25)) {
          tables.push(profileTable(p, 'scale: server while pods are created → Running'));
        }
      }
    }
  },
};
