// The aggregation layer (kube-aggregator) in front of the resource handler: requests under
// /apis/<group>/<version>/ of a non-local APIService go to its extension API server; discovery
// lists what those servers serve; the availability controller keeps their Available condition; the
// local APIServices and the `extension-apiserver-authentication` ConfigMap are kept as upstream
// keeps them. The server wires it with a few calls: `target`, `proxy`, `remoteTypes`, `start`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import type { Clock, Timer } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import { errorText } from '../../util/error-text.js';
import { badRequest, isStatusError } from '../../api/errors.js';
import type { KubeObject } from '../../api/types.js';
import { deepClone, jsonEqual } from '../../api/kinds/json.js';
import { availableCondition, caBundleOf, isLocal, type APIService, type APIServiceCondition } from '../../api/kinds/apiservice.js';
import type { Service } from '../../api/kinds/service.js';
import type { Endpoints } from '../../api/kinds/endpoints.js';
import type { EndpointSlice } from '../../api/kinds/endpointslice.js';
import type { IssuedCertificate } from '../../pki/certificates.js';
import { upgradeOf } from '../../util/upgrade.js';
import type { ObjectStore } from '../object-store.js';
import { alwaysMatch, type CacheEvent, type WatchCache } from '../watch-cache.js';
import type { DiscoveredResource } from '../discovery.js';
import type { RequestInfo } from '../http/request-info.js';
import type { UserInfo, WriteContext } from '../request-context.js';
import { CONNECT_SUBRESOURCES } from '../metrics.js';
import { AvailabilityController } from './availability.js';
import { ExtensionTransport, caBundlePem } from './extension-transport.js';
import { EXTENSION_AUTHENTICATION_CONFIGMAP, EXTENSION_AUTHENTICATION_NAMESPACE, EXTENSION_AUTHENTICATION_READER_ROLE, extensionAuthenticationData } from './front-proxy.js';
import { AUTOMANAGED_LABEL, driftedSpec, localAPIServices, type GroupVersion } from './local-apiservices.js';
import { AggregatorMetrics } from './metrics.js';
import { proxyRequest, unavailable } from './proxy.js';
import { remoteResources } from './remote-discovery.js';
import { pickEndpoint, resolveService, serviceServerName, type ServiceObjects } from '../service-resolver.js';
import { SERVICE_NAME_LABEL } from '../../controllers/endpointslices.js';

export interface AggregatorDeps {
  clock: Clock;
  log: Logger;
  registry: Registry;
  /** The stores it reads and writes, by resource. */
  stores: Record<'apiservices' | 'services' | 'endpoints' | 'endpointslices' | 'configmaps' | 'roles', ObjectStore>;
  /** The front-proxy CA and the client certificate it signed for this server. */
  frontProxy: { caPem: string; client: IssuedCertificate };
  /** The cluster CA, which extension servers trust for client certificates (client-ca-file). */
  clusterCaPem: string;
  context(): WriteContext;
  /** The group-versions this server serves itself (built-in and custom resources). */
  localGroupVersions(): GroupVersion[];
  /** What the extension servers serve changed: discovery should be built again. */
  discoveryChanged(): void;
  /** Upstream's availability resync period (30 s). */
  resyncMs?: number;
}

/** How often the ConfigMap and the local APIServices are put right again (upstream's controllers resync too). */
const KEEP_MS = 60_000;

export class Aggregator {
  private readonly transport: ExtensionTransport;
  private readonly availability: AvailabilityController;
  private readonly metrics: AggregatorMetrics;
  /** What each non-local APIService's server last said it serves, by APIService name. */
  private readonly remote = new Map<string, DiscoveredResource[]>();
  private keepTimer?: Timer;
  private stopped = false;
  /** The Services APIServices name (`namespace/name`), as of the APIServices cache's change count `seen`. */
  private named = { seen: -1, services: new Set<string>() };

