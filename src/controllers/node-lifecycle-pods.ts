// Pod helpers shared by the node-facing controllers: an index of pods by node over the shared pod
// informer (so a pass over N nodes does not scan all pods N times), and the status writes they make.
import type { Pod, PodCondition } from '../api/kinds/pod.js';
import { isStatusError } from '../api/errors.js';
import type { Informer } from '../client/informer.js';
import { objectKeyOf } from '../client/informer.js';
import type { ApiClient } from '../client/rest.js';
import type { Clock } from '../util/clock.js';
import { rfc3339 } from '../util/time.js';

export class PodsByNode {
  private readonly byNode = new Map<string, Set<string>>();

  constructor(private readonly informer: Informer<Pod>) {
    informer.addHandlers({
      add: (p) => this.put(p),
      update: (o, n) => {
        if (o.spec?.nodeName !== n.spec?.nodeName) this.drop(o);
        this.put(n);
      },
      delete: (p) => this.drop(p),
    });
  }

  private put(p: Pod): void {
    const node = p.spec?.nodeName;
    if (!node) return;
    let set = this.byNode.get(node);
    if (!set) this.byNode.set(node, (set = new Set()));
    set.add(objectKeyOf(p));
  }

  private drop(p: Pod): void {
    const node = p.spec?.nodeName;
    if (!node) return;
    const set = this.byNode.get(node);
    set?.delete(objectKeyOf(p));
    if (set?.size === 0) this.byNode.delete(node);
  }

  /** Pods the informer currently knows on a node. */
  podsOn(node: string): Pod[] {
    const out: Pod[] = [];
    for (const key of this.byNode.get(node) ?? []) {
      const p = this.informer.get(key);
      if (p && p.spec?.nodeName === node) out.push(p);
    }
    return out;
  }

  nodeNames(): string[] {
    return [...this.byNode.keys()];
  }
}

export function podCondition(pod: Pod | undefined, type: string): PodCondition | undefined {
  return pod?.status?.conditions?.find((c) => c.type === type);
}

export function podRef(pod: Pod): Pod {
  // Informer objects may lack kind/apiVersion; events need them.
  return { ...pod, apiVersion: 'v1', kind: 'Pod' };
}

export function podPath(namespace: string, name: string): string {
  return `/api/v1/namespaces/${namespace}/pods/${name}`;
}

/**
 * Reads the pod live and strategic-merge-patches its status with what `change` returns for it
 * (conditions merge by type, so the agent's other conditions stay), guarded by the read's
 * resourceVersion and retried on conflict. `uid` pins the pod decided about, not a same-named
 * successor. Returns the live pod (undefined when it is gone or is another pod now).
 */
export async function patchPodStatus(
  client: ApiClient,
  namespace: string,
  name: string,
  uid: string | undefined,
  change: (live: Pod) => Record<string, unknown> | undefined,
  signal?: AbortSignal,
): Promise<Pod | undefined> {
  const o = signal ? { signal } : {};
  for (let attempt = 0; ; attempt++) {
    let live: Pod;
    try {
      live = await client.get<Pod>(podPath(namespace, name), o);
    } catch (e) {
      if (isStatusError(e, 'NotFound')) return undefined;
      throw e;
    }
    if (uid && live.metadata.uid !== uid) return undefined;
    const status = change(live);
    if (!status) return live;
    try {
      return await client.patch<Pod>(`${podPath(namespace, name)}/status`, { metadata: { resourceVersion: live.metadata.resourceVersion }, status }, 'strategic', o);
    } catch (e) {
      if (isStatusError(e, 'NotFound')) return undefined;
      if (isStatusError(e, 'Conflict') && attempt < 5) continue;
      throw e;
    }
  }
}

/** Upstream UpdatePodCondition: true when the condition differs from what the pod has. */
export function conditionDiffers(pod: Pod, want: PodCondition): boolean {
  const have = podCondition(pod, want.type);
  return !have || have.status !== want.status || have.reason !== want.reason || have.message !== want.message;
}

/** A DisruptionTarget=True condition as upstream writes before deleting a pod. */
export function disruptionTarget(reason: string, message: string, clock: Clock): PodCondition {
  return { type: 'DisruptionTarget', status: 'True', reason, message, lastTransitionTime: rfc3339(clock.now()) };
}
