// The node's own CPU and memory, from the host's /proc (the process and containerd runtimes): the
// CPU time spent outside idle and iowait on every CPU (/proc/stat), and as working set the memory
// in use that the kernel could not simply drop (MemTotal - MemAvailable of /proc/meminfo), close
// to what the kubelet reads from the root cgroup. Agents sharing one machine each report it whole.
import { readFileSync } from 'node:fs';
import type { InstanceUsage } from './runtimes/runtime.js';
import { CLOCK_TICKS_PER_SECOND } from './runtimes/process-usage.js';

/** Busy CPU time of /proc/stat's first line, in core-nanoseconds. */
export function busyCpuNanoseconds(procStat: string): number {
  const line = procStat.slice(0, procStat.indexOf('\n'));
  // cpu user nice system idle iowait irq softirq steal (guest time is already in user)
  const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const busy = f[0]! + f[1]! + f[2]! + (f[5] ?? 0) + (f[6] ?? 0) + (f[7] ?? 0);
  return (busy * 1e9) / CLOCK_TICKS_PER_SECOND;
}

/** MemTotal, MemAvailable and the working set (their difference), in bytes, from /proc/meminfo. */
export function memoryFigures(meminfo: string): { totalBytes: number; availableBytes: number; workingSetBytes: number } {
  const kib = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(meminfo)?.[1] ?? 0) * 1024;
  const totalBytes = kib('MemTotal');
  const availableBytes = kib('MemAvailable');
  return { totalBytes, availableBytes, workingSetBytes: Math.max(0, totalBytes - availableBytes) };
}

/** The host's usage now; undefined where /proc cannot be read. */
export function hostUsage(now: number): (InstanceUsage & { availableBytes: number }) | undefined {
  try {
    const cpu = busyCpuNanoseconds(readFileSync('/proc/stat', 'utf8'));
    const mem = memoryFigures(readFileSync('/proc/meminfo', 'utf8'));
    return { timestampMs: now, cpuCoreNanoSeconds: cpu, memoryWorkingSetBytes: mem.workingSetBytes, memoryUsageBytes: mem.workingSetBytes, availableBytes: mem.availableBytes };
  } catch {
    return undefined;
  }
}
