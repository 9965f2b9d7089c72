// Impersonation: `kubectl --as`, `--as-group` and `--as-uid` send Impersonate-User,
// Impersonate-Group, Impersonate-Uid and Impersonate-Extra-<key> headers, and the request then runs
// as that user, as upstream's impersonation filter does. The caller must be allowed the
// `impersonate` verb on each thing it asks to be (users, groups, uids, userextras/<key>, or the
// service account); with skiff's authorizers only system:masters is. A request must never run as
// its real caller while the client believes it runs as someone else, so anything that cannot be
// honoured is refused.
import type { IncomingMessage } from 'node:http';
import { badRequest, forbidden } from '../api/errors.js';
import { forbiddenMessage, type Authorizer } from './auth.js';
import type { ResourceRequest } from './http/request-info.js';
import type { UserInfo } from './request-context.js';

const USER = 'impersonate-user';
const GROUP = 'impersonate-group';
const UID = 'impersonate-uid';
const EXTRA_PREFIX = 'impersonate-extra-';
const IMPERSONATE_HEADER = /^impersonate-/i;

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';
const AUTHENTICATION_GROUP = 'authentication.k8s.io';

/** Extra keys travel percent-encoded in the header name. */
function decodeExtraKey(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw badRequest(`invalid percent-encoding in impersonation extra key ${JSON.stringify(encoded)}`);
  }
}

/** Impersonate-* headers by lower-case name, every value each was sent with (rawHeaders: HTTP/1.1 and HTTP/2 alike). */
function impersonationHeaders(req: IncomingMessage): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    // Every request passes here: test the name before copying it lower-cased.
    if (!IMPERSONATE_HEADER.test(raw[i]!)) continue;
    const name = raw[i]!.toLowerCase();
    const values = out.get(name) ?? [];
    values.push(raw[i + 1]!);
    out.set(name, values);
  }
  return out;
}

function impersonation(resource: string, name: string, more: Partial<ResourceRequest> = {}): ResourceRequest {
  return { kind: 'resource', verb: 'impersonate', group: '', version: 'v1', resource, name, ...more };
}

/**
 * The user a request runs as: `caller` unless it carries Impersonate-* headers, then the user they
 * name, once the caller is authorized to impersonate every part of it.
 */
export async function impersonatedUser(req: IncomingMessage, caller: UserInfo, authorizer: Authorizer): Promise<UserInfo> {
  const headers = impersonationHeaders(req);
  if (headers.size === 0) return caller;
  const users = headers.get(USER) ?? [];
  const groups = headers.get(GROUP) ?? [];
  const uids = headers.get(UID) ?? [];
  if (users.length === 0) {
    throw badRequest('requested impersonation of groups, a uid or extra fields without impersonating a user (Impersonate-User)');
  }
  if (users.length > 1 || uids.length > 1) throw badRequest('only one Impersonate-User and at most one Impersonate-Uid may be given');
  const name = users[0]!;
  if (!name) throw badRequest('Impersonate-User must not be empty');

  const checks: ResourceRequest[] = [];
  if (name.startsWith(SERVICE_ACCOUNT_PREFIX)) {
    const [namespace, sa, ...rest] = name.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
    if (!namespace || !sa || rest.length > 0) throw badRequest(`Impersonate-User ${JSON.stringify(name)} is not a valid service account username`);
    checks.push(impersonation('serviceaccounts', sa, { namespace }));
  } else {
    checks.push(impersonation('users', name));
  }
  for (const g of groups) checks.push(impersonation('groups', g));
  for (const u of uids) checks.push(impersonation('uids', u, { group: AUTHENTICATION_GROUP }));
  const extra: Record<string, string[]> = {};
  for (const [h, values] of headers) {
    if (!h.startsWith(EXTRA_PREFIX)) continue;
    const key = decodeExtraKey(h.slice(EXTRA_PREFIX.length));
    extra[key] = [...(extra[key] ?? []), ...values];
    for (const v of values) checks.push(impersonation('userextras', v, { group: AUTHENTICATION_GROUP, subresource: key }));
  }
  for (const c of checks) {
    if ((await authorizer.authorize(caller, c)) !== undefined) throw forbidden(forbiddenMessage(caller, c), c.resource, c.group, c.name);
  }

  const asGroups = [...groups];
  const saNamespace = checks[0]!.resource === 'serviceaccounts' ? checks[0]!.namespace : undefined;
  // A service account's groups come with it only when the caller named no groups (upstream).
  if (saNamespace && groups.length === 0) {
    for (const g of ['system:serviceaccounts', `system:serviceaccounts:${saNamespace}`]) if (!asGroups.includes(g)) asGroups.push(g);
  }
  // Upstream: a named user is authenticated unless the caller said it is not; anonymous gets nothing implied.
  if (name !== 'system:anonymous' && !asGroups.includes('system:authenticated') && !asGroups.includes('system:unauthenticated')) asGroups.push('system:authenticated');
  return Object.keys(extra).length > 0 ? { name, groups: asGroups, extra } : { name, groups: asGroups };
}
