// Cloud node controller (upstream cloud-provider's node controller): a Node registered by an
// agent with --cloud-provider=external waits, tainted node.cloudprovider.kubernetes.io/uninitialized,
// until this controller has asked the cloud about its instance and set what the cloud knows:
// providerID, instance type, zone and region labels, addresses. Then the taint is lifted.
import { UNINITIALIZED_TAINT, type Node, type Taint } from '../api/kinds/node.js';
import { isStatusError } from '../api/errors.js';
import type { CloudProvider } from '../cloud/provider.js';
import { INSTANCE_TYPE_LABEL, REGION_LABEL, ZONE_LABEL } from '../cloud/local-provider.js';
import type { EventRecorder } from '../controller-kit/events.js';
import { PATHS } from '../controller-kit/informers.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { ReconcileLoop, type Reconciler, type ReconcileResult } from '../controller-kit/reconciler.js';

/** Retry for a Node whose instance the cloud does not know yet. */
const NOT_FOUND_RETRY_MS = 5_000;

export class CloudNodeController implements Controller {
  readonly name = 'cloud-node';
  constructor(private readonly cloud: CloudProvider) {}

  start(ctx: ControllerContext, signal: AbortSignal): void {
    const nodes = ctx.informers.for<Node>(PATHS.nodes);
    const loop = new ReconcileLoop(new CloudNodeReconciler(ctx, this.cloud), { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 2);
    const enqueue = (n: Node): void => {
      if ((n.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT)) loop.enqueue(n.metadata.name!);
    };
    nodes.addHandlers({ add: enqueue, update: (_o, n) => enqueue(n) });
    void nodes.waitForSync().then(() => loop.run(signal));
  }
}

class CloudNodeReconciler implements Reconciler {
  readonly name = 'cloud-node';
  private readonly recorder: EventRecorder;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly cloud: CloudProvider,
  ) {
    this.recorder = ctx.recorder('cloud-node-controller');
  }

  async reconcile(name: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const node = this.ctx.informers.for<Node>(PATHS.nodes).get(name);
    if (!node || !(node.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT)) return;
    const meta = await this.cloud.instanceMetadata(node);
    if (!meta) {
      this.ctx.log.info({ node: name, providerID: node.spec?.providerID }, 'cloud does not know the instance of this Node yet');
      return { requeueAfterMs: NOT_FOUND_RETRY_MS };
    }
    const taints: Taint[] = (node.spec?.taints ?? []).filter((t) => t.key !== UNINITIALIZED_TAINT);
    try {
      // One merge patch: the labels and the lifted taint appear together, so nothing schedules on a half-initialised Node.
      await this.ctx.client.patch(
        `/api/v1/nodes/${encodeURIComponent(name)}`,
        {
          metadata: { labels: { [INSTANCE_TYPE_LABEL]: meta.instanceType, [ZONE_LABEL]: meta.zone, [REGION_LABEL]: meta.region }, resourceVersion: node.metadata.resourceVersion },
          spec: { providerID: node.spec?.providerID || meta.providerID, taints: taints.length > 0 ? taints : null },
        },
        'merge',
        { signal },
      );
    } catch (e) {
      if (isStatusError(e, 'Conflict')) return { requeueAfterMs: 100 };
      if (isStatusError(e, 'NotFound')) return;
      throw e;
    }
    this.ctx.log.info({ node: name, zone: meta.zone, instanceType: meta.instanceType }, 'Node initialised from its cloud instance');
    this.recorder.event({ ...node, apiVersion: 'v1', kind: 'Node' }, 'Normal', 'Synced', 'Node synced successfully');
  }
}
