// autoscaling/v1 HorizontalPodAutoscaler: served beside v2 (the storage version) through upstream's
// conversion. v1 says only targetCPUUtilizationPercentage; every other metric, the current metrics,
// the conditions and the behaviour travel in the autoscaling.alpha.kubernetes.io/* annotations, in
// v1's own metric shapes, so that a v1 client's read-modify-write keeps them.
import type { ResourceType, VersionConversion } from '../resource.js';
import type { KubeObject, StatusCause } from '../types.js';
import { defaultHorizontalPodAutoscalerV2, horizontalPodAutoscalerV2Resource, validateHorizontalPodAutoscalerV2 } from './horizontalpodautoscaler.js';
import { deepClone, isObject, obj, objArr, type JsonObject } from './json.js';

export const METRIC_SPECS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/metrics';
export const METRIC_STATUSES_ANNOTATION = 'autoscaling.alpha.kubernetes.io/current-metrics';
export const CONDITIONS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/conditions';
export const BEHAVIOR_ANNOTATION = 'autoscaling.alpha.kubernetes.io/behavior';

function isSet(v: unknown): boolean {
  return v !== undefined && v !== null;
}

/** Copies the keys of `from` that are set into a new object (Go's omitempty on pointers). */
function pick(from: JsonObject, keys: Record<string, string>): JsonObject {
  const out: JsonObject = {};
  for (const [to, key] of Object.entries(keys)) if (isSet(from[key])) out[to] = from[key];
  return out;
}

/** A Go Quantity that is not a pointer: "0" when unset. */
function quantityOrZero(v: unknown): unknown {
  return isSet(v) ? v : '0';
}

// ---- metric specs and statuses, v2 ⇄ v1 shapes ------------------------------------------------

function specToV1(m: JsonObject): JsonObject {
  const out: JsonObject = { type: m.type };
  if (isObject(m.resource)) {
    const t = obj(m.resource.target);
    out.resource = { name: m.resource.name, ...pick(t, { targetAverageUtilization: 'averageUtilization', targetAverageValue: 'averageValue' }) };
  }
  if (isObject(m.containerResource)) {
    const t = obj(m.containerResource.target);
    out.containerResource = { name: m.containerResource.name, ...pick(t, { targetAverageUtilization: 'averageUtilization', targetAverageValue: 'averageValue' }), container: m.containerResource.container };
  }
  if (isObject(m.pods)) {
    const metric = obj(m.pods.metric);
    out.pods = { metricName: metric.name, targetAverageValue: quantityOrZero(obj(m.pods.target).averageValue), ...pick(metric, { selector: 'selector' }) };
  }
  if (isObject(m.object)) {
    const metric = obj(m.object.metric);
    const t = obj(m.object.target);
    out.object = { target: m.object.describedObject, metricName: metric.name, targetValue: quantityOrZero(t.value), ...pick(metric, { selector: 'selector' }), ...pick(t, { averageValue: 'averageValue' }) };
  }
  if (isObject(m.external)) {
    const metric = obj(m.external.metric);
    const t = obj(m.external.target);
    out.external = { metricName: metric.name, ...pick(metric, { metricSelector: 'selector' }), ...pick(t, { targetValue: 'value', targetAverageValue: 'averageValue' }) };
  }
  return out;
}

function identifier(name: unknown, selector: unknown): JsonObject {
  return { name, ...(isSet(selector) ? { selector } : {}) };
}

function specFromV1(m: JsonObject): JsonObject {
  const out: JsonObject = { type: m.type };
  const resourceTarget = (r: JsonObject): JsonObject => ({
    type: isSet(r.targetAverageUtilization) ? 'Utilization' : 'AverageValue',
    ...pick(r, { averageValue: 'targetAverageValue', averageUtilization: 'targetAverageUtilization' }),
  });
  if (isObject(m.resource)) out.resource = { name: m.resource.name, target: resourceTarget(m.resource) };
  if (isObject(m.containerResource)) out.containerResource = { name: m.containerResource.name, container: m.containerResource.container, target: resourceTarget(m.containerResource) };
  if (isObject(m.pods)) out.pods = { metric: identifier(m.pods.metricName, m.pods.selector), target: { type: 'AverageValue', averageValue: quantityOrZero(m.pods.targetAverageValue) } };
  if (isObject(m.object)) {
    const o = m.object;
    out.object = {
      describedObject: o.target,
      target: { type: isSet(o.averageValue) ? 'AverageValue' : 'Value', value: quantityOrZero(o.targetValue), ...pick(o, { averageValue: 'averageValue' }) },
      metric: identifier(o.metricName, o.selector),
    };
  }
  if (isObject(m.external)) {
    const e = m.external;
    out.external = { metric: identifier(e.metricName, e.metricSelector), target: { type: isSet(e.targetValue) ? 'Value' : 'AverageValue', ...pick(e, { value: 'targetValue', averageValue: 'targetAverageValue' }) } };
  }
  return out;
}

