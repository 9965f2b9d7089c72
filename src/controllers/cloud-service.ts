// Service controller (upstream cloud-provider's): a Service of type LoadBalancer gets a load
// balancer from the cloud, forwarding its ports to every ready node's NodePorts, and its address in
// status.loadBalancer.ingress. The finalizer service.kubernetes.io/load-balancer-cleanup keeps the
// Service until its load balancer is gone, whether the Service is deleted or changes type. A
// Service with spec.loadBalancerClass belongs to another implementation and is left alone. When
// the nodes change, every load balancer's targets follow.
import type { Node } from '../api/kinds/node.js';
import type { Service } from '../api/kinds/service.js';
import type { CloudProvider, LoadBalancers } from '../cloud/provider.js';
import type { EventRecorder } from '../controller-kit/events.js';
import { PATHS } from '../controller-kit/informers.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { ReconcileLoop, type Reconciler, type ReconcileResult } from '../controller-kit/reconciler.js';
import { isStatusError } from '../api/errors.js';

export const LOAD_BALANCER_CLEANUP_FINALIZER = 'service.kubernetes.io/load-balancer-cleanup';
/** Nodes with this label are no load balancer's target (upstream's well-known label). */
const EXCLUDE_LABEL = 'node.kubernetes.io/exclude-from-external-load-balancers';

/** Upstream's cloudprovider.DefaultLoadBalancerName: "a" and the Service's UID without dashes, at most 32 characters. */
export function loadBalancerName(svc: Service): string {
  return `a${(svc.metadata.uid ?? '').replace(/-/g, '')}`.slice(0, 32);
}

function wantsLoadBalancer(svc: Service): boolean {
  return svc.spec?.type === 'LoadBalancer' && !svc.spec.loadBalancerClass && !svc.metadata.deletionTimestamp;
}

