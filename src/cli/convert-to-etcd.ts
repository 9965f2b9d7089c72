// `skiff up --servers 3 --storage etcd --convert`: a single-server cluster of an `up` directory
// moved from its embedded SQLite store into etcd, then grown to several members. The `skiff up`
// that runs the cluster does it (it owns the server and the nodes, which keep running); a second
// `skiff up --convert` over the same directory asks it to (supervisor-request.ts) and shows its
// progress; over a stopped cluster, `up --convert` does it before it starts.
//
// What is on disk says where a conversion stands (conversion.json), so an interrupted one is never
// mistaken for a finished one: the cluster's layout (cluster.json) says etcd only once every
// member serves from it; until then the next `up` starts on SQLite, whose file the conversion only
// reads, and discards what the conversion left in <dir>/etcd. Afterwards the SQLite file is kept,
// renamed (state.db.pre-etcd), for a roll back.
import { existsSync, mkdirSync, readFileSync, rmSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { openEtcdStore } from '../store/etcd.js';
import type { ConversionResult } from '../store/sqlite-to-etcd.js';
import { copyServerStoreIntoEtcd, keepSqliteFile } from '../server/store-conversion.js';
import { askSupervisor } from './supervisor-request.js';
import { writeFileAtomic } from '../util/write-file-atomic.js';

const RECORD = 'conversion.json';
export interface ConversionRecord {
  state: 'converting' | 'done' | 'failed';
  /** API servers the cluster grows to. */
  servers: number;
  startedAt: string;
  reason?: string;
  /** Once done: where the SQLite file is kept. */
  keptSqlite?: string;
}

export function readConversion(dir: string): ConversionRecord | undefined {
  try {
    const v = JSON.parse(readFileSync(join(dir, RECORD), 'utf8')) as ConversionRecord;
    return v && typeof v.state === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

export function writeConversion(dir: string, record: ConversionRecord): void {
  writeFileAtomic(join(dir, RECORD), `${JSON.stringify(record, null, 2)}\n`, 0o644);
}

/** Where a conversion's progress goes, besides the terminal of the `up` that runs it. */
export function conversionLogPath(dir: string): string {
  return join(dir, 'logs', 'conversion.log');
}

/** A `say` that prints a line and appends it to the conversion log, which a requester follows. */
export function conversionSay(dir: string, print: (line: string) => void): (line: string) => void {
  mkdirSync(join(dir, 'logs'), { recursive: true });
  return (line) => {
    print(line);
    appendFileSync(conversionLogPath(dir), `${line}\n`);
  };
}

/** How to go on after a conversion that did not finish: one sentence a user can act on. */
export function notFinishedHint(dir: string, servers: number): string {
  return (
    `the SQLite store is as it was: skiff up --data-dir ${dir} starts the cluster on it again (what the conversion left in ${join(dir, 'etcd')} is discarded), ` +
    `and skiff up --data-dir ${dir} --servers ${servers} --storage etcd --convert tries the conversion again from the start`
  );
}

/**
 * An interrupted or failed conversion found by an `up` that starts the cluster on SQLite: says so,
 * and discards the partial etcd copy. Returns the line to show (undefined when there was none).
 */
export function discardUnfinishedConversion(dir: string): string | undefined {
  const rec = readConversion(dir);
  if (!rec || rec.state === 'done') return undefined;
  // A request refused before anything started left no copy behind to speak of.
  const copied = existsSync(join(dir, 'etcd'));
  rmSync(join(dir, 'etcd'), { recursive: true, force: true });
  rmSync(join(dir, RECORD), { force: true });
  if (!copied) return undefined;
  return `a conversion to etcd started ${rec.startedAt} did not finish${rec.reason ? ` (${rec.reason})` : ''}: the cluster starts on its SQLite store, which the conversion only read; its partial etcd copy is removed`;
}

export interface CopyOptions {
  dir: string;
  etcdEndpoints: string[];
  token: string;
  say: (line: string) => void;
  stopServer?: () => Promise<void>;
}

/** The first server's store of an `up` directory copied into etcd (see copyServerStoreIntoEtcd). */
export async function copyUpStoreIntoEtcd(o: CopyOptions): Promise<ConversionResult> {
  const etcd = await openEtcdStore({ endpoints: o.etcdEndpoints, compactIntervalMs: 0, randomizeEndpoints: false });
  try {
    return await copyServerStoreIntoEtcd({ serverDir: join(o.dir, 'server'), etcd, token: o.token, say: o.say, ...(o.stopServer ? { stopServer: o.stopServer } : {}) });
  } finally {
    await etcd.close();
  }
}

/** Puts the `up` directory's SQLite file aside once the cluster runs on etcd; the new path. */
export function keepUpSqliteFile(dir: string): string {
  return keepSqliteFile(join(dir, 'server'));
}

/**
 * Asks the `skiff up` running the cluster (pid) to convert it, and shows its progress until it
 * is done; the exit status (0: the cluster runs on etcd).
 */
export function requestConversion(dir: string, pid: number, servers: number, timeoutMs: number): Promise<number> {
  return askSupervisor(dir, pid, { kind: 'convert', servers }, {
    log: conversionLogPath(dir),
    status: () => readConversion(dir),
    timeoutMs,
    what: `to convert it to etcd with ${servers} API server${servers === 1 ? '' : 's'}; its nodes keep running`,
    ifGone: notFinishedHint(dir, servers),
  });
}
