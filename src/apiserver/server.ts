// The API server: HTTPS, authentication, discovery, health, metrics and the resource handler,
// over one Store with a watch cache per resource.
import { goArch } from '../util/go-arch.js';
import { errorText } from '../util/error-text.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isStorageVersion, storageSegment, type ResourceType } from '../api/resource.js';
import { apiVersionOf, type KubeObject } from '../api/types.js';
import { StatusError, forbidden, notFoundPath, internalError, isStatusError, methodNotAllowed, serviceUnavailable, timeout, unauthorized } from '../api/errors.js';
import { ResourceRegistry } from '../api/registry.js';
import { isStoreError, type Store } from '../store/store.js';
import { systemClock, type Clock, type Timer } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { StorageOutageLog } from './storage-outage.js';
import { Authenticator, MastersAuthorizer, NO_RULE, forbiddenMessage, isPublicPath, type Authorizer, type TokenAuthenticator } from './auth.js';
import { Discovery, SERVED_VERSION, type DiscoveredResource } from './discovery.js';
import { impersonatedUser } from './impersonation.js';
import { REVIEW_TYPES, answerReview, reviewType, reviewTypeFor } from './reviews.js';
import { decodeObjectBody, readBody, sendJson, sendStatus } from './http/codec.js';
import { authorizationScope, parseRequestInfo, type RequestInfo } from './http/request-info.js';
import { ApiListener, clientGone } from './http/listener.js';
import { ApiMetrics, CONNECT_SUBRESOURCES } from './metrics.js';
import { metricsText } from '../client/metrics.js';
import { ObjectStore, keyPrefix, type StorageHooks } from './object-store.js';
import { DeletedNodeLabels } from './admission/node-restriction.js';
import { ResourceHandler, type PodLogStreamer, type ResourceHandlerDeps } from './resource-handler.js';
import { LocalReads } from './local-reads.js';
import { WatchCache } from './watch-cache.js';
import { alwaysMatch } from './watch-cache.js';
import type { AdmissionChain } from './admission/plugin.js';
import { admissionPlugins, type AdmissionSettings } from './admission/plugins.js';
import { DEFAULT_SERVICE_CLUSTER_IP_RANGE, ServiceRange } from '../api/service-range.js';
import type { AdmissionWebhookDeps } from './admission/validating-webhook.js';
import { WebhookConfigurations } from './admission/webhook-rules.js';
import { WebhookClient } from './webhook/client.js';
import { ConversionWebhook } from './conversion-webhook.js';
import { FunctionConversion } from './version-conversion.js';
import type { ServiceEndpointObjects } from './webhook/service-endpoints.js';
import type { Service } from '../api/kinds/service.js';
import type { Endpoints } from '../api/kinds/endpoints.js';
import type { EndpointSlice } from '../api/kinds/endpointslice.js';
import { SERVICE_NAME_LABEL } from '../controllers/endpointslices.js';
import { ADMISSIONREGISTRATION_GROUP } from '../api/kinds/admission-webhook.js';
import type { UserInfo, WriteContext } from './request-context.js';
import type { CertificateAuthority } from '../pki/certificates.js';
import { NodeAuthorizer } from './node-authorizer.js';
import { ServiceAccountTokens, type TokenObjects } from '../auth/service-account-tokens.js';
import { createSigningKey } from '../pki/certificates.js';
import { RbacAuthorizer, type RbacObjects } from './rbac-authorizer.js';
import { BOOTSTRAP_CLUSTER_ROLES, BOOTSTRAP_CLUSTER_ROLE_BINDINGS, reconcileBootstrapObject } from './bootstrap-policy.js';
import { RBAC_GROUP, type Binding, type RoleLike } from '../api/kinds/rbac.js';
import { AgentProxy, agentEndpoint } from './agent-proxy.js';
import type { Pod } from '../api/kinds/pod.js';
import { RUNTIME_LABEL } from '../api/kinds/node.js';
import { MetricsApi, METRICS_GROUP, METRICS_TYPES, METRICS_VERSION, metricsTypeFor } from './metrics-api/metrics-api.js';
import { MetricsStorage } from './metrics-api/metrics-storage.js';
import { DEFAULT_METRIC_RESOLUTION_MS, NodeScraper } from './metrics-api/node-scraper.js';
import { BootstrapAuthorizer, CA_PATH, JOIN_PATH, serveJoin } from './join.js';
import { parseToken, tokenMatches, tokenSecret, tokenSecretName, TOKEN_NAMESPACE } from '../auth/bootstrap-token.js';
import { isNamespaceActive } from '../api/kinds/namespace.js';
import { deepClone } from '../api/kinds/json.js';
import { CRD_GROUP } from '../apiextensions/customresourcedefinition.js';
import { servedKinds } from '../apiextensions/served-kinds.js';
import { CustomResourceDefinitions } from './custom-resource-definitions.js';
import { FLOWCONTROL_GROUP, type FlowSchema, type PriorityLevelConfiguration } from '../api/kinds/flowcontrol.js';
import { SCHEDULING_GROUP, SYSTEM_PRIORITY_CLASSES } from '../api/kinds/priorityclass.js';
import { FLOW_SCHEMA_UID_HEADER, PRIORITY_LEVEL_UID_HEADER, PriorityAndFairness } from './flowcontrol/priority-and-fairness.js';
import { MaxInFlight } from './flowcontrol/max-in-flight.js';
import { MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS, SUGGESTED_FLOW_SCHEMAS, SUGGESTED_PRIORITY_LEVELS, reconcileApfObject } from './flowcontrol/bootstrap-config.js';
import type { Release } from './flowcontrol/queue-set.js';
import { danglingConditions } from './flowcontrol/flow-schema-status.js';
import { Aggregator } from './aggregator/aggregator.js';
import { createCertificateAuthority, issueCertificate, type IssuedCertificate } from '../pki/certificates.js';
import { FRONT_PROXY_CLIENT_NAME } from '../pki/cluster-pki.js';
import { APIREGISTRATION_GROUP } from '../api/kinds/apiservice.js';
import { Auditor, echoAuditId, type RequestAudit } from './audit/request-audit.js';
import type { PolicyChecker } from './audit/policy.js';
import type { AuditSink } from './audit/log-backend.js';

