// What a create or update body must be: the URL's kind in the URL's version. Upstream's handlers
// decode the body through the scheme into the URL's internal type, and their refusal says which
// step failed: the body did not decode at all ("the object provided is unrecognized"), its kind is
// not registered, it does not convert into the URL's type, or it is another version of the right
// kind. The messages below are those steps' messages.
import { badRequest, type StatusError } from '../api/errors.js';
import { resourceTypeForKind } from '../api/registry.js';
import type { ResourceType } from '../api/resource.js';
import { apiVersionOf, parseApiVersion, type KubeObject } from '../api/types.js';

// runtime.NewScheme names a scheme after the line that made it: `Scheme = runtime.NewScheme()` is
// line 30 of upstream's pkg/api/legacyscheme/scheme.go, and clusters' refusals quote that line.
const SCHEME = 'k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30';

/** The first bytes of a body as upstream quotes them: JSON as text, anything else in hex. */
export function summarizeBody(body: Buffer, max = 30): string {
  if (body.length === 0) return '<empty>';
  const head = body.subarray(0, max);
  const text = body[0] === 0x7b ? head.toString('utf8') : head.toString('hex');
  return body.length > max ? `${text} ...` : text;
}

export function unrecognizedBody(rt: ResourceType, cause: string, body: Buffer): StatusError {
  return badRequest(`the object provided is unrecognized (must be of type ${rt.kind}): ${cause} (${summarizeBody(body)})`);
}

/** The Go package an internal type lives in: `core` for the core group, else the group's first label. */
function internalPackage(group: string): string {
  return group === '' ? 'core' : group.split('.')[0]!;
}

/**
 * Refuses a body whose apiVersion and kind (defaulted from the URL when absent) are not the URL's.
 * `typeFor`: what the server serves at a path now, custom resources included.
 */
export function checkTypeMeta(obj: KubeObject, rt: ResourceType, typeFor: (group: string, version: string, resource: string) => ResourceType | undefined): void {
  const urlApiVersion = apiVersionOf(rt.group, rt.version);
  const apiVersion = typeof obj.apiVersion === 'string' && obj.apiVersion !== '' ? obj.apiVersion : urlApiVersion;
  const kind = typeof obj.kind === 'string' && obj.kind !== '' ? obj.kind : rt.kind;
  if (apiVersion === urlApiVersion && kind === rt.kind) return;
  const { group, version } = parseApiVersion(apiVersion);
  // Another served version of the URL's kind decodes and converts; only the version check refuses
  // it. Asked of the server rather than the built-in scheme, since a CRD's versions are not in it.
  const sameKind = group === rt.group && kind === rt.kind;
  const mismatch = `the API version in the data (${apiVersion}) does not match the expected API version (${urlApiVersion})`;
  if (sameKind && typeFor(group, version, rt.resource)?.kind === kind) throw badRequest(mismatch);
  const cannot = `${kind} in version ${JSON.stringify(version)} cannot be handled as a ${rt.kind}`;
  if (!resourceTypeForKind(group, version, kind)) {
    throw badRequest(`${cannot}: no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in scheme ${JSON.stringify(SCHEME)}`);
  }
  if (!sameKind) throw badRequest(`${cannot}: converting (${version}.${kind}) to (${internalPackage(rt.group)}.${rt.kind}): unknown conversion`);
  throw badRequest(mismatch);
}
