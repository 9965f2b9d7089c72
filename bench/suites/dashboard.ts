// Suite `dashboard`: `skiff dashboard` in headless Chromium (Debian's chromium, driven by
// playwright-core) beside a `skiff sim` fleet of N nodes on one server. Reported per size: time
// to first render (navigation → every node counted on the page), the page's JavaScript heap and DOM
// size, the dashboard process's RSS, and the update latency API → page (a node cordoned through
// the API → the page's cordoned count moves), p50/p99 over sequential samples. The peer figure is
// what a person would type instead: `kubectl get nodes` against the same cluster, in the same run.
// Sizes: --quick 1,000 nodes; otherwise 1,000 and 5,000 (SKIFF_BENCH_DASHBOARD_NODES overrides).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { chromium } from 'playwright-core';
import type { KubeList } from '../../src/api/types.js';
import { startSkiffServer, type SkiffServer } from '../lib/servers.js';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { fmtInt, fmtMiB, fmtMs, makeTempDir, percentile, progress, removeTempDir, rssOf, skiffEntry, startChild, until, type ManagedChild, type Table } from '../lib/util.js';

const CHROMIUM = process.env.SKIFF_CHROMIUM_BIN ?? '/usr/bin/chromium';
const UPDATE_SAMPLES = 40;

interface SizeFigures {
  nodes: number;
  firstRenderMs: number;
  jsHeapBytes: number;
  domNodes: number;
  /** Node rows in the page's DOM (the list draws those in view). */
  rowsDrawn: number;
  dashboardRssBytes?: number;
  updateP50Ms: number;
  updateP99Ms: number;
  kubectlGetNodesMs: number;
}

/** The page's side, run in the browser: whether the header's count of `what` reads `n`. */
function countIs([what, n]: [string, number]): boolean {
  const doc = (globalThis as unknown as { document: { querySelector(s: string): { textContent: string | null } | null } }).document;
  return doc.querySelector(`[data-count-of="${what}"] strong`)?.textContent === String(n);
}

function kubectlTime(kubeconfig: string): Promise<number> {
  const t = performance.now();
  return new Promise((resolve, reject) =>
    execFile('kubectl', ['--kubeconfig', kubeconfig, 'get', 'nodes', '--no-headers'], { maxBuffer: 64 * 2 ** 20 }, (err) => (err ? reject(err) : resolve(performance.now() - t))),
  );
}