export interface ApiServerOptions {
  store: Store;
  log: Logger;
  clock?: Clock;
  host: string;
  port: number;
  tls: { certPem: string; keyPem: string; caPem: string };
  /** The cluster CA, for signing node credentials at join. */
  ca: CertificateAuthority;
  /** PKCS#8 PEM private key that signs service-account tokens (shared by every member). */
  serviceAccountKeyPem?: string;
  /** The front-proxy CA and its client certificate for calling extension API servers; made for the server's lifetime when unset. */
  frontProxy?: { caPem: string; client: IssuedCertificate };
  /** Client certificate presented to agents when fetching pod logs. */
  kubeletClient?: { certPem: string; keyPem: string };
  /** Bootstrap tokens to make valid at start (`skiff server --token`). */
  bootstrapTokens?: string[];
  authenticator?: Authenticator;
  /** Bearer tokens checked before bootstrap tokens (`--token-auth-file`). */
  tokenAuthenticators?: TokenAuthenticator[];
  authorizer?: Authorizer;
  /** Admission plugins' settings (upstream's flags and --admission-control-config-file). */
  admission?: AdmissionSettings;
  /** Where Services get their ClusterIPs (--service-cluster-ip-range); k3s' 10.43.0.0/16 when not given. */
  serviceRange?: ServiceRange;
  podLogs?: PodLogStreamer;
  watchBookmarkIntervalMs?: number;
  /** Events each resource's watch cache keeps for resuming watches. */
  watchCacheSize?: number;
  /** Watches without timeoutSeconds last between this and twice this (upstream --min-request-timeout). */
  minRequestTimeoutSeconds?: number;
  /** HTTP/2 connections without open streams are closed after this long (default 90 s, as upstream). */
  idleConnectionMs?: number;
  /** A TLS handshake, then a request's headers, must arrive within this (default 32 s, upstream's ReadHeaderTimeout). */
  readHeaderTimeoutMs?: number;
  /** The address clients should use (discovery's serverAddressByClientCIDRs). */
  advertiseAddress?: string;
  flowControl?: FlowControlOptions;
  /** How long an Event is kept after its last write (upstream --event-ttl); 0 or unset: for good. */
  eventTtlSeconds?: number;
  /** Audit logging (--audit-policy-file, --audit-log-path): the policy and where events go. */
  audit?: { policy: PolicyChecker; sink: AuditSink };
  /** How often every node's resource metrics are scraped for metrics.k8s.io (metrics-server's --metric-resolution, 15 s). */
  metricResolutionMs?: number;
}

/** How the server limits concurrent requests (upstream's flags of the same names). */
export interface FlowControlOptions {
  /** API Priority and Fairness (default); off: the plain in-flight limits below, 429 at once. */
  enablePriorityAndFairness?: boolean;
  /** Default 400. With Priority and Fairness the two limits are added and shared out by level. */
  maxRequestsInflight?: number;
  /** Default 200. */
  maxMutatingRequestsInflight?: number;
  /** Longest a request waits in its level's queue before a 429 (default 15 s). */
  maxQueueWaitMs?: number;
}

const INDEXED_FIELDS: Record<string, Record<string, (o: KubeObject) => string | undefined>> = {
  pods: { 'spec.nodeName': (o) => ((o.spec ?? {}) as { nodeName?: string }).nodeName || undefined },
};

const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/** The API server's own writes (default namespaces, tokens from flags). */
function SYSTEM_CONTEXT(): WriteContext {
  return { user: { name: 'system:apiserver', groups: ['system:masters'] }, fieldManager: 'skiff-apiserver', dryRun: false, fieldValidation: 'Ignore', warnings: [] };
}

export class ApiServer {
  readonly clock: Clock;
  /** The types this server serves, built-in and custom. */
  private readonly registry = new ResourceRegistry(servedKinds);
  readonly metrics = new ApiMetrics(() => this.storedObjects(), (group, version, resource, subresource) => this.isServed(group, version, resource, subresource), () => this.opts.store.dbSize());
  /** The store, with its requests timed for /metrics. */
  private readonly store: Store;
  private readonly stores = new Map<ResourceType, ObjectStore>();
  private readonly admission: AdmissionChain;
  readonly serviceRange: ServiceRange;
  private readonly storesByResource = new Map<string, ObjectStore>();
  private readonly discovery = new Discovery(discoveredTypes(servedKinds));
  private readonly handler: ResourceHandler;
  private readonly crds: CustomResourceDefinitions;
  /** Lists and watches for this process's own controllers, straight from the watch caches. */
  readonly localReads: LocalReads;
  private readonly authenticator: Authenticator;
  private readonly authorizer: Authorizer;
  /** Roles and bindings, also consulted on RBAC writes (the escalation check) and rules reviews. */
  private readonly rbac: RbacAuthorizer;
  private serviceAccountTokens?: ServiceAccountTokens;
  private listener?: ApiListener;
  private readonly log: Logger;
  private readonly storageOutage: StorageOutageLog;
  private stopping = false;
  private systemNamespacesTimer?: Timer;
  private flowSchemaStatusTimer?: Timer;
  private readonly deletedNodeLabels: DeletedNodeLabels;
  /** Limits requests in flight: Priority and Fairness by default. */
  private readonly flowControl: PriorityAndFairness | MaxInFlight;
  /** The aggregation layer: APIServices served by extension API servers (set up at start). */
  private aggregator?: Aggregator;
  /** Calls out to admission and conversion webhooks. */
  readonly webhooks: WebhookClient;
  private readonly auditor?: Auditor;
  /** metrics.k8s.io, served here as metrics-server serves it (metrics-api/), and the scraper that feeds it. */
  private readonly metricsApi: MetricsApi;
  private readonly metricsStorage = new MetricsStorage();
  private nodeScraper?: NodeScraper;
  private agentProxy?: AgentProxy;

