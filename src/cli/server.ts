// `skiff server`: API server (and, later, controllers and scheduler) in one process.
import { SubnetRange } from '../controllers/node-ipam.js';
import { validateControllerSelection } from '../controllers/index.js';
import { DEFAULT_SERVICE_CLUSTER_IP_RANGE, DEFAULT_SERVICE_NODE_PORT_RANGE, ServiceRange } from '../api/service-range.js';
import { Command, InvalidArgumentError, Option } from 'commander';
import { closeSync, openSync } from 'node:fs';
import { AUTOSCALER_DEFAULTS, parseNodesFlag, type AutoscalerGroup, type AutoscalerOptions } from '../cloud/autoscaler/autoscaler.js';
import { EXPANDERS, type Expander } from '../cloud/autoscaler/plan.js';
import { createLogger, defaultLogFormat, type LogFormat } from '../util/log.js';
import { runServer } from '../server/run-server.js';
import { addConfigFile, dataDirErrorMessage, listenErrorMessage, logFormatOption, durationOption, hostPortArg, intArg, listArg, boolArg } from './options.js';
import { nodeConfigFrom, nodeOptions } from './node-options.js';
import { EXIT_RESTART } from './exit-codes.js';
import { CLUSTER_STOP_SIGNAL, LEAVE_SIGNALS, RESTART_IN_PLACE_SIGNAL } from '../util/stop-signals.js';
import { AuditPolicyError, loadPolicyFile } from '../apiserver/audit/policy.js';
import { AUDIT_LOG_FORMATS, type AuditLogFormat } from '../apiserver/audit/log-backend.js';
import type { AuditConfig } from '../server/run-server.js';

