// PATCH machinery and field management. The HTTP layer decodes the body and picks the patch type;
// everything here works on parsed JSON and throws StatusErrors shaped like kube-apiserver's.
import type { KubeObject } from '../../api/types.js';
import type { SchemaKind } from '../../api/schema/merge-schema.js';
import { StatusError, field, invalid } from '../../api/errors.js';
import { patchResultInvalid } from './errors.js';
import { isObject } from './json.js';
import { applyJsonPatch } from './jsonpatch.js';
import { applyMergePatch } from './mergepatch.js';
import { applyStrategicMergePatch } from './strategic.js';

export { applyJsonPatch, MAX_JSON_PATCH_OPERATIONS } from './jsonpatch.js';
export { applyMergePatch } from './mergepatch.js';
export { applyStrategicMergePatch } from './strategic.js';
export { applyServerSide, LAST_APPLIED_ANNOTATION, type ApplyOptions, type ApplyResult } from './apply.js';
export {
  updateManagedFields,
  decodeManagedFields,
  encodeManagedFields,
  managerId,
  MAX_UPDATE_MANAGERS,
  type Manager,
  type Managers,
  type UpdateManagedFieldsOptions,
} from './managedfields.js';
export { fieldSetOf, toFieldSet, compare, type Comparison } from './fieldset.js';
export { FieldSet, pathString, type Path, type PathElement } from './fieldpath.js';
export { schemaFor, type Schema } from '../../api/schema/merge-schema.js';

export type PatchKind = 'json' | 'merge' | 'strategic' | 'apply';

const CONTENT_TYPES: Record<string, PatchKind> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
};

/** The patch type a PATCH's Content-Type names; anything else is 415 as upstream answers it. */
export function patchKindOf(contentType: string | undefined): PatchKind {
  const base = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const kind = CONTENT_TYPES[base];
  if (!kind) {
    throw new StatusError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${Object.keys(CONTENT_TYPES).join(', ')}`,
    );
  }
  return kind;
}

/**
 * Applies a json, merge or strategic patch to the live object and checks the result is still an
 * object, answering as upstream does when it isn't.
 */
export function patchObject(live: KubeObject, kind: Exclude<PatchKind, 'apply'>, patch: unknown, gvk: SchemaKind): KubeObject {
  const out = kind === 'json' ? applyJsonPatch(live, patch) : kind === 'merge' ? applyMergePatch(live, patch) : applyStrategicMergePatch(live, patch, gvk);
  if (!isObject(out)) {
    const what = Array.isArray(out) ? 'array' : out === null ? 'null' : typeof out;
    throw patchResultInvalid(out, `json: cannot unmarshal ${what} into Go value of type ${gvk.kind}`);
  }
  if (out.metadata !== undefined && !isObject(out.metadata)) {
    throw patchResultInvalid(out, 'json: cannot unmarshal into Go struct field .metadata of type v1.ObjectMeta');
  }
  if (out.metadata === undefined) out.metadata = {};
  return out as KubeObject;
}

/** Upstream's bound on field manager names. */
export const FIELD_MANAGER_MAX_LENGTH = 128;

/**
 * The manager a write is recorded under: the fieldManager parameter, else the User-Agent up to
 * its first '/', printable characters only (kubectl → "kubectl", client-node → "node-fetch").
 */
export function fieldManagerFor(fieldManager: string | null | undefined, userAgent: string | undefined): string {
  if (fieldManager) return fieldManager;
  let out = '';
  for (const ch of (userAgent ?? '').split('/')[0]!) {
    if (!isPrintable(ch)) continue;
    if (out.length >= FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
  }
  return out;
}

/** Validates a client-supplied fieldManager as upstream's PatchOptions/UpdateOptions validation does. */
export function validateFieldManager(fieldManager: string, optionsKind: 'PatchOptions' | 'UpdateOptions' | 'CreateOptions'): void {
  if (fieldManager.length > FIELD_MANAGER_MAX_LENGTH) {
    throw invalid(optionsKind, 'meta.k8s.io', '', [field.tooLong('fieldManager', fieldManager, FIELD_MANAGER_MAX_LENGTH)]);
  }
  for (const ch of fieldManager) {
    if (!isPrintable(ch)) {
      throw invalid(optionsKind, 'meta.k8s.io', '', [field.invalid('fieldManager', fieldManager, 'must only contain printable characters')]);
    }
  }
}

function isPrintable(ch: string): boolean {
  return !/[\p{C}]/u.test(ch) && (ch === ' ' || !/\s/u.test(ch));
}