  constructor(private readonly opts: ApiServerOptions) {
    this.clock = opts.clock ?? systemClock;
    this.log = opts.log;
    this.storageOutage = new StorageOutageLog(opts.log);
    this.store = this.metrics.instrument(opts.store, groupResourceOfKey);
    this.deletedNodeLabels = new DeletedNodeLabels(this.store);
    this.authenticator =
      opts.authenticator ??
      new Authenticator([...(opts.tokenAuthenticators ?? []), { authenticate: (t) => this.authenticateBootstrapToken(t) }, { authenticate: async (t) => this.serviceAccountTokens?.authenticate(t) }]);
    this.rbac = new RbacAuthorizer(this.rbacObjects(), new BootstrapAuthorizer());
    this.authorizer =
      opts.authorizer ??
      new MastersAuthorizer(
        new NodeAuthorizer(
          (ns, name) => this.storeByResource('', 'pods').cached(ns, name),
          (ns, name) => this.storeByResource('', 'pods').tryGet(ns, name),
          (node) => this.storeByResource('', 'pods').cache.list({ matches: () => true, indexed: { field: 'spec.nodeName', value: node } }, '/registry/pods/').items,
          this.rbac,
        ),
      );
    this.webhooks = new WebhookClient({ endpoints: this.serviceEndpointObjects(), clock: this.clock });
    if (opts.audit) this.auditor = new Auditor({ ...opts.audit, decodeObject: decodeObjectBody });
    this.serviceRange = opts.serviceRange ?? ServiceRange.parse(DEFAULT_SERVICE_CLUSTER_IP_RANGE);
    this.admission = this.admissionPlugins(opts);
    for (const rt of servedKinds) this.addStore(rt, true);
    this.handler = new ResourceHandler({
      clock: this.clock,
      typeFor: this.typeFor,
      storeFor: (rt) => this.stores.get(rt)!,
      storeByResource: (group, resource) => this.storeByResource(group, resource),
      indexedFields: (rt) => Object.keys(INDEXED_FIELDS[rt.resource] ?? {}),
      ...this.agentProxies(opts),
      watchBookmarkIntervalMs: opts.watchBookmarkIntervalMs ?? 60_000,
      minRequestTimeoutMs: (opts.minRequestTimeoutSeconds ?? 1800) * 1000,
      serviceAccountTokens: () => this.serviceAccountTokens,
    });
    this.metricsApi = new MetricsApi({
      now: () => this.clock.now(),
      storage: this.metricsStorage,
      resolutionMs: opts.metricResolutionMs ?? DEFAULT_METRIC_RESOLUTION_MS,
      nodes: () => this.storeByResource('', 'nodes').cache.objectsUnder('/registry/nodes/'),
      node: (name) => this.storeByResource('', 'nodes').cached(undefined, name),
      pods: (ns) => this.storeByResource('', 'pods').cache.objectsUnder(ns === undefined ? '/registry/pods/' : `/registry/pods/${ns}/`) as Pod[],
      pod: (ns, name) => this.storeByResource('', 'pods').cached(ns, name) as Pod | undefined,
      simulated: (node) => !agentEndpoint(node) && node.metadata.labels?.[RUNTIME_LABEL] === 'simulated',
    });
    this.flowControl = this.makeFlowControl(opts.flowControl ?? {});
    this.localReads = new LocalReads({ handler: this.handler, typeFor: this.typeFor, storeFor: (rt) => this.stores.get(rt)! });
    this.crds = new CustomResourceDefinitions({
      crds: this.storeByResource(CRD_GROUP, 'customresourcedefinitions'),
      serve: (name, types) => this.serveCustomTypes(name, types),
      storeFor: (rt) => this.stores.get(rt),
      storedCount: (prefix) => this.store.count(prefix),
      context: SYSTEM_CONTEXT,
      clock: this.clock,
      log: this.log,
    });
  }

  /** The type served at a path: registered, and stored by this server. */
  private readonly typeFor = (group: string, version: string, resource: string): ResourceType | undefined => {
    const rt = this.registry.typeFor(group, version, resource);
    return rt && this.stores.has(rt) ? rt : undefined;
  };

  private makeFlowControl(opts: FlowControlOptions): PriorityAndFairness | MaxInFlight {
    const reads = opts.maxRequestsInflight ?? 400;
    const writes = opts.maxMutatingRequestsInflight ?? 200;
    // Without limits at all there is nothing to share out: the plain filter, which then lets everything through.
    if (opts.enablePriorityAndFairness === false || reads + writes <= 0) return new MaxInFlight(reads, writes);
    const schemas = this.storeByResource(FLOWCONTROL_GROUP, 'flowschemas').cache;
    const levels = this.storeByResource(FLOWCONTROL_GROUP, 'prioritylevelconfigurations').cache;
    return new PriorityAndFairness({
      clock: this.clock,
      serverConcurrencyLimit: reads + writes,
      registry: this.metrics.registry,
      ...(opts.maxQueueWaitMs !== undefined ? { maxWaitMs: opts.maxQueueWaitMs } : {}),
      source: {
        flowSchemas: () => schemas.objectsUnder('/registry/flowschemas/') as FlowSchema[],
        priorityLevels: () => levels.objectsUnder('/registry/prioritylevelconfigurations/') as PriorityLevelConfiguration[],
        version: () => `${schemas.changeCount}/${levels.changeCount}`,
      },
    });
  }

  /**
   * Waits for the request's turn under flow control and gives back what ends it (undefined: not
   * limited). Streams that hold a connection (logs, exec, proxy) are not limited, as upstream's;
   * a watch holds its seat only until its handler has set it up.
   */
  private async admit(req: IncomingMessage, res: ServerResponse, user: UserInfo, info: RequestInfo, query: URLSearchParams): Promise<Release | undefined> {
    if (info.kind === 'resource' && info.subresource !== undefined && CONNECT_SUBRESOURCES.has(info.subresource)) return undefined;
    const fc = this.flowControl;
    if (fc instanceof MaxInFlight) return fc.enter(user, info);
    const c = fc.classify(user, info);
    if (c.flowSchema.metadata.uid) res.setHeader(FLOW_SCHEMA_UID_HEADER, c.flowSchema.metadata.uid);
    if (c.priorityLevel.metadata.uid) res.setHeader(PRIORITY_LEVEL_UID_HEADER, c.priorityLevel.metadata.uid);
    const gone = new AbortController();
    const onClose = (): void => gone.abort();
    res.once('close', onClose);
    // A client that left while it was authenticated does not wait in a queue for nobody.
    if (clientGone(req, res)) gone.abort();
    try {
      return await fc.admit(c, this.requestWidth(info, query), gone.signal);
    } finally {
      res.off('close', onClose);
    }
  }

  /** Seats a request takes: a list one per 100 objects it may return (at most 10), as upstream's work estimator charges. */
  private requestWidth(info: RequestInfo, query: URLSearchParams): number {
    if (info.kind !== 'resource' || info.verb !== 'list') return 1;
    const rt = this.typeFor(info.group, info.version, info.resource);
    let objects = rt ? (this.stores.get(rt)?.cache.size ?? 0) : 0;
    const limit = Number(query.get('limit'));
    if (limit > 0 && limit < objects) objects = limit;
    return Math.min(10, Math.max(1, Math.ceil(objects / 100)));
  }

