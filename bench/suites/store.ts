// Suite `store`: the SQLite store's write throughput with 1/16/128 concurrent writers, beside raw
// better-sqlite3 single-row commits at the same durability (WAL + synchronous=FULL).
import { benchRawSqlite, benchSqliteStore, type StoreBenchResult } from '../store-sqlite.js';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { fmtInt, fmtMs, makeTempDir, progress, removeTempDir, round } from '../lib/util.js';

const WRITERS = [1, 16, 128];

export const storeSuite: Suite = {
  name: 'store',
  description: 'SQLite store writes/s at 1/16/128 writers vs raw better-sqlite3 commits/s',
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    const dir = makeTempDir('skiff-bench-store-');
    try {
      progress(`store: raw better-sqlite3, 1 insert per commit, ${ctx.durationMs} ms`);
      const raw = await benchRawSqlite(dir, ctx.durationMs);
      progress(`store: raw better-sqlite3 ${raw.writesPerSec} commits/s`);
      const cells: (StoreBenchResult & { writers: number; writesPerCommit: number })[] = [];
      for (const writers of WRITERS) {
        progress(`store: sqlite store, ${writers} concurrent writers, ${ctx.durationMs} ms`);
        const r = await benchSqliteStore(dir, writers, ctx.durationMs);
        const writesPerCommit = round(r.writes / Math.max(1, r.transactions), 1);
        cells.push({ ...r, writers, writesPerCommit });
        progress(`store: ${writers} writers: ${r.writesPerSec} writes/s (${writesPerCommit} writes/commit)`);
      }
      return {
        tables: [
          {
            title: 'store: SQLite store writes/s vs raw better-sqlite3 commits/s (WAL, synchronous=FULL, ~380 B values)',
            headers: ['writers', 'store writes/s', 'writes/commit', 'p50 ms', 'p99 ms', 'raw sqlite commits/s', 'store/raw'],
            rows: cells.map((c) => [
              String(c.writers),
              fmtInt(c.writesPerSec),
              c.writesPerCommit.toFixed(1),
              fmtMs(c.p50Ms),
              fmtMs(c.p99Ms),
              fmtInt(raw.writesPerSec),
              `${(c.writesPerSec / Math.max(1, raw.writesPerSec)).toFixed(2)}x`,
            ]),
            notes: ['raw sqlite: one writer, one INSERT per autocommit transaction (SQLite serializes writers, so it has no concurrency axis).'],
          },
        ],
        data: { durationMs: ctx.durationMs, rawSqlite: raw, store: cells },
      };
    } finally {
      removeTempDir(dir);
    }
  },
};