  constructor(private readonly deps: AggregatorDeps) {
    this.transport = new ExtensionTransport(deps.frontProxy.client);
    this.metrics = new AggregatorMetrics(deps.registry);
    this.availability = new AvailabilityController({
      clock: deps.clock,
      log: deps.log,
      objects: this.serviceObjects(),
      transport: this.transport,
      metrics: this.metrics,
      apiServices: () => this.apiServices(),
      writeCondition: (name, condition) => this.writeCondition(name, condition),
      discovered: (apiService, body) => this.discovered(apiService, body),
      ...(deps.resyncMs !== undefined ? { resyncMs: deps.resyncMs } : {}),
    });
  }

  private apiServices(): APIService[] {
    return this.deps.stores.apiservices.cache.objectsUnder('/registry/apiservices/') as APIService[];
  }

  private serviceObjects(): ServiceObjects {
    const { services, endpoints, endpointslices } = this.deps.stores;
    return {
      service: (ns, name) => services.cached(ns, name) as Service | undefined,
      endpoints: (ns, name) => endpoints.cached(ns, name) as Endpoints | undefined,
      endpointSlices: (ns, name) => (endpointslices.cache.objectsUnder(`/registry/endpointslices/${ns}/`) as EndpointSlice[]).filter((s) => s.metadata.labels?.[SERVICE_NAME_LABEL] === name),
    };
  }

  /** The non-local APIService that serves `group`/`version`, unless this server serves it itself. */
  target(group: string, version: string): APIService | undefined {
    if (!group) return undefined;
    const apiService = this.deps.stores.apiservices.cached(undefined, `${version}.${group}`) as APIService | undefined;
    if (!apiService || isLocal(apiService)) return undefined;
    return this.deps.localGroupVersions().some((gv) => gv.group === group && gv.version === version) ? undefined : apiService;
  }

  /** The APIService a request goes to: a resource request, or any path under /apis/<group>/<version>. */
  targetOf(info: RequestInfo): APIService | undefined {
    if (info.kind === 'resource') return this.target(info.group, info.version);
    const parts = info.path.split('/').filter(Boolean);
    return parts[0] === 'apis' && parts.length >= 3 ? this.target(parts[1]!, parts[2]!) : undefined;
  }

  /** Whether `resource` of an aggregated group-version is namespaced, as its server says (namespaced when unknown, as upstream's request parsing assumes). */
  isNamespaced(group: string, version: string, resource: string): boolean | undefined {
    const apiService = this.target(group, version);
    if (!apiService) return undefined;
    const known = this.remote.get(apiService.metadata.name!)?.find((r) => r.resource === resource);
    return known?.namespaced ?? true;
  }

  /** Proxies a request `targetOf` named an APIService for; a 503 Status while it is unavailable. */
  async proxy(req: IncomingMessage, res: ServerResponse, info: RequestInfo, apiService: APIService, user: UserInfo): Promise<void> {
    if (upgradeOf(req)) throw badRequest('skiff does not proxy upgrade requests (exec, attach, port-forward) to aggregated APIs');
    // Upstream answers from the Available condition, so a server found dead stays refused until it is seen answering again.
    if (availableCondition(apiService)?.status !== 'True') throw unavailable('service unavailable');
    const ref = apiService.spec?.service ?? {};
    const resolved = resolveService(ref, this.serviceObjects());
    if (!resolved.ok) {
      this.availability.trigger();
      throw unavailable('service unavailable');
    }
    const longRunning = info.kind === 'resource' && (info.verb === 'watch' || (info.subresource !== undefined && CONNECT_SUBRESOURCES.has(info.subresource)));
    await proxyRequest(req, res, {
      target: { endpoint: pickEndpoint(resolved.endpoints), serverName: serviceServerName(ref), caPem: caBundlePem(caBundleOf(apiService)), insecureSkipTLSVerify: apiService.spec?.insecureSkipTLSVerify === true },
      transport: this.transport,
      user,
      longRunning,
      unreachable: () => this.availability.trigger(),
    });
  }

