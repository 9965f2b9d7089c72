// Authentication and authorization pass through this one seam, so node credentials, bootstrap
// tokens and roles plug in here without touching the handlers.
import type { TokenAuthenticator } from '../auth/user.js';
import { CA_PATH } from '../api/join-paths.js';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { UserInfo } from './request-context.js';
import { authorizationScope, type RequestInfo } from './http/request-info.js';
import { tlsSocketOf } from './http/listener.js';

export type { TokenAuthenticator };

/** The refusal when no authorizer has a rule for the request (upstream RBAC gives no reason then). */
export const NO_RULE = 'no rule allows it';

export interface Authorizer {
  /** undefined: allowed; otherwise the reason it is not. */
  authorize(user: UserInfo, info: RequestInfo): Promise<string | undefined>;
}

/** Paths anyone may read, as upstream's system:public-info-viewer role allows (load balancer health checks). */
const PUBLIC_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version', CA_PATH]);

export function isPublicPath(path: string): boolean {
  return PUBLIC_PATHS.has(path) || path.startsWith('/healthz/') || path.startsWith('/livez/') || path.startsWith('/readyz/');
}

export class Authenticator {
  constructor(private readonly tokens: TokenAuthenticator[] = []) {}

  /** A connection's certificate never changes: decode it once per socket, not per request. */
  private readonly byConnection = new WeakMap<TLSSocket, UserInfo | null>();

  private certificateUser(socket: TLSSocket): UserInfo | undefined {
    let user = this.byConnection.get(socket);
    if (user === undefined) {
      user = null;
      if (socket.authorized) {
        const subject = socket.getPeerCertificate()?.subject as Record<string, string | string[]> | undefined;
        const cn = subject?.CN;
        if (typeof cn === 'string' && cn.length > 0) {
          const o = subject?.O;
          const groups = Array.isArray(o) ? o : o ? [o] : [];
          user = { name: cn, groups: [...groups, 'system:authenticated'] };
        }
      }
      this.byConnection.set(socket, user);
    }
    return user ?? undefined;
  }

  async authenticate(req: IncomingMessage): Promise<UserInfo | undefined> {
    const fromCert = this.certificateUser(tlsSocketOf(req));
    if (fromCert) return fromCert;
    const header = req.headers.authorization;
    if (header && /^bearer\s+/i.test(header)) return this.authenticateToken(header.replace(/^bearer\s+/i, '').trim());
    return undefined;
  }

  /** The user a bearer token stands for (requests, and TokenReview). */
  async authenticateToken(token: string): Promise<UserInfo | undefined> {
    for (const t of this.tokens) {
      const user = await t.authenticate(token);
      if (user) return { ...user, groups: [...user.groups, 'system:authenticated'] };
    }
    return undefined;
  }
}

/**
 * Members of system:masters may do anything, as upstream's cluster-admin binding lets them, but
 * decided before any role is read (and kept if that binding is deleted); everyone else is asked of
 * the next authorizer.
 */
export class MastersAuthorizer implements Authorizer {
  constructor(private readonly next?: Authorizer) {}
  async authorize(user: UserInfo, info: RequestInfo): Promise<string | undefined> {
    if (user.groups.includes('system:masters')) return undefined;
    if (this.next) return this.next.authorize(user, info);
    return NO_RULE;
  }
}

export function forbiddenMessage(user: UserInfo, info: RequestInfo): string {
  if (info.kind === 'nonresource') return `forbidden: User "${user.name}" cannot ${info.verb} path "${info.path}"`;
  const res = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  const qualified = info.group ? `${info.resource}.${info.group}` : info.resource;
  const { name, namespace } = authorizationScope(info);
  const what = name ? `${qualified} "${name}"` : qualified;
  const scope = namespace ? `in the namespace "${namespace}"` : 'at the cluster scope';
  return `${what} is forbidden: User "${user.name}" cannot ${info.verb} resource "${res}" in API group "${info.group}" ${scope}`;
}
