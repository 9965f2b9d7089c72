// Evicting every pod of a node through the eviction API, as `kubectl drain` does: the agent's
// retire (N5) and the cluster autoscaler's scale-down both go this way, so PodDisruptionBudgets
// hold back either.
import { isDaemonSetPod, isTerminal, type Pod } from '../api/kinds/pod.js';
import { isStatusError } from '../api/errors.js';
import type { Clock } from '../util/clock.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/log.js';
import type { ApiClient } from './rest.js';

export interface EvictOptions {
  api: Pick<ApiClient, 'create'>;
  clock: Clock;
  log: Logger;
  /** The pods bound to this node right now (the pod informer's cache). */
  pods(): Pod[];
  signal: AbortSignal;
  retryMs?: number;
}

/**
 * Evicts every pod on the node through the eviction API (so PodDisruptionBudgets are honoured) and
 * waits until they are gone. A pod a budget protects is retried until the budget allows it.
 */
export async function evictAll(o: EvictOptions): Promise<void> {
  const blocked = new Set<string>();
  for (;;) {
    if (o.signal.aborted) return;
    const pending = o.pods().filter((p) => !isTerminal(p) && !isDaemonSetPod(p));
    if (pending.length === 0) return;
    for (const pod of pending) {
      if (pod.metadata.deletionTimestamp) continue;
      const ns = pod.metadata.namespace ?? 'default';
      const key = `${ns}/${pod.metadata.name}`;
      try {
        await o.api.create(`/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(pod.metadata.name!)}/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod.metadata.name, namespace: ns } });
        o.log.info({ pod: key }, 'evicted pod');
      } catch (e) {
        if (isStatusError(e) && e.code === 404) continue;
        if (isStatusError(e) && e.code === 429) {
          if (!blocked.has(key)) {
            blocked.add(key);
            o.log.warn({ pod: key, err: errorText(e) }, 'eviction blocked by a disruption budget; retrying');
          }
        } else {
          o.log.debug({ pod: key, err: errorText(e) }, 'eviction failed; retrying');
        }
      }
    }
    await o.clock.sleep(o.retryMs ?? 1000, o.signal).catch(() => {});
  }
}
