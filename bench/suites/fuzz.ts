// Suite `fuzz`: the seeded hostile-input fuzzer (bench/lib/fuzz.ts) against a real server:
// 100,000 requests (20,000 with --quick) of mutated bodies, nesting, encodings, selectors,
// patches, query parameters and paths on every verb. Reported: answers by code, findings (a 500,
// no answer, or an error that is not a Status; goal 0), requests/s, and the server's RSS before,
// at its peak and after, and its heap in use after a full collection before and after (does
// memory come back: RSS alone cannot say, V8 keeps the pages it grew).
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';
import { fuzz } from '../lib/fuzz.js';
import { createNamespace, startSkiffServer } from '../lib/servers.js';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { fmtInt, makeTempDir, peakRssOf, progress, removeTempDir, round, rssOf, sleep, type Table } from '../lib/util.js';
import { heapSnapshotFlags, heapUsedAfterGc } from '../lib/heap.js';

export const fuzzSuite: Suite = {
  name: 'fuzz',
  description: 'seeded hostile input against a real server: every answer a Status or a success, no 500, memory back after',
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    const requests = Number(process.env.SKIFF_BENCH_FUZZ_REQUESTS ?? (ctx.quick ? 20_000 : 100_000));
    const seed = Number(process.env.SKIFF_BENCH_FUZZ_SEED ?? 1);
    const diagDir = makeTempDir('skiff-bench-fuzz-heap-');
    const server = await startSkiffServer({ nodeArgs: heapSnapshotFlags(diagDir) });
    const admin = server.client();
    try {
      await createNamespace(server, 'fuzz');
      const kc = parseKubeconfig(readFileSync(server.kubeconfig, 'utf8'), (p) => readFileSync(p, 'utf8'));
      // RSS first: writing a heap snapshot grows it.
      const rssBefore = rssOf(server.pid) ?? 0;
      const heapBefore = await heapUsedAfterGc(server.pid, admin, diagDir);
      progress(`fuzz: ${fmtInt(requests)} requests, seed ${seed}`);
      const t = performance.now();
      const out = await fuzz({ server: kc.server, caPem: kc.caPem!, certPem: kc.clientCertPem!, keyPem: kc.clientKeyPem!, seed, requests });
      const seconds = (performance.now() - t) / 1000;
      await sleep(10_000);
      const rssAfter = rssOf(server.pid) ?? 0;
      const peak = peakRssOf(server.pid) ?? 0;
      const heapAfter = await heapUsedAfterGc(server.pid, admin, diagDir);
      const mib = (b: number) => `${round(b / 2 ** 20, 0)} MiB`;
      const table: Table = {
        title: `fuzz: ${fmtInt(requests)} hostile requests, seed ${seed}, one server on SQLite (2 cores)`,
        headers: ['figure', 'skiff', 'goal'],
        rows: [
          ['answers by HTTP code', Object.entries(out.byCode).map(([c, n]) => `${c}: ${fmtInt(n)}`).join(', '), 'a Status or a success each'],
          ['findings (500, no answer, an error that is not a Status)', String(out.findings.length), '0'],
          ['requests/s', String(round(requests / seconds, 0)), ''],
          ['server heap in use after a full collection, before / after', `${mib(heapBefore)} / ${mib(heapAfter)}`, 'back near where it started'],
          ['server RSS before / peak / 10 s after', `${mib(rssBefore)} / ${mib(peak)} / ${mib(rssAfter)}`, ''],
        ],
        notes: out.findings.slice(0, 5).map((f) => `${f.code} ${f.method} ${f.path} (${f.contentType}): ${f.answer.slice(0, 160)}`),
      };
      return { tables: [table], data: { requests, seed, byCode: out.byCode, findings: out.findings, seconds: round(seconds), rssBefore, rssAfter, peak, heapBefore, heapAfter } };
    } finally {
      admin.close();
      await server.stop();
      removeTempDir(diagDir);
    }
  },
};
