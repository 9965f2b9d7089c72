// The real cluster a scenario runs on: servers (one on SQLite, or three on a 3-member etcd on
// 127.0.0.1-3 sharing a port, as `skiff up --servers 3` lays them out), optionally HAProxy in front
// as the control-plane endpoint, and worker agents (simulated runtime), each its own process group
// so a fault can signal exactly one machine — or, for a cluster with a cloud, a local cloud whose
// instances are the workers, sized by the servers' cluster autoscaler. Everything logs JSON to
// <dir>/logs/<name>.log (a cloud instance's agent to its instance directory), which the recorder reads.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateToken } from '../auth/bootstrap-token.js';
import { ApiClient } from '../client/rest.js';
import { waitForReady } from '../client/wait.js';
import type { Instance } from '../cloud/api.js';
import { CloudClient } from '../cloud/client.js';
import { instanceDir, machineLog } from '../cloud/machines.js';
import { asAgentFlags, startNodeGroups, stopCloudInstances } from '../cloud/node-groups.js';
import { startEtcd, type LocalEtcdCluster } from '../etcd/local-cluster.js';
import { parseKubeconfig } from '../pki/kubeconfig.js';
import { findHaproxy, renderHaproxyConfig } from '../server/haproxy.js';
import { freePorts, listenError } from '../util/ports.js';
import { lastLines, startProcess, type ManagedProcess } from '../util/processes.js';
import { FaultProxy } from './fault-proxy.js';
import type { ClusterShape } from './spec.js';
import { SKIFF_BIN, SERVER_NODE_FLAGS } from '../util/skiff-bin.js';

export interface ClusterOptions {
  dir: string;
  shape: ClusterShape;
  serverFlags: string[];
  agentFlags: string[];
  /** With a cloud: the autoscaler's flags (its timings), for the servers. */
  autoscalerFlags: string[];
  /**
   * Nodes a scenario will cut off: each reaches the servers only through its own FaultProxy, and
   * without endpoint discovery, since the proxy stands for its whole network (every address it
   * could learn would be cut too).
   */
  partitioned: string[];
  /** Progress lines ("starting server-1 …"). */
  say(msg: string): void;
}

export interface ClusterProcess {
  name: string;
  logFile: string;
  proc?: ManagedProcess;
  /** Stopped with SIGSTOP and not continued yet. */
  frozen: boolean;
}

/** The node group a scenario's cloud has; its instances are node-1, node-2 … */
const CLOUD_GROUP = 'node';

export class ScenarioCluster {
  readonly servers: (ClusterProcess & { url: string })[] = [];
  readonly agents: ClusterProcess[] = [];
  private etcd?: LocalEtcdCluster;
  private haproxy?: ManagedProcess;
  private endpointUrl?: string;
  private cloudUrl?: string;
  private readonly token = generateToken();
  private readonly clients: ApiClient[] = [];
  private readonly proxies = new Map<string, FaultProxy>();
  private cloudProc?: ManagedProcess;
  /** The local cloud, when the workers are its instances. */
  cloud?: CloudClient;

  private constructor(private readonly o: ClusterOptions) {}

  get logDir(): string {
    return join(this.o.dir, 'logs');
  }

  get kubeconfig(): string {
    return join(this.o.dir, 'server-1', 'kubeconfig');
  }

  get caFile(): string {
    return join(this.o.dir, 'server-1', 'tls', 'ca.crt');
  }

  static async start(o: ClusterOptions): Promise<ScenarioCluster> {
    const c = new ScenarioCluster(o);
    try {
      await c.startControlPlane();
      if (o.shape.cloud) await c.startCloud();
      else await c.startAgents();
      return c;
    } catch (e) {
      await c.stop();
      throw e;
    }
  }

