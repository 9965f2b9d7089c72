// Suite `watch`: commit->client latency with 1,000 concurrent watchers. Opens 1,000 HTTPS watch
// streams (?watch=true&resourceVersion=<rv>) on configmaps in one namespace, creates objects at a
// steady rate, and records for each (watcher, object) the time from just before the create request
// was sent to the moment that watcher received the ADDED event. Also reads the server's RSS with
// the watchers open.
//
// The watchers are raw TLS sockets speaking HTTP/1.1 by hand and scanning the bytes for events:
// the one load-generating process has to take 1,000 deliveries per create on the same 2 cores as
// the server, and node's HTTP client stack per stream would cost about as much CPU as the server.
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { KubeList } from '../../src/api/types.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';
import { profileTable, profilesIn, summarizeNewProfiles, type ProfileSummary } from '../lib/cpuprofile.js';
import { createNamespace, startSkiffServer, type SkiffServer } from '../lib/servers.js';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { CpuMeter, fmtInt, fmtMiB, fmtMs, percentile, progress, round, rssOf, sleep, type Table } from '../lib/util.js';

const NAMESPACE = 'bench-watch';
const CM_PATH = `/api/v1/namespaces/${NAMESPACE}/configmaps`;
const WATCHERS = 1000;
/** Watch requests being set up at once (TLS handshakes). */
const OPEN_PARALLELISM = 50;
const TARGET_P99_MS = 50;
/** Object names are o<phase>-<6 digits>. */
const NAME_MARK = '"name":"o';

export interface WatchPhase {
  ratePerSec: number;
  objects: number;
}

export interface WatchPhaseResult extends WatchPhase {
  eventsExpected: number;
  eventsReceived: number;
  duplicates: number;
  createErrors: number;
  latencyMs: { p50: number; p90: number; p99: number; p999: number; max: number };
  /** Per object, the time until the LAST watcher had it. */
  fanoutCompleteMs: { p50: number; p99: number; max: number };
  /** Create request round trips (POST sent -> 201 received). */
  createMs: { p50: number; p99: number; max: number };
  serverRssAfterBytes?: number;
  serverCpuPct?: number;
  serverMainThreadCpuPct?: number;
  benchCpuPct: number;
  machineCpuPct?: number;
  /** On V8's profile clock (CLOCK_MONOTONIC, microseconds): first create to last event. */
  windowUs: { startUs: number; endUs: number };
}

export interface WatchBenchResult {
  watchers: number;
  watchersOpen: number;
  /** Watch streams that failed or ended early. */
  watchErrors: number;
  firstWatchError?: string;
  openWatchersMs: number;
  serverRssBytes: { idle?: number; withWatchers?: number };
  phases: WatchPhaseResult[];
}