  private addStore(rt: ResourceType, builtin: boolean): ObjectStore {
    const cache = new WatchCache({
      store: this.store,
      prefix: keyPrefix(rt),
      indexedFields: INDEXED_FIELDS[rt.resource] ?? {},
      // A type converted through a webhook keeps objects as stored; its store converts what it serves.
      ...(builtin || rt.conversionWebhook ? {} : { onDecode: customDecoder(rt) }),
      log: this.log,
      ...(this.opts.watchCacheSize ? { capacity: this.opts.watchCacheSize } : {}),
    });
    // Events expire (--event-ttl), as upstream's: a busy namespace's history does not grow without bound.
    const ttl = rt.group === '' && rt.resource === 'events' && this.opts.eventTtlSeconds ? { ttlSeconds: this.opts.eventTtlSeconds } : {};
    const hooks: StorageHooks = { written: () => this.storageOutage.writeSucceeded() };
    // A deleted Node's labels are kept for its agent's re-registration (NodeRestriction reads them).
    if (rt.group === '' && rt.resource === 'nodes') hooks.beforeDelete = (node) => this.deletedNodeLabels.recordDeletion(node);
    const conversion = rt.conversionWebhook
      ? new ConversionWebhook(this.webhooks, { ...rt, conversionWebhook: rt.conversionWebhook })
      : rt.conversion && rt.storageVersion
        ? new FunctionConversion({ ...rt, storageVersion: rt.storageVersion }, rt.conversion)
        : undefined;
    const store = new ObjectStore(rt, this.store, this.clock, cache, this.admission, hooks, ttl, conversion);
    this.stores.set(rt, store);
    // Custom resources are looked up by type, never by resource name: two versions share a name.
    // A built-in kind served at several versions is looked up in its storage version.
    if (builtin && isStorageVersion(rt)) this.storesByResource.set(`${rt.group}/${rt.resource}`, store);
    return store;
  }

  /**
   * Serves `types` for a CustomResourceDefinition `owner` in place of what it served: their
   * watch caches are filled before the types are served, so a first list sees every object.
   */
  async serveCustomTypes(owner: string, types: readonly ResourceType[]): Promise<void> {
    const before = this.registry.customTypesOf(owner);
    const added = types.filter((rt) => !this.stores.has(rt));
    for (const rt of added) this.addStore(rt, false).cache.start();
    await Promise.all(added.map((rt) => this.stores.get(rt)!.cache.whenReady()));
    this.registry.setCustomTypes(owner, types);
    this.refreshDiscovery();
    this.aggregator?.syncLocalAPIServices().catch((e: unknown) => this.log.warn({ err: errorText(e) }, 'could not update the local APIServices'));
    for (const rt of before) {
      if (types.includes(rt)) continue;
      this.stores.get(rt)?.cache.stop();
      this.stores.delete(rt);
    }
  }

  /** Discovery's types: this server's own, then what the extension API servers serve. */
  private refreshDiscovery(): void {
    this.discovery.setTypes([...discoveredTypes(this.registry.served()), ...(this.aggregator?.remoteTypes() ?? [])], this.aggregator?.remoteGroupVersions() ?? []);
  }

  /** The aggregation layer, with the front-proxy credentials given or made for this run. */
  private async startAggregator(): Promise<void> {
    let frontProxy = this.opts.frontProxy;
    if (!frontProxy) {
      const ca = await createCertificateAuthority('front-proxy-ca');
      frontProxy = { caPem: ca.certPem, client: await issueCertificate(ca, { commonName: FRONT_PROXY_CLIENT_NAME, usage: 'client' }) };
    }
    const store = (group: string, resource: string): ObjectStore => this.storeByResource(group, resource);
    this.aggregator = new Aggregator({
      clock: this.clock,
      log: this.log,
      registry: this.metrics.registry,
      stores: {
        apiservices: store(APIREGISTRATION_GROUP, 'apiservices'),
        services: store('', 'services'),
        endpoints: store('', 'endpoints'),
        endpointslices: store('discovery.k8s.io', 'endpointslices'),
        configmaps: store('', 'configmaps'),
        roles: store(RBAC_GROUP, 'roles'),
      },
      frontProxy,
      clusterCaPem: this.opts.ca.certPem,
      context: SYSTEM_CONTEXT,
      localGroupVersions: () => discoveredTypes(this.registry.served()).map((rt) => ({ group: rt.group, version: rt.version })),
      discoveryChanged: () => this.refreshDiscovery(),
    });
    await this.aggregator.start();
  }

  /** Scrapes the nodes whose agents serve an endpoint, when this server can reach agents at all. */
  private startNodeScraper(): void {
    const proxy = this.agentProxy;
    if (!proxy) return;
    this.nodeScraper = new NodeScraper({
      clock: this.clock,
      log: this.log,
      storage: this.metricsStorage,
      nodes: () => this.storeByResource('', 'nodes').cache.objectsUnder('/registry/nodes/').filter((n) => agentEndpoint(n) !== undefined),
      fetch: (node, path, timeoutMs) => proxy.fetchText(node, path, timeoutMs),
      ...(this.opts.metricResolutionMs !== undefined ? { resolutionMs: this.opts.metricResolutionMs } : {}),
    });
    this.nodeScraper.start();
  }

  /** How logs, streams and node proxying reach the agents: through their kubelet port, with the server's kubelet client certificate. */
  private agentProxies(opts: ApiServerOptions): Pick<ResourceHandlerDeps, 'podLogs' | 'nodeProxy' | 'podStreams'> {
    if (opts.podLogs) return { podLogs: opts.podLogs };
    if (!opts.kubeletClient) return {};
    const proxy = new AgentProxy((name) => this.storeByResource('', 'nodes').tryGet(undefined, name), opts.kubeletClient);
    this.agentProxy = proxy;
    return { podLogs: proxy, nodeProxy: proxy, podStreams: proxy };
  }

  /** What service-account tokens name, read from the watch cache, or from storage when it has not caught up yet. */
  private tokenObjects(): TokenObjects {
    const resources = { ServiceAccount: 'serviceaccounts', Pod: 'pods', Secret: 'secrets', Node: 'nodes' } as const;
    return {
      get: async (kind, namespace, name) => {
        return this.storeByResource('', resources[kind]).cachedOrStored(namespace || undefined, name);
      },
    };
  }

