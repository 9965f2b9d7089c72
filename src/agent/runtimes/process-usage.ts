// Resource usage of the process runtime's containers, from /proc: a container is a process group,
// so its CPU is the user and system time of every process in the group, with what their reaped
// children used (utime + stime + cutime + cstime of /proc/<pid>/stat), and its memory the sum of
// their resident sets. Its processes share the node's cgroup (the runtime makes none per
// container), so there is no cgroup to read; the resident set stands in for the working set.
import { readFileSync, readdirSync } from 'node:fs';
import type { InstanceUsage } from './runtime.js';

/** USER_HZ: /proc reports times in these ticks, 100 a second on every Linux architecture Node runs on. */
export const CLOCK_TICKS_PER_SECOND = 100;
const NS_PER_TICK = 1e9 / CLOCK_TICKS_PER_SECOND;

let pageSize: number | undefined;

/** The kernel's page size, from this process's own resident set in pages and in bytes. */
function pageBytes(): number {
  if (pageSize !== undefined) return pageSize;
  try {
    const pages = Number(readFileSync('/proc/self/statm', 'utf8').split(' ')[1]);
    const bytes = process.memoryUsage().rss;
    // Near enough to one of the sizes kernels use; the two readings are not taken at one instant.
    const guess = bytes / pages;
    pageSize = [4096, 16384, 65536].reduce((best, p) => (Math.abs(p - guess) < Math.abs(best - guess) ? p : best), 4096);
  } catch {
    pageSize = 4096;
  }
  return pageSize;
}

/** CPU (core-nanoseconds) and resident bytes of each of `groups` (process group ids), read in one pass over /proc. */
export function processGroupUsage(groups: ReadonlySet<number>, now: number): Map<number, InstanceUsage> {
  const out = new Map<number, InstanceUsage>();
  if (groups.size === 0) return out;
  const page = pageBytes();
  let pids: string[];
  try {
    pids = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const p of pids) {
    if (p.charCodeAt(0) < 48 || p.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${p}/stat`, 'utf8');
    } catch {
      continue;
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pgrp = Number(f[2]);
    if (!groups.has(pgrp)) continue;
    const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    // A zombie holds no memory; its time still counts until its parent reaps it.
    const rss = f[0] === 'Z' ? 0 : Number(f[21]) * page;
    const u = out.get(pgrp) ?? { timestampMs: now, cpuCoreNanoSeconds: 0, memoryWorkingSetBytes: 0, memoryUsageBytes: 0, rssBytes: 0 };
    u.cpuCoreNanoSeconds += ticks * NS_PER_TICK;
    u.memoryWorkingSetBytes += rss;
    u.memoryUsageBytes! += rss;
    u.rssBytes! += rss;
    out.set(pgrp, u);
  }
  return out;
}
