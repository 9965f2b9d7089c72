// A quota's scopes: the plain `scopes` list and `scopeSelector` expressions, read as one list of
// requirements (a plain scope is the requirement that it exists), as upstream reads them.
import { arr, isObject, obj, str } from '../kinds/json.js';
import type { KubeObject } from '../types.js';

export interface ScopeRequirement {
  scopeName: string;
  operator: string;
  values: string[];
}

export function scopeRequirementsOf(quota: KubeObject): ScopeRequirement[] {
  const spec = obj(quota.spec);
  const out: ScopeRequirement[] = arr(spec.scopes).map((s) => ({ scopeName: str(s), operator: 'Exists', values: [] }));
  const selector = obj(spec.scopeSelector);
  for (const e of arr(selector.matchExpressions)) {
    if (!isObject(e)) continue;
    out.push({ scopeName: str(e.scopeName), operator: str(e.operator), values: arr(e.values).map(str) });
  }
  return out;
}

/** A selector requirement against the one value the scope has for an object (undefined: none). */
export function requirementMatches(req: ScopeRequirement, value: string | undefined): boolean {
  switch (req.operator) {
    case 'In':
      return value !== undefined && req.values.includes(value);
    case 'NotIn':
      return value === undefined || !req.values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    default:
      return false;
  }
}
