// The embedded SQLite backend: a kine-style revision log in one file, WAL with synchronous=FULL.
//
// Writes go to a single writer thread (sqlite-worker.ts) that commits whatever has queued up in
// one transaction, so many concurrent writers share one fsync (group commit). Reads, lists and
// watch replays run here on a second connection: in WAL mode they never block the writer, and a
// write is acknowledged only after its commit, so a read issued afterwards always sees it.
//
// Watches are fed directly from the writer's acknowledgements (no polling). A watcher that falls
// behind by more than its buffer drops its queue and catches up from the log, like an unsynced
// etcd watcher, so memory stays bounded and the consumer still sees every event exactly once.

import { errorText } from '../util/error-text.js';
import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { systemClock, type Clock, type Timer } from '../util/clock.js';
import { StoreError, type KeyValue, type ListOptions, type ListResult, type Store, type StoreEvent, type WriteOptions } from './store.js';
import type {
  CheckpointMode,
  CheckpointResult,
  FromWriter,
  ToWriter,
  WriteOp,
  WriteResult,
  WriterData,
} from './sqlite-worker.js';

export type { CheckpointMode, CheckpointResult } from './sqlite-worker.js';

export interface SqliteStoreOptions {
  /** The database file (not ':memory:': two connections share it); its directory is created if missing. */
  path: string;
  /** Revisions that automatic maintenance never compacts (kine's --compact-min-retain). Default 1000. */
  compactMinRetain?: number;
  /** Period of automatic maintenance (compaction + WAL checkpoint); 0 disables it. Default 5 minutes. */
  maintenanceIntervalMs?: number;
  /** How often keys whose TTL ran out are deleted. Default 1 s. */
  expiryIntervalMs?: number;
  /** Drives the maintenance and expiry timers, and TTLs. Default: the system clock. */
  clock?: Clock;
  /** Events a watcher may hold unconsumed before it drops them and catches up from the log. Default 10,000. */
  watchBufferSize?: number;
  /** Log rows read per step when a watcher replays history. Default 1,000. */
  watchReplayPageSize?: number;
  /** Most writes committed in one transaction. Default 1,000. */
  maxBatchSize?: number;
  /**
   * Writes submitted in one turn of the event loop go to the writer in messages of at most this
   * many. Default 64. Without a cap, a burst (many clients answered at once come back at once)
   * travels as one message after the whole burst is parsed, and the event loop then idles through
   * the commit; with it, the writer commits the head of the burst while the rest is still parsed.
   */
  flushBatchSize?: number;
  /** Revisions compacted per transaction, so compaction never stalls writes for long. Default 1,000. */
  compactBatchSize?: number;
  /** The WAL file is truncated to this size after a checkpoint. Default 64 MiB. */
  walSizeLimitBytes?: number;
}

export interface SqliteStoreStats {
  /** Write transactions committed by the writer (each one fsync), compaction windows included. */
  transactions: number;
  /** Writes answered by the writer, successful or not. */
  writes: number;
  /** Watchers currently open. */
  watchers: number;
  /** Times a watcher's buffer overflowed and it went back to reading the log. */
  watchOverflows: number;
}

export interface MaintenanceResult {
  compactRevision: number;
  checkpoint: CheckpointResult;
}

export async function openSqliteStore(opts: SqliteStoreOptions): Promise<SqliteStore> {
  return SqliteStore.open(opts);
}

interface PendingWrite {
  op: WriteOp;
  resolve: (kv: KeyValue) => void;
  reject: (e: StoreError) => void;
}

interface PendingControl {
  resolve: (m: Extract<FromWriter, { type: 'done' }>) => void;
  reject: (e: StoreError) => void;
}

interface LogRow {
  id: number;
  key: string;
  value: string;
  createRevision: number;
  prevRevision: number;
  deleted: number;
  prevValue: string | null;
}

type Statement<P extends unknown[], R> = Database.Statement<P, R>;

