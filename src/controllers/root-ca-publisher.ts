// Root CA publisher (upstream's root-ca-cert-publisher): every active namespace holds a ConfigMap
// `kube-root-ca.crt` with the cluster CA under `ca.crt`, so workloads can verify the API server.
// It is created when a namespace appears, re-created if deleted, and put back if edited.
import { setMaxListeners } from 'node:events';
import { isStatusError } from '../api/errors.js';
import type { KubeObject } from '../api/types.js';
import type { Informer } from '../client/informer.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { isNamespaceTerminating, objectPath } from './pod-control.js';
import { ReconcileLoop, type Reconciler } from '../controller-kit/reconciler.js';
import { PATHS } from '../controller-kit/informers.js';
import { isNamespaceActive } from '../api/kinds/namespace.js';

export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

export class RootCaPublisherController implements Controller {
  readonly name = 'root-ca-cert-publisher';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    // A controller manager started without the CA (unit tests) has nothing to publish.
    const caPem = ctx.options.rootCaPem;
    if (!caPem) return;
    setMaxListeners(0, signal);
    const namespaces = ctx.informers.for<KubeObject>(PATHS.namespaces);
    const configMaps = ctx.informers.for<KubeObject>(PATHS.configmaps, { readOnly: true, fieldSelector: `metadata.name=${ROOT_CA_CONFIGMAP}` });
    const loop = new ReconcileLoop(new PublishRootCa(ctx, caPem, namespaces, configMaps), { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 1);
    namespaces.addHandlers({ add: (ns) => loop.enqueue(ns.metadata.name!), update: (_o, ns) => loop.enqueue(ns.metadata.name!) });
    const mine = (cm: KubeObject) => cm.metadata.name === ROOT_CA_CONFIGMAP && loop.enqueue(cm.metadata.namespace!);
    configMaps.addHandlers({ update: (_o, cm) => mine(cm), delete: mine });
    void Promise.all([namespaces.waitForSync(), configMaps.waitForSync()]).then(() => loop.run(signal));
  }
}

class PublishRootCa implements Reconciler {
  readonly name = 'root-ca-cert-publisher';

  constructor(
    private readonly ctx: ControllerContext,
    private readonly caPem: string,
    private readonly namespaces: Informer<KubeObject>,
    private readonly configMaps: Informer<KubeObject>,
  ) {}

  async reconcile(namespace: string, signal: AbortSignal): Promise<void> {
    const ns = this.namespaces.get(namespace);
    if (!ns || !isNamespaceActive(ns)) return;
    const current = this.configMaps.get(`${namespace}/${ROOT_CA_CONFIGMAP}`);
    const data = { 'ca.crt': this.caPem };
    const annotations = { 'kubernetes.io/description': DESCRIPTION };
    const path = objectPath('/api/v1', 'configmaps', namespace);
    try {
      if (!current) {
        await this.ctx.client.create(path, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: ROOT_CA_CONFIGMAP, namespace, annotations }, data }, { signal });
        return;
      }
      const cur = current as KubeObject & { data?: Record<string, string> };
      const sameData = Object.keys(cur.data ?? {}).length === 1 && cur.data?.['ca.crt'] === this.caPem;
      if (sameData && cur.metadata.annotations?.['kubernetes.io/description'] === DESCRIPTION) return;
      await this.ctx.client.patch(
        `${path}/${ROOT_CA_CONFIGMAP}`,
        { metadata: { resourceVersion: cur.metadata.resourceVersion, annotations }, data: { ...Object.fromEntries(Object.keys(cur.data ?? {}).map((k) => [k, null])), ...data } },
        'merge',
        { signal },
      );
    } catch (e) {
      // Namespace going away, a racing writer (the informer brings the newer version): nothing to do.
      if (!isStatusError(e, 'AlreadyExists') && !isStatusError(e, 'Conflict') && !isStatusError(e, 'NotFound') && !isNamespaceTerminating(e)) throw e;
    }
  }
}
