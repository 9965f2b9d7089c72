// Upstream's audit.k8s.io/v1 Event as it is written to the log, one JSON object a line, and the
// one-line "legacy" text of the same event.
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { StatusDetails } from '../../api/types.js';
import type { UserInfo } from '../request-context.js';
import { AUDIT_API_VERSION, type Level, type Stage } from './policy.js';

/** authentication.k8s.io/v1 UserInfo, as an event names users. */
export interface AuditUser {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface ObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

/** The fields of a metav1.Status an event keeps: upstream copies only these bounded ones. */
export interface ResponseStatus {
  metadata: Record<string, never>;
  status?: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export interface AuditEvent {
  kind: 'Event';
  apiVersion: typeof AUDIT_API_VERSION;
  level: Level;
  auditID: string;
  stage: Stage;
  requestURI: string;
  verb: string;
  user: AuditUser;
  impersonatedUser?: AuditUser;
  sourceIPs?: string[];
  userAgent?: string;
  objectRef?: ObjectReference;
  responseStatus?: ResponseStatus;
  requestObject?: unknown;
  responseObject?: unknown;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

/**
 * The event's JSON line, its fields in upstream's (struct) order whatever order the request filled
 * them in, so lines from skiff and from kube-apiserver compare field by field.
 */
export function eventJson(ev: AuditEvent): string {
  const ref = ev.objectRef;
  return JSON.stringify({
    kind: ev.kind,
    apiVersion: ev.apiVersion,
    level: ev.level,
    auditID: ev.auditID,
    stage: ev.stage,
    requestURI: ev.requestURI,
    verb: ev.verb,
    user: ev.user,
    impersonatedUser: ev.impersonatedUser,
    sourceIPs: ev.sourceIPs,
    userAgent: ev.userAgent,
    objectRef: ref && {
      resource: ref.resource,
      namespace: ref.namespace,
      name: ref.name,
      uid: ref.uid,
      apiGroup: ref.apiGroup,
      apiVersion: ref.apiVersion,
      resourceVersion: ref.resourceVersion,
      subresource: ref.subresource,
    },
    responseStatus: ev.responseStatus,
    requestObject: ev.requestObject,
    responseObject: ev.responseObject,
    requestReceivedTimestamp: ev.requestReceivedTimestamp,
    stageTimestamp: ev.stageTimestamp,
    annotations: ev.annotations,
  });
}

/** Upstream's "legacy" format: one line of text with the event's main fields. */
export function eventLegacyLine(ev: AuditEvent): string {
  const q = (s: string): string => JSON.stringify(s);
  const named = ev.user.username ? ev.user.username : undefined;
  const groups = named && ev.user.groups?.length ? ev.user.groups.map(q).join(',') : '<none>';
  const as = ev.impersonatedUser?.username ?? '<self>';
  const asGroups = ev.impersonatedUser?.groups ? ev.impersonatedUser.groups.map(q).join(',') : '<lookup>';
  const response = ev.responseStatus ? String(ev.responseStatus.code) : '<deferred>';
  return (
    `${rfc3339Nano(ev.requestReceivedTimestamp)} AUDIT: id=${q(ev.auditID)} stage=${q(ev.stage)} ip=${q(ev.sourceIPs?.[0] ?? '<unknown>')} method=${q(ev.verb)}` +
    ` user=${q(named ?? '<none>')} groups=${q(groups)} as=${q(as)} asgroups=${q(asGroups)} user-agent=${q(ev.userAgent ?? '')}` +
    ` namespace=${q(ev.objectRef?.namespace || '<none>')} uri=${q(ev.requestURI)} response="${response}"`
  );
}

/** Go's RFC3339Nano drops trailing zeros of the fraction. */
function rfc3339Nano(micro: string): string {
  return micro.replace(/\.?0+Z$/, 'Z');
}

/** Upstream truncates a user agent longer than this and says so. */
const MAX_USER_AGENT = 1024;

export function userAgentOf(req: IncomingMessage): string | undefined {
  const ua = req.headers['user-agent'];
  if (!ua) return undefined;
  return ua.length > MAX_USER_AGENT ? `${ua.slice(0, MAX_USER_AGENT)}...TRUNCATED` : ua;
}

export function auditUser(user: UserInfo): AuditUser {
  const out: AuditUser = { username: user.name };
  if (user.groups.length > 0) out.groups = user.groups;
  if (user.extra && Object.keys(user.extra).length > 0) out.extra = user.extra;
  return out;
}

/**
 * Where a request came from, as upstream's SourceIPs lists it: the X-Forwarded-For addresses, then
 * X-Real-Ip unless already listed, then the connection's peer unless it is the last one listed.
 * Only the last can be trusted: the client writes the headers.
 */
export function sourceIPs(req: IncomingMessage): string[] {
  const out: string[] = [];
  const forwarded = req.headers['x-forwarded-for'];
  if (typeof forwarded === 'string') {
    for (const part of forwarded.split(',')) {
      const ip = part.trim();
      if (isIP(ip)) out.push(ip);
    }
  }
  const real = req.headers['x-real-ip'];
  if (typeof real === 'string' && isIP(real.trim()) && !out.includes(real.trim())) out.push(real.trim());
  const peer = stripMappedV4(req.socket?.remoteAddress);
  if (peer && out[out.length - 1] !== peer) out.push(peer);
  return out;
}

/** Node reports an IPv4 client of a dual-stack listener as ::ffff:a.b.c.d; Go reports a.b.c.d. */
function stripMappedV4(addr: string | undefined): string | undefined {
  return addr?.startsWith('::ffff:') && isIP(addr.slice(7)) === 4 ? addr.slice(7) : addr;
}
