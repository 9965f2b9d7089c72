// The "who am I, what may I do" APIs every authenticated user may call (upstream's
// system:basic-user role): authorization.k8s.io/v1 SelfSubjectAccessReview (`kubectl auth
// can-i`), SelfSubjectRulesReview (`kubectl auth can-i --list`) and authentication.k8s.io/v1
// SelfSubjectReview (`kubectl auth whoami`). They are create-only and stored nowhere: the answer
// comes back in the created object's status.
import { badRequest, field, invalid } from '../api/errors.js';
import type { KubeObject } from '../api/types.js';
import type { PolicyRule } from '../api/kinds/rbac.js';
import { NO_RULE, type Authorizer } from './auth.js';
import type { RequestInfo, Verb } from './http/request-info.js';
import type { UserInfo } from './request-context.js';

export interface SelfReviewType {
  group: string;
  version: string;
  resource: string;
  kind: string;
  /** Served for older clients but left out of discovery, which lists one version per group. */
  unlisted?: true;
}

export const SELF_REVIEW_TYPES: readonly SelfReviewType[] = [
  { group: 'authentication.k8s.io', version: 'v1', resource: 'selfsubjectreviews', kind: 'SelfSubjectReview' },
  // kubectl 1.27 asks for `auth whoami` at v1beta1 (v1 came with 1.28).
  { group: 'authentication.k8s.io', version: 'v1beta1', resource: 'selfsubjectreviews', kind: 'SelfSubjectReview', unlisted: true },
  { group: 'authorization.k8s.io', version: 'v1', resource: 'selfsubjectaccessreviews', kind: 'SelfSubjectAccessReview' },
  { group: 'authorization.k8s.io', version: 'v1', resource: 'selfsubjectrulesreviews', kind: 'SelfSubjectRulesReview' },
];

export function selfReviewType(info: RequestInfo): SelfReviewType | undefined {
  if (info.kind !== 'resource' || info.namespace !== undefined || info.subresource !== undefined) return undefined;
  return SELF_REVIEW_TYPES.find((t) => t.group === info.group && t.version === info.version && t.resource === info.resource);
}

interface Attributes {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
  path?: string;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Answers a create of `type` by `user`; `body` is the decoded request object. */
/** The RBAC rules that apply to a user in a namespace (cluster-wide ones alone when undefined). */
export type RulesFor = (user: UserInfo, namespace: string | undefined) => PolicyRule[];

export async function selfReview(type: SelfReviewType, body: KubeObject, user: UserInfo, authorizer: Authorizer, rulesFor: RulesFor): Promise<KubeObject> {
  const apiVersion = `${type.group}/${type.version}`;
  if ((body.apiVersion !== undefined && body.apiVersion !== apiVersion) || (body.kind !== undefined && body.kind !== type.kind)) {
    throw badRequest(`${String(body.kind ?? '')} in version "${String(body.apiVersion ?? '')}" cannot be handled as a ${type.kind}`);
  }
  const out: KubeObject = { kind: type.kind, apiVersion, metadata: { creationTimestamp: null } as unknown as KubeObject['metadata'] };
  const spec = (body.spec ?? {}) as { resourceAttributes?: Attributes; nonResourceAttributes?: Attributes; namespace?: string };
  switch (type.kind) {
    case 'SelfSubjectReview':
      return { ...out, status: { userInfo: { username: user.name, groups: user.groups } } };
    case 'SelfSubjectAccessReview': {
      const ra = spec.resourceAttributes;
      const nra = spec.nonResourceAttributes;
      if (!!ra === !!nra) {
        throw invalid(type.kind, type.group, '', [field.invalid('spec.resourceAttributes', ra ?? null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified')]);
      }
      const asked: RequestInfo = ra
        ? {
            kind: 'resource',
            // Verbs beyond the request verbs ("use", "*") reach the authorizers as they are.
            verb: str(ra.verb) as Verb,
            group: str(ra.group),
            version: str(ra.version),
            resource: str(ra.resource),
            ...(str(ra.subresource) ? { subresource: str(ra.subresource) } : {}),
            ...(str(ra.namespace) ? { namespace: str(ra.namespace) } : {}),
            ...(str(ra.name) ? { name: str(ra.name) } : {}),
          }
        : { kind: 'nonresource', verb: str(nra!.verb), path: str(nra!.path) };
      const denied = await authorizer.authorize(user, asked);
      return { ...out, spec, status: denied === undefined ? { allowed: true } : denied === NO_RULE ? { allowed: false } : { allowed: false, reason: denied } };
    }
    default: {
      const namespace = str(spec.namespace);
      const rules = rulesFor(user, namespace || undefined);
      const resourceRules: PolicyRule[] = [];
      const nonResourceRules: PolicyRule[] = [];
      if (user.groups.includes('system:masters')) {
        resourceRules.push({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] });
        nonResourceRules.push({ verbs: ['*'], nonResourceURLs: ['*'] });
      }
      for (const r of rules) {
        if (r.nonResourceURLs?.length) nonResourceRules.push({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs });
        else resourceRules.push({ verbs: r.verbs, apiGroups: r.apiGroups ?? [], resources: r.resources ?? [], ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}) });
      }
      // The node and bootstrap authorizers decide request by request, as upstream's Node authorizer
      // does: their grants cannot be listed.
      const perRequest = user.groups.includes('system:nodes') || user.groups.includes('system:bootstrappers');
      const status = perRequest
        ? { resourceRules, nonResourceRules, incomplete: true, evaluationError: 'rules of the node and bootstrap authorizers are decided per request and not listed' }
        : { resourceRules, nonResourceRules, incomplete: false };
      return { ...out, spec: { namespace: str(spec.namespace) }, status };
    }
  }
}
