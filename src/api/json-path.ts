// The simple JSON paths CRDs name (printer columns, scale replicas, selectable fields), in kubectl's
// syntax: `.spec.replicas`, `.items[0].name`, `.status.conditions[?(@.type=="Ready")].status`.
import { JSONPath } from 'jsonpath-plus';

/** A simple JSON path (`.spec.replicas`, `.status.conditions[?(@.type=="Ready")].status`) evaluated as kubectl's printer does: the first match. */
export function evaluateJsonPath(obj: unknown, path: string): unknown {
  if (typeof obj !== 'object' || obj === null) return undefined;
  const expr = path.startsWith('.') ? `$${path}` : path.startsWith('$') ? path : `$.${path}`;
  try {
    const found = JSONPath({ path: expr, json: obj as object, wrap: true }) as unknown[];
    return found.length > 0 ? found[0] : undefined;
  } catch {
    return undefined;
  }
}

/** Sets the value at a `.a.b.c` path, creating the objects on the way. */
export function setAtPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.replace(/^\./, '').split('.');
  let at = obj;
  for (const p of parts.slice(0, -1)) {
    const next = at[p];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) at[p] = {};
    at = at[p] as Record<string, unknown>;
  }
  at[parts[parts.length - 1]!] = value;
}