async function measure(nodes: number, dir: string): Promise<SizeFigures> {
  let server: SkiffServer | undefined;
  let sim: ManagedChild | undefined;
  let dashboard: ManagedChild | undefined;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
  try {
    server = await startSkiffServer();
    const admin = server.client(60_000);
    sim = startChild('skiff sim', process.execPath, [skiffEntry(), 'sim', '--kubeconfig', server.kubeconfig, '--nodes', String(nodes), '--data-dir', join(dir, `sim-${nodes}`), '--log-format', 'json'], join(dir, `sim-${nodes}.log`));
    progress(`dashboard: ${fmtInt(nodes)} simulated nodes registering`);
    await until(`${nodes} nodes Ready`, 20 * 60_000, async () => {
      const list = await admin.get<KubeList>('/api/v1/nodes');
      return list.items.filter((n) => ((n.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')).length >= nodes;
    }, 2000);
    const log = join(dir, `dashboard-${nodes}.log`);
    dashboard = startChild('skiff dashboard', process.execPath, [skiffEntry(), 'dashboard', '--kubeconfig', server.kubeconfig, '--listen', '127.0.0.1:0', '--log-format', 'json'], log);
    let url = '';
    await until('the dashboard listening', 30_000, async () => {
      url = /dashboard: (http:\/\/\S+)/.exec(existsSync(log) ? readFileSync(log, 'utf8') : '')?.[1] ?? '';
      return url !== '';
    }, 100);
    const kubectlMs = await kubectlTime(server.kubeconfig);
    progress(`dashboard: first render of ${fmtInt(nodes)} nodes`);
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const t0 = performance.now();
    await page.goto(url);
    await page.waitForFunction(countIs, ['Ready', nodes] as [string, number], { polling: 'raf', timeout: 120_000 });
    const firstRenderMs = performance.now() - t0;

    progress(`dashboard: ${UPDATE_SAMPLES} updates API → page`);
    const latencies: number[] = [];
    const names = (await admin.get<KubeList>('/api/v1/nodes')).items.map((n) => n.metadata.name!).sort();
    for (let i = 1; i <= UPDATE_SAMPLES; i++) {
      const t = performance.now();
      await admin.patch(`/api/v1/nodes/${names[i - 1]!}`, { spec: { unschedulable: true } }, 'strategic');
      await page.waitForFunction(countIs, ['cordoned', i] as [string, number], { polling: 'raf', timeout: 30_000 });
      latencies.push(performance.now() - t);
    }
    latencies.sort((a, b) => a - b);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('HeapProfiler.collectGarbage');
    await cdp.send('Performance.enable');
    const metrics = (await cdp.send('Performance.getMetrics')).metrics;
    const metric = (name: string) => metrics.find((m) => m.name === name)?.value ?? 0;
    const figures: SizeFigures = {
      nodes,
      firstRenderMs,
      jsHeapBytes: metric('JSHeapUsedSize'),
      domNodes: metric('Nodes'),
      rowsDrawn: await page.locator('.node-line').count(),
      ...(rssOf(dashboard.pid) !== undefined ? { dashboardRssBytes: rssOf(dashboard.pid)! } : {}),
      updateP50Ms: percentile(latencies, 50),
      updateP99Ms: percentile(latencies, 99),
      kubectlGetNodesMs: kubectlMs,
    };
    admin.close();
    return figures;
  } finally {
    await browser.close();
    await dashboard?.stop(5_000);
    await sim?.stop(30_000);
    await server?.stop();
  }
}

export const dashboardSuite: Suite = {
  name: 'dashboard',
  description: 'skiff dashboard in headless Chromium beside 1,000 and 5,000 simulated nodes: first render, page memory, API → page update latency',
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing (Debian: apt-get install chromium; or SKIFF_CHROMIUM_BIN)`);
    const sizes = process.env.SKIFF_BENCH_DASHBOARD_NODES ? [Number(process.env.SKIFF_BENCH_DASHBOARD_NODES)] : ctx.quick ? [1000] : [1000, 5000];
    const dir = makeTempDir('skiff-bench-dashboard-');
    const results: SizeFigures[] = [];
    try {
      for (const n of sizes) results.push(await measure(n, dir));
    } finally {
      removeTempDir(dir);
    }
    const table: Table = {
      title: 'dashboard: the page with N simulated nodes (headless Chromium, one server, skiff sim)',
      headers: ['figure', ...results.map((r) => `${fmtInt(r.nodes)} nodes`), 'goal / peer'],
      rows: [
        ['first render, ms (navigation → every node counted)', ...results.map((r) => fmtMs(r.firstRenderMs)), `peer: kubectl get nodes ${results.map((r) => fmtMs(r.kubectlGetNodesMs)).join(' / ')} ms`],
        ['update API → page, p50 ms', ...results.map((r) => fmtMs(r.updateP50Ms)), ''],
        ['update API → page, p99 ms', ...results.map((r) => fmtMs(r.updateP99Ms)), 'goal ≤ 2 s'],
        ['page JS heap (after GC)', ...results.map((r) => fmtMiB(r.jsHeapBytes)), ''],
        ['node rows in the page', ...results.map((r) => fmtInt(r.rowsDrawn)), 'virtualised: those in view, not one per node'],
        ['page DOM nodes', ...results.map((r) => fmtInt(r.domNodes)), ''],
        ['dashboard process RSS', ...results.map((r) => fmtMiB(r.dashboardRssBytes)), ''],
      ],
      notes: [`update latency: ${UPDATE_SAMPLES} nodes cordoned one after another through the API, each timed until the page's cordoned count shows it`],
    };
    return { tables: [table], data: { dashboard: results } };
  },
};
