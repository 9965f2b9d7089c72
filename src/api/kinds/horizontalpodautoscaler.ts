// autoscaling/v2 HorizontalPodAutoscaler, the storage version, and autoscaling/v1, served beside it
// through upstream's conversion (./horizontalpodautoscaler-v1.ts). Validation runs on the v2 form,
// as upstream validates the internal one, so a v1 request's errors name v2 paths too.
import { field } from '../errors.js';
import { canonicalQuantityText, isValidQuantity, quantitySign } from '../quantity.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { childPath, indexPath, nameIsDNSSubdomain, pathSegmentName, validateDNS1123Label, validateMeta, validateNonnegative } from '../validation.js';
import { isObject, num, obj, objArr, optNum, str, type JsonObject } from './json.js';
import { age, column, nameColumn } from './printing.js';

export interface CrossVersionObjectReference {
  kind: string;
  name: string;
  apiVersion?: string;
}

export interface MetricTarget {
  type: 'Utilization' | 'Value' | 'AverageValue' | string;
  value?: string;
  averageValue?: string;
  averageUtilization?: number;
}

export interface MetricValueStatus {
  value?: string;
  averageValue?: string;
  averageUtilization?: number;
}

export interface MetricIdentifier {
  name: string;
  selector?: JsonObject;
}

export interface MetricSpec {
  type: 'Resource' | 'ContainerResource' | 'Pods' | 'Object' | 'External' | string;
  resource?: { name: string; target: MetricTarget };
  containerResource?: { name: string; container: string; target: MetricTarget };
  pods?: { metric: MetricIdentifier; target: MetricTarget };
  object?: { describedObject: CrossVersionObjectReference; metric: MetricIdentifier; target: MetricTarget };
  external?: { metric: MetricIdentifier; target: MetricTarget };
}

export interface MetricStatus {
  type: MetricSpec['type'];
  resource?: { name: string; current: MetricValueStatus };
  containerResource?: { name: string; container: string; current: MetricValueStatus };
  pods?: { metric: MetricIdentifier; current: MetricValueStatus };
  object?: { describedObject: CrossVersionObjectReference; metric: MetricIdentifier; current: MetricValueStatus };
  external?: { metric: MetricIdentifier; current: MetricValueStatus };
}

export interface HPAScalingPolicy {
  type: 'Pods' | 'Percent' | string;
  value: number;
  periodSeconds: number;
}

export interface HPAScalingRules {
  stabilizationWindowSeconds?: number;
  selectPolicy?: 'Max' | 'Min' | 'Disabled' | string;
  policies?: HPAScalingPolicy[];
  tolerance?: string;
}

export interface HorizontalPodAutoscalerBehavior {
  scaleUp?: HPAScalingRules;
  scaleDown?: HPAScalingRules;
}

export interface HorizontalPodAutoscalerCondition {
  type: 'AbleToScale' | 'ScalingActive' | 'ScalingLimited' | string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface HorizontalPodAutoscalerSpec {
  scaleTargetRef: CrossVersionObjectReference;
  minReplicas?: number;
  maxReplicas: number;
  metrics?: MetricSpec[];
  behavior?: HorizontalPodAutoscalerBehavior;
}

export interface HorizontalPodAutoscalerStatus {
  observedGeneration?: number;
  lastScaleTime?: string;
  currentReplicas?: number;
  desiredReplicas: number;
  currentMetrics?: MetricStatus[];
  conditions?: HorizontalPodAutoscalerCondition[];
}

export interface HorizontalPodAutoscaler extends KubeObject {
  metadata: ObjectMeta;
  spec: HorizontalPodAutoscalerSpec;
  status?: HorizontalPodAutoscalerStatus;
}

/** Upstream's autoscaling.DefaultCPUUtilization: the target of an HPA that names no metric. */
export const DEFAULT_CPU_UTILIZATION = 80;

/** Upstream's default scale-up rules: the faster of doubling and 4 pods per 15 s, no stabilization. */
export function defaultScaleUpRules(): Required<Omit<HPAScalingRules, 'tolerance'>> {
  return {
    stabilizationWindowSeconds: 0,
    selectPolicy: 'Max',
    policies: [
      { type: 'Pods', value: 4, periodSeconds: 15 },
      { type: 'Percent', value: 100, periodSeconds: 15 },
    ],
  };
}

/**
 * Upstream's default scale-down rules: all pods may go in 15 s. The stabilization window stays
 * unset: the controller's --horizontal-pod-autoscaler-downscale-stabilization (300 s) applies.
 */
export function defaultScaleDownRules(): Omit<HPAScalingRules, 'tolerance' | 'stabilizationWindowSeconds'> & { selectPolicy: string; policies: HPAScalingPolicy[] } {
  return { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] };
}