  /** The resources the extension servers serve, for discovery. */
  remoteTypes(): DiscoveredResource[] {
    const live = new Set(this.apiServices().filter((s) => !isLocal(s) && this.target(s.spec?.group ?? '', s.spec?.version ?? '')).map((s) => s.metadata.name!));
    return [...this.remote.entries()].filter(([name]) => live.has(name)).flatMap(([, types]) => types);
  }

  /** Group-versions of non-local APIServices, listed in discovery even before their server answered (as upstream lists them). */
  remoteGroupVersions(): GroupVersion[] {
    return this.apiServices()
      .filter((s) => !isLocal(s) && this.target(s.spec?.group ?? '', s.spec?.version ?? ''))
      .map((s) => ({ group: s.spec?.group ?? '', version: s.spec?.version ?? '' }));
  }

  private discovered(apiService: APIService, body: unknown): void {
    const name = apiService.metadata.name!;
    const types = body === undefined ? undefined : remoteResources(body, apiService.spec?.group ?? '', apiService.spec?.version ?? '');
    // A server that does not answer now keeps what it said last (upstream marks it stale and keeps it).
    if (!types || jsonEqual(this.remote.get(name), types)) return;
    this.remote.set(name, types);
    this.deps.discoveryChanged();
  }

  private async writeCondition(name: string, condition: APIServiceCondition): Promise<void> {
    await this.deps.stores.apiservices
      .update(undefined, name, (current) => {
        const status = { ...((current.status as APIService['status']) ?? {}) };
        status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== condition.type), condition];
        current.status = status;
        return current;
      }, this.deps.context(), { subresource: 'status' })
      .catch((e: unknown) => {
        // Deleted meanwhile, or another member wrote first: the next look settles it.
        if (!isStatusError(e, 'NotFound') && !isStatusError(e, 'Conflict')) throw e;
      });
  }

  /** Publishes what extension servers need, keeps the local APIServices, and starts watching availability. */
  async start(): Promise<void> {
    await this.keep();
    const { apiservices, services, endpoints, endpointslices } = this.deps.stores;
    // Only the Services APIServices name matter: a busy cluster's endpoint churn elsewhere costs one set lookup.
    const named = (o: KubeObject, name: string | undefined): boolean => name !== undefined && this.namedServices().has(`${o.metadata.namespace ?? ''}/${name}`);
    this.follow(services.cache, '/registry/services/', (ev) => named(ev.object, ev.object.metadata.name) && this.availability.trigger());
    this.follow(endpoints.cache, '/registry/endpoints/', (ev) => named(ev.object, ev.object.metadata.name) && this.availability.trigger());
    this.follow(endpointslices.cache, '/registry/endpointslices/', (ev) => {
      const service = (o: KubeObject | undefined): string | undefined => o?.metadata.labels?.[SERVICE_NAME_LABEL];
      if (named(ev.object, service(ev.object)) || (ev.prev !== undefined && named(ev.prev, service(ev.prev)))) this.availability.trigger();
    });
    // An APIService added or removed changes what discovery lists, before its server is asked.
    this.follow(apiservices.cache, '/registry/apiservices/', () => {
      this.availability.trigger();
      this.deps.discoveryChanged();
    });
    this.availability.trigger();
    const tick = (): void => {
      if (this.stopped) return;
      this.keep()
        .catch((e: unknown) => this.deps.log.warn({ err: errorText(e) }, 'could not keep the aggregation layer\'s objects'))
        .finally(() => {
          if (!this.stopped) this.keepTimer = this.deps.clock.setTimeout(tick, KEEP_MS);
        });
    };
    this.keepTimer = this.deps.clock.setTimeout(tick, KEEP_MS);
  }

  stop(): void {
    this.stopped = true;
    this.keepTimer?.cancel();
    this.availability.stop();
    this.transport.close();
  }

  /** The Services APIServices name, gathered again only when the APIServices changed. */
  private namedServices(): ReadonlySet<string> {
    const changes = this.deps.stores.apiservices.cache.changeCount;
    if (changes !== this.named.seen) {
      const services = new Set<string>();
      for (const a of this.apiServices()) if (a.spec?.service?.name) services.add(`${a.spec.service.namespace ?? ''}/${a.spec.service.name}`);
      this.named = { seen: changes, services };
    }
    return this.named.services;
  }

  /** A relist ends every watcher of a cache; this one starts again on what the cache then holds. */
  private follow(cache: WatchCache, prefix: string, changed: (ev: CacheEvent) => void): void {
    cache.watch({ filter: alwaysMatch, send: (_type, ev) => changed(ev), end: (why) => void (why === 'relist' && !this.stopped && this.follow(cache, prefix, changed)) }, undefined, prefix);
  }

  private async keep(): Promise<void> {
    await this.publishAuthentication();
    await this.syncLocalAPIServices();
  }

  /** The local APIServices as the served group-versions say (a CRD's came or went). */
  async syncLocalAPIServices(): Promise<void> {
    const store = this.deps.stores.apiservices;
    const wanted = localAPIServices(this.deps.localGroupVersions());
    const names = new Set(wanted.map((s) => s.metadata.name!));
    for (const want of wanted) {
      const live = (await store.cachedOrStored(undefined, want.metadata.name!)) as APIService | undefined;
      await this.tolerateRaces(async () => {
        if (!live) await store.create(undefined, deepClone(want), this.deps.context());
        else if (live.metadata.labels?.[AUTOMANAGED_LABEL] && driftedSpec(want, live)) {
          await store.update(undefined, want.metadata.name!, (current) => ({ ...current, spec: deepClone(want.spec) }), this.deps.context());
        }
      });
    }
    for (const live of this.apiServices()) {
      if (!live.metadata.labels?.[AUTOMANAGED_LABEL] || names.has(live.metadata.name!)) continue;
      await this.tolerateRaces(() => store.delete(undefined, live.metadata.name!, {}, this.deps.context()).then(() => undefined));
    }
  }

  /** The ConfigMap extension servers read to trust the proxy, and the Role that lets them read it. */
  private async publishAuthentication(): Promise<void> {
    const ns = EXTENSION_AUTHENTICATION_NAMESPACE;
    const data = extensionAuthenticationData(this.deps.clusterCaPem, this.deps.frontProxy.caPem);
    const configMaps = this.deps.stores.configmaps;
    const live = await configMaps.cachedOrStored(ns, EXTENSION_AUTHENTICATION_CONFIGMAP);
    await this.tolerateRaces(async () => {
      if (!live) await configMaps.create(ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: EXTENSION_AUTHENTICATION_CONFIGMAP, namespace: ns }, data }, this.deps.context());
      else if (!jsonEqual(live.data, data)) await configMaps.update(ns, EXTENSION_AUTHENTICATION_CONFIGMAP, (current) => ({ ...current, data }), this.deps.context());
    });
    const roles = this.deps.stores.roles;
    if (await roles.cachedOrStored(ns, EXTENSION_AUTHENTICATION_READER_ROLE)) return;
    const role: KubeObject = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: EXTENSION_AUTHENTICATION_READER_ROLE, namespace: ns, labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' }, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' } },
      rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: [EXTENSION_AUTHENTICATION_CONFIGMAP], verbs: ['get', 'list', 'watch'] }],
    };
    await this.tolerateRaces(() => roles.create(ns, role, this.deps.context()).then(() => undefined));
  }

  /** Another member may make the same write at the same moment; it wins, and that is fine. */
  private async tolerateRaces(write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (e) {
      if (!isStatusError(e, 'AlreadyExists') && !isStatusError(e, 'Conflict') && !isStatusError(e, 'NotFound')) throw e;
    }
  }
}
