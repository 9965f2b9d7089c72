// Runs one `skiff server`: store, certificates, API server, compaction, admin kubeconfig.
import type { NodeIpamOptions } from '../controllers/node-ipam.js';
import { userAgent } from '../version.js';
import { StaticTokens } from '../auth/static-tokens.js';
import { mkdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ensureClusterPki, type SharedPki } from '../pki/cluster-pki.js';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import { renderKubeconfig } from '../pki/kubeconfig.js';
import { ApiServer, type FlowControlOptions } from '../apiserver/server.js';
import { openSqliteStore } from '../store/sqlite.js';
import { openEtcdStore } from '../store/etcd.js';
import { convertOnStart } from './store-conversion.js';
import { loadOrCreateSharedCa, loadOrCreateSharedFrontProxyCa, loadOrCreateSharedServiceAccountKey } from '../pki/shared-ca.js';
import type { Store } from '../store/store.js';
import type { Logger } from '../util/log.js';
import { ApiClient } from '../client/rest.js';
import { ControllerManager, type ControllerOptions, type LeaderElectionTimings } from '../controller-kit/manager.js';
import { LocalCloudProvider } from '../cloud/local-provider.js';
import type { AutoscalerOptions } from '../cloud/autoscaler/autoscaler.js';
import { allControllers } from '../controllers/index.js';
import { DEFAULT_SERVICE_CLUSTER_IP_RANGE, ServiceRange } from '../api/service-range.js';
import { systemClock } from '../util/clock.js';
import { EndpointReconciler } from './endpoint-reconciler.js';
import { ensureKubeDnsService } from './kube-dns-service.js';
import { ensureLocalPathStorageClass } from './local-storage.js';
import { PidLock } from '../util/pid-lock.js';
import type { AgentNodeConfig } from '../agent/agent.js';
import { CONTROL_PLANE_ROLE, startControlPlaneNode } from './control-plane-node.js';
import { readAdmissionConfigFile } from '../apiserver/admission/config-file.js';
import { PolicyChecker, type Policy } from '../apiserver/audit/policy.js';
import { AuditLogBackend, type AuditLogOptions } from '../apiserver/audit/log-backend.js';

export interface ServerConfig {
  dataDir: string;
  listenHost: string;
  port: number;
  advertiseAddress?: string;
  controlPlaneEndpoint?: string;
  storage: 'sqlite' | 'etcd';
  etcdEndpoints: string[];
  /** `--convert`: move this data directory's SQLite store into the (empty) etcd before serving from it. */
  convertFromSqlite?: boolean;
  compactIntervalMs: number;
  compactMinRetain: number;
  defaultNotReadyTolerationSeconds: number;
  defaultUnreachableTolerationSeconds: number;
  watchCacheSize: number;
  minRequestTimeoutSeconds: number;
  /** --enable-priority-and-fairness, --max-requests-inflight, --max-mutating-requests-inflight. */
  flowControl?: FlowControlOptions;
  /** --event-ttl, in seconds. */
  eventTtlSeconds?: number;
  /** --metric-resolution, in ms. */
  metricResolutionMs?: number;
  /** A bootstrap token agents may join with (`--token`). */
  token?: string;
  /** CSV of static bearer tokens (`--token-auth-file`), as kube-apiserver reads it. */
  tokenAuthFile?: string;
  /** An AdmissionConfiguration (`--admission-control-config-file`): PodSecurity's defaults and exemptions. */
  admissionControlConfigFile?: string;
  /** Audit logging (`--audit-policy-file`, `--audit-log-*`). */
  audit?: AuditConfig;
  controllers: ControllerOptions;
  /** Which controllers run (--controllers): * for all, name to enable, -name to disable. */
  controllerSelection?: string[];
  /** Where Services get their ClusterIPs (--service-cluster-ip-range). */
  serviceRange?: ServiceRange;
  /** Pod CIDRs for nodes (--allocate-node-cidrs); none without. */
  nodeIpam?: NodeIpamOptions;
  leaderElection: LeaderElectionTimings;
  /** Register this machine as a control-plane Node (`--with-agent`). */
  agent?: AgentNodeConfig;
  /** The cloud the machines run in (`--cloud-provider local --cloud-endpoint URL`). */
  cloud?: { provider: 'local'; endpoint: string };
  /** The cluster autoscaler, with the node groups it manages (`--nodes MIN:MAX:GROUP`). */
  autoscaler?: AutoscalerOptions;
}

export interface RunningServer {
  api: ApiServer;
  store: Store;
  port: number;
  kubeconfigPath: string;
  manager: ControllerManager;
  /**
   * What becomes of the member's own node: by default it leaves (N6); `inPlace`, a restart for an
   * upgrade, leaves it running for the next server; `clusterStopping` (N6a) stops its containers
   * and keeps the Node and its pods for the cluster's next start.
   */
  stop(opts?: { inPlace?: boolean; clusterStopping?: boolean }): Promise<void>;
}