/** Upstream's copyHPAScalingRules: the given rules' set fields over the defaults. */
function withDefaults(given: unknown, defaults: HPAScalingRules): HPAScalingRules {
  if (!isObject(given)) return defaults;
  const out: HPAScalingRules = { ...defaults };
  if (given.selectPolicy !== undefined && given.selectPolicy !== null) out.selectPolicy = str(given.selectPolicy);
  if (given.stabilizationWindowSeconds !== undefined && given.stabilizationWindowSeconds !== null) out.stabilizationWindowSeconds = num(given.stabilizationWindowSeconds);
  if (Array.isArray(given.policies)) out.policies = given.policies as HPAScalingPolicy[];
  if (given.tolerance !== undefined && given.tolerance !== null) out.tolerance = given.tolerance as string;
  return out;
}

/** Upstream's v2 defaults: minReplicas 1, CPU at 80 % when no metric is named, every unset behaviour rule once behaviour is given. */
export function defaultHorizontalPodAutoscalerV2(o: KubeObject): void {
  if (!isObject(o.spec)) o.spec = {};
  const spec = o.spec as JsonObject;
  if (spec.minReplicas === undefined || spec.minReplicas === null) spec.minReplicas = 1;
  if (!Array.isArray(spec.metrics) || spec.metrics.length === 0) {
    spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } }];
  }
  if (isObject(spec.behavior)) {
    const b = spec.behavior;
    b.scaleUp = withDefaults(b.scaleUp, defaultScaleUpRules());
    b.scaleDown = withDefaults(b.scaleDown, defaultScaleDownRules());
  }
}

// ---- validation (upstream pkg/apis/autoscaling/validation) ------------------------------------

const MAX_PERIOD_SECONDS = 1800;
const MAX_STABILIZATION_WINDOW_SECONDS = 3600;
const METRIC_SOURCE_TYPES = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'];
const SELECT_POLICIES = ['Disabled', 'Max', 'Min'];
const POLICY_TYPES = ['Percent', 'Pods'];

function isSet(v: unknown): boolean {
  return v !== undefined && v !== null;
}

/** A quantity as a Go field error renders it: its canonical text. */
function quantityValue(v: unknown): string {
  return isValidQuantity(v) ? canonicalQuantityText(v as string | number) : String(v);
}

function positive(v: unknown): boolean {
  return isValidQuantity(v) && quantitySign(v as string | number) === 1;
}

export function validateCrossVersionObjectReference(ref: unknown, path: string): StatusCause[] {
  const r = obj(ref);
  const out: StatusCause[] = [];
  for (const key of ['kind', 'name'] as const) {
    const value = str(r[key]);
    if (value === '') out.push(field.required(childPath(path, key)));
    else for (const msg of pathSegmentName(value, false)) out.push(field.invalid(childPath(path, key), value, msg));
  }
  return out;
}

function validateMetricTarget(t: JsonObject, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const type = str(t.type);
  if (type === '') out.push(field.required(childPath(path, 'type'), 'must specify a metric target type'));
  if (type !== 'Utilization' && type !== 'Value' && type !== 'AverageValue') out.push(field.invalid(childPath(path, 'type'), type, 'must be either Utilization, Value, or AverageValue'));
  if (isSet(t.value) && !positive(t.value)) out.push(field.invalid(childPath(path, 'value'), quantityValue(t.value), 'must be positive'));
  if (isSet(t.averageValue) && !positive(t.averageValue)) out.push(field.invalid(childPath(path, 'averageValue'), quantityValue(t.averageValue), 'must be positive'));
  if (isSet(t.averageUtilization) && num(t.averageUtilization) < 1) out.push(field.invalid(childPath(path, 'averageUtilization'), num(t.averageUtilization), 'must be greater than 0'));
  return out;
}

