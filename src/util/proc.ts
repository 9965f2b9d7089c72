// What /proc says about a process: whether the one a pid names is still the one we started (pids
// are reused), and whether it has exited but not been reaped yet (a zombie holds nothing).
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

/** The fields of /proc/<pid>/stat after the command name (the state first), or undefined. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Process start time (clock ticks since boot), so a reused pid is not mistaken for the process. */
export function processStartTime(pid: number): string | undefined {
  return statFields(pid)?.[19];
}

/** Whether `pid` runs (not a zombie) and, when `start` is given, is the process that started then. */
export function processAlive(pid: number, start?: string): boolean {
  // 0 and -1 would signal a process group or everything.
  if (!Number.isInteger(pid) || pid <= 1) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const fields = statFields(pid);
  if (fields?.[0] === 'Z') return false;
  const now = fields?.[19];
  return start === undefined || now === undefined || now === start;
}

/** Socket inodes listening on TCP `port` (any address), from /proc/net/tcp and tcp6. */
function listeningInodes(port: number): Set<string> {
  const out = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 0A is LISTEN; the inode is the tenth field.
      if (f.length > 9 && f[3] === '0A' && parseInt(f[1]!.split(':')[1] ?? '', 16) === port) out.add(f[9]!);
    }
  }
  return out;
}

/** The process (of this user: others' are not readable) that listens on TCP `port`, if one is found. */
export function pidListeningOn(port: number): number | undefined {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return undefined;
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${p}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${p}/fd/${fd}`));
        if (m && inodes.has(m[1]!)) return Number(p);
      } catch {
        /* closed meanwhile */
      }
    }
  }
  return undefined;
}

/** A process's command line, one argument each ([] when it is gone or not readable). */
export function processArgs(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}
