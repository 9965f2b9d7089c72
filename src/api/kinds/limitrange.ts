// core/v1 LimitRange: per-namespace bounds and defaults for what containers and pods ask for,
// enforced and applied by the LimitRanger admission plugin.
import { field } from '../errors.js';
import { compareQuantities, milliValue, quantityErrors, quantityText } from '../quantity.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { indexPath, invalidRendered, keyPath, nameIsDNSSubdomain, validateMeta } from '../validation.js';
import { isObject, objArr, str } from './json.js';
import { column, nameColumn } from './printing.js';

export type Quantities = Record<string, string | number>;

export interface LimitRangeItem {
  type?: string;
  max?: Quantities;
  min?: Quantities;
  default?: Quantities;
  defaultRequest?: Quantities;
  maxLimitRequestRatio?: Quantities;
}

export interface LimitRange extends KubeObject {
  metadata: ObjectMeta;
  spec?: { limits?: LimitRangeItem[] };
}

const BOUNDS = ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio'] as const;

/** The well-formed quantities of one bound map; malformed ones are reported by validation. */
export function quantities(v: unknown): Quantities {
  const out: Quantities = {};
  if (!isObject(v)) return out;
  for (const [k, q] of Object.entries(v)) if ((typeof q === 'string' || typeof q === 'number') && quantityErrors(q).length === 0) out[k] = q;
  return out;
}

function validateItem(item: Record<string, unknown>, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const type = str(item.type);
  if (!type) out.push(field.required(`${path}.type`));
  for (const bound of BOUNDS) {
    if (!isObject(item[bound])) continue;
    for (const [k, v] of Object.entries(item[bound])) {
      for (const m of quantityErrors(v)) out.push(field.invalid(keyPath(`${path}.${bound}`, k), v, m));
    }
  }
  const [max, min, def, defReq, ratio] = BOUNDS.map((b) => quantities(item[b]));
  if (type === 'Pod') {
    if (Object.keys(def!).length > 0) out.push(field.forbidden(`${path}.default`, "may not be specified when `type` is 'Pod'"));
    if (Object.keys(defReq!).length > 0) out.push(field.forbidden(`${path}.defaultRequest`, "may not be specified when `type` is 'Pod'"));
  }
  const bad = (bound: string, k: string, v: string | number, detail: string) => out.push(invalidRendered(keyPath(`${path}.${bound}`, k), quantityText(v), detail));
  for (const k of new Set([...Object.keys(min!), ...Object.keys(max!), ...Object.keys(def!), ...Object.keys(defReq!)])) {
    const mn = min![k];
    const mx = max![k];
    const d = def![k];
    const dr = defReq![k];
    if (mn !== undefined && mx !== undefined && compareQuantities(mn, mx) > 0) bad('min', k, mn, `min value ${quantityText(mn)} is greater than max value ${quantityText(mx)}`);
    if (dr !== undefined && mn !== undefined && compareQuantities(mn, dr) > 0) bad('defaultRequest', k, dr, `min value ${quantityText(mn)} is greater than default request value ${quantityText(dr)}`);
    if (dr !== undefined && mx !== undefined && compareQuantities(dr, mx) > 0) bad('defaultRequest', k, dr, `default request value ${quantityText(dr)} is greater than max value ${quantityText(mx)}`);
    if (dr !== undefined && d !== undefined && compareQuantities(dr, d) > 0) bad('defaultRequest', k, dr, `default request value ${quantityText(dr)} is greater than default limit value ${quantityText(d)}`);
    if (d !== undefined && mn !== undefined && compareQuantities(mn, d) > 0) bad('default', k, d, `min value ${quantityText(mn)} is greater than default value ${quantityText(d)}`);
    if (d !== undefined && mx !== undefined && compareQuantities(d, mx) > 0) bad('default', k, d, `default value ${quantityText(d)} is greater than max value ${quantityText(mx)}`);
  }
  for (const [k, r] of Object.entries(ratio!)) {
    if (compareQuantities(r, 1) < 0) bad('maxLimitRequestRatio', k, r, `ratio ${quantityText(r)} is less than 1`);
    const mn = min![k];
    const mx = max![k];
    if (mn !== undefined && mx !== undefined && milliValue(mn) > 0) {
      const most = milliValue(mx) / milliValue(mn);
      if (milliValue(r) / 1000 > most) bad('maxLimitRequestRatio', k, r, `ratio ${quantityText(r)} is greater than max/min = ${most.toFixed(6)}`);
    }
  }
  return out;
}

function validateLimitRange(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  const spec = isObject(o.spec) ? o.spec : {};
  objArr(spec.limits).forEach((item, i) => out.push(...validateItem(item, indexPath('spec.limits', i))));
  return out;
}

export const limitRangeResource: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'limitranges',
  kind: 'LimitRange',
  listKind: 'LimitRangeList',
  singular: 'limitrange',
  namespaced: true,
  shortNames: ['limits'],
  categories: [],
  subresources: [],
  fieldSelectors: {},
  table: {
    columns: [nameColumn, column('Created At', 'date', 'CreationTimestamp is a timestamp representing the server time when this object was created.')],
    cells: (o) => [o.metadata?.name ?? '', o.metadata?.creationTimestamp ?? ''],
  },
  hasGeneration: false,
  defaults: (o) => {
    // As upstream's defaulting: a Container item's default limit doubles as its default request,
    // and a max stands in for a missing default limit.
    for (const item of objArr(isObject(o.spec) ? o.spec.limits : undefined)) {
      if (item.type !== 'Container') continue;
      const max = isObject(item.max) ? item.max : {};
      const def = (item.default = isObject(item.default) ? item.default : {});
      for (const [k, v] of Object.entries(max)) if (!(k in def)) def[k] = v;
      const min = isObject(item.min) ? item.min : {};
      const req = (item.defaultRequest = isObject(item.defaultRequest) ? item.defaultRequest : {});
      for (const [k, v] of Object.entries(def)) if (!(k in req)) req[k] = v;
      for (const [k, v] of Object.entries(min)) if (!(k in req)) req[k] = v;
      if (Object.keys(def).length === 0) delete item.default;
      if (Object.keys(req).length === 0) delete item.defaultRequest;
    }
  },
  validate: validateLimitRange,
};
