// EndpointSlice controller (upstream pkg/controller/endpointslice): the same pods the Endpoints
// controller lists, as discovery.k8s.io/v1 EndpointSlices of up to 100 endpoints, one set of
// slices per address type and port set. Each endpoint carries ready, serving and terminating
// conditions (terminating pods stay listed, not ready). Slices are labelled with the Service name
// and this controller as manager, owned by the Service, and named from `<service>-`.
import { setMaxListeners } from 'node:events';
import { isStatusError } from '../api/errors.js';
import type { AddressType, EndpointSlice, SliceEndpoint, SlicePort } from '../api/kinds/endpointslice.js';
import { semanticEqual } from '../api/kinds/json.js';
import { isPodReady, type Pod } from '../api/kinds/pod.js';
import type { Service } from '../api/kinds/service.js';
import type { OwnerReference } from '../api/types.js';
import type { Informer } from '../client/informer.js';
import { objectKeyOf } from '../client/informer.js';
import { HEADLESS_LABEL, hasSelector, listable, selectorOf, targetPortOn, watchSelectedPods } from './endpoints.js';
import { PATHS } from '../controller-kit/informers.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { conflictsRequeue, objectPath } from './pod-control.js';
import { ReconcileLoop, type Reconciler, type ReconcileResult } from '../controller-kit/reconciler.js';

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
export const MANAGED_BY = 'endpointslice-controller.k8s.io';
/** Upstream's --max-endpoints-per-slice default. */
export const MAX_ENDPOINTS_PER_SLICE = 100;
const PREFIX = '/apis/discovery.k8s.io/v1';

export interface DesiredSlice {
  addressType: AddressType;
  ports: SlicePort[];
  endpoints: SliceEndpoint[];
}

function sliceKey(s: { addressType?: string; ports?: SlicePort[] }): string {
  return JSON.stringify([s.addressType, s.ports ?? []]);
}

/** The slices a Service should have: per address type and port set, chunks of up to 100 endpoints. */
export function desiredSlices(svc: Service, pods: Pod[]): DesiredSlice[] {
  const selector = selectorOf(svc);
  const publishNotReady = svc.spec?.publishNotReadyAddresses === true;
  const groups = new Map<string, DesiredSlice>();
  for (const pod of pods) {
    if (!selector.matches(pod.metadata.labels) || !listable(pod, true)) continue;
    const ports: SlicePort[] = [];
    for (const sp of svc.spec?.ports ?? []) {
      const port = targetPortOn(pod, sp);
      if (port === undefined) continue;
      ports.push({ name: sp.name ?? '', protocol: sp.protocol ?? 'TCP', port, ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}) });
    }
    ports.sort((a, b) => (a.name! < b.name! ? -1 : a.name! > b.name! ? 1 : a.port! - b.port!));
    const ip = pod.status!.podIP!;
    const addressType: AddressType = ip.includes(':') ? 'IPv6' : 'IPv4';
    // Upstream: serving is the pod's readiness; ready also needs it not terminating, unless
    // publishNotReadyAddresses lists everything as ready.
    const terminating = pod.metadata.deletionTimestamp !== undefined;
    const serving = isPodReady(pod);
    const endpoint: SliceEndpoint = {
      addresses: [ip],
      conditions: { ready: publishNotReady || (serving && !terminating), serving, terminating },
      // A pod naming this Service as its subdomain is known to DNS by its hostname (a StatefulSet's pods).
      ...(pod.spec?.hostname && pod.spec.subdomain === svc.metadata.name && pod.metadata.namespace === svc.metadata.namespace ? { hostname: pod.spec.hostname } : {}),
      ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}),
      targetRef: { kind: 'Pod', namespace: pod.metadata.namespace!, name: pod.metadata.name!, uid: pod.metadata.uid! },
    };
    const key = sliceKey({ addressType, ports });
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { addressType, ports, endpoints: [] }));
    g.endpoints.push(endpoint);
  }
  const out: DesiredSlice[] = [];
  // A Service that selects nothing still gets one empty slice (upstream's placeholder).
  if (groups.size === 0) return [{ addressType: 'IPv4', ports: [], endpoints: [] }];
  for (const [, g] of [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    g.endpoints.sort((a, b) => (a.targetRef!.name! < b.targetRef!.name! ? -1 : 1));
    for (let i = 0; i < g.endpoints.length; i += MAX_ENDPOINTS_PER_SLICE) {
      out.push({ addressType: g.addressType, ports: g.ports, endpoints: g.endpoints.slice(i, i + MAX_ENDPOINTS_PER_SLICE) });
    }
  }
  return out;
}

function sliceLabels(svc: Service): Record<string, string> {
  const labels: Record<string, string> = { ...(svc.metadata.labels ?? {}), [SERVICE_NAME_LABEL]: svc.metadata.name!, [MANAGED_BY_LABEL]: MANAGED_BY };
  if (svc.spec?.clusterIP === 'None') labels[HEADLESS_LABEL] = '';
  else delete labels[HEADLESS_LABEL];
  return labels;
}