export function serverCommand(): Command {
  const cmd = new Command('server')
    .description('run an API server on an embedded SQLite store (or etcd)')
    .option('--data-dir <dir>', 'where the database, certificates and kubeconfig live', '.skiff')
    .option('--listen <host:port>', 'address to serve HTTPS on', hostPortArg, { host: '127.0.0.1', port: 6443 })
    .option('--advertise-address <ip>', 'address clients and agents reach this server at')
    .option('--storage <kind>', 'sqlite or etcd', 'sqlite')
    .option('--etcd-endpoints <urls>', 'etcd client URLs, comma-separated', listArg, [])
    .option('--control-plane-endpoint <host:port>', 'shared endpoint (load balancer) put into certificates and kubeconfigs')
    .option('--convert', "with --storage etcd: first move this data directory's SQLite store into etcd (which must be empty), every object kept with its uid; once done the SQLite file is kept as db/state.db.pre-etcd and the flag does nothing", false)
    .addOption(new Option('--token <token>', 'a bootstrap token (abcdef.0123456789abcdef) agents may join with').env('SKIFF_TOKEN'))
    .option('--token-auth-file <file>', 'static bearer tokens, one "token,user,uid[,\"group1,group2\"]" line each, as kube-apiserver reads them')
    .addOption(durationOption('--compact-interval <duration>', 'how often old store history is compacted', 300_000))
    .option('--compact-min-retain <revisions>', 'revisions of history always kept', intArg, 1000)
    .option('--admission-control-config-file <file>', "admission plugins' configuration (an AdmissionConfiguration; skiff reads PodSecurity's defaults and exemptions from it)")
    .option('--default-not-ready-toleration-seconds <n>', 'toleration added to pods for the not-ready taint', intArg, 300)
    .option('--default-unreachable-toleration-seconds <n>', 'toleration added to pods for the unreachable taint', intArg, 300)
    .option('--watch-cache-size <events>', 'at most this many events each resource keeps for resuming watches (and no more than 32 MiB of stored objects, none older than 5 minutes beyond the last 100)', intArg, 10_000)
    .option('--min-request-timeout <seconds>', 'watches without timeoutSeconds last between this and twice this', intArg, 1800)
    .addOption(durationOption('--event-ttl <duration>', 'how long Events are kept after their last update; the store deletes them then (0: for good)', 3_600_000))
    .addOption(durationOption('--metric-resolution <duration>', "how often every node's resource metrics are scraped for metrics.k8s.io (kubectl top, autoscalers), as metrics-server's flag of the name", 15_000))
    .option('--enable-priority-and-fairness <bool>', 'API Priority and Fairness: requests sorted by FlowSchemas into priority levels, each with its share of the limits below and fair queues (false: the plain limits, 429 at once)', boolArg, true)
    .option('--max-requests-inflight <n>', 'requests (reads, with Priority and Fairness all requests with the next) answered at once; 0: no limit', intArg, 400)
    .option('--max-mutating-requests-inflight <n>', 'writes answered at once; 0: no limit', intArg, 200)
    .option('--audit-policy-file <file>', 'the audit policy (an audit.k8s.io/v1 Policy, as kube-apiserver reads it): which requests are logged, at which level')
    .option('--audit-log-path <file>', "where audit events go, one JSON object a line ('-': standard output); nothing is logged without --audit-policy-file")
    .option('--audit-log-maxage <days>', 'days an audit log backup is kept, by the time in its name (0: no limit)', intArg, 0)
    .option('--audit-log-maxbackup <n>', 'audit log backups kept (0: all)', intArg, 0)
    .option('--audit-log-maxsize <megabytes>', 'size at which the audit log is rotated (0: 100)', intArg, 0)
    .addOption(new Option('--audit-log-format <format>', 'json: an audit.k8s.io/v1 Event a line; legacy: one line of text an event').choices([...AUDIT_LOG_FORMATS]).default('json'))
    .addOption(durationOption('--leader-elect-lease-duration <duration>', 'how long a controller-manager lease is valid', 15_000))
    .addOption(durationOption('--leader-elect-renew-deadline <duration>', 'how long the leader keeps trying to renew before stepping down', 10_000))
    .addOption(durationOption('--leader-elect-retry-period <duration>', 'how often candidates try to acquire and leaders renew', 2_000))
    .addOption(durationOption('--node-monitor-period <duration>', 'how often node health is checked', 5_000))
    .addOption(durationOption('--node-monitor-grace-period <duration>', 'lease age after which a node is Unknown (NotReady)', 50_000))
    .addOption(durationOption('--node-startup-grace-period <duration>', 'grace for a node that has never reported Ready', 60_000))
    .addOption(durationOption('--pod-gc-period <duration>', "how often pod GC looks for pods of missing nodes (upstream's gcCheckPeriod, fixed there at 20s)", 20_000))
    .addOption(durationOption('--pod-gc-orphan-quarantine <duration>', 'how long a pod of a missing node waits before deletion', 40_000))
    .addOption(durationOption('--node-gc-timeout <duration>', 'lost contact after which a Node object is deleted', 3_600_000))
    .addOption(durationOption('--horizontal-pod-autoscaler-sync-period <duration>', 'how often each HorizontalPodAutoscaler looks at its metrics and target', 15_000))
    .addOption(durationOption('--horizontal-pod-autoscaler-downscale-stabilization <duration>', 'how far back an HPA looks for a higher recommendation before scaling down (when its behavior sets no window)', 300_000))
    .option('--horizontal-pod-autoscaler-tolerance <fraction>', 'how far the usage ratio may stray from 1.0 before an HPA scales', Number, 0.1)
    .addOption(durationOption('--horizontal-pod-autoscaler-cpu-initialization-period <duration>', 'after a pod starts, how long its CPU samples are trusted only once it has been ready a whole metrics window', 300_000))
    .addOption(durationOption('--horizontal-pod-autoscaler-initial-readiness-delay <duration>', 'after a pod starts, how long readiness changes count as its first readiness', 30_000))
    .option('--terminated-pod-gc-threshold <n>', 'terminated pods kept before the oldest are deleted (0: off)', intArg, 12_500)
    .option('--large-cluster-size-threshold <n>', 'zone size above which eviction slows in partial disruption', intArg, 50)
    .option('--unhealthy-zone-threshold <fraction>', 'fraction of not-ready nodes that makes a zone unhealthy', Number, 0.55)
    .option('--node-eviction-rate <perSecond>', 'nodes per second whose pods may be evicted in a healthy zone', Number, 0.1)
    .option('--secondary-node-eviction-rate <perSecond>', 'the same in a partially disrupted large zone', Number, 0.01)
    .addOption(durationOption('--cluster-signing-duration <duration>', 'the longest validity of a certificate the built-in CertificateSigningRequest signers issue (a request may ask for less with spec.expirationSeconds)', 365 * 86_400_000))
    .option('--allocate-node-cidrs <bool>', 'give every Node a pod CIDR from --cluster-cidr (spec.podCIDR), which its agent hands to the container runtime', boolArg, false)
    .option('--cluster-cidr <cidr>', 'the pods\' address range, split into one CIDR per node', '10.42.0.0/16')
    .option('--service-cluster-ip-range <cidr>', 'the Services\' address range: ClusterIPs come from it, its first address is the kubernetes Service\'s (IPv4 at most /12, IPv6 at most /108)', DEFAULT_SERVICE_CLUSTER_IP_RANGE)
    .option('--service-node-port-range <ports>', 'the ports NodePort and LoadBalancer Services are reachable on, on every node (first-last, both included)', DEFAULT_SERVICE_NODE_PORT_RANGE)
    .option('--controllers <names>', 'controllers to run: * for all, a name to enable one, -name to disable one (e.g. *,-resourcequota-controller); names as kube-controller-manager spells them, the scheduler as scheduler', listArg, ['*'])
    .option('--node-cidr-mask-size <bits>', 'the size of each node\'s pod CIDR', intArg, 24)
    .addOption(new Option('--cloud-provider <name>', 'the cloud the machines run in: its controllers initialise Nodes and remove those whose instance is gone').choices(['local']))
    .option('--cloud-endpoint <url>', 'the cloud API (for local: the URL `skiff cloud serve` listens on)')
    .option('--nodes <min:max:group>', 'a node group the cluster autoscaler manages, with its size bounds (repeatable; needs --cloud-provider)', (v: string, p: AutoscalerGroup[]) => [...p, parseNodesArg(v)], [] as AutoscalerGroup[])
    .addOption(durationOption('--scan-interval <duration>', 'autoscaler: how often the cluster is looked at', AUTOSCALER_DEFAULTS.scanIntervalMs))
    .addOption(new Option('--expander <name>', 'autoscaler: which node group grows').choices([...EXPANDERS]).default(AUTOSCALER_DEFAULTS.expander))
    .addOption(durationOption('--scale-down-unneeded-time <duration>', 'autoscaler: how long a node is unneeded before it goes', AUTOSCALER_DEFAULTS.scaleDownUnneededMs))
    .addOption(durationOption('--scale-down-delay-after-add <duration>', 'autoscaler: no scale-down this long after a scale-up', AUTOSCALER_DEFAULTS.scaleDownDelayAfterAddMs))
    .option('--scale-down-utilization-threshold <fraction>', 'autoscaler: below this share of cpu and memory requested a node may go', Number, AUTOSCALER_DEFAULTS.scaleDownUtilizationThreshold)
    .addOption(durationOption('--max-node-provision-time <duration>', 'autoscaler: an instance without a Node this long is replaced', AUTOSCALER_DEFAULTS.maxNodeProvisionMs))
    .option('--max-graceful-termination-sec <n>', 'autoscaler: how long draining a node may take', intArg, AUTOSCALER_DEFAULTS.maxGracefulTerminationSec)
    .addOption(durationOption('--initial-node-group-backoff-duration <duration>', 'autoscaler: back-off of a group whose new instance never registered (doubles)', AUTOSCALER_DEFAULTS.initialBackoffMs))
    .addOption(durationOption('--max-node-group-backoff-duration <duration>', 'autoscaler: the longest back-off', AUTOSCALER_DEFAULTS.maxBackoffMs))
    .option('--max-total-unready-percentage <pct>', 'autoscaler: with more of the nodes unready than this (and than --ok-total-unready-count), it holds back', Number, AUTOSCALER_DEFAULTS.maxTotalUnreadyPercentage)
    .option('--skip-nodes-with-local-storage <bool>', 'autoscaler: keep nodes running pods with emptyDir or hostPath volumes (their data would be lost)', boolArg, AUTOSCALER_DEFAULTS.skipNodesWithLocalStorage)
    .option('--force-delete-unregistered-nodes <bool>', 'autoscaler: replace an instance that has no Node past the provision time even below its group\'s minimum (upstream: false, which leaves it running unseen)', boolArg, AUTOSCALER_DEFAULTS.forceDeleteUnregisteredNodes)
    .option('--ok-total-unready-count <n>', 'autoscaler: this many unready nodes never hold it back', intArg, AUTOSCALER_DEFAULTS.okTotalUnreadyCount)
    .option('--with-agent', "also register this machine as a control-plane Node (label node-role.kubernetes.io/control-plane, NoSchedule taint); its state goes to <data-dir>/agent", false);
  // The node's flags, as `skiff agent` takes them.
  // A member's own node is not a cloud instance: the server's --cloud-provider names the cloud it reconciles with.
  for (const opt of nodeOptions()) if (opt.long !== '--cloud-provider' && opt.long !== '--provider-id') cmd.addOption(opt.helpGroup('Node options (with --with-agent):'));
  cmd.addOption(logFormatOption());
  addConfigFile(cmd);
  cmd.action(async (o: Record<string, unknown>) => {
    const log = createLogger('skiff-server', (o.logFormat as LogFormat | undefined) ?? defaultLogFormat());
    const listen = o.listen as { host: string; port: number };
    if (o.allocateNodeCidrs) {
      try {
        new SubnetRange(o.clusterCidr as string, o.nodeCidrMaskSize as number);
      } catch (e) {
        console.error(`skiff server: --cluster-cidr/--node-cidr-mask-size: ${(e as Error).message}`);
        process.exit(2);
      }
    }
    const audit = auditConfig(o);
    if (typeof audit === 'string') {
      console.error(`skiff server: ${audit}`);
      process.exit(2);
    }
    let serviceRange: ServiceRange;
    try {
      serviceRange = ServiceRange.parse(o.serviceClusterIpRange as string, o.serviceNodePortRange as string);
      validateControllerSelection(o.controllers as string[]);
    } catch (e) {
      console.error(`skiff server: ${(e as Error).message}`);
      process.exit(2);
    }
    // Signals are handled from the start: one that comes while the server (and its own node) is
    // starting waits for the start, then stops gracefully, instead of killing the process midway.
    let starting: Promise<Awaited<ReturnType<typeof runServer>>> | undefined;
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      const inPlace = signal === RESTART_IN_PLACE_SIGNAL;
      const clusterStopping = signal === CLUSTER_STOP_SIGNAL;
      log.info({ signal }, inPlace ? 'restarting in place (the next server takes over this member and its node)' : clusterStopping ? 'shutting down with the whole cluster (its node and pods kept)' : 'shutting down');
      void (starting ?? Promise.reject(new Error('not started')))
        .then((running) => running.stop({ inPlace, clusterStopping }))
        .then(
          () => process.exit(inPlace ? EXIT_RESTART : 0),
          (e: unknown) => {
            log.error({ err: String(e) }, 'shutdown failed');
            process.exit(1);
          },
        );
    };
    for (const sig of [...LEAVE_SIGNALS, RESTART_IN_PLACE_SIGNAL, CLUSTER_STOP_SIGNAL]) process.on(sig, () => stop(sig));
    try {
      starting = runServer(
        {
          dataDir: o.dataDir as string,
          listenHost: listen.host,
          port: listen.port,
          ...(o.advertiseAddress ? { advertiseAddress: o.advertiseAddress as string } : {}),
          ...(o.controlPlaneEndpoint ? { controlPlaneEndpoint: o.controlPlaneEndpoint as string } : {}),
          storage: o.storage === 'etcd' ? 'etcd' : 'sqlite',
          etcdEndpoints: o.etcdEndpoints as string[],
          ...(o.convert ? { convertFromSqlite: true } : {}),
          compactIntervalMs: o.compactInterval as number,
          compactMinRetain: o.compactMinRetain as number,
          defaultNotReadyTolerationSeconds: o.defaultNotReadyTolerationSeconds as number,
          defaultUnreachableTolerationSeconds: o.defaultUnreachableTolerationSeconds as number,
          watchCacheSize: o.watchCacheSize as number,
          minRequestTimeoutSeconds: o.minRequestTimeoutSeconds as number,
          eventTtlSeconds: Math.ceil((o.eventTtl as number) / 1000),
          metricResolutionMs: o.metricResolution as number,
          flowControl: {
            enablePriorityAndFairness: o.enablePriorityAndFairness as boolean,
            maxRequestsInflight: o.maxRequestsInflight as number,
            maxMutatingRequestsInflight: o.maxMutatingRequestsInflight as number,
          },
          ...(o.token ? { token: o.token as string } : {}),
          ...(o.tokenAuthFile ? { tokenAuthFile: o.tokenAuthFile as string } : {}),
          ...(o.admissionControlConfigFile ? { admissionControlConfigFile: o.admissionControlConfigFile as string } : {}),
          ...(audit ? { audit } : {}),
          serviceRange,
          controllerSelection: o.controllers as string[],
          controllers: {
            nodeMonitorPeriodMs: o.nodeMonitorPeriod as number,
            nodeMonitorGracePeriodMs: o.nodeMonitorGracePeriod as number,
            nodeStartupGracePeriodMs: o.nodeStartupGracePeriod as number,
            podGcOrphanQuarantineMs: o.podGcOrphanQuarantine as number,
            podGcPeriodMs: o.podGcPeriod as number,
            nodeGcTimeoutMs: o.nodeGcTimeout as number,
            terminatedPodGcThreshold: o.terminatedPodGcThreshold as number,
            largeClusterSizeThreshold: o.largeClusterSizeThreshold as number,
            unhealthyZoneThreshold: o.unhealthyZoneThreshold as number,
            nodeEvictionRate: o.nodeEvictionRate as number,
            secondaryNodeEvictionRate: o.secondaryNodeEvictionRate as number,
            hpaSyncPeriodMs: o.horizontalPodAutoscalerSyncPeriod as number,
            hpaDownscaleStabilizationMs: o.horizontalPodAutoscalerDownscaleStabilization as number,
            hpaTolerance: o.horizontalPodAutoscalerTolerance as number,
            hpaCpuInitializationPeriodMs: o.horizontalPodAutoscalerCpuInitializationPeriod as number,
            hpaInitialReadinessDelayMs: o.horizontalPodAutoscalerInitialReadinessDelay as number,
            clusterSigningDurationMs: o.clusterSigningDuration as number,
          },
          ...(o.allocateNodeCidrs ? { nodeIpam: { clusterCIDR: o.clusterCidr as string, nodeCidrMaskSize: o.nodeCidrMaskSize as number } } : {}),
          ...(o.withAgent ? { agent: nodeConfigFrom(o) } : {}),
          ...(o.cloudProvider ? { cloud: { provider: 'local' as const, endpoint: cloudEndpoint(o.cloudEndpoint) } } : {}),
          ...((o.nodes as AutoscalerGroup[]).length > 0 ? { autoscaler: autoscalerOptions(o) } : {}),
          leaderElection: {
            leaseDurationMs: o.leaderElectLeaseDuration as number,
            renewDeadlineMs: o.leaderElectRenewDeadline as number,
            retryPeriodMs: o.leaderElectRetryPeriod as number,
          },
        },
        log,
      );
      await starting;
    } catch (e) {
      const dataDirError = dataDirErrorMessage(e, o.dataDir as string);
      const listenError = dataDirError ? undefined : listenErrorMessage(e, 'the API server', 'choose another with --listen HOST:PORT');
      if (!listenError && !dataDirError) throw e;
      log.error({ err: listenError ?? dataDirError }, dataDirError ? 'cannot write the data directory' : 'cannot listen');
      console.error(`skiff server: ${listenError ?? dataDirError}`);
      process.exit(1);
    }
  });
  return cmd;
}

