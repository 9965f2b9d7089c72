// Suite `audit`: what the audit log costs a write. ConfigMap creates through the API on two servers
// started side by side, one without auditing and one logging every request at Metadata to a file,
// measured in alternating rounds (so a busy moment of the machine falls on both), with the server
// CPU spent per create: the figure that says what auditing adds to a request.
import { join } from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { createNamespace, startSkiffServer, type SkiffServer } from '../lib/servers.js';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { fmtInt, fmtMs, makeTempDir, progress, removeTempDir, round, type Table } from '../lib/util.js';
import { NAMESPACE, apiCreates, type LoadResult } from './api.js';

const CLIENTS = 16;
const ROUNDS = 3;

const POLICY = 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n';

const creates = (server: SkiffServer, durationMs: number, tag: string): Promise<LoadResult> => apiCreates(server, CLIENTS, durationMs, tag);

/** Microseconds of server CPU (all threads) per create over a round. */
function cpuPerCreateUs(r: LoadResult, durationMs: number): number | undefined {
  if (r.serverCpuPct === undefined || r.ops === 0) return undefined;
  return Math.round(((r.serverCpuPct / 100) * durationMs * 1000) / r.ops);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export const auditSuite: Suite = {
  name: 'audit',
  description: 'ConfigMap creates/s and server CPU per create, without audit and with every request logged at Metadata, alternating rounds',
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    const dir = makeTempDir('skiff-bench-audit-');
    const policy = join(dir, 'policy.yaml');
    const logPath = join(dir, 'audit.log');
    writeFileSync(policy, POLICY);
    const plain = await startSkiffServer();
    const audited = await startSkiffServer({ serverArgs: ['--audit-policy-file', policy, '--audit-log-path', logPath] });
    const results: { none: LoadResult[]; metadata: LoadResult[] } = { none: [], metadata: [] };
    try {
      for (const s of [plain, audited]) {
        await createNamespace(s, NAMESPACE);
        await creates(s, Math.min(1000, ctx.durationMs), 'warm');
      }
      for (let round = 0; round < ROUNDS; round++) {
        // Alternate which goes first, so neither always runs on the warmer (or busier) machine.
        const order: ['none' | 'metadata', SkiffServer][] = round % 2 === 0 ? [['none', plain], ['metadata', audited]] : [['metadata', audited], ['none', plain]];
        for (const [label, s] of order) {
          progress(`audit: creates, ${CLIENTS} clients, ${label}, round ${round + 1}/${ROUNDS}, ${ctx.durationMs} ms`);
          const r = await creates(s, ctx.durationMs, `${label}-r${round}`);
          results[label].push(r);
          progress(`audit: ${label}: ${r.opsPerSec}/s (p99 ${r.p99Ms} ms, server CPU ${r.serverCpuPct}%, ${r.errors} errors)`);
        }
      }
    } finally {
      await plain.stop();
      await audited.stop();
    }
    const events = readFileSync(logPath, 'utf8').split('\n').filter(Boolean).length;
    removeTempDir(dir);

    const summary = (rs: LoadResult[]) => ({
      opsPerSec: median(rs.map((r) => r.opsPerSec)),
      p50Ms: median(rs.map((r) => r.p50Ms)),
      p99Ms: median(rs.map((r) => r.p99Ms)),
      cpuPerCreateUs: median(rs.map((r) => cpuPerCreateUs(r, ctx.durationMs) ?? 0)),
      errors: rs.reduce((a, r) => a + r.errors, 0),
    });
    const none = summary(results.none);
    const metadata = summary(results.metadata);
    const row = (label: string, s: ReturnType<typeof summary>, rs: LoadResult[]): string[] => [
      label,
      fmtInt(s.opsPerSec),
      rs.map((r) => fmtInt(r.opsPerSec)).join(' / '),
      fmtMs(s.p50Ms),
      fmtMs(s.p99Ms),
      s.cpuPerCreateUs ? String(s.cpuPerCreateUs) : '-',
      String(s.errors),
    ];
    const table: Table = {
      title: `audit: ConfigMap creates, ${CLIENTS} clients, ${ROUNDS} alternating rounds of ${ctx.durationMs} ms each`,
      headers: ['audit', 'creates/s (median)', 'rounds', 'p50 ms', 'p99 ms', 'server CPU µs/create', 'errors'],
      rows: [row('none', none, results.none), row('Metadata, every request, to a file', metadata, results.metadata)],
      notes: [
        `with audit: ${round((metadata.opsPerSec / none.opsPerSec) * 100)}% of the creates/s without; ${metadata.cpuPerCreateUs && none.cpuPerCreateUs ? `${metadata.cpuPerCreateUs - none.cpuPerCreateUs} µs more server CPU per create` : 'server CPU not measured'}`,
        `the audit log held ${fmtInt(events)} events (two a request: RequestReceived and ResponseComplete), written in batches, one write per turn of the event loop.`,
      ],
    };
    return { tables: [table], data: { clients: CLIENTS, rounds: ROUNDS, durationMs: ctx.durationMs, none: results.none, metadata: results.metadata, events } };
  },
};
