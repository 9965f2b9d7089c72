// The review APIs. "Who am I, what may I do", which every authenticated user may call (upstream's
// system:basic-user role): authorization.k8s.io/v1 SelfSubjectAccessReview (`kubectl auth
// can-i`), SelfSubjectRulesReview (`kubectl auth can-i --list`) and authentication.k8s.io/v1
// SelfSubjectReview (`kubectl auth whoami`). And the ones components use to delegate
// authentication and authorization to the API server (system:auth-delegator): TokenReview,
// SubjectAccessReview and LocalSubjectAccessReview. They are create-only and stored nowhere: the
// answer comes back in the created object's status.
import { badRequest, field, invalid } from '../api/errors.js';
import type { KubeObject } from '../api/types.js';
import type { PolicyRule } from '../api/kinds/rbac.js';
import { NO_RULE, type Authorizer } from './auth.js';
import type { RequestInfo, Verb } from './http/request-info.js';
import type { UserInfo } from './request-context.js';

export interface ReviewType {
  group: string;
  version: string;
  resource: string;
  kind: string;
  /** Served for older clients but left out of discovery, which lists one version per group. */
  unlisted?: true;
  /** Created in a namespace (LocalSubjectAccessReview). */
  namespaced?: true;
}

export const REVIEW_TYPES: readonly ReviewType[] = [
  { group: 'authentication.k8s.io', version: 'v1', resource: 'selfsubjectreviews', kind: 'SelfSubjectReview' },
  // kubectl 1.27 asks for `auth whoami` at v1beta1 (v1 came with 1.28).
  { group: 'authentication.k8s.io', version: 'v1beta1', resource: 'selfsubjectreviews', kind: 'SelfSubjectReview', unlisted: true },
  { group: 'authorization.k8s.io', version: 'v1', resource: 'selfsubjectaccessreviews', kind: 'SelfSubjectAccessReview' },
  { group: 'authorization.k8s.io', version: 'v1', resource: 'selfsubjectrulesreviews', kind: 'SelfSubjectRulesReview' },
  { group: 'authentication.k8s.io', version: 'v1', resource: 'tokenreviews', kind: 'TokenReview' },
  { group: 'authorization.k8s.io', version: 'v1', resource: 'subjectaccessreviews', kind: 'SubjectAccessReview' },
  { group: 'authorization.k8s.io', version: 'v1', resource: 'localsubjectaccessreviews', kind: 'LocalSubjectAccessReview', namespaced: true },
];

/** The review served at /apis/<group>/<version>/<resource>, if one is. */
export function reviewTypeFor(group: string, version: string, resource: string): ReviewType | undefined {
  return REVIEW_TYPES.find((t) => t.group === group && t.version === version && t.resource === resource);
}

export function reviewType(info: RequestInfo): ReviewType | undefined {
  if (info.kind !== 'resource' || info.subresource !== undefined) return undefined;
  const type = reviewTypeFor(info.group, info.version, info.resource);
  return type && (type.namespaced === true) === (info.namespace !== undefined) ? type : undefined;
}

