// The node taints the control plane owns (keys and effects as upstream), toleration matching, and
// the one way controllers change a Node's taints: read live, change, write with the read's
// resourceVersion, retry on conflict — so the agent's and an admin's taints are never lost.
import type { Node, Taint, TaintEffect } from '../api/kinds/node.js';
import { isStatusError } from '../api/errors.js';
import type { ApiClient } from '../client/rest.js';
import type { Clock } from '../util/clock.js';
import { rfc3339 } from '../util/time.js';

export const TAINT_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const TAINT_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';
export const TAINT_MEMORY_PRESSURE = 'node.kubernetes.io/memory-pressure';
export const TAINT_DISK_PRESSURE = 'node.kubernetes.io/disk-pressure';
export const TAINT_PID_PRESSURE = 'node.kubernetes.io/pid-pressure';
export const TAINT_NETWORK_UNAVAILABLE = 'node.kubernetes.io/network-unavailable';
export const TAINT_OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';

export const NOT_READY_NO_EXECUTE: Taint = { key: TAINT_NOT_READY, effect: 'NoExecute' };
export const UNREACHABLE_NO_EXECUTE: Taint = { key: TAINT_UNREACHABLE, effect: 'NoExecute' };

/** Node condition type → (status → NoSchedule taint key), upstream's nodeConditionToTaintKeyStatusMap. */
export const CONDITION_TAINTS: Record<string, Record<string, string>> = {
  Ready: { False: TAINT_NOT_READY, Unknown: TAINT_UNREACHABLE },
  MemoryPressure: { True: TAINT_MEMORY_PRESSURE },
  DiskPressure: { True: TAINT_DISK_PRESSURE },
  PIDPressure: { True: TAINT_PID_PRESSURE },
  NetworkUnavailable: { True: TAINT_NETWORK_UNAVAILABLE },
};

/** Taint keys that mirror conditions (plus unschedulable): the NoSchedule taints this controller owns. */
export const CONTROLLER_NO_SCHEDULE_KEYS = new Set([...Object.values(CONDITION_TAINTS).flatMap((m) => Object.values(m)), TAINT_UNSCHEDULABLE]);

export function taintsOf(node: Node | undefined): Taint[] {
  return node?.spec?.taints ?? [];
}

export function sameTaint(a: Taint, b: { key: string; effect: TaintEffect }): boolean {
  return a.key === b.key && a.effect === b.effect;
}

export function hasTaint(node: Node | undefined, t: { key: string; effect: TaintEffect }): boolean {
  return taintsOf(node).some((x) => sameTaint(x, t));
}

export function noExecuteTaints(node: Node | undefined): Taint[] {
  return taintsOf(node).filter((t) => t.effect === 'NoExecute');
}



/**
 * Adds and removes taints (matched by key and effect) on a live Node. Added taints get timeAdded
 * now, as upstream's SwapNodeControllerTaint; a taint already present with the same value is kept
 * as is so its timeAdded (which toleration deadlines count from) does not move. Returns false when
 * the Node is gone, true otherwise (including "nothing to change").
 */
export async function swapNodeTaints(
  client: ApiClient,
  clock: Clock,
  name: string,
  add: Taint[],
  remove: { key: string; effect: TaintEffect }[],
  signal?: AbortSignal,
): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    let node: Node;
    try {
      node = await client.get<Node>(`/api/v1/nodes/${name}`, signal ? { signal } : {});
    } catch (e) {
      if (isStatusError(e, 'NotFound')) return false;
      throw e;
    }
    const current = taintsOf(node);
    let next = current.filter((t) => !remove.some((r) => sameTaint(t, r)));
    for (const t of add) {
      const existing = next.find((x) => sameTaint(x, t));
      if (existing && (existing.value ?? '') === (t.value ?? '')) continue;
      next = next.filter((x) => !sameTaint(x, t));
      next.push({ ...t, timeAdded: rfc3339(clock.now()) });
    }
    if (next.length === current.length && next.every((t, i) => t === current[i])) return true;
    try {
      await client.patch(
        `/api/v1/nodes/${name}`,
        { metadata: { resourceVersion: node.metadata.resourceVersion }, spec: { taints: next.length > 0 ? next : null } },
        'merge',
        signal ? { signal } : {},
      );
      return true;
    } catch (e) {
      if (isStatusError(e, 'NotFound')) return false;
      if (isStatusError(e, 'Conflict') && attempt < 5) continue;
      throw e;
    }
  }
}
