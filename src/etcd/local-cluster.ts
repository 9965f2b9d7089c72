// Real etcd processes on this machine: one member or a cluster on loopback addresses, for
// `skiff up --storage etcd` (fixed addresses, data kept in the cluster's data directory) and for
// tests (free ports, temporary data, member stop/kill/pause/restart for failure scenarios).
//
//   const etcd = await startEtcd({ members: 3 });
//   ... openEtcdStore({ endpoints: etcd.endpoints }) ...
//   await etcd.member(0).kill();          // SIGKILL
//   await etcd.member(0).start();         // same ports, same data: rejoins
//   await etcd.waitHealthy();
//   await etcd.destroy();
//
// The binary is $SKIFF_ETCD_BIN when set (and then only that), else /usr/bin/etcd, else etcd on
// PATH (Debian/Ubuntu package: etcd-server).
// requireEtcdBinary() throws a clear error when there is none, so tests fail instead of skipping.

import { waitFor } from '../util/wait-for.js';
import { errorText } from '../util/error-text.js';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { freePorts } from '../util/ports.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, type ManagedProcess } from '../util/processes.js';
import { findBinary } from '../util/find-binary.js';

export interface EtcdClusterOptions {
  /** Number of members. Default 1. */
  members?: number;
  /** Raft heartbeat. Default 10 ms for one member, 50 ms for a cluster. */
  heartbeatMs?: number;
  /** Raft election timeout (at least 5 heartbeats). Default 100 ms for one member, 500 ms for a cluster. */
  electionTimeoutMs?: number;
  /** --experimental-watch-progress-notify-interval. Default 1000 ms (etcd's own default is 10 minutes). */
  progressNotifyIntervalMs?: number;
  /** Where data directories go. Default: /dev/shm when usable (no fsync cost), else the temp dir. */
  dataRoot?: string;
  /** Extra etcd flags for every member. */
  extraArgs?: string[];
  /** How long start waits for the cluster to be healthy. Default 20 s. */
  startTimeoutMs?: number;
  /** A fixed directory for the members' data (kept across restarts); default: a new temp dir under dataRoot. */
  dir?: string;
  /** Fixed addresses per member (default: 127.0.0.1 with free ports). */
  addresses?: { host: string; clientPort: number; peerPort: number }[];
  /** etcd's log level (its output goes to <member dir>/etcd.log). */
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
}

const live = new Set<ManagedProcess>();
let exitHookInstalled = false;

/** Never leave etcd processes behind, whatever happens to the test process. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const p of live) {
      p.signal('SIGCONT');
      p.signal('SIGKILL');
    }
  });
}

/** The cluster token of a local cluster kept in a fixed directory (what a restore must use too). */
export const LOCAL_ETCD_CLUSTER_TOKEN = 'skiff-local-etcd';

/** The etcd binary to run, or undefined when there is none. */
export function findEtcdBinary(): string | undefined {
  return findBinary('etcd', 'SKIFF_ETCD_BIN', ['/usr/bin/etcd']);
}

export const ETCD_MISSING_MESSAGE =
  `etcd is not installed${process.env.SKIFF_ETCD_BIN ? ` at SKIFF_ETCD_BIN=${process.env.SKIFF_ETCD_BIN}` : ' (looked for /usr/bin/etcd and etcd on PATH)'}: these tests need a real etcd server (Debian/Ubuntu: apt-get install etcd-server; or set SKIFF_ETCD_BIN to its path)`;

export function requireEtcdBinary(): string {
  const bin = findEtcdBinary();
  if (!bin) throw new Error(ETCD_MISSING_MESSAGE);
  return bin;
}

export { freePorts };

function defaultDataRoot(): string {
  try {
    if (statSync('/dev/shm').isDirectory()) {
      accessSync('/dev/shm', constants.W_OK);
      return '/dev/shm';
    }
  } catch {
    // fall through
  }
  return tmpdir();
}

export { waitFor };

export class EtcdMember {
  readonly clientUrl: string;
  readonly peerUrl: string;
  readonly dataDir: string;
  readonly logFile: string;
  private proc?: ManagedProcess;
  private paused = false;

