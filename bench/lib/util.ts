// Shared helpers for the benchmark suites: progress output, tables, percentiles, temp dirs and
// child processes that are always cleaned up (own process group, killed on exit or failure).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

// ---------------------------------------------------------------------------------------------
// Progress and formatting

const t0 = performance.now();

/** A progress line on stderr, prefixed with seconds since the run started. */
export function progress(msg: string): void {
  process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${msg}\n`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** A seeded generator of numbers in [0, 1) (mulberry32: small, fast): the same seed, the same run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Nearest-rank percentile of an ascending-sorted array (p in 0..100). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

export function fmtInt(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '-';
  return Math.round(n).toLocaleString('en-US');
}

export function fmtMs(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '-';
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);
}

export function fmtMiB(bytes: number | undefined): string {
  if (bytes === undefined || !Number.isFinite(bytes)) return '-';
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

export interface Table {
  title: string;
  headers: string[];
  rows: string[][];
  /** Lines printed under the table (targets, ratios, caveats). */
  notes?: string[];
}

/** A plain-text table: first column left-aligned, the rest right-aligned. */
export function renderTable(t: Table): string {
  const widths = t.headers.map((h, i) => Math.max(h.length, ...t.rows.map((r) => (r[i] ?? '').length)));
  const cell = (s: string, i: number) => (i === 0 ? s.padEnd(widths[i]!) : s.padStart(widths[i]!));
  const line = (cells: string[]) => cells.map((c, i) => cell(c, i)).join('  ').trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  const out = [t.title, '='.repeat(t.title.length), line(t.headers), rule, ...t.rows.map(line)];
  for (const n of t.notes ?? []) out.push(n);
  return out.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Locations

/** The project root: the nearest ancestor of this file with bin/skiff.js (works from dist/ and .build/). */
export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'bin', 'skiff.js')) && existsSync(join(dir, 'package.json'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find the project root (bin/skiff.js) above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
}

/**
 * The `skiff` command line of this build (bench/lib/skiff-entry.js next to this file): run it as
 * `node <skiffEntry()> server ...`. Unlike bin/skiff.js (which loads dist/), the processes it
 * starts run the same compiled code as the benchmark, wherever that was compiled to.
 */
export function skiffEntry(): string {
  return fileURLToPath(new URL('./skiff-entry.js', import.meta.url));
}

// ---------------------------------------------------------------------------------------------
// Cleanup registry: temp dirs and process groups, released on normal exit, signals and failures.

const tempDirs = new Set<string>();
const groups = new Set<ManagedChild>();
let hooksInstalled = false;

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  // Last resort, synchronous: kill every group still alive and remove temp dirs.
  process.on('exit', () => {
    for (const c of groups) c.killNow();
    for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      progress(`${sig}: cleaning up`);
      process.exit(130);
    });
  }
}

export function makeTempDir(prefix: string): string {
  installHooks();
  const d = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(d);
  return d;
}

export function removeTempDir(d: string): void {
  rmSync(d, { recursive: true, force: true });
  tempDirs.delete(d);
}

export interface ManagedChild {
  readonly name: string;
  readonly pid: number;
  readonly proc: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly logFile: string;
  alive(): boolean;
  /** SIGTERM to the group, then SIGKILL after graceMs. */
  stop(graceMs?: number): Promise<void>;
  killNow(): void;
  logTail(chars?: number): string;
}

/** Starts a command in its own process group, stdout+stderr to logFile. */
export function startChild(name: string, command: string, args: string[], logFile: string, env: NodeJS.ProcessEnv = process.env): ManagedChild {
  installHooks();
  const fd = openSync(logFile, 'a');
  let proc: ChildProcess;
  try {
    proc = spawn(command, args, { detached: true, stdio: ['ignore', fd, fd], env });
  } finally {
    closeSync(fd);
  }
  if (proc.pid === undefined) throw new Error(`cannot start ${name} (${command})`);
  const pid = proc.pid;
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
    proc.once('error', () => {
      done = true;
      resolve({ code: -1, signal: null });
    });
  });
  const signalGroup = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      /* already gone */
    }
  };
  const child: ManagedChild = {
    name,
    pid,
    proc,
    exited,
    logFile,
    alive: () => !done,
    async stop(graceMs = 10_000) {
      if (!done) {
        signalGroup('SIGTERM');
        const timer = sleep(graceMs).then(() => 'timeout' as const);
        if ((await Promise.race([exited.then(() => 'exited' as const), timer])) === 'timeout') progress(`${name} did not stop within ${graceMs} ms: SIGKILL`);
      }
      // The leader may be gone while others in its group are not.
      signalGroup('SIGKILL');
      await Promise.race([exited, sleep(2000)]);
      groups.delete(child);
    },
    killNow() {
      signalGroup('SIGKILL');
    },
    logTail(chars = 3000) {
      try {
        return readFileSync(logFile, 'utf8').slice(-chars);
      } catch {
        return '';
      }
    },
  };
  groups.add(child);
  return child;
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// /proc readings

/** Resident set size of a process in bytes (VmRSS), undefined if unavailable. */
export function rssOf(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Peak resident set size (VmHWM) in bytes. */
export function peakRssOf(pid: number): number | undefined {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** CPU seconds (user+system) a process (all threads) or one of its threads has used so far. */
export function cpuSecondsOf(pid: number, tid?: number): number | undefined {
  try {
    const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(rest[11]);
    const stime = Number(rest[12]);
    return (utime + stime) / 100; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

/** Starts measuring a group of processes together; the returned function reads their CPU since then, in % of one core. */
export function groupCpuMeter(pids: readonly number[]): () => number {
  const sum = () => pids.reduce((a, p) => a + (cpuSecondsOf(p) ?? 0), 0);
  const start = sum();
  const t0 = performance.now();
  return () => ((sum() - start) / ((performance.now() - t0) / 1000)) * 100;
}

/** Jiffies the whole machine spent busy and in total so far (first line of /proc/stat). */
function machineJiffies(): { busy: number; total: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    const total = f.reduce((a, b) => a + b, 0);
    const idle = (f[3] ?? 0) + (f[4] ?? 0); // idle + iowait
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

/** How busy the whole machine is over `ms`, as % of one core (200% = both of 2 cores). */
export async function machineBusyPct(ms: number): Promise<number | undefined> {
  const a = machineJiffies();
  await sleep(ms);
  const b = machineJiffies();
  if (!a || !b || b.total === a.total) return undefined;
  return ((b.busy - a.busy) / (b.total - a.total)) * cpus().length * 100;
}

/** Measures the CPU a process (and its main thread, and this process) used over an interval, as % of one core. */
export class CpuMeter {
  private readonly start = performance.now();
  private readonly pidStart: number | undefined;
  private readonly mainStart: number | undefined;
  private readonly selfStart = process.cpuUsage();
  private readonly machineStart = machineJiffies();
  constructor(private readonly pid?: number) {
    this.pidStart = pid === undefined ? undefined : cpuSecondsOf(pid);
    this.mainStart = pid === undefined ? undefined : cpuSecondsOf(pid, pid);
  }
  read(): { pidPct?: number; mainThreadPct?: number; selfPct: number; machinePct?: number } {
    const wall = (performance.now() - this.start) / 1000;
    const self = process.cpuUsage(this.selfStart);
    const selfPct = ((self.user + self.system) / 1e6 / wall) * 100;
    const m = machineJiffies();
    const machine =
      m && this.machineStart && m.total > this.machineStart.total
        ? { machinePct: ((m.busy - this.machineStart.busy) / (m.total - this.machineStart.total)) * cpus().length * 100 }
        : {};
    if (this.pid === undefined || this.pidStart === undefined) return { selfPct, ...machine };
    const now = cpuSecondsOf(this.pid);
    const main = cpuSecondsOf(this.pid, this.pid);
    return {
      selfPct,
      ...machine,
      ...(now !== undefined ? { pidPct: ((now - this.pidStart) / wall) * 100 } : {}),
      ...(main !== undefined && this.mainStart !== undefined ? { mainThreadPct: ((main - this.mainStart) / wall) * 100 } : {}),
    };
  }
}

/**
 * Polls `fn` every `everyMs` until it is true and gives back how long that took; fails after
 * `timeoutMs`, naming `what` (a benchmark's bounded wait for its cluster to reach a state).
 */
export async function until(what: string, timeoutMs: number, fn: () => Promise<boolean>, everyMs = 1000): Promise<number> {
  const t = performance.now();
  for (;;) {
    if (await fn().catch(() => false)) return performance.now() - t;
    if (performance.now() - t > timeoutMs) throw new Error(`${what} not reached within ${timeoutMs / 1000} s`);
    await sleep(everyMs);
  }
}
