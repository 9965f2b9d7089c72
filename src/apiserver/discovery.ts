// Discovery documents (legacy and aggregated) and the index of the OpenAPI v3 documents.
import { KUBERNETES_VERSION } from '../version.js';
import { createHash } from 'node:crypto';
import type { ResourceType, Subresource } from '../api/resource.js';
import { apiVersionOf } from '../api/types.js';
import { builtinKindDefinitions, customKindDefinitions, type KindDefinitions, type RefPrefix } from './openapi/definitions.js';
import { openApiV2Definitions, openApiV3Document, patchablePaths, type OpenApiResource } from './openapi/v3.js';
import { openApiV2Document, wantsProtobufV2, type OpenApiV2 } from './openapi/v2.js';

export const SERVED_VERSION = KUBERNETES_VERSION;

interface SubresourceInfo {
  group: string;
  version: string;
  kind: string;
  verbs: string[];
}

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** What discovery tells about a resource; `verbs` defaults to every verb of a stored resource. */
export type DiscoveredResource = Pick<ResourceType, 'group' | 'version' | 'resource' | 'kind' | 'singular' | 'namespaced' | 'shortNames' | 'categories' | 'subresources' | 'openApiSchema' | 'storageVersion'> & {
  verbs?: string[];
  /** The OpenAPI definitions of its kind, when not the built-in messages' (custom resources). */
  definitions?(prefix: RefPrefix): KindDefinitions | undefined;
};

function subresourceInfo(rt: DiscoveredResource, sub: Subresource): SubresourceInfo {
  switch (sub) {
    case 'status':
    case 'approval':
      return { group: rt.group, version: rt.version, kind: rt.kind, verbs: ['get', 'patch', 'update'] };
    case 'scale':
      return { group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] };
    case 'binding':
      return { group: '', version: 'v1', kind: 'Binding', verbs: ['create'] };
    case 'eviction':
      return { group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] };
    case 'log':
      return { group: '', version: 'v1', kind: 'Pod', verbs: ['get'] };
    case 'exec':
      return { group: '', version: 'v1', kind: 'PodExecOptions', verbs: ['create', 'get'] };
    case 'attach':
      return { group: '', version: 'v1', kind: 'PodAttachOptions', verbs: ['create', 'get'] };
    case 'portforward':
      return { group: '', version: 'v1', kind: 'PodPortForwardOptions', verbs: ['create', 'get'] };
    case 'token':
      return { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'] };
    case 'finalize':
      return { group: '', version: 'v1', kind: 'Namespace', verbs: ['update'] };
  }
}

function contentHash(text: string): string {
  return createHash('sha256').update(text).digest('base64').slice(0, 11);
}

/** Upstream's: the first 8 bytes of sha256("group/version/kind"), base64 with its padding. */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

/**
 * Upstream's version priority (kube-aware sort): GA before beta before alpha, higher numbers
 * first within each, then versions that follow no pattern, by name.
 */