export class SqliteStore implements Store {
  private readonly db: Database.Database;
  private readonly worker: Worker;
  private readonly clock: Clock;
  private readonly compactMinRetain: number;
  private readonly maintenanceIntervalMs: number;
  private readonly watchBufferSize: number;
  private readonly replayPageSize: number;
  private readonly flushBatchSize: number;

  private state: 'open' | 'closing' | 'closed' = 'open';
  private closing?: Promise<void>;
  private writerError?: StoreError;
  private workerExited: Promise<void>;
  private refd = false;
  private closeSent = false;

  /** Writes sent (or about to be sent) to the writer, answered strictly in this order. */
  private inflight: PendingWrite[] = [];
  private inflightHead = 0;
  private outbox: WriteOp[] = [];
  private flushScheduled = false;
  private drained?: () => void;
  private controls = new Map<number, PendingControl>();
  private nextControlId = 1;

  /** The newest revision whose events have been handed to watchers. */
  private hubRevision: number;
  private readonly watchers = new Set<Watcher>();
  private readonly counters = { transactions: 0, writes: 0, watchOverflows: 0 };
  private maintenanceTimer?: Timer;
  private expiryTimer?: Timer;
  private readonly expiryIntervalMs: number;
  private readonly path: string;

  private readonly revisionStmt: Statement<[], number>;
  private readonly compactRevisionStmt: Statement<[], number>;
  private readonly getStmt: Statement<[string], KeyValue>;
  private readonly statements = new Map<string, Statement<unknown[], unknown>>();
  private readonly inSnapshot: (fn: () => unknown) => unknown;

  static async open(opts: SqliteStoreOptions): Promise<SqliteStore> {
    // Both pragmas derived from it need a finite number (SQLite reads Infinity as 0: no automatic checkpoints).
    const walSizeLimitBytes = Number.isFinite(opts.walSizeLimitBytes) ? Math.max(0, opts.walSizeLimitBytes!) : 64 * 1024 * 1024;
    const data: WriterData = {
      kind: 'skiff-sqlite-writer',
      config: {
        path: opts.path,
        maxBatchSize: positive(opts.maxBatchSize, 1000),
        compactBatchSize: positive(opts.compactBatchSize, 1000),
        walSizeLimitBytes,
        // Half the size limit in 4 KiB pages (SQLite's default page size), never below SQLite's default.
        walAutoCheckpointPages: Math.max(1000, Math.floor(walSizeLimitBytes / 4096 / 2)),
      },
    };
    const worker = new Worker(new URL('./sqlite-worker.js', import.meta.url), { workerData: data });
    const ready = await new Promise<Extract<FromWriter, { type: 'ready' }>>((resolve, reject) => {
      const onMessage = (m: FromWriter) => {
        cleanup();
        if (m.type === 'ready') resolve(m);
        else reject(new StoreError('unavailable', `cannot open ${opts.path}: ${m.type === 'fatal' ? m.message : m.type}`));
      };
      const onError = (e: Error) => {
        cleanup();
        reject(new StoreError('unavailable', `cannot open ${opts.path}: ${e.message}`));
      };
      const onExit = (code: number) => {
        cleanup();
        reject(new StoreError('unavailable', `cannot open ${opts.path}: writer exited with code ${code}`));
      };
      const cleanup = () => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
    }).catch(async (e: unknown) => {
      await worker.terminate();
      throw e;
    });
    try {
      return new SqliteStore(opts, worker, ready.revision);
    } catch (e) {
      await worker.terminate();
      throw new StoreError('unavailable', `cannot open ${opts.path}: ${errorText(e)}`);
    }
  }