function validateMetricIdentifier(m: JsonObject, path: string): StatusCause[] {
  const name = str(m.name);
  if (name === '') return [field.required(childPath(path, 'name'), 'must specify a metric name')];
  return pathSegmentName(name, false).map((msg) => field.invalid(childPath(path, 'name'), name, msg));
}

function validateResourceTarget(t: JsonObject, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!isSet(t.averageUtilization) && !isSet(t.averageValue)) out.push(field.required(childPath(path, 'averageUtilization'), 'must set either a target raw value or a target utilization'));
  if (isSet(t.averageUtilization) && isSet(t.averageValue)) out.push(field.forbidden(childPath(path, 'averageValue'), 'may not set both a target raw value and a target utilization'));
  return out;
}

function validateSource(kind: string, src: JsonObject, path: string): StatusCause[] {
  const target = obj(src.target);
  const targetPath = childPath(path, 'target');
  const out: StatusCause[] = [];
  switch (kind) {
    case 'object':
      out.push(...validateCrossVersionObjectReference(src.describedObject, childPath(path, 'describedObject')));
      out.push(...validateMetricIdentifier(obj(src.metric), childPath(path, 'metric')));
      out.push(...validateMetricTarget(target, targetPath));
      if (!isSet(target.value) && !isSet(target.averageValue)) out.push(field.required(childPath(targetPath, 'averageValue'), 'must set either a target value or averageValue'));
      break;
    case 'external':
      out.push(...validateMetricIdentifier(obj(src.metric), childPath(path, 'metric')));
      out.push(...validateMetricTarget(target, targetPath));
      if (!isSet(target.value) && !isSet(target.averageValue)) out.push(field.required(childPath(targetPath, 'averageValue'), 'must set either a target value for metric or a per-pod target'));
      if (isSet(target.value) && isSet(target.averageValue)) out.push(field.forbidden(childPath(targetPath, 'value'), 'may not set both a target value for metric and a per-pod target'));
      break;
    case 'pods':
      out.push(...validateMetricIdentifier(obj(src.metric), childPath(path, 'metric')));
      out.push(...validateMetricTarget(target, targetPath));
      if (!isSet(target.averageValue)) out.push(field.required(childPath(targetPath, 'averageValue'), 'must specify a positive target averageValue'));
      break;
    case 'resource':
      if (str(src.name) === '') out.push(field.required(childPath(path, 'name'), 'must specify a resource name'));
      out.push(...validateMetricTarget(target, targetPath));
      out.push(...validateResourceTarget(target, targetPath));
      break;
    case 'containerResource': {
      if (str(src.name) === '') out.push(field.required(childPath(path, 'name'), 'must specify a resource name'));
      const container = str(src.container);
      if (container === '') out.push(field.required(childPath(path, 'container'), 'must specify a container'));
      else out.push(...validateDNS1123Label(container, childPath(path, 'container')));
      out.push(...validateMetricTarget(target, targetPath));
      out.push(...validateResourceTarget(target, targetPath));
      break;
    }
  }
  return out;
}

const SOURCE_FIELDS: readonly [string, string][] = [
  ['object', 'Object'],
  ['external', 'External'],
  ['pods', 'Pods'],
  ['resource', 'Resource'],
  ['containerResource', 'ContainerResource'],
];

function validateMetricSpec(m: JsonObject, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const type = str(m.type);
  if (type === '') out.push(field.required(childPath(path, 'type'), 'must specify a metric source type'));
  if (!METRIC_SOURCE_TYPES.includes(type)) out.push(field.notSupported(childPath(path, 'type'), type, METRIC_SOURCE_TYPES));
  const present: string[] = [];
  for (const [key] of SOURCE_FIELDS) {
    if (!isSet(m[key])) continue;
    present.push(key);
    // Only the first source given is validated, as upstream's.
    if (present.length === 1) out.push(...validateSource(key, obj(m[key]), childPath(path, key)));
  }
  const expected = SOURCE_FIELDS.find(([, t]) => t === type)?.[0];
  if (expected === undefined) out.push(field.notSupported(childPath(path, 'type'), type, METRIC_SOURCE_TYPES));
  else if (!isSet(m[expected])) out.push(field.required(childPath(path, expected), 'must populate information for the given metric source'));
  if (present.length !== 1) {
    for (const key of present) if (key !== expected) out.push(field.forbidden(childPath(path, key), 'must populate the given metric source only'));
  }
  return out;
}

