// Turns a URL path and method into the Kubernetes request attributes (verb, group, resource,
// namespace, name, subresource), as upstream's RequestInfoFactory does.
import { badRequest } from '../../api/errors.js';
import { queryBool } from '../../api/query-params.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'impersonate';

export interface ResourceRequest {
  kind: 'resource';
  verb: Verb;
  group: string;
  version: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** A list or watch narrowed to one object by a metadata.name field selector: authorization sees that name. */
  selectedName?: string;
}

export interface NonResourceRequest {
  kind: 'nonresource';
  /** The HTTP method in lower case, as upstream names non-resource verbs ("get", "post"). */
  verb: string;
  path: string;
}

export type RequestInfo = ResourceRequest | NonResourceRequest;

/**
 * `isNamespacedResource(group, version, resource)` tells whether "namespaces/foo/<x>" names a
 * namespaced collection or a subresource of the Namespace foo.
 */
/** One percent-encoded path segment; a malformed escape is the client's error, not the server's. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest(`invalid URL escape in path segment ${JSON.stringify(segment)}`);
  }
}

export function parseRequestInfo(
  method: string,
  path: string,
  query: URLSearchParams,
  isNamespacedResource: (group: string, version: string, resource: string) => boolean,
): RequestInfo {
  const segments = path.split('/').filter((p) => p.length > 0);
  const parts = path.includes('%') ? segments.map(decodeSegment) : segments;
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    version = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1]!;
    version = parts[2]!;
    rest = parts.slice(3);
  } else {
    return { kind: 'nonresource', verb: method.toLowerCase(), path };
  }
  let watchPath = false;
  if (rest[0] === 'watch') {
    // Deprecated /watch/ prefix, still accepted upstream.
    watchPath = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3 && isNamespacedResource(group, version, rest[2]!)) {
    namespace = rest[1];
    rest = rest.slice(2);
  } else if (rest[0] === 'namespaces' && rest.length >= 2) {
    // The Namespace object itself (and its status/finalize subresources).
    namespace = undefined;
  }
  const [resource, name, subresource, ...extra] = rest;
  // Only proxy carries a path of its own after the subresource (pods/NAME/proxy/some/path).
  if (!resource || (extra.length > 0 && subresource !== 'proxy')) return { kind: 'nonresource', verb: method.toLowerCase(), path };
  const isWatch = watchPath || queryBool(query, 'watch');
  let verb: Verb;
  switch (method) {
    case 'GET':
    case 'HEAD':
      verb = name ? (isWatch ? 'watch' : 'get') : isWatch ? 'watch' : 'list';
      break;
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name ? 'delete' : 'deletecollection';
      break;
    default:
      verb = 'get';
  }
  const out: ResourceRequest = { kind: 'resource', verb, group, version, resource };
  if (namespace !== undefined) out.namespace = namespace;
  if (name !== undefined) out.name = name;
  if (subresource !== undefined) out.subresource = subresource;
  if (name === undefined && (verb === 'list' || verb === 'watch')) {
    const selected = selectedName(query.get('fieldSelector'));
    if (selected !== undefined) out.selectedName = selected;
  }
  return out;
}

/** X when a field selector requires metadata.name=X (or ==X), as upstream's RequiresExactMatch reads it. */
function selectedName(fieldSelector: string | null): string | undefined {
  if (!fieldSelector) return undefined;
  for (const term of fieldSelector.split(',')) {
    const m = /^\s*metadata\.name\s*==?\s*(.*?)\s*$/.exec(term);
    if (m && m[1] && !m[1].includes('/') && m[1] !== '.' && m[1] !== '..') return m[1];
  }
  return undefined;
}

/**
 * The name and namespace authorization sees, as upstream's RequestInfoFactory sets them: a list or
 * watch narrowed to one name names it, and a Namespace is in itself (so a RoleBinding in a
 * namespace can grant reading that Namespace).
 */
export function authorizationScope(info: ResourceRequest): { name?: string; namespace?: string } {
  const name = info.name ?? info.selectedName;
  const namespace = info.namespace ?? (info.group === '' && info.resource === 'namespaces' ? info.name : undefined);
  return { ...(name !== undefined ? { name } : {}), ...(namespace !== undefined ? { namespace } : {}) };
}