  private constructor(opts: SqliteStoreOptions, worker: Worker, revision: number) {
    this.worker = worker;
    this.clock = opts.clock ?? systemClock;
    this.compactMinRetain = Math.max(0, opts.compactMinRetain ?? 1000);
    this.maintenanceIntervalMs = Math.max(0, opts.maintenanceIntervalMs ?? 5 * 60_000);
    this.expiryIntervalMs = positive(opts.expiryIntervalMs, 1000);
    this.watchBufferSize = positive(opts.watchBufferSize, 10_000);
    this.replayPageSize = positive(opts.watchReplayPageSize, 1000);
    this.flushBatchSize = positive(opts.flushBatchSize, 64);
    this.hubRevision = revision;

    // The writer created the schema and set WAL mode (persistent in the file) before saying ready.
    this.path = opts.path;
    const db = (this.db = new Database(opts.path, { fileMustExist: true }));
    db.pragma('busy_timeout = 5000');
    db.pragma('query_only = ON');
    this.revisionStmt = db.prepare<[], number>("SELECT value FROM meta WHERE name = 'revision'").pluck();
    this.compactRevisionStmt = db.prepare<[], number>("SELECT value FROM meta WHERE name = 'compact_revision'").pluck();
    this.getStmt = db.prepare<[string], KeyValue>(
      `SELECT c.key AS key, l.value AS value, c.create_revision AS createRevision, c.mod_revision AS modRevision
         FROM current c JOIN log l ON l.id = c.mod_revision WHERE c.key = ?`,
    );
    // A deferred transaction: every statement inside reads the same snapshot.
    this.inSnapshot = db.transaction((fn: () => unknown) => fn());

    this.workerExited = new Promise((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (m: FromWriter) => this.onWriterMessage(m));
    worker.on('error', (e) => this.failWriter(`writer crashed: ${e.message}`));
    worker.on('exit', (code) => {
      if (!this.closeSent) this.failWriter(`writer exited with code ${code}`);
    });
    // Only hold the process open while something waits on the writer; an idle store must not.
    worker.unref();
    this.scheduleMaintenance();
    this.scheduleExpiry();
  }

  // ---- reads ----

  async currentRevision(): Promise<number> {
    this.assertReadable();
    return this.revisionStmt.get() ?? 0;
  }

  async compactRevision(): Promise<number> {
    this.assertReadable();
    return this.compactRevisionStmt.get() ?? 0;
  }

  async get(key: string): Promise<KeyValue | undefined> {
    this.assertReadable();
    return this.getStmt.get(key);
  }

  async count(prefix: string): Promise<number> {
    this.assertReadable();
    const range = keyRange('key', prefix);
    return this.statement<number>(`SELECT count(*) FROM current WHERE ${range.sql}`, true).get(...range.params) ?? 0;
  }

  async list(opts: ListOptions): Promise<ListResult> {
    this.assertReadable();
    const limit = opts.limit && opts.limit > 0 ? Math.floor(opts.limit) : 0;
    const at = opts.revision && opts.revision > 0 ? opts.revision : 0;
    return this.snapshot(() => {
      const current = this.revisionStmt.get() ?? 0;
      if (at > current) {
        throw new StoreError('unavailable', `revision ${at} is newer than the current revision ${current}`);
      }
      if (at > 0 && at < current) return this.listAt(opts.prefix, opts.after, limit, at);
      return this.listLatest(opts.prefix, opts.after, limit, current);
    });
  }

  private listLatest(prefix: string, after: string | undefined, limit: number, revision: number): ListResult {
    const range = keyRange('c.key', prefix, after);
    const rows = this.statement<KeyValue>(
      `SELECT c.key AS key, l.value AS value, c.create_revision AS createRevision, c.mod_revision AS modRevision
         FROM current c JOIN log l ON l.id = c.mod_revision
        WHERE ${range.sql} ORDER BY c.key LIMIT ?`,
    ).all(...range.params, limit > 0 ? limit + 1 : -1);
    const more = limit > 0 && rows.length > limit;
    if (!more) return { items: rows, revision, more };
    rows.length = limit;
    const rest = keyRange('key', prefix, rows[limit - 1]!.key);
    const remaining = this.statement<number>(`SELECT count(*) FROM current WHERE ${rest.sql}`, true).get(...rest.params) ?? 0;
    return { items: rows, revision, more, remaining };
  }

  /**
   * The state of every key at an older revision, without an index by key: a key not written since
   * the revision still has its current row; for a key written since, the first write after the
   * revision points (prev_revision) at the row that was live then, or has none (a create: the key
   * did not exist then). Only the rows written since the revision are scanned, by id.
   */
  private listAt(prefix: string, after: string | undefined, limit: number, revision: number): ListResult {
    const compacted = this.compactRevisionStmt.get() ?? 0;
    if (revision < compacted) {
      throw new StoreError('compacted', `revision ${revision} has been compacted (oldest is ${compacted})`, undefined, compacted);
    }
    const unchanged = keyRange('c.key', prefix, after);
    const changed = keyRange('f.key', prefix, after);
    const rows = this.statement<KeyValue>(
      `SELECT key, value, createRevision, modRevision FROM (
         SELECT c.key AS key, l.value AS value, c.create_revision AS createRevision, c.mod_revision AS modRevision
           FROM current c JOIN log l ON l.id = c.mod_revision
          WHERE ${unchanged.sql} AND c.mod_revision <= ?
         UNION ALL
         SELECT f.key AS key, p.value AS value, p.create_revision AS createRevision, p.id AS modRevision
           FROM log f JOIN log p ON p.id = f.prev_revision
          WHERE f.id > ? AND f.prev_revision BETWEEN 1 AND ? AND ${changed.sql}
       ) ORDER BY key LIMIT ?`,
    ).all(...unchanged.params, revision, revision, revision, ...changed.params, limit > 0 ? limit + 1 : -1);
    const more = limit > 0 && rows.length > limit;
    if (more) rows.length = limit;
    return { items: rows, revision, more };
  }

  // ---- writes ----

  create(key: string, value: string, opts?: WriteOptions): Promise<KeyValue> {
    return this.submit({ op: 'create', key, value, ...this.expiry(opts) });
  }

  update(key: string, value: string, expectedModRevision: number, opts?: WriteOptions): Promise<KeyValue> {
    return this.submit({ op: 'update', key, value, expected: expectedModRevision, ...this.expiry(opts) });
  }

  private expiry(opts: WriteOptions | undefined): { expiresAt?: number } {
    const ttl = opts?.ttlSeconds;
    return ttl !== undefined && ttl > 0 ? { expiresAt: this.clock.now() + ttl * 1000 } : {};
  }

  delete(key: string, expectedModRevision?: number): Promise<KeyValue> {
    return this.submit({ op: 'delete', key, expected: expectedModRevision });
  }

  private submit(op: WriteOp): Promise<KeyValue> {
    if (this.state !== 'open') return Promise.reject(closedError());
    if (this.writerError) return Promise.reject(this.writerError);
    return new Promise<KeyValue>((resolve, reject) => {
      this.inflight.push({ op, resolve, reject });
      this.outbox.push(op);
      this.holdProcess();
      if (this.outbox.length >= this.flushBatchSize) {
        this.flush();
        return;
      }
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        // Everything submitted in this turn of the event loop travels as one message.
        setImmediate(this.flush);
      }
    });
  }

