// serviceaccounts/token: TokenRequest (`kubectl create token NAME`). Validates the request as
// upstream does, checks the object a token is to be bound to, and answers with the token in the
// TokenRequest's status. Nothing is written to storage.
import { badRequest, conflict, field, invalid, notFound } from '../../api/errors.js';
import { arr, isObject, obj, optNum, str } from '../../api/kinds/json.js';
import type { KubeObject } from '../../api/types.js';
import { BOUND_KINDS, type BoundKind, type ServiceAccountTokens, type TokenSubject } from '../../auth/service-account-tokens.js';
import { rfc3339 } from '../../util/time.js';

const API_VERSION = 'authentication.k8s.io/v1';
const KIND = 'TokenRequest';
const DEFAULT_EXPIRATION_SECONDS = 3600;
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;
const BOUND_RESOURCES: Record<BoundKind, string> = { Pod: 'pods', Secret: 'secrets', Node: 'nodes' };

export async function requestToken(tokens: ServiceAccountTokens, serviceAccount: KubeObject, body: KubeObject): Promise<KubeObject> {
  if ((body.apiVersion !== undefined && body.apiVersion !== API_VERSION) || (body.kind !== undefined && body.kind !== KIND)) {
    throw badRequest(`${String(body.kind ?? '')} in version "${String(body.apiVersion ?? '')}" cannot be handled as a ${KIND}`);
  }
  const name = serviceAccount.metadata.name!;
  const namespace = serviceAccount.metadata.namespace!;
  const spec = obj(body.spec);
  const expirationSeconds = optNum(spec.expirationSeconds) ?? DEFAULT_EXPIRATION_SECONDS;
  const audiences = arr(spec.audiences).filter((a): a is string => typeof a === 'string' && a !== '');
  const causes = [];
  if (expirationSeconds < MIN_EXPIRATION_SECONDS) causes.push(field.invalid('spec.expirationSeconds', expirationSeconds, 'may not specify a duration less than 10 minutes'));
  if (expirationSeconds > MAX_EXPIRATION_SECONDS) causes.push(field.invalid('spec.expirationSeconds', expirationSeconds, 'may not specify a duration larger than 2^32 seconds'));
  if (causes.length > 0) throw invalid(KIND, 'authentication.k8s.io', name, causes);

  const subject: TokenSubject = { namespace, serviceAccount: { name, uid: serviceAccount.metadata.uid ?? '' } };
  if (isObject(spec.boundObjectRef)) {
    const ref = spec.boundObjectRef;
    const kind = str(ref.kind);
    if (!BOUND_KINDS.includes(kind as BoundKind)) throw badRequest(`cannot bind token for serviceaccount "${name}" to object of kind "${kind}"`);
    const target = await tokens.objects.get(kind as BoundKind, kind === 'Node' ? '' : namespace, str(ref.name));
    if (!target) throw notFound(BOUND_RESOURCES[kind as BoundKind], '', str(ref.name));
    const uid = target.metadata.uid ?? '';
    if (str(ref.uid) && str(ref.uid) !== uid) {
      throw conflict(BOUND_RESOURCES[kind as BoundKind], '', str(ref.name), `the UID in the bound object reference (${str(ref.uid)}) does not match the UID in record. The object might have been deleted and then recreated`);
    }
    subject.bound = { kind: kind as BoundKind, name: str(ref.name), uid };
  }

  const wanted = audiences.length > 0 ? audiences : [...tokens.audiences];
  const issued = await tokens.issue(subject, wanted, expirationSeconds);
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name, namespace, creationTimestamp: null } as unknown as KubeObject['metadata'],
    spec: { ...spec, audiences: wanted, expirationSeconds, boundObjectRef: spec.boundObjectRef ?? null },
    status: { token: issued.token, expirationTimestamp: rfc3339(issued.expiresAt) },
  };
}
