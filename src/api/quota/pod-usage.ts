// What a pod counts against a quota (upstream's pod quota evaluator): its effective requests and
// limits, with sidecars and init containers as the pod really runs them, and the scopes it falls in.
import { isObject, obj, objArr, str } from '../kinds/json.js';
import { podQOSClass } from '../kinds/pod.js';
import { COMPUTE_QUOTA_RESOURCES, CPU_MEMORY_QUOTA_RESOURCES, isExtendedResourceName, isHugePages, isNativeResource, isQuotaHugePages } from '../resource-names.js';
import { add, count, max, resourceList, type ResourceList } from '../resource-list.js';
import type { KubeObject } from '../types.js';
import { timestampMs } from '../kinds/printing.js';
import type { ScopeRequirement } from './scopes.js';
import { requirementMatches } from './scopes.js';

/** The resources a pod's quota evaluator counts (hugepages and extended requests besides). */
const POD_RESOURCES = ['count/pods', 'pods', ...COMPUTE_QUOTA_RESOURCES];

/**
 * A quota on cpu or memory makes every container name them (upstream kept this early mistake for
 * compatibility and never extended it to other resources).
 */
const MUST_BE_SET = new Set(CPU_MEMORY_QUOTA_RESOURCES);

export function isPodQuotaResource(name: string): boolean {
  return POD_RESOURCES.includes(name) || isQuotaHugePages(name) || isExtendedQuotaName(name);
}

/** requests.<vendor resource>: the only quota name an extended resource has. */
function isExtendedQuotaName(name: string): boolean {
  return !isNativeResource(name) && name.startsWith('requests.');
}

type Which = 'requests' | 'limits';

function containerList(c: Record<string, unknown>, which: Which): ResourceList {
  return resourceList(obj(c.resources)[which]);
}

/**
 * Upstream's aggregate container requests (or limits), without the pod's overhead: app containers and sidecars run together;
 * a regular init container runs alone beside the sidecars started before it; the pod needs the
 * larger of the two phases.
 */
export function containerTotals(pod: KubeObject, which: Which): ResourceList {
  const spec = obj(pod.spec);
  let total: ResourceList = new Map();
  for (const c of objArr(spec.containers)) total = add(total, containerList(c, which));
  let sidecars: ResourceList = new Map();
  let initPeak: ResourceList = new Map();
  for (const c of objArr(spec.initContainers)) {
    const own = containerList(c, which);
    if (c.restartPolicy === 'Always') {
      total = add(total, own);
      sidecars = add(sidecars, own);
      initPeak = max(initPeak, sidecars);
    } else {
      initPeak = max(initPeak, add(own, sidecars));
    }
  }
  return max(total, initPeak);
}

/** The pod's effective requests, its runtime overhead included. */
export function podRequests(pod: KubeObject): ResourceList {
  return add(containerTotals(pod, 'requests'), resourceList(obj(pod.spec).overhead));
}

/** The pod's effective limits; overhead adds only to resources that have a limit. */
export function podLimits(pod: KubeObject): ResourceList {
  const limits = containerTotals(pod, 'limits');
  const overhead = resourceList(obj(pod.spec).overhead);
  return add(limits, new Map([...overhead].filter(([k]) => limits.has(k))));
}

/** Quota names for a set of requests and limits (upstream's podComputeUsageHelper). */
function computeUsage(requests: ResourceList, limits: ResourceList): ResourceList {
  const out: ResourceList = new Map([['pods', count(1)]]);
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    const req = requests.get(r);
    if (req) {
      out.set(r, req);
      out.set(`requests.${r}`, req);
    }
    const lim = limits.get(r);
    if (lim) out.set(`limits.${r}`, lim);
  }
  for (const [r, req] of requests) {
    if (isHugePages(r)) {
      out.set(r, req);
      out.set(`requests.${r}`, req);
    }
    if (isExtendedResourceName(r)) out.set(`requests.${r}`, req);
  }
  return out;
}

/**
 * Whether the pod still counts: not when it has finished, nor when its deletion's grace period
 * has run out (a pod stuck terminating on a lost node must not hold its namespace's quota).
 */
export function podCharged(pod: KubeObject, nowMs: number): boolean {
  const phase = str(obj(pod.status).phase);
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  const meta = pod.metadata;
  if (meta?.deletionTimestamp && typeof meta.deletionGracePeriodSeconds === 'number') {
    const deleted = timestampMs(meta.deletionTimestamp);
    if (deleted !== undefined && nowMs > deleted + meta.deletionGracePeriodSeconds * 1000) return false;
  }
  return true;
}

/** A pod's usage: count/pods always (every stored pod), the rest while it is charged. */
export function podUsage(pod: KubeObject, nowMs: number): ResourceList {
  const out: ResourceList = new Map([['count/pods', count(1)]]);
  if (!podCharged(pod, nowMs)) return out;
  return add(out, computeUsage(podRequests(pod), podLimits(pod)));
}

/** Why the pod does not name what the quota requires of every container, or undefined. */
export function podConstraints(required: readonly string[], pod: KubeObject): string | undefined {
  const wanted = required.filter((r) => MUST_BE_SET.has(r));
  if (wanted.length === 0) return undefined;
  const missing = new Map<string, Set<string>>();
  const spec = obj(pod.spec);
  for (const c of [...objArr(spec.containers), ...objArr(spec.initContainers)]) {
    const has = computeUsage(containerList(c, 'requests'), containerList(c, 'limits'));
    for (const r of wanted) {
      if (has.has(r)) continue;
      let names = missing.get(r);
      if (!names) missing.set(r, (names = new Set()));
      names.add(str(c.name));
    }
  }
  if (missing.size === 0) return undefined;
  const parts = [...missing.keys()].sort().map((r) => `${r} for: ${[...missing.get(r)!].sort().join(',')}`);
  return `must specify ${parts.join('; ')}`;
}

function usesCrossNamespaceAffinity(pod: KubeObject): boolean {
  const affinity = obj(obj(pod.spec).affinity);
  const crosses = (t: Record<string, unknown>): boolean => (Array.isArray(t.namespaces) && t.namespaces.length > 0) || isObject(t.namespaceSelector);
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const a = obj(affinity[kind]);
    if (objArr(a.requiredDuringSchedulingIgnoredDuringExecution).some(crosses)) return true;
    if (objArr(a.preferredDuringSchedulingIgnoredDuringExecution).some((w) => crosses(obj(w.podAffinityTerm)))) return true;
  }
  return false;
}

/** Whether a pod falls in one scope of a quota. */
export function podMatchesScope(req: ScopeRequirement, pod: KubeObject): boolean {
  const spec = obj(pod.spec);
  const terminating = typeof spec.activeDeadlineSeconds === 'number' && spec.activeDeadlineSeconds >= 0;
  switch (req.scopeName) {
    case 'Terminating':
      return terminating;
    case 'NotTerminating':
      return !terminating;
    case 'BestEffort':
      return podQOSClass(pod.spec) === 'BestEffort';
    case 'NotBestEffort':
      return podQOSClass(pod.spec) !== 'BestEffort';
    case 'PriorityClass': {
      const pc = str(spec.priorityClassName);
      if (req.operator === 'Exists') return pc !== '';
      return requirementMatches(req, pc === '' ? undefined : pc);
    }
    case 'CrossNamespacePodAffinity':
      return usesCrossNamespaceAffinity(pod);
    default:
      return false;
  }
}