  private readonly flush = () => {
    this.flushScheduled = false;
    if (this.outbox.length === 0 || this.writerError) return;
    const ops = this.outbox;
    this.outbox = [];
    this.post({ type: 'writes', ops });
  };

  private onWriterMessage(m: FromWriter): void {
    switch (m.type) {
      case 'written':
        this.onWritten(m.results, m.revision, m.transactions);
        break;
      case 'done':
      case 'failed': {
        const c = this.controls.get(m.id);
        if (!c) break;
        this.controls.delete(m.id);
        if (m.type === 'done') c.resolve(m);
        else c.reject(new StoreError('unavailable', m.message));
        break;
      }
      default:
        break;
    }
    this.releaseProcessIfIdle();
  }

  private onWritten(results: WriteResult[], revision: number, transactions: number): void {
    const start = this.inflightHead;
    this.inflightHead += results.length;
    this.counters.transactions = transactions;
    this.counters.writes += results.length;

    const events: StoreEvent[] = [];
    const outcomes: (KeyValue | StoreError)[] = new Array(results.length);
    for (let i = 0; i < results.length; i++) {
      const { op } = this.inflight[start + i]!;
      const r = results[i]!;
      if (!r.ok) {
        outcomes[i] = new StoreError(r.code, r.message, r.current);
        continue;
      }
      if (op.op === 'create') {
        const kv = { key: op.key, value: op.value, createRevision: r.createRevision, modRevision: r.revision };
        events.push({ type: 'create', kv });
        outcomes[i] = kv;
        continue;
      }
      const prev = { key: op.key, value: r.prevValue ?? '', createRevision: r.createRevision, modRevision: r.prevModRevision ?? 0 };
      const value = op.op === 'update' ? op.value : prev.value;
      const kv = { key: op.key, value, createRevision: r.createRevision, modRevision: r.revision };
      events.push({ type: op.op, kv, prev });
      outcomes[i] = kv;
    }

    // Watchers first: once a caller sees its write acknowledged, a watch it starts can't miss it.
    if (revision > this.hubRevision) {
      this.hubRevision = revision;
      for (const w of this.watchers) if (w.offer(events, revision)) this.counters.watchOverflows++;
    }
    for (let i = 0; i < outcomes.length; i++) {
      const p = this.inflight[start + i]!;
      const o = outcomes[i]!;
      // Callers get their own copy: event objects are shared by every watcher.
      if (o instanceof StoreError) p.reject(o);
      else p.resolve({ ...o });
    }
    if (this.pendingWrites() === 0) {
      this.inflight = [];
      this.inflightHead = 0;
      this.drained?.();
    } else if (this.inflightHead > 1024 && this.inflightHead * 2 > this.inflight.length) {
      this.inflight = this.inflight.slice(this.inflightHead);
      this.inflightHead = 0;
    }
  }

