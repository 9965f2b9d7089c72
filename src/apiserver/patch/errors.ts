// Error shapes the patch handler answers with, matched to what kube-apiserver sends for the same
// client mistake. Upstream lets a few of these fall through as 500s; skiff never blames itself for
// a bad patch, so those become 400 BadRequest with the same text.
import { StatusError, badRequest } from '../../api/errors.js';

/**
 * kube-apiserver wraps patch-application failures (a failed json-patch `test`, a missing path) in
 * a generic 422 that drops the underlying text; kubectl prints "The request is invalid: …".
 */
export function patchRejected(): StatusError {
  return new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
}

export function patchTooLarge(ops: number, max: number): StatusError {
  return new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: The allowed maximum operations in a JSON patch is ${max}, got ${ops}`);
}

/** A patched document that no longer decodes as an object: upstream's 422 on the `patch` field. */
export function patchResultInvalid(patched: unknown, detail: string): StatusError {
  const message = `Invalid value: ${JSON.stringify(JSON.stringify(patched))}: ${detail}`;
  return new StatusError(422, 'Invalid', ` "" is invalid: patch: ${message}`, {
    causes: [{ reason: 'FieldValueInvalid', message, field: 'patch' }],
  });
}

/** Strategic-merge-patch format errors; upstream names these sentinels in mergepatch. */
export const smpErrors = {
  badPrimitiveList: () => badRequest('invalid patch format of primitive list'),
  badRetainKeys: () => badRequest('invalid patch format of retainKeys'),
  badSetElementOrder: () => badRequest('invalid patch format of setElementOrder list'),
  // Upstream answers this one with its generic 422, like a failed json-patch operation.
  noListOfLists: () => patchRejected(),
  other: (message: string) => badRequest(message),
};
