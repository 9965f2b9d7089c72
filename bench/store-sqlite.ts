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
import { measureWriters, samplePodValue, type WriteLoadResult } from './lib/writers.js';

export interface StoreBenchResult extends WriteLoadResult {
  /** Commits (fsyncs) the writes needed; writes/transactions is the group-commit batch size. */
  transactions: number;
}

/** Creates distinct keys from `concurrency` writers, each awaiting its previous write, for durationMs. */
export async function benchSqliteStore(dir: string, concurrency: number, durationMs: number): Promise<StoreBenchResult> {
  const store = await openSqliteStore({ path: join(dir, `store-${concurrency}.db`), maintenanceIntervalMs: 0 });
  try {
    const value = samplePodValue(0);
    const tx0 = store.stats().transactions;
    const r = await measureWriters(concurrency, durationMs, (w, n) => store.create(`/registry/pods/w${w}/${n}`, value));
    return { ...r, transactions: store.stats().transactions - tx0 };
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
    const value = samplePodValue(0);
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
