// An HA control plane for the failover benchmark: a real 3-member etcd cluster, N real
// `skiff server` processes on 127.0.0.1, 127.0.0.2, ... with the same port (as
// `skiff up --servers 3` does), one shared --token, and real agents (simulated runtime) joined
// through any member.
//
// The same shape as test/support/ha.ts, but every process runs this build's skiff (skiffEntry())
// in its own process group registered with bench/lib/util.ts, so a benchmark compiled to its own
// outDir measures its own code and an interrupted run leaves nothing behind.
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient } from '../../src/client/rest.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';
import { freePorts, startEtcd, waitFor, type LocalEtcdCluster } from '../../src/etcd/local-cluster.js';
import { makeTempDir, removeTempDir, skiffEntry, sleep, startChild, type ManagedChild } from './util.js';

/** The bootstrap token servers accept and agents join with. */
export const BENCH_JOIN_TOKEN = 'abcdef.0123456789abcdef';

/** Short agent timings (as the e2e tests use): Lease of 4 s renewed every second. */
export const FAST_AGENT_FLAGS = [
  '--node-lease-duration-seconds', '4',
  '--node-status-update-frequency', '1s',
  '--node-status-report-frequency', '5s',
  '--kubelet-port', '0',
  '--restart-backoff-base', '200ms',
  '--restart-backoff-max', '2s',
];

export class HaMember {
  proc?: ManagedChild;
  constructor(
    readonly index: number,
    readonly host: string,
    readonly port: number,
    readonly dataDir: string,
    private readonly args: () => string[],
    private readonly nodeArgs: string[] = [],
  ) {}

  get url(): string {
    return `https://${this.host}:${this.port}`;
  }

  get logFile(): string {
    return join(this.dataDir, 'server.log');
  }

  get kubeconfig(): string {
    return join(this.dataDir, 'kubeconfig');
  }

  start(): void {
    mkdirSync(this.dataDir, { recursive: true });
    rmSync(this.kubeconfig, { force: true });
    this.proc = startChild(`skiff server ${this.index + 1}`, process.execPath, [...this.nodeArgs, skiffEntry(), 'server', ...this.args()], this.logFile);
  }

  /** Waits for this member's /readyz (through its own address, whatever the kubeconfig says). */
  async waitReady(caPem: string, timeoutMs = 30_000): Promise<void> {
    const proc = this.proc;
    const exited = proc?.exited.then(({ code, signal }) => {
      throw new Error(`server ${this.index + 1} exited early (code ${code}, signal ${signal}):\n${this.logs().slice(-3000)}`);
    });
    exited?.catch(() => {});
    const client = new ApiClient({ servers: [this.url], caPem, timeoutMs: 2000 });
    try {
      await Promise.race([waitFor(async () => String(await client.get<string>('/readyz')).trim() === 'ok', `server ${this.index + 1} ready`, timeoutMs, 100), ...(exited ? [exited] : [])]);
    } finally {
      client.close();
    }
  }

  logs(): string {
    return existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8') : '';
  }

  /** SIGKILL (the whole process group) and wait until it is gone. */
  async killAndWait(): Promise<void> {
    const p = this.proc;
    this.proc = undefined;
    if (!p) return;
    p.killNow();
    await p.exited;
    await p.stop(0);
  }

  /** SIGTERM (a clean exit: --cpu-prof profiles are written), SIGKILL after graceMs. */
  async stop(graceMs = 15_000): Promise<void> {
    const p = this.proc;
    this.proc = undefined;
    await p?.stop(graceMs);
  }
}

export interface HaClusterOptions {
  servers?: number;
  serverFlags?: string[];
  /** Extra node flags per member index (e.g. --cpu-prof for one of them). */
  nodeArgs?: (index: number) => string[];
}

export class HaCluster {
  readonly members: HaMember[] = [];
  private caPemCache?: string;
  private readonly clients: ApiClient[] = [];
  private readonly agents: HaAgent[] = [];

  private constructor(readonly etcd: LocalEtcdCluster, readonly port: number, readonly dir: string, o: HaClusterOptions) {
    const n = o.servers ?? 3;
    for (let i = 0; i < n; i++) {
      const host = `127.0.0.${i + 1}`;
      const dataDir = join(dir, `server-${i + 1}`);
      this.members.push(
        new HaMember(i, host, port, dataDir, () => [
          '--data-dir', dataDir,
          '--listen', `${host}:${port}`,
          '--storage', 'etcd',
          '--etcd-endpoints', this.etcd.endpoints.join(','),
          '--token', BENCH_JOIN_TOKEN,
          ...(o.serverFlags ?? []),
        ], o.nodeArgs?.(i) ?? []),
      );
    }
  }

