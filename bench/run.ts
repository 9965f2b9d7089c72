// `npm run bench`: runs the benchmark suites in order, prints each as a plain-text table (our
// figure beside the peer figure from the same run), and writes every figure to
// bench-results.json in the current directory.
//
//   node dist/bench/run.js [--quick] [--duration <ms>] [--cpu-prof [dir]] [--wait-idle <s>] [--out <file>] [suite...]
//
// Suites: store, api, audit, crd, webhooks, watch, then agent (bench/agent.ts) when it loads, then scheduler, autoscaler, hpa, failover,
// node-death, scenarios, scale, pod-writes, containers, volumes, dns, dashboard, resource-metrics, flood, fuzz, crash and soak; default: all, in that order. Progress
// goes to stderr, tables to stdout. The whole normal run takes well over an hour (scale ~20 minutes, crash ~10,
// soak 30); name the suites you want.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, getPriority, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Suite, SuiteContext } from './lib/suite.js';
import { machineBusyPct, progress, renderTable } from './lib/util.js';
import { storeSuite } from './suites/store.js';
import { apiSuite } from './suites/api.js';
import { watchSuite } from './suites/watch.js';
import { schedulerSuite } from './suites/scheduler.js';
import { failoverSuite } from './suites/failover.js';
import { nodeDeathSuite } from './suites/node-death.js';
import { crdSuite } from './suites/crd.js';
import { webhooksSuite } from './suites/webhooks.js';
import { autoscalerSuite } from './suites/autoscaler.js';
import { scenariosSuite } from './suites/scenarios.js';
import { podWritesSuite } from './suites/pod-writes.js';
import { scaleSuite } from './suites/scale.js';
import { floodSuite } from './suites/flood.js';
import { fuzzSuite } from './suites/fuzz.js';
import { crashSuite } from './suites/crash.js';
import { soakSuite } from './suites/soak.js';
import { containersSuite } from './suites/containers.js';
import { networkSuite } from './suites/network.js';
import { volumesSuite } from './suites/volumes.js';
import { dashboardSuite } from './suites/dashboard.js';
import { auditSuite } from './suites/audit.js';
import { hpaSuite } from './suites/hpa.js';
import { dnsSuite } from './suites/dns.js';
import { resourceMetricsSuite } from './suites/resource-metrics.js';

/**
 * Suites other people own, loaded by name so that one that does not load (yet) costs only itself.
 * Each module exports a Suite under `exportName`.
 */
const OPTIONAL_SUITES: { module: string; exportName: string }[] = [{ module: './agent.js', exportName: 'agentSuite' }];