  /** Roles and bindings as this server's watch caches hold them. */
  private rbacObjects(): RbacObjects {
    const cache = (resource: string): WatchCache => this.storeByResource(RBAC_GROUP, resource).cache;
    return {
      clusterRoleBindings: () => cache('clusterrolebindings').objectsUnder('/registry/clusterrolebindings/') as Binding[],
      roleBindings: (ns) => cache('rolebindings').objectsUnder(`/registry/rolebindings/${ns}/`) as Binding[],
      clusterRole: (name) => cache('clusterroles').get(`/registry/clusterroles/${name}`) as RoleLike | undefined,
      role: (ns, name) => cache('roles').get(`/registry/roles/${ns}/${name}`) as RoleLike | undefined,
    };
  }

  /** The admission plugins this server runs, each given what it looks up; the chain orders them. */
  private admissionPlugins(opts: ApiServerOptions): AdmissionChain {
    return admissionPlugins({
      storeByResource: (group, resource) => this.storeByResource(group, resource),
      namespacePhase: (name) => this.namespacePhase(name),
      deletedNodeLabels: this.deletedNodeLabels,
      rbac: this.rbac,
      serviceRange: this.serviceRange,
      clock: this.clock,
      settings: opts.admission ?? {},
      webhookDeps: (resource) => this.webhookDeps(resource),
      systemContext: SYSTEM_CONTEXT,
    });
  }

  /** What a webhook plugin reads: its configurations from the watch cache, namespaces' labels, other versions of a resource. */
  private webhookDeps(resource: 'validatingwebhookconfigurations' | 'mutatingwebhookconfigurations'): AdmissionWebhookDeps {
    // The stores are made after the plugins: look them up when first asked.
    const cache = (): WatchCache => this.storeByResource(ADMISSIONREGISTRATION_GROUP, resource).cache;
    return {
      configurations: new WebhookConfigurations({ changeCount: () => cache().changeCount, list: () => cache().objectsUnder(`/registry/${resource}/`) }),
      client: this.webhooks,
      metrics: this.metrics.admissionWebhooks,
      now: () => this.clock.now(),
      namespaceLabels: async (name) => {
        const ns = await this.storeByResource('', 'namespaces').cachedOrStored(undefined, name);
        return ns ? (ns.metadata.labels ?? {}) : undefined;
      },
      // Versions that differ in more than apiVersion (conversion webhooks, built-in conversions) are not offered as equivalents: skiff sends an equivalent's object with its apiVersion changed, nothing more.
      equivalents: (rt) =>
        rt.conversionWebhook || !isStorageVersion(rt) ? [] : this.registry.served().filter((other) => other !== rt && other.group === rt.group && other.resource === rt.resource && isStorageVersion(other)),
    };
  }

  /** How a webhook's Service reference is resolved: Services, Endpoints and EndpointSlices as this server holds them. */
  private serviceEndpointObjects(): ServiceEndpointObjects {
    return {
      service: async (ns, name) => (await this.storeByResource('', 'services').cachedOrStored(ns, name)) as Service | undefined,
      endpoints: async (ns, name) => (await this.storeByResource('', 'endpoints').cachedOrStored(ns, name)) as Endpoints | undefined,
      endpointSlices: (ns, name) =>
        (this.storeByResource('discovery.k8s.io', 'endpointslices').cache.objectsUnder(`/registry/endpointslices/${ns}/`) as EndpointSlice[]).filter((s) => s.metadata.labels?.[SERVICE_NAME_LABEL] === name),
    };
  }

  /** Asked on every namespaced create and on every RBAC decision: looked up, not searched. */
  storeByResource(group: string, resource: string): ObjectStore {
    const store = this.storesByResource.get(`${group}/${resource}`);
    if (!store) throw new Error(`no storage for ${resource}.${group}`);
    return store;
  }

  private async authenticateBootstrapToken(token: string): Promise<UserInfo | undefined> {
    const parsed = parseToken(token);
    if (!parsed) return undefined;
    const secret = await this.storeByResource('', 'secrets').tryGet(TOKEN_NAMESPACE, tokenSecretName(parsed.id));
    if (!secret || !tokenMatches(secret, parsed, this.clock.now())) return undefined;
    return { name: `system:bootstrap:${parsed.id}`, groups: ['system:bootstrappers', 'system:bootstrappers:skiff:default-node-token'] };
  }

  /** Makes the tokens given on the command line valid (without expiry), creating their Secrets. */
  private async ensureBootstrapTokens(): Promise<void> {
    const secrets = this.storeByResource('', 'secrets');
    for (const token of this.opts.bootstrapTokens ?? []) {
      const parsed = parseToken(token);
      if (!parsed) throw new Error('--token must look like abcdef.0123456789abcdef ([a-z0-9]{6}.[a-z0-9]{16})');
      const existing = await secrets.tryGet(TOKEN_NAMESPACE, tokenSecretName(parsed.id));
      if (existing && tokenMatches(existing, parsed, this.clock.now())) continue;
      const body = tokenSecret(parsed, { now: this.clock.now(), description: 'skiff server --token' });
      try {
        if (existing) {
          const rv = existing.metadata.resourceVersion;
          await secrets.update(TOKEN_NAMESPACE, tokenSecretName(parsed.id), () => {
            const next = deepClone(body);
            next.metadata.resourceVersion = rv;
            return next;
          }, SYSTEM_CONTEXT());
        } else await secrets.create(TOKEN_NAMESPACE, body, SYSTEM_CONTEXT());
      } catch (e) {
        if (!isStatusError(e, 'AlreadyExists') && !isStatusError(e, 'Conflict')) throw e;
      }
    }
  }

  private async namespacePhase(name: string): Promise<'Active' | 'Terminating' | undefined> {
    const namespaces = this.storeByResource('', 'namespaces');
    // Every namespaced create asks this: answer from the watch cache, and read the store only for
    // a namespace the cache has not seen yet (it may have been created a moment ago).
    const ns = await namespaces.cachedOrStored(undefined, name);
    if (!ns) return undefined;
    return isNamespaceActive(ns) ? 'Active' : 'Terminating';
  }

