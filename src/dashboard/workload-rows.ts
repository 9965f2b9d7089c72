// A workload's row: how many of its pods are ready of how many it wants, and its rollout in a
// word, read the way `kubectl rollout status` reads it.
import type { KubeObject } from '../api/types.js';
import type { WorkloadKind, WorkloadRow } from './view.js';

interface Condition {
  type: string;
  status: string;
  reason?: string;
}

type Fields = Record<string, unknown>;

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

function conditions(status: Fields): Condition[] {
  return Array.isArray(status.conditions) ? (status.conditions as Condition[]) : [];
}

/** Whether the controller has seen the latest spec (otherwise its status describes an older one). */
function observed(o: KubeObject, status: Fields): boolean {
  return num(status.observedGeneration) >= num(o.metadata.generation);
}

function deploymentState(o: KubeObject, spec: Fields, status: Fields, desired: number): string {
  if (spec.paused === true) return 'Paused';
  const progressing = conditions(status).find((c) => c.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') return 'Stalled';
  if (!observed(o, status)) return 'Progressing';
  const updated = num(status.updatedReplicas);
  const total = num(status.replicas);
  const available = num(status.availableReplicas);
  return updated === desired && total === desired && available === desired ? 'Complete' : 'Progressing';
}

function statefulSetState(o: KubeObject, status: Fields, desired: number): string {
  if (!observed(o, status)) return 'Progressing';
  const revisionsAgree = !status.updateRevision || status.updateRevision === status.currentRevision;
  return num(status.readyReplicas) === desired && num(status.updatedReplicas) === desired && revisionsAgree ? 'Complete' : 'Progressing';
}

function daemonSetState(o: KubeObject, status: Fields): string {
  if (!observed(o, status)) return 'Progressing';
  const desired = num(status.desiredNumberScheduled);
  return num(status.updatedNumberScheduled) === desired && num(status.numberAvailable) === desired ? 'Complete' : 'Progressing';
}

function jobState(status: Fields, spec: Fields): string {
  const done = conditions(status).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  if (done) return done.type;
  if (spec.suspend === true) return 'Suspended';
  return num(status.active) > 0 ? 'Running' : 'Pending';
}

export function workloadRow(kind: WorkloadKind, o: KubeObject): WorkloadRow {
  const spec = (o.spec ?? {}) as Fields;
  const status = (o.status ?? {}) as Fields;
  const base = { kind, namespace: o.metadata.namespace ?? 'default', name: o.metadata.name! };
  switch (kind) {
    case 'Deployment': {
      const desired = spec.replicas === undefined ? 1 : num(spec.replicas);
      return { ...base, desired, ready: num(status.readyReplicas), state: deploymentState(o, spec, status, desired), scalable: true };
    }
    case 'StatefulSet': {
      const desired = spec.replicas === undefined ? 1 : num(spec.replicas);
      return { ...base, desired, ready: num(status.readyReplicas), state: statefulSetState(o, status, desired), scalable: true };
    }
    case 'DaemonSet':
      return { ...base, desired: num(status.desiredNumberScheduled), ready: num(status.numberReady), state: daemonSetState(o, status), scalable: false };
    case 'Job': {
      const desired = spec.completions === undefined ? 1 : num(spec.completions);
      return { ...base, desired, ready: num(status.succeeded), state: jobState(status, spec), scalable: false };
    }
  }
}

/** The collection path and the scale subresource of a workload kind. */
export const WORKLOAD_PATHS: Record<WorkloadKind, { group: string; resource: string }> = {
  Deployment: { group: 'apis/apps/v1', resource: 'deployments' },
  StatefulSet: { group: 'apis/apps/v1', resource: 'statefulsets' },
  DaemonSet: { group: 'apis/apps/v1', resource: 'daemonsets' },
  Job: { group: 'apis/batch/v1', resource: 'jobs' },
};