interface Watcher {
  socket?: tls.TLSSocket;
  /** Unscanned text carried over from the previous chunk. */
  tail: string;
  headersDone: boolean;
  ended: boolean;
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

async function runWatchBench(server: SkiffServer, phases: WatchPhase[]): Promise<WatchBenchResult> {
  const kc = parseKubeconfig(readFileSync(server.kubeconfig, 'utf8'), (p) => readFileSync(p, 'utf8'));
  const target = new URL(kc.server);
  const client = server.client();
  const watchers: Watcher[] = [];
  try {
    await createNamespace(server, NAMESPACE);
    const list = await client.get<KubeList>(CM_PATH);
    const rv = list.metadata.resourceVersion!;
    await sleep(500);
    const rssIdle = rssOf(server.pid);

    // Per phase: latency[w * objects + i], NaN until watcher w has object i.
    const latency = phases.map((p) => new Float64Array(WATCHERS * p.objects).fill(NaN));
    const sentAt = phases.map((p) => new Float64Array(p.objects).fill(NaN));
    const received = phases.map(() => 0);
    const duplicates = phases.map(() => 0);
    let watchErrors = 0;
    let firstWatchError: string | undefined;
    let closing = false;
    const watchError = (w: Watcher, msg: string) => {
      if (w.ended || closing) return;
      w.ended = true;
      watchErrors++;
      firstWatchError ??= msg;
    };

    const record = (w: number, s: string, at: number, now: number) => {
      // s[at..] is `"name":"o<phase>-<6 digits>"`.
      const dash = s.indexOf('-', at + NAME_MARK.length);
      const phase = Number(s.slice(at + NAME_MARK.length, dash));
      const i = Number(s.slice(dash + 1, dash + 7));
      const lat = latency[phase];
      if (!lat || !(i < phases[phase]!.objects)) return;
      const idx = w * phases[phase]!.objects + i;
      if (!Number.isNaN(lat[idx]!)) {
        duplicates[phase]!++;
        return;
      }
      lat[idx] = now - sentAt[phase]![i]!;
      received[phase]!++;
    };

    const onData = (w: number, watcher: Watcher, chunk: Buffer) => {
      const now = performance.now();
      // latin1: one char per byte, no decoding work; everything we look for is ASCII.
      let s = watcher.tail + chunk.toString('latin1');
      let pos = 0;
      if (!watcher.headersDone) {
        const end = s.indexOf('\r\n\r\n');
        if (end < 0) {
          watcher.tail = s;
          return;
        }
        if (!s.startsWith('HTTP/1.1 200')) {
          watchError(watcher, `watch ${w}: ${s.slice(0, s.indexOf('\r\n'))}`);
          watcher.socket?.destroy();
          return;
        }
        watcher.headersDone = true;
        pos = end + 4;
      }
      for (;;) {
        const t = s.indexOf('{"type":"', pos);
        if (t < 0) {
          // Keep a few bytes in case a marker is split across chunks.
          watcher.tail = s.length - pos > 16 ? s.slice(s.length - 16) : s.slice(pos);
          return;
        }
        const nl = s.indexOf('\n', t);
        if (nl < 0) {
          watcher.tail = s.slice(t);
          return;
        }
        if (s.startsWith('ADDED"', t + 9)) {
          const at = s.indexOf(NAME_MARK, t);
          if (at >= 0 && at < nl) record(w, s, at, now);
        } else if (s.startsWith('ERROR"', t + 9)) {
          watchError(watcher, `watch ${w}: ERROR event: ${s.slice(t, Math.min(nl, t + 300))}`);
        }
        pos = nl + 1;
      }
    };

    const request =
      `GET ${CM_PATH}?watch=true&resourceVersion=${rv} HTTP/1.1\r\n` +
      `Host: ${target.host}\r\nAccept: application/json\r\nUser-Agent: skiff-bench\r\n\r\n`;
    const open = (w: number) =>
      new Promise<void>((resolve) => {
        const watcher: Watcher = { tail: '', headersDone: false, ended: false };
        watchers[w] = watcher;
        const socket = tls.connect({
          host: target.hostname,
          port: Number(target.port),
          ca: kc.caPem,
          ...(kc.clientCertPem ? { cert: kc.clientCertPem } : {}),
          ...(kc.clientKeyPem ? { key: kc.clientKeyPem } : {}),
        });
        watcher.socket = socket;
        socket.setNoDelay(true);
        socket.once('secureConnect', () => socket.write(request));
        // Resolved once the response headers arrived (or the attempt failed).
        const check = () => {
          if (watcher.headersDone || watcher.ended) {
            socket.off('data', check);
            resolve();
          }
        };
        socket.on('data', (chunk: Buffer) => onData(w, watcher, chunk));
        socket.on('data', check);
        socket.on('error', (e) => {
          watchError(watcher, `watch ${w}: ${e.message}`);
          resolve();
        });
        socket.on('close', () => {
          watchError(watcher, `watch ${w}: connection closed`);
          resolve();
        });
      });

    progress(`watch: opening ${WATCHERS} watch streams (${OPEN_PARALLELISM} at a time)`);
    const openStart = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: OPEN_PARALLELISM }, async () => {
        while (next < WATCHERS) await open(next++);
      }),
    );
    const openWatchersMs = performance.now() - openStart;
    const watchersOpen = watchers.filter((w) => w.headersDone && !w.ended).length;
    progress(`watch: ${watchersOpen}/${WATCHERS} watch streams open after ${Math.round(openWatchersMs)} ms`);
    await sleep(1000);
    const rssWithWatchers = rssOf(server.pid);
    progress(`watch: server RSS ${fmtMiB(rssIdle)} idle, ${fmtMiB(rssWithWatchers)} with ${watchersOpen} watchers`);

    const results: WatchPhaseResult[] = [];
    const payload = 'x'.repeat(400);
    for (let p = 0; p < phases.length; p++) {
      const { ratePerSec, objects } = phases[p]!;
      progress(`watch: creating ${objects} configmaps at ${ratePerSec}/s`);
      const cpu = new CpuMeter(server.pid);
      const createMs: number[] = [];
      let createErrors = 0;
      const creates: Promise<void>[] = [];
      const interval = 1000 / ratePerSec;
      const startUs = nowUs();
      const start = performance.now();
      for (let i = 0; i < objects; i++) {
        const due = start + i * interval;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        const name = `o${p}-${String(i).padStart(6, '0')}`;
        sentAt[p]![i] = performance.now();
        creates.push(
          client.create(CM_PATH, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NAMESPACE }, data: { payload } }).then(
            () => void createMs.push(performance.now() - sentAt[p]![i]!),
            () => void createErrors++,
          ),
        );
      }
      await Promise.all(creates);
      const expected = watchersOpen * objects;
      const deadline = performance.now() + 30_000;
      while (received[p]! < expected && performance.now() < deadline) await sleep(10);
      const usage = cpu.read();
      const windowUs = { startUs, endUs: nowUs() };
      const rssAfter = rssOf(server.pid);

      const all = Array.from(latency[p]!).filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
      const fanout: number[] = [];
      for (let i = 0; i < objects; i++) {
        let max = 0;
        for (let w = 0; w < WATCHERS; w++) {
          const v = latency[p]![w * objects + i]!;
          if (!Number.isNaN(v) && v > max) max = v;
        }
        fanout.push(max);
      }
      fanout.sort((a, b) => a - b);
      createMs.sort((a, b) => a - b);
      const r: WatchPhaseResult = {
        ratePerSec,
        objects,
        eventsExpected: WATCHERS * objects,
        eventsReceived: received[p]!,
        duplicates: duplicates[p]!,
        createErrors,
        latencyMs: {
          p50: round(percentile(all, 50)),
          p90: round(percentile(all, 90)),
          p99: round(percentile(all, 99)),
          p999: round(percentile(all, 99.9)),
          max: round(all[all.length - 1] ?? NaN),
        },
        fanoutCompleteMs: { p50: round(percentile(fanout, 50)), p99: round(percentile(fanout, 99)), max: round(fanout[fanout.length - 1] ?? NaN) },
        createMs: { p50: round(percentile(createMs, 50)), p99: round(percentile(createMs, 99)), max: round(createMs[createMs.length - 1] ?? NaN) },
        ...(rssAfter !== undefined ? { serverRssAfterBytes: rssAfter } : {}),
        ...(usage.pidPct !== undefined ? { serverCpuPct: Math.round(usage.pidPct) } : {}),
        ...(usage.mainThreadPct !== undefined ? { serverMainThreadCpuPct: Math.round(usage.mainThreadPct) } : {}),
        benchCpuPct: Math.round(usage.selfPct),
        ...(usage.machinePct !== undefined ? { machineCpuPct: Math.round(usage.machinePct) } : {}),
        windowUs,
      };
      results.push(r);
      progress(
        `watch: ${ratePerSec}/s: ${r.eventsReceived}/${r.eventsExpected} events, p50 ${r.latencyMs.p50} ms, p99 ${r.latencyMs.p99} ms` +
          ` (server CPU ${r.serverCpuPct}%, bench ${r.benchCpuPct}%, machine ${r.machineCpuPct}%)`,
      );
      await sleep(500);
    }
    closing = true;
    return {
      watchers: WATCHERS,
      watchersOpen,
      watchErrors,
      ...(firstWatchError ? { firstWatchError } : {}),
      openWatchersMs: Math.round(openWatchersMs),
      serverRssBytes: { idle: rssIdle, withWatchers: rssWithWatchers },
      phases: results,
    };
  } finally {
    for (const w of watchers) {
      w.ended = true;
      w.socket?.destroy();
    }
    client.close();
  }
}

