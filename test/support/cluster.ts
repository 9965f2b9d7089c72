// End-to-end harness: real `skiff` processes on loopback, real kubectl, bounded polling.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import { waitForReady } from '../../src/client/wait.js';
import { ApiClient } from '../../src/client/rest.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';

export const SKIFF_BIN = fileURLToPath(new URL('../../../bin/skiff.js', import.meta.url));

export function kubectlBinary(version?: string): string {
  if (!version) return 'kubectl';
  const onPath = execFileSync('sh', ['-c', 'command -v kubectl']).toString().trim();
  const dir = dirname(realpathSync(onPath));
  return join(dir, `kubectl.${version}`);
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A finished child's exit code: 1 when it was killed or could not start. */
function exitCode(err: Error | null): number {
  if (!err) return 0;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' ? code : 1;
}

/** Runs `skiff ARGS` as a separate process (in `cwd`, to find the cluster there) and gives back its exit code and output. */
export function runSkiff(args: string[], o: { env?: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string } = {}): Promise<CommandResult> {
  return new Promise((resolve) =>
    execFile(process.execPath, [SKIFF_BIN, ...args], { timeout: o.timeoutMs ?? 60_000, env: { ...process.env, ...o.env }, ...(o.cwd ? { cwd: o.cwd } : {}) }, (err, stdout, stderr) =>
      resolve({ code: exitCode(err), stdout: stdout.toString(), stderr: stderr.toString() }),
    ),
  );
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface KubectlOptions {
  /** kubectl.1.NN beside kubectl; absent: the kubectl on PATH. */
  version?: string;
  input?: string;
  timeoutMs?: number;
  maxBuffer?: number;
}

/** Real kubectl against a kubeconfig; it never rejects: the exit code and output say how it went. */
export function runKubectl(target: { kubeconfig: string; cacheDir: string }, args: string[], opts: KubectlOptions = {}): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = execFile(
      kubectlBinary(opts.version),
      ['--kubeconfig', target.kubeconfig, '--cache-dir', target.cacheDir, ...args],
      { timeout: opts.timeoutMs ?? 30_000, maxBuffer: opts.maxBuffer ?? 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: exitCode(err), stdout: stdout.toString(), stderr: stderr.toString() }),
    );
    // kubectl that stops early (a bad flag, an unreachable server) closes stdin: its exit says why.
    child.stdin?.on('error', () => {});
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

export class TestServer {
  readonly dataDir: string;
  readonly cacheDir: string;
  proc?: ManagedProcess;
  port?: number;
  /** `logFile`: elsewhere than in the data dir (a test that fills the data dir's file system). */
  constructor(readonly name = 'skiff-test', dataDir?: string, private readonly logFileOverride?: string) {
    this.dataDir = dataDir ?? mkdtempSync(join(tmpdir(), `${name}-`));
    this.cacheDir = mkdtempSync(join(tmpdir(), `${name}-kcache-`));
  }

  get kubeconfig(): string {
    return join(this.dataDir, 'kubeconfig');
  }

  get logFile(): string {
    return this.logFileOverride ?? join(this.dataDir, 'server.log');
  }

  async start(extraArgs: string[] = []): Promise<void> {
    rmSync(this.kubeconfig, { force: true });
    this.proc = startProcess({
      name: 'server',
      command: process.execPath,
      // The first start picks a free port; restarts keep it, so agents and clients find the server again.
      args: [SKIFF_BIN, 'server', '--data-dir', this.dataDir, '--listen', `127.0.0.1:${this.port ?? 0}`, ...extraArgs],
      output: this.logFile,
    });
    const exited = this.proc.exited.then(({ code, signal }) => {
      throw new Error(`server exited early (code ${code}, signal ${signal}):\n${this.logs().slice(-3000)}`);
    });
    await Promise.race([waitForReady(this.kubeconfig, 30_000), exited]);
    exited.catch(() => {});
    this.port ??= Number(new URL(parseKubeconfig(readFileSync(this.kubeconfig, 'utf8'), (p) => readFileSync(p, 'utf8')).server).port);
  }

  logs(): string {
    return existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8') : '';
  }

  client(): ApiClient {
    return ApiClient.fromKubeconfig(this.kubeconfig, { timeoutMs: 10_000 });
  }

  kubectl(args: string[], opts: { version?: string; input?: string; timeoutMs?: number } = {}): Promise<KubectlResult> {
    return runKubectl(this, args, opts);
  }

  /** kubectl that must succeed; returns stdout. */
  async k(args: string[], opts: { version?: string; input?: string } = {}): Promise<string> {
    const r = await this.kubectl(args, opts);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}):\n${r.stderr}\n${r.stdout}`);
    return r.stdout;
  }

  async stop(): Promise<void> {
    await this.proc?.stop(10_000);
  }

  kill(sig: NodeJS.Signals = 'SIGKILL'): void {
    this.proc?.signal(sig);
  }

  cleanup(): void {
    rmSync(this.cacheDir, { recursive: true, force: true });
    if (!process.env.SKIFF_KEEP_TEST_DATA) rmSync(this.dataDir, { recursive: true, force: true });
  }
}

import { eventually } from './eventually.js';

export { eventually };

/** Processes (other than this one) whose command line mentions `needle`, e.g. a cluster's data dir. */
export function processesMentioning(needle: string): number[] {
  const out: number[] = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p) || Number(p) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(needle)) out.push(Number(p));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** A bootstrap token for test servers (`skiff server --token`) that test agents join with. */
export const TEST_JOIN_TOKEN = 'abcdef.0123456789abcdef';

/** Short timings so the lifecycle runs in seconds. */
export const FAST_AGENT_FLAGS = ['--node-lease-duration-seconds', '4', '--node-status-update-frequency', '1s', '--node-status-report-frequency', '5s', '--kubelet-port', '0', '--restart-backoff-base', '200ms', '--restart-backoff-max', '2s'];

/** A real `skiff agent` process joined to a TestServer (started with --token TEST_JOIN_TOKEN). */
export class TestAgent {
  readonly dataDir: string;
  proc?: ManagedProcess;
  private runs = 0;
  /** The network namespace the agent runs in (`ip netns add`), if not this one. */
  netns?: string;
  constructor(readonly server: TestServer, readonly nodeName: string, dataDir?: string) {
    this.dataDir = dataDir ?? join(server.dataDir, 'agents', nodeName);
  }

  get logFile(): string {
    return join(this.server.dataDir, `agent-${this.nodeName}.log`);
  }

  get serverUrl(): string {
    return parseKubeconfig(readFileSync(this.server.kubeconfig, 'utf8'), (p) => readFileSync(p, 'utf8')).server;
  }

  /** Starts the agent; by default waits until its Node is Ready. */
  async start(extraArgs: string[] = [], opts: { waitReady?: boolean; servers?: string[] } = {}): Promise<void> {
    this.runs++;
    const servers = (opts.servers ?? [this.serverUrl]).flatMap((u) => ['--server', u]);
    // In a network namespace of its own (a machine of its own on one host), entered with nsenter
    // (`ip netns exec` would mount a sysfs of its own, hiding the cgroup file system).
    const inNetns = this.netns ? [`--net=/run/netns/${this.netns}`, process.execPath] : [];
    this.proc = startProcess({
      name: `agent-${this.nodeName}`,
      command: this.netns ? 'nsenter' : process.execPath,
      args: [
        ...inNetns,
        SKIFF_BIN, 'agent',
        ...servers,
        '--token', TEST_JOIN_TOKEN,
        '--ca-file', join(this.server.dataDir, 'tls', 'ca.crt'),
        '--data-dir', this.dataDir,
        '--node-name', this.nodeName,
        ...FAST_AGENT_FLAGS,
        ...extraArgs,
      ],
      output: this.logFile,
    });
    if (opts.waitReady === false) return;
    const client = this.server.client();
    try {
      const early = this.proc.exited.then(({ code, signal }) => {
        throw new Error(`agent ${this.nodeName} exited early (code ${code}, signal ${signal}):\n${this.logs().slice(-3000)}`);
      });
      early.catch(() => {});
      await Promise.race([
        eventually(async () => {
          const n = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>(`/api/v1/nodes/${this.nodeName}`);
          return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
        }, 20_000, `node ${this.nodeName} Ready`),
        early,
      ]);
    } finally {
      client.close();
    }
  }

  logs(): string {
    return existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8') : '';
  }

  /** Log lines (JSON) whose msg equals `msg`. */
  logLines(msg: string): Record<string, unknown>[] {
    return this.logs()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === msg);
  }

  kill(sig: NodeJS.Signals = 'SIGKILL'): void {
    this.proc?.signal(sig);
  }

  async stop(): Promise<void> {
    await this.proc?.stop(20_000);
  }

  async exitCode(): Promise<number | null> {
    const r = await this.proc!.exited;
    return r.code;
  }
}

/** Host processes started for a pod by the process runtime (found through their environment). */
export function containerPids(podUid: string): number[] {
  const out: number[] = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const env = readFileSync(`/proc/${p}/environ`, 'latin1').split('\0');
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (env.includes(`SKIFF_POD_UID=${podUid}`) && state !== 'Z') out.push(Number(p));
    } catch {
      /* gone or not ours */
    }
  }
  return out.sort((a, b) => a - b);
}