  /** Starts caches, creates the default namespaces and listens. Resolves with the bound port. */
  async start(): Promise<number> {
    for (const s of this.stores.values()) s.cache.start();
    await Promise.all([...this.stores.values()].map((s) => s.cache.whenReady()));
    // The custom resources already defined are served from the first request on.
    await this.crds.start();
    await this.ensureDefaultNamespaces();
    this.keepSystemNamespaces();
    await this.ensureBootstrapPolicy();
    await this.ensureFlowControlConfig();
    // Existing system classes are left as they are: their value and policy cannot change.
    await ensureObjects(this.storeByResource(SCHEDULING_GROUP, 'priorityclasses'), SYSTEM_PRIORITY_CLASSES, () => undefined);
    this.keepFlowSchemaStatus();
    // Without a key of its own (in-process tests) a server signs with a key that lives as long as it does.
    this.serviceAccountTokens = await ServiceAccountTokens.fromPrivateKey(this.opts.serviceAccountKeyPem ?? (await createSigningKey()), this.tokenObjects(), this.clock);
    await this.ensureBootstrapTokens();
    await this.startAggregator();
    this.startNodeScraper();
    const listener = new ApiListener(this.opts, (req, res) => void this.serve(req, res));
    this.listener = listener;
    const port = await listener.listen();
    this.log.info({ host: this.opts.host, port }, 'API server listening');
    return port;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.systemNamespacesTimer?.cancel();
    this.flowSchemaStatusTimer?.cancel();
    this.crds.stop();
    this.aggregator?.stop();
    this.nodeScraper?.stop();
    this.webhooks.close();
    for (const s of this.stores.values()) s.cache.stop();
    await this.listener?.close();
    // After the listener: the last requests' events are written too.
    await this.auditor?.close();
  }

  private async ensureDefaultNamespaces(): Promise<void> {
    const namespaces = this.storeByResource('', 'namespaces');
    for (const name of DEFAULT_NAMESPACES) {
      if (await namespaces.tryGet(undefined, name)) continue;
      try {
        await namespaces.create(undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, SYSTEM_CONTEXT());
      } catch (e) {
        // Another member may have created it first.
        if (!isStatusError(e, 'AlreadyExists')) throw e;
      }
    }
  }

  /** Creates the bootstrap roles and bindings, and gives back what an auto-updated one lost. */
  private async ensureBootstrapPolicy(): Promise<void> {
    await ensureObjects(this.storeByResource(RBAC_GROUP, 'clusterroles'), BOOTSTRAP_CLUSTER_ROLES, reconcileBootstrapObject);
    await ensureObjects(this.storeByResource(RBAC_GROUP, 'clusterrolebindings'), BOOTSTRAP_CLUSTER_ROLE_BINDINGS, reconcileBootstrapObject);
  }

  /**
   * Priority and Fairness's own objects, as upstream's configuration ensurer keeps them: the
   * mandatory ones always as built in, the suggested ones while they ask for auto-update.
   */
  private async ensureFlowControlConfig(): Promise<void> {
    const levels = this.storeByResource(FLOWCONTROL_GROUP, 'prioritylevelconfigurations');
    const schemas = this.storeByResource(FLOWCONTROL_GROUP, 'flowschemas');
    // Levels first: a schema made before its level would be dangling for a moment.
    await ensureObjects(levels, MANDATORY_PRIORITY_LEVELS, (want, live) => reconcileApfObject(want as PriorityLevelConfiguration, live as PriorityLevelConfiguration, true));
    await ensureObjects(levels, SUGGESTED_PRIORITY_LEVELS, (want, live) => reconcileApfObject(want as PriorityLevelConfiguration, live as PriorityLevelConfiguration, false));
    await ensureObjects(schemas, MANDATORY_FLOW_SCHEMAS, (want, live) => reconcileApfObject(want as FlowSchema, live as FlowSchema, true));
    await ensureObjects(schemas, SUGGESTED_FLOW_SCHEMAS, (want, live) => reconcileApfObject(want as FlowSchema, live as FlowSchema, false));
  }

  /**
   * Keeps each FlowSchema's Dangling condition true to whether its priority level exists, looked
   * at again shortly after any schema or level changes (the writes of several members agree, so
   * only the first changes anything).
   */
  private keepFlowSchemaStatus(): void {
    const schemas = this.storeByResource(FLOWCONTROL_GROUP, 'flowschemas');
    const levels = this.storeByResource(FLOWCONTROL_GROUP, 'prioritylevelconfigurations');
    const update = async (): Promise<void> => {
      const names = new Set(levels.cache.objectsUnder('/registry/prioritylevelconfigurations/').map((o) => o.metadata.name!));
      for (const fs of schemas.cache.objectsUnder('/registry/flowschemas/') as FlowSchema[]) {
        if (!danglingConditions(fs, names, this.clock.now())) continue;
        await schemas
          .update(undefined, fs.metadata.name!, (current) => {
            const conditions = danglingConditions(current as FlowSchema, names, this.clock.now());
            if (conditions) current.status = { ...(current.status as object | undefined), conditions };
            return current;
          }, SYSTEM_CONTEXT(), { subresource: 'status' })
          .catch((e: unknown) => {
            if (!isStatusError(e, 'NotFound') && !isStatusError(e, 'Conflict')) throw e;
          });
      }
    };
    const schedule = (): void => {
      if (this.stopping || this.flowSchemaStatusTimer) return;
      this.flowSchemaStatusTimer = this.clock.setTimeout(() => {
        this.flowSchemaStatusTimer = undefined;
        update().catch((e: unknown) => this.log.warn({ err: errorText(e) }, 'could not update the FlowSchemas\' status'));
      }, 100);
    };
    // A relist ends every watcher of a cache; this one starts again on what the cache now holds.
    const follow = (cache: WatchCache, prefix: string): void => {
      cache.watch({ filter: alwaysMatch, send: schedule, end: (why) => why === 'relist' && follow(cache, prefix) }, undefined, prefix);
    };
    follow(schemas.cache, '/registry/flowschemas/');
    follow(levels.cache, '/registry/prioritylevelconfigurations/');
  }

  /**
   * Upstream's system namespaces controller: every minute, the namespaces the system lives in are
   * created again if missing (kube-node-lease may be deleted; the others are refused deletion but
   * may predate that rule). Priority and Fairness's bootstrap objects are kept the same way, as
   * upstream's configuration ensurer keeps them.
   */
  private keepSystemNamespaces(): void {
    const tick = (): void => {
      if (this.stopping) return;
      this.ensureDefaultNamespaces()
        .catch((e: unknown) => this.log.warn({ err: errorText(e) }, 'could not ensure the system namespaces'))
        .then(() => this.ensureFlowControlConfig())
        .catch((e: unknown) => this.log.warn({ err: errorText(e) }, 'could not ensure the priority and fairness configuration'))
        .finally(() => {
          if (!this.stopping) this.systemNamespacesTimer = this.clock.setTimeout(tick, 60_000);
        });
    };
    this.systemNamespacesTimer = this.clock.setTimeout(tick, 60_000);
  }

  private isNamespaced = (group: string, version: string, resource: string): boolean =>
    this.registry.typeFor(group, version, resource)?.namespaced ?? this.aggregator?.isNamespaced(group, version, resource) ?? metricsTypeFor(group, version, resource)?.namespaced ?? reviewTypeFor(group, version, resource)?.namespaced === true;

