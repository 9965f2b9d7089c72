// The scale subresource of every workload with replicas (deployments, replicasets, statefulsets, replicationcontrollers): an autoscaling/v1 Scale view of spec.replicas.
import type { KubeObject } from '../../api/types.js';
import { badRequest, invalid } from '../../api/errors.js';
import { selectorFromSet, selectorObjectToString } from '../../api/labels.js';

export interface Scale extends KubeObject {
  spec: { replicas?: number };
  status: { replicas: number; selector?: string };
}

export function scaleOf(obj: KubeObject, kind: string): Scale {
  const spec = (obj.spec ?? {}) as { replicas?: number; selector?: Parameters<typeof selectorObjectToString>[0] };
  const status = (obj.status ?? {}) as { replicas?: number };
  const m = obj.metadata;
  const metadata: KubeObject['metadata'] = { name: m.name!, namespace: m.namespace!, uid: m.uid!, resourceVersion: m.resourceVersion!, creationTimestamp: m.creationTimestamp ?? null };
  const scale: Scale = {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata,
    spec: { replicas: spec.replicas ?? 1 },
    status: { replicas: status.replicas ?? 0 },
  };
  // A ReplicationController's selector is a plain label map; the others' a LabelSelector.
  if (spec.selector) scale.status.selector = kind === 'ReplicationController' ? selectorFromSet(spec.selector as Record<string, string>).toString() : selectorObjectToString(spec.selector);
  return scale;
}

/** Applies a Scale's spec.replicas to the owning object (validated as upstream's scale validation). */
export function applyScale(target: KubeObject, scale: KubeObject, kind: string): KubeObject {
  const spec = scale.spec as { replicas?: unknown } | undefined;
  const replicas = spec?.replicas;
  if (replicas !== undefined && (typeof replicas !== 'number' || !Number.isInteger(replicas))) {
    throw badRequest(`Scale.spec.replicas must be an integer`);
  }
  if (typeof replicas === 'number' && replicas < 0) {
    throw invalid('Scale', 'autoscaling', target.metadata.name ?? '', [
      { reason: 'FieldValueInvalid', field: 'spec.replicas', message: `Invalid value: ${replicas}: must be greater than or equal to 0` },
    ]);
  }
  void kind;
  const next = structuredClone(target);
  (next.spec as { replicas?: number }).replicas = (replicas as number | undefined) ?? 0;
  return next;
}