export const watchSuite: Suite = {
  name: 'watch',
  description: `watch latency commit->client p50/p99 with ${WATCHERS} watchers, server RSS`,
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    // A light rate three times over (its median p99 is the target check: one phase on a shared
    // 2-core machine says little), then the headline rate, all over the same open watchers.
    const phases: WatchPhase[] = ctx.quick
      ? [
          { ratePerSec: 10, objects: 30 },
          { ratePerSec: 50, objects: 100 },
        ]
      : [
          { ratePerSec: 10, objects: 100 },
          { ratePerSec: 10, objects: 100 },
          { ratePerSec: 10, objects: 100 },
          { ratePerSec: 50, objects: 200 },
        ];
    const server = await startSkiffServer();
    let r: WatchBenchResult;
    try {
      r = await runWatchBench(server, phases);
    } finally {
      await server.stop();
    }
    let profile: ProfileSummary[] | undefined;
    if (ctx.cpuProfDir) {
      // Profiled separately, so the profiler's overhead is not in the figures above.
      const headline = phases[phases.length - 1]!;
      progress(`watch: CPU profile: ${headline.objects} creates at ${headline.ratePerSec}/s again, against a server with --cpu-prof`);
      try {
        const before = profilesIn(ctx.cpuProfDir);
        const profiled = await startSkiffServer({ nodeArgs: ['--cpu-prof', '--cpu-prof-dir', ctx.cpuProfDir] });
        let window: { startUs: number; endUs: number } | undefined;
        try {
          const pr = await runWatchBench(profiled, [headline]);
          window = pr.phases[0]?.windowUs;
          progress(`watch: profiled run: p50 ${pr.phases[0]?.latencyMs.p50} ms, p99 ${pr.phases[0]?.latencyMs.p99} ms (profiling slows the server)`);
        } finally {
          await profiled.stop();
        }
        profile = summarizeNewProfiles(ctx.cpuProfDir, before, window, 10);
      } catch (e) {
        progress(`watch: CPU profile failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }

    const rssPerWatcherKiB = ((r.serverRssBytes.withWatchers ?? 0) - (r.serverRssBytes.idle ?? 0)) / Math.max(1, r.watchersOpen) / 1024;
    const table: Table = {
      title: `watch: create -> ADDED event at each of ${r.watchers} HTTPS watchers (ConfigMaps, one namespace)`,
      headers: ['creates/s', 'objects', 'watchers', 'events received', 'p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'last-watcher p50', 'last-watcher p99', 'create p50', 'create p99', 'server CPU', 'bench CPU', 'machine CPU'],
      rows: r.phases.map((p) => [
        String(p.ratePerSec),
        String(p.objects),
        `${r.watchersOpen}/${r.watchers}`,
        `${fmtInt(p.eventsReceived)}/${fmtInt(p.eventsExpected)}`,
        fmtMs(p.latencyMs.p50),
        fmtMs(p.latencyMs.p90),
        fmtMs(p.latencyMs.p99),
        fmtMs(p.latencyMs.p999),
        fmtMs(p.latencyMs.max),
        fmtMs(p.fanoutCompleteMs.p50),
        fmtMs(p.fanoutCompleteMs.p99),
        fmtMs(p.createMs.p50),
        fmtMs(p.createMs.p99),
        p.serverCpuPct === undefined ? '-' : `${p.serverCpuPct}%`,
        `${p.benchCpuPct}%`,
        p.machineCpuPct === undefined ? '-' : `${p.machineCpuPct}%`,
      ]),
      notes: [
        ...r.phases.map((p) => {
          const pass = p.latencyMs.p99 < TARGET_P99_MS && p.eventsReceived === p.eventsExpected && r.watchersOpen === r.watchers;
          return `target at ${p.ratePerSec}/s: p99 < ${TARGET_P99_MS} ms with every event delivered: ${pass ? 'PASS' : 'FAIL'} (p99 ${fmtMs(p.latencyMs.p99)} ms, ${fmtInt(p.eventsReceived)}/${fmtInt(p.eventsExpected)} events)`;
        }),
        ...[...new Set(r.phases.map((p) => p.ratePerSec))]
          .map((rate) => r.phases.filter((p) => p.ratePerSec === rate))
          .filter((same) => same.length > 1)
          .map((same) => {
            const p99s = same.map((p) => p.latencyMs.p99).sort((a, b) => a - b);
            const median = p99s[Math.floor(p99s.length / 2)]!;
            const all = same.every((p) => p.eventsReceived === p.eventsExpected) && r.watchersOpen === r.watchers;
            return `target at ${same[0]!.ratePerSec}/s, median p99 of ${same.length} phases: ${fmtMs(median)} ms ${median < TARGET_P99_MS && all ? 'PASS' : 'FAIL'} (p99s: ${p99s.map(fmtMs).join(', ')} ms)`;
          }),
        `latency: from just before the POST was sent until the watcher's socket delivered the ADDED event. last-watcher: per object, until the last of the ${r.watchersOpen} had it. create: POST round trip.`,
        `server RSS: ${fmtMiB(r.serverRssBytes.idle)} idle, ${fmtMiB(r.serverRssBytes.withWatchers)} with ${r.watchersOpen} watchers open (~${rssPerWatcherKiB.toFixed(1)} KiB per watcher), ` +
          r.phases.map((p) => `${fmtMiB(p.serverRssAfterBytes)} after the ${p.ratePerSec}/s phase`).join(', '),
        `CPU from the first create to the last event, % of one core (${cpus().length} cores: server and this load generator share them); opening ${r.watchers} watches took ${fmtInt(r.openWatchersMs)} ms`,
        ...r.phases
          .filter((p) => p.machineCpuPct !== undefined && p.machineCpuPct - (p.serverCpuPct ?? 0) - p.benchCpuPct > 25)
          .map((p) => `WARNING: at ${p.ratePerSec}/s other processes used ${p.machineCpuPct! - (p.serverCpuPct ?? 0) - p.benchCpuPct}% CPU (machine - server - bench): the machine was not idle`),
        ...(r.watchErrors ? [`watch errors: ${r.watchErrors}, first: ${r.firstWatchError}`] : []),
        ...r.phases.filter((p) => p.createErrors || p.duplicates).map((p) => `${p.ratePerSec}/s: ${p.createErrors} create errors, ${p.duplicates} duplicate events`),
      ],
    };
    return {
      tables: [table, ...(profile ?? []).map((p) => profileTable(p, `watch: server CPU profile, ${r.watchers} watchers, creates at ${phases[phases.length - 1]!.ratePerSec}/s`))],
      data: { ...r, ...(profile ? { cpuProfile: profile } : {}) },
    };
  },
};