/** A node's address as a load balancer target, or undefined when it is none (not Ready, excluded, going). */
function targetOf(n: Node): string | undefined {
  if (n.metadata.deletionTimestamp || n.metadata.labels?.[EXCLUDE_LABEL] !== undefined) return undefined;
  if (!n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return undefined;
  return n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address || undefined;
}

function targets(nodes: Node[]): string[] {
  return nodes
    .map(targetOf)
    .filter((a): a is string => !!a)
    .sort();
}

export class CloudServiceController implements Controller {
  readonly name = 'service';
  constructor(private readonly cloud: CloudProvider) {}

  start(ctx: ControllerContext, signal: AbortSignal): void {
    const lbs = this.cloud.loadBalancers?.();
    if (!lbs) {
      ctx.log.info({ cloud: this.cloud.name() }, 'the cloud has no load balancers: Services of type LoadBalancer keep no address');
      return;
    }
    const services = ctx.informers.for<Service>(PATHS.services);
    const nodes = ctx.informers.for<Node>(PATHS.nodes);
    const loop = new ReconcileLoop(new ServiceReconciler(ctx, lbs), { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 1);
    const key = (s: Service) => `${s.metadata.namespace}/${s.metadata.name}`;
    const enqueue = (s: Service): void => {
      if (s.spec?.type === 'LoadBalancer' || s.metadata.finalizers?.includes(LOAD_BALANCER_CLEANUP_FINALIZER)) loop.enqueue(key(s));
    };
    services.addHandlers({ add: enqueue, update: (_o, s) => enqueue(s), delete: enqueue });
    // The targets are the ready nodes: a change there is a change of every load balancer.
    let lastTargets = '';
    const nodesChanged = (): void => {
      const now = targets(nodes.list()).join();
      if (now === lastTargets) return;
      lastTargets = now;
      for (const s of services.list()) enqueue(s);
    };
    // Heartbeats and status writes that leave a node's target as it was change no load balancer.
    nodes.addHandlers({ add: nodesChanged, update: (old, n) => targetOf(old) !== targetOf(n) && nodesChanged(), delete: nodesChanged });
    void Promise.all([services.waitForSync(), nodes.waitForSync()]).then(() => loop.run(signal));
  }
}

class ServiceReconciler implements Reconciler {
  readonly name = 'service';
  private readonly recorder: EventRecorder;
  /** What each load balancer was last ensured with, so an unchanged Service is not sent again. */
  private readonly ensured = new Map<string, string>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly lbs: LoadBalancers,
  ) {
    this.recorder = ctx.recorder('service-controller');
  }

  private path(svc: Service, sub = ''): string {
    return `/api/v1/namespaces/${encodeURIComponent(svc.metadata.namespace!)}/services/${encodeURIComponent(svc.metadata.name!)}${sub}`;
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const svc = this.ctx.informers.for<Service>(PATHS.services).get(key);
    if (!svc) return;
    const finalizers = svc.metadata.finalizers ?? [];
    if (!wantsLoadBalancer(svc)) {
      if (!finalizers.includes(LOAD_BALANCER_CLEANUP_FINALIZER)) return;
      const name = loadBalancerName(svc);
      this.recorder.event(svc, 'Normal', 'DeletingLoadBalancer', 'Deleting load balancer');
      await this.lbs.delete(name);
      this.ensured.delete(name);
      if (!svc.metadata.deletionTimestamp && (svc.status?.loadBalancer?.ingress ?? []).length > 0) {
        await this.ctx.client.patch(this.path(svc, '/status'), { status: { loadBalancer: {} } }, 'merge');
      }
      await this.patchFinalizers(svc, finalizers.filter((f) => f !== LOAD_BALANCER_CLEANUP_FINALIZER));
      this.recorder.event(svc, 'Normal', 'DeletedLoadBalancer', 'Deleted load balancer');
      this.ctx.log.info({ service: key, loadBalancer: name }, 'load balancer deleted');
      return;
    }
    // The finalizer first: a Service deleted from here on still has its load balancer removed.
    if (!finalizers.includes(LOAD_BALANCER_CLEANUP_FINALIZER)) {
      await this.patchFinalizers(svc, [...finalizers, LOAD_BALANCER_CLEANUP_FINALIZER]);
      return;
    }
    const name = loadBalancerName(svc);
    const ports = (svc.spec?.ports ?? []).filter((p) => p.nodePort).map((p) => ({ port: p.port, protocol: p.protocol ?? 'TCP', nodePort: p.nodePort! }));
    const nodes = targets(this.ctx.informers.for<Node>(PATHS.nodes).list());
    const wanted = JSON.stringify({ ports, nodes });
    const ingress = svc.status?.loadBalancer?.ingress ?? [];
    if (this.ensured.get(name) === wanted && ingress.length > 0) return;
    this.recorder.event(svc, 'Normal', 'EnsuringLoadBalancer', 'Ensuring load balancer');
    let ip: string;
    try {
      ({ ip } = await this.lbs.ensure({ name, ports, nodes }));
    } catch (e) {
      this.recorder.event(svc, 'Warning', 'SyncLoadBalancerFailed', `Error syncing load balancer: failed to ensure load balancer: ${(e as Error).message}`);
      throw e;
    }
    this.ensured.set(name, wanted);
    if (ingress.length !== 1 || ingress[0]!.ip !== ip) {
      await this.ctx.client.patch(this.path(svc, '/status'), { status: { loadBalancer: { ingress: [{ ip }] } } }, 'merge');
      this.ctx.log.info({ service: key, loadBalancer: name, ip }, 'load balancer ensured');
    }
    this.recorder.event(svc, 'Normal', 'EnsuredLoadBalancer', 'Ensured load balancer');
  }

  private async patchFinalizers(svc: Service, finalizers: string[]): Promise<void> {
    try {
      await this.ctx.client.patch(this.path(svc), { metadata: { finalizers: finalizers.length > 0 ? finalizers : null, resourceVersion: svc.metadata.resourceVersion } }, 'merge');
    } catch (e) {
      // Gone meanwhile: nothing left to keep.
      if (isStatusError(e, 'NotFound')) return;
      throw e;
    }
  }
}
