// Runs the controllers of one `skiff server` while it holds the controller-manager Lease, so
// several servers can run them safely: only the leader acts, and a new leader starts fresh.
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { ApiClient } from '../client/rest.js';
import type { ListWatchSource } from '../client/informer.js';
import { LeaderElector } from '../client/leader-election.js';
import type { ClientMetrics } from '../client/metrics.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { EventRecorder } from './events.js';
import { SharedInformers } from './informers.js';

export interface ControllerOptions {
  nodeMonitorPeriodMs: number;
  nodeMonitorGracePeriodMs: number;
  nodeStartupGracePeriodMs: number;
  podGcOrphanQuarantineMs: number;
  /** How often pod GC makes its pass (upstream's fixed gcCheckPeriod, 20 s; scenarios compress it). */
  podGcPeriodMs?: number;
  nodeGcTimeoutMs: number;
  terminatedPodGcThreshold: number;
  largeClusterSizeThreshold: number;
  unhealthyZoneThreshold: number;
  nodeEvictionRate: number;
  secondaryNodeEvictionRate: number;
  /** The cluster CA certificate, published to every namespace as ConfigMap kube-root-ca.crt. */
  rootCaPem?: string;
  /** The key that signs service-account tokens, for the tokens of legacy token Secrets. */
  serviceAccountKeyPem?: string;
  /** --horizontal-pod-autoscaler-sync-period (15 s when unset), and the rest of the HPA controller's flags. */
  hpaSyncPeriodMs?: number;
  hpaDownscaleStabilizationMs?: number;
  hpaTolerance?: number;
  hpaCpuInitializationPeriodMs?: number;
  hpaInitialReadinessDelayMs?: number;
  /** The CA the built-in CertificateSigningRequest signers issue from (--cluster-signing-*: the cluster CA). */
  clusterSigningCa?: { certPem: string; keyPem: string };
  /** The longest certificate they issue (--cluster-signing-duration; upstream's default, a year). */
  clusterSigningDurationMs?: number;
}

export const DEFAULT_CONTROLLER_OPTIONS: ControllerOptions = {
  nodeMonitorPeriodMs: 5_000,
  nodeMonitorGracePeriodMs: 50_000,
  nodeStartupGracePeriodMs: 60_000,
  podGcOrphanQuarantineMs: 40_000,
  nodeGcTimeoutMs: 3_600_000,
  terminatedPodGcThreshold: 12_500,
  largeClusterSizeThreshold: 50,
  unhealthyZoneThreshold: 0.55,
  nodeEvictionRate: 0.1,
  secondaryNodeEvictionRate: 0.01,
};

export interface ControllerContext {
  client: ApiClient;
  informers: SharedInformers;
  clock: Clock;
  log: Logger;
  options: ControllerOptions;
  /** An event recorder reporting as `component` (e.g. "node-controller", "default-scheduler"). */
  recorder(component: string): EventRecorder;
  /** Where work queues report (workqueue_*); none in tests. */
  metrics?: ClientMetrics;
}

/**
 * A context for one leadership term (or one test run): fresh informers, one event recorder per
 * component. `host` goes into recorded Events' source. Informers read from `reads` (by default
 * the API, through `client`); writes always go through `client`.
 */
export function controllerContext(
  client: ApiClient,
  clock: Clock,
  log: Logger,
  options: ControllerOptions,
  host?: string,
  reads: ListWatchSource = client,
  metrics?: ClientMetrics,
): ControllerContext {
  const recorders = new Map<string, EventRecorder>();
  return {
    ...(metrics ? { metrics } : {}),
    client,
    informers: new SharedInformers(reads, clock, log),
    clock,
    log,
    options,
    recorder(component) {
      let r = recorders.get(component);
      if (!r) recorders.set(component, (r = new EventRecorder(client, host ? { component, host } : { component }, clock, log)));
      return r;
    },
  };
}

export interface Controller {
  readonly name: string;
  /** Registers informer handlers and starts its loops; everything stops when signal aborts. */
  start(ctx: ControllerContext, signal: AbortSignal): void;
}

export interface LeaderElectionTimings {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/** The kube-system Lease whose holder runs the controllers and the scheduler. */
const CONTROLLER_LEASE = 'skiff-controller-manager';

export class ControllerManager {
  readonly identity = `${hostname()}_${randomUUID()}`;
  private elector?: LeaderElector;

  constructor(
    private readonly client: ApiClient,
    private readonly controllers: Controller[],
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: ControllerOptions,
    private readonly election: LeaderElectionTimings,
    /** Where informers list and watch: the server's own caches when it runs the controllers. */
    private readonly reads: ListWatchSource = client,
    /** Work queues and leader election report here (the server's /metrics). */
    private readonly metrics?: ClientMetrics,
  ) {}

  get isLeader(): boolean {
    return this.elector?.isLeader ?? false;
  }

  run(signal: AbortSignal): Promise<void> {
    this.metrics?.leading(CONTROLLER_LEASE, false);
    this.elector = new LeaderElector({
      client: this.client,
      namespace: 'kube-system',
      name: CONTROLLER_LEASE,
      identity: this.identity,
      ...this.election,
      clock: this.clock,
      log: this.log,
      onStartedLeading: (leading) => this.startControllers(leading),
      onNewLeader: (id) => id !== this.identity && this.log.info({ leader: id }, 'another server leads the controllers'),
    });
    return this.elector.run(signal);
  }

  private startControllers(signal: AbortSignal): void {
    // Every in-flight request of every controller listens on this one signal.
    setMaxListeners(0, signal);
    this.metrics?.leading(CONTROLLER_LEASE, true);
    signal.addEventListener('abort', () => this.metrics?.leading(CONTROLLER_LEASE, false), { once: true });
    // Fresh caches per term: a new leader must not act on what an old term saw.
    const ctx = controllerContext(this.client, this.clock, this.log, this.options, hostname(), this.reads, this.metrics);
    for (const c of this.controllers) {
      c.start(ctx, signal);
      this.log.info({ controller: c.name }, 'controller started');
    }
    ctx.informers.start(signal);
  }
}