  private pendingWrites(): number {
    return this.inflight.length - this.inflightHead;
  }

  private post(m: ToWriter): void {
    this.worker.postMessage(m);
  }

  private control(m: ToWriter & { id: number }): Promise<Extract<FromWriter, { type: 'done' }>> {
    if (this.writerError) return Promise.reject(this.writerError);
    return new Promise((resolve, reject) => {
      this.controls.set(m.id, { resolve, reject });
      this.holdProcess();
      // Behind any writes still waiting in the outbox, so the control sees them committed.
      this.flush();
      this.post(m);
    });
  }

  private holdProcess(): void {
    if (!this.refd) {
      this.refd = true;
      this.worker.ref();
    }
  }

  private releaseProcessIfIdle(): void {
    // While closing, the process must stay up until the writer has exited.
    if (this.refd && this.state === 'open' && this.pendingWrites() === 0 && this.controls.size === 0) {
      this.refd = false;
      this.worker.unref();
    }
  }

  private failWriter(reason: string): void {
    if (this.writerError) return;
    const err = (this.writerError = new StoreError('unavailable', reason));
    const pending = this.inflight.slice(this.inflightHead);
    this.inflight = [];
    this.inflightHead = 0;
    this.outbox = [];
    for (const p of pending) p.reject(err);
    for (const c of this.controls.values()) c.reject(err);
    this.controls.clear();
    for (const w of this.watchers) w.fail(err);
    this.drained?.();
    this.releaseProcessIfIdle();
  }

  // ---- compaction and maintenance ----

  async compact(revision: number): Promise<void> {
    this.assertWritable();
    if (revision <= 0) return;
    await this.control({ type: 'compact', id: this.nextControlId++, revision });
  }

  /** Checkpoints the WAL into the database; TRUNCATE also resets the WAL file to zero bytes (kine#582). */
  async checkpoint(mode: CheckpointMode = 'TRUNCATE'): Promise<CheckpointResult> {
    this.assertWritable();
    const done = await this.control({ type: 'checkpoint', id: this.nextControlId++, mode });
    return done.checkpoint ?? { busy: false, walFrames: 0, checkpointedFrames: 0 };
  }

