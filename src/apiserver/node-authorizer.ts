// What a node credential (system:node:<name>, group system:nodes) may do, as upstream's Node
// authorizer and NodeRestriction admission allow: its own Node and Lease, the pods bound to it,
// events, and reads of what it needs to run pods.
import type { KubeObject } from '../api/types.js';
import { NO_RULE, type Authorizer } from './auth.js';
import type { RequestInfo } from './http/request-info.js';
import type { UserInfo } from './request-context.js';

const NODE_PREFIX = 'system:node:';

export function nodeNameOf(user: UserInfo): string | undefined {
  return user.groups.includes('system:nodes') && user.name.startsWith(NODE_PREFIX) ? user.name.slice(NODE_PREFIX.length) : undefined;
}

const READABLE = new Set(['pods', 'nodes', 'services', 'endpoints', 'configmaps', 'secrets', 'namespaces', 'poddisruptionbudgets', 'leases']);
const READ_VERBS = new Set(['get', 'list', 'watch']);

export class NodeAuthorizer implements Authorizer {
  constructor(
    /** Reads a pod from storage to check which node it is bound to. */
    private readonly lookupPod: (namespace: string, name: string) => Promise<KubeObject | undefined>,
    private readonly next?: Authorizer,
  ) {}

  async authorize(user: UserInfo, info: RequestInfo): Promise<string | undefined> {
    const node = nodeNameOf(user);
    if (node === undefined) return this.next ? this.next.authorize(user, info) : NO_RULE;
    if (info.kind === 'nonresource') return undefined;
    const { verb, group, resource, name, namespace, subresource } = info;
    if (READ_VERBS.has(verb) && READABLE.has(resource) && !subresource) return undefined;
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
    if (group === '' && resource === 'pods' && name && namespace) {
      const allowed = (subresource === 'status' && ['get', 'update', 'patch'].includes(verb)) || (subresource === 'eviction' && verb === 'create') || (!subresource && verb === 'delete');
      if (!allowed) return `nodes may not ${verb} pods${subresource ? `/${subresource}` : ''}`;
      const pod = await this.lookupPod(namespace, name);
      // A missing pod answers 404 from the handler; only a pod bound elsewhere is forbidden.
      if (!pod || ((pod.spec ?? {}) as { nodeName?: string }).nodeName === node) return undefined;
      return `node "${node}" can only change pods bound to it`;
    }
    // Roles bound to a node's user or to system:nodes grant more, as upstream's RBAC does after its Node authorizer.
    return this.next ? this.next.authorize(user, info) : NO_RULE;
  }
}

/** NodeRestriction on create: a node may only create its own Node and its own Lease. */
export function nodeRestriction(user: UserInfo, resource: string, obj: KubeObject): string | undefined {
  const node = nodeNameOf(user);
  if (node === undefined) return undefined;
  if ((resource === 'nodes' || resource === 'leases') && obj.metadata.name !== node) {
    return `node "${node}" is not allowed to create ${resource === 'nodes' ? 'a Node' : 'a Lease'} named "${obj.metadata.name}"`;
  }
  return undefined;
}
