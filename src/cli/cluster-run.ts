// What runs for a `skiff up` directory. The supervisor (`skiff up`, in the foreground or detached)
// keeps a run record, run.json, naming every process it started (servers, agents, etcd, HAProxy,
// the cloud, the simulated fleet) with its pid and start time, and what a user reads in `skiff
// status` (addresses, state). The lock files the processes hold in the directory (pid-lock.ts) name
// the rest: a process a user started beside the cluster (an agent on <dir>/agents/NAME), or one
// left by a supervisor that was killed outright, whose record may be out of date. From both,
// `skiff down` and the next `skiff up` find every process of the cluster, and nothing else.
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import { lockHolder } from '../util/pid-lock.js';
import { pidListeningOn, processAlive, processArgs, processStartTime } from '../util/proc.js';
import { isClusterDir } from './cluster-dir.js';

export type RunRole = 'up' | 'server' | 'agent' | 'sim' | 'cloud' | 'etcd' | 'haproxy';

export interface RunProcess {
  name: string;
  role: RunRole;
  pid: number;
  /** Start time from /proc, so a reused pid is never taken for the process. */
  start?: string;
}

export interface ClusterRun {
  name: string;
  supervisor: RunProcess;
  state: 'starting' | 'ready' | 'stopping';
  detached: boolean;
  startedAt: string;
  apiServers: string[];
  /** The address kubectl uses (HAProxy's with several servers). */
  endpoint: string;
  dashboard?: string;
  log?: string;
  processes: RunProcess[];
}

const FILE = 'run.json';

export function runProcess(name: string, role: RunRole, pid: number | undefined): RunProcess | undefined {
  if (pid === undefined) return undefined;
  const start = processStartTime(pid);
  return { name, role, pid, ...(start ? { start } : {}) };
}

export function writeClusterRun(dir: string, run: ClusterRun): void {
  writeFileAtomic(join(dir, FILE), `${JSON.stringify(run, null, 2)}\n`, 0o644);
}

export function readClusterRun(dir: string): ClusterRun | undefined {
  try {
    const v = JSON.parse(readFileSync(join(dir, FILE), 'utf8')) as ClusterRun;
    return v && typeof v.supervisor?.pid === 'number' && Array.isArray(v.processes) ? v : undefined;
  } catch {
    return undefined;
  }
}

export function removeClusterRun(dir: string): void {
  rmSync(join(dir, FILE), { force: true });
}

function isAlive(p: RunProcess): boolean {
  return processAlive(p.pid, p.start);
}

/** The lock files processes hold in a cluster directory, and what holds each. */
function lockedBy(dir: string): { path: string; name: string; role: RunRole }[] {
  const out: { path: string; name: string; role: RunRole }[] = [{ path: join(dir, 'up.lock'), name: 'skiff up', role: 'up' }];
  const entries = (d: string) => {
    try {
      return readdirSync(d);
    } catch {
      return [];
    }
  };
  for (const e of entries(dir)) {
    if (/^server(-\d+)?$/.test(e)) out.push({ path: join(dir, e, 'server.lock'), name: e, role: 'server' });
  }
  for (const e of entries(join(dir, 'agents'))) out.push({ path: join(dir, 'agents', e, 'agent.lock'), name: e, role: 'agent' });
  out.push({ path: join(dir, 'sim', 'sim.lock'), name: 'sim', role: 'sim' });
  out.push({ path: join(dir, 'cloud', 'cloud.lock'), name: 'cloud', role: 'cloud' });
  return out.filter((l) => existsSync(l.path));
}

/**
 * Every process of the cluster in `dir` that runs now: the supervisor first, then each node's,
 * then the rest; each once, whether the run record or a lock file names it.
 */
export function liveClusterProcesses(dir: string): RunProcess[] {
  const found = new Map<number, RunProcess>();
  for (const l of lockedBy(dir)) {
    const pid = lockHolder(l.path);
    if (pid !== undefined) found.set(pid, runProcess(l.name, l.role, pid) ?? { name: l.name, role: l.role, pid });
  }
  const run = readClusterRun(dir);
  for (const p of run ? [run.supervisor, ...run.processes] : []) if (!found.has(p.pid) && isAlive(p)) found.set(p.pid, p);
  const order: RunRole[] = ['up', 'agent', 'sim', 'cloud', 'server', 'haproxy', 'etcd'];
  return [...found.values()].sort((a, b) => order.indexOf(a.role) - order.indexOf(b.role));
}

/** "server (pid 12), agent node-1 (pid 13)": processes as a user finds them in ps. */
export function describeProcesses(ps: readonly RunProcess[]): string {
  return ps.map((p) => `${p.role === 'up' ? 'skiff up' : p.role === p.name || p.role === 'server' ? p.name : `${p.role} ${p.name}`} (pid ${p.pid})`).join(', ');
}

/**
 * The skiff process listening on `port`, and the `skiff up` directory it belongs to: a port is
 * most often taken by a cluster started earlier, and the way out is to stop that one, not to move.
 */
export function clusterOnPort(port: number): { pid: number; command: string; clusterDir?: string } | undefined {
  const pid = pidListeningOn(port);
  if (pid === undefined) return undefined;
  const args = processArgs(pid);
  const i = args.findIndex((a) => a === 'server' || a === 'agent' || a === 'up');
  if (i < 0 || !args.some((a) => /skiff/.test(a))) return undefined;
  const flag = args.indexOf('--data-dir', i);
  const dir = flag >= 0 ? args[flag + 1] : undefined;
  // A member's directory is <cluster>/server or <cluster>/server-N; up's own is the cluster's.
  const clusterDir = dir === undefined ? undefined : isClusterDir(dir) ? dir : isClusterDir(dirname(dir)) ? dirname(dir) : undefined;
  return { pid, command: `skiff ${args[i]}`, ...(clusterDir ? { clusterDir } : {}) };
}