  /** What the periodic timer runs: compact all but the last compactMinRetain revisions, then checkpoint. */
  async maintenance(): Promise<MaintenanceResult> {
    const target = (await this.currentRevision()) - this.compactMinRetain;
    if (target > (await this.compactRevision())) await this.compact(target);
    const checkpoint = await this.checkpoint('TRUNCATE');
    return { compactRevision: await this.compactRevision(), checkpoint };
  }

  /**
   * Deletes the keys whose TTL ran out, as kine's TTL loop does: each with the revision it was
   * read at, so one written again meanwhile (a new TTL) stays.
   */
  async deleteExpired(): Promise<number> {
    this.assertReadable();
    const due = this.statement<{ key: string; modRevision: number }>(
      `SELECT e.key AS key, c.mod_revision AS modRevision FROM expiry e JOIN current c ON c.key = e.key
        WHERE e.expires_at <= ? ORDER BY e.expires_at LIMIT 1000`,
    ).all(this.clock.now());
    const results = await Promise.allSettled(due.map((d) => this.delete(d.key, d.modRevision)));
    return results.filter((r) => r.status === 'fulfilled').length;
  }

  private scheduleExpiry(): void {
    if (this.state !== 'open') return;
    this.expiryTimer = this.clock.setTimeout(() => {
      this.deleteExpired()
        .catch(() => undefined) // a writer that is gone is reported through health(); tried again next period
        .finally(() => this.scheduleExpiry());
    }, this.expiryIntervalMs);
  }

  private scheduleMaintenance(): void {
    if (this.maintenanceIntervalMs <= 0 || this.state !== 'open') return;
    this.maintenanceTimer = this.clock.setTimeout(() => {
      this.maintenance()
        .catch(() => undefined) // reported through health() when the writer is gone; retried next period
        .finally(() => this.scheduleMaintenance());
    }, this.maintenanceIntervalMs);
  }

  // ---- watch ----

  watch(prefix: string, afterRevision: number, signal: AbortSignal, onProgress?: (revision: number) => void): AsyncIterable<StoreEvent[]> {
    return this.watchEvents(prefix, afterRevision, signal, onProgress);
  }

  private async *watchEvents(
    prefix: string,
    afterRevision: number,
    signal: AbortSignal,
    onProgress?: (revision: number) => void,
  ): AsyncGenerator<StoreEvent[]> {
    this.assertReadable();
    if (this.writerError) throw this.writerError;
    // Registered and bounded in the same synchronous step: history up to hubRevision comes from the
    // log, everything after it from offer(), so nothing is missed or seen twice.
    const w = new Watcher(prefix, Math.max(0, afterRevision), this.hubRevision, this.watchBufferSize, onProgress);
    this.watchers.add(w);
    const wake = () => w.notify();
    signal.addEventListener('abort', wake);
    try {
      for (;;) {
        if (signal.aborted) return;
        if (w.error) throw w.error;
        if (w.replaying) {
          const events = this.replayPage(w);
          if (events.length > 0) yield events;
          w.replayProgress();
          continue;
        }
        const batch = w.take();
        if (batch) {
          yield batch;
          // Resumed: the consumer has applied the batch, so commits for other keys that arrived
          // meanwhile can be reported as progress now (the watch cache waits on it for fresh lists).
          w.caughtUp();
        } else await w.idle();
      }
    } finally {
      this.watchers.delete(w);
      signal.removeEventListener('abort', wake);
    }
  }

  /** Reads the watcher's next page of history; switches it to live events once replay is complete. */
  private replayPage(w: Watcher): StoreEvent[] {
    const range = keyRange('l.key', w.prefix);
    const stmt = this.statement<LogRow>(
      `SELECT l.id AS id, l.key AS key, l.value AS value, l.create_revision AS createRevision,
              l.prev_revision AS prevRevision, l.deleted AS deleted, p.value AS prevValue
         FROM log l LEFT JOIN log p ON p.id = l.prev_revision
        WHERE l.id > ? AND l.id <= ? AND ${range.sql} ORDER BY l.id LIMIT ?`,
    );
    const { compacted, rows } = this.snapshot(() => {
      const compacted = this.compactRevisionStmt.get() ?? 0;
      const rows = w.position < compacted ? [] : stmt.all(w.position, w.target, ...range.params, this.replayPageSize);
      return { compacted, rows };
    });
    if (w.position < compacted) {
      throw new StoreError('compacted', `revision ${w.position + 1} has been compacted (oldest is ${compacted})`, undefined, compacted);
    }
    const events = rows.map(rowToEvent);
    w.replayed(rows.length < this.replayPageSize ? w.target : rows[rows.length - 1]!.id);
    return events;
  }

