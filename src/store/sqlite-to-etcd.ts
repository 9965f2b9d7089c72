// Moving the embedded SQLite store of a single server into an (empty) etcd cluster, as k3s does
// when a server restarts with --cluster-init, but keeping what clients already hold meaningful:
//
//   1. The SQLite file is only read (read-only connection, one snapshot): whatever happens to the
//      conversion, the file still opens as it was.
//   2. etcd's revision is first carried past SQLite's (writes to one scratch key per lane, each
//      created and deleted again), so every object copied gets a resourceVersion above any a
//      client saw before. Nothing in etcd's API sets a revision directly.
//   3. Every live key is copied with its value as-is (uid, generation, everything but the
//      resourceVersion, which the store never keeps in the value), each its own write; a key written
//      with a TTL (Events) gets a lease for the time it had left, and one whose TTL already ran
//      out is not copied (SQLite's reaper would have deleted it).
//   4. History is compacted up to the end of the copy: a watch or list from a resourceVersion of
//      the SQLite era is answered 410 Gone (the client relists), never with events of another
//      store under numbers it may already have seen.
//   5. The copy is checked key by key against the snapshot.
//
// The caller stops the SQLite server first (writes after the snapshot would be lost) and keeps
// the file until the cluster runs on etcd.

import Database from 'better-sqlite3';
import { systemClock, type Clock } from '../util/clock.js';
import { isStoreError, type Store } from './store.js';

export interface SqliteItem {
  key: string;
  value: string;
  modRevision: number;
  /** When the key's TTL runs out (ms since the epoch); undefined: kept for good. */
  expiresAt?: number;
}

export interface SqliteSnapshot {
  /** The store's current revision: the highest resourceVersion a client can have seen. */
  revision: number;
  /** Live keys, oldest write first. */
  items: SqliteItem[];
}

/** The current revision of a SQLite store file, read without opening it for writing. */
export function sqliteRevision(path: string): number {
  const db = openReadOnly(path);
  try {
    return (db.prepare("SELECT value FROM meta WHERE name = 'revision'").pluck().get() as number | undefined) ?? 0;
  } finally {
    db.close();
  }
}

/** Every live key of a SQLite store file, as of one snapshot, read without writing to it. */
export function readSqliteSnapshot(path: string): SqliteSnapshot {
  const db = openReadOnly(path);
  try {
    const read = db.transaction(() => {
      const revision = (db.prepare("SELECT value FROM meta WHERE name = 'revision'").pluck().get() as number | undefined) ?? 0;
      const items = db
        .prepare(
          `SELECT c.key AS key, l.value AS value, c.mod_revision AS modRevision, e.expires_at AS expiresAt
             FROM current c JOIN log l ON l.id = c.mod_revision LEFT JOIN expiry e ON e.key = c.key
            ORDER BY c.mod_revision`,
        )
        .all() as { key: string; value: string; modRevision: number; expiresAt: number | null }[];
      return { revision, items: items.map((i) => (i.expiresAt === null ? { key: i.key, value: i.value, modRevision: i.modRevision } : { ...i, expiresAt: i.expiresAt })) };
    });
    return read();
  } finally {
    db.close();
  }
}

function openReadOnly(path: string): Database.Database {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  return db;
}

export interface ConversionOptions {
  /** Writes in flight at once (padding and copying). Default 64. */
  concurrency?: number;
  /** One line per step, and one every progressIntervalMs during a long one. */
  say?: (line: string) => void;
  progressIntervalMs?: number;
  /** Keys to write after the copy, before compaction (the cluster CA sealed for every member). */
  extra?: { key: string; value: string }[];
  clock?: Clock;
}

export interface ConversionResult {
  sqliteRevision: number;
  /** Keys copied (with extra ones). */
  copied: number;
  /** Keys whose TTL had run out, not copied. */
  expired: number;
  /** Keys copied with a lease. */
  withLease: number;
  /** etcd's revision after the copy; history up to it is compacted. */
  etcdRevision: number;
}

/** The scratch keys padding writes to (created and deleted again; none is left). */
export const PAD_KEY_PREFIX = '/skiff/conversion/pad/';

/**
 * Copies a SQLite snapshot into `etcd`, which must hold no keys. Throws, leaving etcd partly
 * written, on any failure: the caller discards etcd's data and may start over.
 */