/**
 * The audit flags, the policy read and checked now so a bad one stops the start with one line
 * (a string: that line). As upstream: without both a policy and a log path nothing is logged.
 */
function auditConfig(o: Record<string, unknown>): AuditConfig | string | undefined {
  const file = o.auditPolicyFile as string | undefined;
  const path = o.auditLogPath as string | undefined;
  if (!file) return undefined;
  let policy;
  try {
    policy = loadPolicyFile(file);
  } catch (e) {
    if (e instanceof AuditPolicyError) return `--audit-policy-file ${file}: ${e.message}`;
    throw e;
  }
  if (!path) return undefined;
  if (path !== '-') {
    // Opened as the log will be (appending, created if missing): a directory, a missing parent or
    // a file this process may not write stops the start here, in one line.
    try {
      closeSync(openSync(path, 'a', 0o600));
    } catch (e) {
      return `--audit-log-path ${path}: cannot write there (${(e as NodeJS.ErrnoException).code ?? String(e)})`;
    }
  }
  return { policy, log: { path, format: o.auditLogFormat as AuditLogFormat, maxAgeDays: o.auditLogMaxage as number, maxBackups: o.auditLogMaxbackup as number, maxSizeMB: o.auditLogMaxsize as number } };
}

/** --cloud-endpoint, required with --cloud-provider: where the cloud API is. */
function cloudEndpoint(v: unknown): string {
  if (typeof v !== 'string' || !/^https?:\/\/[^/]+/.test(v)) throw new Error('--cloud-provider needs --cloud-endpoint URL (http://HOST:PORT of `skiff cloud serve`)');
  return v;
}

