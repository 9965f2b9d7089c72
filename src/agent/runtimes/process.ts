// The process runtime: each container instance is a host process (command + args, env, workingDir;
// the image is ignored) in its own process group, its stdout and stderr written straight to a log
// file (no pipe through the agent, so a container outlives an agent crash without SIGPIPE). Every
// process carries SKIFF_AGENT_TAG in its environment: after an agent restart, instances recorded in
// pod state are adopted and anything else carrying the tag is an orphan and is killed.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import { LogGrowthRecorder } from '../log-times.js';
import { CreateContainerError, SIGNAL_NUMBERS, type ContainerLaunch, type ExitInfo, type InstanceRecord, type InstanceUsage, type KnownInstances, type Runtime, type RunningContainer, type UsageQuery } from './runtime.js';
import { processGroupUsage } from './process-usage.js';

export const AGENT_TAG_ENV = 'SKIFF_AGENT_TAG';

interface ProcStat {
  state: string;
  pgrp: number;
  startTicks: number;
}

/** Fields of /proc/<pid>/stat we use; undefined when the process does not exist. */
export function readProcStat(pid: number): ProcStat | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0]!, pgrp: Number(rest[2]), startTicks: Number(rest[19]) };
  } catch {
    return undefined;
  }
}

function alive(pid: number, startTicks?: number): boolean {
  const st = readProcStat(pid);
  if (!st || st.state === 'Z' || st.state === 'X') return false;
  return startTicks === undefined || st.startTicks === startTicks;
}

function killGroup(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    /* already gone */
  }
}

function exitInfo(code: number | null, signal: NodeJS.Signals | null, at: number): ExitInfo {
  if (signal) {
    const n = SIGNAL_NUMBERS[signal] ?? 0;
    return { exitCode: 128 + n, signal: n, reason: 'Error', finishedAt: at };
  }
  return { exitCode: code ?? 0, reason: code === 0 ? 'Completed' : 'Error', finishedAt: at };
}

export interface ProcessRuntimeOptions {
  clock: Clock;
  log: Logger;
  /** Identifies this agent's processes (its machine id). */
  tag: string;
  /** How often adopted processes (not our children) are polled for exit. */
  pollMs?: number;
}

export class ProcessRuntime implements Runtime {
  readonly name = 'process' as const;
  readonly idScheme = 'skiff-process';
  /** Containers write their logs themselves; the agent marks when they grow (log-times.ts). */
  readonly logFormat = 'marked' as const;
  private readonly stopping = new WeakSet<RunningContainer>();
  private readonly pollers = new Set<NodeJS.Timeout>();
  private readonly recorders = new Set<LogGrowthRecorder>();

  /** Marks a running container's log as it grows, until stopped (its exit, or the runtime's close). */
  private recordGrowth(logPath: string): { stop(): void } {
    const r = new LogGrowthRecorder(logPath, this.o.clock);
    this.recorders.add(r);
    return {
      stop: () => {
        r.stop();
        this.recorders.delete(r);
      },
    };
  }

  constructor(private readonly o: ProcessRuntimeOptions) {}

  async start(l: ContainerLaunch): Promise<RunningContainer> {
    if (l.argv.length === 0 || !l.argv[0]) {
      throw new CreateContainerError(
        'CreateContainerConfigError',
        `the process runtime runs a container's command and args on the host; container "${l.containerName}" has no command (its image is not run)`,
      );
    }
    const id = randomBytes(16).toString('hex');
    const now = this.o.clock.now();
    mkdirSync(dirname(l.logPath), { recursive: true });
    const startError = (message: string): RunningContainer => ({
      record: { id, startedAt: now, logPath: l.logPath },
      exited: Promise.resolve({ exitCode: 128, reason: 'StartError', message, finishedAt: this.o.clock.now() }),
    });
    if (l.workingDir && !(existsSync(l.workingDir) && statSync(l.workingDir).isDirectory())) {
      return startError(`failed to start container "${l.containerName}": chdir ${l.workingDir}: no such file or directory`);
    }
    const fd = openSync(l.logPath, 'a');
    try {
      const env = { ...l.env, [AGENT_TAG_ENV]: this.o.tag, SKIFF_POD_UID: l.podUid, SKIFF_CONTAINER_NAME: l.containerName };
      const child = spawn(l.argv[0]!, l.argv.slice(1), { detached: true, stdio: ['ignore', fd, fd], env, ...(l.workingDir ? { cwd: l.workingDir } : {}) });
      const started = await new Promise<{ ok: true } | { ok: false; err: NodeJS.ErrnoException }>((resolve) => {
        child.once('spawn', () => resolve({ ok: true }));
        child.once('error', (err) => resolve({ ok: false, err }));
      });
      if (!started.ok) {
        const e = started.err;
        const why = e.code === 'ENOENT' ? `exec: "${l.argv[0]}": executable file not found in $PATH` : e.code === 'EACCES' ? `exec: "${l.argv[0]}": permission denied` : e.message;
        return startError(`failed to start container "${l.containerName}": ${why}`);
      }
      const pid = child.pid!;
      child.unref();
      const growth = this.recordGrowth(l.logPath);
      const exited = new Promise<ExitInfo>((resolve) => {
        child.once('exit', (code, signal) => {
          // Whatever the main process left in its group goes with it, as with a container's cgroup.
          killGroup(pid, 'SIGKILL');
          growth.stop();
          resolve(exitInfo(code, signal, this.o.clock.now()));
        });
      });
      const record: InstanceRecord = { id, pid, startedAt: now, logPath: l.logPath };
      const st = readProcStat(pid);
      if (st) record.startTicks = st.startTicks;
      return { record, exited };
    } catch (e) {
      // spawn() throws synchronously on arguments it cannot pass (e.g. NUL bytes).
      return startError(`failed to start container "${l.containerName}": ${(e as Error).message}`);
    } finally {
      closeSync(fd);
    }
  }