/** What answering a review needs from the server. */
export interface ReviewContext {
  /** Who asks. */
  user: UserInfo;
  authorizer: Authorizer;
  rulesFor: RulesFor;
  /** The user a bearer token stands for (TokenReview). */
  authenticateToken(token: string): Promise<UserInfo | undefined>;
  /** The namespace in the URL (LocalSubjectAccessReview). */
  namespace?: string;
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

/** The RBAC rules that apply to a user in a namespace (cluster-wide ones alone when undefined). */
export type RulesFor = (user: UserInfo, namespace: string | undefined) => PolicyRule[];

/** The request an access review asks about, from its resourceAttributes or nonResourceAttributes. */
function askedOf(kind: string, group: string, spec: { resourceAttributes?: Attributes; nonResourceAttributes?: Attributes }, namespace?: string): RequestInfo {
  const ra = spec.resourceAttributes;
  const nra = spec.nonResourceAttributes;
  if (!!ra === !!nra) {
    throw invalid(kind, group, '', [field.invalid('spec.resourceAttributes', ra ?? null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified')]);
  }
  if (!ra) return { kind: 'nonresource', verb: str(nra!.verb), path: str(nra!.path) };
  if (namespace !== undefined && str(ra.namespace) && str(ra.namespace) !== namespace) {
    throw invalid(kind, group, '', [field.invalid('spec.resourceAttributes.namespace', str(ra.namespace), 'must match metadata.namespace')]);
  }
  const ns = namespace ?? str(ra.namespace);
  return {
    kind: 'resource',
    // Verbs beyond the request verbs ("use", "*") reach the authorizers as they are.
    verb: str(ra.verb) as Verb,
    group: str(ra.group),
    version: str(ra.version),
    resource: str(ra.resource),
    ...(str(ra.subresource) ? { subresource: str(ra.subresource) } : {}),
    ...(ns ? { namespace: ns } : {}),
    ...(str(ra.name) ? { name: str(ra.name) } : {}),
  };
}

async function decision(authorizer: Authorizer, user: UserInfo, asked: RequestInfo): Promise<Record<string, unknown>> {
  const denied = await authorizer.authorize(user, asked);
  return denied === undefined ? { allowed: true } : denied === NO_RULE ? { allowed: false } : { allowed: false, reason: denied };
}

/** Answers a create of `type`; `body` is the decoded request object. */
export async function answerReview(type: ReviewType, body: KubeObject, ctx: ReviewContext): Promise<KubeObject> {
  const { user, authorizer, rulesFor } = ctx;
  const apiVersion = `${type.group}/${type.version}`;
  if ((body.apiVersion !== undefined && body.apiVersion !== apiVersion) || (body.kind !== undefined && body.kind !== type.kind)) {
    throw badRequest(`${String(body.kind ?? '')} in version "${String(body.apiVersion ?? '')}" cannot be handled as a ${type.kind}`);
  }
  const out: KubeObject = { kind: type.kind, apiVersion, metadata: { creationTimestamp: null } as unknown as KubeObject['metadata'] };
  const spec = (body.spec ?? {}) as { resourceAttributes?: Attributes; nonResourceAttributes?: Attributes; namespace?: string };
  switch (type.kind) {
    case 'SelfSubjectReview':
      return { ...out, status: { userInfo: { username: user.name, groups: user.groups } } };
    case 'SelfSubjectAccessReview':
      return { ...out, spec, status: await decision(authorizer, user, askedOf(type.kind, type.group, spec)) };
    case 'SubjectAccessReview':
    case 'LocalSubjectAccessReview': {
      const subject = body.spec as { user?: unknown; groups?: unknown } | undefined;
      const name = str(subject?.user);
      const groups = Array.isArray(subject?.groups) ? subject.groups.filter((g): g is string => typeof g === 'string') : [];
      if (!name && groups.length === 0) throw invalid(type.kind, type.group, '', [field.invalid('spec.user', name, 'at least one of user or group must be specified')]);
      const asked = askedOf(type.kind, type.group, spec, type.namespaced ? ctx.namespace : undefined);
      const meta = type.namespaced ? { ...out.metadata, namespace: ctx.namespace } : out.metadata;
      return { ...out, metadata: meta, spec: body.spec ?? {}, status: await decision(authorizer, { name, groups }, asked) };
    }
    case 'TokenReview': {
      const review = (body.spec ?? {}) as { token?: unknown; audiences?: unknown };
      const token = str(review.token);
      if (!token) throw badRequest('token is required for TokenReview in authentication');
      const who = await ctx.authenticateToken(token);
      const audiences = Array.isArray(review.audiences) ? review.audiences : undefined;
      const status = who
        ? { authenticated: true, user: { username: who.name, groups: who.groups }, ...(audiences ? { audiences } : {}) }
        : { authenticated: false, error: 'invalid bearer token' };
      return { ...out, spec: body.spec ?? {}, status };
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
