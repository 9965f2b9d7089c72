// The arithmetic of a Deployment rollout (upstream deployment/util and the rolling/sync code),
// kept free of I/O so the rules can be read and tested on their own: surge and unavailability
// budgets, how far the new ReplicaSet may grow, proportional scaling, and the status/conditions
// that `kubectl rollout status` reads.
import type { Deployment, DeploymentCondition, DeploymentStatus } from '../api/kinds/deployment.js';
import type { ReplicaSet } from '../api/kinds/replicaset.js';
import { annotatedNumber, byCreation, DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION } from './revisions.js';
import { rfc3339 } from '../util/time.js';

// Condition reasons, exactly upstream's (kubectl and users match on them).
export const REASON = {
  newRSCreated: 'NewReplicaSetCreated',
  foundNewRS: 'FoundNewReplicaSet',
  newRSAvailable: 'NewReplicaSetAvailable',
  rsUpdated: 'ReplicaSetUpdated',
  timedOut: 'ProgressDeadlineExceeded',
  paused: 'DeploymentPaused',
  resumed: 'DeploymentResumed',
  rsCreateError: 'ReplicaSetCreateError',
  minimumAvailable: 'MinimumReplicasAvailable',
  minimumUnavailable: 'MinimumReplicasUnavailable',
} as const;

/** Go's math.MaxInt32: upstream's "no progress deadline". */
const NO_DEADLINE = 2147483647;

export function replicasOf(x: { spec?: { replicas?: number } } | undefined): number {
  return x?.spec?.replicas ?? 0;
}

export function desiredReplicas(d: Deployment): number {
  return d.spec?.replicas ?? 1;
}

/** Upstream GetScaledValueFromIntOrPercent: "25%" of total, rounded up or down; integers as is. */
export function scaledValue(v: number | string | undefined, total: number, roundUp: boolean): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v);
  if (!m) {
    const n = Number(v);
    if (Number.isInteger(n)) return n;
    throw new Error(`invalid value for IntOrString: invalid value "${v}"`);
  }
  const exact = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

