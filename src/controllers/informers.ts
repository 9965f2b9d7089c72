// One informer per resource per process, shared by every controller that reads it.
import type { KubeObject } from '../api/types.js';
import { Informer, type ListWatchSource } from '../client/informer.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';

export class SharedInformers {
  private readonly informers = new Map<string, Informer>();
  private started?: AbortSignal;

  constructor(private readonly source: ListWatchSource, private readonly clock: Clock, private readonly log: Logger) {}

  /** The informer for a collection path such as /api/v1/pods or /apis/apps/v1/deployments. */
  for<T extends KubeObject = KubeObject>(path: string): Informer<T> {
    let inf = this.informers.get(path);
    if (!inf) {
      inf = new Informer(this.source, { path, clock: this.clock, log: this.log });
      this.informers.set(path, inf);
      if (this.started) void inf.run(this.started);
    }
    return inf as unknown as Informer<T>;
  }

  start(signal: AbortSignal): void {
    this.started = signal;
    for (const inf of this.informers.values()) void inf.run(signal);
  }

  async waitForSync(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync()));
  }
}

export const PATHS = {
  pods: '/api/v1/pods',
  nodes: '/api/v1/nodes',
  namespaces: '/api/v1/namespaces',
  leases: '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
  replicasets: '/apis/apps/v1/replicasets',
  deployments: '/apis/apps/v1/deployments',
  daemonsets: '/apis/apps/v1/daemonsets',
  services: '/api/v1/services',
  endpoints: '/api/v1/endpoints',
  pdbs: '/apis/policy/v1/poddisruptionbudgets',
} as const;
