// RFC 7386 JSON Merge Patch (application/merge-patch+json), with the quirks of the library
// kube-apiserver uses: nulls inside newly inserted objects are dropped too, and a bare scalar or
// null patch is rejected rather than replacing the whole document.
import { badRequest } from '../../api/errors.js';
import { clone, isObject, isUnsafeKey, own, pruneNulls, type JsonObject } from './json.js';

/**
 * Returns the patched document; the patch is never modified. `obj` is copied first unless the
 * caller owns it (`inPlace`: a private copy it is done with, as an update's read-modify-write has).
 */
export function applyMergePatch(obj: unknown, patch: unknown, opts: { inPlace?: boolean } = {}): unknown {
  if (patch === null || patch === undefined || (!isObject(patch) && !Array.isArray(patch))) {
    throw badRequest('Invalid JSON Patch');
  }
  if (Array.isArray(patch)) return pruneNulls(patch);
  if (!isObject(obj)) return pruneNulls(patch);
  return mergeObjects(opts.inPlace ? obj : clone(obj), patch);
}

function mergeObjects(target: JsonObject, patch: JsonObject): JsonObject {
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined || isUnsafeKey(key)) continue;
    if (value === null) {
      delete target[key];
      continue;
    }
    const current = own(target, key);
    if (isObject(value) && isObject(current)) {
      target[key] = mergeObjects(current, value);
    } else {
      target[key] = pruneNulls(clone(value));
    }
  }
  return target;
}
