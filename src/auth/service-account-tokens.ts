// Service-account tokens as upstream's TokenRequest issues them: JWTs signed with the cluster's
// service-account key (ES256), naming the account by namespace, name and uid, valid for a set time
// and for a set of audiences, and optionally bound to a Pod, Secret or Node. A token stops working
// when it expires, when its account is deleted (or re-created: the uid differs), or when the
// object it is bound to goes away. Tokens are never stored.
import { createHash, createPrivateKey, createPublicKey, randomUUID } from 'node:crypto';
import { SignJWT, decodeJwt, importPKCS8, importSPKI, jwtVerify } from 'jose';
import type { KubeObject } from '../api/types.js';
import type { TokenAuthenticator, UserInfo } from './user.js';
import { serviceAccountUsername } from '../api/rbac-rules.js';
import { isObject, obj, str } from '../api/kinds/json.js';
import type { Clock } from '../util/clock.js';

/** Upstream's default --service-account-issuer, which is also the default audience. */
export const DEFAULT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
/** The issuer of legacy tokens kept in kubernetes.io/service-account-token Secrets (no expiry, no audience). */
export const LEGACY_ISSUER = 'kubernetes/serviceaccount';
const LEGACY = 'kubernetes.io/serviceaccount/';

export interface LegacyTokenSubject {
  namespace: string;
  serviceAccount: ObjectRef;
  secretName: string;
}

/**
 * A legacy token for a service-account token Secret, as upstream's token controller writes it: it
 * never expires and stays valid while the Secret holds it and the account exists.
 */
export async function signLegacyToken(privateKeyPem: string, subject: LegacyTokenSubject): Promise<string> {
  const key = await importPKCS8(privateKeyPem, ALG);
  return new SignJWT({
    [`${LEGACY}namespace`]: subject.namespace,
    [`${LEGACY}secret.name`]: subject.secretName,
    [`${LEGACY}service-account.name`]: subject.serviceAccount.name,
    [`${LEGACY}service-account.uid`]: subject.serviceAccount.uid,
  })
    .setProtectedHeader({ alg: ALG, kid: keyIdOf(privateKeyPem) })
    .setIssuer(LEGACY_ISSUER)
    .setSubject(serviceAccountUsername(subject.namespace, subject.serviceAccount.name))
    .sign(key);
}

/** Upstream's key id: the SHA-256 of the public key, so verifiers can pick the key. */
function keyIdOf(privateKeyPem: string): string {
  return createHash('sha256').update(createPublicKey(createPrivateKey(privateKeyPem)).export({ type: 'spki', format: 'der' })).digest('base64url');
}
const ALG = 'ES256';
const CLOCK_LEEWAY_SECONDS = 60;
type JoseKey = Awaited<ReturnType<typeof importPKCS8>>;
const CLAIMS = 'kubernetes.io';

export type BoundKind = 'Pod' | 'Secret' | 'Node';
export const BOUND_KINDS: readonly BoundKind[] = ['Pod', 'Secret', 'Node'];

export interface ObjectRef {
  name: string;
  uid: string;
}

export interface TokenSubject {
  namespace: string;
  serviceAccount: ObjectRef;
  bound?: { kind: BoundKind } & ObjectRef;
}

/** Reads the objects a token names, to check they still exist with the same uid. */
export interface TokenObjects {
  get(kind: 'ServiceAccount' | 'Secret' | BoundKind, namespace: string, name: string): Promise<KubeObject | undefined>;
}

export interface IssuedToken {
  token: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

export class ServiceAccountTokens implements TokenAuthenticator {
  private constructor(
    private readonly signingKey: JoseKey,
    private readonly verifyKey: JoseKey,
    private readonly keyId: string,
    /** Where the accounts and bound objects tokens name are looked up. */
    readonly objects: TokenObjects,
    private readonly clock: Clock,
    readonly issuer: string,
    /** What a token must be meant for to be accepted here; requests default to them. */
    readonly audiences: readonly string[],
  ) {}

  static async fromPrivateKey(privateKeyPem: string, objects: TokenObjects, clock: Clock, issuer = DEFAULT_ISSUER): Promise<ServiceAccountTokens> {
    const publicPem = createPublicKey(createPrivateKey(privateKeyPem)).export({ type: 'spki', format: 'pem' }).toString();
    return new ServiceAccountTokens(await importPKCS8(privateKeyPem, ALG), await importSPKI(publicPem, ALG), keyIdOf(privateKeyPem), objects, clock, issuer, [issuer]);
  }