function validateScalingRules(rules: unknown, path: string): StatusCause[] {
  if (!isObject(rules)) return [];
  const out: StatusCause[] = [];
  const window = optNum(rules.stabilizationWindowSeconds);
  if (window !== undefined && window < 0) out.push(field.invalid(childPath(path, 'stabilizationWindowSeconds'), window, 'must be greater than or equal to zero'));
  if (window !== undefined && window > MAX_STABILIZATION_WINDOW_SECONDS) out.push(field.invalid(childPath(path, 'stabilizationWindowSeconds'), window, `must be less than or equal to ${MAX_STABILIZATION_WINDOW_SECONDS}`));
  if (isSet(rules.selectPolicy) && !SELECT_POLICIES.includes(str(rules.selectPolicy))) out.push(field.notSupported(childPath(path, 'selectPolicy'), rules.selectPolicy, SELECT_POLICIES));
  const policiesPath = childPath(path, 'policies');
  const policies = objArr(rules.policies);
  if (policies.length === 0) out.push(field.required(policiesPath, 'must specify at least one Policy'));
  policies.forEach((p, i) => {
    const at = indexPath(policiesPath, i);
    if (!POLICY_TYPES.includes(str(p.type))) out.push(field.notSupported(childPath(at, 'type'), str(p.type), POLICY_TYPES));
    if (num(p.value) <= 0) out.push(field.invalid(childPath(at, 'value'), num(p.value), 'must be greater than zero'));
    if (num(p.periodSeconds) <= 0) out.push(field.invalid(childPath(at, 'periodSeconds'), num(p.periodSeconds), 'must be greater than zero'));
    if (num(p.periodSeconds) > MAX_PERIOD_SECONDS) out.push(field.invalid(childPath(at, 'periodSeconds'), num(p.periodSeconds), `must be less than or equal to ${MAX_PERIOD_SECONDS}`));
  });
  return out;
}

function validateSpec(specValue: unknown, minReplicasLowerBound: number): StatusCause[] {
  const spec = obj(specValue);
  const out: StatusCause[] = [];
  const min = optNum(spec.minReplicas);
  const max = num(spec.maxReplicas);
  if (min !== undefined && min < minReplicasLowerBound) out.push(field.invalid('spec.minReplicas', min, `must be greater than or equal to ${minReplicasLowerBound}`));
  if (max < 1) out.push(field.invalid('spec.maxReplicas', max, 'must be greater than 0'));
  if (min !== undefined && max < min) out.push(field.invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  out.push(...validateCrossVersionObjectReference(spec.scaleTargetRef, 'spec.scaleTargetRef'));
  const metrics = objArr(spec.metrics);
  metrics.forEach((m, i) => out.push(...validateMetricSpec(m, indexPath('spec.metrics', i))));
  if (min === 0 && !metrics.some((m) => m.type === 'Object' || m.type === 'External')) {
    out.push(field.forbidden('spec.metrics', 'must specify at least one Object or External metric to support scaling to zero replicas'));
  }
  if (isObject(spec.behavior)) {
    out.push(...validateScalingRules(spec.behavior.scaleUp, 'spec.behavior.scaleUp'));
    out.push(...validateScalingRules(spec.behavior.scaleDown, 'spec.behavior.scaleDown'));
  }
  return out;
}

/** Upstream's ValidateHorizontalPodAutoscaler(Update), on the v2 form. */
export function validateHorizontalPodAutoscalerV2(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  // Scale to zero is behind a feature gate that is off; an object that already has it keeps it.
  const lowerBound = old && obj(old.spec).minReplicas === 0 ? 0 : 1;
  out.push(...validateSpec(o.spec, lowerBound));
  return out;
}

function validateStatusUpdate(o: KubeObject, old: KubeObject): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  const status = obj(o.status);
  out.push(...validateNonnegative(num(status.currentReplicas), 'status.currentReplicas'));
  out.push(...validateNonnegative(num(status.desiredReplicas), 'status.desiredReplicas'));
  return out;
}

