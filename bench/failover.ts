// HA benchmark (issue #5) on a real 3-member etcd and 3 real `skiff server` processes on
// 127.0.0.1/.2/.3 (bench/lib/ha.ts: the e2e harness's shape, running this build's skiff):
//   - per-agent failover: SIGKILL the member agents use; for each agent that was on it, the time
//     until it switched (its "API server failover" log line) and until its next successful Lease
//     renewal through another member (renewTime of its Lease), p50/p99;
//   - controller takeover: SIGKILL the member holding kube-system/skiff-controller-manager; time
//     until another member holds it, and until a Deployment created right after the kill has its
//     ReplicaSet;
//   - API creates/s (ConfigMaps through one real server on --storage etcd) beside raw etcd puts/s
//     from the same number of concurrent clients, on the same etcd, in the same run (measured
//     first, on the fresh cluster, with the CPU of every process over each window).
//
// benchFailover() returns the figures; bench/suites/failover.ts prints and records them. Run alone:
//   node dist/bench/failover.js [--quick]
import { eventually } from '../test/support/eventually.js';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { HaCluster, type HaAgent, type HaMember, type SkiffLauncher } from '../test/support/ha.js';
import { startFloorServer } from './lib/floor-server.js';
import { makeTempDir, removeTempDir, skiffEntry, startChild } from './lib/util.js';
import { expectOk, LeanConnection } from './lib/http-load.js';
import { h2loadInstalled, h2loadPosts, type H2LoadResult } from './lib/h2load.js';
import { ApiClient } from '../src/client/rest.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { measureWriters } from './lib/writers.js';
import type { KubeList } from '../src/api/types.js';
import { benchRawEtcd, type EtcdBenchResult } from './etcd-store.js';
import { CpuMeter, cpuSecondsOf, groupCpuMeter } from './lib/util.js';

export interface FailoverBenchOptions {
  /** Agents (simulated runtime), spread over the members they join through. */
  agents?: number;
  /** Member kills for the agent failover figure. */
  trials?: number;
  /** Leader kills for the controller takeover figure. */
  takeoverTrials?: number;
  /** Client counts for creates/s vs raw puts/s. */
  clients?: number[];
  /** Measuring window per client count and kind. */
  durationMs?: number;
  log?: (msg: string) => void;
}

