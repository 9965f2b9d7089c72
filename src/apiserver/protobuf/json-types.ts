// Value types as Go's JSON decoder enforces them. Upstream decodes every object into its Go struct,
// so `replicas: "3"`, `replicas: 2.5` or `command: "sleep 100"` are refused with "json: cannot
// unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32" instead of being
// stored (where they would break every typed client that reads them) or replaced by a default.
// The types come from the protobuf messages in src/api/schema/, which mirror the Go structs field by
// field; a field they do not list is not checked here (unknown fields are field validation's).
import protobuf from 'protobufjs';
import type { Field, Type } from 'protobufjs';
import { DURATION, FIELDS_V1, INT_OR_STRING, MICRO_TIME, QUANTITY, RAW_EXTENSION, TIME, messageFor } from '../../api/schema/root.js';
import { base64Error } from '../../api/kinds/configmap.js';
import { quantityErrors } from '../../api/quantity.js';

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

/** A field's JSON name and the fields above it: built as the walk descends, spelled out only for an error. */
interface FieldPath {
  name: string;
  parent: FieldPath | undefined;
}

interface Context {
  /** The Go struct the field belongs to. */
  struct: string;
  /** JSON field names from the top of the object, as Go's decoder reports them (no indexes). */
  path: FieldPath;
}

function spell(path: FieldPath): string {
  return path.parent ? `${spell(path.parent)}.${path.name}` : path.name;
}

function mismatch(value: unknown, ctx: Context, goType: string, numberText?: string): never {
  const what = numberText !== undefined ? `number ${numberText}` : jsonKind(value);
  throw new TypeMismatch(`json: cannot unmarshal ${what} into Go struct field ${ctx.struct}.${spell(ctx.path)} of type ${goType}`);
}

/** What a field's values must be, worked out once per field (protobufjs computes fullName on every read). */
type ValueRule = 'string' | 'quantity' | 'int-or-string' | 'any' | 'message' | 'text' | 'bool' | 'float' | 'integer';

const rules = new WeakMap<Field, ValueRule>();

function ruleOf(field: Field): ValueRule {
  let rule = rules.get(field);
  if (rule) return rule;
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) {
    const name = resolved.fullName;
    rule = name === TIME || name === MICRO_TIME || name === DURATION ? 'string' : name === QUANTITY ? 'quantity' : name === INT_OR_STRING ? 'int-or-string' : name === RAW_EXTENSION || name === FIELDS_V1 ? 'any' : 'message';
  } else if (field.type === 'string' || field.type === 'bytes') rule = 'text';
  else if (field.type === 'bool') rule = 'bool';
  else if (field.type === 'double' || field.type === 'float') rule = 'float';
  else rule = 'integer';
  rules.set(field, rule);
  return rule;
}

/** One value (a scalar field, a list item or a map value) against the field's element type. */
function checkElement(value: unknown, field: Field, ctx: Context): void {
  if (value === null) return;
  switch (ruleOf(field)) {
    case 'string':
      if (typeof value !== 'string') mismatch(value, ctx, 'string');
      return;
    case 'quantity':
      // Quantity takes "100m" and also a bare number.
      if (typeof value !== 'string' && typeof value !== 'number') mismatch(value, ctx, 'string');
      // Quantity decodes itself: a malformed one fails the decode, before any validation.
      if (typeof value === 'string') {
        const bad = quantityErrors(value)[0];
        if (bad) throw new TypeMismatch(bad);
      }
      return;
    case 'int-or-string':
      if (typeof value === 'string') return;
      if (typeof value !== 'number') mismatch(value, ctx, 'int32');
      if (!Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31) mismatch(value, ctx, 'int32', String(value));
      return;
    case 'any':
      return;
    case 'message':
      if (!isPlainObject(value)) mismatch(value, ctx, goElementType(field));
      checkMessage(value, field.resolvedType as Type, ctx.path);
      return;
    case 'text': {
      if (typeof value !== 'string') mismatch(value, ctx, goElementType(field));
      // []byte arrives base64-encoded; Go's decoder stops at the first byte that is not.
      const bad = field.type === 'bytes' ? base64Error(value) : undefined;
      if (bad) throw new TypeMismatch(bad);
      return;
    }
    case 'bool':
      if (typeof value !== 'boolean') mismatch(value, ctx, goElementType(field));
      return;
    case 'float':
      if (typeof value !== 'number') mismatch(value, ctx, goElementType(field));
      return;
    case 'integer': {
      if (typeof value !== 'number') mismatch(value, ctx, goElementType(field));
      const unsigned = UINT32.has(field.type) || field.type === 'uint64' || field.type === 'fixed64';
      const bits = INT64.has(field.type) ? 64 : 32;
      // 64-bit values arrive as JS numbers: anything integral in range is what Go would take.
      const min = unsigned ? 0 : bits === 32 ? -(2 ** 31) : -(2 ** 63);
      const max = bits === 32 ? (unsigned ? 2 ** 32 : 2 ** 31) - 1 : unsigned ? 2 ** 64 : 2 ** 63;
      if (!Number.isInteger(value) || value < min || value > max) mismatch(value, ctx, goElementType(field), String(value));
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

function checkMessage(value: Record<string, unknown>, type: Type, path: FieldPath | undefined): void {
  const fields = fieldsOf(type);
  for (const key in value) {
    const entry = fields.get(key);
    if (!entry) continue;
    const v = value[key];
    if (v === null || v === undefined) continue;
    checkField(v, entry.field, { struct: entry.struct, path: { name: key, parent: path } });
  }
}

/** Message types by apiVersion and kind (null: not checked); protobufjs' lookup walks the namespace tree. */
const kindTypes = new Map<string, Type | null>();

function typeOf(apiVersion: string, kind: string): Type | null {
  const key = `${apiVersion}/${kind}`;
  let type = kindTypes.get(key);
  if (type === undefined) {
    type = messageFor(apiVersion, kind) ?? null;
    kindTypes.set(key, type);
  }
  return type;
}

/**
 * The error Go's decoder gives for the first value of the wrong type in `obj`, a `kind` of
 * `apiVersion`, or undefined when every value it can check has the right type.
 */
export function jsonTypeError(obj: Record<string, unknown>, apiVersion: string, kind: string): string | undefined {
  const type = typeOf(apiVersion, kind);
  if (!type) return undefined;
  try {
    checkMessage(obj, type, undefined);
    return undefined;
  } catch (e) {
    if (e instanceof TypeMismatch) return e.message;
    throw e;
  }
}
