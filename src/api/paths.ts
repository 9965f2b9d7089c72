// REST paths of served resources, derived from the registry (a group's prefix, a resource's
// name, its scope) instead of written by hand at every call site.
import { isStorageVersion, type ResourceType } from './resource.js';
import { allResourceTypes } from './registry.js';

// A kind served at several versions is named by its storage version.
const byGroupResource = new Map(allResourceTypes.filter(isStorageVersion).map((rt) => [`${rt.group}/${rt.resource}`, rt]));

/** The built-in type of `resource` in `group` ('' for core), undefined for any other (a custom resource's). */
export function builtInType(group: string, resource: string): ResourceType | undefined {
  return byGroupResource.get(`${group}/${resource}`);
}

/** The served type of `resource` in `group` ('' for core); throws for one skiff does not serve. */
export function servedType(group: string, resource: string): ResourceType {
  const rt = builtInType(group, resource);
  if (!rt) throw new Error(`${resource}${group ? `.${group}` : ''} is not a served resource`);
  return rt;
}

/** /api/v1 or /apis/<group>/<version>. */
export function groupVersionPath(rt: Pick<ResourceType, 'group' | 'version'>): string {
  return rt.group ? `/apis/${rt.group}/${rt.version}` : `/api/${rt.version}`;
}

/** The collection: in a namespace, or across all of them (and for cluster-scoped kinds) when none is given. */
export function collectionPath(rt: ResourceType, namespace?: string): string {
  return rt.namespaced && namespace !== undefined ? `${groupVersionPath(rt)}/namespaces/${namespace}/${rt.resource}` : `${groupVersionPath(rt)}/${rt.resource}`;
}

/** The collection path of `resource` in `group`, across namespaces (informers list and watch these). */
export function resourcePath(group: string, resource: string, namespace?: string): string {
  return collectionPath(servedType(group, resource), namespace);
}