  /** A resource (and subresource) this server answers for, stored or a review. */
  private isServed(group: string, version: string, resource: string, subresource: string | undefined): boolean {
    const rt = this.registry.typeFor(group, version, resource);
    if (!rt) return subresource === undefined && (reviewTypeFor(group, version, resource) !== undefined || metricsTypeFor(group, version, resource) !== undefined);
    return subresource === undefined || (rt.subresources as string[]).includes(subresource) || CONNECT_SUBRESOURCES.has(subresource);
  }

  /** Objects per resource, as the watch caches hold them (they hold every stored object). */
  private storedObjects(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [rt, s] of this.stores) out.set(groupResource(rt.group, rt.resource), s.cache.size);
    return out;
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://localhost');
    let info: RequestInfo = { kind: 'nonresource', verb: (req.method ?? 'GET').toLowerCase(), path: url.pathname };
    let answered: ((code: number) => void) | undefined;
    let release: Release | undefined;
    const audit = this.auditor ? this.auditor.begin(req, res) : void echoAuditId(req, res);
    try {
      info = parseRequestInfo(req.method ?? 'GET', url.pathname, url.searchParams, this.isNamespaced);
      const counted = this.metrics.begin(info, req, url.searchParams);
      // A watch's handler returns while its stream goes on: it is over when its response closes.
      if (counted.longRunning) res.once('close', () => counted.done(res.statusCode));
      else answered = counted.done;
      if (info.kind === 'nonresource' && isPublicPath(info.path)) {
        audit?.publicPath(await this.authenticator.authenticate(req).catch(() => undefined), info);
        return await this.nonResource(req, res, info.path, url);
      }
      const caller = await this.authenticator.authenticate(req);
      audit?.authenticated(caller, info, counted.longRunning, { failed: !caller });
      if (!caller) throw unauthorized();
      const user = await impersonatedUser(req, caller, this.authorizer);
      if (user !== caller) audit?.impersonated(user);
      // As upstream's filter chain: flow control sees the (impersonated) user, before authorization.
      release = await this.admit(req, res, user, info, url.searchParams);
      const denied = await this.authorizer.authorize(user, info);
      audit?.authorized(denied === undefined, denied === undefined || denied === NO_RULE ? '' : denied);
      // Upstream appends an authorizer's reason (the Node authorizer gives one; RBAC never does).
      if (denied !== undefined) throw forbidden(denied === NO_RULE ? forbiddenMessage(user, info) : `${forbiddenMessage(user, info)}: ${denied}`, info.kind === 'resource' ? info.resource : undefined, info.kind === 'resource' ? info.group : undefined, info.kind === 'resource' ? authorizationScope(info).name : undefined);
      // A group-version an extension API server serves goes there, as upstream's aggregator sends it.
      const aggregated = this.aggregator?.targetOf(info);
      if (aggregated) return await this.aggregator!.proxy(req, res, info, aggregated, user);
      // The reviews are answered here, once RBAC allowed asking (system:basic-user allows the self reviews to everyone).
      const review = reviewType(info);
      if (review) {
        if (info.kind !== 'resource' || info.verb !== 'create' || info.name !== undefined) throw methodNotAllowed();
        const answer = await answerReview(review, decodeObjectBody(await readBody(req), req.headers['content-type']), {
          user,
          authorizer: this.authorizer,
          rulesFor: (u, ns) => this.rbac.rulesFor(u, ns),
          authenticateToken: (t) => this.authenticator.authenticateToken(t),
          ...(info.namespace !== undefined ? { namespace: info.namespace } : {}),
        });
        return sendJson(res, 201, answer);
      }
      if (info.kind === 'resource' && info.group === METRICS_GROUP && info.version === METRICS_VERSION) return sendJson(res, 200, this.metricsApi.answer(info, url.searchParams, req.headers.accept));
      if (info.kind === 'resource') await this.handler.handle(req, res, info, url.searchParams, user);
      else await this.nonResource(req, res, info.path, url, user);
    } catch (e) {
      this.fail(res, e, req, audit);
    } finally {
      release?.();
      answered?.(res.statusCode);
      audit?.handlerReturned();
    }
  }

  private fail(res: ServerResponse, e: unknown, req: IncomingMessage, audit: RequestAudit | undefined): void {
    if (e instanceof StatusError) {
      if (res.headersSent) return void res.end();
      audit?.failed(e.status);
      return sendStatus(res, e.status);
    }
    // The datastore is unreachable or without quorum: a retryable 503 that says why, not a 500.
    // A write that reached it and may have been applied is no 503: clients (client-go, and ours
    // on failover) send a 503 again, and a create would then find its own object. As upstream
    // answers a storage timeout: 504, without Retry-After.
    if (isStoreError(e, 'unavailable') || isStoreError(e, 'closed')) {
      this.storageOutage.failure(e.message, req.method, req.url);
      if (res.headersSent) return void res.end();
      const status = e.outcomeUnknown ? timeout(`storage did not answer in time; the write may or may not have been applied: ${e.message}`).status : serviceUnavailable(`storage unavailable: ${e.message}`).status;
      audit?.failed(status);
      return sendStatus(res, status);
    }
    this.log.error({ err: e instanceof Error ? e.stack : String(e), method: req.method, url: req.url }, 'request failed');
    // What upstream's recovery would call a panic: the audit says so in place of ResponseComplete.
    audit?.panicked(errorText(e));
    if (res.headersSent) return void res.end();
    sendStatus(res, internalError(errorText(e)).status);
  }

  private async nonResource(req: IncomingMessage, res: ServerResponse, path: string, url: URL, user?: UserInfo): Promise<void> {
    const accept = req.headers.accept ?? '';
    const p = path.replace(/\/+$/, '') || '/';
    switch (p) {
      case '/version':
        return sendJson(res, 200, {
          ...SERVED_VERSION,
          gitCommit: '0000000000000000000000000000000000000000',
          gitTreeState: 'clean',
          buildDate: '2026-11-01T00:00:00Z',
          goVersion: `node${process.versions.node}`,
          compiler: 'skiff',
          platform: `${process.platform}/${goArch()}`,
        });
      case '/healthz':
      case '/livez':
        return this.sendText(res, 200, 'ok');
      case '/readyz':
        return this.readyz(res, url);
      case '/metrics': {
        const text = await metricsText(this.metrics.registry);
        res.writeHead(200, { 'Content-Type': this.metrics.registry.contentType });
        return void res.end(text);
      }
      case '/api':
        if (wantsAggregated(accept)) return this.sendAggregated(res, true, accept);
        return sendJson(res, 200, this.discovery.apiVersions(this.opts.advertiseAddress ?? `${this.opts.host}:${this.opts.port}`));
      case '/apis':
        if (wantsAggregated(accept)) return this.sendAggregated(res, false, accept);
        return sendJson(res, 200, this.discovery.apiGroupList());
      case CA_PATH:
        return sendJson(res, 200, { caPem: this.opts.ca.certPem });
      case JOIN_PATH:
        if (!user) throw unauthorized();
        return serveJoin(req, res, user, this.opts.ca);
      case '/openapi/v3':
        return sendJson(res, 200, this.discovery.openApiIndex());
      case '/openapi/v2': {
        const doc = this.discovery.openApiV2(accept);
        res.writeHead(200, { 'Content-Type': doc.contentType, 'Content-Length': Buffer.byteLength(doc.body) });
        return void res.end(doc.body);
      }
    }
    if (p.startsWith('/openapi/v3/')) {
      const doc = this.discovery.openApiDocument(p.slice('/openapi/v3/'.length));
      if (doc) {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(doc) });
        return void res.end(doc);
      }
    }
    const parts = p.split('/').filter(Boolean);
    if (parts[0] === 'api' && parts.length === 2) {
      const list = this.discovery.apiResourceList('', parts[1]!);
      if (list) return sendJson(res, 200, list);
    }
    if (parts[0] === 'apis' && parts.length === 2) {
      const group = this.discovery.apiGroup(parts[1]!);
      if (group) return sendJson(res, 200, group);
    }
    if (parts[0] === 'apis' && parts.length === 3) {
      const list = this.discovery.apiResourceList(parts[1]!, parts[2]!);
      if (list) return sendJson(res, 200, list);
    }
    throw notFoundPath();
  }

  private sendAggregated(res: ServerResponse, legacy: boolean, accept: string): void {
    const v2 = /g=apidiscovery\.k8s\.io;\s*v=v2(;|,|$)/.test(accept) || /v=v2;g=apidiscovery/.test(accept);
    const version = v2 ? 'v2' : 'v2beta1';
    const text = `${JSON.stringify(this.discovery.aggregated(legacy, version))}\n`;
    res.writeHead(200, { 'Content-Type': `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`, 'Cache-Control': 'no-cache, private' });
    res.end(text);
  }

  private async readyz(res: ServerResponse, url: URL): Promise<void> {
    const checks: [string, string | undefined][] = [];
    const health = await this.opts.store.health().catch((e: unknown) => ({ ok: false, reason: String(e) }));
    checks.push(['etcd', health.ok ? undefined : (health.reason ?? 'storage not ready')]);
    checks.push(['shutdown', this.stopping ? 'server is shutting down' : undefined]);
    const failed = checks.filter(([, why]) => why !== undefined);
    const verbose = url.searchParams.has('verbose') || failed.length > 0;
    const body = verbose
      ? checks.map(([name, why]) => (why ? `[-]${name} failed: ${why}` : `[+]${name} ok`)).join('\n') + `\n${failed.length ? 'readyz check failed' : 'readyz check passed'}\n`
      : 'ok';
    this.sendText(res, failed.length ? 503 : 200, body);
  }

  private sendText(res: ServerResponse, code: number, text: string): void {
    res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-cache, private' });
    res.end(text);
  }
}

