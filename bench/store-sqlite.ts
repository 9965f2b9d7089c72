// Write throughput of the SQLite store against raw better-sqlite3 at the same durability
// (WAL, synchronous=FULL: every acknowledged write is fsynced).
//
//   node dist/bench/store-sqlite.js [durationMs] [dir]

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { openSqliteStore } from '../src/store/sqlite.js';

export interface StoreBenchResult {
  writesPerSec: number;
  writes: number;
  /** Commits (fsyncs) the writes needed; writes/transactions is the group-commit batch size. */
  transactions: number;
  p50Ms: number;
  p99Ms: number;
}

/** A pod-sized object, so the figures include realistic value sizes. */
function sampleValue(n: number): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `bench-${n}`, namespace: 'default', labels: { app: 'bench' }, uid: `00000000-0000-0000-0000-${String(n).padStart(12, '0')}` },
    spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'registry.example/app:1.0', resources: { requests: { cpu: '100m', memory: '64Mi' } } }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  });
}

/** Creates distinct keys from `concurrency` writers, each awaiting its previous write, for durationMs. */
export async function benchSqliteStore(dir: string, concurrency: number, durationMs: number): Promise<StoreBenchResult> {
  const store = await openSqliteStore({ path: join(dir, `store-${concurrency}.db`), maintenanceIntervalMs: 0 });
  try {
    const value = sampleValue(0);
    const latencies: number[] = [];
    const start = performance.now();
    const end = start + durationMs;
    const tx0 = store.stats().transactions;
    let n = 0;
    const writer = async (w: number) => {
      while (performance.now() < end) {
        const t = performance.now();
        await store.create(`/registry/pods/w${w}/${n++}`, value);
        latencies.push(performance.now() - t);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, (_, w) => writer(w)));
    const elapsed = performance.now() - start;
    latencies.sort((a, b) => a - b);
    return {
      writesPerSec: Math.round((latencies.length / elapsed) * 1000),
      writes: latencies.length,
      transactions: store.stats().transactions - tx0,
      p50Ms: round2(latencies[Math.floor(latencies.length * 0.5)] ?? 0),
      p99Ms: round2(latencies[Math.floor(latencies.length * 0.99)] ?? 0),
    };
  } finally {
    await store.close();
  }
}

/** Raw better-sqlite3: one INSERT per transaction (autocommit), WAL + synchronous=FULL. */
export async function benchRawSqlite(dir: string, durationMs: number): Promise<{ writesPerSec: number; writes: number }> {
  const db = new Database(join(dir, 'raw.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE IF NOT EXISTS kv (id INTEGER PRIMARY KEY, key TEXT NOT NULL, value TEXT NOT NULL)');
    const insert = db.prepare<[string, string]>('INSERT INTO kv (key, value) VALUES (?, ?)');
    const value = sampleValue(0);
    const start = performance.now();
    const end = start + durationMs;
    let writes = 0;
    while (performance.now() < end) insert.run(`/registry/pods/raw/${writes++}`, value);
    const elapsed = performance.now() - start;
    return { writesPerSec: Math.round((writes / elapsed) * 1000), writes };
  } finally {
    db.close();
  }
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

async function main(): Promise<void> {
  const durationMs = Number(process.argv[2] ?? 3000);
  const dir = process.argv[3] ?? mkdtempSync(join(tmpdir(), 'skiff-bench-'));
  try {
    const raw = await benchRawSqlite(dir, durationMs);
    console.log(`raw better-sqlite3, 1 insert/transaction: ${raw.writesPerSec} writes/s`);
    for (const c of [1, 8, 128]) {
      const r = await benchSqliteStore(dir, c, durationMs);
      console.log(
        `sqlite store, ${c} concurrent: ${r.writesPerSec} writes/s, ${(r.writes / Math.max(1, r.transactions)).toFixed(1)} writes/commit, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms`,
      );
    }
  } finally {
    if (!process.argv[3]) rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
