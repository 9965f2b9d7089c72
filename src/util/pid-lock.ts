// One process per data directory. A second `skiff server`, `agent` or `up` on a directory in use
// would write the same database, join as the same node and stop the first one's pods; instead it
// stops before touching anything, naming the process that holds the directory. The lock is a file
// holding the holder's pid and start time: a holder killed with SIGKILL leaves it behind, and the
// next start finds that process gone (or the pid reused by another program) and takes over.
import { linkSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { processAlive, processStartTime } from './proc.js';

interface Holder {
  pid: number;
  /** Process start time from /proc (clock ticks since boot), so a reused pid is not mistaken for the holder. */
  start?: string;
}

function alive(h: Holder): boolean {
  return processAlive(h.pid, h.start);
}

function readHolder(path: string): Holder | undefined {
  try {
    const h = JSON.parse(readFileSync(path, 'utf8')) as Partial<Holder>;
    return typeof h.pid === 'number' ? { pid: h.pid, ...(typeof h.start === 'string' ? { start: h.start } : {}) } : undefined;
  } catch {
    return undefined;
  }
}

const GUARD_STALE_MS = 10_000;

export class DirectoryInUseError extends Error {
  constructor(
    readonly path: string,
    readonly holderPid: number,
    what: string,
  ) {
    super(`${what} is in use by process ${holderPid} (lock ${path}); stop that process first`);
  }
}

export class PidLock {
  private released = false;

  private constructor(readonly path: string) {
    // Released when the process exits normally; after a SIGKILL the next holder finds it stale.
    process.once('exit', () => this.release());
  }

  /** Takes the lock at `path` for this process, or throws DirectoryInUseError naming `what`. */
  static acquire(path: string, what: string): PidLock {
    const me: Holder = { pid: process.pid, ...(processStartTime(process.pid) ? { start: processStartTime(process.pid)! } : {}) };
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(me), { mode: 0o600 });
    try {
      for (let attempt = 0; attempt < 5; attempt++) {
        try {
          // link() fails if the lock exists: of two processes starting at once, exactly one wins.
          linkSync(tmp, path);
          return new PidLock(path);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        }
        const holder = readHolder(path);
        if (holder && holder.pid !== process.pid && alive(holder)) throw new DirectoryInUseError(path, holder.pid, what);
        // Left by a process that is gone (or half-written by one that died): take it over.
        PidLock.removeStale(path, tmp, holder, what);
      }
      throw new Error(`could not take the lock ${path}`);
    } finally {
      try {
        unlinkSync(tmp);
      } catch {
        // already gone
      }
    }
  }

  /**
   * Removes a stale lock under a second, short-lived lock, so two processes starting at once
   * cannot both remove it (the later one would remove the earlier one's fresh lock).
   */
  private static removeStale(path: string, tmp: string, seen: Holder | undefined, what: string): void {
    const guard = `${path}.takeover`;
    try {
      linkSync(tmp, guard);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      // A guard left by a process that died mid-takeover is old; a live one is a moment old.
      if (Date.now() - statSync(guard).mtimeMs < GUARD_STALE_MS) throw new Error(`${what} is being taken over by another process starting now`);
      unlinkSync(guard);
      return;
    }
    try {
      const now = readHolder(path);
      if (now?.pid === seen?.pid && now?.start === seen?.start) unlinkSync(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    } finally {
      unlinkSync(guard);
    }
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    if (readHolder(this.path)?.pid !== process.pid) return;
    try {
      unlinkSync(this.path);
    } catch {
      // already gone
    }
  }
}

/** The pid of the live process that holds the lock at `path`, or undefined (no lock, or a stale one). */
export function lockHolder(path: string): number | undefined {
  const h = readHolder(path);
  return h && alive(h) ? h.pid : undefined;
}
