// Suite `api`: ConfigMap creates and updates per second THROUGH THE API (HTTPS to a real
// `skiff server`) at 1/16/128 concurrent clients, beside raw better-sqlite3 commits/s at the same
// durability and raw etcd puts/s (etcd3 client, same value size) at the same client counts.
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { KubeObject } from '../../src/api/types.js';
import { benchRawSqlite } from '../store-sqlite.js';
import { profileTable, profilesIn, summarizeNewProfiles, type ProfileSummary } from '../lib/cpuprofile.js';
import { createNamespace, etcdInstalled, startEtcd, startSkiffServer, type EtcdServer, type SkiffServer } from '../lib/servers.js';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { expectOk, LeanConnection } from '../lib/http-load.js';
import { h2loadInstalled, h2loadPosts, type LoadFigures } from '../lib/h2load.js';
import { startFloorServer, type FloorServer } from '../lib/floor-server.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CpuMeter, fmtInt, fmtMs, makeTempDir, percentile, progress, removeTempDir, round, type Table } from '../lib/util.js';

const CLIENTS = [1, 16, 128];
/** Alternating API/raw-etcd rounds at 128 clients for the target check. */
const TARGET_ROUNDS = 3;
/** ApiClient's https.Agent allows 64 sockets; more concurrent requests queue for a socket. */
const CLIENT_MAX_SOCKETS = 64;
/** Where the creates go (also the `audit` suite's). */
export const NAMESPACE = 'bench-api';
/** The request body of a create is about this many bytes. */
const OBJECT_BYTES = 500;

export interface LoadResult extends LoadFigures {
  clients: number;
  /** CPU of the measured server process over the window, % of one core (may exceed 100: threads). */
  serverCpuPct?: number;
  /** CPU of the server's main (JavaScript event loop) thread alone. */
  serverMainThreadCpuPct?: number;
  /** CPU of this (load-generating) process over the window, % of one core. */
  benchCpuPct: number;
  /** The whole machine's CPU over the window, % of one core (200% = both cores busy): the rest is other processes. */
  machineCpuPct?: number;
  /** How many ApiClients (each 64 sockets) the load was spread over. */
  apiClients?: number;
}

/** The measuring window of the last runLoad, on the monotonic clock V8 profiles use (microseconds). */
let lastWindowUs: { startUs: number; endUs: number } | undefined;

/**
 * Runs `clients` loops for durationMs; each loop calls op(loop, i) and awaits it. setup(loop) runs
 * once per loop before the clock starts (warms connections). Counts ops completed in the window.
 */
export async function runLoad(
  clients: number,
  durationMs: number,
  setup: (loop: number) => Promise<void>,
  op: (loop: number, i: number) => Promise<void>,
  pid?: number,
): Promise<Omit<LoadResult, 'clients'>> {
  await Promise.all(Array.from({ length: clients }, (_, l) => setup(l)));
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const cpu = new CpuMeter(pid);
  const startUs = Number(process.hrtime.bigint() / 1000n);
  const start = performance.now();
  const end = start + durationMs;
  const loop = async (l: number) => {
    let i = 0;
    while (performance.now() < end) {
      const t = performance.now();
      try {
        await op(l, i++);
        const done = performance.now();
        if (done <= end) latencies.push(done - t);
      } catch (e) {
        errors++;
        firstError ??= e instanceof Error ? e.message : String(e);
      }
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, l) => loop(l)));
  lastWindowUs = { startUs, endUs: startUs + durationMs * 1000 };
  const usage = cpu.read();
  latencies.sort((a, b) => a - b);
  return {
    opsPerSec: Math.round((latencies.length / durationMs) * 1000),
    ops: latencies.length,
    errors,
    ...(firstError ? { firstError } : {}),
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    ...(usage.pidPct !== undefined ? { serverCpuPct: Math.round(usage.pidPct) } : {}),
    ...(usage.mainThreadPct !== undefined ? { serverMainThreadCpuPct: Math.round(usage.mainThreadPct) } : {}),
    benchCpuPct: Math.round(usage.selfPct),
    ...(usage.machinePct !== undefined ? { machineCpuPct: Math.round(usage.machinePct) } : {}),
  };
}

/**
 * Creates at `path` from `clients` kept connections for durationMs, each body `make(name)` with a
 * name unique to `tag`, a loop and a count; one warm-up create per connection before the clock starts.
 */
