// Bootstrap tokens as upstream stores them: Secrets named bootstrap-token-<id> in kube-system,
// type bootstrap.kubernetes.io/token. A token is "<id>.<secret>" ([a-z0-9]{6}.[a-z0-9]{16}).
import { rfc3339 } from '../util/time.js';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { KubeObject } from '../api/types.js';

export const TOKEN_SECRET_TYPE = 'bootstrap.kubernetes.io/token';
export const TOKEN_NAMESPACE = 'kube-system';
const TOKEN_RE = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export interface ParsedToken {
  id: string;
  secret: string;
}

export function parseToken(token: string): ParsedToken | undefined {
  const m = TOKEN_RE.exec(token);
  return m ? { id: m[1]!, secret: m[2]! } : undefined;
}

function randomString(n: number): string {
  const bytes = randomBytes(n * 2);
  let s = '';
  // Rejection sampling keeps every character equally likely.
  for (const b of bytes) {
    if (b >= 252) continue;
    s += ALPHABET[b % 36];
    if (s.length === n) break;
  }
  return s.length === n ? s : randomString(n);
}

export function generateToken(): string {
  return `${randomString(6)}.${randomString(16)}`;
}

export function tokenSecretName(id: string): string {
  return `bootstrap-token-${id}`;
}

export function tokenSecret(token: ParsedToken, opts: { ttlMs?: number; description?: string; now: number }): KubeObject {
  const data: Record<string, string> = {
    'token-id': token.id,
    'token-secret': token.secret,
    'usage-bootstrap-authentication': 'true',
    'auth-extra-groups': 'system:bootstrappers:skiff:default-node-token',
  };
  if (opts.ttlMs && opts.ttlMs > 0) data.expiration = rfc3339(opts.now + opts.ttlMs);
  if (opts.description) data.description = opts.description;
  const b64: Record<string, string> = {};
  for (const [k, v] of Object.entries(data)) b64[k] = Buffer.from(v).toString('base64');
  return { apiVersion: 'v1', kind: 'Secret', type: TOKEN_SECRET_TYPE, metadata: { name: tokenSecretName(token.id), namespace: TOKEN_NAMESPACE }, data: b64 };
}

export interface TokenInfo {
  id: string;
  expires?: string;
  description?: string;
  usages: string[];
}

function field(secret: KubeObject, key: string): string | undefined {
  const v = ((secret.data ?? {}) as Record<string, string>)[key];
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
}

export function describeTokenSecret(secret: KubeObject): TokenInfo | undefined {
  if (secret.type !== TOKEN_SECRET_TYPE) return undefined;
  const id = field(secret, 'token-id');
  if (!id) return undefined;
  const info: TokenInfo = { id, usages: Object.keys((secret.data ?? {}) as object).filter((k) => k.startsWith('usage-')).map((k) => k.slice(6)) };
  const exp = field(secret, 'expiration');
  if (exp) info.expires = exp;
  const d = field(secret, 'description');
  if (d) info.description = d;
  return info;
}

/** Whether the Secret holds this token, is meant for authentication and has not expired. */
export function tokenMatches(secret: KubeObject, token: ParsedToken, now: number): boolean {
  if (secret.type !== TOKEN_SECRET_TYPE || secret.metadata.deletionTimestamp) return false;
  if (field(secret, 'token-id') !== token.id || field(secret, 'usage-bootstrap-authentication') !== 'true') return false;
  const stored = Buffer.from(field(secret, 'token-secret') ?? '');
  const given = Buffer.from(token.secret);
  if (stored.length !== given.length || !timingSafeEqual(stored, given)) return false;
  const exp = field(secret, 'expiration');
  return !(exp && Date.parse(exp) <= now);
}
