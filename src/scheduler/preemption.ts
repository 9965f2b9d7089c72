// Preemption (upstream's DefaultPreemption post-filter): a pod that fits nowhere may make room by
// evicting pods of lower priority. On each node where only removable pods stand in the way, the
// fewest and least important victims are chosen (every lower-priority pod taken away, then given
// back most important first while the pod still fits, PodDisruptionBudget-protected ones first);
// then one node is picked by upstream's criteria, in order: fewest budget violations, lowest
// highest victim priority, lowest priority sum, fewest victims, victims started most recently.
import { matchLabelSelectorObject } from '../api/labels.js';
import { timestampMs } from '../api/kinds/printing.js';
import { runFilters } from './filters.js';
import type { ExtraFilter } from './decide.js';
import type { NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';

/** A PodDisruptionBudget as preemption reads it. */
export interface BudgetView {
  namespace: string;
  selector: unknown;
  disruptionsAllowed: number;
  /** Pods already being disrupted under this budget: evicting them again costs nothing. */
  disrupted: ReadonlySet<string>;
}

export interface Candidate {
  node: NodeInfo;
  /** Most important first. */
  victims: PodInfo[];
  budgetViolations: number;
}

export type PreemptionResult = Candidate | { notEligible: string } | { noCandidates: true };

export const NOT_ELIGIBLE_NEVER = 'not eligible due to preemptionPolicy=Never.';
export const NOT_ELIGIBLE_TERMINATING = 'not eligible due to a terminating pod on the nominated node.';

const startOf = (p: PodInfo): number => timestampMs(p.pod.status?.startTime) ?? Number.MAX_SAFE_INTEGER;

/** Upstream's MoreImportantPod: higher priority first, then the one running longer. */
function moreImportantFirst(a: PodInfo, b: PodInfo): number {
  return b.priority - a.priority || startOf(a) - startOf(b);
}

function budgetsOf(p: PodInfo, budgets: readonly BudgetView[]): BudgetView[] {
  const labels = p.pod.metadata.labels ?? {};
  // An empty selector matches nothing in policy/v1 budgets' eyes here: upstream skips budgets whose selector is empty.
  return budgets.filter((b) => b.namespace === p.pod.metadata.namespace && isNonEmptySelector(b.selector) && matchLabelSelectorObject(b.selector, labels));
}

function isNonEmptySelector(sel: unknown): boolean {
  if (typeof sel !== 'object' || sel === null) return false;
  const s = sel as { matchLabels?: Record<string, string>; matchExpressions?: unknown[] };
  return Object.keys(s.matchLabels ?? {}).length > 0 || (s.matchExpressions ?? []).length > 0;
}

/** The victims `pod` needs on `ni`, or undefined when removing every lower-priority pod would not be enough. */
export function selectVictimsOnNode(pod: PodInfo, ni: NodeInfo, budgets: readonly BudgetView[]): Candidate | undefined {
  const lower = [...ni.pods.values()].filter((p) => p.priority < pod.priority);
  if (lower.length === 0) return undefined;
  const sim = ni.clone();
  for (const v of lower) sim.removePod(v.uid);
  if (runFilters(pod, sim)) return undefined;
  lower.sort(moreImportantFirst);
  // Split by whether evicting would break a budget, counting down each budget's allowance as upstream does.
  const allowed = new Map(budgets.map((b) => [b, b.disruptionsAllowed]));
  const violating: PodInfo[] = [];
  const harmless: PodInfo[] = [];
  for (const v of lower) {
    let breaks = false;
    for (const b of budgetsOf(v, budgets)) {
      if (b.disrupted.has(v.pod.metadata.name ?? '')) continue;
      const left = allowed.get(b)! - 1;
      allowed.set(b, left);
      if (left < 0) breaks = true;
    }
    (breaks ? violating : harmless).push(v);
  }
  const victims: PodInfo[] = [];
  let budgetViolations = 0;
  const reprieve = (v: PodInfo): boolean => {
    sim.addPod(v);
    if (!runFilters(pod, sim)) return true;
    sim.removePod(v.uid);
    victims.push(v);
    return false;
  };
  for (const v of violating) if (!reprieve(v)) budgetViolations++;
  for (const v of harmless) reprieve(v);
  if (victims.length === 0) return undefined;
  victims.sort(moreImportantFirst);
  return { node: ni, victims, budgetViolations };
}

/** Upstream's pickOneNodeForPreemption, criterion by criterion. */
export function pickCandidate(candidates: readonly Candidate[]): Candidate | undefined {
  const OFFSET = 2 ** 31;
  const criteria: ((c: Candidate) => number)[] = [
    (c) => -c.budgetViolations,
    (c) => -c.victims[0]!.priority,
    (c) => -c.victims.reduce((s, v) => s + v.priority + OFFSET, 0),
    (c) => -c.victims.length,
    // Among the highest-priority victims, the earliest start: the later it is, the less work is lost.
    (c) => {
      const top = c.victims[0]!.priority;
      return Math.min(...c.victims.filter((v) => v.priority === top).map(startOf));
    },
  ];
  let left = [...candidates];
  for (const score of criteria) {
    if (left.length <= 1) break;
    const best = Math.max(...left.map(score));
    left = left.filter((c) => score(c) === best);
  }
  return left[0];
}

/** Whether the pod may preempt at all, and where, among `nodes`. */
export function findPreemption(pod: PodInfo, nodes: readonly NodeInfo[], budgets: readonly BudgetView[], nominatedNode: NodeInfo | undefined, extra?: ExtraFilter): PreemptionResult {
  if (pod.preemptionNever) return { notEligible: NOT_ELIGIBLE_NEVER };
  // A pod that already preempted waits for its victims to go rather than evicting more.
  if (nominatedNode && [...nominatedNode.pods.values()].some((p) => p.pod.metadata.deletionTimestamp && p.priority < pod.priority)) {
    return { notEligible: NOT_ELIGIBLE_TERMINATING };
  }
  const candidates: Candidate[] = [];
  for (const ni of nodes) {
    const failure = runFilters(pod, ni);
    if (!failure || failure.unresolvable) continue;
    // Removing pods cannot help where the pod's volumes cannot go.
    if (extra?.(ni)) continue;
    const c = selectVictimsOnNode(pod, ni, budgets);
    if (c) candidates.push(c);
  }
  return pickCandidate(candidates) ?? { noCandidates: true };
}