export async function createLoad(server: LoadTarget, path: string, make: (name: string) => unknown, clients: number, durationMs: number, tag: string): Promise<LoadResult> {
  const conns = await leanConnections(server, clients);
  try {
    const r = await runLoad(
      clients,
      durationMs,
      // One warm-up create per connection, so TLS handshakes and first requests are outside the window.
      async (l) => void expectOk(await conns[l]!.request('POST', path, JSON.stringify(make(`${tag}-l${l}-warm`)))),
      async (l, i) => void expectOk(await conns[l]!.request('POST', path, JSON.stringify(make(`${tag}-l${l}-${i}`)))),
      server.pid,
    );
    return { clients, ...r };
  } finally {
    for (const c of conns) c.close();
  }
}

function configMap(name: string, payloadBytes: number, rev = 0): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: NAMESPACE, labels: { app: 'skiff-bench' } },
    data: { rev: String(rev), payload: 'x'.repeat(payloadBytes) },
  };
}

/** Pads the payload so the create body is OBJECT_BYTES long. */
const PAYLOAD_BYTES = OBJECT_BYTES - JSON.stringify(configMap('c128-l127-000000', 0)).length;

const CM_PATH = `/api/v1/namespaces/${NAMESPACE}/configmaps`;

/** Creates through skiff's own ApiClient (https.request underneath): what a Node program pays. */
async function apiClientCreates(server: SkiffServer, clients: number, durationMs: number, tag: string): Promise<LoadResult> {
  // One ApiClient per 64 loops: its https.Agent allows 64 sockets.
  const cs = Array.from({ length: Math.ceil(clients / CLIENT_MAX_SOCKETS) }, () => server.client());
  const clientOf = (l: number) => cs[Math.floor(l / CLIENT_MAX_SOCKETS) % cs.length]!;
  try {
    const r = await runLoad(
      clients,
      durationMs,
      // One warm-up create per loop, so TLS handshakes are outside the window.
      async (l) => void (await clientOf(l).create(CM_PATH, configMap(`${tag}-l${l}-warm`, PAYLOAD_BYTES))),
      async (l, i) => void (await clientOf(l).create(CM_PATH, configMap(`${tag}-l${l}-${i}`, PAYLOAD_BYTES))),
      server.pid,
    );
    return { clients, ...r, apiClients: cs.length };
  } finally {
    for (const c of cs) c.close();
  }
}

/** Where the lean connections go: a skiff server, or a floor server with its TLS material (url). */
interface LoadTarget {
  kubeconfig: string;
  url?: string;
  pid?: number;
}

/** One keep-alive TLS connection per client loop (bench/lib/http-load.ts). */
async function leanConnections(server: LoadTarget, clients: number): Promise<LeanConnection[]> {
  return Promise.all(Array.from({ length: clients }, () => LeanConnection.open(server.kubeconfig, server.url)));
}

/** ConfigMap creates of OBJECT_BYTES in NAMESPACE, one lean connection per client (also the `audit` suite's load). */
export function apiCreates(server: LoadTarget, clients: number, durationMs: number, tag: string): Promise<LoadResult> {
  return createLoad(server, CM_PATH, (name) => configMap(name, PAYLOAD_BYTES), clients, durationMs, tag);
}

/** The bearer token of the bench's static admin user (h2load cannot present a certificate). */
const BENCH_TOKEN = 'skiff-bench-admin-token';

/** Starts a server that also takes BENCH_TOKEN, for h2load. */
async function startBenchServer(opts: { nodeArgs?: string[] } = {}): Promise<SkiffServer> {
  const dir = makeTempDir('skiff-bench-tokens-');
  const file = join(dir, 'tokens.csv');
  writeFileSync(file, `${BENCH_TOKEN},bench-admin,1,system:masters\n`);
  const server = await startSkiffServer({ ...opts, serverArgs: ['--token-auth-file', file] });
  const stop = server.stop.bind(server);
  server.stop = async () => {
    await stop();
    removeTempDir(dir);
  };
  return server;
}

/**
 * Creates over HTTP/2: one TLS connection carrying `streams` concurrent requests, as client-go
 * multiplexes a process's requests and as the etcd3 client carries puts over one gRPC channel.
 * Names come from generateName, since h2load sends one body.
 */
