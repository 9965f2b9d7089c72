// Suite `failover`: HA on a real 3-member etcd with 3 real `skiff server` processes
// (bench/failover.ts): per-agent API server failover, controller-manager takeover, and API
// creates/s on the etcd backend beside raw etcd puts/s on the same etcd in the same run.
import { benchFailover, FAILOVER_SERVER_FLAGS, type FailoverBenchResult, type Percentiles } from '../failover.js';
import { findEtcdBinary, ETCD_MISSING_MESSAGE } from '../../src/etcd/local-cluster.js';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { cpus } from 'node:os';
import { fmtInt, fmtMs, progress, type Table } from '../lib/util.js';

const pct = (n: number | undefined) => (n === undefined ? '-' : `${n}%`);

const CLIENTS = [1, 16, 128];
/** API creates/s as a fraction of raw etcd puts/s at 128 clients. */
const TARGET_RATIO_128 = 0.6;
/** Agents switch to another member within this (N12). */
const TARGET_SWITCH_MS = 2000;

function flag(name: string): string {
  const i = FAILOVER_SERVER_FLAGS.indexOf(name);
  return i >= 0 ? FAILOVER_SERVER_FLAGS[i + 1]! : '?';
}

export const failoverSuite: Suite = {
  name: 'failover',
  description: 'HA (3 etcd members, 3 servers): agent failover p50/p99, controller takeover, API creates/s on etcd vs raw etcd puts/s at 1/16/128 clients',
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    if (!findEtcdBinary()) throw new Error(ETCD_MISSING_MESSAGE);
    const opts = ctx.quick
      ? { agents: 6, trials: 2, takeoverTrials: 1, clients: CLIENTS, durationMs: ctx.durationMs }
      : { agents: 9, trials: 3, takeoverTrials: 3, clients: CLIENTS, durationMs: ctx.durationMs };
    const r = await benchFailover({ ...opts, log: (m) => progress(`failover: ${m}`) });
    return { tables: failoverTables(r, opts), data: { options: opts, serverFlags: FAILOVER_SERVER_FLAGS, ...r, targets: { agentSwitchMs: TARGET_SWITCH_MS, apiOverRawAt128: TARGET_RATIO_128 } } };
  },
};

