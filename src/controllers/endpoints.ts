// Endpoints controller (upstream pkg/controller/endpoint): every Service with a selector gets an
// Endpoints object of the same name listing the pods it selects, ready ones under `addresses`,
// the rest under `notReadyAddresses` (all under `addresses` with publishNotReadyAddresses), one
// subset per distinct set of ports. A named targetPort is looked up in each pod's container
// ports, so pods may serve one Service port on different numbers. Services without a selector
// keep Endpoints written by hand; a deleted Service's Endpoints go with it.
//
// With skiff's process runtime a pod's IP is its node's, so addresses repeat across pods of a
// node; the list is still what clients and `kubectl describe service` read.
import { setMaxListeners } from 'node:events';
import { isStatusError } from '../api/errors.js';
import type { EndpointAddress, EndpointPort, Endpoints, EndpointSubset } from '../api/kinds/endpoints.js';
import { semanticEqual } from '../api/kinds/json.js';
import { isPodReady, type Pod } from '../api/kinds/pod.js';
import type { Service, ServicePort } from '../api/kinds/service.js';
import { selectorFromSet, type LabelSelector } from '../api/labels.js';
import type { Informer } from '../client/informer.js';
import { objectKeyOf } from '../client/informer.js';
import { PATHS } from '../controller-kit/informers.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { conflictsRequeue, objectPath } from './pod-control.js';
import { ReconcileLoop, type Reconciler, type ReconcileResult } from '../controller-kit/reconciler.js';

export const HEADLESS_LABEL = 'service.kubernetes.io/headless';
/** Set on every write, as upstream does; it also marks the Endpoints this controller manages. */
export const LAST_CHANGE_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time';

/** Upstream drops an empty selector map: such a Service has no selector and keeps hand-written Endpoints. */
export function hasSelector(svc: Service): boolean {
  const sel = svc.spec?.selector;
  return sel !== null && typeof sel === 'object' && Object.keys(sel).length > 0;
}

/** Parsed selectors by Service object (informers replace objects on update, so entries never go stale). */
const selectors = new WeakMap<Service, LabelSelector>();

export function selectorOf(svc: Service): LabelSelector {
  let sel = selectors.get(svc);
  if (!sel) selectors.set(svc, (sel = selectorFromSet(svc.spec?.selector)));
  return sel;
}

/**
 * Wakes the Services a pod change matters to: those whose selector matches the pod, before or
 * after a label change. Both endpoints controllers follow pods this way.
 */
export function watchSelectedPods(services: Informer<Service>, pods: Informer<Pod>, enqueue: (svc: Service) => void): void {
  const touched = (...ps: Pod[]) => {
    const ns = ps[0]!.metadata.namespace;
    for (const svc of services.list()) {
      if (svc.metadata.namespace !== ns || !hasSelector(svc)) continue;
      const selector = selectorOf(svc);
      if (ps.some((p) => selector.matches(p.metadata.labels))) enqueue(svc);
    }
  };
  pods.addHandlers({ add: (p) => touched(p), update: (o, p) => touched(o, p), delete: (p) => touched(p) });
}

/** Upstream ShouldPodBeInEndpoints: an address to list, and no finished or unaddressed pods. */
export function listable(pod: Pod, includeTerminating: boolean): boolean {
  if (!pod.status?.podIP) return false;
  if (!includeTerminating && pod.metadata.deletionTimestamp) return false;
  const phase = pod.status.phase;
  return phase !== 'Succeeded' && phase !== 'Failed';
}

/** The port a Service port reaches on this pod; undefined when the pod has no such named port. */
export function targetPortOn(pod: Pod, sp: ServicePort): number | undefined {
  const target = sp.targetPort ?? sp.port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(target)) return Number(target);
  const protocol = sp.protocol ?? 'TCP';
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c?.ports ?? []) if (p?.name === target && (p.protocol ?? 'TCP') === protocol) return p.containerPort;
  }
  return undefined;
}

function addressOf(pod: Pod): EndpointAddress {
  const a: EndpointAddress = { ip: pod.status!.podIP! };
  if (pod.spec?.nodeName) a.nodeName = pod.spec.nodeName;
  a.targetRef = { kind: 'Pod', namespace: pod.metadata.namespace!, name: pod.metadata.name!, uid: pod.metadata.uid! };
  return a;
}

const byAddress = (a: EndpointAddress, b: EndpointAddress) => (a.ip !== b.ip ? (a.ip < b.ip ? -1 : 1) : (a.targetRef?.name ?? '') < (b.targetRef?.name ?? '') ? -1 : 1);
const byPort = (a: EndpointPort, b: EndpointPort) => ((a.name ?? '') !== (b.name ?? '') ? ((a.name ?? '') < (b.name ?? '') ? -1 : 1) : a.port - b.port);