async function apiCreatesH2(server: SkiffServer, streams: number, durationMs: number): Promise<LoadResult> {
  const url = /server:\s*(\S+)/.exec(readFileSync(server.kubeconfig, 'utf8'))![1]!;
  const body = configMap('', PAYLOAD_BYTES);
  body.metadata = { generateName: 'h2-', namespace: NAMESPACE, labels: { app: 'skiff-bench' } };
  const dir = makeTempDir('skiff-bench-h2load-');
  const cpu = new CpuMeter(server.pid);
  try {
    const r = await h2loadPosts({
      url: `${url}${CM_PATH}`,
      token: BENCH_TOKEN,
      body: JSON.stringify(body),
      connections: 1,
      streams,
      warmUpMs: 1000,
      durationMs,
      workDir: dir,
    });
    const usage = cpu.read();
    return {
      clients: streams,
      opsPerSec: r.opsPerSec,
      ops: r.ops,
      errors: r.errors,
      ...(r.firstError ? { firstError: r.firstError } : {}),
      p50Ms: r.p50Ms,
      p99Ms: r.p99Ms,
      ...(usage.pidPct !== undefined ? { serverCpuPct: Math.round(usage.pidPct) } : {}),
      ...(usage.mainThreadPct !== undefined ? { serverMainThreadCpuPct: Math.round(usage.mainThreadPct) } : {}),
      benchCpuPct: r.loadGenCpuPct ?? 0,
      ...(usage.machinePct !== undefined ? { machineCpuPct: Math.round(usage.machinePct) } : {}),
    };
  } finally {
    removeTempDir(dir);
  }
}

async function apiUpdates(server: SkiffServer, clients: number, durationMs: number, tag: string): Promise<LoadResult> {
  const conns = await leanConnections(server, clients);
  const last: KubeObject[] = [];
  try {
    const r = await runLoad(
      clients,
      durationMs,
      async (l) => {
        const res = expectOk(await conns[l]!.request('POST', CM_PATH, JSON.stringify(configMap(`${tag}-l${l}`, PAYLOAD_BYTES))));
        last[l] = JSON.parse(res.body.toString('utf8')) as KubeObject;
      },
      async (l, i) => {
        // PUT of the last returned object (carries its resourceVersion: compare-and-swap).
        const obj = last[l]!;
        obj.data = { ...(obj.data as Record<string, string>), rev: String(i + 1) };
        const res = expectOk(await conns[l]!.request('PUT', `${CM_PATH}/${obj.metadata.name}`, JSON.stringify(obj)));
        last[l] = JSON.parse(res.body.toString('utf8')) as KubeObject;
      },
      server.pid,
    );
    return { clients, ...r };
  } finally {
    for (const c of conns) c.close();
  }
}

async function etcdPuts(etcd: EtcdServer, clients: number, durationMs: number, value: string): Promise<LoadResult> {
  const client = etcd.client();
  try {
    const r = await runLoad(
      clients,
      durationMs,
      async (l) => void (await client.put(`/registry/configmaps/${NAMESPACE}/warm-${clients}-${l}`).value(value)),
      async (l, i) => void (await client.put(`/registry/configmaps/${NAMESPACE}/c${clients}-l${l}-${i}`).value(value)),
      etcd.pid,
    );
    return { clients, ...r };
  } finally {
    client.close();
  }
}

