// An HA control plane for end-to-end tests: a real 3-member etcd cluster, N real `skiff server`
// processes on 127.0.0.1, 127.0.0.2, ... with the same port (as `skiff up --servers 3` does), one
// shared --token (which seals the shared CA in etcd), and real agents joined through any member.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import { ApiClient } from '../../src/client/rest.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';
import { freePorts, startEtcd, waitFor, type LocalEtcdCluster } from '../../src/etcd/local-cluster.js';
import { FAST_AGENT_FLAGS, SKIFF_BIN, TEST_JOIN_TOKEN } from './cluster.js';

/**
 * Starts one `skiff` process (`skiffArgs` after the entry script; `nodeArgs` for node itself).
 * Tests use the default (bin/skiff.js, dist build); the failover benchmark runs its own build in
 * process groups its cleanup registry knows.
 */
export type SkiffLauncher = (name: string, skiffArgs: string[], logFile: string, nodeArgs: string[]) => ManagedProcess;

export const launchFromBin: SkiffLauncher = (name, skiffArgs, logFile, nodeArgs) =>
  startProcess({ name, command: process.execPath, args: [...nodeArgs, SKIFF_BIN, ...skiffArgs], output: logFile });

/** Short lifecycle timings for HA tests: NotReady after 6 s without a heartbeat, controllers move within 3 s. */
export const HA_SERVER_FLAGS = [
  '--node-monitor-period', '500ms',
  '--node-monitor-grace-period', '6s',
  '--node-startup-grace-period', '10s',
  '--leader-elect-lease-duration', '3s',
  '--leader-elect-renew-deadline', '2s',
  '--leader-elect-retry-period', '500ms',
];

export class HaMember {
  proc?: ManagedProcess;
  constructor(
    readonly index: number,
    readonly host: string,
    readonly port: number,
    readonly dataDir: string,
    private readonly args: () => string[],
    private readonly launch: SkiffLauncher = launchFromBin,
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
    this.proc = this.launch(`server-${this.index + 1}`, ['server', ...this.args()], this.logFile, this.nodeArgs);
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

  kill(sig: NodeJS.Signals = 'SIGKILL'): void {
    this.proc?.signal(sig);
  }

  async killAndWait(): Promise<void> {
    const p = this.proc;
    p?.signal('SIGKILL');
    await p?.exited;
    this.proc = undefined;
  }

  /** SIGTERM (a clean exit: --cpu-prof profiles get written), SIGKILL after graceMs. */
  async stop(graceMs = 10_000): Promise<void> {
    await this.proc?.stop(graceMs);
    this.proc = undefined;
  }
}

export interface HaClusterOptions {
  servers?: number;
  serverFlags?: string[];
  /** Passed as --control-plane-endpoint to every server. */
  controlPlaneEndpoint?: string;
  /** Member index started first (it usually ends up holding the controller-manager Lease). */
  firstMember?: number;
  /** How processes are started (default: bin/skiff.js). */
  launch?: SkiffLauncher;
  /** Extra node flags per member index (e.g. --cpu-prof for one of them). */
  nodeArgs?: (index: number) => string[];
  /** Where data goes (default: a new temp dir, removed by destroy()). */
  dir?: string;
}

export class HaCluster {
  readonly dir: string;
  readonly members: HaMember[] = [];
  private caPemCache?: string;
  private readonly clients: ApiClient[] = [];

  private readonly agents: HaAgent[] = [];

  private constructor(readonly etcd: LocalEtcdCluster, readonly port: number, readonly o: HaClusterOptions) {
    this.dir = o.dir ?? mkdtempSync(join(tmpdir(), 'skiff-ha-'));
    const n = o.servers ?? 3;
    for (let i = 0; i < n; i++) {
      const host = `127.0.0.${i + 1}`;
      const dataDir = join(this.dir, `server-${i + 1}`);
      this.members.push(
        new HaMember(i, host, port, dataDir, () => [
          '--data-dir', dataDir,
          '--listen', `${host}:${port}`,
          '--storage', 'etcd',
          '--etcd-endpoints', this.etcd.endpoints.join(','),
          '--token', TEST_JOIN_TOKEN,
          ...(o.controlPlaneEndpoint ? ['--control-plane-endpoint', o.controlPlaneEndpoint] : []),
          ...(o.serverFlags ?? []),
        ], o.launch, o.nodeArgs?.(i) ?? []),
      );
    }
  }

  static async start(o: HaClusterOptions = {}): Promise<HaCluster> {
    const etcd = await startEtcd({ members: 3 });
    let c: HaCluster | undefined;
    try {
      const [port] = await freePorts(1);
      c = new HaCluster(etcd, port!, o);
      // One member first: it creates and seals the shared CA; the others load it.
      const first = c.members[o.firstMember ?? 0]!;
      first.start();
      await first.waitReady(await c.waitCaPem(first));
      const rest = c.members.filter((m) => m !== first);
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

  async stopServers(): Promise<void> {
    await Promise.all(this.members.map((m) => m.stop()));
  }

  async destroy(): Promise<void> {
    for (const c of this.clients) c.close();
    await Promise.all(this.agents.map((a) => a.kill()));
    await Promise.all(this.members.map((m) => m.killAndWait().catch(() => {})));
    await this.etcd.destroy();
    if (!process.env.SKIFF_KEEP_TEST_DATA && !this.o.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A real `skiff agent` process joined to an HaCluster through the given server URLs. */
export class HaAgent {
  proc?: ManagedProcess;
  constructor(readonly cluster: HaCluster, readonly nodeName: string, readonly dataDir: string) {}

  get logFile(): string {
    return join(this.cluster.dir, `agent-${this.nodeName}.log`);
  }

  start(servers: string[], extraArgs: string[] = []): void {
    const args = [
      'agent',
      ...servers.flatMap((u) => ['--server', u]),
      '--token', TEST_JOIN_TOKEN,
      '--ca-file', this.cluster.caFile,
      '--data-dir', this.dataDir,
      '--node-name', this.nodeName,
      '--runtime', 'simulated',
      ...FAST_AGENT_FLAGS,
      ...extraArgs,
    ];
    this.proc = (this.cluster.o.launch ?? launchFromBin)(`agent-${this.nodeName}`, args, this.logFile, []);
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

  async stop(): Promise<void> {
    await this.proc?.stop(20_000);
  }

  /** SIGKILL (sent at once) and wait until the process is gone. */
  async kill(): Promise<void> {
    const p = this.proc;
    this.proc = undefined;
    p?.signal('SIGKILL');
    await p?.exited;
  }
}

/** Ready condition status per node name ('True', 'False', 'Unknown', or 'missing'). */
export async function nodeReadiness(client: ApiClient): Promise<Map<string, string>> {
  const list = await client.get<{ items: { metadata: { name: string }; status?: { conditions?: { type: string; status: string }[] } }[] }>('/api/v1/nodes');
  return new Map(list.items.map((n) => [n.metadata.name, n.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'missing']));
}