/** The subsets a Service's Endpoints should hold, given the pods in its namespace. */
export function desiredSubsets(svc: Service, pods: Pod[]): EndpointSubset[] {
  const selector = selectorOf(svc);
  const publishNotReady = svc.spec?.publishNotReadyAddresses === true;
  const headless = svc.spec?.clusterIP === 'None';
  const ports = svc.spec?.ports ?? [];
  const groups = new Map<string, EndpointSubset>();
  for (const pod of pods) {
    if (!selector.matches(pod.metadata.labels) || !listable(pod, publishNotReady)) continue;
    const podPorts: EndpointPort[] = [];
    for (const sp of ports) {
      const port = targetPortOn(pod, sp);
      if (port === undefined) continue;
      const ep: EndpointPort = { port, protocol: sp.protocol ?? 'TCP' };
      if (sp.name) ep.name = sp.name;
      if (sp.appProtocol) ep.appProtocol = sp.appProtocol;
      podPorts.push(ep);
    }
    // A pod serving none of the ports is listed only for a headless Service without ports.
    if (podPorts.length === 0 && !(headless && ports.length === 0)) continue;
    podPorts.sort(byPort);
    const key = JSON.stringify(podPorts);
    let subset = groups.get(key);
    if (!subset) groups.set(key, (subset = podPorts.length > 0 ? { ports: podPorts } : {}));
    const list = publishNotReady || isPodReady(pod) ? (subset.addresses ??= []) : (subset.notReadyAddresses ??= []);
    list.push(addressOf(pod));
  }
  const subsets = [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, s]) => s);
  for (const s of subsets) {
    s.addresses?.sort(byAddress);
    s.notReadyAddresses?.sort(byAddress);
  }
  // Field order as upstream serializes an EndpointSubset.
  return subsets.map((s) => ({
    ...(s.addresses ? { addresses: s.addresses } : {}),
    ...(s.notReadyAddresses ? { notReadyAddresses: s.notReadyAddresses } : {}),
    ...(s.ports ? { ports: s.ports } : {}),
  }));
}

function desiredLabels(svc: Service): Record<string, string> | undefined {
  const labels: Record<string, string> = { ...(svc.metadata.labels ?? {}) };
  if (svc.spec?.clusterIP === 'None') labels[HEADLESS_LABEL] = '';
  else delete labels[HEADLESS_LABEL];
  return Object.keys(labels).length > 0 ? labels : undefined;
}

export class EndpointsController implements Controller {
  readonly name = 'endpoints';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    setMaxListeners(0, signal);
    const services = ctx.informers.for<Service>(PATHS.services);
    const pods = ctx.informers.for<Pod>(PATHS.pods, { readOnly: true });
    const endpoints = ctx.informers.for<Endpoints>(PATHS.endpoints);
    const reconciler = new EndpointsReconciler(ctx, services, pods, endpoints);
    const loop = new ReconcileLoop(reconciler, { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 2);
    services.addHandlers({
      add: (s) => loop.enqueue(objectKeyOf(s)),
      update: (_o, s) => loop.enqueue(objectKeyOf(s)),
      delete: (s) => {
        reconciler.serviceDeleted(objectKeyOf(s));
        loop.enqueue(objectKeyOf(s));
      },
    });
    watchSelectedPods(services, pods, (svc) => loop.enqueue(objectKeyOf(svc)));
    // Endpoints changed or deleted by someone else are put back; ones left by a deleted Service go.
    endpoints.addHandlers({ add: (e) => loop.enqueue(objectKeyOf(e)), update: (_o, e) => loop.enqueue(objectKeyOf(e)), delete: (e) => loop.enqueue(objectKeyOf(e)) });
    void Promise.all([services.waitForSync(), pods.waitForSync(), endpoints.waitForSync()]).then(() => loop.run(signal));
  }
}

class EndpointsReconciler implements Reconciler {
  readonly name = 'endpoints';
  /** Services seen deleted: their Endpoints go, whoever wrote them (upstream deletes by name). */
  private readonly deleted = new Set<string>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly services: Informer<Service>,
    private readonly pods: Informer<Pod>,
    private readonly endpoints: Informer<Endpoints>,
  ) {}

  serviceDeleted(key: string): void {
    if (this.deleted.size > 4096) this.deleted.clear();
    this.deleted.add(key);
  }

  reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    return conflictsRequeue(signal, () => this.sync(key, signal));
  }

  private async sync(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const [namespace, name] = key.split('/') as [string, string];
    const path = objectPath('/api/v1', 'endpoints', namespace, name);
    const svc = this.services.get(key);
    const current = this.endpoints.get(key);
    if (!svc) {
      // A Service deleted takes its Endpoints along. Endpoints found without a Service otherwise
      // are leftovers only if this controller wrote them; others are someone's own.
      const serviceWentAway = this.deleted.delete(key);
      if (current && (serviceWentAway || current.metadata.annotations?.[LAST_CHANGE_ANNOTATION] !== undefined)) {
        await this.ignoreNotFound(this.ctx.client.delete(path, { preconditions: { uid: current.metadata.uid } }, { signal }));
      }
      return;
    }
    this.deleted.delete(key);
    if (!hasSelector(svc) || svc.spec?.type === 'ExternalName') return;
    const pods = this.pods.list().filter((p) => p.metadata.namespace === namespace);
    const subsets = desiredSubsets(svc, pods);
    const labels = desiredLabels(svc);
    if (current && semanticEqual(current.subsets ?? [], subsets) && semanticEqual(current.metadata.labels, labels)) return;
    const annotations = { ...(current?.metadata.annotations ?? {}), [LAST_CHANGE_ANNOTATION]: new Date(this.ctx.clock.now()).toISOString() };
    const body: Endpoints = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name, namespace, ...(labels ? { labels } : {}), annotations, ...(current ? { resourceVersion: current.metadata.resourceVersion } : {}) },
      ...(subsets.length > 0 ? { subsets } : {}),
    };
    if (current) {
      await this.ctx.client.replace(path, body, { signal });
      return;
    }
    try {
      await this.ctx.client.create(objectPath('/api/v1', 'endpoints', namespace), body, { signal });
    } catch (e) {
      // Created meanwhile (or by hand): once the informer has it, the next pass replaces it.
      if (isStatusError(e, 'AlreadyExists')) return { requeueAfterMs: 200 };
      throw e;
    }
  }

  private async ignoreNotFound(p: Promise<unknown>): Promise<void> {
    try {
      await p;
    } catch (e) {
      if (!isStatusError(e, 'NotFound') && !isStatusError(e, 'Conflict')) throw e;
    }
  }
}