// ---- table (upstream's printHorizontalPodAutoscaler) ------------------------------------------

function q(v: unknown): string {
  return isSet(v) ? quantityValue(v) : '0';
}

/** Upstream's formatHPAMetrics: at most two metrics, each "current/target", "<unknown>" where no status says. */
export function formatHPAMetrics(specs: readonly JsonObject[], statuses: readonly JsonObject[]): string {
  if (specs.length === 0) return '<none>';
  const list = specs.map((spec, i) => {
    const status = statuses[i];
    const cur = (key: string): JsonObject | undefined => (status && isObject(status[key]) ? obj(obj(status[key]).current) : undefined);
    switch (spec.type) {
      case 'External':
      case 'Object': {
        const key = spec.type === 'External' ? 'external' : 'object';
        const target = obj(obj(spec[key]).target);
        const c = cur(key);
        if (isSet(target.averageValue)) return `${c && isSet(c.averageValue) ? q(c.averageValue) : '<unknown>'}/${q(target.averageValue)} (avg)`;
        return `${c ? q(c.value) : '<unknown>'}/${q(target.value)}`;
      }
      case 'Pods': {
        const c = cur('pods');
        return `${c ? q(c.averageValue) : '<unknown>'}/${q(obj(obj(spec.pods).target).averageValue)}`;
      }
      case 'Resource':
      case 'ContainerResource': {
        const key = spec.type === 'Resource' ? 'resource' : 'containerResource';
        const source = obj(spec[key]);
        const target = obj(source.target);
        const c = cur(key);
        if (isSet(target.averageValue)) return `${str(source.name)}: ${c ? q(c.averageValue) : '<unknown>'}/${q(target.averageValue)}`;
        const current = c && isSet(c.averageUtilization) ? `${num(c.averageUtilization)}%` : '<unknown>';
        const wanted = isSet(target.averageUtilization) ? `${num(target.averageUtilization)}%` : '<auto>';
        return `${str(source.name)}: ${current}/${wanted}`;
      }
      default:
        return '<unknown type>';
    }
  });
  if (list.length > 2) return `${list.slice(0, 2).join(', ')} + ${list.length - 2} more...`;
  return list.join(', ');
}

export const horizontalPodAutoscalerV2Resource: ResourceType = {
  group: 'autoscaling',
  version: 'v2',
  storageVersion: 'v2',
  resource: 'horizontalpodautoscalers',
  kind: 'HorizontalPodAutoscaler',
  listKind: 'HorizontalPodAutoscalerList',
  singular: 'horizontalpodautoscaler',
  namespaced: true,
  shortNames: ['hpa'],
  categories: ['all'],
  subresources: ['status'],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('Reference', 'string', 'scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.'),
      column('Targets', 'string', 'metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).'),
      column('MinPods', 'string', 'minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.'),
      column('MaxPods', 'integer', 'maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up.'),
      column('Replicas', 'integer', 'currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.'),
      column('Age', 'string', 'Time since the object was created.'),
    ],
    cells(o, now) {
      const spec = obj(o.spec);
      const ref = obj(spec.scaleTargetRef);
      const status = obj(o.status);
      return [
        o.metadata?.name ?? '',
        `${str(ref.kind)}/${str(ref.name)}`,
        formatHPAMetrics(objArr(spec.metrics), objArr(status.currentMetrics)),
        isSet(spec.minReplicas) ? String(num(spec.minReplicas)) : '<unset>',
        num(spec.maxReplicas),
        num(status.currentReplicas),
        age(o, now),
      ];
    },
  },
  hasGeneration: true,
  defaults: defaultHorizontalPodAutoscalerV2,
  validate: validateHorizontalPodAutoscalerV2,
  validateStatusUpdate: validateStatusUpdate,
  // Upstream resets status to its zero value: in v2 JSON only desiredReplicas, which has no omitempty.
  prepareForCreate: (o) => {
    o.status = { desiredReplicas: 0 };
  },
};

