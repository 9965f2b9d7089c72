// The SQLite store's single writer. It runs in a worker thread so that the main event loop keeps
// serving reads, watches and new requests while a commit waits for fsync; every message that
// arrives during that fsync joins the next transaction (group commit).
//
// Only this thread writes. It owns the schema, assigns revisions and checks every write
// individually inside the batch, so one failed compare-and-swap never fails its neighbours.

import { errorText } from '../util/error-text.js';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { KeyValue } from './store.js';

// ---- protocol (shared with sqlite.ts through `import type`) ----

/** workerData of the writer thread; the marker keeps an accidental import from starting a writer. */
export interface WriterData {
  kind: 'skiff-sqlite-writer';
  config: WriterConfig;
}

export interface WriterConfig {
  path: string;
  /** Most writes committed in one transaction; bounds the latency of a single batch. */
  maxBatchSize: number;
  /** Revisions compacted per transaction, so a large compaction never stalls writes for long. */
  compactBatchSize: number;
  /** The WAL is truncated to this size after checkpoints (PRAGMA journal_size_limit). */
  walSizeLimitBytes: number;
  /** WAL pages after which a commit checkpoints (PRAGMA wal_autocheckpoint). */
  walAutoCheckpointPages: number;
}

export type WriteOp =
  /** expiresAt: when the store deletes the key (ms since the epoch, the store's clock); none: kept. */
  | { op: 'create'; key: string; value: string; expiresAt?: number }
  | { op: 'update'; key: string; value: string; expected: number; expiresAt?: number }
  | { op: 'delete'; key: string; expected: number | undefined };

export type WriteResult =
  | {
      ok: true;
      revision: number;
      createRevision: number;
      /** update/delete: the value and revision that were replaced. */
      prevValue?: string;
      prevModRevision?: number;
    }
  | { ok: false; code: 'exists' | 'conflict' | 'not-found' | 'unavailable'; message: string; current?: KeyValue };

export interface CheckpointResult {
  /** True when readers kept the checkpoint from completing. */
  busy: boolean;
  walFrames: number;
  checkpointedFrames: number;
}

export type ToWriter =
  | { type: 'writes'; ops: WriteOp[] }
  | { type: 'compact'; id: number; revision: number }
  | { type: 'checkpoint'; id: number; mode: CheckpointMode }
  | { type: 'close'; id: number };

export type CheckpointMode = 'PASSIVE' | 'FULL' | 'RESTART' | 'TRUNCATE';

export type FromWriter =
  | { type: 'ready'; revision: number; compactRevision: number }
  | { type: 'fatal'; message: string }
  /** Results for the oldest results.length writes not yet answered, in the order they were sent. */
  | { type: 'written'; results: WriteResult[]; revision: number; transactions: number }
  | { type: 'done'; id: number; compactRevision?: number; checkpoint?: CheckpointResult }
  | { type: 'failed'; id: number; message: string };

// ---- schema ----

