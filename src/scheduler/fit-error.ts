// Why a pod fits nowhere, summarised the way upstream's FitError prints it. Users (and tools that
// parse it, like cluster autoscalers and runbooks) read this in `kubectl describe pod`:
//   0/3 nodes are available: 1 node(s) had untolerated taint {key: value}, 2 Insufficient cpu.
//   preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption
//   victims found for incoming pod..
// (The doubled full stop is upstream's: that reason ends in one and the list adds another.)
import type { FilterFailure } from './filters.js';

export const NO_NODES_MESSAGE = 'no nodes available to schedule pods';
const PREEMPTION_NOT_HELPFUL = 'Preemption is not helpful for scheduling';
const NO_VICTIMS = 'No preemption victims found for incoming pod.';

export class Diagnosis {
  numAllNodes = 0;
  /** Reason → number of nodes that gave it. */
  readonly reasons = new Map<string, number>();
  /** Nodes that failed only for reasons removing pods could fix (resources, ports). */
  resolvableNodes = 0;
  unresolvableNodes = 0;

  add(f: FilterFailure): void {
    for (const r of f.reasons) this.reasons.set(r, (this.reasons.get(r) ?? 0) + 1);
    if (f.unresolvable) this.unresolvableNodes++;
    else this.resolvableNodes++;
  }
}

function countedList(entries: [string, number][]): string {
  return entries
    .filter(([, n]) => n > 0)
    .map(([r, n]) => `${n} ${r}`)
    .sort()
    .join(', ');
}

/**
 * The full message. skiff does not preempt (yet), so the preemption part is what upstream's
 * default preemption reports when it evicts nothing: not helpful on nodes rejected for
 * unresolvable reasons, no victims on the rest. Kept because users and tools expect its shape.
 */
export function fitErrorMessage(d: Diagnosis, preemptionNever: boolean): string {
  const head = `0/${d.numAllNodes} nodes are available: ${countedList([...d.reasons])}.`;
  const preemption = preemptionNever
    ? 'preemption: not eligible due to preemptionPolicy=Never.'
    : `preemption: 0/${d.numAllNodes} nodes are available: ${countedList([
        [PREEMPTION_NOT_HELPFUL, d.unresolvableNodes],
        [NO_VICTIMS, d.resolvableNodes],
      ])}.`;
  return `${head} ${preemption}`;
}
