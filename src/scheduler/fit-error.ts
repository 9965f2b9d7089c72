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
  /** A PreFilter's refusal, which holds for every node (upstream prints it instead of per-node reasons). */
  preFilterMsg: string | undefined;
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

/** Upstream's post-filter message when preemption could not help: not on nodes rejected for reasons removing pods cannot fix, no victims on the rest. */
export function noPreemptionMessage(d: Diagnosis): string {
  return `preemption: 0/${d.numAllNodes} nodes are available: ${countedList([
    [PREEMPTION_NOT_HELPFUL, d.unresolvableNodes],
    [NO_VICTIMS, d.resolvableNodes],
  ])}.`;
}

/** The full message: why no node fits, then what preemption said (nothing when it nominated a node). */
export function fitErrorMessage(d: Diagnosis, postFilter: string | undefined): string {
  const head = `0/${d.numAllNodes} nodes are available: ${d.preFilterMsg ?? countedList([...d.reasons])}.`;
  return postFilter ? `${head} ${postFilter}` : head;
}
