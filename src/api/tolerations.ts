// Whether a pod's tolerations let it onto (or keep it on) a node with a taint: upstream's
// Toleration.ToleratesTaint, the one rule the scheduler, the DaemonSet controller and taint
// eviction all apply.
import type { Taint } from './kinds/node.js';
import type { Toleration } from './kinds/pod.js';

/** An empty key with Exists matches every taint; an empty operator is Equal; any other operator matches nothing. */
export function toleratesTaint(tol: Toleration, taint: Taint): boolean {
  if (tol.effect && tol.effect !== taint.effect) return false;
  if (tol.key && tol.key !== taint.key) return false;
  switch (tol.operator ?? '') {
    case '':
    case 'Equal':
      return (tol.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

export function tolerates(tolerations: readonly Toleration[] | undefined, taint: Taint): boolean {
  for (const t of tolerations ?? []) if (toleratesTaint(t, taint)) return true;
  return false;
}
