// A server's own SQLite store moved into etcd: what `skiff server --storage etcd --convert` does
// at start (an installed server restarted with new flags, as k3s converts with --cluster-init),
// and what `skiff up --convert` does for its first server. The store is copied by
// store/sqlite-to-etcd.ts; here are the server's own parts: where its file is, its CA sealed in
// etcd for every member (so every credential it handed out still verifies), and the file put
// aside (state.db.pre-etcd) once the copy is in etcd, never opened again by a server.
import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { sealedSharedPki } from '../pki/shared-ca.js';
import { copySqliteToEtcd, raiseRevision, readSqliteSnapshot, sqliteRevision, type ConversionResult } from '../store/sqlite-to-etcd.js';
import type { Store } from '../store/store.js';

/** The SQLite file's name once the cluster runs on etcd: kept for a roll back. */
export const KEPT_SQLITE_SUFFIX = '.pre-etcd';

/** The SQLite file of a server data directory. */
export function serverSqlitePath(serverDir: string): string {
  return join(serverDir, 'db', 'state.db');
}

export interface ServerStoreCopy {
  /** The server data directory whose store is copied (its db/ and tls/). */
  serverDir: string;
  /** An empty etcd. */
  etcd: Store;
  /** The cluster token: it seals the CA in etcd, as the first etcd member would. */
  token: string;
  say: (line: string) => void;
  /**
   * Stops the SQLite server, after the revision has been raised to about its own (while it still
   * served) and before the snapshot: writes after the snapshot would be lost.
   */
  stopServer?: () => Promise<void>;
}

/** Raises etcd's revision, stops the SQLite server (when one runs), and copies its store into etcd. */
export async function copyServerStoreIntoEtcd(o: ServerStoreCopy): Promise<ConversionResult> {
  const path = serverSqlitePath(o.serverDir);
  if (!existsSync(path)) throw new Error(`${path} does not exist: there is no SQLite store to convert`);
  const pki = sealedSharedPki(join(o.serverDir, 'tls'), o.token);
  await raiseRevision(o.etcd, sqliteRevision(path), { say: o.say });
  if (o.stopServer) await o.stopServer();
  const snapshot = readSqliteSnapshot(path);
  o.say(`read the SQLite store at revision ${snapshot.revision}: ${snapshot.items.length} keys`);
  const result = await copySqliteToEtcd(snapshot, o.etcd, { say: o.say, extra: pki });
  o.say(`copied ${result.copied} keys; etcd is at revision ${result.etcdRevision}, above the SQLite store's ${result.sqliteRevision} (older resourceVersions now get 410 Gone)`);
  return result;
}

/** Renames the SQLite file (and its WAL) out of the way once the store is in etcd; the new path. */
export function keepSqliteFile(serverDir: string): string {
  const path = serverSqlitePath(serverDir);
  for (const ext of ['-wal', '-shm']) if (existsSync(path + ext)) renameSync(path + ext, `${path}${KEPT_SQLITE_SUFFIX}${ext}`);
  if (existsSync(path)) renameSync(path, path + KEPT_SQLITE_SUFFIX);
  return path + KEPT_SQLITE_SUFFIX;
}

/**
 * `skiff server --storage etcd --convert`: before the server uses etcd, its SQLite store goes
 * there — once; a server started again with the flag finds the file put aside and just starts.
 */
export async function convertOnStart(serverDir: string, etcd: Store, token: string, say: (line: string) => void): Promise<void> {
  const path = serverSqlitePath(serverDir);
  if (!existsSync(path)) {
    if (existsSync(path + KEPT_SQLITE_SUFFIX)) return say(`--convert: the SQLite store was converted before (kept as ${path + KEPT_SQLITE_SUFFIX}); starting on etcd`);
    throw new Error(`--convert: ${path} does not exist: there is no SQLite store to move into etcd`);
  }
  const present = await etcd.count('');
  if (present > 0) {
    throw new Error(
      `--convert: etcd already holds ${present} keys, and a conversion needs an empty etcd; the SQLite store ${path} is untouched (start without --convert, on --storage sqlite, to use it; ` +
        `an etcd holding only an interrupted conversion can be emptied with etcdctl del "" --from-key)`,
    );
  }
  say(`--convert: moving the SQLite store ${path} into etcd`);
  await copyServerStoreIntoEtcd({ serverDir, etcd, token, say });
  say(`--convert: the SQLite store is kept as ${keepSqliteFile(serverDir)} (remove it once you no longer want to roll back)`);
}