  async stop(c: RunningContainer, graceMs: number): Promise<ExitInfo> {
    const pid = c.record.pid;
    if (pid === undefined) return c.exited;
    this.stopping.add(c);
    killGroup(pid, 'SIGTERM');
    const t = setTimeout(() => killGroup(pid, 'SIGKILL'), Math.max(0, graceMs));
    try {
      return await c.exited;
    } finally {
      clearTimeout(t);
    }
  }

  async adopt(record: InstanceRecord): Promise<RunningContainer | undefined> {
    const pid = record.pid;
    if (pid === undefined || !alive(pid, record.startTicks)) return undefined;
    // What it wrote while no agent watched is marked now, the time this agent came back.
    const growth = this.recordGrowth(record.logPath);
    const c: RunningContainer = {
      record,
      exited: new Promise<ExitInfo>((resolve) => {
        // Not our child: its exit status is not ours to read, so poll for its end.
        const timer = setInterval(() => {
          if (alive(pid, record.startTicks)) return;
          clearInterval(timer);
          this.pollers.delete(timer);
          killGroup(pid, 'SIGKILL');
          growth.stop();
          const now = this.o.clock.now();
          resolve(
            this.stopping.has(c)
              ? { exitCode: 0, reason: 'Completed', message: 'stopped by the agent; exit status of an adopted process is not observable', finishedAt: now }
              : { exitCode: 137, reason: 'ContainerStatusUnknown', message: 'the container exited while adopted by a restarted agent; its exit status could not be observed', finishedAt: now },
          );
        }, this.o.pollMs ?? 500);
        timer.unref();
        this.pollers.add(timer);
      }),
    };
    return c;
  }

  async reapOrphans({ pids: known }: KnownInstances): Promise<number> {
    let killed = 0;
    let pids: string[];
    try {
      pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
    } catch {
      return 0;
    }
    const marker = `${AGENT_TAG_ENV}=${this.o.tag}`;
    for (const p of pids) {
      const pid = Number(p);
      if (pid === process.pid) continue;
      let environ: string;
      try {
        environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
      } catch {
        continue;
      }
      if (!environ.split('\0').includes(marker)) continue;
      const st = readProcStat(pid);
      if (!st || st.state === 'Z') continue;
      if (known.has(st.pgrp)) continue;
      this.o.log.warn({ pid, pgid: st.pgrp }, 'killing an orphaned container process left by an earlier agent');
      killGroup(st.pgrp, 'SIGKILL');
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
      killed++;
    }
    return killed;
  }

  /** Each instance's process group as /proc counts it (process-usage.ts). */
  async usage(instances: readonly UsageQuery[]): Promise<Map<string, InstanceUsage>> {
    const groups = new Map<number, string>();
    for (const q of instances) if (q.pid !== undefined) groups.set(q.pid, q.id);
    const out = new Map<string, InstanceUsage>();
    for (const [pgid, u] of processGroupUsage(new Set(groups.keys()), this.o.clock.now())) out.set(groups.get(pgid)!, u);
    return out;
  }

  close(): void {
    for (const t of this.pollers) clearInterval(t);
    this.pollers.clear();
    for (const r of this.recorders) r.stop();
    this.recorders.clear();
  }
}
