// `skiff agent`: one node. Wires the pieces — credentials, runtime, pod sync (recovering what an
// earlier agent left), log server, registration, node keeper (self-heal), Lease renewer, status
// reporter, informers — and owns the two ways of leaving: graceful exit (N6) and retirement (N5).
import { credentialFor, dockerConfigEntries } from './registry-auth.js';
import { readConfigData } from './config-data.js';
import type { AuthConfig } from '../cri/messages.js';
import { ServiceProxy, serviceProxySupported } from './service-proxy/service-proxy.js';
import { PodRoutes } from './pod-routes.js';
import { ClusterDns, DEFAULT_CLUSTER_DOMAIN, KUBE_DNS_NAME, KUBE_DNS_NAMESPACE, readHostResolvConf } from './cluster-dns.js';
import { podDnsConfig, type NodeDnsSettings } from '../dns/resolv-conf.js';
import type { Namespace } from '../api/kinds/namespace.js';
import { parseCidr, parseIp } from '../api/cidr.js';
import type { Service } from '../api/kinds/service.js';
import type { EndpointSlice } from '../api/kinds/endpointslice.js';
import { userAgent } from '../version.js';
import { hostname } from 'node:os';
import type { Node } from '../api/kinds/node.js';
import type { Pod } from '../api/kinds/pod.js';
import { ApiClient, type ClientOptions } from '../client/rest.js';
import { EndpointDiscovery } from '../client/endpoint-discovery.js';
import { preferenceOrder } from '../client/server-preference.js';
import { Informer, objectKeyOf, stripManagedFields } from '../client/informer.js';
import { parseKubeconfig } from '../pki/kubeconfig.js';
import { readFileSync } from 'node:fs';
import { systemClock, type Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { type AgentApi } from './api.js';
import { errorText } from '../util/error-text.js';
import { join } from 'node:path';
import { rfc3339 } from '../util/time.js';
import { cordon, cordonForShutdown, withinDeadline } from './drain.js';
import { evictAll } from '../client/eviction.js';
import { EventRecorder } from './events.js';
import { JoinError, ensureNodeCredential } from './join.js';
import { Backoff } from './wake.js';
import type { LeaseRenewer } from './lease-renewer.js';
import { ContainerLogRotation } from './container-log-rotation.js';
import { LogServer } from './log-server.js';
import { StatsProvider } from './stats-provider.js';
import { PortAuthorizer, type SubjectAccessReviewStatus } from './port-authorizer.js';
import { hostUsage } from './node-usage.js';
import type { NodeKeeper } from './node-keeper.js';
import { NodeLoops } from './node-loops.js';
import { hostCapacity, READY, simulatedCapacity, type NodeConfig, type Readiness } from './node-object.js';
import { PodSync, SHUTDOWN_OVERRIDE } from './pod-sync.js';
import { ProcessRuntime } from './runtimes/process.js';
import type { Runtime, RuntimeName, StreamRequest } from './runtimes/runtime.js';
import { RuntimeHealth } from './runtime-health.js';
import { PodCidrHandoff } from './pod-cidr.js';
import { ImageGc } from './image-gc.js';
import { LocalPathProvisioner } from './volumes/local-path-provisioner.js';
import { ContainerdRuntime, DEFAULT_CRI_ENDPOINT } from './runtimes/containerd.js';
import { SimulatedRuntime } from './runtimes/simulated.js';
import type { Stages } from './runtimes/sim-stages.js';
import { AgentStateDir } from './state-dir.js';
import type { StatusReporter } from './status-reporter.js';
import { AgentMetrics } from './metrics.js';
import { ensureServingCert } from './tls.js';
import type { Taint } from '../api/kinds/node.js';

const DEFAULT_RESOLV_CONF = '/etc/resolv.conf';

export type Credentials =
  | { kind: 'kubeconfig'; path: string }
  | { kind: 'token'; token?: string; caFile?: string; caCertHash?: string; insecureSkipCaVerification?: boolean; tlsBootstrap?: boolean };

export interface AgentConfig {
  dataDir: string;
  nodeName?: string;
  nodeIP: string;
  servers: string[];
  credentials: Credentials;
  runtime: RuntimeName;
  /** The CRI socket of the containerd runtime. */
  containerRuntimeEndpoint?: string;
  /** cgroupfs parent of this node's pods (containerd runtime; default /skiff/<node name>). */
  cgroupRoot?: string;
  /** Route Service cluster IPs on this node (containerd runtime), as kube-proxy does; default true. */
  serviceProxy?: boolean;
  /** Route the other nodes' pod CIDRs to their addresses (on runtimes whose pods have addresses); default true. */
  podRoutes?: boolean;
  /** --cluster-dns: the DNS addresses pods are given; default the kube-dns Service's cluster IP. */
  clusterDns?: string[];
  /** --cluster-domain (cluster.local). */
  clusterDomain?: string;
  /** --resolv-conf: the host resolver settings pods with dnsPolicy Default get, and where cluster DNS forwards other names. */
  resolvConf?: string;
  /** --cluster-dns-port: the port of this node's DNS server (0: any free one). */
  clusterDnsPort?: number;
  labels: Record<string, string>;
  taints: Taint[];
  /** The machine's ID at its cloud (spec.providerID), when a cloud runs it. */
  providerID?: string;
  /** `external`: a cloud controller initialises the Node (it registers tainted uninitialized, as upstream's kubelet with --cloud-provider=external). */
  cloudProvider?: 'external';
  reregister: boolean;
  endpointDiscovery: boolean;
  rejoin: boolean;
  leaseDurationSeconds: number;
  statusUpdateFrequencyMs: number;
  statusReportFrequencyMs: number;
  kubeletPort: number;
  maxPods: number;
  /** Simulated capacity (the process runtime reports the host's). */
  cpu?: string;
  memory?: string;
  simPodStartDelayMs: number;
  simPodStopDelayMs: number;
  /** The simulated runtime's stages (which pods start, exit and stop when). */
  simStages?: Stages;
  restartBackoffBaseMs: number;
  restartBackoffMaxMs: number;
  /** Container logs over this size are rotated (upstream containerLogMaxSize, 10Mi)... */
  containerLogMaxBytes: number;
  /** ...keeping this many files per container (containerLogMaxFiles, 5)... */
  containerLogMaxFiles: number;
  /** ...checked this often (containerLogMonitorInterval, 10 s). */
  containerLogMonitorIntervalMs: number;
  /** Upper bound on a graceful exit once pods are stopped (API calls to cordon and remove). */
  shutdownTimeoutMs: number;
  requestTimeoutMs: number;
  /** Health checks of every known server (endpoint discovery only); tests shorten fail-back. */
  healthCheckIntervalMs?: number;
  healthCheckTimeoutMs?: number;
  failbackAfterMs?: number;
  /** How often default/kubernetes is re-read. */
  discoveryIntervalMs?: number;
  /**
   * The API server in this very process (a control-plane member's own node): preferred above
   * every other member, as upstream's control-plane kubelets use their local API server.
   */
  localServer?: string;
}

/** What describes the node itself, apart from where its state lives and how it reaches the API. */
export type AgentNodeConfig = Omit<AgentConfig, 'dataDir' | 'servers' | 'credentials' | 'endpointDiscovery' | 'rejoin' | 'localServer'>;

/** The node was retired; starting again needs --rejoin or a fresh data dir. */
export class RetiredError extends Error {}

export type AgentEnd = 'stopped' | 'retired' | 'restarting';

export class Agent {
  readonly state: AgentStateDir;
  readonly nodeName: string;
  private readonly clock: Clock;
  private readonly abort = new AbortController();
  private client?: ApiClient;
  private runtime?: Runtime;
  private runtimeHealth?: RuntimeHealth;
  private podSync?: PodSync;
  private logServer?: LogServer;
  private logRotation?: ContainerLogRotation;
  private keeper?: NodeKeeper;
  private lease?: LeaseRenewer;
  private status?: StatusReporter;
  private nodeLoops?: NodeLoops;
  private podInformer?: Informer<Pod>;
  private serviceProxy?: ServiceProxy;
  private clusterDns?: ClusterDns;
  /** kube-dns's cluster IP as read at start, before the Service watch has it. */
  private kubeDnsAtStart: string[] = [];
  private hostResolv?: ReturnType<typeof readHostResolvConf>;
  private podCidrs: string[] = [];
  private readiness: Readiness = READY;
  private leaving?: Promise<void>;
  private loops: Promise<unknown>[] = [];
  private endResolve!: (e: AgentEnd) => void;
  /** Resolves when the agent has left: after a graceful exit or a retirement. */
  readonly ended: Promise<AgentEnd> = new Promise((r) => (this.endResolve = r));
  nodeConfig?: NodeConfig;

  readonly metrics: AgentMetrics;

  constructor(private readonly cfg: AgentConfig, private readonly log: Logger, clock: Clock = systemClock) {
    this.clock = clock;
    this.state = new AgentStateDir(cfg.dataDir);
    this.nodeName = (cfg.nodeName ?? hostname()).toLowerCase();
    this.metrics = new AgentMetrics(this.nodeName, () => this.podSync?.allWorkers() ?? []);
  }

  get api(): AgentApi | undefined {
    return this.client;
  }

  get nodeKeeper(): NodeKeeper | undefined {
    return this.keeper;
  }

  /**
   * With endpoint discovery the agent is HA-aware: it starts from its --server URLs plus the list
   * it persisted last time (so it can start while the member it was pointed at is gone), health
   * checks all of them and fails over within ~2 s. Without it (classic, N13) it uses exactly its
   * --server URLs, as the upstream kubelet does with its single address.
   */
  private initialServers(persisted: string[]): string[] {
    if (!this.cfg.endpointDiscovery && this.cfg.servers.length > 0) return dedupe(this.cfg.servers);
    return this.preferred(dedupe([...this.cfg.servers, ...persisted]));
  }

  /** This node's preference among the members it knows (spread over the fleet, stable per node). */
  private preferred(servers: string[]): string[] {
    const local = this.cfg.localServer;
    const order = preferenceOrder(servers, this.nodeName);
    return local && order.includes(local) ? [local, ...order.filter((s) => s !== local)] : order;
  }

  private healthOptions(): Pick<ClientOptions, 'healthCheck'> {
    if (!this.cfg.endpointDiscovery) return {};
    return {
      healthCheck: {
        ...(this.cfg.healthCheckIntervalMs !== undefined ? { intervalMs: this.cfg.healthCheckIntervalMs } : {}),
        ...(this.cfg.healthCheckTimeoutMs !== undefined ? { timeoutMs: this.cfg.healthCheckTimeoutMs } : {}),
        ...(this.cfg.failbackAfterMs !== undefined ? { failbackAfterMs: this.cfg.failbackAfterMs } : {}),
      },
    };
  }

  private async makeClient(): Promise<{ client: ApiClient; caPem: string }> {
    const persisted = this.state.readServers();
    const c = this.cfg.credentials;
    if (c.kind === 'kubeconfig') {
      const kc = parseKubeconfig(readFileSync(c.path, 'utf8'), (p) => readFileSync(p, 'utf8'));
      if (!kc.caPem) throw new Error(`${c.path}: no certificate-authority data`);
      const servers = this.cfg.servers.length === 0 ? (this.cfg.endpointDiscovery ? this.preferred(dedupe([kc.server, ...persisted])) : [kc.server]) : this.initialServers(persisted);
      const client = new ApiClient({
        servers,
        ...this.healthOptions(),
        caPem: kc.caPem,
        ...(kc.clientCertPem ? { clientCertPem: kc.clientCertPem } : {}),
        ...(kc.clientKeyPem ? { clientKeyPem: kc.clientKeyPem } : {}),
        ...(kc.token ? { token: kc.token } : {}),
        timeoutMs: this.cfg.requestTimeoutMs,
        userAgent: userAgent('skiff-agent', this.nodeName),
        metrics: this.metrics.client,
      });
      return { client, caPem: kc.caPem };
    }
    const servers = this.initialServers(persisted);
    if (servers.length === 0) throw new Error('no API server: pass --server URL');
    const cred = await this.retryJoin(() => ensureNodeCredential(
      this.state,
      {
        servers,
        nodeName: this.nodeName,
        ...(c.token ? { token: c.token } : {}),
        ...(c.caFile ? { caFile: c.caFile } : {}),
        ...(c.caCertHash ? { caCertHash: c.caCertHash } : {}),
        ...(c.insecureSkipCaVerification ? { insecureSkipCaVerification: true } : {}),
        ...(c.tlsBootstrap ? { tlsBootstrap: true } : {}),
      },
      this.log,
    ));
    const client = new ApiClient({
      servers,
      ...this.healthOptions(),
      caPem: cred.caPem,
      clientCertPem: cred.certPem,
      clientKeyPem: cred.keyPem,
      timeoutMs: this.cfg.requestTimeoutMs,
      userAgent: userAgent('skiff-agent', this.nodeName),
      metrics: this.metrics.client,
    });
    return { client, caPem: cred.caPem };
  }

  /** Joining retries with back-off while no server answers (it may still be starting); refusals end it. */
  private async retryJoin<T>(fn: () => Promise<T>): Promise<T> {
    const backoff = new Backoff(500, 10_000);
    let logged = false;
    for (;;) {
      try {
        return await fn();
      } catch (e) {
        if (!(e instanceof JoinError) || e.fatal || this.abort.signal.aborted) throw e;
        if (!logged) {
          logged = true;
          this.log.warn({ err: e.message }, 'cannot join yet; retrying with back-off');
        }
        await this.clock.sleep(backoff.next(), this.abort.signal).catch(() => {});
      }
    }
  }

  /** Everything up to a registered Node and running loops. Throws on N4 refusal or retirement. */
  async start(): Promise<void> {
    const cfg = this.cfg;
    const retiredAt = this.state.retiredAt();
    if (retiredAt) {
      if (!cfg.rejoin) {
        throw new RetiredError(
          `node "${this.nodeName}" was retired at ${retiredAt} (data dir ${this.state.root}); it stays out of the cluster. ` +
            'Start the agent with --rejoin to join again, or use a fresh --data-dir.',
        );
      }
      this.state.clearRetired();
      this.log.info({ node: this.nodeName }, 'rejoining after retirement');
    }
    const machineId = this.state.machineId();
    const { client, caPem } = await this.makeClient();
    this.client = client;
    this.state.writeServers(client.serverList);
    client.onFailover((server, reason) => this.log.warn({ server, reason }, 'API server failover'));
    client.onHealthChange((server, st) => {
      if (st.healthy) this.log.info({ server }, 'API server healthy');
      else this.log.warn({ server, err: st.lastError }, 'API server unhealthy');
    });
    if (cfg.endpointDiscovery) {
      // Read once now (so the list is known and persisted before any member can fail), then keep reading.
      const discovery = new EndpointDiscovery({
        client,
        configured: cfg.servers.length > 0 ? cfg.servers : client.serverList.slice(0, 1),
        clock: this.clock,
        log: this.log,
        ...(cfg.discoveryIntervalMs !== undefined ? { intervalMs: cfg.discoveryIntervalMs } : {}),
        onServers: (servers) => this.state.writeServers(servers),
        order: (servers) => this.preferred(servers),
      });
      const ok = await discovery.refresh(this.abort.signal);
      this.loops.push(discovery.run(this.abort.signal, ok));
    }

    let runtimeVersion: string | undefined;
    if (cfg.runtime === 'containerd') {
      const endpoint = cfg.containerRuntimeEndpoint ?? DEFAULT_CRI_ENDPOINT;
      const containerd = new ContainerdRuntime({
        clock: this.clock,
        log: this.log,
        nodeName: this.nodeName,
        endpoint,
        cgroupRoot: cfg.cgroupRoot ?? `/skiff/${this.nodeName}`,
        podLogDir: (uid) => join(this.state.podDir(uid), 'logs'),
        pullAuth: (pod, image) => this.pullCredential(client, pod, image),
        dns: (pod) => podDnsConfig(pod, this.dnsSettings()),
      });
      this.runtime = containerd;
      try {
        runtimeVersion = await containerd.version();
      } catch (e) {
        throw new Error(`cannot reach the container runtime at ${endpoint}: ${errorText(e)} (is containerd running? --container-runtime-endpoint names its socket)`);
      }
    } else {
      this.runtime =
        cfg.runtime === 'simulated'
          ? new SimulatedRuntime({ clock: this.clock, startDelayMs: cfg.simPodStartDelayMs, stopDelayMs: cfg.simPodStopDelayMs, ...(cfg.simStages ? { stages: cfg.simStages.pods } : {}) })
          : new ProcessRuntime({ clock: this.clock, log: this.log, tag: machineId });
    }
    const runtime = this.runtime;
    if (runtime.health) {
      this.runtimeHealth = new RuntimeHealth({ clock: this.clock, log: this.log, check: () => runtime.health!(), changed: () => this.status?.kick() });
      // Asked once before the Node is registered, so its first status already says.
      await this.runtimeHealth.probe();
    }
    const events = new EventRecorder(client, this.clock, this.log, this.nodeName);
    this.podSync = new PodSync({
      api: client,
      clock: this.clock,
      log: this.log,
      nodeName: this.nodeName,
      nodeIP: cfg.nodeIP,
      apiServer: () => client.server,
      runtime,
      state: this.state,
      events,
      backoffBaseMs: cfg.restartBackoffBaseMs,
      backoffMaxMs: cfg.restartBackoffMaxMs,
      agentTag: machineId,
      allocatable: () => this.nodeConfig?.capacity ?? {},
      synced: (seconds) => this.metrics.podSynced(seconds),
    });
    // Before anything talks to the API: containers an earlier agent started are adopted, orphans killed.
    await this.podSync.recover();
    if (runtime.images && !cfg.clusterDns?.length) {
      // Pods that start before the Service watch has kube-dns still get the cluster's resolver.
      const kubeDns = await client.get<Service>(`/api/v1/namespaces/${KUBE_DNS_NAMESPACE}/services/${KUBE_DNS_NAME}`).catch(() => undefined);
      const ip = kubeDns?.spec?.clusterIP;
      if (ip && ip !== 'None') this.kubeDnsAtStart = [ip];
    }
    void events.node('Starting', 'Starting skiff agent.');

    const stats = new StatsProvider({
      clock: this.clock,
      log: this.log,
      nodeName: this.nodeName,
      runtime,
      workers: () => this.podSync?.allWorkers() ?? [],
      ...(cfg.runtime === 'simulated' ? {} : { host: hostUsage }),
    });
    const portAuthorizer = new PortAuthorizer({
      clock: this.clock,
      nodeName: this.nodeName,
      review: async (spec) =>
        (await client.create<{ status?: SubjectAccessReviewStatus }>('/apis/authorization.k8s.io/v1/subjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec })).status,
    });
    const serving = await ensureServingCert(this.state.path('tls'), this.nodeName, dedupe([cfg.nodeIP, this.nodeName, 'localhost']));
    this.logServer = new LogServer({
      host: cfg.nodeIP,
      port: cfg.kubeletPort,
      certPem: serving.certPem,
      keyPem: serving.keyPem,
      caPem,
      log: this.log,
      lookup: (ns, name) => this.podSync?.workerFor(ns, name),
      metrics: () => this.metrics.text(),
      stats: () => stats.read(),
      authorize: (caller, verb, subresource) => portAuthorizer.allowed(caller, verb, subresource),
      runtime: runtime.name,
      ...(runtime.streamUrl ? { streamUrl: (r: StreamRequest) => runtime.streamUrl!(r) } : {}),
    });
    const kubeletPort = await this.logServer.start();
    this.logRotation = new ContainerLogRotation({
      state: this.state,
      clock: this.clock,
      log: this.log,
      maxBytes: cfg.containerLogMaxBytes,
      maxFiles: cfg.containerLogMaxFiles,
      intervalMs: cfg.containerLogMonitorIntervalMs,
    });
    this.logRotation.start();

    const capacity =
      cfg.runtime === 'simulated'
        ? simulatedCapacity(cfg)
        : hostCapacity(this.state.root, cfg.maxPods);
    if (cfg.runtime !== 'simulated') {
      if (cfg.cpu) capacity.cpu = cfg.cpu;
      if (cfg.memory) capacity.memory = cfg.memory;
    }
    this.nodeConfig = {
      nodeName: this.nodeName,
      machineId,
      nodeIP: cfg.nodeIP,
      runtime: cfg.runtime,
      ...(runtimeVersion ? { runtimeVersion } : {}),
      labels: cfg.labels,
      taints: cfg.taints,
      capacity,
      kubeletPort,
      ...(cfg.providerID ? { providerID: cfg.providerID } : {}),
      ...(cfg.cloudProvider ? { cloudProvider: cfg.cloudProvider } : {}),
    };

    const signal = this.abort.signal;
    const loops = new NodeLoops({
      api: client,
      clock: this.clock,
      log: this.log,
      cfg: this.nodeConfig,
      state: this.state,
      events,
      reregister: cfg.reregister,
      leaseDurationSeconds: cfg.leaseDurationSeconds,
      statusUpdateFrequencyMs: cfg.statusUpdateFrequencyMs,
      statusReportFrequencyMs: cfg.statusReportFrequencyMs,
      // Shutting down outranks the runtime's state; the runtime's outranks ready.
      readiness: () => (this.readiness.ready ? (this.runtimeHealth?.readiness ?? this.readiness) : this.readiness),
      ...(cfg.runtime === 'simulated' && cfg.simStages ? { conditionStages: cfg.simStages.nodes } : {}),
      onRetire: () => void this.retire(),
    });
    this.nodeLoops = loops;
    this.keeper = loops.keeper;
    this.lease = loops.lease;
    this.status = loops.status;

    // Pods are watched from the start: with the API down the agent still restarts crashed containers.
    const pods = new Informer<Pod>(client, { path: '/api/v1/pods', fieldSelector: `spec.nodeName=${this.nodeName}`, clock: this.clock, log: this.log, transform: stripManagedFields });
    this.podInformer = pods;
    this.podSync.setDesired(
      (key) => pods.get(key),
      () => pods.list().map(objectKeyOf),
    );
    pods.addHandlers({
      add: (p) => this.podSync?.podChanged(p),
      update: (_o, p) => this.podSync?.podChanged(p),
      delete: (p) => this.podSync?.podDeleted(p),
    });
    this.loops.push(pods.run(signal), this.podSync.run(signal));
    void pods.waitForSync().then(() => this.podSync?.markSynced());
    // Claims selected to this node get their volumes here: only this agent can touch its disk.
    this.loops.push(new LocalPathProvisioner({ api: client, clock: this.clock, log: this.log, nodeName: this.nodeName, dataDir: this.state.root, events }).run(signal));
    // Pods with addresses of their own reach Services through the node's rules (kube-proxy's job).
    if (runtime.images && cfg.serviceProxy !== false) {
      if (!serviceProxySupported()) {
        this.log.warn({}, 'iptables is missing or not usable here: Service cluster IPs are not routed on this node');
      } else {
        const services = new Informer<Service>(client, { path: '/api/v1/services', clock: this.clock, log: this.log, transform: stripManagedFields });
        const slices = new Informer<EndpointSlice>(client, { path: '/apis/discovery.k8s.io/v1/endpointslices', clock: this.clock, log: this.log, transform: stripManagedFields });
        const namespaces = new Informer<Namespace>(client, { path: '/api/v1/namespaces', clock: this.clock, log: this.log, transform: stripManagedFields });
        // The node's DNS server answers from the same watch the rules come from.
        const dns = new ClusterDns({
          clock: this.clock,
          log: this.log,
          services,
          slices,
          namespaces,
          clusterDns: cfg.clusterDns ?? [],
          clusterDomain: this.clusterDomain(),
          resolvConf: cfg.resolvConf ?? DEFAULT_RESOLV_CONF,
          fallbackClusterDns: () => this.kubeDnsAtStart,
          isPodAddress: (ip) => this.isPodAddress(ip),
          podCidrs: () => this.podCidrs,
          ...(cfg.clusterDnsPort !== undefined ? { port: cfg.clusterDnsPort } : {}),
        });
        this.clusterDns = dns;
        await dns.start();
        const proxy = new ServiceProxy({ nodeName: this.nodeName, clock: this.clock, log: this.log, services, slices, dnsRedirect: () => dns.redirect() });
        this.serviceProxy = proxy;
        this.loops.push(services.run(signal), slices.run(signal), namespaces.run(signal));
        void Promise.all([services.waitForSync(), slices.waitForSync()]).then(() => proxy.start()).catch((e: unknown) => this.log.warn({ err: errorText(e) }, 'the service proxy did not start'));
      }
    }

    // Pods on other machines: each node's pod CIDR routed to its address (flannel's host-gw).
    if (runtime.setPodCidr && cfg.podRoutes !== false) {
      const routes = new PodRoutes({ nodeName: this.nodeName, log: this.log });
      const allNodes = new Informer<Node>(client, { path: '/api/v1/nodes', clock: this.clock, log: this.log, transform: stripManagedFields });
      allNodes.addHandlers({ add: (n) => void routes.observe(n), update: (_o, n) => void routes.observe(n), delete: (n) => void routes.deleted(n) });
      this.loops.push(allNodes.run(signal));
    }

    // The Lease first, then the first (fast) status report: a node shown Ready always has its Lease.
    await loops.register(signal);

    const nodes = new Informer<Node>(client, { path: '/api/v1/nodes', fieldSelector: `metadata.name=${this.nodeName}`, clock: this.clock, log: this.log, transform: stripManagedFields });
    const podCidr = runtime.setPodCidr ? new PodCidrHandoff({ clock: this.clock, log: this.log, set: (c) => runtime.setPodCidr!(c), signal }) : undefined;
    const seen = (n: Node) => {
      const cidrs = n.spec?.podCIDRs ?? (n.spec?.podCIDR ? [n.spec.podCIDR] : []);
      if (cidrs.join() !== this.podCidrs.join()) {
        this.podCidrs = cidrs;
        this.serviceProxy?.kick();
      }
      loops.observedNode(n);
      podCidr?.observe(n);
    };
    nodes.addHandlers({ add: seen, update: (_o, n) => seen(n), delete: (n) => loops.deletedNode(n) });
    this.loops.push(nodes.run(signal), ...loops.run(signal));
    if (this.runtimeHealth) this.loops.push(this.runtimeHealth.run(signal));
    if (runtime.imageStore) this.loops.push(new ImageGc({ clock: this.clock, log: this.log, ...runtime.imageStore }).run(signal));
    this.log.info(
      { node: this.nodeName, runtime: cfg.runtime, kubeletPort, servers: client.serverList, reregister: cfg.reregister, machineId },
      'agent started',
    );
  }

  private logRemoved(removed: boolean): void {
    if (!removed) this.log.error({ node: this.nodeName }, 'could not remove the node and its lease from the API before the deadline');
  }

  private async stopLoops(): Promise<void> {
    this.lease?.stop();
    this.status?.stop();
    this.abort.abort();
    await Promise.race([Promise.allSettled(this.loops), this.clock.sleep(2000)]);
    await this.logServer?.stop().catch(() => {});
    await this.clusterDns?.stop().catch(() => {});
    this.logRotation?.stop();
    this.runtime?.close();
    this.client?.close();
  }

  private clusterDomain(): string {
    return this.cfg.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN;
  }

  /** The node's side of every pod's resolv.conf. */
  private dnsSettings(): NodeDnsSettings {
    if (this.clusterDns) return this.clusterDns.podSettings();
    this.hostResolv ??= readHostResolvConf(this.cfg.resolvConf ?? DEFAULT_RESOLV_CONF, this.log);
    const clusterDns = this.cfg.clusterDns?.length ? this.cfg.clusterDns : this.kubeDnsAtStart;
    return { clusterDns, clusterDomain: this.clusterDomain(), host: this.hostResolv };
  }

  /** Whether an address is one of this node's pods (who may ask its DNS server): in its pod CIDR, or a sandbox's. */
  private isPodAddress(ip: string): boolean {
    const addr = parseIp(ip);
    if (!addr) return false;
    for (const c of this.podCidrs) {
      const block = parseCidr(c);
      if (block && block.family === addr.family && addr.bits >> BigInt((block.family === 4 ? 32 : 128) - block.prefix) === block.network >> BigInt((block.family === 4 ? 32 : 128) - block.prefix)) return true;
    }
    const runtime = this.runtime;
    return (this.podInformer?.list() ?? []).some((p) => p.status?.podIP === ip || (p.metadata.uid !== undefined && runtime?.podIP?.(p.metadata.uid) === ip));
  }

  /** The registry credential for an image among the pod's imagePullSecrets (one that cannot be read is passed over, as the kubelet does). */
  private async pullCredential(api: AgentApi, pod: Pod, image: string): Promise<AuthConfig | undefined> {
    const ns = pod.metadata.namespace ?? 'default';
    const secrets: ReturnType<typeof dockerConfigEntries>[] = [];
    for (const ref of pod.spec?.imagePullSecrets ?? []) {
      if (!ref?.name) continue;
      const data = await readConfigData(api, ns, 'secrets', ref.name).catch((e: unknown) => {
        this.log.warn({ pod: `${ns}/${pod.metadata.name}`, secret: ref.name, err: errorText(e) }, 'could not read an image pull secret');
        return undefined;
      });
      if (data) secrets.push(dockerConfigEntries(data));
    }
    return credentialFor(image, secrets);
  }

  /** N6: cordon, stop pods within their grace periods, delete Lease and Node. */
  shutdown(reason: string): Promise<void> {
    if (this.leaving) return this.leaving;
    this.leaving = (async () => {
      this.log.info({ node: this.nodeName, reason }, 'shutting down: cordoning, stopping pods, removing the node');
      const started = this.keeper !== undefined && this.client !== undefined && this.lease !== undefined;
      // A Node that is gone (classic mode after a deletion) is not cordoned or reported on.
      const registered = started && this.keeper!.uid !== undefined;
      this.keeper?.leave();
      this.podSync?.stopAdmitting();
      if (registered) {
        const apiDeadline = this.clock.now() + this.cfg.shutdownTimeoutMs;
        this.readiness = { ready: false, reason: 'KubeletNotReady', message: 'node is shutting down' };
        const wasUnschedulable = this.keeper!.current?.spec?.unschedulable === true;
        await withinDeadline(this.clock, apiDeadline, () => cordonForShutdown(this.client!, this.nodeName, wasUnschedulable));
        await withinDeadline(this.clock, apiDeadline, async () => {
          if (!(await this.status!.sync())) throw new Error('status not reported');
        });
      }
      // Pods get their full grace periods; the API calls after that get the shutdown timeout again.
      await this.podSync?.terminateAll(SHUTDOWN_OVERRIDE, this.clock.now() + this.cfg.shutdownTimeoutMs + 60_000);
      await this.serviceProxy?.remove();
      if (started) this.logRemoved(await this.nodeLoops!.remove(this.clock.now() + this.cfg.shutdownTimeoutMs));
      await this.stopLoops();
      this.log.info({ node: this.nodeName }, 'agent stopped');
      this.endResolve('stopped');
    })();
    return this.leaving;
  }

  /**
   * Stops without leaving — pods keep running, the Node and its Lease stay — so that the agent
   * started next (a new version, in an upgrade) adopts the containers and renews the Lease before
   * it expires: no node goes NotReady and no pod moves.
   */
  restartInPlace(): Promise<void> {
    if (this.leaving) return this.leaving;
    this.leaving = (async () => {
      this.log.info({ node: this.nodeName }, 'restarting in place: pods keep running and the Node stays for the next agent');
      this.keeper?.leave();
      this.podSync?.stopAdmitting();
      await this.stopLoops();
      this.endResolve('restarting');
    })();
    return this.leaving;
  }

  /**
   * N6a: the whole cluster is being stopped (`skiff down`, Ctrl-C of `skiff up`) — machines switched
   * off together, not a node leaving. The API loops stop first, so nothing is reported; then the
   * containers stop. The Node, its Lease and its pods stay as they are, and the agent started next
   * resumes the same pods.
   */
  powerOff(): Promise<void> {
    if (this.leaving) return this.leaving;
    this.leaving = (async () => {
      this.log.info({ node: this.nodeName }, 'cluster stopping: stopping pods, keeping the Node and its pods for the next start');
      this.keeper?.leave();
      this.podSync?.stopAdmitting();
      this.lease?.stop();
      this.status?.stop();
      this.abort.abort();
      await this.podSync?.powerOff();
      await this.serviceProxy?.remove();
      await this.stopLoops();
      this.log.info({ node: this.nodeName }, 'agent stopped with the cluster');
      this.endResolve('stopped');
    })();
    return this.leaving;
  }

  /** N5: the Node carries skiff.dev/retire=true. Drain, remove, and stay out. */
  retire(): Promise<void> {
    if (this.leaving) return this.leaving;
    this.leaving = (async () => {
      this.log.warn({ node: this.nodeName }, 'retire requested; draining the node, then removing it');
      this.state.markRetired(rfc3339(this.clock.now()));
      this.keeper!.leave();
      const api = this.client!;
      const deadline = () => this.clock.now() + this.cfg.shutdownTimeoutMs;
      await withinDeadline(this.clock, deadline(), () => cordon(api, this.nodeName));
      await evictAll({ api, clock: this.clock, log: this.log, pods: () => this.podInformer?.list() ?? [], signal: this.abort.signal });
      // What eviction leaves (DaemonSet pods, finished pods) is stopped in place.
      this.podSync!.stopAdmitting();
      await this.podSync!.terminateAll(
        { ...SHUTDOWN_OVERRIDE, message: 'Pod was terminated because its node was retired.', condition: { ...SHUTDOWN_OVERRIDE.condition!, message: 'Pod was terminated because its node was retired.' } },
        deadline() + 60_000,
      );
      this.logRemoved(await this.nodeLoops!.remove(deadline()));
      this.log.warn({ node: this.nodeName }, 'node retired; not re-registering (start the agent with --rejoin or a fresh data dir to join again)');
      await this.stopLoops();
      this.endResolve('retired');
    })().catch((e: unknown) => {
      this.log.error({ err: errorText(e) }, 'retirement failed');
      this.endResolve('retired');
    });
    return this.leaving;
  }
}

function dedupe(xs: string[]): string[] {
  return [...new Set(xs.filter(Boolean))];
}
