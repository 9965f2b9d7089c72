// LimitRanger: a namespace's LimitRanges fill in the requests and limits its containers leave
// out, and refuse a pod outside their bounds, so quota and scheduling see real numbers.
import { forbiddenObject } from '../../api/errors.js';
import { quantities, type LimitRange, type Quantities } from '../../api/kinds/limitrange.js';
import { isObject, objArr, str } from '../../api/kinds/json.js';
import { canonicalQuantityText, milliValue } from '../../api/quantity.js';
import { containerTotals } from '../../api/quota/pod-usage.js';
import { resourceListJson } from '../../api/resource-list.js';
import type { KubeObject } from '../../api/types.js';
import { isCore, type AdmissionAttributes, type AdmissionPlugin } from './plugin.js';

export const LIMIT_RANGER_ANNOTATION = 'kubernetes.io/limit-ranger';

export interface LimitRangeLookup {
  /** The LimitRanges of a namespace, as the watch cache holds them. */
  inNamespace(namespace: string): readonly LimitRange[];
}

interface Resources {
  requests?: Record<string, unknown>;
  limits?: Record<string, unknown>;
}

function items(ranges: readonly LimitRange[], type: string): Record<string, unknown>[] {
  return ranges.flatMap((lr) => objArr(isObject(lr.spec) ? lr.spec.limits : undefined)).filter((i) => i.type === type);
}

/** App containers before init containers: upstream's order, which its annotation and messages show. */
function containersOf(pod: KubeObject): { kind: string; c: Record<string, unknown> }[] {
  const spec = isObject(pod.spec) ? pod.spec : {};
  return [...objArr(spec.containers).map((c) => ({ kind: 'container', c })), ...objArr(spec.initContainers).map((c) => ({ kind: 'init container', c }))];
}

/** Fills each container's missing requests and limits from the Container items' defaults. */
export function applyContainerDefaults(pod: KubeObject, ranges: readonly LimitRange[]): void {
  const containerItems = items(ranges, 'Container');
  if (containerItems.length === 0) return;
  // Upstream takes the first item's defaults for a resource; later items do not override.
  const defLimits: Quantities = {};
  const defRequests: Quantities = {};
  for (const item of containerItems) {
    for (const [k, v] of Object.entries(quantities(item.default))) if (!(k in defLimits)) defLimits[k] = v;
    for (const [k, v] of Object.entries(quantities(item.defaultRequest))) if (!(k in defRequests)) defRequests[k] = v;
  }
  const notes: string[] = [];
  for (const { kind, c } of containersOf(pod)) {
    if (c.resources !== undefined && !isObject(c.resources)) continue;
    const res = (c.resources ??= {}) as Resources;
    if ((res.limits !== undefined && !isObject(res.limits)) || (res.requests !== undefined && !isObject(res.requests))) continue;
    const setLimits: string[] = [];
    const setRequests: string[] = [];
    for (const [k, v] of Object.entries(defLimits)) {
      if (res.limits && k in res.limits) continue;
      (res.limits ??= {})[k] = v;
      setLimits.push(k);
    }
    for (const [k, v] of Object.entries(defRequests)) {
      if (res.requests && k in res.requests) continue;
      // A limit the container set itself is its request too (as pod defaulting does), not the range's.
      (res.requests ??= {})[k] = setLimits.includes(k) || !res.limits || !(k in res.limits) ? v : res.limits[k];
      setRequests.push(k);
    }
    const name = str(c.name);
    if (setRequests.length > 0) notes.push(`${setRequests.sort().join(', ')} request for ${kind} ${name}`);
    if (setLimits.length > 0) notes.push(`${setLimits.sort().join(', ')} limit for ${kind} ${name}`);
  }
  if (notes.length > 0) pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), [LIMIT_RANGER_ANNOTATION]: `LimitRanger plugin set: ${notes.join('; ')}` };
}

/** One item's bounds, parsed once for all of a pod's containers. */
interface Bounds {
  min: Quantities;
  max: Quantities;
  ratio: Quantities;
}

function boundsOf(item: Record<string, unknown>): Bounds {
  return { min: quantities(item.min), max: quantities(item.max), ratio: quantities(item.maxLimitRequestRatio) };
}