function failoverTables(r: FailoverBenchResult, o: { agents: number; trials: number; takeoverTrials: number }): Table[] {
  const row = (what: string, p: Percentiles, target: string, upstream: string) => [what, String(p.samples), fmtInt(p.p50Ms), fmtInt(p.p99Ms), fmtInt(p.maxMs), target, upstream];
  const lease = flag('--leader-elect-lease-duration');
  const retry = flag('--leader-elect-retry-period');
  const at128 = r.throughput.find((t) => t.clients === 128);
  return [
    {
      title: `failover: SIGKILL of an API server (${o.trials} kills, ${o.agents} agents) and of the controller leader (${o.takeoverTrials} kills)`,
      headers: ['after SIGKILL', 'n', 'p50 ms', 'p99 ms', 'max ms', 'skiff target', 'upstream'],
      rows: [
        row('agent switched to another server', r.agentSwitch, `≤ ${fmtInt(TARGET_SWITCH_MS)}`, 'no failover (one address; needs an LB)'),
        row('agent\'s next Lease renewal', r.agentLeaseRenewal, '', ''),
        row('another member leads controllers', r.controllerTakeover, `≤ lease ${lease} + retry ${retry}`, '≤ 15 s lease + 2 s retry (defaults)'),
        row('new Deployment has its ReplicaSet', r.deploymentReplicaSet, '', ''),
      ],
      notes: [
        `agents: simulated runtime, Lease 4 s renewed every 1 s (so a renewal lands up to 1 s after the switch); servers: ${FAILOVER_SERVER_FLAGS.join(' ')}.`,
        'p99 of a handful of samples is their maximum. Upstream kubelets talk to one address; the leader-election figure is upstream\'s default timing, not measured here.',
      ],
    },
    {
      title: 'failover: API creates/s on the etcd backend vs raw etcd puts/s (same 3-member etcd, same run)',
      headers: ['clients', 'API creates/s', 'p50 ms', 'p99 ms', 'raw etcd puts/s', 'p50 ms', 'p99 ms', 'API/raw', 'HTTP/2 creates/s', 'HTTP/2 / raw', 'target'],
      rows: r.throughput.map((t) => [
        String(t.clients),
        fmtInt(t.apiCreatesPerSec),
        fmtMs(t.apiP50Ms),
        fmtMs(t.apiP99Ms),
        fmtInt(t.rawPutsPerSec),
        fmtMs(t.rawP50Ms),
        fmtMs(t.rawP99Ms),
        `${t.ratio.toFixed(2)}x`,
        t.apiH2CreatesPerSec === undefined ? '-' : fmtInt(t.apiH2CreatesPerSec),
        t.ratioH2 === undefined ? '-' : `${t.ratioH2.toFixed(2)}x`,
        t.clients === 128 ? `≥ ${TARGET_RATIO_128.toFixed(2)}x` : '',
      ]),
      notes: [
        'Measured first, on the fresh cluster (no agents yet). API: ConfigMap creates (~300 B) over HTTPS to one server (--storage etcd), one keep-alive TLS connection per client with one request in flight (bench/lib/http-load.ts). Raw: etcd3 client puts of a ~380 B value, no transaction. etcd data on /dev/shm (no fsync cost).',
        'Each cell runs its load for 1 s unmeasured first (connections, TLS handshakes, JIT).',
        ...(at128 ? [`at 128 clients: ${at128.ratio.toFixed(2)}x of raw, ${at128.ratio >= TARGET_RATIO_128 ? 'meets' : 'MISSES'} the ≥ ${TARGET_RATIO_128}x target.`] : []),
        ...(at128?.ratioH2 !== undefined
          ? [
              `HTTP/2: the 128 creates as concurrent streams on one TLS connection (h2load, generated names), the shape of client-go's traffic and of the raw etcd3 client's one gRPC channel: ${at128.ratioH2.toFixed(2)}x of raw, ${at128.ratioH2 >= TARGET_RATIO_128 ? 'meets' : 'MISSES'} the target.`,
            ]
          : []),
        ...(at128?.floorRatio !== undefined
          ? [
              `floor at 128 clients: the same load against an HTTPS server with the same TLS whose create is only JSON.parse, JSON.stringify and one EtcdStore create (no authorization, validation, managedFields, watch caches or controllers; bench/lib/floor-server.ts): ${fmtInt(at128.floorCreatesPerSec)}/s, ${at128.floorRatio.toFixed(2)}x of raw: what a do-nothing server reached over the same HTTP/1.1 transport, store and etcd client in one run (it may talk to another etcd member than the API server does).`,
            ]
          : []),
        'Everything (3 etcd members, 3 servers, agents, the load generator) shares this machine\'s cores: see the CPU table.',
      ],
    },
    {
      title: `failover: CPU during the throughput windows (% of one core; the machine has ${cpus().length * 100}%)`,
      headers: ['clients', 'load', 'writes/s', 'target server', 'its main thread', 'other 2 servers', 'etcd x3', 'load generator', 'other processes', 'machine'],
      rows: r.throughput.flatMap((t) =>
        (
          [
            ['raw etcd puts', t.rawPutsPerSec, t.rawCpu],
            ['API creates', t.apiCreatesPerSec, t.apiCpu],
          ] as const
        ).map(([what, rate, c]) => [
          String(t.clients),
          what,
          fmtInt(rate),
          pct(c?.targetServerPct),
          pct(c?.targetMainThreadPct),
          pct(c?.otherServersPct),
          pct(c?.etcdPct),
          pct(c?.benchPct),
          pct(c?.otherProcessesPct),
          pct(c?.machinePct),
        ]),
      ),
      notes: [
        'target server: the member the API load goes to; the other members run their watch caches on every write too. other processes: the machine minus all of these (work outside the benchmark skews the row).',
      ],
    },
  ];
}
