// What an extension API server says it serves, read off the APIResourceList it answers at
// /apis/<group>/<version> (the availability check fetches it anyway), as discovery entries beside
// the local ones: /apis, the aggregated discovery documents and `kubectl api-resources` then list
// them. Its kinds get an open OpenAPI schema (any fields) so clients that look one up find it.
import type { DiscoveredResource } from '../discovery.js';
import { arr, isObject, str } from '../../api/kinds/json.js';

/** A schema that accepts any object: what skiff publishes for a kind an extension server defines. */
const OPEN_SCHEMA: Record<string, unknown> = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

const strings = (v: unknown): string[] => arr(v).filter((x): x is string => typeof x === 'string');

/**
 * The resources of an APIResourceList body for `group`/`version`; undefined when the body is not
 * one (an extension server answering garbage adds nothing). Subresources (`name/sub`) are left
 * out: the proxy serves them whatever discovery says.
 */
export function remoteResources(body: unknown, group: string, version: string): DiscoveredResource[] | undefined {
  if (!isObject(body) || body.kind !== 'APIResourceList' || !Array.isArray(body.resources)) return undefined;
  const out: DiscoveredResource[] = [];
  for (const r of body.resources) {
    if (!isObject(r)) continue;
    const name = str(r.name);
    const kind = str(r.kind);
    if (!name || !kind || name.includes('/')) continue;
    out.push({
      group,
      version,
      resource: name,
      kind,
      singular: str(r.singularName) || kind.toLowerCase(),
      namespaced: r.namespaced === true,
      shortNames: strings(r.shortNames),
      categories: strings(r.categories),
      subresources: [],
      verbs: strings(r.verbs),
      openApiSchema: OPEN_SCHEMA,
    });
  }
  return out;
}