function statusToV1(m: JsonObject): JsonObject {
  const out: JsonObject = { type: m.type };
  if (isObject(m.resource)) {
    const c = obj(m.resource.current);
    out.resource = { name: m.resource.name, ...pick(c, { currentAverageUtilization: 'averageUtilization' }), currentAverageValue: quantityOrZero(c.averageValue) };
  }
  if (isObject(m.containerResource)) {
    const c = obj(m.containerResource.current);
    out.containerResource = { name: m.containerResource.name, ...pick(c, { currentAverageUtilization: 'averageUtilization' }), currentAverageValue: quantityOrZero(c.averageValue), container: m.containerResource.container };
  }
  if (isObject(m.pods)) {
    const metric = obj(m.pods.metric);
    out.pods = { metricName: metric.name, currentAverageValue: quantityOrZero(obj(m.pods.current).averageValue), ...pick(metric, { selector: 'selector' }) };
  }
  if (isObject(m.object)) {
    const metric = obj(m.object.metric);
    const c = obj(m.object.current);
    out.object = { target: m.object.describedObject, metricName: metric.name, currentValue: quantityOrZero(c.value), ...pick(metric, { selector: 'selector' }), ...pick(c, { averageValue: 'averageValue' }) };
  }
  if (isObject(m.external)) {
    const metric = obj(m.external.metric);
    const c = obj(m.external.current);
    out.external = { metricName: metric.name, ...pick(metric, { metricSelector: 'selector' }), currentValue: quantityOrZero(c.value), ...pick(c, { currentAverageValue: 'averageValue' }) };
  }
  return out;
}

function statusFromV1(m: JsonObject): JsonObject {
  const out: JsonObject = { type: m.type };
  if (isObject(m.resource)) out.resource = { name: m.resource.name, current: { averageValue: quantityOrZero(m.resource.currentAverageValue), ...pick(m.resource, { averageUtilization: 'currentAverageUtilization' }) } };
  if (isObject(m.containerResource)) {
    const c = m.containerResource;
    out.containerResource = { name: c.name, container: c.container, current: { averageValue: quantityOrZero(c.currentAverageValue), ...pick(c, { averageUtilization: 'currentAverageUtilization' }) } };
  }
  if (isObject(m.pods)) out.pods = { metric: identifier(m.pods.metricName, m.pods.selector), current: { averageValue: quantityOrZero(m.pods.currentAverageValue) } };
  if (isObject(m.object)) {
    const o = m.object;
    out.object = { metric: identifier(o.metricName, o.selector), current: { value: quantityOrZero(o.currentValue), ...pick(o, { averageValue: 'averageValue' }) }, describedObject: o.target };
  }
  if (isObject(m.external)) {
    const e = m.external;
    out.external = { metric: identifier(e.metricName, e.metricSelector), current: { value: quantityOrZero(e.currentValue), ...pick(e, { averageValue: 'currentAverageValue' }) } };
  }
  return out;
}

function isCpuResource(m: JsonObject): boolean {
  return m.type === 'Resource' && isObject(m.resource) && m.resource.name === 'cpu';
}

// ---- whole objects ---------------------------------------------------------------------------

/** A v2 object as v1 shows it. */
export function horizontalPodAutoscalerToV1(v2: KubeObject): KubeObject {
  const src = deepClone(v2);
  const spec = obj(src.spec);
  const status = obj(src.status);
  const annotations: Record<string, string> = { ...(src.metadata.annotations ?? {}) };
  const metrics = objArr(spec.metrics);
  const v1Spec: JsonObject = { scaleTargetRef: spec.scaleTargetRef ?? { kind: '', name: '' }, ...pick(spec, { minReplicas: 'minReplicas' }), maxReplicas: spec.maxReplicas ?? 0 };
  const cpu = metrics.find(isCpuResource);
  const cpuTarget = cpu ? obj(obj(cpu.resource).target).averageUtilization : undefined;
  if (isSet(cpuTarget)) v1Spec.targetCPUUtilizationPercentage = cpuTarget;
  const others = metrics.filter((m) => !(isCpuResource(m) && isSet(obj(obj(m.resource).target).averageUtilization)));
  if (others.length > 0) annotations[METRIC_SPECS_ANNOTATION] = JSON.stringify(others.map(specToV1));
  const current = objArr(status.currentMetrics);
  if (current.length > 0) annotations[METRIC_STATUSES_ANNOTATION] = JSON.stringify(current.map(statusToV1));
  const conditions = objArr(status.conditions);
  if (conditions.length > 0) annotations[CONDITIONS_ANNOTATION] = JSON.stringify(conditions);
  if (isObject(spec.behavior)) annotations[BEHAVIOR_ANNOTATION] = JSON.stringify(spec.behavior);
  const v1Status: JsonObject = {
    ...pick(status, { observedGeneration: 'observedGeneration', lastScaleTime: 'lastScaleTime' }),
    currentReplicas: status.currentReplicas ?? 0,
    desiredReplicas: status.desiredReplicas ?? 0,
  };
  for (const m of current) {
    if (isCpuResource(m) && isSet(obj(obj(m.resource).current).averageUtilization)) v1Status.currentCPUUtilizationPercentage = obj(obj(m.resource).current).averageUtilization;
  }
  const metadata = { ...src.metadata };
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  return { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata, spec: v1Spec, status: v1Status };
}