function splitHostPort(hp: string): { host: string; port?: number } {
  const m = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(hp);
  if (!m) return { host: hp };
  return m[2] ? { host: m[1]!, port: Number(m[2]) } : { host: m[1]! };
}

export async function runServer(cfg: ServerConfig, log: Logger): Promise<RunningServer> {
  mkdirSync(cfg.dataDir, { recursive: true, mode: 0o700 });
  // Before the store opens: two servers on one data dir would write one database.
  const lock = PidLock.acquire(join(cfg.dataDir, 'server.lock'), `the server data dir ${cfg.dataDir}`);
  let store: Store;
  let shared: SharedPki | undefined;
  if (cfg.storage === 'etcd') {
    if (cfg.etcdEndpoints.length === 0) throw new Error('--storage etcd needs --etcd-endpoints URL[,URL...]');
    if (!cfg.token) throw new Error('--storage etcd needs --token: it seals the cluster CA that all servers share');
    store = await openEtcdStore({ endpoints: cfg.etcdEndpoints, compactMinRetain: cfg.compactMinRetain, compactIntervalMs: cfg.compactIntervalMs, log });
    if (cfg.convertFromSqlite) {
      try {
        await convertOnStart(cfg.dataDir, store, cfg.token, (line) => log.info({}, line));
      } catch (e) {
        await store.close();
        throw e;
      }
    }
    shared = {
      ca: await loadOrCreateSharedCa(store, cfg.token),
      serviceAccountKeyPem: await loadOrCreateSharedServiceAccountKey(store, cfg.token),
      frontProxyCa: await loadOrCreateSharedFrontProxyCa(store, cfg.token),
    };
  } else {
    if (cfg.convertFromSqlite) throw new Error('--convert moves the SQLite store into etcd: it needs --storage etcd --etcd-endpoints URL[,URL...]');
    mkdirSync(join(cfg.dataDir, 'db'), { recursive: true, mode: 0o700 });
    // The store compacts history (keeping compactMinRetain revisions) and checkpoints its WAL itself.
    store = await openSqliteStore({ path: join(cfg.dataDir, 'db', 'state.db'), compactMinRetain: cfg.compactMinRetain, maintenanceIntervalMs: cfg.compactIntervalMs });
  }

  const advertise = cfg.advertiseAddress ?? (cfg.listenHost === '0.0.0.0' || cfg.listenHost === '::' ? '127.0.0.1' : cfg.listenHost);
  const endpoint = cfg.controlPlaneEndpoint ? splitHostPort(cfg.controlPlaneEndpoint) : undefined;
  const hosts = [...new Set(['127.0.0.1', 'localhost', hostname(), cfg.listenHost, advertise, ...(endpoint ? [endpoint.host] : []), 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', (cfg.serviceRange ?? ServiceRange.parse(DEFAULT_SERVICE_CLUSTER_IP_RANGE)).kubernetesIp])].filter(
    (h) => h && h !== '0.0.0.0' && h !== '::',
  );
  const pki = await ensureClusterPki(cfg.dataDir, hosts, shared);

  const audit = cfg.audit ? await openAudit(cfg.audit, log) : undefined;
  const api = new ApiServer({
    store,
    log,
    host: cfg.listenHost,
    port: cfg.port,
    tls: { certPem: pki.server.certPem, keyPem: pki.server.keyPem, caPem: pki.ca.certPem },
    ca: pki.ca,
    kubeletClient: pki.kubeletClient,
    frontProxy: { caPem: pki.frontProxyCa.certPem, client: pki.frontProxyClient },
    serviceAccountKeyPem: pki.serviceAccountKeyPem,
    ...(cfg.token ? { bootstrapTokens: [cfg.token] } : {}),
    ...(cfg.tokenAuthFile ? { tokenAuthenticators: [StaticTokens.fromFile(cfg.tokenAuthFile, (m) => log.warn(m))] } : {}),
    advertiseAddress: `${advertise}:${cfg.port}`,
    watchCacheSize: cfg.watchCacheSize,
    minRequestTimeoutSeconds: cfg.minRequestTimeoutSeconds,
    ...(cfg.flowControl ? { flowControl: cfg.flowControl } : {}),
    ...(cfg.eventTtlSeconds !== undefined ? { eventTtlSeconds: cfg.eventTtlSeconds } : {}),
    ...(cfg.metricResolutionMs !== undefined ? { metricResolutionMs: cfg.metricResolutionMs } : {}),
    ...(cfg.serviceRange ? { serviceRange: cfg.serviceRange } : {}),
    ...(audit ? { audit } : {}),
    admission: {
      defaultNotReadyTolerationSeconds: cfg.defaultNotReadyTolerationSeconds,
      defaultUnreachableTolerationSeconds: cfg.defaultUnreachableTolerationSeconds,
      ...(cfg.admissionControlConfigFile ? readAdmissionConfigFile(cfg.admissionControlConfigFile) : {}),
    },
  });
  const port = await api.start();

  const serverUrl = endpoint ? `https://${endpoint.host}:${endpoint.port ?? port}` : `https://${advertise.includes(':') ? `[${advertise}]` : advertise}:${port}`;
  const kubeconfigPath = join(cfg.dataDir, 'kubeconfig');
  writeFileAtomic(
    kubeconfigPath,
    renderKubeconfig({ clusterName: 'skiff', server: serverUrl, caPem: pki.ca.certPem, user: 'admin', clientCertPem: pki.admin.certPem, clientKeyPem: pki.admin.keyPem }),
  );
  log.info({ kubeconfig: kubeconfigPath, server: serverUrl }, 'admin kubeconfig written');


  // Controllers write to their own server over loopback HTTPS, exactly as they would to another
  // member; their informers read this server's watch caches directly.
  const loopbackHost = cfg.listenHost === '0.0.0.0' ? '127.0.0.1' : cfg.listenHost === '::' ? '::1' : cfg.listenHost;
  const controllerClient = new ApiClient({
    servers: [`https://${loopbackHost.includes(':') ? `[${loopbackHost}]` : loopbackHost}:${port}`],
    caPem: pki.ca.certPem,
    clientCertPem: pki.admin.certPem,
    clientKeyPem: pki.admin.keyPem,
    timeoutMs: 30_000,
    userAgent: userAgent('skiff-controller-manager'),
    metrics: api.metrics.client,
  });
  await ensureLocalPathStorageClass(controllerClient, log);
  const cloud = cfg.cloud ? new LocalCloudProvider(cfg.cloud.endpoint) : undefined;
  const manager = new ControllerManager(controllerClient, allControllers(cloud, cfg.autoscaler, cfg.nodeIpam, cfg.controllerSelection), systemClock, log, { ...cfg.controllers, rootCaPem: pki.ca.certPem, serviceAccountKeyPem: pki.serviceAccountKeyPem, clusterSigningCa: pki.ca }, cfg.leaderElection, api.localReads, api.metrics.client);
  const stopControllers = new AbortController();
  const managerDone = manager.run(stopControllers.signal);
  const endpoints = new EndpointReconciler({ client: controllerClient, clock: systemClock, log, host: advertise, port, controllerIdentity: manager.identity });
  const endpointsDone = endpoints.run(stopControllers.signal);
  // kube-dns before this machine's own node starts, so its first pods already get the cluster's resolver.
  const kubeDnsDone = ensureKubeDnsService({ client: controllerClient, range: cfg.serviceRange ?? ServiceRange.parse(DEFAULT_SERVICE_CLUSTER_IP_RANGE), clock: systemClock, log, signal: stopControllers.signal });
  await Promise.race([kubeDnsDone, systemClock.sleep(5000)]);
  const ownUrl = `https://${loopbackHost.includes(':') ? `[${loopbackHost}]` : loopbackHost}:${port}`;
  const node = cfg.agent
    ? await startControlPlaneNode({
        dataDir: cfg.dataDir,
        node: { ...cfg.agent, nodeName: cfg.agent.nodeName ?? hostname() },
        ca: pki.ca,
        serverUrl: ownUrl,
        log: log.child({ component: 'agent' }),
        markControlPlane: async (name) => void (await controllerClient.patch(`/api/v1/nodes/${name}`, { metadata: { labels: { [CONTROL_PLANE_ROLE]: '' } } }, 'merge')),
      })
    : undefined;

  return {
    api,
    store,
    port,
    kubeconfigPath,
    manager,
    async stop(opts = {}) {
      // The node first: it drains and removes itself through this member while it still serves.
      await (opts.inPlace ? node?.restartInPlace() : opts.clusterStopping ? node?.powerOff() : node?.stop('server stopping'));
      stopControllers.abort();
      await Promise.all([managerDone.catch(() => {}), endpointsDone.catch(() => {}), kubeDnsDone.catch(() => {})]);
      await endpoints.removeSelf();
      controllerClient.close();
      await api.stop();
      await store.close();
      lock.release();
    },
  };
}

/** The audit policy, already read and checked, and where its events are written. */
export interface AuditConfig {
  policy: Policy;
  log: Omit<AuditLogOptions, 'log'>;
}

/** Opens the audit log now, so a path that cannot be written stops the start rather than losing events. */
async function openAudit(cfg: AuditConfig, log: Logger): Promise<{ policy: PolicyChecker; sink: AuditLogBackend }> {
  const sink = new AuditLogBackend({ ...cfg.log, log });
  await sink.open();
  log.info({ path: cfg.log.path, rules: cfg.policy.rules.length }, 'audit log enabled');
  return { policy: new PolicyChecker(cfg.policy), sink };
}

export function readKubeconfigFile(path: string): string {
  return readFileSync(path, 'utf8');
}