  // ---- lifecycle ----

  async health(): Promise<{ ok: boolean; reason?: string }> {
    if (this.state !== 'open') return { ok: false, reason: 'store closed' };
    if (this.writerError) return { ok: false, reason: this.writerError.message };
    try {
      this.revisionStmt.get();
      return { ok: true };
    } catch (e) {
      return { ok: false, reason: `read failed: ${errorText(e)}` };
    }
  }

  async dbSize(): Promise<number> {
    // The database file and its write-ahead log: what the store takes on disk.
    const size = (p: string): number => {
      try {
        return statSync(p).size;
      } catch {
        return 0;
      }
    };
    return size(this.path) + size(`${this.path}-wal`);
  }

  stats(): SqliteStoreStats {
    return { ...this.counters, watchers: this.watchers.size };
  }

  /** Waits for every acknowledged-to-be write to commit, then stops the writer and ends watches with 'closed'. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.state = 'closing';
    this.maintenanceTimer?.cancel();
    this.expiryTimer?.cancel();
    this.holdProcess();
    if (this.pendingWrites() > 0 && !this.writerError) {
      await new Promise<void>((resolve) => (this.drained = resolve));
    }
    let clean = false;
    if (!this.writerError) {
      this.closeSent = true;
      clean = await this.control({ type: 'close', id: this.nextControlId++ }).then(
        () => true,
        () => false,
      );
    }
    if (clean) await this.workerExited;
    else await this.worker.terminate().catch(() => undefined);
    this.state = 'closed';
    const err = closedError();
    for (const w of this.watchers) w.fail(err);
    this.db.close();
  }

  // ---- helpers ----

  private assertReadable(): void {
    if (this.state === 'closed') throw closedError();
  }

  private assertWritable(): void {
    if (this.state !== 'open') throw closedError();
  }

  private snapshot<T>(fn: () => T): T {
    return this.inSnapshot(fn) as T;
  }

  /** Prepared statements for the query shapes that vary with the key range, cached by their SQL. */
  private statement<R>(sql: string, pluck = false): Statement<unknown[], R> {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare<unknown[], unknown>(sql);
      if (pluck) stmt.pluck();
      this.statements.set(sql, stmt);
    }
    return stmt as Statement<unknown[], R>;
  }
}

/**
 * One watch's position and queue. It is either replaying history from the log (up to target) or
 * live; live events that arrive while it replays are queued, and are all newer than target.
 */
class Watcher {
  /** Every event at or below this revision has been handed to the consumer (or did not match). */
  position: number;
  /** Replay reads the log up to here. */
  target: number;
  replaying = true;
  error?: StoreError;
  private queue: { events: StoreEvent[]; revision: number }[] = [];
  private queued = 0;
  /** The newest revision already covered by replay or the queue. */
  private floor: number;
  private progressDue = 0;
  private lastProgress = 0;
  private wake?: () => void;

  constructor(
    readonly prefix: string,
    after: number,
    hubRevision: number,
    private readonly limit: number,
    private readonly onProgress?: (revision: number) => void,
  ) {
    this.position = after;
    this.target = this.floor = Math.max(after, hubRevision);
  }