  async issue(subject: TokenSubject, audiences: readonly string[], expirationSeconds: number): Promise<IssuedToken> {
    const now = Math.floor(this.clock.now() / 1000);
    const claims: Record<string, unknown> = {
      namespace: subject.namespace,
      serviceaccount: { name: subject.serviceAccount.name, uid: subject.serviceAccount.uid },
    };
    if (subject.bound) claims[subject.bound.kind.toLowerCase()] = { name: subject.bound.name, uid: subject.bound.uid };
    const token = await new SignJWT({ [CLAIMS]: claims })
      .setProtectedHeader({ alg: ALG, kid: this.keyId })
      .setIssuer(this.issuer)
      .setSubject(serviceAccountUsername(subject.namespace, subject.serviceAccount.name))
      .setAudience([...audiences])
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + expirationSeconds)
      .setJti(randomUUID())
      .sign(this.signingKey);
    return { token, expiresAt: (now + expirationSeconds) * 1000 };
  }

  async authenticate(token: string): Promise<UserInfo | undefined> {
    // Bootstrap and static tokens reach here too: only a JWT is worth verifying.
    if (!token.startsWith('eyJ')) return undefined;
    let issuer: unknown;
    try {
      issuer = decodeJwt(token).iss;
    } catch {
      return undefined;
    }
    if (issuer === LEGACY_ISSUER) return this.authenticateLegacy(token);
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.verifyKey, {
        algorithms: [ALG],
        issuer: this.issuer,
        audience: [...this.audiences],
        currentDate: new Date(this.clock.now()),
        // Members' clocks differ a little: upstream allows a minute either way.
        clockTolerance: CLOCK_LEEWAY_SECONDS,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch {
      return undefined;
    }
    const claims = obj(payload[CLAIMS]);
    const namespace = str(claims.namespace);
    const sa = obj(claims.serviceaccount);
    if (!namespace || !str(sa.name) || payload.sub !== serviceAccountUsername(namespace, str(sa.name))) return undefined;
    if (!(await this.stillExists('ServiceAccount', namespace, sa))) return undefined;
    for (const kind of BOUND_KINDS) {
      const bound = claims[kind.toLowerCase()];
      if (isObject(bound) && !(await this.stillExists(kind, kind === 'Node' ? '' : namespace, bound))) return undefined;
    }
    return { name: serviceAccountUsername(namespace, str(sa.name)), groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`] };
  }

  /** A Secret's token: valid while that Secret still holds it and its account is the same one. */
  private async authenticateLegacy(token: string): Promise<UserInfo | undefined> {
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.verifyKey, { algorithms: [ALG], issuer: LEGACY_ISSUER, currentDate: new Date(this.clock.now()), clockTolerance: CLOCK_LEEWAY_SECONDS, requiredClaims: ['sub'] }));
    } catch {
      return undefined;
    }
    const namespace = str(payload[`${LEGACY}namespace`]);
    const name = str(payload[`${LEGACY}service-account.name`]);
    const secretName = str(payload[`${LEGACY}secret.name`]);
    if (!namespace || !name || !secretName || payload.sub !== serviceAccountUsername(namespace, name)) return undefined;
    const secret = await this.objects.get('Secret', namespace, secretName);
    const held = str(obj(secret?.['data']).token);
    if (!secret || secret.metadata.deletionTimestamp || Buffer.from(held, 'base64').toString('utf8') !== token) return undefined;
    if (!(await this.stillExists('ServiceAccount', namespace, { name, uid: payload[`${LEGACY}service-account.uid`] }))) return undefined;
    return { name: serviceAccountUsername(namespace, name), groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`] };
  }

  /** The object is there, not being deleted, and is the one the token was issued for. */
  private async stillExists(kind: 'ServiceAccount' | 'Secret' | BoundKind, namespace: string, ref: Record<string, unknown>): Promise<boolean> {
    const live = await this.objects.get(kind, namespace, str(ref.name));
    return !!live && !live.metadata.deletionTimestamp && live.metadata.uid === str(ref.uid);
  }
}
