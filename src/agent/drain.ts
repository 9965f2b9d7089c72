// Leaving the cluster on purpose: cordon, then either evict every pod (retire, N5: PDBs honoured,
// like `kubectl drain`) or stop them in place (graceful exit, N6), then remove the Lease and Node.
import type { Clock } from '../util/clock.js';
import { type AgentApi, isConflict, isNotFound, nodePath } from './api.js';

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
