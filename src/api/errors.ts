// Kubernetes-shaped errors. Every failure a client can see is a StatusError carrying the exact
// Status body the real apiserver would send, so kubectl prints what users already know.
import type { Status, StatusCause, StatusDetails, StatusReason } from './types.js';

export class StatusError extends Error {
  readonly status: Status;
  constructor(code: number, reason: StatusReason, message: string, details?: StatusDetails) {
    super(message);
    this.status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      reason,
      ...(details ? { details } : {}),
      code,
    };
  }
  get code(): number {
    return this.status.code;
  }
  get reason(): StatusReason | undefined {
    return this.status.reason;
  }
}

export function isStatusError(e: unknown, reason?: StatusReason): e is StatusError {
  return e instanceof StatusError && (reason === undefined || e.status.reason === reason);
}

/** "pods" or "deployments.apps": how upstream names a resource in messages. */
export function qualifiedResource(resource: string, group: string): string {
  return group ? `${resource}.${group}` : resource;
}

function details(resource: string, group: string, name: string): StatusDetails {
  return group ? { name, group, kind: resource } : { name, kind: resource };
}

export function notFound(resource: string, group: string, name: string): StatusError {
  return new StatusError(404, 'NotFound', `${qualifiedResource(resource, group)} "${name}" not found`, details(resource, group, name));
}

/**
 * A path the server does not serve. Upstream sends empty details with it, and kubectl reads them
 * (`kubectl debug` dereferences details.name to tell that ephemeral containers are not served).
 */
export function notFoundPath(): StatusError {
  return new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function alreadyExists(resource: string, group: string, name: string): StatusError {
  return new StatusError(409, 'AlreadyExists', `${qualifiedResource(resource, group)} "${name}" already exists`, details(resource, group, name));
}

export function conflict(resource: string, group: string, name: string, why = 'the object has been modified; please apply your changes to the latest version and try again'): StatusError {
  return new StatusError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(resource, group)} "${name}": ${why}`,
    details(resource, group, name),
  );
}

/** 422 Invalid. `kind` is the Kind (not the resource), as upstream reports it. */
export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): StatusError {
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  const summary = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)).join(', ');
  const message = `${qualifiedKind} "${name}" is invalid: ${causes.length > 1 ? `[${summary}]` : summary}`;
  const d: StatusDetails = { name, kind, causes };
  if (group) d.group = group;
  return new StatusError(422, 'Invalid', message, d);
}

export function badRequest(message: string, causes?: StatusCause[]): StatusError {
  return new StatusError(400, 'BadRequest', message, causes ? { causes } : undefined);
}

export function expired(message: string): StatusError {
  return new StatusError(410, 'Expired', message);
}

export function tooOldResourceVersion(requested: number, oldest: number): StatusError {
  return expired(`too old resource version: ${requested} (${oldest})`);
}

export function unauthorized(): StatusError {
  return new StatusError(401, 'Unauthorized', 'Unauthorized');
}

export function forbidden(message: string, resource?: string, group?: string, name?: string): StatusError {
  const d: StatusDetails = {};
  if (name) d.name = name;
  if (group) d.group = group;
  if (resource) d.kind = resource;
  return new StatusError(403, 'Forbidden', message, d);
}

/**
 * Upstream's NewForbidden for a refusal about one object: the resource qualified by its group
 * ("priorityclasses.scheduling.k8s.io"), as every other status message names it.
 */
export function forbiddenObject(resource: string, group: string, name: string, why: string): StatusError {
  const qualified = qualifiedResource(resource, group);
  return forbidden(name ? `${qualified} "${name}" is forbidden: ${why}` : `${qualified} is forbidden: ${why}`, resource, group, name);
}

export function methodNotAllowed(message = 'the server does not allow this method on the requested resource'): StatusError {
  return new StatusError(405, 'MethodNotAllowed', message);
}

export function notAcceptable(message: string): StatusError {
  return new StatusError(406, 'NotAcceptable', message);
}

export function unsupportedMediaType(contentType: string): StatusError {
  return new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf (got ${JSON.stringify(contentType)})`);
}

export function requestEntityTooLarge(limitBytes: number): StatusError {
  return new StatusError(413, 'RequestEntityTooLarge', `the request body is too large (limit ${limitBytes} bytes)`);
}

export function tooManyRequests(message: string, causes?: StatusCause[], retryAfterSeconds?: number): StatusError {
  const d: StatusDetails = {};
  if (causes) d.causes = causes;
  if (retryAfterSeconds !== undefined) d.retryAfterSeconds = retryAfterSeconds;
  return new StatusError(429, 'TooManyRequests', message, d);
}

export function internalError(message: string): StatusError {
  return new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

export function serviceUnavailable(message: string, retryAfterSeconds = 1): StatusError {
  return new StatusError(503, 'ServiceUnavailable', message, { retryAfterSeconds });
}

export function timeout(message: string): StatusError {
  return new StatusError(504, 'Timeout', message);
}

export function successStatus(code: number, details?: StatusDetails): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code, ...(details ? { details } : {}) };
}

/** Field-error helpers in upstream's wording (apimachinery field.Error). */
export const field = {
  invalid(path: string, value: unknown, detail: string): StatusCause {
    return { reason: 'FieldValueInvalid', field: path, message: `Invalid value: ${formatValue(value)}: ${detail}` };
  },
  required(path: string, detail = ''): StatusCause {
    return { reason: 'FieldValueRequired', field: path, message: detail ? `Required value: ${detail}` : 'Required value' };
  },
  notSupported(path: string, value: unknown, valid: string[]): StatusCause {
    return {
      reason: 'FieldValueNotSupported',
      field: path,
      message: `Unsupported value: ${formatValue(value)}: supported values: ${valid.map((v) => JSON.stringify(v)).join(', ')}`,
    };
  },
  duplicate(path: string, value: unknown): StatusCause {
    return { reason: 'FieldValueDuplicate', field: path, message: `Duplicate value: ${formatValue(value)}` };
  },
  forbidden(path: string, detail: string): StatusCause {
    return { reason: 'FieldValueForbidden', field: path, message: `Forbidden: ${detail}` };
  },
  tooLong(path: string, value: unknown, max: number): StatusCause {
    return { reason: 'FieldValueTooLong', field: path, message: `Too long: may not be more than ${max} bytes` };
  },
  tooMany(path: string, actual: number, max: number): StatusCause {
    return { reason: 'FieldValueTooMany', field: path, message: `Too many: ${actual}: must have at most ${max} items` };
  },
  typeInvalid(path: string, value: unknown, detail: string): StatusCause {
    return { reason: 'FieldValueTypeInvalid', field: path, message: `Invalid value: ${formatValue(value)}: ${detail}` };
  },
};

function formatValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
