// What a backup of a server on the embedded store holds, and how a restore lays it out: the
// database as of one moment, plus the cluster's keys (<data-dir>/tls: the CA, the service-account
// signing key, ...) without which every credential it issued would be void. The backup is itself
// an SQLite database, with those files in a table of its own (`sqlite3 FILE .tables` shows it).
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { bumpSqliteRevision, snapshotSqliteDatabase } from '../store/sqlite-backup.js';

const FORMAT = 'skiff-sqlite-backup/1';
const TABLE = 'skiff_backup_files';

export function databasePath(dataDir: string): string {
  return join(dataDir, 'db', 'state.db');
}

/**
 * The directory a backup was taken from: `server`, a `skiff server --data-dir` directory (the
 * database in db/), or `up`, a `skiff up` directory (the server's data in server/). A restore lays
 * the backup out the same way unless told otherwise, so the command that ran the cluster finds it.
 */
export type BackupLayout = 'up' | 'server';

const LAYOUT_ROW = 'layout';

/** The layout a backup records; undefined for a backup made before backups recorded it. */
export function readBackupLayout(file: string): BackupLayout | undefined {
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch {
    return undefined;
  }
  try {
    const row = db.prepare(`SELECT data FROM ${TABLE} WHERE name = ?`).get(LAYOUT_ROW) as { data: Buffer } | undefined;
    const v = row?.data.toString();
    return v === 'up' || v === 'server' ? v : undefined;
  } catch {
    return undefined;
  } finally {
    db.close();
  }
}

/** Writes a backup of the server data dir `dataDir` (the server may be running) to `file`, recording the layout it came from. */
export function backupServerDir(dataDir: string, file: string, layout: BackupLayout): { revision: number; files: number } {
  const db = databasePath(dataDir);
  if (!existsSync(db)) throw new Error(`${dataDir} holds no SQLite database (${db}); for a cluster on etcd, back up etcd (--etcd-endpoints)`);
  const tmp = `${file}.tmp-${process.pid}`;
  rmSync(tmp, { force: true });
  try {
    const { revision } = snapshotSqliteDatabase(db, tmp);
    const out = new Database(tmp);
    const tls = join(dataDir, 'tls');
    const names = existsSync(tls) ? readdirSync(tls).filter((n) => /\.(crt|key)$/.test(n) && statSync(join(tls, n)).isFile()) : [];
    try {
      out.exec(`CREATE TABLE ${TABLE} (name TEXT PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID`);
      const put = out.prepare(`INSERT INTO ${TABLE} (name, data) VALUES (?, ?)`);
      out.transaction(() => {
        put.run('format', Buffer.from(FORMAT));
        put.run(LAYOUT_ROW, Buffer.from(layout));
        for (const n of names) put.run(`tls/${n}`, readFileSync(join(tls, n)));
      })();
    } finally {
      out.close();
    }
    renameSync(tmp, file);
    return { revision, files: names.length };
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/**
 * Lays a backup out as the fresh server data dir `dataDir`, its revision raised by `bumpRevision`
 * (see bumpSqliteRevision); a data dir that already holds a database is refused.
 */
export function restoreServerDir(file: string, dataDir: string, bumpRevision: number): { revision: number; files: number } {
  const db = databasePath(dataDir);
  if (existsSync(db)) throw new Error(`${dataDir} already holds a database (${db}): restore into a fresh data directory`);
  const tmp = `${db}.restore-${process.pid}`;
  mkdirSync(join(dataDir, 'db'), { recursive: true, mode: 0o700 });
  mkdirSync(join(dataDir, 'tls'), { recursive: true, mode: 0o700 });
  copyFileSync(file, tmp);
  try {
    const restored = new Database(tmp, { fileMustExist: true });
    let files = 0;
    try {
      const rows = (() => {
        try {
          return restored.prepare(`SELECT name, data FROM ${TABLE}`).all() as { name: string; data: Buffer }[];
        } catch {
          return [];
        }
      })();
      if (rows.find((r) => r.name === 'format')?.data.toString() !== FORMAT) throw new Error(`${file} is not a skiff backup (made by \`skiff backup\` of a server on SQLite)`);
      for (const r of rows) {
        if (!r.name.startsWith('tls/')) continue;
        const name = r.name.slice(4);
        if (!/^[A-Za-z0-9._-]+$/.test(name)) continue;
        writeFileSync(join(dataDir, 'tls', name), r.data, { mode: name.endsWith('.key') ? 0o600 : 0o644 });
        files++;
      }
      restored.exec(`DROP TABLE ${TABLE}`);
    } finally {
      restored.close();
    }
    const { revision } = bumpSqliteRevision(tmp, bumpRevision);
    renameSync(tmp, db);
    return { revision, files };
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}
