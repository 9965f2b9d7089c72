// Suite `soak`: one server on SQLite and 50 real agents (simulated runtime) for 30 minutes (4 with
// --quick; SKIFF_BENCH_SOAK_MINUTES and SKIFF_BENCH_SOAK_AGENTS override) under churn: bare pods
// created and deleted every few seconds, Deployments rolled out and scaled, Nodes deleted under
// their running agents (which restore them), agents SIGKILLed and restarted. Reported: RSS of the
// server and of the agents after warm-up (the first quarter) and at the end, and the server's live
// heap (the low points of its heap in use) at both (goal: growth ≤ 10 %), database + WAL
// size (goal: bounded by compaction and checkpoints), errors (goal 0), and whether everything
// converged at the end.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ApiClient } from '../../src/client/rest.js';
import { isStatusError } from '../../src/api/errors.js';
import type { KubeList, KubeObject } from '../../src/api/types.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';
import { eventually } from '../../test/support/eventually.js';
import { createNamespace, startSkiffServer } from '../lib/servers.js';
import { heapUsed } from '../lib/heap.js';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { fmtInt, fmtMiB, makeTempDir, percentile, progress, removeTempDir, round, rssOf, skiffEntry, sleep, startChild, type ManagedChild, type Table } from '../lib/util.js';

const TOKEN = 'soakab.0123456789abcdef';
const NS = 'soak';
const DEPLOYMENTS = 4;

interface Agent {
  name: string;
  dataDir: string;
  child: ManagedChild;
  restarted: boolean;
}

interface Sample {
  atS: number;
  serverRss: number;
  agentRss: number[];
  /** RSS of the agents never restarted, by name. */
  steadyRss: Map<string, number>;
  dbBytes: number;
}

const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);

function deployment(i: number, replicas: number): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `soak-${i}` },
    spec: {
      replicas,
      selector: { matchLabels: { app: `soak-${i}` } },
      template: { metadata: { labels: { app: `soak-${i}` } }, spec: { containers: [{ name: 'c', image: 'soak', command: ['sleep', 'infinity'], resources: { requests: { cpu: '10m', memory: '16Mi' } } }] } },
    },
  } as KubeObject;
}

