// Cloud node lifecycle controller (upstream cloud-provider's nodelifecycle), every node-monitor
// period: a Node that is not Ready and whose instance the cloud no longer has is deleted (its pods
// then go by pod GC and are replaced); one whose instance is shut down is tainted
// node.cloudprovider.kubernetes.io/shutdown; a Ready Node is never touched but for lifting that taint.
import { isNodeReady, type Node, type Taint } from '../api/kinds/node.js';
import { isStatusError } from '../api/errors.js';
import type { CloudProvider } from '../cloud/provider.js';
import { PATHS } from '../controller-kit/informers.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { errorText } from '../util/error-text.js';

export const SHUTDOWN_TAINT = 'node.cloudprovider.kubernetes.io/shutdown';


function hasTaint(n: Node, key: string): boolean {
  return (n.spec?.taints ?? []).some((t) => t.key === key);
}

export class CloudNodeLifecycleController implements Controller {
  readonly name = 'cloud-node-lifecycle';
  constructor(private readonly cloud: CloudProvider) {}

  start(ctx: ControllerContext, signal: AbortSignal): void {
    const nodes = ctx.informers.for<Node>(PATHS.nodes);
    const recorder = ctx.recorder('cloud-node-lifecycle-controller');
    const log = ctx.log.child({ controller: 'cloud-node-lifecycle' });
    const setTaints = async (n: Node, taints: Taint[]): Promise<void> => {
      await ctx.client.patch(`/api/v1/nodes/${encodeURIComponent(n.metadata.name!)}`, { metadata: { resourceVersion: n.metadata.resourceVersion }, spec: { taints } }, 'merge', { signal });
    };
    const check = async (n: Node): Promise<void> => {
      const name = n.metadata.name!;
      // Nodes no cloud runs (a control-plane member's own, say) are not this controller's.
      if (!n.spec?.providerID) return;
      if (isNodeReady(n)) {
        if (hasTaint(n, SHUTDOWN_TAINT)) await setTaints(n, (n.spec.taints ?? []).filter((t) => t.key !== SHUTDOWN_TAINT));
        return;
      }
      if (await this.cloud.instanceShutdown(n)) {
        if (!hasTaint(n, SHUTDOWN_TAINT)) {
          await setTaints(n, [...(n.spec.taints ?? []), { key: SHUTDOWN_TAINT, effect: 'NoSchedule' }]);
          log.info({ node: name }, 'instance shut down: Node tainted');
        }
        return;
      }
      if (await this.cloud.instanceExists(n)) return;
      log.info({ node: name, providerID: n.spec.providerID }, 'instance gone: deleting its Node');
      recorder.event({ ...n, apiVersion: 'v1', kind: 'Node' }, 'Normal', 'DeletingNode', `Deleting node ${name} because it does not exist in the cloud provider`);
      await ctx.client.delete(`/api/v1/nodes/${encodeURIComponent(name)}`, undefined, { signal });
    };
    // A cloud that cannot be asked is said once per Node, not every period.
    const failing = new Set<string>();
    const tick = async (): Promise<void> => {
      for (const n of nodes.list()) {
        if (signal.aborted) return;
        const name = n.metadata.name!;
        try {
          await check(n);
          if (failing.delete(name)) log.info({ node: name }, 'the instance of this Node can be checked again');
        } catch (e) {
          if (isStatusError(e, 'NotFound') || isStatusError(e, 'Conflict')) continue;
          if (!failing.has(name)) log.warn({ node: name, err: errorText(e) }, 'could not check the instance of a Node');
          failing.add(name);
        }
      }
    };
    void (async () => {
      await nodes.waitForSync();
      while (!signal.aborted) {
        await tick();
        await ctx.clock.sleep(ctx.options.nodeMonitorPeriodMs, signal).catch(() => {});
      }
    })();
  }
}