export const apiSuite: Suite = {
  name: 'api',
  description: 'creates/updates per second through the API at 1/16/128 clients vs raw better-sqlite3 and raw etcd',
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    const creates: LoadResult[] = [];
    const updates: LoadResult[] = [];
    let createsSharedClient: LoadResult | undefined;
    let storedBytes = 0;

    // --- through the API
    const h2 = h2loadInstalled();
    let createsH2: LoadResult | undefined;
    let server: SkiffServer | undefined = await startBenchServer();
    try {
      await createNamespace(server, NAMESPACE);
      const admin = server.client();
      try {
        // Warm the server's JIT a little and learn the stored object size.
        const probe = await admin.create<KubeObject>(CM_PATH, configMap('probe', PAYLOAD_BYTES));
        const { resourceVersion: _rv, ...meta } = probe.metadata;
        storedBytes = JSON.stringify({ ...probe, metadata: meta }).length;
      } finally {
        admin.close();
      }
      progress(`api: warm-up (16 clients, ${Math.min(1000, ctx.durationMs)} ms)`);
      await apiCreates(server, 16, Math.min(1000, ctx.durationMs), 'warm');
      for (const c of CLIENTS) {
        progress(`api: creates, ${c} clients, ${ctx.durationMs} ms`);
        const r = await apiCreates(server, c, ctx.durationMs, `c${c}`);
        creates.push(r);
        progress(`api: creates, ${c} clients: ${r.opsPerSec}/s (p99 ${r.p99Ms} ms, ${r.errors} errors, server CPU ${r.serverCpuPct}%)`);
      }
      for (const c of CLIENTS) {
        progress(`api: updates, ${c} clients, ${ctx.durationMs} ms`);
        const r = await apiUpdates(server, c, ctx.durationMs, `u${c}`);
        updates.push(r);
        progress(`api: updates, ${c} clients: ${r.opsPerSec}/s (p99 ${r.p99Ms} ms, ${r.errors} errors, server CPU ${r.serverCpuPct}%)`);
      }
      progress(`api: creates, 128 clients through skiff's ApiClient (https.request), ${ctx.durationMs} ms`);
      createsSharedClient = await apiClientCreates(server, 128, ctx.durationMs, 'apiclient');
      progress(`api: creates, 128 clients, ApiClient: ${createsSharedClient.opsPerSec}/s`);
      if (h2) {
        progress(`api: creates over HTTP/2, 1 connection x 128 streams (h2load), ${ctx.durationMs} ms`);
        createsH2 = await apiCreatesH2(server, 128, ctx.durationMs);
        progress(`api: creates over HTTP/2: ${createsH2.opsPerSec}/s (p99 ${createsH2.p99Ms} ms, ${createsH2.errors} errors)`);
      } else {
        progress('api: h2load not installed (apt-get install nghttp2-client): no HTTP/2 cells');
      }
    } finally {
      await server.stop();
      server = undefined;
    }

    // --- raw better-sqlite3, same durability
    const dir = makeTempDir('skiff-bench-raw-');
    let raw: { writesPerSec: number; writes: number };
    try {
      progress(`api: raw better-sqlite3 commits, ${ctx.durationMs} ms`);
      raw = await benchRawSqlite(dir, ctx.durationMs);
      progress(`api: raw better-sqlite3: ${raw.writesPerSec} commits/s`);
    } finally {
      removeTempDir(dir);
    }

    // --- raw etcd
    const etcdResults: LoadResult[] = [];
    let etcdNote: string | undefined;
    let etcdError: string | undefined;
    if (!etcdInstalled()) {
      etcdNote = 'etcd not installed';
      progress('api: etcd not installed');
    } else {
      try {
        const etcd = await startEtcd();
        try {
          const value = 'x'.repeat(storedBytes);
          progress(`api: etcd warm-up (16 clients)`);
          await etcdPuts(etcd, 16, Math.min(1000, ctx.durationMs), value);
          for (const c of CLIENTS) {
            progress(`api: etcd puts, ${c} clients, ${ctx.durationMs} ms`);
            const r = await etcdPuts(etcd, c, ctx.durationMs, value);
            etcdResults.push(r);
            progress(`api: etcd puts, ${c} clients: ${r.opsPerSec}/s (p99 ${r.p99Ms} ms, etcd CPU ${r.serverCpuPct}%)`);
          }
        } finally {
          await etcd.stop();
        }
      } catch (e) {
        // Keep the API figures: the etcd cells say what went wrong.
        etcdResults.length = 0;
        etcdNote = 'etcd failed';
        etcdError = e instanceof Error ? e.message : String(e);
        progress(`api: etcd failed: ${etcdError}`);
      }
    }

    // --- the target, measured robustly: API and raw etcd cells alternate, so a slower or faster
    // spell of a shared machine falls on both sides of the ratio
    const rounds: { api: number; etcd: number; apiH2?: number; floor: number }[] = [];
    if (etcdInstalled() && !etcdError) {
      const floorDir = makeTempDir('skiff-bench-floor-');
      const [srv, etcd] = await Promise.all([startBenchServer(), startEtcd()]);
      let floor: FloorServer | undefined;
      try {
        floor = await startFloorServer({ tlsDir: join(srv.dataDir, 'tls'), store: { kind: 'sqlite', path: join(floorDir, 'floor.db') } });
        const floorTarget: LoadTarget = { kubeconfig: srv.kubeconfig, url: floor.url, pid: floor.pid };
        await createNamespace(srv, NAMESPACE);
        const value = 'x'.repeat(storedBytes);
        await apiCreates(srv, 16, Math.min(1000, ctx.durationMs), 'rwarm');
        await etcdPuts(etcd, 16, Math.min(1000, ctx.durationMs), value);
        await apiCreates(floorTarget, 16, Math.min(1000, ctx.durationMs), 'fwarm');
        for (let i = 0; i < TARGET_ROUNDS; i++) {
          progress(`api: target round ${i + 1}/${TARGET_ROUNDS}: API creates, etcd puts, floor creates, 128 clients, ${ctx.durationMs} ms each`);
          const a = await apiCreates(srv, 128, ctx.durationMs, `r${i}`);
          const e = await etcdPuts(etcd, 128, ctx.durationMs, value);
          const a2 = h2 ? await apiCreatesH2(srv, 128, ctx.durationMs) : undefined;
          const f = await apiCreates(floorTarget, 128, ctx.durationMs, `f${i}`);
          rounds.push({ api: a.opsPerSec, etcd: e.opsPerSec, floor: f.opsPerSec, ...(a2 ? { apiH2: a2.opsPerSec } : {}) });
          progress(
            `api: target round ${i + 1}: ${a.opsPerSec} vs ${e.opsPerSec} (${(a.opsPerSec / e.opsPerSec).toFixed(2)}x)` +
              (a2 ? `; HTTP/2 ${a2.opsPerSec} (${(a2.opsPerSec / e.opsPerSec).toFixed(2)}x)` : '') +
              `; floor ${f.opsPerSec} (${(f.opsPerSec / e.opsPerSec).toFixed(2)}x)`,
          );
        }
      } finally {
        await Promise.all([srv.stop(), etcd.stop(), floor?.stop()]);
        removeTempDir(floorDir);
      }
    }

    // --- CPU profile of the server under the 128-client create load
    let profile: ProfileSummary[] | undefined;
    let profileError: string | undefined;
    if (ctx.cpuProfDir) {
      try {
        profile = await profileCreates(ctx);
      } catch (e) {
        profileError = e instanceof Error ? e.message : String(e);
        progress(`api: CPU profile failed: ${profileError}`);
      }
    }

    // --- tables
    const etcdAt = (c: number) => etcdResults.find((r) => r.clients === c);
    const ratio = (a: number, b: number | undefined) => (b ? `${(a / b).toFixed(2)}x` : '-');
    const main: Table = {
      title: `api: objects/s through the API (HTTPS, ConfigMap ${OBJECT_BYTES} B body, ~${storedBytes} B stored) vs raw stores (same run)`,
      headers: ['clients', 'API creates/s', 'API updates/s', 'raw sqlite commits/s', 'raw etcd puts/s', 'creates/etcd', 'updates/etcd'],
      rows: CLIENTS.map((c, i) => {
        const e = etcdAt(c);
        return [
          String(c),
          fmtInt(creates[i]!.opsPerSec),
          fmtInt(updates[i]!.opsPerSec),
          fmtInt(raw.writesPerSec),
          etcdNote ?? fmtInt(e?.opsPerSec),
          etcdNote ? '-' : ratio(creates[i]!.opsPerSec, e?.opsPerSec),
          etcdNote ? '-' : ratio(updates[i]!.opsPerSec, e?.opsPerSec),
        ];
      }),
      notes: [],
    };
    const e128 = etcdAt(128);
    const c128 = creates[CLIENTS.indexOf(128)]!;
    const u128 = updates[CLIENTS.indexOf(128)]!;
    const ratios = rounds.map((r) => r.api / r.etcd).sort((a, b) => a - b);
    const medianRatio = ratios.length ? ratios[Math.floor(ratios.length / 2)]! : undefined;
    if (medianRatio !== undefined) {
      main.notes!.push(
        `target (API creates on SQLite at 128 clients >= 2x raw etcd puts), median of ${rounds.length} alternating rounds: ${medianRatio.toFixed(2)}x ${medianRatio >= 2 ? 'PASS' : 'FAIL'} ` +
          `(rounds: ${rounds.map((r) => `${fmtInt(r.api)} vs ${fmtInt(r.etcd)}`).join('; ')})`,
      );
    }
    const floorRatios = rounds.map((r) => r.floor / r.etcd).sort((a, b) => a - b);
    const medianFloorRatio = floorRatios.length ? floorRatios[Math.floor(floorRatios.length / 2)]! : undefined;
    if (medianFloorRatio !== undefined) {
      main.notes!.push(
        `floor, same rounds: an HTTPS server with the same TLS and client whose create is only JSON.parse, JSON.stringify and one SqliteStore create ` +
          `(no authorization, validation, managedFields, watch cache or controllers; bench/lib/floor-server.ts): ${medianFloorRatio.toFixed(2)}x raw etcd ` +
          `(${rounds.map((r) => fmtInt(r.floor)).join('; ')}): what a do-nothing server reached over the same HTTP/1.1 transport and store in this run, the ceiling the API cells are to be read against.`,
      );
    }
    const h2Ratios = rounds.filter((r) => r.apiH2 !== undefined).map((r) => r.apiH2! / r.etcd).sort((a, b) => a - b);
    const medianH2Ratio = h2Ratios.length ? h2Ratios[Math.floor(h2Ratios.length / 2)]! : undefined;
    if (medianH2Ratio !== undefined) {
      main.notes!.push(
        `the same over HTTP/2 (1 connection x 128 streams, as client-go and the etcd3 client multiplex), same rounds: ${medianH2Ratio.toFixed(2)}x ${medianH2Ratio >= 2 ? 'PASS' : 'FAIL'} ` +
          `(${rounds.map((r) => `${fmtInt(r.apiH2)} vs ${fmtInt(r.etcd)}`).join('; ')})`,
      );
    }
    if (e128) {
      const rc = c128.opsPerSec / e128.opsPerSec;
      const ru = u128.opsPerSec / e128.opsPerSec;
      main.notes!.push(`rows above, cells minutes apart: creates ${rc.toFixed(2)}x, updates ${ru.toFixed(2)}x of raw etcd at 128 clients`);
    } else {
      main.notes!.push(`target (API on SQLite at 128 clients >= 2x raw etcd): not measured (${etcdNote ?? 'no etcd figure'})`);
    }
    main.notes!.push(`raw sqlite: one writer, one INSERT per autocommit transaction, WAL + synchronous=FULL (same figure in every row: SQLite serializes writers).`);
    main.notes!.push(`raw etcd: etcd3 client (one gRPC channel), puts of ${storedBytes} B values, N concurrent awaiting loops.`);

    const detailRow = (label: string, r: LoadResult | undefined): string[] =>
      r
        ? [
            label,
            String(r.clients),
            fmtInt(r.opsPerSec),
            fmtMs(r.p50Ms),
            fmtMs(r.p99Ms),
            String(r.errors),
            r.serverCpuPct === undefined ? '-' : `${r.serverCpuPct}%`,
            r.serverMainThreadCpuPct === undefined ? '-' : `${r.serverMainThreadCpuPct}%`,
            `${r.benchCpuPct}%`,
            r.machineCpuPct === undefined ? '-' : `${r.machineCpuPct}%`,
          ]
        : [label, '-', etcdNote ?? '-', '-', '-', '-', '-', '-', '-', '-'];
    const detail: Table = {
      title: 'api: per-cell detail (latency per request; CPU as % of one core over the window, 2 cores total)',
      headers: ['cell', 'clients', 'ops/s', 'p50 ms', 'p99 ms', 'errors', 'server CPU', 'main thread', 'bench CPU', 'machine CPU'],
      rows: [
        ...creates.map((r) => detailRow('API create', r)),
        ...updates.map((r) => detailRow('API update (PUT, CAS)', r)),
        detailRow('API create via ApiClient', createsSharedClient),
        ...(createsH2 ? [detailRow('API create, HTTP/2 streams', createsH2)] : []),
        ...(etcdResults.length ? etcdResults.map((r) => detailRow('etcd put', r)) : [detailRow('etcd put', undefined)]),
      ],
      notes: [
        `server CPU: the skiff server (or etcd) process, all threads; main thread: its event-loop thread alone. bench CPU: this load generator. machine CPU: all processes (max ${cpus().length * 100}%).`,
        `API cells: one keep-alive TLS connection per client with one request in flight, requests written as prepared bytes (bench/lib/http-load.ts), as a Go client or wrk would load the server. 'API create via ApiClient': the same 128-client load through skiff's own ApiClient (Node https.request, one client per ${CLIENT_MAX_SOCKETS} loops), which spends far more of the shared CPU in the load generator.`,
      ],
    };
    const cells = [...creates, ...updates, ...etcdResults, ...(createsSharedClient ? [createsSharedClient] : [])];
    const others = cells.filter((r) => r.machineCpuPct !== undefined).map((r) => r.machineCpuPct! - (r.serverCpuPct ?? 0) - r.benchCpuPct);
    if (others.length) {
      const avg = others.reduce((a, b) => a + b, 0) / others.length;
      detail.notes!.push(
        `other processes (machine - server - bench): ${Math.round(avg)}% on average, up to ${Math.round(Math.max(...others))}%` +
          (avg > 25 ? ' -- WARNING: the machine was not idle; these figures understate what skiff and etcd can do' : ''),
      );
    }
    if (createsH2) {
      detail.notes!.push(
        `'API create, HTTP/2 streams': h2load (nghttp2, C) with one TLS connection carrying 128 concurrent POSTs, the shape of client-go's and the etcd3 client's traffic; bench CPU is h2load's, server CPU includes its 1 s warm-up.`,
      );
    }
    const errs = [...creates, ...updates, ...etcdResults, ...(createsSharedClient ? [createsSharedClient] : []), ...(createsH2 ? [createsH2] : [])].filter((r) => r.errors > 0);
    for (const r of errs) detail.notes!.push(`errors at ${r.clients} clients: ${r.errors}, first: ${r.firstError}`);

    if (etcdError) main.notes!.push(`etcd failed: ${etcdError.split('\n')[0]}`);
    if (profileError) detail.notes!.push(`CPU profile failed: ${profileError.split('\n')[0]}`);
    const tables = [main, detail];
    if (profile) tables.push(...profile.map((p) => profileTable(p, 'api: server CPU profile under 128-client creates')));

    return {
      tables,
      data: {
        durationMs: ctx.durationMs,
        objectBytes: OBJECT_BYTES,
        storedBytes,
        creates,
        updates,
        createsViaApiClient: createsSharedClient,
        rawSqlite: raw,
        etcd: etcdNote ? { error: etcdError ?? etcdNote } : etcdResults,
        ratio128: e128 ? { creates: round(c128.opsPerSec / e128.opsPerSec), updates: round(u128.opsPerSec / e128.opsPerSec) } : undefined,
        targetRounds: rounds,
        targetMedianRatio: medianRatio === undefined ? undefined : round(medianRatio),
        createsHttp2: createsH2,
        targetMedianRatioHttp2: medianH2Ratio === undefined ? undefined : round(medianH2Ratio),
        floorMedianRatio: medianFloorRatio === undefined ? undefined : round(medianFloorRatio),
        ...(profile ? { cpuProfile: profile } : {}),
      },
    };
  },
};

/** A fresh server with --cpu-prof under the 128-client create load; returns its profiles' top functions. */
async function profileCreates(ctx: SuiteContext): Promise<ProfileSummary[]> {
  const dir = ctx.cpuProfDir!;
  const before = profilesIn(dir);
  progress(`api: CPU profile: server with --cpu-prof, 128-client creates, ${ctx.durationMs} ms`);
  const server = await startSkiffServer({ nodeArgs: ['--cpu-prof', '--cpu-prof-dir', dir] });
  let r: LoadResult;
  let window: { startUs: number; endUs: number } | undefined;
  try {
    await createNamespace(server, NAMESPACE);
    await apiCreates(server, 16, Math.min(1000, ctx.durationMs), 'warm');
    r = await apiCreates(server, 128, ctx.durationMs, 'prof');
    window = lastWindowUs;
  } finally {
    // SIGTERM: the server exits through process.exit, which writes the profiles.
    await server.stop();
  }
  progress(`api: profiled run: ${r.opsPerSec} creates/s (profiling slows the server)`);
  return summarizeNewProfiles(dir, before, window, 10);
}
