// One informer per resource per process, shared by every controller that reads it.
import { collectionPath, resourcePath } from '../api/paths.js';
import { customResourceDefinitionResource } from '../apiextensions/customresourcedefinition.js';
import type { KubeObject } from '../api/types.js';
import { Informer, type ListWatchSource } from '../client/informer.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';

export class SharedInformers {
  private readonly informers = new Map<string, Informer>();
  private started?: AbortSignal;
  private readonly pendingScoped: ((started: AbortSignal) => void)[] = [];

  constructor(private readonly source: ListWatchSource, private readonly clock: Clock, private readonly log: Logger) {}

  /**
   * The informer for a collection path such as /api/v1/pods or /apis/apps/v1/deployments.
   * Read-only informers (handlers that never change an object) are separate ones, whose objects
   * a server's own cache may share with them instead of copying. A field selector narrows the
   * informer to the objects a controller cares about (one name in every namespace, say), so it is
   * not sent every other object of a busy resource.
   */
  for<T extends KubeObject = KubeObject>(path: string, opts: { readOnly?: boolean; fieldSelector?: string } = {}): Informer<T> {
    // Where every object is a copy anyway (HTTP), one informer serves both kinds of reader.
    const readOnly = (opts.readOnly ?? false) && this.source.sharesObjects === true;
    const id = `${path}${opts.fieldSelector ? `?fieldSelector=${opts.fieldSelector}` : ''}${readOnly ? ' (read-only)' : ''}`;
    let inf = this.informers.get(id);
    if (!inf) {
      inf = new Informer(this.source, { path, clock: this.clock, log: this.log, readOnly, ...(opts.fieldSelector ? { fieldSelector: opts.fieldSelector } : {}) });
      this.informers.set(id, inf);
      if (this.started) void inf.run(this.started);
    }
    return inf as unknown as Informer<T>;
  }

  /**
   * An informer of its own for a collection that may stop being served (a custom resource's):
   * it runs while the informers run and until `until` aborts, so a deleted CRD's watch stops.
   */
  scoped<T extends KubeObject = KubeObject>(path: string, until: AbortSignal, opts: { readOnly?: boolean } = {}): Informer<T> {
    const readOnly = (opts.readOnly ?? false) && this.source.sharesObjects === true;
    const inf = new Informer<T>(this.source, { path, clock: this.clock, log: this.log, readOnly });
    const run = (started: AbortSignal): void => void inf.run(AbortSignal.any([started, until]));
    if (this.started) run(this.started);
    else this.pendingScoped.push(run);
    return inf;
  }

  start(signal: AbortSignal): void {
    this.started = signal;
    for (const inf of this.informers.values()) void inf.run(signal);
    for (const run of this.pendingScoped.splice(0)) run(signal);
  }

  async waitForSync(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync()));
  }
}

/** The collections controllers inform on, from the registry. */
export const PATHS = {
  pods: resourcePath('', 'pods'),
  nodes: resourcePath('', 'nodes'),
  namespaces: resourcePath('', 'namespaces'),
  // Node heartbeats live in one namespace; the node lifecycle controller reads only those.
  leases: resourcePath('coordination.k8s.io', 'leases', 'kube-node-lease'),
  replicasets: resourcePath('apps', 'replicasets'),
  replicationcontrollers: resourcePath('', 'replicationcontrollers'),
  deployments: resourcePath('apps', 'deployments'),
  daemonsets: resourcePath('apps', 'daemonsets'),
  statefulsets: resourcePath('apps', 'statefulsets'),
  controllerrevisions: resourcePath('apps', 'controllerrevisions'),
  jobs: resourcePath('batch', 'jobs'),
  cronjobs: resourcePath('batch', 'cronjobs'),
  services: resourcePath('', 'services'),
  endpoints: resourcePath('', 'endpoints'),
  serviceaccounts: resourcePath('', 'serviceaccounts'),
  configmaps: resourcePath('', 'configmaps'),
  secrets: resourcePath('', 'secrets'),
  endpointslices: resourcePath('discovery.k8s.io', 'endpointslices'),
  pdbs: resourcePath('policy', 'poddisruptionbudgets'),
  horizontalpodautoscalers: resourcePath('autoscaling', 'horizontalpodautoscalers'),
  customresourcedefinitions: collectionPath(customResourceDefinitionResource),
  persistentvolumes: resourcePath('', 'persistentvolumes'),
  persistentvolumeclaims: resourcePath('', 'persistentvolumeclaims'),
  resourcequotas: resourcePath('', 'resourcequotas'),
  storageclasses: resourcePath('storage.k8s.io', 'storageclasses'),
} as const;