export function compareVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number, string] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [3, 0, 0, v];
    const stage = m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2;
    return [stage, -Number(m[1]), -Number(m[3] ?? 0), v];
  };
  const [x, y] = [rank(a), rank(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return x[3] < y[3] ? -1 : x[3] > y[3] ? 1 : 0;
}

export class Discovery {
  private types: DiscoveredResource[] = [];
  /** Group-versions served elsewhere (aggregated APIs) whose resources are not known yet. */
  private pending: { group: string; version: string }[] = [];
  private groups = new Map<string, DiscoveredResource[]>();
  private openApiCache = new Map<string, { text: string; hash: string }>();
  private openApiV2Cache = new Map<string, OpenApiV2>();

  constructor(types: DiscoveredResource[]) {
    this.setTypes(types);
  }

  /**
   * Serves `types` from now on (custom resources come and go while the server runs), and lists
   * the group-versions of `elsewhere` (aggregated APIs) even while their servers have not said
   * what they serve.
   */
  setTypes(types: DiscoveredResource[], elsewhere: readonly { group: string; version: string }[] = []): void {
    this.types = types;
    this.pending = elsewhere.filter((gv) => !types.some((rt) => rt.group === gv.group && rt.version === gv.version));
    this.groups = new Map();
    for (const rt of types) {
      const gv = apiVersionOf(rt.group, rt.version);
      const list = this.groups.get(gv) ?? [];
      list.push(rt);
      this.groups.set(gv, list);
    }
    this.openApiCache = new Map();
    this.openApiV2Cache = new Map();
  }

  /** The named groups, sorted by name, each with its versions by priority (the first is preferred). */
  private namedGroups(): { group: string; versions: string[] }[] {
    const byGroup = new Map<string, Set<string>>();
    for (const rt of [...this.types, ...this.pending]) {
      if (!rt.group) continue;
      let versions = byGroup.get(rt.group);
      if (!versions) byGroup.set(rt.group, (versions = new Set()));
      versions.add(rt.version);
    }
    return [...byGroup.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([group, versions]) => ({ group, versions: [...versions].sort(compareVersions) }));
  }

  hasGroupVersion(group: string, version: string): boolean {
    return this.groups.has(apiVersionOf(group, version));
  }

  apiVersions(serverAddress: string): unknown {
    return {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
    };
  }

  apiGroupList(): unknown {
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: this.namedGroups().map((g) => this.apiGroupBody(g.group, g.versions)),
    };
  }

  private apiGroupBody(group: string, versions: string[]): Record<string, unknown> {
    const list = versions.map((version) => ({ groupVersion: `${group}/${version}`, version }));
    return { name: group, versions: list, preferredVersion: list[0] };
  }

  apiGroup(group: string): unknown | undefined {
    const g = this.namedGroups().find((x) => x.group === group);
    return g ? { kind: 'APIGroup', apiVersion: 'v1', ...this.apiGroupBody(g.group, g.versions) } : undefined;
  }

  apiResourceList(group: string, version: string): unknown | undefined {
    const types = this.groups.get(apiVersionOf(group, version));
    if (!types) return undefined;
    const resources: Record<string, unknown>[] = [];
    for (const rt of types) {
      const entry: Record<string, unknown> = {
        name: rt.resource,
        singularName: rt.singular,
        namespaced: rt.namespaced,
        kind: rt.kind,
        verbs: rt.verbs ?? ALL_VERBS,
      };
      // One hash for every version of a resource: it names where the objects are stored.
      if (!rt.verbs) entry.storageVersionHash = storageVersionHash(rt.group, rt.storageVersion ?? rt.version, rt.kind);
      if (rt.shortNames.length > 0) entry.shortNames = rt.shortNames;
      if (rt.categories.length > 0) entry.categories = rt.categories;
      resources.push(entry);
      for (const sub of rt.subresources) {
        const info = subresourceInfo(rt, sub);
        const e: Record<string, unknown> = { name: `${rt.resource}/${sub}`, singularName: '', namespaced: rt.namespaced, kind: info.kind, verbs: info.verbs };
        if (info.group !== rt.group || info.version !== rt.version) {
          e.group = info.group;
          e.version = info.version;
        }
        resources.push(e);
      }
    }
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf(group, version), resources };
  }

  /** Aggregated discovery (apidiscovery.k8s.io/v2): core when `legacy`, else every other group. */
  aggregated(legacy: boolean, apiVersion: 'v2' | 'v2beta1'): unknown {
    const entries = legacy ? [{ group: '', versions: ['v1'] }] : this.namedGroups();
    return {
      kind: 'APIGroupDiscoveryList',
      apiVersion: `apidiscovery.k8s.io/${apiVersion}`,
      metadata: {},
      items: entries.map(({ group, versions }) => ({
        metadata: { name: group },
        versions: versions.map((version) => ({
          version,
          // An aggregated API whose server has not answered yet: listed, its resources unknown.
          freshness: this.groups.has(apiVersionOf(group, version)) ? 'Current' : 'Stale',
          resources: (this.groups.get(apiVersionOf(group, version)) ?? []).map((rt) => {
            const r: Record<string, unknown> = {
              resource: rt.resource,
              responseKind: { group: rt.group, version: rt.version, kind: rt.kind },
              scope: rt.namespaced ? 'Namespaced' : 'Cluster',
              singularResource: rt.singular,
              verbs: rt.verbs ?? ALL_VERBS,
            };
            if (rt.shortNames.length > 0) r.shortNames = rt.shortNames;
            if (rt.categories.length > 0) r.categories = rt.categories;
            const subs = rt.subresources.map((sub) => {
              const info = subresourceInfo(rt, sub);
              return { subresource: sub, responseKind: { group: info.group, version: info.version, kind: info.kind }, verbs: info.verbs };
            });
            if (subs.length > 0) r.subresources = subs;
            return r;
          }),
        })),
      })),
    };
  }

  /** /openapi/v3: where each group-version's document is, with a hash that changes when it does. */
  openApiIndex(): unknown {
    const paths: Record<string, { serverRelativeURL: string }> = {};
    for (const [gv] of this.groups) {
      const p = gv.includes('/') ? `apis/${gv}` : `api/${gv}`;
      paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${this.openApiV3(gv)!.hash}` };
    }
    return { paths };
  }

  /** A group-version's OpenAPI v3 document (`path` as in the index: apis/apps/v1), or undefined. */
  openApiDocument(path: string): string | undefined {
    const gv = path.startsWith('apis/') ? path.slice(5) : path.startsWith('api/') ? path.slice(4) : undefined;
    return gv ? this.openApiV3(gv)?.text : undefined;
  }

  private openApiV3(gv: string): { text: string; hash: string } | undefined {
    const cached = this.openApiCache.get(gv);
    if (cached) return cached;
    const types = this.groups.get(gv);
    if (!types) return undefined;
    const text = `${JSON.stringify(openApiV3Document(gv, types.map(withDefinitions), SERVED_VERSION.gitVersion))}\n`;
    const doc = { text, hash: contentHash(text) };
    this.openApiCache.set(gv, doc);
    return doc;
  }

  /** /openapi/v2 in the form `accept` asks for, built once per set of served types. */
  openApiV2(accept: string): OpenApiV2 {
    const form = wantsProtobufV2(accept) ? 'protobuf' : 'json';
    const cached = this.openApiV2Cache.get(form);
    if (cached) return cached;
    const types = this.types.map(withDefinitions);
    const doc = openApiV2Document(SERVED_VERSION.gitVersion, accept, () => openApiV2Definitions(types), () => patchablePaths(types));
    this.openApiV2Cache.set(form, doc);
    return doc;
  }
}

/** A discovered resource with the definitions of its kind: its own, or the built-in messages'. */
function withDefinitions(rt: DiscoveredResource): OpenApiResource {
  const custom = rt.openApiSchema;
  const definitions = custom
    ? (prefix: RefPrefix) => customKindDefinitions({ group: rt.group, version: rt.version, kind: rt.kind }, custom, prefix)
    : (prefix: RefPrefix) => rt.definitions?.(prefix) ?? builtinKindDefinitions(apiVersionOf(rt.group, rt.version), rt.kind, prefix);
  return { ...rt, definitions };
}
