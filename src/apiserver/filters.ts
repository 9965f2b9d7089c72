// Label and field selectors from a request, turned into one filter the cache and store paths share.
import type { ResourceType } from '../api/resource.js';
import type { KubeObject } from '../api/types.js';
import { parseLabelSelector } from '../api/labels.js';
import { parseFieldSelector, exactValue } from '../api/fields.js';
import type { WatchFilter } from './watch-cache.js';

export function buildFilter(
  rt: ResourceType,
  opts: { namespace?: string | undefined; labelSelector?: string | null; fieldSelector?: string | null; name?: string | undefined },
  indexedFields: string[],
): WatchFilter {
  const checks: ((o: KubeObject) => boolean)[] = [];
  if (opts.namespace && rt.namespaced) {
    const ns = opts.namespace;
    checks.push((o) => o.metadata.namespace === ns);
  }
  if (opts.name) {
    const name = opts.name;
    checks.push((o) => o.metadata.name === name);
  }
  if (opts.labelSelector) {
    const sel = parseLabelSelector(opts.labelSelector);
    checks.push((o) => sel.matches(o.metadata.labels ?? {}));
  }
  let indexed: WatchFilter['indexed'];
  if (opts.fieldSelector) {
    const sel = parseFieldSelector(opts.fieldSelector, rt.fieldSelectors);
    checks.push((o) => sel.matches(o));
    for (const field of indexedFields) {
      const value = exactValue(sel, field);
      if (value !== undefined && value !== '') {
        indexed = { field, value };
        break;
      }
    }
  }
  const matches = checks.length === 0 ? () => true : (o: KubeObject) => checks.every((c) => c(o));
  return indexed ? { matches, indexed } : { matches };
}