  private async startControlPlane(): Promise<void> {
    const { shape } = this.o;
    mkdirSync(this.logDir, { recursive: true });
    const storage: string[] = [];
    if (shape.servers > 1) {
      this.o.say('starting etcd (3 members)');
      this.etcd = await startEtcd({ members: 3, dir: join(this.o.dir, 'etcd'), startTimeoutMs: 30_000 });
      storage.push('--storage', 'etcd', '--etcd-endpoints', this.etcd.endpoints.join(','));
    }
    let cloudArgs: string[] = [];
    if (shape.cloud) {
      const [cloudPort] = await freePorts(1);
      this.cloudUrl = `http://127.0.0.1:${cloudPort!}`;
      cloudArgs = ['--cloud-provider', 'local', '--cloud-endpoint', this.cloudUrl, '--nodes', `${shape.cloud.min}:${shape.cloud.max}:${CLOUD_GROUP}`, ...this.o.autoscalerFlags];
    }
    let endpointArgs: string[] = [];
    if (shape.endpoint) {
      const [endpointPort] = await freePorts(1);
      this.endpointUrl = `https://127.0.0.1:${endpointPort!}`;
      endpointArgs = ['--control-plane-endpoint', `127.0.0.1:${endpointPort!}`];
    }
    // Chosen last, once etcd listens and the other ports are picked: a port only probed free is
    // one that etcd's own probe could have handed to a member a moment later.
    const port = await this.sharedPort(shape.servers, [this.cloudUrl, this.endpointUrl]);
    for (let i = 0; i < shape.servers; i++) {
      const name = `server-${i + 1}`;
      const host = `127.0.0.${i + 1}`;
      this.servers.push({ name, url: `https://${host}:${port}`, logFile: join(this.logDir, `${name}.log`), frozen: false });
    }
    const start = (i: number) => {
      const s = this.servers[i]!;
      const host = `127.0.0.${i + 1}`;
      s.proc = startProcess({
        name: s.name,
        command: process.execPath,
        args: [...SERVER_NODE_FLAGS, SKIFF_BIN, 'server', '--data-dir', join(this.o.dir, s.name), '--listen', `${host}:${port}`, ...storage, ...endpointArgs, ...cloudArgs, '--log-format', 'json', ...this.o.serverFlags],
        env: { ...process.env, SKIFF_TOKEN: this.token },
        output: s.logFile,
      });
    };
    if (this.endpointUrl) {
      // HAProxy binds its port before the servers start, the moment after it was found free: a
      // port held only by a number for the servers' start-up is one another process may take.
      const haproxyBin = findHaproxy();
      if (!haproxyBin) throw new Error('this scenario runs HAProxy as the control-plane endpoint, and HAProxy is not installed (Debian: apt-get install haproxy)');
      const cfg = join(this.o.dir, 'haproxy.cfg');
      const endpointPort = Number(new URL(this.endpointUrl).port);
      writeFileSync(cfg, renderHaproxyConfig({ bindHost: '127.0.0.1', bindPort: endpointPort, members: this.servers.map((s) => ({ host: new URL(s.url).hostname, port })) }));
      this.haproxy = startProcess({ name: 'haproxy', command: haproxyBin, args: ['-db', '-f', cfg], output: join(this.logDir, 'haproxy.log') });
      this.o.say(`starting HAProxy on ${this.endpointUrl}`);
    }
    // The first member creates the cluster CA (sealed in etcd); the others load it.
    this.o.say(`starting ${shape.servers === 1 ? 'the API server' : `${shape.servers} API servers`} (logs: ${this.logDir})`);
    start(0);
    await this.waitServer(0);
    for (let i = 1; i < shape.servers; i++) start(i);
    await Promise.all(this.servers.slice(1).map((_, i) => this.waitServer(i + 1)));
    if (this.endpointUrl) await waitForReady(this.kubeconfig, 30_000, undefined, this.endpointUrl);
  }

  /** A port free on every member's loopback address (they share it, as members of one cluster do). */
  private async sharedPort(members: number, picked: (string | undefined)[]): Promise<number> {
    const pickedPorts = new Set(picked.filter((u) => u !== undefined).map((u) => Number(new URL(u).port)));
    for (let attempt = 0; attempt < 20; attempt++) {
      const [port] = await freePorts(1);
      if (pickedPorts.has(port!)) continue;
      const taken = await Promise.all(Array.from({ length: members }, (_, i) => listenError(`127.0.0.${i + 1}`, port!)));
      if (taken.every((e) => e === undefined)) return port!;
    }
    throw new Error('no port free on 127.0.0.1-3');
  }

  private async waitServer(i: number): Promise<void> {
    const s = this.servers[i]!;
    const exited = s.proc!.exited.then(({ code, signal }) => {
      const last = lastLines(s.logFile, 5);
      throw new Error(`${s.name} exited early (code ${code}, signal ${signal}); see ${s.logFile}${last ? `; it ended with:\n${last}` : ''}`);
    });
    exited.catch(() => {});
    const kubeconfig = join(this.o.dir, s.name, 'kubeconfig');
    await Promise.race([waitForReady(kubeconfig, 60_000, undefined, s.url), exited]);
  }

  /** The addresses agents are given: the endpoint, the first member, or every member. */
  private joinUrls(): string[] {
    if (this.endpointUrl) return [this.endpointUrl];
    return this.o.shape.join === 'first' ? [this.servers[0]!.url] : this.servers.map((s) => s.url);
  }

  private async startAgents(): Promise<void> {
    for (const name of this.o.partitioned) {
      const proxy = new FaultProxy(this.joinUrls().map((u) => ({ host: new URL(u).hostname, port: Number(new URL(u).port) })));
      await proxy.listen();
      this.proxies.set(name, proxy);
    }
    for (let i = 1; i <= this.o.shape.nodes; i++) {
      const name = `node-${i}`;
      this.agents.push({ name, logFile: join(this.logDir, `${name}.log`), frozen: false });
      this.startAgent(name);
    }
    this.o.say(`starting ${this.o.shape.nodes} node agent${this.o.shape.nodes === 1 ? '' : 's'} (simulated runtime), joined through ${this.joinUrls().join(', ')}`);
  }