  constructor(
    readonly name: string,
    readonly clientPort: number,
    readonly peerPort: number,
    dir: string,
    private readonly args: () => string[],
    private readonly bin: string,
    readonly host = '127.0.0.1',
  ) {
    this.clientUrl = `http://${host}:${clientPort}`;
    this.peerUrl = `http://${host}:${peerPort}`;
    this.dataDir = join(dir, 'data');
    this.logFile = join(dir, 'etcd.log');
    mkdirSync(dir, { recursive: true });
  }

  get running(): boolean {
    return this.proc !== undefined;
  }

  get pid(): number | undefined {
    return this.proc?.child.pid;
  }

  /** Starts the process (same ports and data directory every time). Does not wait for health. */
  start(): void {
    if (this.proc) throw new Error(`etcd member ${this.name} is already running`);
    const proc = startProcess({ name: `etcd-${this.name}`, command: this.bin, args: this.args(), output: this.logFile });
    this.proc = proc;
    this.paused = false;
    live.add(proc);
    void proc.exited.then(() => {
      live.delete(proc);
      if (this.proc === proc) this.proc = undefined;
    });
  }

  /** SIGTERM and wait for exit (SIGKILL after graceMs). */
  async stop(graceMs = 5_000): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    if (this.paused) this.resume();
    await proc.stop(graceMs);
    this.proc = undefined;
  }

  /** SIGKILL and wait for exit: a crash, nothing flushed beyond what etcd already fsynced. */
  async kill(): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    proc.signal('SIGKILL');
    await proc.exited;
    this.proc = undefined;
  }

  /** SIGSTOP: the process freezes with its sockets open (a hung member, not a dead one). */
  pause(): void {
    if (!this.proc) throw new Error(`etcd member ${this.name} is not running`);
    this.proc.signal('SIGSTOP');
    this.paused = true;
  }

  resume(): void {
    this.proc?.signal('SIGCONT');
    this.paused = false;
  }

  async restart(): Promise<void> {
    await this.stop();
    this.start();
  }

  /** GET /health: true when the member has a leader, no alarms, and answers a read. */
  async healthy(timeoutMs = 1_000): Promise<boolean> {
    if (!this.proc || this.paused) return false;
    try {
      const res = await fetch(`${this.clientUrl}/health`, { signal: AbortSignal.timeout(timeoutMs) });
      const body = (await res.json()) as { health?: string };
      return body.health === 'true';
    } catch {
      return false;
    }
  }

  /** Whether this member is the raft leader (from its /metrics). */
  async isLeader(timeoutMs = 1_000): Promise<boolean> {
    if (!this.proc || this.paused) return false;
    try {
      const res = await fetch(`${this.clientUrl}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
      return /^etcd_server_is_leader 1$/m.test(await res.text());
    } catch {
      return false;
    }
  }

  logs(maxChars = 4_000): string {
    return existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8').slice(-maxChars) : '';
  }
}

export class LocalEtcdCluster {
  private constructor(
    readonly members: EtcdMember[],
    readonly dir: string,
  ) {}

  /** Client URLs of all members, for openEtcdStore({ endpoints }). */
  get endpoints(): string[] {
    return this.members.map((m) => m.clientUrl);
  }

  member(i: number): EtcdMember {
    const m = this.members[i];
    if (!m) throw new Error(`no etcd member ${i}`);
    return m;
  }

  static async start(opts: EtcdClusterOptions = {}): Promise<LocalEtcdCluster> {
    const bin = requireEtcdBinary();
    installExitHook();
    let lastError: unknown;
    // A port taken between freePorts() and etcd's bind is retried with fresh ports.
    for (let attempt = 0; attempt < 3; attempt++) {
      const cluster = await LocalEtcdCluster.launch(bin, opts);
      try {
        await cluster.waitHealthy(opts.startTimeoutMs ?? 20_000);
        return cluster;
      } catch (e) {
        lastError = e;
        const logs = cluster.members.map((m) => m.logs()).join('\n');
        await cluster.destroy();
        if (!/address already in use/.test(logs)) throw e;
      }
    }
    throw lastError;
  }

  private static async launch(bin: string, opts: EtcdClusterOptions): Promise<LocalEtcdCluster> {
    const n = Math.max(1, opts.members ?? 1);
    const heartbeat = opts.heartbeatMs ?? (n === 1 ? 10 : 50);
    const election = Math.max(opts.electionTimeoutMs ?? (n === 1 ? 100 : 500), heartbeat * 5);
    const progressMs = opts.progressNotifyIntervalMs ?? 1_000;
    let dir: string;
    if (opts.dir) {
      dir = opts.dir;
      mkdirSync(dir, { recursive: true });
    } else {
      dir = mkdtempSync(join(opts.dataRoot ?? defaultDataRoot(), 'skiff-etcd-'));
    }
    const addresses: { host: string; clientPort: number; peerPort: number }[] =
      opts.addresses ??
      (await freePorts(2 * n).then((ports) => Array.from({ length: n }, (_, i) => ({ host: '127.0.0.1', clientPort: ports[2 * i]!, peerPort: ports[2 * i + 1]! }))));
    const names = Array.from({ length: n }, (_, i) => `m${i}`);
    const initialCluster = names.map((name, i) => `${name}=http://${addresses[i]!.host}:${addresses[i]!.peerPort}`).join(',');
    // A fixed directory is one long-lived cluster; its token must survive restarts.
    const token = opts.dir ? LOCAL_ETCD_CLUSTER_TOKEN : `skiff-test-${process.pid}-${Date.now()}-${Math.floor(Math.random() * 1e9)}`;
    const members = names.map((name, i) => {
      const { host, clientPort, peerPort } = addresses[i]!;
      const member: EtcdMember = new EtcdMember(
        name,
        clientPort,
        peerPort,
        join(dir, name),
        () => [
          '--name', name,
          '--data-dir', member.dataDir,
          '--listen-client-urls', member.clientUrl,
          '--advertise-client-urls', member.clientUrl,
          '--listen-peer-urls', member.peerUrl,
          '--initial-advertise-peer-urls', member.peerUrl,
          '--initial-cluster', initialCluster,
          '--initial-cluster-state', 'new',
          '--initial-cluster-token', token,
          '--heartbeat-interval', String(heartbeat),
          '--election-timeout', String(election),
          '--experimental-watch-progress-notify-interval', `${progressMs}ms`,
          '--logger', 'zap',
          '--log-level', opts.logLevel ?? 'warn',
          ...(opts.extraArgs ?? []),
        ],
        bin,
        host,
      );
      return member;
    });
    for (const m of members) m.start();
    return new LocalEtcdCluster(members, dir);
  }

  /** Waits until every running member (or the given ones) reports healthy. */
  async waitHealthy(timeoutMs = 15_000, which: EtcdMember[] = this.members.filter((m) => m.running)): Promise<void> {
    try {
      await waitFor(async () => {
        for (const m of which) {
          if (!m.running) throw new Error(`etcd member ${m.name} exited`);
          if (!(await m.healthy())) return false;
        }
        return true;
      }, `etcd members ${which.map((m) => m.name).join(', ')} to be healthy`, timeoutMs);
    } catch (e) {
      const logs = which.map((m) => `--- ${m.name} (${m.logFile}):\n${m.logs(2_000)}`).join('\n');
      throw new Error(`${errorText(e)}\n${logs}`);
    }
  }

  /** The index of the current leader among running members. */
  async leader(timeoutMs = 10_000): Promise<number> {
    let found = -1;
    await waitFor(async () => {
      for (let i = 0; i < this.members.length; i++) {
        if (await this.members[i]!.isLeader()) {
          found = i;
          return true;
        }
      }
      return false;
    }, 'an etcd leader', timeoutMs);
    return found;
  }

  /** Stops every member gracefully and keeps the data. */
  async stop(): Promise<void> {
    await Promise.all(this.members.map((m) => m.stop()));
  }

  /** Kills every member and removes the data. */
  async destroy(): Promise<void> {
    await Promise.all(this.members.map((m) => m.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export function startEtcd(opts: EtcdClusterOptions = {}): Promise<LocalEtcdCluster> {
  return LocalEtcdCluster.start(opts);
}