function checkBounds(limitType: string, bounds: Bounds, requests: Quantities, limits: Quantities, errs: string[]): void {
  for (const [k, min] of Object.entries(bounds.min)) {
    const req = requests[k];
    const lim = limits[k];
    const m = canonicalQuantityText(min);
    if (req === undefined) errs.push(`minimum ${k} usage per ${limitType} is ${m}.  No request is specified`);
    else if (milliValue(req) < milliValue(min)) errs.push(`minimum ${k} usage per ${limitType} is ${m}, but request is ${canonicalQuantityText(req)}`);
    else if (lim !== undefined && milliValue(lim) < milliValue(min)) errs.push(`minimum ${k} usage per ${limitType} is ${m}, but limit is ${canonicalQuantityText(lim)}`);
  }
  for (const [k, max] of Object.entries(bounds.max)) {
    const req = requests[k];
    const lim = limits[k];
    const m = canonicalQuantityText(max);
    if (lim === undefined) errs.push(`maximum ${k} usage per ${limitType} is ${m}.  No limit is specified`);
    else if (milliValue(lim) > milliValue(max)) errs.push(`maximum ${k} usage per ${limitType} is ${m}, but limit is ${canonicalQuantityText(lim)}`);
    else if (req !== undefined && milliValue(req) > milliValue(max)) errs.push(`maximum ${k} usage per ${limitType} is ${m}, but request is ${canonicalQuantityText(req)}`);
  }
  for (const [k, ratio] of Object.entries(bounds.ratio)) {
    const req = requests[k] === undefined ? 0 : milliValue(requests[k]);
    const lim = limits[k] === undefined ? 0 : milliValue(limits[k]);
    const r = canonicalQuantityText(ratio);
    if (req === 0) errs.push(`${k} max limit to request ratio per ${limitType} is ${r}, but no request is specified or request is 0`);
    else if (lim === 0) errs.push(`${k} max limit to request ratio per ${limitType} is ${r}, but no limit is specified or limit is 0`);
    else if (lim / req > milliValue(ratio) / 1000) errs.push(`${k} max limit to request ratio per ${limitType} is ${r}, but provided ratio is ${(lim / req).toFixed(6)}`);
  }
}

/** A pod's total as it runs: containers and sidecars together, or an init phase where that is more. */
function podTotals(pod: KubeObject, which: 'requests' | 'limits'): Quantities {
  return resourceListJson(containerTotals(pod, which));
}

/** Why the pod is outside its namespace's ranges, in upstream's words; empty when it is inside. */
export function limitViolations(pod: KubeObject, ranges: readonly LimitRange[]): string[] {
  const errs: string[] = [];
  const containerBounds = items(ranges, 'Container').map(boundsOf);
  if (containerBounds.length > 0) {
    const containers = containersOf(pod).map(({ c }) => (isObject(c.resources) ? c.resources : {}));
    const observed = containers.map((res) => ({ requests: quantities(res.requests), limits: quantities(res.limits) }));
    for (const bounds of containerBounds) for (const o of observed) checkBounds('Container', bounds, o.requests, o.limits, errs);
  }
  const podBounds = items(ranges, 'Pod').map(boundsOf);
  if (podBounds.length > 0) {
    const requests = podTotals(pod, 'requests');
    const limits = podTotals(pod, 'limits');
    for (const bounds of podBounds) checkBounds('Pod', bounds, requests, limits, errs);
  }
  return errs;
}

function refuse(a: AdmissionAttributes, errs: string[]): never {
  const why = errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`;
  throw forbiddenObject('pods', '', a.name, why);
}

export function limitRanger(ranges: LimitRangeLookup): AdmissionPlugin {
  const applies = (a: AdmissionAttributes) => a.subresource === '' && a.object !== undefined && a.namespace !== undefined;
  return {
    name: 'LimitRanger',
    handles: (op, rt) => op === 'CREATE' && isCore(rt, 'pods'),
    mutate: (a) => {
      if (applies(a)) applyContainerDefaults(a.object!, ranges.inNamespace(a.namespace!));
    },
    validate: (a) => {
      if (!applies(a)) return;
      const errs = limitViolations(a.object!, ranges.inNamespace(a.namespace!));
      if (errs.length > 0) refuse(a, errs);
    },
  };
}
