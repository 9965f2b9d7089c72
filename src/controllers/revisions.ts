// Deployment revisions and the ReplicaSets that carry them (upstream deployment/util): the
// pod-template-hash that names a Deployment's ReplicaSets, the `deployment.kubernetes.io/*`
// annotations that `kubectl rollout history|undo` read, and which ReplicaSet is "new".
import type { KubeObject } from '../api/types.js';
import { deepClone, semanticEqual } from '../api/kinds/json.js';
import type { Deployment } from '../api/kinds/deployment.js';
import type { PodTemplateSpec } from '../api/kinds/pod.js';
import type { ReplicaSet } from '../api/kinds/replicaset.js';
import { creationMs } from './pod-control.js';

export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';
export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
/** Upstream keeps revision-history under this many characters. */
export const REVISION_HISTORY_LIMIT_CHARS = 2000;

// Deployment annotations that are not copied onto its ReplicaSets (upstream skipCopyAnnotation).
const SKIP_COPY = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
  DESIRED_REPLICAS_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  'deprecated.deployment.rollback.to',
]);

/** The revision an object's annotation records; 0 when absent or malformed. */
export function revisionOf(obj: KubeObject): number {
  const v = obj.metadata.annotations?.[REVISION_ANNOTATION];
  if (v === undefined) return 0;
  const n = Number(v);
  return Number.isInteger(n) && n >= 0 ? n : 0;
}

export function maxRevision(rss: ReplicaSet[]): number {
  return rss.reduce((m, rs) => Math.max(m, revisionOf(rs)), 0);
}

/** Templates equal but for the pod-template-hash label (upstream EqualIgnoreHash). */
export function equalIgnoreHash(a: PodTemplateSpec | undefined, b: PodTemplateSpec | undefined): boolean {
  const strip = (t: PodTemplateSpec | undefined) => {
    const c = deepClone(t ?? {});
    if (c.metadata?.labels) delete c.metadata.labels[POD_TEMPLATE_HASH_LABEL];
    return c;
  };
  return semanticEqual(strip(a), strip(b));
}

/** Oldest first, ties by name (upstream ReplicaSetsByCreationTimestamp). */
export function byCreation(a: KubeObject, b: KubeObject): number {
  return creationMs(a) - creationMs(b) || (a.metadata.name! < b.metadata.name! ? -1 : a.metadata.name! > b.metadata.name! ? 1 : 0);
}

/** The oldest ReplicaSet whose template is the Deployment's (upstream FindNewReplicaSet). */
export function findNewReplicaSet(d: Deployment, rss: ReplicaSet[]): ReplicaSet | undefined {
  return [...rss].sort(byCreation).find((rs) => equalIgnoreHash(rs.spec?.template, d.spec?.template));
}

function setAnnotation(obj: KubeObject, key: string, value: string): boolean {
  if (obj.metadata.annotations?.[key] === value) return false;
  obj.metadata.annotations = { ...(obj.metadata.annotations ?? {}), [key]: value };
  return true;
}

/** Records the Deployment's revision; true when it changed. */
export function setDeploymentRevision(d: Deployment, revision: string): boolean {
  return setAnnotation(d, REVISION_ANNOTATION, revision);
}

/** desired-replicas and max-replicas: what proportional scaling compares against later. */
export function setReplicasAnnotations(rs: ReplicaSet, desired: number, max: number): boolean {
  const a = setAnnotation(rs, DESIRED_REPLICAS_ANNOTATION, String(desired));
  const b = setAnnotation(rs, MAX_REPLICAS_ANNOTATION, String(max));
  return a || b;
}

export function replicasAnnotationsNeedUpdate(rs: ReplicaSet, desired: number, max: number): boolean {
  const a = rs.metadata.annotations ?? {};
  return a[DESIRED_REPLICAS_ANNOTATION] !== String(desired) || a[MAX_REPLICAS_ANNOTATION] !== String(max);
}

export function annotatedNumber(rs: ReplicaSet, key: string): number | undefined {
  const v = rs.metadata.annotations?.[key];
  if (v === undefined) return undefined;
  const n = Number(v);
  return Number.isInteger(n) ? n : undefined;
}

/**
 * Upstream SetNewReplicaSetAnnotations: copy the Deployment's annotations, raise the revision to
 * newRevision, and when an existing ReplicaSet gets a higher revision (a rollback to it) keep its
 * old numbers in revision-history. New ReplicaSets also get the replicas annotations.
 */
export function setNewReplicaSetAnnotations(d: Deployment, rs: ReplicaSet, newRevision: number, exists: boolean, maxReplicas: number): boolean {
  let changed = false;
  for (const [k, v] of Object.entries(d.metadata.annotations ?? {})) {
    if (SKIP_COPY.has(k)) continue;
    if (setAnnotation(rs, k, v)) changed = true;
  }
  const oldText = rs.metadata.annotations?.[REVISION_ANNOTATION];
  const old = oldText === undefined ? 0 : Number(oldText);
  if (!Number.isInteger(old)) return changed;
  if (old < newRevision) {
    setAnnotation(rs, REVISION_ANNOTATION, String(newRevision));
    changed = true;
    if (oldText !== undefined) {
      const history = rs.metadata.annotations?.[REVISION_HISTORY_ANNOTATION] ?? '';
      const entries = history ? history.split(',') : [];
      entries.push(oldText);
      while (entries.join(',').length > REVISION_HISTORY_LIMIT_CHARS && entries.length > 1) entries.shift();
      if (entries.join(',').length <= REVISION_HISTORY_LIMIT_CHARS) setAnnotation(rs, REVISION_HISTORY_ANNOTATION, entries.join(','));
    }
  }
  if (!exists && setReplicasAnnotations(rs, d.spec?.replicas ?? 1, maxReplicas)) changed = true;
  return changed;
}

/** The Deployment's template as its ReplicaSet's: plus the pod-template-hash label. */
export function replicaSetTemplate(d: Deployment, hash: string): PodTemplateSpec {
  const t = deepClone(d.spec?.template ?? {});
  t.metadata = { ...(t.metadata ?? {}), labels: { ...(t.metadata?.labels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash } };
  return t;
}
