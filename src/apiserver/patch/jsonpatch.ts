// RFC 6902 JSON Patch (application/json-patch+json), answering failures as kube-apiserver does:
// an undecodable patch is 400, an operation that can't be applied is the generic 422.
import jsonpatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import { badRequest } from '../../api/errors.js';
import { patchRejected, patchTooLarge } from './errors.js';
import { clone, goJsonType, isObject } from './json.js';

/** Upstream's cap on operations in one JSON patch. */
export const MAX_JSON_PATCH_OPERATIONS = 10000;

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/** Returns the patched copy; `obj` is never modified. */
export function applyJsonPatch(obj: unknown, patch: unknown): unknown {
  const ops = decodeJsonPatch(patch);
  if (ops.length === 0) return clone(obj);
  for (const op of ops) {
    // fast-json-patch accepts its own `_get` and tolerates odd members; upstream's library only
    // knows the six RFC operations and needs string paths.
    if (typeof op.op !== 'string' || !OPS.has(op.op) || typeof op.path !== 'string') throw patchRejected();
    if ((op.op === 'move' || op.op === 'copy') && typeof op.from !== 'string') throw patchRejected();
    if ((op.op === 'add' || op.op === 'replace' || op.op === 'test') && !('value' in op)) throw patchRejected();
  }
  try {
    // The patch is cloned so values it inserts never alias the caller's patch body.
    const result = jsonpatch.applyPatch(obj, clone(ops) as unknown as Operation[], true, false, true);
    return result.newDocument;
  } catch {
    throw patchRejected();
  }
}

function decodeJsonPatch(patch: unknown): Record<string, unknown>[] {
  // Go decodes `null` into an empty patch, which is a no-op.
  if (patch === null || patch === undefined) return [];
  if (!Array.isArray(patch)) {
    throw badRequest(`json: cannot unmarshal ${goJsonType(patch)} into Go value of type jsonpatch.Patch`);
  }
  if (patch.length > MAX_JSON_PATCH_OPERATIONS) throw patchTooLarge(patch.length, MAX_JSON_PATCH_OPERATIONS);
  return patch.map((op) => {
    if (op === null) return {};
    if (!isObject(op)) throw badRequest(`json: cannot unmarshal ${goJsonType(op)} into Go value of type jsonpatch.Operation`);
    return op;
  });
}
