// What a node credential (system:node:<name>, group system:nodes) may do, as upstream's Node
// authorizer and NodeRestriction admission allow: its own Node and Lease, the pods bound to it,
// events, reads of what it needs to run pods, and of Secrets and ConfigMaps only those its pods use.
import type { KubeObject } from '../api/types.js';
import { obj, objArr } from '../api/kinds/json.js';
import { NO_RULE, type Authorizer } from './auth.js';
import { authorizationScope, type RequestInfo } from './http/request-info.js';
import type { UserInfo } from './request-context.js';
import { nodeNameOf } from '../auth/user.js';

// endpointslices: the agent keeps its node's Service rules, as kube-proxy does.
const READABLE = new Set(['pods', 'nodes', 'services', 'endpoints', 'endpointslices', 'namespaces', 'poddisruptionbudgets', 'leases']);
const READ_VERBS = new Set(['get', 'list', 'watch']);

/** The Secrets or ConfigMaps a pod uses: env, envFrom, volumes (projected too) and image pull secrets. */
export function podReferences(pod: KubeObject, kind: 'secrets' | 'configmaps'): Set<string> {
  const out = new Set<string>();
  const spec = obj(pod.spec);
  const add = (v: unknown) => typeof v === 'string' && v !== '' && out.add(v);
  for (const list of ['containers', 'initContainers', 'ephemeralContainers']) {
    for (const c of objArr(spec[list])) {
      for (const e of objArr(c.env)) {
        const from = obj(e.valueFrom);
        add(obj(kind === 'secrets' ? from.secretKeyRef : from.configMapKeyRef).name);
      }
      for (const e of objArr(c.envFrom)) add(obj(kind === 'secrets' ? e.secretRef : e.configMapRef).name);
    }
  }
  for (const v of objArr(spec.volumes)) {
    if (kind === 'secrets') add(obj(v.secret).secretName);
    else add(obj(v.configMap).name);
    for (const src of objArr(obj(v.projected).sources)) add(obj(kind === 'secrets' ? src.secret : src.configMap).name);
  }
  if (kind === 'secrets') for (const r of objArr(spec.imagePullSecrets)) add(r.name);
  return out;
}

export class NodeAuthorizer implements Authorizer {
  constructor(
    /** A pod as this server's watch cache holds it (may be behind the store). */
    private readonly cachedPod: (namespace: string, name: string) => KubeObject | undefined,
    /** Reads a pod from storage to check which node it is bound to. */
    private readonly lookupPod: (namespace: string, name: string) => Promise<KubeObject | undefined>,
    /** The pods bound to a node, as this server's cache holds them. */
    private readonly podsOnNode: (node: string) => KubeObject[],
    private readonly next?: Authorizer,
  ) {}

  async authorize(user: UserInfo, info: RequestInfo): Promise<string | undefined> {
    const node = nodeNameOf(user);
    if (node === undefined) return this.next ? this.next.authorize(user, info) : NO_RULE;
    const reason = await this.decide(node, info);
    if (reason === undefined) return undefined;
    // Upstream's Node authorizer has no opinion where its rules do not allow: RBAC may still grant
    // (a role bound to system:nodes, say); refused, the node rule's reason is the one given.
    const rbac = this.next ? await this.next.authorize(user, info) : NO_RULE;
    return rbac === undefined ? undefined : reason;
  }

  private async decide(node: string, info: RequestInfo): Promise<string | undefined> {
    // Discovery and health come from RBAC's roles for every authenticated user; /metrics does not.
    if (info.kind === 'nonresource') return NO_RULE;
    const { verb, group, resource, name, namespace, subresource } = info;
    if (READ_VERBS.has(verb) && READABLE.has(resource) && !subresource) return undefined;
    // Secrets and ConfigMaps: one at a time, and only those a pod bound to this node uses.
    if (group === '' && (resource === 'secrets' || resource === 'configmaps') && READ_VERBS.has(verb) && !subresource) {
      // A watch of one object (metadata.name field selector) counts as reading that object, as the kubelet watches them.
      const target = authorizationScope(info).name;
      if (target && namespace && this.podsOnNode(node).some((p) => p.metadata.namespace === namespace && podReferences(p, resource).has(target))) return undefined;
      return `no relationship found between node '${node}' and this object`;
    }
    // Tokens for projected volumes: only for a service account a pod on this node runs as.
    if (group === '' && resource === 'serviceaccounts' && subresource === 'token' && verb === 'create') {
      const uses = (p: KubeObject) => p.metadata.namespace === namespace && ((p.spec as { serviceAccountName?: string } | undefined)?.serviceAccountName || 'default') === name;
      if (name && namespace && this.podsOnNode(node).some(uses)) return undefined;
      return `no relationship found between node '${node}' and this object`;
    }
    if (group === '' && resource === 'nodes') {
      // Creating: the name is in the body; NodeRestriction checks it on write.
      if (verb === 'create' && !subresource) return undefined;
      if (name === node && ['get', 'update', 'patch', 'delete'].includes(verb)) return undefined;
      return `node "${node}" may only change its own Node`;
    }
    if (group === 'coordination.k8s.io' && resource === 'leases') {
      if (namespace !== 'kube-node-lease') return 'nodes may only write leases in kube-node-lease';
      if (verb === 'create' || name === node) return undefined;
      return `node "${node}" may only change its own Lease`;
    }
    if (group === '' && resource === 'events' && ['create', 'update', 'patch'].includes(verb)) return undefined;
    // As the kubelet does with its webhook authorization: asking who a caller of its port is and what it may do.
    if (verb === 'create' && !subresource && ((group === 'authentication.k8s.io' && resource === 'tokenreviews') || (group === 'authorization.k8s.io' && (resource === 'subjectaccessreviews' || resource === 'localsubjectaccessreviews')))) return undefined;
    if (group === '' && resource === 'pods' && name && namespace) {
      const allowed = (subresource === 'status' && ['get', 'update', 'patch'].includes(verb)) || (subresource === 'eviction' && verb === 'create') || (!subresource && verb === 'delete');
      if (!allowed) return `nodes may not ${verb} pods${subresource ? `/${subresource}` : ''}`;
      // A binding never changes, so a cached pod bound to this node settles it; anything else is
      // asked of the store (the cache may not have seen the pod or its binding yet).
      if (boundTo(this.cachedPod(namespace, name)) === node) return undefined;
      const pod = await this.lookupPod(namespace, name);
      // A missing pod answers 404 from the handler; only a pod bound elsewhere is forbidden.
      if (!pod || boundTo(pod) === node) return undefined;
      return `node "${node}" can only change pods bound to it`;
    }
    return NO_RULE;
  }
}

function boundTo(pod: KubeObject | undefined): string | undefined {
  return ((pod?.spec ?? {}) as { nodeName?: string }).nodeName;
}