/**
 * Creates each object of `wanted` that is missing and brings the others in line where `reconcile`
 * says how (undefined: leave it). Another member may be doing the same at this moment; it wins and
 * that is fine.
 */
async function ensureObjects(store: ObjectStore, wanted: readonly KubeObject[], reconcile: (want: KubeObject, live: KubeObject) => KubeObject | undefined): Promise<void> {
  for (const want of wanted) {
    const name = want.metadata.name!;
    try {
      const live = await store.tryGet(undefined, name);
      if (!live) {
        await store.create(undefined, deepClone(want), SYSTEM_CONTEXT());
        continue;
      }
      const fixed = reconcile(want, live);
      if (fixed) await store.update(undefined, name, () => deepClone(fixed), SYSTEM_CONTEXT());
    } catch (e) {
      if (!isStatusError(e, 'AlreadyExists') && !isStatusError(e, 'Conflict')) throw e;
    }
  }
}


/** Upstream's GroupResource string: "pods", "deployments.apps". */
function groupResource(group: string, resource: string): string {
  return group ? `${resource}.${group}` : resource;
}

/** A custom type's objects as it serves them: every version shares the keys, so events carry this version's apiVersion. */
function customDecoder(rt: ResourceType): (obj: KubeObject) => void {
  const apiVersion = apiVersionOf(rt.group, rt.version);
  return (obj) => {
    rt.onRead?.(obj);
    obj.apiVersion = apiVersion;
    obj.kind = rt.kind;
  };
}

/** What discovery lists: the stored types, then the reviews and resource metrics. */
function discoveredTypes(types: readonly ResourceType[]): DiscoveredResource[] {
  return [
    ...types,
    ...REVIEW_TYPES.filter((t) => !t.unlisted).map((t) => ({ group: t.group, version: t.version, resource: t.resource, kind: t.kind, singular: '', namespaced: t.namespaced === true, shortNames: [], categories: [], subresources: [], verbs: ['create'] })),
    ...METRICS_TYPES,
  ];
}

const GROUP_RESOURCE_BY_PREFIX = new Map(servedKinds.map((rt) => [storageSegment(rt), groupResource(rt.group, rt.resource)]));

const REGISTRY_PREFIX = '/registry/';

/** The group resource a storage key belongs to (/registry/<resource>/...): asked on every store request, so no split. */
function groupResourceOfKey(key: string): string {
  if (!key.startsWith(REGISTRY_PREFIX)) return '';
  const end = key.indexOf('/', REGISTRY_PREFIX.length);
  const first = key.slice(REGISTRY_PREFIX.length, end < 0 ? undefined : end);
  const known = GROUP_RESOURCE_BY_PREFIX.get(first);
  if (known) return known;
  // Custom resources and upstream-style keys: /registry/<group>/<resource>/...
  if (!first.includes('.') || end < 0) return first;
  const next = key.indexOf('/', end + 1);
  return `${key.slice(end + 1, next < 0 ? undefined : next)}.${first}`;
}

function wantsAggregated(accept: string): boolean {
  return accept.includes('as=APIGroupDiscoveryList');
}
