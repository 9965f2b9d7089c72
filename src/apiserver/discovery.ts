// Discovery documents (legacy and aggregated) and the index of the OpenAPI v3 documents.
import { KUBERNETES_VERSION } from '../version.js';
import { createHash } from 'node:crypto';
import type { ResourceType, Subresource } from '../api/resource.js';
import { apiVersionOf } from '../api/types.js';
import { builtinKindDefinitions, type KindDefinitions, type RefPrefix } from './openapi/definitions.js';
import { openApiV2Definitions, openApiV3Document, type OpenApiResource } from './openapi/v3.js';

export const SERVED_VERSION = KUBERNETES_VERSION;

interface SubresourceInfo {
  group: string;
  version: string;
  kind: string;
  verbs: string[];
}

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** What discovery tells about a resource; `verbs` defaults to every verb of a stored resource. */
export type DiscoveredResource = Pick<ResourceType, 'group' | 'version' | 'resource' | 'kind' | 'singular' | 'namespaced' | 'shortNames' | 'categories' | 'subresources'> & {
  verbs?: string[];
  /** The OpenAPI definitions of its kind, when not the built-in messages' (custom resources). */
  definitions?(prefix: RefPrefix): KindDefinitions | undefined;
};

function subresourceInfo(rt: DiscoveredResource, sub: Subresource): SubresourceInfo {
  switch (sub) {
    case 'status':
      return { group: rt.group, version: rt.version, kind: rt.kind, verbs: ['get', 'patch', 'update'] };
    case 'scale':
      return { group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] };
    case 'binding':
      return { group: '', version: 'v1', kind: 'Binding', verbs: ['create'] };
    case 'eviction':
      return { group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] };
    case 'log':
      return { group: '', version: 'v1', kind: 'Pod', verbs: ['get'] };
    case 'token':
      return { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'] };
    case 'finalize':
      return { group: '', version: 'v1', kind: 'Namespace', verbs: ['update'] };
  }
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('base64').slice(0, 11);
}

export class Discovery {
  private readonly groups: Map<string, DiscoveredResource[]>;
  private readonly openApiCache = new Map<string, { text: string; hash: string }>();
  constructor(private readonly types: DiscoveredResource[]) {
    this.groups = new Map();
    for (const rt of types) {
      const gv = apiVersionOf(rt.group, rt.version);
      const list = this.groups.get(gv) ?? [];
      list.push(rt);
      this.groups.set(gv, list);
    }
  }

  /** The non-core group/versions, sorted the way upstream prefers (by group name). */
  private groupVersions(): { group: string; version: string }[] {
    const seen = new Map<string, { group: string; version: string }>();
    for (const rt of this.types) if (rt.group) seen.set(apiVersionOf(rt.group, rt.version), { group: rt.group, version: rt.version });
    return [...seen.values()].sort((a, b) => a.group.localeCompare(b.group));
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
      groups: this.groupVersions().map((gv) => this.apiGroupBody(gv.group, gv.version)),
    };
  }

  private apiGroupBody(group: string, version: string): Record<string, unknown> {
    const v = { groupVersion: `${group}/${version}`, version };
    return { name: group, versions: [v], preferredVersion: v };
  }

  apiGroup(group: string): unknown | undefined {
    const gv = this.groupVersions().find((g) => g.group === group);
    return gv ? { kind: 'APIGroup', apiVersion: 'v1', ...this.apiGroupBody(gv.group, gv.version) } : undefined;
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
      if (!rt.verbs) entry.storageVersionHash = hash(`${rt.group}/${rt.version}/${rt.kind}`);
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
    const entries = legacy ? [{ group: '', version: 'v1' }] : this.groupVersions();
    return {
      kind: 'APIGroupDiscoveryList',
      apiVersion: `apidiscovery.k8s.io/${apiVersion}`,
      metadata: {},
      items: entries.map(({ group, version }) => ({
        metadata: { name: group },
        versions: [
          {
            version,
            freshness: 'Current',
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
          },
        ],
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
    const doc = { text, hash: hash(text) };
    this.openApiCache.set(gv, doc);
    return doc;
  }

  /** Swagger 2.0 definitions of every served kind. */
  openApiV2Definitions(): Record<string, unknown> {
    return openApiV2Definitions(this.types.map(withDefinitions));
  }
}

/** A discovered resource with the definitions of its kind: its own, or the built-in messages'. */
function withDefinitions(rt: DiscoveredResource): OpenApiResource {
  return { ...rt, definitions: (prefix) => rt.definitions?.(prefix) ?? builtinKindDefinitions(apiVersionOf(rt.group, rt.version), rt.kind, prefix) };
}