function ownerRef(svc: Service): OwnerReference {
  return { apiVersion: 'v1', kind: 'Service', name: svc.metadata.name!, uid: svc.metadata.uid!, controller: true, blockOwnerDeletion: true };
}

export class EndpointSliceController implements Controller {
  readonly name = 'endpointslice';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    setMaxListeners(0, signal);
    const services = ctx.informers.for<Service>(PATHS.services);
    const pods = ctx.informers.for<Pod>(PATHS.pods, { readOnly: true });
    const slices = ctx.informers.for<EndpointSlice>(PATHS.endpointslices);
    const loop = new ReconcileLoop(new EndpointSliceReconciler(ctx, services, pods, slices), { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 2);
    const enqueue = (s: Service) => loop.enqueue(objectKeyOf(s));
    services.addHandlers({ add: enqueue, update: (_o, s) => enqueue(s), delete: enqueue });
    watchSelectedPods(services, pods, enqueue);
    // Slices this controller manages, changed or deleted by someone else, are put back.
    const sliceChanged = (s: EndpointSlice) => {
      const svc = s.metadata.labels?.[SERVICE_NAME_LABEL];
      if (svc && s.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY) loop.enqueue(`${s.metadata.namespace}/${svc}`);
    };
    slices.addHandlers({ add: sliceChanged, update: (_o, s) => sliceChanged(s), delete: sliceChanged });
    void Promise.all([services.waitForSync(), pods.waitForSync(), slices.waitForSync()]).then(() => loop.run(signal));
  }
}

class EndpointSliceReconciler implements Reconciler {
  readonly name = 'endpointslice';
  /**
   * Slices created but not yet seen by the informer, by Service, with when they were created: a
   * sync before they arrive would create them again (upstream keeps an endpointSliceTracker).
   */
  private readonly created = new Map<string, Map<string, number>>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly services: Informer<Service>,
    private readonly pods: Informer<Pod>,
    private readonly slices: Informer<EndpointSlice>,
  ) {}

  reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    return conflictsRequeue(signal, () => this.sync(key, signal));
  }

  private async sync(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const [namespace, name] = key.split('/') as [string, string];
    const unseen = this.created.get(key);
    if (unseen) {
      const now = this.ctx.clock.now();
      for (const [slice, at] of unseen) if (this.slices.get(`${namespace}/${slice}`) || now - at > 10_000) unseen.delete(slice);
      if (unseen.size > 0) return { requeueAfterMs: 100 };
      this.created.delete(key);
    }
    const svc = this.services.get(key);
    const existing = this.slices
      .list()
      .filter((s) => s.metadata.namespace === namespace && s.metadata.labels?.[SERVICE_NAME_LABEL] === name && s.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY)
      .sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
    const desired = svc && hasSelector(svc) && svc.spec?.type !== 'ExternalName' ? desiredSlices(svc, this.pods.list().filter((p) => p.metadata.namespace === namespace)) : [];
    // Slices keep their names: each desired slice reuses an existing one of the same ports and address type.
    const spare = new Map<string, EndpointSlice[]>();
    for (const s of existing) {
      const k = sliceKey(s);
      spare.set(k, [...(spare.get(k) ?? []), s]);
    }
    const labels = svc ? sliceLabels(svc) : {};
    const owners = svc ? [ownerRef(svc)] : [];
    for (const d of desired) {
      const reuse = spare.get(sliceKey(d))?.shift();
      const body: EndpointSlice = {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { namespace, labels, ownerReferences: owners, ...(reuse ? { name: reuse.metadata.name!, resourceVersion: reuse.metadata.resourceVersion } : { generateName: `${name}-` }) },
        addressType: d.addressType,
        endpoints: d.endpoints,
        ports: d.ports,
      };
      if (!reuse) {
        const made = await this.ctx.client.create<EndpointSlice>(objectPath(PREFIX, 'endpointslices', namespace), body, { signal });
        if (!this.created.has(key)) this.created.set(key, new Map());
        this.created.get(key)!.set(made.metadata.name!, this.ctx.clock.now());
        continue;
      }
      const same = semanticEqual(reuse.endpoints ?? [], d.endpoints) && semanticEqual(reuse.metadata.labels, labels) && semanticEqual(reuse.metadata.ownerReferences, owners);
      if (!same) await this.ctx.client.replace(objectPath(PREFIX, 'endpointslices', namespace, reuse.metadata.name!), { ...body, metadata: { ...body.metadata, annotations: reuse.metadata.annotations } }, { signal });
    }
    for (const left of [...spare.values()].flat()) {
      try {
        await this.ctx.client.delete(objectPath(PREFIX, 'endpointslices', namespace, left.metadata.name!), { preconditions: { uid: left.metadata.uid } }, { signal });
      } catch (e) {
        if (!isStatusError(e, 'NotFound') && !isStatusError(e, 'Conflict')) throw e;
      }
    }
  }
}