async function loadSuites(): Promise<{ suites: Suite[]; unavailable: string[] }> {
  const suites: Suite[] = [storeSuite, apiSuite, auditSuite, crdSuite, webhooksSuite, watchSuite];
  const unavailable: string[] = [];
  for (const o of OPTIONAL_SUITES) {
    try {
      const m = (await import(o.module)) as Record<string, unknown>;
      const s = m[o.exportName] as Suite | undefined;
      if (s && typeof s.run === 'function' && typeof s.name === 'string') suites.push(s);
      else unavailable.push(`${o.module}: no ${o.exportName}`);
    } catch (e) {
      unavailable.push(`${o.module}: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
    }
  }
  suites.push(schedulerSuite, autoscalerSuite, hpaSuite, failoverSuite, nodeDeathSuite, scenariosSuite, scaleSuite, podWritesSuite, containersSuite, networkSuite, volumesSuite, dnsSuite, dashboardSuite, resourceMetricsSuite, floodSuite, fuzzSuite, crashSuite, soakSuite);
  return { suites, unavailable };
}

let SUITES: Suite[] = [];

const NORMAL_DURATION_MS = 5000;
const QUICK_DURATION_MS = 1500;
/** Above this much CPU use (% of one core) before a suite, the machine is not idle. */
const IDLE_BUSY_PCT = 25;

interface Args {
  quick: boolean;
  durationMs?: number;
  cpuProfDir?: string;
  /** Before each suite, wait up to this many seconds for the machine to be idle. */
  waitIdleS?: number;
  out: string;
  suites: Suite[];
}

function usage(): string {
  return [
    'usage: node dist/bench/run.js [options] [suite...]',
    '',
    'options:',
    `  --quick              short run: ${QUICK_DURATION_MS} ms per cell instead of ${NORMAL_DURATION_MS} ms, smaller sizes, no upstream-default node-death profile`,
    '  --duration <ms>      measuring time per cell',
    '  --cpu-prof [dir]     api, watch: also profile the server (node --cpu-prof) under the 128-client create load and the watch fan-out;',
    '                       scheduler: profile a second run in-process; print the top functions (default dir: ./bench-profiles)',
    '  --out <file>         where to write the JSON figures (default: ./bench-results.json)',
    `  --wait-idle <s>      before each suite, wait up to <s> seconds for the machine to be idle (≤ ${IDLE_BUSY_PCT}% of one core busy)`,
    '',
    'suites:',
    ...SUITES.map((s) => `  ${s.name.padEnd(10)} ${s.description}`),
  ].join('\n');
}

function parseArgs(argv: string[]): Args {
  const args: Args = { quick: false, out: resolve('bench-results.json'), suites: [] };
  const names: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--quick') args.quick = true;
    else if (a === '--duration') args.durationMs = Number(argv[++i]);
    else if (a === '--out') args.out = resolve(argv[++i] ?? 'bench-results.json');
    else if (a === '--wait-idle') args.waitIdleS = Number(argv[++i]);
    else if (a === '--cpu-prof') {
      const next = argv[i + 1];
      args.cpuProfDir = resolve(next && !next.startsWith('-') && !SUITES.some((s) => s.name === next) ? argv[++i]! : 'bench-profiles');
    } else if (a === '--help' || a === '-h') {
      console.log(usage());
      process.exit(0);
    } else if (a.startsWith('-')) {
      throw new Error(`unknown option ${a}\n\n${usage()}`);
    } else names.push(a);
  }
  if (args.durationMs !== undefined && !(args.durationMs > 0)) throw new Error('--duration needs a positive number of milliseconds');
  if (args.waitIdleS !== undefined && !(args.waitIdleS >= 0)) throw new Error('--wait-idle needs a number of seconds');
  for (const n of names) if (!SUITES.some((s) => s.name === n)) throw new Error(`unknown suite ${n}\n\n${usage()}`);
  // Always in the canonical order, each once.
  args.suites = names.length ? SUITES.filter((s) => names.includes(s.name)) : SUITES;
  return args;
}

/** Waits until three consecutive 2 s windows are idle, or maxS seconds. */
async function waitIdle(maxS: number, suite: string): Promise<void> {
  const deadline = Date.now() + maxS * 1000;
  let idleWindows = 0;
  let said = false;
  while (Date.now() < deadline) {
    const busy = await machineBusyPct(2000);
    if (busy === undefined) return;
    idleWindows = busy <= IDLE_BUSY_PCT ? idleWindows + 1 : 0;
    if (idleWindows >= 3) {
      if (said) progress(`machine idle again; starting suite ${suite}`);
      return;
    }
    if (!said && busy > IDLE_BUSY_PCT) {
      said = true;
      progress(`machine ${Math.round(busy)}% busy: waiting up to ${maxS} s for it to be idle before suite ${suite}`);
    }
  }
  progress(`machine still busy after ${maxS} s; starting suite ${suite} anyway`);
}

async function main(): Promise<number> {
  const loaded = await loadSuites();
  SUITES = loaded.suites;
  for (const u of loaded.unavailable) progress(`suite not available: ${u}`);
  let args: Args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error((e as Error).message);
    return 2;
  }
  const ctx: SuiteContext = {
    quick: args.quick,
    durationMs: args.durationMs ?? (args.quick ? QUICK_DURATION_MS : NORMAL_DURATION_MS),
    ...(args.cpuProfDir ? { cpuProfDir: args.cpuProfDir } : {}),
  };
  if (ctx.cpuProfDir) mkdirSync(ctx.cpuProfDir, { recursive: true });
  const env = {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? '',
    memoryMiB: Math.round(totalmem() / 1024 / 1024),
    platform: `${process.platform}/${process.arch}`,
    /** Scheduling priority (nice) of this process; the servers it starts inherit it. */
    nice: getPriority(),
  };
  const results: Record<string, unknown> = {
    startedAt: new Date().toISOString(),
    mode: args.quick ? 'quick' : 'normal',
    durationMsPerCell: ctx.durationMs,
    environment: env,
    suites: {} as Record<string, unknown>,
  };
  const suitesOut = results.suites as Record<string, unknown>;
  const save = () => writeFileSync(args.out, JSON.stringify(results, null, 2) + '\n');

  console.log(`skiff bench (${results.mode}, ${ctx.durationMs} ms per cell): ${args.suites.map((s) => s.name).join(', ')}`);
  console.log(`node ${env.node}, ${env.cpus} x ${env.cpuModel}, ${env.memoryMiB} MiB${env.nice ? `, nice ${env.nice}` : ''}`);
  let failed = 0;
  const busyBefore: Record<string, number | undefined> = {};
  results.machineBusyBeforeSuitePct = busyBefore;
  for (const suite of args.suites) {
    // Other processes on the machine skew every figure: wait for them if asked, say so next to the tables.
    if (args.waitIdleS) await waitIdle(args.waitIdleS, suite.name);
    const busy = await machineBusyPct(500);
    busyBefore[suite.name] = busy === undefined ? undefined : Math.round(busy);
    if (busy !== undefined && busy > IDLE_BUSY_PCT) {
      const msg = `WARNING: the machine was ${Math.round(busy)}% busy (of ${env.cpus * 100}%) before suite ${suite.name} started: other processes will skew its figures`;
      console.log(msg);
      progress(msg);
    }
    const t = performance.now();
    progress(`suite ${suite.name}: starting`);
    try {
      const r = await suite.run(ctx);
      const seconds = (performance.now() - t) / 1000;
      suitesOut[suite.name] = { seconds: Math.round(seconds * 10) / 10, ...r.data };
      console.log('');
      for (const table of r.tables) {
        console.log(renderTable(table));
        console.log('');
      }
      progress(`suite ${suite.name}: done in ${seconds.toFixed(1)} s`);
    } catch (e) {
      failed++;
      const msg = e instanceof Error ? (e.stack ?? e.message) : String(e);
      suitesOut[suite.name] = { error: msg };
      console.log(`\n${suite.name}: FAILED: ${msg}\n`);
      progress(`suite ${suite.name}: failed`);
    }
    // Written after each suite so an interrupted run still leaves the figures so far.
    save();
  }
  results.finishedAt = new Date().toISOString();
  save();
  progress(`figures written to ${args.out}`);
  return failed ? 1 : 0;
}

process.exitCode = await main();
// Every child and temp dir is released by now; exit even if a client library left a handle open.
process.exit();