/** Reads a round-trip annotation's JSON list, removing it; undefined when absent or unreadable (then it stays). */
function takeList(annotations: Record<string, string>, key: string): JsonObject[] | undefined {
  const text = annotations[key];
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    delete annotations[key];
    return objArr(parsed);
  } catch {
    return undefined;
  }
}

/** A v1 object in v2, the storage version (with v2's defaults, as a stored object is read). */
export function horizontalPodAutoscalerFromV1(v1: KubeObject): KubeObject {
  const src = deepClone(v1);
  const spec = obj(src.spec);
  const status = obj(src.status);
  const annotations: Record<string, string> = { ...(src.metadata.annotations ?? {}) };
  const v2Spec: JsonObject = { scaleTargetRef: spec.scaleTargetRef, ...pick(spec, { minReplicas: 'minReplicas' }), maxReplicas: spec.maxReplicas ?? 0 };
  let metrics: JsonObject[] = [];
  const cpu = isSet(spec.targetCPUUtilizationPercentage)
    ? [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage } } }]
    : [];
  const others = takeList(annotations, METRIC_SPECS_ANNOTATION);
  metrics = [...(others ?? []).map(specFromV1), ...cpu];
  if (metrics.length > 0) v2Spec.metrics = metrics;
  const behaviorText = annotations[BEHAVIOR_ANNOTATION];
  if (behaviorText !== undefined) {
    try {
      const behavior: unknown = JSON.parse(behaviorText);
      delete annotations[BEHAVIOR_ANNOTATION];
      if (isObject(behavior)) v2Spec.behavior = behavior;
    } catch {
      // An unreadable annotation stays as it is.
    }
  }
  const v2Status: JsonObject = {
    ...pick(status, { observedGeneration: 'observedGeneration', lastScaleTime: 'lastScaleTime' }),
    ...(isSet(status.currentReplicas) && status.currentReplicas !== 0 ? { currentReplicas: status.currentReplicas } : {}),
    desiredReplicas: status.desiredReplicas ?? 0,
  };
  if (isSet(status.currentCPUUtilizationPercentage)) {
    v2Status.currentMetrics = [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: status.currentCPUUtilizationPercentage } } }];
  }
  const current = takeList(annotations, METRIC_STATUSES_ANNOTATION);
  if (current) v2Status.currentMetrics = current.map(statusFromV1);
  const conditions = takeList(annotations, CONDITIONS_ANNOTATION);
  if (conditions && conditions.length > 0) v2Status.conditions = conditions;
  const metadata = { ...src.metadata };
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  else delete metadata.annotations;
  const out: KubeObject = { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata, spec: v2Spec, status: v2Status };
  defaultHorizontalPodAutoscalerV2(out);
  return out;
}

const conversion: VersionConversion = { toStorage: horizontalPodAutoscalerFromV1, fromStorage: horizontalPodAutoscalerToV1 };

/** Upstream's v1 defaults: minReplicas 1 (the CPU target's default comes with conversion). */
function defaultV1(o: KubeObject): void {
  if (!isObject(o.spec)) o.spec = {};
  const spec = o.spec as JsonObject;
  if (!isSet(spec.minReplicas)) spec.minReplicas = 1;
}

function validateV1(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  return validateHorizontalPodAutoscalerV2(horizontalPodAutoscalerFromV1(o), old && horizontalPodAutoscalerFromV1(old));
}

export const horizontalPodAutoscalerV1Resource: ResourceType = {
  ...horizontalPodAutoscalerV2Resource,
  version: 'v1',
  storageVersion: 'v2',
  conversion,
  table: {
    columns: horizontalPodAutoscalerV2Resource.table.columns,
    cells: (o, now) => horizontalPodAutoscalerV2Resource.table.cells(horizontalPodAutoscalerFromV1(o), now),
  },
  defaults: defaultV1,
  validate: validateV1,
  validateStatusUpdate: (o, old) => horizontalPodAutoscalerV2Resource.validateStatusUpdate!(horizontalPodAutoscalerFromV1(o), horizontalPodAutoscalerFromV1(old)),
  prepareForCreate: (o) => {
    o.status = { currentReplicas: 0, desiredReplicas: 0 };
  },
};