const isReady = (n: KubeObject) => ((n.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

export const soakSuite: Suite = {
  name: 'soak',
  description: '50 agents under churn for 30 minutes: memory growth after warm-up, database and WAL size, errors',
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    const minutes = Number(process.env.SKIFF_BENCH_SOAK_MINUTES ?? (ctx.quick ? 4 : 30));
    const agentCount = Number(process.env.SKIFF_BENCH_SOAK_AGENTS ?? 50);
    const warmupS = Math.max(60, (minutes * 60) / 4);
    const sampleEveryS = ctx.quick ? 15 : 30;
    const dir = makeTempDir('skiff-bench-soak-');
    // Events live 5 minutes here, not upstream's hour: within the warm-up the cluster reaches the
    // state it keeps, so growth after it is drift, not the first hour's Events piling up.
    const server = await startSkiffServer({ serverArgs: ['--token', TOKEN, '--compact-interval', '1m', '--event-ttl', '5m'] });
    const agents: Agent[] = [];
    const c: ApiClient = server.client(15_000);
    const errors: string[] = [];
    const counts = { podsCreated: 0, podsDeleted: 0, rollouts: 0, scales: 0, nodeDeletions: 0, agentKills: 0 };
    const samples: Sample[] = [];
    /** The server's V8 heap in use, read every tick: its low points are what survives a collection. */
    const heapReadings: { atS: number; bytes: number }[] = [];
    const dbFile = join(server.dataDir, 'db', 'state.db');
    const dbBytes = () => [dbFile, `${dbFile}-wal`].reduce((sum, f) => sum + (statSync(f, { throwIfNoEntry: false })?.size ?? 0), 0);
    const serverUrl = parseKubeconfig(readFileSync(server.kubeconfig, 'utf8'), () => '').server;
    const startAgent = (a: Omit<Agent, 'child'> & { child?: ManagedChild }): Agent => {
      const child = startChild(
        `skiff agent ${a.name}`,
        process.execPath,
        [skiffEntry(), 'agent', '--server', serverUrl, '--token', TOKEN, '--ca-file', join(server.dataDir, 'tls', 'ca.crt'), '--data-dir', a.dataDir, '--node-name', a.name, '--runtime', 'simulated', '--kubelet-port', '0'],
        join(dir, `${a.name}.log`),
      );
      return { ...a, child };
    };
    /** An API call of the churn: a 404 or 409 is the churn racing itself; anything else is an error. */
    const churn = async (what: string, fn: () => Promise<unknown>): Promise<boolean> => {
      try {
        await fn();
        return true;
      } catch (e) {
        if (isStatusError(e, 'NotFound') || isStatusError(e, 'Conflict') || isStatusError(e, 'AlreadyExists')) return false;
        errors.push(`${what}: ${e instanceof Error ? e.message : String(e)}`);
        return false;
      }
    };
    try {
      await createNamespace(server, NS);
      for (let i = 0; i < agentCount; i++) {
        const name = `soak-${String(i + 1).padStart(2, '0')}`;
        agents.push(startAgent({ name, dataDir: join(dir, name), restarted: false }));
        // Ten at a time: fifty Node processes starting at once would starve each other on 2 cores.
        if (i % 10 === 9) await sleep(3_000);
      }
      await eventually(async () => (await c.get<KubeList>('/api/v1/nodes')).items.filter(isReady).length === agentCount, 180_000, `${agentCount} nodes Ready`, 1000);
      progress(`soak: ${agentCount} agents Ready; churn for ${minutes} min`);
      for (let i = 0; i < DEPLOYMENTS; i++) await c.create(`/apis/apps/v1/namespaces/${NS}/deployments`, deployment(i, 25));

      const t0 = performance.now();
      const elapsedS = () => (performance.now() - t0) / 1000;
      const live: { name: string; at: number }[] = [];
      let podSeq = 0;
      let tick = 0;
      let nextSample = 0;
      while (elapsedS() < minutes * 60) {
        tick++;
        // Bare pods: five new every tick, those older than a minute deleted.
        for (let k = 0; k < 5; k++) {
          const name = `bare-${podSeq++}`;
          if (await churn('create pod', () => c.create(`/api/v1/namespaces/${NS}/pods`, { metadata: { name }, spec: { containers: [{ name: 'c', image: 'soak', command: ['sleep', 'infinity'] }] } }))) {
            live.push({ name, at: elapsedS() });
            counts.podsCreated++;
          }
        }
        while (live.length > 0 && live[0]!.at < elapsedS() - 60) {
          const p = live.shift()!;
          if (await churn('delete pod', () => c.delete(`/api/v1/namespaces/${NS}/pods/${p.name}`))) counts.podsDeleted++;
        }
        if (tick % 6 === 0) {
          const i = tick % DEPLOYMENTS;
          if (await churn('roll out', () => c.patch(`/apis/apps/v1/namespaces/${NS}/deployments/soak-${i}`, { spec: { template: { metadata: { annotations: { 'soak/rev': String(tick) } } } } }))) counts.rollouts++;
          const j = (tick + 1) % DEPLOYMENTS;
          if (await churn('scale', () => c.patch(`/apis/apps/v1/namespaces/${NS}/deployments/soak-${j}/scale`, { spec: { replicas: 15 + (tick % 21) } }))) counts.scales++;
        }
        if (tick % 12 === 0) {
          const a = agents[Math.floor(Math.random() * agents.length)]!;
          if (await churn('delete node', () => c.delete(`/api/v1/nodes/${a.name}`))) counts.nodeDeletions++;
        }
        if (tick % 18 === 9) {
          const idx = Math.floor(Math.random() * agents.length);
          const a = agents[idx]!;
          a.child.killNow();
          await a.child.exited;
          agents[idx] = startAgent({ ...a, restarted: true });
          counts.agentKills++;
        }
        const heap = await heapUsed(c).catch(() => NaN);
        if (Number.isFinite(heap)) heapReadings.push({ atS: elapsedS(), bytes: heap });
        for (const a of agents) {
          if (!a.child.alive() && !errors.some((e) => e.startsWith(`agent ${a.name}`))) errors.push(`agent ${a.name} exited:\n${a.child.logTail(500)}`);
        }
        if (elapsedS() >= nextSample) {
          nextSample += sampleEveryS;
          const steady = new Map<string, number>();
          const all: number[] = [];
          for (const a of agents) {
            const r = rssOf(a.child.pid);
            if (r === undefined) continue;
            all.push(r);
            if (!a.restarted) steady.set(a.name, r);
          }
          const s: Sample = { atS: round(elapsedS(), 0), serverRss: rssOf(server.pid) ?? 0, agentRss: all, steadyRss: steady, dbBytes: dbBytes() };
          samples.push(s);
          progress(`soak: ${s.atS} s: server ${fmtMiB(s.serverRss)}, agents median ${fmtMiB(median(all))}, db+WAL ${fmtMiB(s.dbBytes)}, errors ${errors.length}`);
        }
        await sleep(5_000);
      }
      // Converged at the end: every node Ready, every Deployment available at its size.
      const converged = await eventually(async () => {
        const nodes = (await c.get<KubeList>('/api/v1/nodes')).items;
        const deps = (await c.get<KubeList>(`/apis/apps/v1/namespaces/${NS}/deployments`)).items as (KubeObject & { spec: { replicas: number }; status?: { availableReplicas?: number; updatedReplicas?: number } })[];
        return nodes.filter(isReady).length === agentCount && deps.every((d) => d.status?.availableReplicas === d.spec.replicas && d.status?.updatedReplicas === d.spec.replicas);
      }, 180_000, 'nodes Ready and Deployments available', 2000).then(() => true, (e: unknown) => {
        errors.push(`not converged: ${e instanceof Error ? e.message : String(e)}`);
        return false;
      });

      const warm = samples.filter((s) => s.atS >= warmupS).slice(0, 3);
      // Live heap, without disturbing the run (a heap snapshot would force a collection but grow
      // RSS by its own size): the lowest reading in the five minutes after warm-up and in the last five.
      const lowest = (from: number, to: number) => Math.min(...heapReadings.filter((h) => h.atS >= from && h.atS < to).map((h) => h.bytes));
      const heapWarm = lowest(warmupS, warmupS + 300);
      const heapEnd = lowest(minutes * 60 - 300, Infinity);
      const end = samples.slice(-3);
      const steadyNames = [...(end.at(-1)?.steadyRss.keys() ?? [])].filter((n) => warm.every((w) => w.steadyRss.has(n)));
      const steadyMedian = (ss: Sample[]) => median(ss.map((s) => median(steadyNames.map((n) => s.steadyRss.get(n) ?? 0))));
      const serverWarm = median(warm.map((s) => s.serverRss));
      const serverEnd = median(end.map((s) => s.serverRss));
      const agentWarm = steadyMedian(warm);
      const agentEnd = steadyMedian(end);
      const growth = (a: number, b: number) => (a > 0 ? `${round(((b - a) / a) * 100, 1)} %` : 'n/a');
      const dbWarm = warm[0]?.dbBytes ?? 0;
      const dbPeak = Math.max(...samples.map((s) => s.dbBytes));
      const dbEnd = samples.at(-1)?.dbBytes ?? 0;
      const table: Table = {
        title: `soak: ${agentCount} agents (simulated runtime) on one SQLite server, ${minutes} min of churn after they were Ready (2 cores)`,
        headers: ['figure', 'skiff', 'goal'],
        rows: [
          ['churn', `${fmtInt(counts.podsCreated)} pods created, ${fmtInt(counts.podsDeleted)} deleted; ${counts.rollouts} rollouts, ${counts.scales} scales; ${counts.nodeDeletions} Nodes deleted; ${counts.agentKills} agents SIGKILLed and restarted`, ''],
          ['server RSS after warm-up → end (growth)', `${fmtMiB(serverWarm)} → ${fmtMiB(serverEnd)} (${growth(serverWarm, serverEnd)})`, '≤ 10 %'],
          ['server heap in use, lowest of five minutes after warm-up → of the last five (growth)', `${fmtMiB(heapWarm)} → ${fmtMiB(heapEnd)} (${growth(heapWarm, heapEnd)})`, '≤ 10 %'],
          [`agent RSS, median of the ${steadyNames.length} never restarted (growth)`, `${fmtMiB(agentWarm)} → ${fmtMiB(agentEnd)} (${growth(agentWarm, agentEnd)})`, '≤ 10 %'],
          ['database + WAL after warm-up / peak / end', `${fmtMiB(dbWarm)} / ${fmtMiB(dbPeak)} / ${fmtMiB(dbEnd)}`, 'bounded'],
          ['errors (API calls, agent exits, not converged)', String(errors.length), '0'],
          ['converged at the end (all Ready, Deployments available)', converged ? 'yes' : 'no', 'yes'],
        ],
        notes: [`warm-up: the first ${round(warmupS, 0)} s; samples every ${sampleEveryS} s; compaction every minute; Events kept 5 minutes (--event-ttl 5m)`, ...errors.slice(0, 5).map((e) => e.slice(0, 200))],
      };
      return {
        tables: [table],
        data: { minutes, agents: agentCount, counts, errors, converged, serverWarm, serverEnd, agentWarm, agentEnd, heapWarm, heapEnd, dbWarm, dbPeak, dbEnd, samples: samples.map((s) => ({ atS: s.atS, serverRss: s.serverRss, agentMedian: median(s.agentRss), dbBytes: s.dbBytes })) },
      };
    } finally {
      c.close();
      await Promise.all(agents.map((a) => a.child.stop(10_000)));
      await server.stop();
      removeTempDir(dir);
    }
  },
};
