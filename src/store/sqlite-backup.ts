// Backups of the embedded SQLite store: a consistent copy taken while the server runs (one read
// transaction, so every commit is in it or not), and the revision bump a restore needs.
import { closeSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';

/**
 * Copies the database at `src` into `dest` (which must not exist) as of one moment, without
 * stopping the server that writes it: VACUUM INTO reads inside a single transaction, from its own
 * read-only connection, and writes a compact file with no WAL beside it.
 */
export function snapshotSqliteDatabase(src: string, dest: string): { revision: number } {
  // Made empty and private first: the copy holds every Secret, and VACUUM INTO keeps the file's mode.
  closeSync(openSync(dest, 'wx', 0o600));
  const db = new Database(src, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare('VACUUM INTO ?').run(dest);
  } finally {
    db.close();
  }
  const copy = new Database(dest, { readonly: true, fileMustExist: true });
  try {
    return { revision: copy.prepare("SELECT value FROM meta WHERE name = 'revision'").pluck().get() as number };
  } finally {
    copy.close();
  }
}

/**
 * Raises the store's revision by `by` and compacts everything before it, as `etcdutl snapshot
 * restore --bump-revision --mark-compacted` does: every resourceVersion after a restore is above
 * any a client saw before it, and a client resuming a watch from an old one is told to relist
 * (410 Gone) instead of silently missing what the restore undid. The history goes for good
 * (superseded values and tombstones, deleted Secrets' data among them), and the file shrinks.
 */
export function bumpSqliteRevision(path: string, by: number): { revision: number } {
  const db = new Database(path, { fileMustExist: true });
  try {
    const result = db.transaction(() => {
      const current = db.prepare("SELECT value FROM meta WHERE name = 'revision'").pluck().get() as number;
      const revision = current + by;
      db.prepare('DELETE FROM log WHERE id NOT IN (SELECT mod_revision FROM current)').run();
      db.prepare("UPDATE meta SET value = ? WHERE name IN ('revision', 'compact_revision')").run(revision);
      return { revision };
    })();
    db.exec('VACUUM');
    return result;
  } finally {
    db.close();
  }
}