export interface Percentiles {
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface ThroughputRow {
  clients: number;
  apiCreatesPerSec: number;
  apiP50Ms: number;
  apiP99Ms: number;
  rawPutsPerSec: number;
  rawP50Ms: number;
  rawP99Ms: number;
  /** apiCreatesPerSec / rawPutsPerSec (target ≥ 0.6 at 128 clients). */
  ratio: number;
  /** The same creates as `clients` HTTP/2 streams over one connection (h2load), when installed. */
  apiH2CreatesPerSec?: number;
  ratioH2?: number;
  /**
   * The floor at 128 clients: the same load against an HTTPS server that only parses, stringifies
   * and does one EtcdStore create per request (bench/lib/floor-server.ts), and its ratio to raw.
   */
  floorCreatesPerSec?: number;
  floorRatio?: number;
  /** Where the CPU went during each window. */
  apiCpu?: CpuSplit;
  rawCpu?: CpuSplit;
}

/** CPU over a measuring window, % of one core (the machine has cpus() × 100 %). */
export interface CpuSplit {
  /** The server the API load goes to (all threads). */
  targetServerPct: number;
  /** Its main (event loop) thread alone. */
  targetMainThreadPct: number;
  /** The other members (their watch caches see every write too). */
  otherServersPct: number;
  /** All etcd members. */
  etcdPct: number;
  /** This process: the load generator. */
  benchPct: number;
  /** Every process on the machine. */
  machinePct?: number;
  /** machinePct minus the processes above: other work on the machine (skews the window). */
  otherProcessesPct?: number;
}

export interface FailoverBenchResult {
  /** Kill → the agent switched to another member. */
  agentSwitch: Percentiles;
  /** Kill → the agent's next successful Lease renewal (includes waiting for its renew interval, 1 s here). */
  agentLeaseRenewal: Percentiles;
  /** Kill of the controller leader → another member holds the Lease. */
  controllerTakeover: Percentiles;
  /** Kill of the controller leader → a Deployment created right after has its ReplicaSet. */
  deploymentReplicaSet: Percentiles;
  throughput: ThroughputRow[];
}

export const FAILOVER_SERVER_FLAGS = [
  '--node-monitor-period', '1s',
  '--node-monitor-grace-period', '20s',
  '--leader-elect-lease-duration', '3s',
  '--leader-elect-renew-deadline', '2s',
  '--leader-elect-retry-period', '500ms',
];
const CONTROLLER_LEASE = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/skiff-controller-manager';
const NODE_LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';

function percentiles(xs: number[]): Percentiles {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : 0);
  return { samples: s.length, p50Ms: Math.round(at(50)), p99Ms: Math.round(at(99)), maxMs: Math.round(s[s.length - 1] ?? 0) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


/** Failover log times (ms since epoch) of an agent. */
function switchTimes(a: HaAgent): number[] {
  return a
    .logs()
    .split('\n')
    .filter((l) => l.includes('"API server failover"'))
    .map((l) => Date.parse((JSON.parse(l) as { time: string }).time));
}

/** Which member an agent talks to now: the last failover target, else its first --server. */
function currentMember(a: HaAgent, joinedThrough: string): string {
  const lines = a.logs().split('\n').filter((l) => l.includes('"API server failover"'));
  const last = lines[lines.length - 1];
  return last ? (JSON.parse(last) as { server: string }).server : joinedThrough;
}

export async function benchFailover(o: FailoverBenchOptions = {}): Promise<FailoverBenchResult> {
  const log = o.log ?? ((m: string) => console.error(`[failover] ${m}`));
  const nAgents = o.agents ?? 9;
  const trials = o.trials ?? 3;
  const takeoverTrials = o.takeoverTrials ?? 2;
  const durationMs = o.durationMs ?? 3000;
  log('starting etcd (3 members) and 3 servers');
  const dir = makeTempDir('skiff-bench-ha-');
  // A static admin token for h2load, which cannot present a client certificate.
  const tokenFile = join(dir, 'tokens.csv');
  writeFileSync(tokenFile, `${H2_TOKEN},bench-admin,1,system:masters\n`);
  const ha = await HaCluster.start({ serverFlags: [...FAILOVER_SERVER_FLAGS, '--token-auth-file', tokenFile], launch: benchLauncher, dir });
  const h2 = h2loadInstalled();
  const agents: { a: HaAgent; joined: string }[] = [];
  try {
    // --- API creates/s vs raw etcd puts/s -------------------------------------------------------
    // First, on the fresh cluster: no agents yet, no member restarted, nothing else writing.
    const throughput: ThroughputRow[] = [];
    // Each cell first runs the same load unmeasured (connections, TLS handshakes, JIT), as the api suite does.
    const warmupMs = Math.min(1000, durationMs / 2);
    for (const n of o.clients ?? [1, 16, 128]) {
      await benchRawEtcd(ha.etcd.endpoints, n, warmupMs, `/bench-raw-warmup-${Date.now()}`);
      let meter = cpuSplitMeter(ha, ha.members[0]!);
      const raw = await benchRawEtcd(ha.etcd.endpoints, n, durationMs, `/bench-raw-${Date.now()}`);
      const rawCpu = meter();
      const api = await apiCreates(ha.members[0]!, n, durationMs, warmupMs, () => (meter = cpuSplitMeter(ha, ha.members[0]!)));
      const apiCpu = meter();
      const row: ThroughputRow = {
        clients: n,
        apiCreatesPerSec: api.writesPerSec,
        apiP50Ms: api.p50Ms,
        apiP99Ms: api.p99Ms,
        rawPutsPerSec: raw.writesPerSec,
        rawP50Ms: raw.p50Ms,
        rawP99Ms: raw.p99Ms,
        ratio: Math.round((api.writesPerSec / Math.max(1, raw.writesPerSec)) * 100) / 100,
        apiCpu,
        rawCpu,
      };
      if (h2 && n === 128) {
        const h = await apiCreatesH2(ha.members[0]!, n, durationMs, dir);
        row.apiH2CreatesPerSec = h.opsPerSec;
        row.ratioH2 = Math.round((h.opsPerSec / Math.max(1, raw.writesPerSec)) * 100) / 100;
      }
      if (n === 128) {
        const member = ha.members[0]!;
        const floor = await startFloorServer({ tlsDir: join(member.dataDir, 'tls'), store: { kind: 'etcd', endpoints: ha.etcd.endpoints } });
        try {
          const f = await apiCreates({ kubeconfig: member.kubeconfig, url: floor.url }, n, durationMs, warmupMs);
          row.floorCreatesPerSec = f.writesPerSec;
          row.floorRatio = Math.round((f.writesPerSec / Math.max(1, raw.writesPerSec)) * 100) / 100;
        } finally {
          await floor.stop();
        }
      }
      log(
        `${n} clients: API creates ${row.apiCreatesPerSec}/s vs raw puts ${row.rawPutsPerSec}/s (${row.ratio}x)` +
          (row.apiH2CreatesPerSec !== undefined ? `; over HTTP/2 ${row.apiH2CreatesPerSec}/s (${row.ratioH2}x)` : '') +
          (row.floorCreatesPerSec !== undefined ? `; floor ${row.floorCreatesPerSec}/s (${row.floorRatio}x)` : ''),
      );
      throughput.push(row);
    }

    const admin = () => ha.client(ha.members.filter((m) => m.proc !== undefined), 10_000);
    for (let i = 0; i < nAgents; i++) {
      const m = ha.members[i % ha.members.length]!;
      const a = ha.agent(`bench-${i + 1}`);
      a.start([m.url]);
      agents.push({ a, joined: m.url });
    }
    await eventually(async () => {
      const c = admin();
      try {
        const leases = await c.get<KubeList>(NODE_LEASES);
        return leases.items.length === nAgents && agents.every(({ a }) => a.persistedServers().length >= 3);
      } finally {
        c.close();
      }
    }, 60_000, `${nAgents} agents registered with every member discovered`, 200);

    // --- per-agent failover ----------------------------------------------------------------
    const switchMs: number[] = [];
    const renewMs: number[] = [];
    for (let t = 0; t < trials; t++) {
      const victim = ha.members[t % ha.members.length]!;
      const onVictim = agents.filter(({ a, joined }) => currentMember(a, joined) === victim.url);
      log(`trial ${t + 1}/${trials}: SIGKILL ${victim.url} (${onVictim.length} agents on it)`);
      const killedAt = Date.now();
      await victim.killAndWait();
      const c = admin();
      try {
        const pending = new Set(onVictim.map(({ a }) => a.nodeName));
        const deadline = Date.now() + 15_000;
        while (pending.size > 0 && Date.now() < deadline) {
          const leases = await c.get<KubeList>(NODE_LEASES).catch(() => undefined);
          for (const l of leases?.items ?? []) {
            const renewed = Date.parse(String((l.spec as { renewTime?: string }).renewTime));
            if (pending.has(l.metadata.name!) && renewed > killedAt) {
              renewMs.push(renewed - killedAt);
              pending.delete(l.metadata.name!);
            }
          }
          await sleep(50);
        }
        if (pending.size) log(`  no renewal within 15 s from: ${[...pending].join(', ')}`);
      } finally {
        c.close();
      }
      for (const { a } of onVictim) {
        const sw = switchTimes(a).find((x) => x >= killedAt);
        if (sw !== undefined) switchMs.push(sw - killedAt);
      }
      victim.start();
      await victim.waitReady(ha.caPem);
    }

    // --- controller takeover -----------------------------------------------------------------
    const takeoverMs: number[] = [];
    const rsMs: number[] = [];
    for (let t = 0; t < takeoverTrials; t++) {
      let c = admin();
      const holder = (await c.get<{ spec: { holderIdentity: string } }>(CONTROLLER_LEASE)).spec.holderIdentity;
      c.close();
      // The leader logged "became leader" with its identity.
      const leader = ha.members.find((m) => m.proc && m.logs().includes(`"identity":"${holder}"`));
      if (!leader) throw new Error(`no member logged leadership as ${holder}`);
      const survivors = ha.members.filter((m) => m !== leader);
      c = ha.client(survivors, 5_000);
      const name = `takeover-${t + 1}`;
      log(`takeover ${t + 1}/${takeoverTrials}: SIGKILL controller leader ${leader.url}`);
      const killedAt = performance.now();
      await leader.killAndWait();
      await c.create('/apis/apps/v1/namespaces/default/deployments', {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name },
        spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
      });
      const newLeader = eventually(async () => {
        const l = await c.get<{ spec: { holderIdentity?: string } }>(CONTROLLER_LEASE);
        return l.spec.holderIdentity && l.spec.holderIdentity !== holder ? performance.now() : undefined;
      }, 30_000, 'a new controller leader', 20);
      const rs = eventually(async () => {
        const l = await c.get<KubeList>('/apis/apps/v1/namespaces/default/replicasets', { query: { labelSelector: `app=${name}` } });
        return l.items.length > 0 ? performance.now() : undefined;
      }, 30_000, 'the ReplicaSet of a Deployment created after the kill', 20);
      takeoverMs.push((await newLeader) - killedAt);
      rsMs.push((await rs) - killedAt);
      c.close();
      leader.start();
      await leader.waitReady(ha.caPem);
    }

    return {
      agentSwitch: percentiles(switchMs),
      agentLeaseRenewal: percentiles(renewMs),
      controllerTakeover: percentiles(takeoverMs),
      deploymentReplicaSet: percentiles(rsMs),
      throughput,
    };
  } finally {
    await Promise.all(agents.map(({ a }) => a.kill()));
    await ha.destroy();
    removeTempDir(ha.dir);
  }
}

/** Starts measuring CPU per process group; the returned function reads the split since then. */
function cpuSplitMeter(ha: HaCluster, target: HaMember): () => CpuSplit {
  const others = groupCpuMeter(ha.members.filter((m) => m !== target && m.proc).map((m) => m.proc!.child.pid!));
  const etcd = groupCpuMeter(ha.etcd.members.map((m) => m.pid).filter((p): p is number => p !== undefined));
  const targetPid = target.proc?.child.pid;
  const main = () => (targetPid ? (cpuSecondsOf(targetPid, targetPid) ?? 0) : 0);
  const start = { target: targetPid ? (cpuSecondsOf(targetPid) ?? 0) : 0, main: main() };
  const meter = new CpuMeter();
  const t0 = performance.now();
  return () => {
    const wall = (performance.now() - t0) / 1000;
    const pct = (cpuS: number) => Math.round((cpuS / wall) * 100);
    const m = meter.read();
    const split: CpuSplit = {
      targetServerPct: pct((targetPid ? (cpuSecondsOf(targetPid) ?? 0) : 0) - start.target),
      targetMainThreadPct: pct(main() - start.main),
      otherServersPct: Math.round(others()),
      etcdPct: Math.round(etcd()),
      benchPct: Math.round(m.selfPct),
    };
    if (m.machinePct !== undefined) {
      split.machinePct = Math.round(m.machinePct);
      split.otherProcessesPct = Math.max(0, split.machinePct - split.targetServerPct - split.otherServersPct - split.etcdPct - split.benchPct);
    }
    return split;
  };
}

/**
 * ConfigMap creates through one server by n concurrent clients, each on its own keep-alive TLS
 * connection (bench/lib/http-load.ts, so the load generator takes little of the shared CPU):
 * warmupMs unmeasured on the same connections, then durationMs measured (onMeasure marks its start).
 */
async function apiCreates(
  target: Pick<HaMember, 'kubeconfig' | 'url'>,
  n: number,
  durationMs: number,
  warmupMs = 0,
  onMeasure?: () => void,
): Promise<EtcdBenchResult> {
  const conns = await Promise.all(Array.from({ length: n }, () => LeanConnection.open(target.kubeconfig, target.url)));
  const ns = `bench-${n}-${Date.now()}`;
  try {
    expectOk(await conns[0]!.request('POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })));
    const creates = (phase: string) => (w: number, seq: number) => {
      const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${phase}-${w}-${seq}` }, data: { k: 'v'.repeat(200) } });
      return conns[w]!.request('POST', `/api/v1/namespaces/${ns}/configmaps`, body).then(expectOk);
    };
    if (warmupMs > 0) await measureWriters(n, warmupMs, creates('warm'));
    onMeasure?.();
    return await measureWriters(n, durationMs, creates('m'));
  } finally {
    for (const c of conns) c.close();
  }
}

const H2_TOKEN = 'skiff-bench-admin-token';

/** The same creates as `streams` concurrent HTTP/2 streams on one connection (h2load, generated names). */
async function apiCreatesH2(member: HaMember, streams: number, durationMs: number, workDir: string): Promise<H2LoadResult> {
  const c = ApiClient.fromKubeconfig(member.kubeconfig, { servers: [member.url] });
  const ns = `bench-h2-${Date.now()}`;
  try {
    await c.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  } finally {
    c.close();
  }
  const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'cm-' }, data: { k: 'v'.repeat(200) } });
  return h2loadPosts({ url: `${member.url}/api/v1/namespaces/${ns}/configmaps`, token: H2_TOKEN, body, connections: 1, streams, warmUpMs: 1000, durationMs, workDir });
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const r = await benchFailover(quick ? { agents: 6, trials: 2, takeoverTrials: 1, durationMs: 2000 } : {});
  const p = (x: Percentiles) => `p50 ${x.p50Ms} ms, p99 ${x.p99Ms} ms (n=${x.samples})`;
  console.log(`agent failover (kill → switched):         ${p(r.agentSwitch)}`);
  console.log(`agent failover (kill → next Lease renewal): ${p(r.agentLeaseRenewal)}`);
  console.log(`controller takeover (kill → new leader):   ${p(r.controllerTakeover)}`);
  console.log(`controller takeover (kill → ReplicaSet):   ${p(r.deploymentReplicaSet)}`);
  for (const t of r.throughput) {
    console.log(`${String(t.clients).padStart(3)} clients: API creates ${t.apiCreatesPerSec}/s (p50 ${t.apiP50Ms} ms, p99 ${t.apiP99Ms} ms) vs raw etcd puts ${t.rawPutsPerSec}/s (p50 ${t.rawP50Ms} ms) = ${t.ratio}x`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();

/**
 * Runs this build's skiff (not dist/ through bin/skiff.js) in process groups the bench's cleanup
 * registry knows, so an interrupted run leaves nothing behind.
 */
const benchLauncher: SkiffLauncher = (name, skiffArgs, logFile, nodeArgs) => {
  const c = startChild(name, process.execPath, [...nodeArgs, skiffEntry(), ...skiffArgs], logFile);
  return {
    name,
    child: c.proc,
    exited: c.exited,
    signal: (sig) => {
      try {
        process.kill(-c.pid, sig);
      } catch {
        /* gone */
      }
    },
    stop: (graceMs) => c.stop(graceMs),
  };
};