  /** Takes one commit's events; returns true when the buffer overflowed. */
  offer(events: StoreEvent[], revision: number): boolean {
    if (revision <= this.floor || this.error) return false;
    let matching: StoreEvent[] | undefined;
    for (const e of events) {
      if (e.kv.modRevision > this.floor && e.kv.key.startsWith(this.prefix)) (matching ??= []).push(e);
    }
    this.floor = revision;
    if (!matching) {
      if (!this.replaying && this.queued === 0) {
        this.position = revision;
        this.progress(revision);
      }
      return false;
    }
    this.queue.push({ events: matching, revision });
    this.queued += matching.length;
    if (this.queued > this.limit) {
      // Bounded memory: forget the queue and re-read it from the log, which holds it anyway.
      this.queue = [];
      this.queued = 0;
      this.replaying = true;
      this.target = revision;
      this.notify();
      return true;
    }
    this.notify();
    return false;
  }

  /** Replay has read everything up to revision (handed out by the caller's next yield). */
  replayed(revision: number): void {
    this.position = revision;
    if (revision < this.target) return;
    this.replaying = false;
    this.progressDue = revision;
  }

  /** After the last replayed page was consumed: tells the consumer where replay ended. */
  replayProgress(): void {
    const revision = this.progressDue;
    this.progressDue = 0;
    if (revision > 0 && this.queued === 0 && !this.replaying) this.progress(revision);
  }

  take(): StoreEvent[] | undefined {
    const batch = this.queue.shift();
    if (!batch) return undefined;
    this.queued -= batch.events.length;
    this.position = batch.revision;
    return batch.events;
  }

  /** With nothing queued, everything up to floor has been handed out: report it. */
  caughtUp(): void {
    if (this.replaying || this.queued > 0 || this.floor <= this.position) return;
    this.position = this.floor;
    this.progress(this.floor);
  }

  idle(): Promise<void> {
    return new Promise((resolve) => (this.wake = resolve));
  }

  notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  fail(e: StoreError): void {
    this.error ??= e;
    this.notify();
  }

  private progress(revision: number): void {
    if (revision <= this.lastProgress) return;
    this.lastProgress = revision;
    try {
      this.onProgress?.(revision);
    } catch {
      // A failing progress callback is the consumer's problem, not the store's.
    }
  }
}

function rowToEvent(r: LogRow): StoreEvent {
  if (r.prevRevision === 0) {
    return { type: 'create', kv: { key: r.key, value: r.value, createRevision: r.createRevision, modRevision: r.id } };
  }
  const prev = { key: r.key, value: r.prevValue ?? '', createRevision: r.createRevision, modRevision: r.prevRevision };
  if (r.deleted) return { type: 'delete', kv: { ...prev, modRevision: r.id }, prev };
  return { type: 'update', kv: { key: r.key, value: r.value, createRevision: r.createRevision, modRevision: r.id }, prev };
}

/**
 * SQL conditions selecting keys that start with prefix (and sort after `after`). SQLite compares
 * TEXT as UTF-8 bytes, i.e. by code point, so the bound is the prefix with its last code point
 * incremented.
 */
function keyRange(column: string, prefix: string, after?: string): { sql: string; params: string[] } {
  const conds: string[] = [];
  const params: string[] = [];
  if (after !== undefined && Buffer.compare(Buffer.from(after), Buffer.from(prefix)) >= 0) {
    conds.push(`${column} > ?`);
    params.push(after);
  } else {
    conds.push(`${column} >= ?`);
    params.push(prefix);
  }
  const end = prefixEnd(prefix);
  if (end !== undefined) {
    conds.push(`${column} < ?`);
    params.push(end);
  }
  return { sql: conds.join(' AND '), params };
}

function prefixEnd(prefix: string): string | undefined {
  const cps = Array.from(prefix);
  while (cps.length > 0) {
    const cp = cps.pop()!.codePointAt(0)!;
    if (cp < 0x10ffff) {
      cps.push(String.fromCodePoint(cp + 1 === 0xd800 ? 0xe000 : cp + 1));
      return cps.join('');
    }
  }
  return undefined;
}

function positive(n: number | undefined, fallback: number): number {
  return n !== undefined && n > 0 ? Math.floor(n) : fallback;
}

function closedError(): StoreError {
  return new StoreError('closed', 'store is closed');
}