  static async start(o: HaClusterOptions = {}): Promise<HaCluster> {
    const etcd = await startEtcd({ members: 3 });
    let c: HaCluster | undefined;
    try {
      const [port] = await freePorts(1);
      c = new HaCluster(etcd, port!, makeTempDir('skiff-bench-ha-'), o);
      // One member first: it creates and seals the shared CA; the others load it.
      const first = c.members[0]!;
      first.start();
      await first.waitReady(await c.waitCaPem(first));
      const rest = c.members.slice(1);
      for (const m of rest) m.start();
      await Promise.all(rest.map((m) => m.waitReady(c!.caPem)));
      return c;
    } catch (e) {
      if (c) await c.destroy();
      else await etcd.destroy();
      throw e;
    }
  }

  private async waitCaPem(m: HaMember): Promise<string> {
    const file = join(m.dataDir, 'tls', 'ca.crt');
    await waitFor(() => existsSync(file), `${file}`, 30_000, 100);
    this.caPemCache = readFileSync(file, 'utf8');
    return this.caPemCache;
  }

  get caPem(): string {
    return (this.caPemCache ??= readFileSync(this.caFile, 'utf8'));
  }

  get caFile(): string {
    return join(this.members[0]!.dataDir, 'tls', 'ca.crt');
  }

  /** An admin client over the given members (default: all), failing over on connection errors. */
  client(members: HaMember[] = this.members, timeoutMs = 10_000): ApiClient {
    const kc = parseKubeconfig(readFileSync(this.members.find((m) => existsSync(m.kubeconfig))!.kubeconfig, 'utf8'), (p) => readFileSync(p, 'utf8'));
    const c = new ApiClient({
      servers: members.map((m) => m.url),
      caPem: kc.caPem!,
      ...(kc.clientCertPem ? { clientCertPem: kc.clientCertPem } : {}),
      ...(kc.clientKeyPem ? { clientKeyPem: kc.clientKeyPem } : {}),
      timeoutMs,
    });
    this.clients.push(c);
    return c;
  }

  agent(nodeName: string): HaAgent {
    const a = new HaAgent(this, nodeName, join(this.dir, 'agents', nodeName));
    this.agents.push(a);
    return a;
  }

  /** Kills every agent, server and etcd member and removes their data. */
  async destroy(): Promise<void> {
    for (const c of this.clients) c.close();
    await Promise.all(this.agents.map((a) => a.kill()));
    await Promise.all(this.members.map((m) => m.killAndWait().catch(() => {})));
    await this.etcd.destroy();
    removeTempDir(this.dir);
  }
}

/** A real `skiff agent` process (simulated runtime) joined to an HaCluster through the given server URLs. */
export class HaAgent {
  proc?: ManagedChild;
  constructor(readonly cluster: HaCluster, readonly nodeName: string, readonly dataDir: string) {}

  get logFile(): string {
    return join(this.cluster.dir, `agent-${this.nodeName}.log`);
  }

  start(servers: string[], extraArgs: string[] = []): void {
    this.proc = startChild(
      `skiff agent ${this.nodeName}`,
      process.execPath,
      [
        skiffEntry(), 'agent',
        ...servers.flatMap((u) => ['--server', u]),
        '--token', BENCH_JOIN_TOKEN,
        '--ca-file', this.cluster.caFile,
        '--data-dir', this.dataDir,
        '--node-name', this.nodeName,
        '--runtime', 'simulated',
        ...FAST_AGENT_FLAGS,
        ...extraArgs,
      ],
      this.logFile,
    );
  }

  /** The server list the agent persisted in its data dir. */
  persistedServers(): string[] {
    try {
      return (JSON.parse(readFileSync(join(this.dataDir, 'servers.json'), 'utf8')) as { servers: string[] }).servers;
    } catch {
      return [];
    }
  }

  logs(): string {
    return existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8') : '';
  }

  /** SIGKILL (the whole process group). */
  async kill(): Promise<void> {
    const p = this.proc;
    this.proc = undefined;
    if (!p) return;
    p.killNow();
    await Promise.race([p.exited, sleep(5000)]);
    await p.stop(0);
  }
}
