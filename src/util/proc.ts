// What /proc says about a process: whether the one a pid names is still the one we started (pids
// are reused), and whether it has exited but not been reaped yet (a zombie holds nothing).
import { readFileSync } from 'node:fs';

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
