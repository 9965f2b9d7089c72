// Leaving the cluster on purpose: cordon, then either evict every pod (retire, N5: PDBs honoured,
// like `kubectl drain`) or stop them in place (graceful exit, N6), then remove the Lease and Node.
import type { Pod } from '../api/kinds/pod.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { isStatusError } from '../api/errors.js';
import { type AgentApi, isConflict, isNotFound, nodePath, podPath } from './api.js';
import { errorText } from '../util/error-text.js';

/** Pods a drain leaves to be stopped in place: DaemonSet pods (their controller would put them back). */
export function isDaemonSetPod(pod: Pod): boolean {
  return (pod.metadata.ownerReferences ?? []).some((r) => r.kind === 'DaemonSet' && r.controller === true);
}

export function isTerminal(pod: Pod): boolean {
  const p = pod.status?.phase;
  return p === 'Succeeded' || p === 'Failed';
}

/** Runs fn with retries until it succeeds or the deadline passes; false if it never did. */
export async function withinDeadline(clock: Clock, deadline: number, fn: () => Promise<void>): Promise<boolean> {
  let wait = 100;
  for (;;) {
    try {
      await fn();
      return true;
    } catch {
      if (clock.now() + wait > deadline) return false;
      await clock.sleep(wait).catch(() => {});
      wait = Math.min(wait * 2, 1000);
    }
  }
}

export async function cordon(api: AgentApi, nodeName: string): Promise<void> {
  try {
    await api.patch(nodePath(nodeName), { spec: { unschedulable: true } }, 'merge');
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

/**
 * Marks a cordon the agent made only to shut down. If the Node outlives the shutdown (the API went
 * away before the Node could be deleted), the next start finds the mark and uncordons, instead of
 * coming back unschedulable for good. A Node an operator had cordoned is left as it is, unmarked.
 */
export const SHUTDOWN_CORDON_ANNOTATION = 'skiff.dev/shutdown-cordon';

export async function cordonForShutdown(api: AgentApi, nodeName: string, wasUnschedulable: boolean): Promise<void> {
  if (wasUnschedulable) return;
  try {
    await api.patch(nodePath(nodeName), { metadata: { annotations: { [SHUTDOWN_CORDON_ANNOTATION]: 'true' } }, spec: { unschedulable: true } }, 'merge');
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

export async function deleteNode(api: AgentApi, nodeName: string, uid: string | undefined): Promise<void> {
  try {
    await api.delete(nodePath(nodeName), uid ? { preconditions: { uid } } : undefined);
  } catch (e) {
    if (!isNotFound(e) && !isConflict(e)) throw e;
  }
}

export interface EvictOptions {
  api: AgentApi;
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
        await o.api.create(`${podPath(ns, pod.metadata.name!)}/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod.metadata.name, namespace: ns } });
        o.log.info({ pod: key }, 'evicted pod');
      } catch (e) {
        if (isNotFound(e)) continue;
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
