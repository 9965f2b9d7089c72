// /openapi/v3: one document per group-version, as upstream serves them. kubectl reads them to
// explain kinds, to compute client-side apply patches, and to learn (from the fieldValidation
// parameter on PATCH) that the server validates fields itself.
import type { KindDefinitions, OpenApiSchema, RefPrefix } from './definitions.js';

/** What the document of a resource needs: where it is served and the definitions of its kind. */
export interface OpenApiResource {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs?: string[];
  definitions(prefix: RefPrefix): KindDefinitions | undefined;
}

const PARAMS = [
  { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } },
  { name: 'fieldManager', in: 'query', schema: { type: 'string', uniqueItems: true } },
  { name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } },
];

/** A patchable resource's object path, and the kind its operations name. */
export interface PatchablePath {
  path: string;
  gvk: { group: string; version: string; kind: string };
}

/** The object path of every type that takes PATCH, for the operations both documents describe. */
export function patchablePaths(types: readonly OpenApiResource[]): PatchablePath[] {
  const out: PatchablePath[] = [];
  for (const rt of types) {
    if (rt.verbs && !rt.verbs.includes('patch')) continue;
    const gv = rt.group ? `${rt.group}/${rt.version}` : rt.version;
    const base = rt.group ? `/apis/${gv}` : `/api/${gv}`;
    out.push({ path: rt.namespaced ? `${base}/namespaces/{namespace}/${rt.resource}/{name}` : `${base}/${rt.resource}/{name}`, gvk: { group: rt.group, version: rt.version, kind: rt.kind } });
  }
  return out;
}

/** The query parameters kubectl looks for on an object's PATCH to learn what the server does itself. */
export const VERIFIABLE_QUERY_PARAMS = PARAMS.map((p) => p.name);

/** The document of one group-version: PATCH and PUT operations naming their kind, and every definition they need. */
export function openApiV3Document(gv: string, types: readonly OpenApiResource[], serverVersion: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, OpenApiSchema> = {};
  // The first definition of a name stays: built-in kinds come first and a custom one never replaces them.
  for (const rt of types) for (const [name, schema] of rt.definitions('#/components/schemas/')?.schemas ?? []) schemas[name] ??= schema;
  for (const { path, gvk } of patchablePaths(types)) {
    const operation = (action: string): unknown => ({ 'x-kubernetes-action': action, 'x-kubernetes-group-version-kind': gvk, parameters: PARAMS, responses: { '200': { description: 'OK' } } });
    paths[path] = { patch: operation('patch'), put: operation('put') };
  }
  // A read-only kind (metrics.k8s.io's) names itself on its get, which is how kubectl explain finds it.
  for (const rt of types) {
    if (!rt.verbs || rt.verbs.includes('patch') || !rt.verbs.includes('get')) continue;
    const base = rt.group ? `/apis/${gv}` : `/api/${gv}`;
    const item = rt.namespaced ? `${base}/namespaces/{namespace}/${rt.resource}/{name}` : `${base}/${rt.resource}/{name}`;
    paths[item] = { get: { 'x-kubernetes-action': 'get', 'x-kubernetes-group-version-kind': { group: rt.group, version: rt.version, kind: rt.kind }, parameters: [], responses: { '200': { description: 'OK' } } } };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: serverVersion },
    paths,
    components: { schemas: sortedByName(schemas) },
  };
}

/** Swagger 2.0's single document: every definition of every served kind. */
export function openApiV2Definitions(types: readonly OpenApiResource[]): Record<string, OpenApiSchema> {
  const out: Record<string, OpenApiSchema> = {};
  for (const rt of types) for (const [name, schema] of rt.definitions('#/definitions/')?.schemas ?? []) out[name] ??= schema;
  return sortedByName(out);
}

function sortedByName(m: Record<string, OpenApiSchema>): Record<string, OpenApiSchema> {
  return Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
