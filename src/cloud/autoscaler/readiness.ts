// How the autoscaler counts a registered Node, as upstream's cluster state registry does:
//  - ready: Ready and initialised by the cloud;
//  - notStarted: never Ready since it registered (its Ready condition last changed within
//    MaxStatusSettingDelayAfterCreation of the Node's creation, or it still carries the cloud's
//    uninitialized taint), and younger than the startup bound: capacity that is coming, counted
//    as upcoming and not as unready;
//  - unready: everything else — a node that was Ready and stopped being, or one that never came up
//    within the bound. Only these (and long-unregistered instances) count against cluster health.
import { UNINITIALIZED_TAINT, type Node } from '../../api/kinds/node.js';

export type NodeReadiness = 'ready' | 'notStarted' | 'unready';

/** Upstream's MaxStatusSettingDelayAfterCreation: a Ready condition set this soon after creation is the node's first. */
export const MAX_STATUS_SETTING_DELAY_AFTER_CREATION_MS = 120_000;

export function nodeReadiness(node: Node, now: number, maxStartupMs: number): NodeReadiness {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  const uninitialized = (node.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT);
  if (ready?.status === 'True' && !uninitialized) return 'ready';
  const created = Date.parse(node.metadata.creationTimestamp ?? '');
  if (!Number.isFinite(created) || now - created >= maxStartupMs) return 'unready';
  if (uninitialized || !ready) return 'notStarted';
  const changed = Date.parse(ready.lastTransitionTime ?? '');
  return !Number.isFinite(changed) || changed - created < MAX_STATUS_SETTING_DELAY_AFTER_CREATION_MS ? 'notStarted' : 'unready';
}
