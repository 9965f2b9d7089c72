// Value types as Go's JSON decoder enforces them. Upstream decodes every object into its Go struct,
// so `replicas: "3"`, `replicas: 2.5` or `command: "sleep 100"` are refused with "json: cannot
// unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32" instead of being
// stored (where they would break every typed client that reads them) or replaced by a default.
// The types come from the protobuf messages in ./schema.ts, which mirror the Go structs field by
// field; a field they do not list is not checked here (unknown fields are field validation's).
import protobuf from 'protobufjs';
import type { Field, Type } from 'protobufjs';
import { protobufSchema } from './decode.js';
import { SUPPORTED_KINDS } from './schema.js';

const TIME = '.k8s.io.apimachinery.pkg.apis.meta.v1.Time';
const MICRO_TIME = '.k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime';
const DURATION = '.k8s.io.apimachinery.pkg.apis.meta.v1.Duration';
const FIELDS_V1 = '.k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1';
const QUANTITY = '.k8s.io.apimachinery.pkg.api.resource.Quantity';
const INT_OR_STRING = '.k8s.io.apimachinery.pkg.util.intstr.IntOrString';
const RAW_EXTENSION = '.k8s.io.apimachinery.pkg.runtime.RawExtension';

const INT32 = new Set(['int32', 'sint32', 'sfixed32']);
const UINT32 = new Set(['uint32', 'fixed32']);
const INT64 = new Set(['int64', 'sint64', 'sfixed64', 'uint64', 'fixed64']);

class TypeMismatch extends Error {}

function jsonKind(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'number';
  return Array.isArray(v) ? 'array' : 'object';
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Go's name for a message's struct type: the package's last segment and the type (v1.Container). */
function goMessageName(type: Type): string {
  const pkg = type.parent?.name ?? '';
  return `${pkg}.${type.name}`;
}

function goElementType(field: Field): string {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return goMessageName(resolved);
  if (field.type === 'bytes') return '[]uint8';
  if (INT64.has(field.type)) return field.type.startsWith('u') || field.type.startsWith('fixed') ? 'uint64' : 'int64';
  if (INT32.has(field.type)) return 'int32';
  if (UINT32.has(field.type)) return 'uint32';
  if (field.type === 'double') return 'float64';
  if (field.type === 'float') return 'float32';
  return field.type; // string, bool
}

function goFieldType(field: Field): string {
  if (field.map) return `map[string]${goElementType(field)}`;
  return field.repeated ? `[]${goElementType(field)}` : goElementType(field);
}

interface Context {
  /** The Go struct the field belongs to. */
  struct: string;
  /** JSON field names from the top of the object, as Go's decoder reports them (no indexes). */
  fields: string[];
}

function mismatch(value: unknown, ctx: Context, goType: string, numberText?: string): never {
  const what = numberText !== undefined ? `number ${numberText}` : jsonKind(value);
  throw new TypeMismatch(`json: cannot unmarshal ${what} into Go struct field ${ctx.struct}.${ctx.fields.join('.')} of type ${goType}`);
}

/** One value (a scalar field, a list item or a map value) against the field's element type. */
function checkElement(value: unknown, field: Field, ctx: Context): void {
  if (value === null) return;
  const resolved = field.resolvedType;
  const goType = goElementType(field);
  if (resolved instanceof protobuf.Type) {
    switch (resolved.fullName) {
      case TIME:
      case MICRO_TIME:
      case DURATION:
        if (typeof value !== 'string') mismatch(value, ctx, 'string');
        return;
      case QUANTITY:
        // Quantity takes "100m" and also a bare number.
        if (typeof value !== 'string' && typeof value !== 'number') mismatch(value, ctx, 'string');
        return;
      case INT_OR_STRING:
        if (typeof value === 'string') return;
        if (typeof value !== 'number') mismatch(value, ctx, 'int32');
        if (!Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31) mismatch(value, ctx, 'int32', String(value));
        return;
      case RAW_EXTENSION:
      case FIELDS_V1:
        return;
      default:
        if (!isPlainObject(value)) mismatch(value, ctx, goType);
        checkMessage(value, resolved, ctx.fields);
        return;
    }
  }
  switch (field.type) {
    case 'string':
    case 'bytes':
      if (typeof value !== 'string') mismatch(value, ctx, goType);
      return;
    case 'bool':
      if (typeof value !== 'boolean') mismatch(value, ctx, goType);
      return;
    case 'double':
    case 'float':
      if (typeof value !== 'number') mismatch(value, ctx, goType);
      return;
    default: {
      if (typeof value !== 'number') mismatch(value, ctx, goType);
      const unsigned = UINT32.has(field.type) || field.type === 'uint64' || field.type === 'fixed64';
      const bits = INT64.has(field.type) ? 64 : 32;
      const min = unsigned ? 0 : bits === 32 ? -(2 ** 31) : Number.MIN_SAFE_INTEGER;
      const max = bits === 32 ? (unsigned ? 2 ** 32 : 2 ** 31) - 1 : Number.MAX_SAFE_INTEGER;
      if (!Number.isInteger(value) || value < min || value > max) mismatch(value, ctx, goType, String(value));
    }
  }
}

function checkField(value: unknown, field: Field, ctx: Context): void {
  if (value === null || value === undefined) return;
  if (field.map) {
    if (!isPlainObject(value)) mismatch(value, ctx, goFieldType(field));
    for (const v of Object.values(value)) checkElement(v, field, ctx);
    return;
  }
  if (field.repeated) {
    if (!Array.isArray(value)) mismatch(value, ctx, goFieldType(field));
    for (const v of value) checkElement(v, field, ctx);
    return;
  }
  checkElement(value, field, ctx);
}

/** A message's JSON fields by name, the fields of (inline) embedded messages included. */
const jsonFields = new WeakMap<Type, Map<string, { field: Field; struct: string }>>();

function fieldsOf(type: Type): Map<string, { field: Field; struct: string }> {
  let out = jsonFields.get(type);
  if (out) return out;
  out = new Map();
  for (const field of type.fieldsArray) {
    const resolved = field.resolvedType;
    if (field.options?.['(inline)'] === true && resolved instanceof protobuf.Type) {
      for (const [name, inner] of fieldsOf(resolved)) out.set(name, inner);
    } else {
      out.set(field.name, { field, struct: type.name });
    }
  }
  jsonFields.set(type, out);
  return out;
}

function checkMessage(value: Record<string, unknown>, type: Type, path: string[]): void {
  const fields = fieldsOf(type);
  for (const key of Object.keys(value)) {
    const entry = fields.get(key);
    if (!entry) continue;
    checkField(value[key], entry.field, { struct: entry.struct, fields: [...path, key] });
  }
}

/**
 * The error Go's decoder gives for the first value of the wrong type in `obj`, a `kind` of
 * `apiVersion`, or undefined when every value it can check has the right type.
 */
export function jsonTypeError(obj: Record<string, unknown>, apiVersion: string, kind: string): string | undefined {
  const entry = SUPPORTED_KINDS[apiVersion];
  if (!entry || !entry.kinds.includes(kind)) return undefined;
  try {
    checkMessage(obj, protobufSchema().lookupType(`${entry.pkg}.${kind}`), []);
    return undefined;
  } catch (e) {
    if (e instanceof TypeMismatch) return e.message;
    throw e;
  }
}