// log: kine-style history, one row per write; the row id is the revision. A delete writes a
// tombstone (deleted=1) whose previous value is found through prev_revision, so values are stored once.
// It has no index by key on purpose: a create into a key-ordered index dirties a page at a random
// place, and with ~100 writes per transaction that doubled the pages each commit wrote to the WAL.
// Reads at an older revision find history through prev_revision instead (sqlite.ts, listAt).
// current: the live keys and the revision holding their value; makes latest get/list/count cheap.
// expiry: keys written with a TTL and when they go (kine's leases); the store's reaper deletes them
// through ordinary deletes, so watchers see them go.
// meta: the current revision (kept explicitly so compaction can never make it go backwards) and the
// compacted revision.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS log (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  create_revision INTEGER NOT NULL,
  prev_revision INTEGER NOT NULL,
  deleted INTEGER NOT NULL
);
DROP INDEX IF EXISTS log_key_id;
CREATE TABLE IF NOT EXISTS current (
  key TEXT PRIMARY KEY,
  create_revision INTEGER NOT NULL,
  mod_revision INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS expiry (
  key TEXT PRIMARY KEY,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS expiry_at ON expiry (expires_at);
CREATE TABLE IF NOT EXISTS meta (
  name TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT OR IGNORE INTO meta (name, value) VALUES ('revision', 0), ('compact_revision', 0);
`;

function openDatabase(path: string): Database.Database {
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  // FULL: the WAL is fsynced on every commit, so an acknowledged write survives power loss.
  // (better-sqlite3 defaults WAL databases to NORMAL, which only syncs at checkpoints.)
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  return db;
}

interface CurrentRow {
  createRevision: number;
  modRevision: number;
  value: string;
}

class LogWriter {
  private readonly db: Database.Database;
  private rev: number;
  private compacted: number;
  transactions = 0;

  private readonly begin;
  private readonly commitTx;
  private readonly rollbackTx;
  private readonly readRevision;
  private readonly writeRevision;
  private readonly writeCompactRevision;
  private readonly getCurrent;
  private readonly insertLog;
  private readonly insertCurrent;
  private readonly updateCurrent;
  private readonly deleteCurrent;
  private readonly deleteSuperseded;
  private readonly deleteTombstones;
  private readonly setExpiry;
  private readonly clearExpiry;
  /** Whether any key has an expiry: writes without one skip clearing it while none does. */
  private anyExpiry: boolean;

  constructor(private readonly config: WriterConfig) {
    const db = (this.db = openDatabase(config.path));
    db.pragma(`journal_size_limit = ${Math.max(0, Math.floor(config.walSizeLimitBytes))}`);
    // The commit that crosses this many WAL pages copies them into the database file. Pages written
    // again before then (the same index page in successive batches) are copied once, so a larger
    // window than SQLite's 1,000 pages halves the writer's I/O per write; it stays below the
    // journal_size_limit, which the periodic TRUNCATE checkpoint enforces.
    db.pragma(`wal_autocheckpoint = ${config.walAutoCheckpointPages}`);
    db.exec(SCHEMA);

    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commitTx = db.prepare('COMMIT');
    this.rollbackTx = db.prepare('ROLLBACK');
    this.readRevision = db.prepare<[string], number>('SELECT value FROM meta WHERE name = ?').pluck();
    this.writeRevision = db.prepare<[number]>("UPDATE meta SET value = ? WHERE name = 'revision'");
    this.writeCompactRevision = db.prepare<[number]>("UPDATE meta SET value = ? WHERE name = 'compact_revision'");
    this.getCurrent = db.prepare<[string], CurrentRow>(
      `SELECT c.create_revision AS createRevision, c.mod_revision AS modRevision, l.value AS value
         FROM current c JOIN log l ON l.id = c.mod_revision WHERE c.key = ?`,
    );
    this.insertLog = db.prepare<[number, string, string, number, number, number]>(
      'INSERT INTO log (id, key, value, create_revision, prev_revision, deleted) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.insertCurrent = db.prepare<[string, number, number]>(
      'INSERT INTO current (key, create_revision, mod_revision) VALUES (?, ?, ?)',
    );
    this.updateCurrent = db.prepare<[number, string]>('UPDATE current SET mod_revision = ? WHERE key = ?');
    this.deleteCurrent = db.prepare<[string]>('DELETE FROM current WHERE key = ?');
    // A row is superseded once a later write of its key (which points back at it) is compacted.
    this.deleteSuperseded = db.prepare<[number, number]>(
      `DELETE FROM log WHERE id IN (SELECT prev_revision FROM log WHERE id > ? AND id <= ? AND prev_revision > 0)`,
    );
    this.deleteTombstones = db.prepare<[number, number]>('DELETE FROM log WHERE id > ? AND id <= ? AND deleted = 1');
    this.setExpiry = db.prepare<[string, number]>('INSERT INTO expiry (key, expires_at) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET expires_at = excluded.expires_at');
    this.clearExpiry = db.prepare<[string]>('DELETE FROM expiry WHERE key = ?');
    this.anyExpiry = db.prepare<[], number | null>('SELECT 1 FROM expiry LIMIT 1').pluck().get() != null;

    const maxId = db.prepare<[], number | null>('SELECT max(id) FROM log').pluck().get() ?? 0;
    this.rev = Math.max(this.readRevision.get('revision') ?? 0, maxId);
    this.compacted = this.readRevision.get('compact_revision') ?? 0;
  }

  get revision(): number {
    return this.rev;
  }
  get compactRevision(): number {
    return this.compacted;
  }

  /** Applies the writes in one transaction (one fsync); each succeeds or fails on its own. */
  commit(ops: WriteOp[]): WriteResult[] {
    const start = this.rev;
    try {
      this.begin.run();
      // Our in-memory revision is only valid while we are the sole writer of this file.
      const stored = this.readRevision.get('revision') ?? 0;
      if (stored !== start) {
        throw new Error(`revision in the database (${stored}) differs from the writer's (${start}): another process writes this file`);
      }
      const results = ops.map((op) => this.apply(op));
      if (this.rev === start) {
        this.rollbackTx.run(); // nothing written (every check failed): no fsync needed
      } else {
        this.writeRevision.run(this.rev);
        this.commitTx.run();
        this.transactions++;
      }
      return results;
    } catch (e) {
      if (this.db.inTransaction) this.rollbackTx.run();
      this.rev = start;
      const message = `write failed: ${errorText(e)}`;
      return ops.map(() => ({ ok: false, code: 'unavailable', message }));
    }
  }

  private apply(w: WriteOp): WriteResult {
    const cur = this.getCurrent.get(w.key);
    if (w.op === 'create') {
      if (cur) return { ok: false, code: 'exists', message: `${w.key} already exists`, current: { key: w.key, ...cur } };
      const r = ++this.rev;
      this.insertLog.run(r, w.key, w.value, r, 0, 0);
      this.insertCurrent.run(w.key, r, r);
      this.keepExpiry(w.key, w.expiresAt);
      return { ok: true, revision: r, createRevision: r };
    }
    if (!cur) return { ok: false, code: 'not-found', message: `${w.key} not found` };
    if (w.expected !== undefined && w.expected !== cur.modRevision) {
      return {
        ok: false,
        code: 'conflict',
        message: `${w.key} is at revision ${cur.modRevision}, not ${w.expected}`,
        current: { key: w.key, ...cur },
      };
    }
    const r = ++this.rev;
    if (w.op === 'update') {
      this.insertLog.run(r, w.key, w.value, cur.createRevision, cur.modRevision, 0);
      this.updateCurrent.run(r, w.key);
      this.keepExpiry(w.key, w.expiresAt);
    } else {
      // The tombstone's value stays empty: the deleted value is the row at prev_revision.
      this.insertLog.run(r, w.key, '', cur.createRevision, cur.modRevision, 1);
      this.deleteCurrent.run(w.key);
      this.keepExpiry(w.key, undefined);
    }
    return { ok: true, revision: r, createRevision: cur.createRevision, prevValue: cur.value, prevModRevision: cur.modRevision };
  }

  /** A write's TTL replaces the key's earlier one; a write without one keeps the key for good. */
  private keepExpiry(key: string, expiresAt: number | undefined): void {
    if (expiresAt !== undefined) {
      this.setExpiry.run(key, expiresAt);
      this.anyExpiry = true;
    } else if (this.anyExpiry) this.clearExpiry.run(key);
  }

  /**
   * Compacts one window of at most compactBatchSize revisions towards target, in its own
   * transaction. Returns true while more remains.
   */
  compactStep(target: number): boolean {
    const goal = Math.min(target, this.rev);
    if (goal <= this.compacted) return false;
    const lo = this.compacted;
    const hi = Math.min(goal, lo + this.config.compactBatchSize);
    this.begin.run();
    try {
      this.deleteSuperseded.run(lo, hi);
      this.deleteTombstones.run(lo, hi);
      // Recorded in the same transaction, so a reader sees either the old rows or the new floor.
      this.writeCompactRevision.run(hi);
      this.commitTx.run();
      this.transactions++;
    } catch (e) {
      if (this.db.inTransaction) this.rollbackTx.run();
      throw e;
    }
    this.compacted = hi;
    return hi < goal;
  }

  checkpoint(mode: CheckpointMode): CheckpointResult {
    const rows = this.db.pragma(`wal_checkpoint(${mode})`) as { busy: number; log: number; checkpointed: number }[];
    const r = rows[0] ?? { busy: 0, log: 0, checkpointed: 0 };
    return { busy: r.busy !== 0, walFrames: r.log, checkpointedFrames: r.checkpointed };
  }

  close(): void {
    this.db.close();
  }
}

