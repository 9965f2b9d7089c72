// ServiceAccounts controller (upstream's serviceaccounts-controller): every active namespace has a
// ServiceAccount named "default", created when the namespace appears and again if it is deleted.
import { setMaxListeners } from 'node:events';
import { isStatusError } from '../api/errors.js';
import type { ServiceAccount } from '../api/kinds/serviceaccount.js';
import type { KubeObject } from '../api/types.js';
import type { Informer } from '../client/informer.js';
import { PATHS } from '../controller-kit/informers.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { isNamespaceTerminating, objectPath } from './pod-control.js';
import { ReconcileLoop, type Reconciler } from '../controller-kit/reconciler.js';
import { isNamespaceActive } from '../api/kinds/namespace.js';

export const DEFAULT_SERVICE_ACCOUNT = 'default';

export class ServiceAccountsController implements Controller {
  readonly name = 'serviceaccounts';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    setMaxListeners(0, signal);
    const namespaces = ctx.informers.for<KubeObject>(PATHS.namespaces);
    const accounts = ctx.informers.for<ServiceAccount>(PATHS.serviceaccounts);
    const loop = new ReconcileLoop(new DefaultAccount(ctx, namespaces, accounts), { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 1);
    namespaces.addHandlers({ add: (ns) => loop.enqueue(ns.metadata.name!), update: (_o, ns) => loop.enqueue(ns.metadata.name!) });
    accounts.addHandlers({ delete: (sa) => sa.metadata.name === DEFAULT_SERVICE_ACCOUNT && loop.enqueue(sa.metadata.namespace!) });
    void Promise.all([namespaces.waitForSync(), accounts.waitForSync()]).then(() => loop.run(signal));
  }
}

class DefaultAccount implements Reconciler {
  readonly name = 'serviceaccounts';

  constructor(
    private readonly ctx: ControllerContext,
    private readonly namespaces: Informer<KubeObject>,
    private readonly accounts: Informer<ServiceAccount>,
  ) {}

  async reconcile(namespace: string, signal: AbortSignal): Promise<void> {
    const ns = this.namespaces.get(namespace);
    if (!ns || !isNamespaceActive(ns) || this.accounts.get(`${namespace}/${DEFAULT_SERVICE_ACCOUNT}`)) return;
    try {
      await this.ctx.client.create(objectPath('/api/v1', 'serviceaccounts', namespace), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DEFAULT_SERVICE_ACCOUNT, namespace } }, { signal });
    } catch (e) {
      if (!isStatusError(e, 'AlreadyExists') && !isNamespaceTerminating(e) && !isStatusError(e, 'NotFound')) throw e;
    }
  }
}