export async function copySqliteToEtcd(snapshot: SqliteSnapshot, etcd: Store, opts: ConversionOptions = {}): Promise<ConversionResult> {
  const say = opts.say ?? (() => undefined);
  const clock = opts.clock ?? systemClock;
  const lanes = Math.max(1, opts.concurrency ?? 64);
  const every = opts.progressIntervalMs ?? 5_000;
  const present = await etcd.count('');
  if (present > 0) throw new Error(`etcd already holds ${present} keys; the conversion needs an empty etcd`);

  // 2. The revision past SQLite's (most of it already, when the caller raised it while the server still ran).
  await raiseRevision(etcd, snapshot.revision, opts);

  // 3. The keys, each its own write (so each its own resourceVersion), several in flight at once.
  const now = clock.now();
  const live = snapshot.items.filter((i) => i.expiresAt === undefined || i.expiresAt > now);
  const expired = snapshot.items.length - live.length;
  const withLease = live.filter((i) => i.expiresAt !== undefined).length;
  say(`copying ${live.length} keys into etcd (${withLease} with a TTL, kept as etcd leases${expired > 0 ? `; ${expired} whose TTL ran out are left behind` : ''})`);
  const progress = ticker(clock, every, (n) => say(`  ${n} of ${live.length} keys copied`));
  let next = 0;
  let copied = 0;
  await Promise.all(
    Array.from({ length: Math.min(lanes, live.length) }, async () => {
      while (next < live.length) {
        const item = live[next++]!;
        await etcd.create(item.key, item.value, item.expiresAt === undefined ? undefined : { ttlSeconds: leaseSeconds(item.expiresAt - now) });
        progress(++copied);
      }
    }),
  );
  for (const e of opts.extra ?? []) {
    try {
      await etcd.create(e.key, e.value);
    } catch (err) {
      if (!isStoreError(err, 'exists')) throw err;
      // Only a retried step meets its own key; the value is what it wrote.
    }
  }

  // 4. Old resourceVersions: 410 Gone from here on.
  const etcdRevision = await etcd.currentRevision();
  await etcd.compact(etcdRevision);

  // 5. Every key as it was.
  say('checking the copy against the SQLite snapshot');
  const extra = new Set((opts.extra ?? []).map((e) => e.key));
  const got = new Map<string, string>();
  let after: string | undefined;
  for (;;) {
    const page = await etcd.list({ prefix: '', limit: 1000, ...(after !== undefined ? { after } : {}) });
    for (const kv of page.items) got.set(kv.key, kv.value);
    if (!page.more || page.items.length === 0) break;
    after = page.items[page.items.length - 1]!.key;
  }
  const wanted = new Map(live.map((i) => [i.key, i]));
  // A leased key may expire during the check itself; only a key that should outlive it counts.
  const missed = live.filter((i) => got.get(i.key) !== i.value && (i.expiresAt === undefined || i.expiresAt > clock.now() + 5_000)).map((i) => i.key);
  if (missed.length > 0) throw new Error(`the copy in etcd differs from the SQLite store for ${missed.length} keys (first: ${missed[0]})`);
  const unexpected = [...got.keys()].filter((k) => !extra.has(k) && !wanted.has(k));
  if (unexpected.length > 0) throw new Error(`etcd holds ${unexpected.length} keys the SQLite store does not (first: ${unexpected[0]})`);
  return { sqliteRevision: snapshot.revision, copied: live.length + extra.size, expired, withLease, etcdRevision };
}

/**
 * Carries etcd's revision to at least `target` with writes that leave no key behind: the larger
 * part of a conversion, which can run while the SQLite server still serves (to SQLite's revision
 * then), so that the pause for the copy itself is short.
 */
export async function raiseRevision(etcd: Store, target: number, opts: ConversionOptions = {}): Promise<number> {
  const say = opts.say ?? (() => undefined);
  const lanes = Math.max(1, opts.concurrency ?? 64);
  const start = await etcd.currentRevision();
  const padWrites = Math.max(0, target - start);
  if (padWrites === 0) return start;
  say(`raising etcd's revision from ${start} to ${target}, above every resourceVersion the SQLite store gave out (${padWrites} writes)`);
  const progress = ticker(opts.clock ?? systemClock, opts.progressIntervalMs ?? 5_000, (n) => say(`  revision raised by ${n} of ${padWrites}`));
  let issued = 0;
  await Promise.all(
    Array.from({ length: Math.min(lanes, Math.ceil(padWrites / 2)) }, async (_, lane) => {
      const key = `${PAD_KEY_PREFIX}${lane}`;
      while (issued < padWrites) {
        issued += 2;
        const kv = await etcd.create(key, '');
        await etcd.delete(key, kv.modRevision);
        progress(Math.min(issued, padWrites));
      }
    }),
  );
  return etcd.currentRevision();
}

/**
 * A lease for the time a key had left, rounded up (to the minute past one): a key may go a little
 * later than it would have, never earlier, and a few leases serve many Events.
 */
function leaseSeconds(leftMs: number): number {
  const s = Math.max(1, Math.ceil(leftMs / 1000));
  return s <= 60 ? s : Math.ceil(s / 60) * 60;
}

/** Calls report(n) at most once per interval. */
function ticker(clock: Clock, intervalMs: number, report: (n: number) => void): (n: number) => void {
  let last = clock.now();
  return (n) => {
    const t = clock.now();
    if (t - last < intervalMs) return;
    last = t;
    report(n);
  };
}