// ---- the worker's loop ----

function runWorker(): void {
  const port = parentPort;
  const data = workerData as WriterData | undefined;
  if (!port || data?.kind !== 'skiff-sqlite-writer') return;
  const { config } = data;
  const post = (m: FromWriter) => port.postMessage(m);

  let writer: LogWriter;
  try {
    writer = new LogWriter(config);
  } catch (e) {
    post({ type: 'fatal', message: errorText(e) });
    return;
  }
  post({ type: 'ready', revision: writer.revision, compactRevision: writer.compactRevision });

  const pending: WriteOp[] = [];
  // Each control runs once every write received before it has been committed.
  const controls: { msg: Extract<ToWriter, { type: 'checkpoint' } | { type: 'close' }>; after: number }[] = [];
  let received = 0;
  let committed = 0;
  let compactTarget = 0;
  let compactWaiters: { id: number; revision: number }[] = [];
  let scheduled = false;
  let closed = false;

  // Runs on setImmediate, i.e. after every message that arrived during the last commit has been
  // queued: those are the next batch.
  const schedule = () => {
    if (!scheduled && !closed) {
      scheduled = true;
      setImmediate(step);
    }
  };

  const step = () => {
    scheduled = false;
    if (pending.length > 0) {
      const ops = pending.splice(0, config.maxBatchSize);
      const results = writer.commit(ops);
      committed += ops.length;
      post({ type: 'written', results, revision: writer.revision, transactions: writer.transactions });
    }
    // One compaction window per step, so compaction makes progress under sustained writes
    // without holding them back for more than one window.
    if (compactWaiters.length > 0) {
      try {
        const more = writer.compactStep(compactTarget);
        const reached = writer.compactRevision;
        const unsettled: typeof compactWaiters = [];
        for (const w of compactWaiters) {
          if (!more || w.revision <= reached) post({ type: 'done', id: w.id, compactRevision: reached });
          else unsettled.push(w);
        }
        compactWaiters = unsettled;
      } catch (e) {
        const message = `compaction failed: ${errorText(e)}`;
        for (const w of compactWaiters) post({ type: 'failed', id: w.id, message });
        compactWaiters = [];
      }
    }
    if (controls.length > 0 && controls[0]!.after <= committed) {
      const c = controls.shift()!.msg;
      if (c.type === 'checkpoint') {
        try {
          post({ type: 'done', id: c.id, checkpoint: writer.checkpoint(c.mode) });
        } catch (e) {
          post({ type: 'failed', id: c.id, message: errorText(e) });
        }
      } else {
        closed = true;
        for (const w of compactWaiters) post({ type: 'failed', id: w.id, message: 'store closed' });
        writer.close();
        post({ type: 'done', id: c.id });
        port.close();
        return;
      }
    }
    if (pending.length > 0 || controls.length > 0 || compactWaiters.length > 0) schedule();
  };

  port.on('message', (m: ToWriter) => {
    if (closed) return;
    switch (m.type) {
      case 'writes':
        for (const op of m.ops) pending.push(op);
        received += m.ops.length;
        break;
      case 'compact': {
        // Clamped now, so a far-future target cannot make compaction chase new writes forever.
        const target = Math.min(m.revision, writer.revision);
        compactTarget = Math.max(compactTarget, target);
        compactWaiters.push({ id: m.id, revision: target });
        break;
      }
      default:
        controls.push({ msg: m, after: received });
    }
    schedule();
  });
}

runWorker();