export function isRollingUpdate(d: Deployment): boolean {
  return (d.spec?.strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
}

/** Surge rounds up, unavailability down; both zero means one may be unavailable (upstream ResolveFenceposts). */
export function resolveFenceposts(d: Deployment): { surge: number; unavailable: number } {
  const ru = d.spec?.strategy?.rollingUpdate ?? {};
  const desired = desiredReplicas(d);
  const surge = scaledValue(ru.maxSurge ?? 0, desired, true);
  let unavailable = scaledValue(ru.maxUnavailable ?? 0, desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

export function maxSurge(d: Deployment): number {
  return isRollingUpdate(d) ? resolveFenceposts(d).surge : 0;
}

export function maxUnavailable(d: Deployment): number {
  const desired = desiredReplicas(d);
  if (!isRollingUpdate(d) || desired === 0) return 0;
  return Math.min(resolveFenceposts(d).unavailable, desired);
}

export function activeOnly(rss: (ReplicaSet | undefined)[]): ReplicaSet[] {
  return rss.filter((rs): rs is ReplicaSet => !!rs && replicasOf(rs) > 0);
}

export function specReplicas(rss: (ReplicaSet | undefined)[]): number {
  return rss.reduce((n, rs) => n + (rs ? replicasOf(rs) : 0), 0);
}

export function statusReplicas(rss: (ReplicaSet | undefined)[]): number {
  return rss.reduce((n, rs) => n + (rs?.status?.replicas ?? 0), 0);
}

export function readyReplicas(rss: (ReplicaSet | undefined)[]): number {
  return rss.reduce((n, rs) => n + (rs?.status?.readyReplicas ?? 0), 0);
}

export function availableReplicas(rss: (ReplicaSet | undefined)[]): number {
  return rss.reduce((n, rs) => n + (rs?.status?.availableReplicas ?? 0), 0);
}

/**
 * Available pods an RS can be counted on for when deciding to scale down. A ReplicaSet's status
 * lags its spec by one RS-controller sync: just after we scaled one down, its status still counts
 * the pods being removed. Capping by spec.replicas keeps a stale status from licensing a second
 * scale-down (upstream trusts the status; this is strictly more conservative).
 */
export function countableAvailable(rss: (ReplicaSet | undefined)[]): number {
  return rss.reduce((n, rs) => n + (rs ? Math.min(rs.status?.availableReplicas ?? 0, replicasOf(rs)) : 0), 0);
}

/** How many replicas the new ReplicaSet may have now (upstream NewRSNewReplicas). */
export function newRSNewReplicas(d: Deployment, all: (ReplicaSet | undefined)[], newRS: ReplicaSet): number {
  if (!isRollingUpdate(d)) return desiredReplicas(d);
  const desired = desiredReplicas(d);
  const surge = scaledValue(d.spec?.strategy?.rollingUpdate?.maxSurge ?? 0, desired, true);
  const current = specReplicas(all);
  const maxTotal = desired + surge;
  if (current >= maxTotal) return replicasOf(newRS);
  const up = Math.min(maxTotal - current, desired - replicasOf(newRS));
  return replicasOf(newRS) + up;
}

/** The one active ReplicaSet, or the newest when none is active (upstream FindActiveOrLatest). */
export function findActiveOrLatest(newRS: ReplicaSet | undefined, oldRSs: ReplicaSet[]): ReplicaSet | undefined {
  if (!newRS && oldRSs.length === 0) return undefined;
  const newestFirst = [...oldRSs].sort((a, b) => byCreation(b, a));
  const active = activeOnly([...newestFirst, newRS]);
  if (active.length === 0) return newRS ?? newestFirst[0];
  if (active.length === 1) return active[0];
  return undefined;
}

export function isSaturated(d: Deployment, rs: ReplicaSet | undefined): boolean {
  if (!rs) return false;
  const desired = annotatedNumber(rs, DESIRED_REPLICAS_ANNOTATION);
  return replicasOf(rs) === desiredReplicas(d) && desired === desiredReplicas(d) && (rs.status?.availableReplicas ?? 0) === desiredReplicas(d);
}

/** This RS's share of a resize, from its size relative to the Deployment's previous max (upstream GetProportion). */
export function proportion(rs: ReplicaSet, d: Deployment, toAdd: number, added: number): number {
  if (replicasOf(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  let fraction: number;
  if (desiredReplicas(d) === 0) {
    fraction = -replicasOf(rs);
  } else {
    const maxNow = desiredReplicas(d) + maxSurge(d);
    let before = annotatedNumber(rs, MAX_REPLICAS_ANNOTATION) ?? 0;
    if (before === 0) before = d.status?.replicas ?? 0;
    // Go's integer.RoundToInt32 rounds half away from zero.
    const exact = (replicasOf(rs) * maxNow) / (before || 1);
    fraction = before === 0 ? 0 : Math.sign(exact) * Math.round(Math.abs(exact)) - replicasOf(rs);
  }
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

/**
 * Target sizes when the Deployment was resized mid-rollout: spread the difference over the active
 * ReplicaSets by size, leftovers to the largest (upstream DeploymentController.scale, rolling part).
 */
export function proportionalSizes(d: Deployment, newRS: ReplicaSet | undefined, oldRSs: ReplicaSet[]): Map<ReplicaSet, number> {
  const all = activeOnly([...oldRSs, newRS]);
  const allowed = desiredReplicas(d) > 0 ? desiredReplicas(d) + maxSurge(d) : 0;
  const toAdd = allowed - specReplicas(all);
  if (toAdd > 0) all.sort((a, b) => replicasOf(b) - replicasOf(a) || byCreation(b, a));
  else if (toAdd < 0) all.sort((a, b) => replicasOf(b) - replicasOf(a) || byCreation(a, b));
  const sizes = new Map<ReplicaSet, number>();
  let added = 0;
  for (const rs of all) {
    const p = toAdd !== 0 ? proportion(rs, d, toAdd, added) : 0;
    sizes.set(rs, replicasOf(rs) + p);
    added += p;
  }
  if (toAdd !== 0 && all.length > 0) {
    const first = all[0]!;
    sizes.set(first, Math.max(0, sizes.get(first)! + toAdd - added));
  }
  return sizes;
}

// ---------------------------------------------------------------------------------------------
// Conditions and status.

export function getCondition(status: DeploymentStatus | undefined, type: string): DeploymentCondition | undefined {
  return (status?.conditions ?? []).find((c) => c.type === type);
}

export function newCondition(type: string, status: DeploymentCondition['status'], reason: string, message: string, nowMs: number): DeploymentCondition {
  const t = rfc3339(nowMs);
  return { type, status, lastUpdateTime: t, lastTransitionTime: t, reason, message };
}

/** A workload condition as Deployments and Jobs carry them. */
interface WorkloadCondition {
  type: string;
  status: string;
  reason?: string;
  lastTransitionTime?: string;
}

/**
 * Upstream SetDeploymentCondition (and the Job controller's equivalent): same status and reason
 * is a no-op; same status keeps the transition time.
 */
export function setCondition<C extends WorkloadCondition>(status: { conditions?: C[] }, c: C): void {
  const cur = (status.conditions ?? []).find((x) => x.type === c.type);
  if (cur && cur.status === c.status && cur.reason === c.reason) return;
  if (cur && cur.status === c.status) c.lastTransitionTime = cur.lastTransitionTime;
  status.conditions = [...(status.conditions ?? []).filter((x) => x.type !== c.type), c];
}

export function removeCondition(status: DeploymentStatus, type: string): void {
  status.conditions = (status.conditions ?? []).filter((x) => x.type !== type);
}

export function hasProgressDeadline(d: Deployment): boolean {
  const s = d.spec?.progressDeadlineSeconds;
  return s !== undefined && s !== NO_DEADLINE;
}

/** Upstream calculateStatus: counts from the ReplicaSets plus the Available condition. */
export function calculateStatus(d: Deployment, all: (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined, nowMs: number): DeploymentStatus {
  const available = availableReplicas(all);
  const status: DeploymentStatus = {
    observedGeneration: d.metadata.generation ?? 0,
    replicas: statusReplicas(all),
    updatedReplicas: statusReplicas([newRS]),
    readyReplicas: readyReplicas(all),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, specReplicas(all) - available),
    conditions: (d.status?.conditions ?? []).map((c) => ({ ...c })),
  };
  // Go omits these counters when zero (omitempty): a scaled-to-zero Deployment shows none of them.
  for (const k of ['observedGeneration', 'replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas'] as const) if (status[k] === 0) delete status[k];
  if (d.status?.collisionCount !== undefined) status.collisionCount = d.status.collisionCount;
  if (available >= desiredReplicas(d) - maxUnavailable(d)) {
    setCondition(status, newCondition('Available', 'True', REASON.minimumAvailable, 'Deployment has minimum availability.', nowMs));
  } else {
    setCondition(status, newCondition('Available', 'False', REASON.minimumUnavailable, 'Deployment does not have minimum availability.', nowMs));
  }
  return status;
}

export function deploymentComplete(d: Deployment, s: DeploymentStatus): boolean {
  const want = desiredReplicas(d);
  return (s.updatedReplicas ?? 0) === want && (s.replicas ?? 0) === want && (s.availableReplicas ?? 0) === want && (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 0);
}

/** Any progress since the last status: more updated, fewer old, more ready or available. */
export function deploymentProgressing(d: Deployment, s: DeploymentStatus): boolean {
  const old = d.status ?? {};
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (s.replicas ?? 0) - (s.updatedReplicas ?? 0);
  return (
    (s.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (s.readyReplicas ?? 0) > (old.readyReplicas ?? 0) ||
    (s.availableReplicas ?? 0) > (old.availableReplicas ?? 0)
  );
}

/** Milliseconds left before the progress deadline passes; <= 0 once it has (undefined: not applicable). */
export function progressDeadlineLeft(d: Deployment, s: DeploymentStatus, nowMs: number): number | undefined {
  if (!hasProgressDeadline(d)) return undefined;
  const c = getCondition(s, 'Progressing');
  if (!c || c.reason === REASON.newRSAvailable || c.reason === REASON.timedOut) return undefined;
  const from = Date.parse(c.lastUpdateTime ?? '');
  if (!Number.isFinite(from)) return undefined;
  return from + (d.spec?.progressDeadlineSeconds ?? 0) * 1000 - nowMs;
}

export function deploymentTimedOut(d: Deployment, s: DeploymentStatus, nowMs: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const c = getCondition(s, 'Progressing');
  if (!c || c.reason === REASON.newRSAvailable) return false;
  if (c.reason === REASON.timedOut) return true;
  const left = progressDeadlineLeft(d, s, nowMs);
  return left !== undefined && left < 0;
}
