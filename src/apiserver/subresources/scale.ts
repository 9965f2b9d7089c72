// The scale subresource: an autoscaling/v1 Scale view of a workload's replicas. Built-in workloads
// (deployments, replicasets, statefulsets, replicationcontrollers) keep them in spec.replicas;
// custom resources say where, with JSON paths.
import type { KubeObject } from '../../api/types.js';
import type { ResourceType } from '../../api/resource.js';
import { badRequest, invalid } from '../../api/errors.js';
import { selectorFromSet, selectorObjectToString } from '../../api/labels.js';
import { evaluateJsonPath, setAtPath } from '../../api/json-path.js';
import { deepClone } from '../../api/kinds/json.js';

export interface Scale extends KubeObject {
  spec: { replicas?: number };
  status: { replicas: number; selector?: string };
}

type ScaledType = Pick<ResourceType, 'kind' | 'scalePaths'>;

export function scaleOf(obj: KubeObject, rt: ScaledType): Scale {
  const m = obj.metadata;
  const metadata: KubeObject['metadata'] = { name: m.name!, namespace: m.namespace!, uid: m.uid!, resourceVersion: m.resourceVersion!, creationTimestamp: m.creationTimestamp ?? null };
  const scale: Scale = { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata, spec: {}, status: { replicas: 0 } };
  if (rt.scalePaths) {
    const { specReplicasPath, statusReplicasPath, labelSelectorPath } = rt.scalePaths;
    const asCount = (v: unknown): number => (typeof v === 'number' && Number.isInteger(v) ? v : 0);
    scale.spec.replicas = asCount(evaluateJsonPath(obj, specReplicasPath));
    scale.status.replicas = asCount(evaluateJsonPath(obj, statusReplicasPath));
    const selector = labelSelectorPath ? evaluateJsonPath(obj, labelSelectorPath) : undefined;
    if (typeof selector === 'string') scale.status.selector = selector;
    return scale;
  }
  const spec = (obj.spec ?? {}) as { replicas?: number; selector?: Parameters<typeof selectorObjectToString>[0] };
  const status = (obj.status ?? {}) as { replicas?: number };
  scale.spec.replicas = spec.replicas ?? 1;
  scale.status.replicas = status.replicas ?? 0;
  // A ReplicationController's selector is a plain label map; the others' a LabelSelector.
  if (spec.selector) scale.status.selector = rt.kind === 'ReplicationController' ? selectorFromSet(spec.selector as Record<string, string>).toString() : selectorObjectToString(spec.selector);
  return scale;
}

/** Applies a Scale's spec.replicas to the owning object (validated as upstream's scale validation). */
export function applyScale(target: KubeObject, scale: KubeObject, rt: ScaledType): KubeObject {
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
  const next = deepClone(target);
  const value = (replicas as number | undefined) ?? 0;
  if (rt.scalePaths) setAtPath(next as unknown as Record<string, unknown>, rt.scalePaths.specReplicasPath, value);
  else (next.spec as { replicas?: number }).replicas = value;
  return next;
}