  /** The cloud, its node group `node` and its first `min` instances (node-1 …), and waits until they run. */
  private async startCloud(): Promise<void> {
    const shape = this.o.shape.cloud!;
    const log = join(this.logDir, 'cloud.log');
    this.cloudProc = startProcess({
      name: 'cloud',
      command: process.execPath,
      args: [
        SKIFF_BIN, 'cloud', 'serve', '--data-dir', join(this.o.dir, 'cloud'), '--listen', this.cloudUrl!.replace('http://', ''),
        ...this.joinUrls().flatMap((u) => ['--server', u]), '--ca-file', this.caFile, '--runtime', 'simulated', '--termination-grace', '5s', '--log-format', 'json',
        ...asAgentFlags([...this.o.agentFlags, '--log-format', 'json']),
      ],
      env: { ...process.env, SKIFF_TOKEN: this.token },
      output: log,
    });
    this.cloud = new CloudClient(this.cloudUrl!);
    this.o.say(`starting a local cloud on ${this.cloudUrl} with node group ${CLOUD_GROUP} (${shape.min}..${shape.max} instances of ${shape.cpu} cpu, ${shape.memory}; logs: ${log})`);
    await startNodeGroups(this.cloud, [{ name: CLOUD_GROUP, min: shape.min, max: shape.max }], { name: 'scenario', cpu: shape.cpu, memory: shape.memory, pods: 110 });
  }

  /** Where a cloud instance's agent logs. */
  instanceLog(i: Instance): string {
    return machineLog(instanceDir(join(this.o.dir, 'cloud'), i.id));
  }

  /** The cloud instance a node runs on (with a cloud). */
  async instanceOf(node: string): Promise<Instance> {
    const i = (await this.cloud!.instances()).find((x) => x.nodeName === node && x.state !== 'Terminated');
    if (!i) throw new Error(`no cloud instance runs ${node}`);
    return i;
  }

  startAgent(name: string): void {
    const a = this.process(name);
    a.frozen = false;
    const proxy = this.proxies.get(name);
    const urls = proxy ? [`https://127.0.0.1:${proxy.port}`] : this.joinUrls();
    a.proc = startProcess({
      name,
      command: process.execPath,
      args: [
        SKIFF_BIN, 'agent', ...urls.flatMap((u) => ['--server', u]), ...(proxy ? ['--endpoint-discovery=false'] : []), '--ca-file', this.caFile, '--data-dir', join(this.o.dir, 'agents', name),
        '--node-name', name, '--runtime', 'simulated', '--kubelet-port', '0', '--log-format', 'json', ...this.o.agentFlags,
      ],
      env: { ...process.env, SKIFF_TOKEN: this.token },
      output: a.logFile,
    });
  }

  /** A server or agent by name (server-N, node-N). */
  process(name: string): ClusterProcess {
    const p = [...this.servers, ...this.agents].find((x) => x.name === name);
    if (!p) throw new Error(`no process ${name} in this cluster`);
    return p;
  }

  signal(name: string, sig: NodeJS.Signals): void {
    const p = this.process(name);
    p.proc?.signal(sig);
    if (sig === 'SIGSTOP') p.frozen = true;
    if (sig === 'SIGCONT') p.frozen = false;
  }

  /** The proxy a partitioned node reaches the servers through. */
  proxy(name: string): FaultProxy {
    const p = this.proxies.get(name);
    if (!p) throw new Error(`${name} has no fault proxy (only nodes a partition step names do)`);
    return p;
  }

  /** An admin client over every member (it fails over among them). */
  client(timeoutMs = 10_000): ApiClient {
    const kc = parseKubeconfig(readFileSync(this.kubeconfig, 'utf8'), (p) => readFileSync(p, 'utf8'));
    const c = new ApiClient({
      servers: this.servers.map((s) => s.url),
      caPem: kc.caPem!,
      ...(kc.clientCertPem ? { clientCertPem: kc.clientCertPem } : {}),
      ...(kc.clientKeyPem ? { clientKeyPem: kc.clientKeyPem } : {}),
      timeoutMs,
    });
    this.clients.push(c);
    return c;
  }

  /** Stops everything it started: agents first (SIGKILL: a scenario's end is not a story of graceful exits), then servers, HAProxy, etcd. */
  async stop(): Promise<void> {
    // The cloud's machines leave through the cloud while the servers still answer, then it goes.
    if (this.cloud) await stopCloudInstances(this.cloud);
    await this.cloudProc?.stop(5_000);
    for (const c of this.clients) c.close();
    const all = [...this.agents, ...this.servers];
    for (const p of all) p.proc?.signal('SIGCONT');
    await Promise.all(this.agents.map(async (a) => {
      a.proc?.signal('SIGKILL');
      await a.proc?.exited;
    }));
    await Promise.all(this.servers.map((s) => s.proc?.stop(5_000)));
    await Promise.all([...this.proxies.values()].map((p) => p.close()));
    await this.haproxy?.stop(2_000);
    if (this.etcd) await this.etcd.destroy();
  }
}