function parseNodesArg(v: string): AutoscalerGroup {
  try {
    return parseNodesFlag(v);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
}

function autoscalerOptions(o: Record<string, unknown>): AutoscalerOptions {
  if (!o.cloudProvider) throw new Error('--nodes needs --cloud-provider: the autoscaler grows and shrinks node groups of a cloud');
  return {
    groups: o.nodes as AutoscalerGroup[],
    scanIntervalMs: o.scanInterval as number,
    expander: o.expander as Expander,
    scaleDownUnneededMs: o.scaleDownUnneededTime as number,
    scaleDownDelayAfterAddMs: o.scaleDownDelayAfterAdd as number,
    scaleDownUtilizationThreshold: o.scaleDownUtilizationThreshold as number,
    maxNodeProvisionMs: o.maxNodeProvisionTime as number,
    maxGracefulTerminationSec: o.maxGracefulTerminationSec as number,
    initialBackoffMs: o.initialNodeGroupBackoffDuration as number,
    maxBackoffMs: o.maxNodeGroupBackoffDuration as number,
    maxTotalUnreadyPercentage: o.maxTotalUnreadyPercentage as number,
    okTotalUnreadyCount: o.okTotalUnreadyCount as number,
    skipNodesWithLocalStorage: o.skipNodesWithLocalStorage as boolean,
    forceDeleteUnregisteredNodes: o.forceDeleteUnregisteredNodes as boolean,
  };
}
