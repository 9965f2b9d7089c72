// Value types as Go's JSON decoder enforces them. Upstream decodes every object into its Go struct,
// so `replicas: "3"`, `replicas: 2.5` or `command: "sleep 100"` are refused with "json: cannot
// unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32" instead of being
// stored (where they would break every typed client that reads them) or replaced by a default.
// The types come from the protobuf messages in src/api/schema/, which mirror the Go structs field by
// field; a field they do not list is not checked here (unknown fields are field validation's).
import protobuf from 'protobufjs';
import type { Field, Type } from 'protobufjs';
import { DURATION, EXTRA_VALUE, FIELDS_V1, INT_OR_STRING, JSON_SCHEMA_PROPS, MICRO_TIME, QUANTITY, RAW_EXTENSION, TIME, messageFor, protobufSchema } from '../../api/schema/root.js';
import { META_V1_PACKAGE } from '../../api/schema/messages.js';
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
type ValueRule = 'string' | 'quantity' | 'int-or-string' | 'any' | 'message' | 'text' | 'bool' | 'float' | 'integer' | 'json-schema';

const rules = new WeakMap<Field, ValueRule>();

function ruleOf(field: Field): ValueRule {
  let rule = rules.get(field);
  if (rule) return rule;
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) {
    const name = resolved.fullName;
    rule = name === TIME || name === MICRO_TIME || name === DURATION ? 'string' : name === QUANTITY ? 'quantity' : name === INT_OR_STRING ? 'int-or-string' : name === RAW_EXTENSION || name === FIELDS_V1 || name === EXTRA_VALUE ? 'any' : name === JSON_SCHEMA_PROPS ? 'json-schema' : 'message';
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
    case 'json-schema':
      checkJsonSchema(value, ctx);
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

/**
 * JSONSchemaProps is carried whole in the messages (its keys are no proto names), so its Go types
 * are listed here: a CRD whose schema says `required: "a"` or `maxLength: "3"` is refused as Go's
 * decoder refuses it, instead of being stored and half-enforced.
 */
const SCHEMA_FIELD_TYPES: Record<string, 'string' | 'float64' | 'bool' | 'int64' | '[]string' | 'schema' | 'schemas' | 'schema-map' | 'schema-or-bool' | 'schema-or-array' | 'any' | '[]any' | 'rules' | 'docs'> = {
  id: 'string', $schema: 'string', $ref: 'string', description: 'string', type: 'string', format: 'string', title: 'string', pattern: 'string',
  maximum: 'float64', minimum: 'float64', multipleOf: 'float64',
  exclusiveMaximum: 'bool', exclusiveMinimum: 'bool', uniqueItems: 'bool', nullable: 'bool',
  'x-kubernetes-preserve-unknown-fields': 'bool', 'x-kubernetes-embedded-resource': 'bool', 'x-kubernetes-int-or-string': 'bool',
  maxLength: 'int64', minLength: 'int64', maxItems: 'int64', minItems: 'int64', maxProperties: 'int64', minProperties: 'int64',
  required: '[]string', 'x-kubernetes-list-map-keys': '[]string', 'x-kubernetes-list-type': 'string', 'x-kubernetes-map-type': 'string',
  properties: 'schema-map', patternProperties: 'schema-map', definitions: 'schema-map',
  additionalProperties: 'schema-or-bool', additionalItems: 'schema-or-bool', items: 'schema-or-array',
  allOf: 'schemas', oneOf: 'schemas', anyOf: 'schemas', not: 'schema',
  default: 'any', example: 'any', enum: '[]any', 'x-kubernetes-validations': 'rules', externalDocs: 'docs',
};

function checkJsonSchema(value: unknown, ctx: Context): void {
  if (value === null || value === undefined) return;
  const struct = 'JSONSchemaProps';
  if (!isPlainObject(value)) mismatch(value, ctx, `v1.${struct}`);
  for (const [key, v] of Object.entries(value)) {
    const t = SCHEMA_FIELD_TYPES[key];
    if (!t || v === null || v === undefined) continue;
    const at: Context = { struct, path: { name: key, parent: ctx.path } };
    const scalar = (ok: boolean, goType: string): void => {
      if (!ok) mismatch(v, at, goType);
    };
    switch (t) {
      case 'string':
        scalar(typeof v === 'string', 'string');
        break;
      case 'float64':
        scalar(typeof v === 'number', 'float64');
        break;
      case 'bool':
        scalar(typeof v === 'boolean', 'bool');
        break;
      case 'int64':
        scalar(typeof v === 'number', 'int64');
        if (!Number.isInteger(v)) mismatch(v, at, 'int64', String(v));
        break;
      case '[]string':
        scalar(Array.isArray(v), '[]string');
        for (const x of v as unknown[]) if (typeof x !== 'string') mismatch(x, at, 'string');
        break;
      case 'schema':
        checkJsonSchema(v, at);
        break;
      case 'schemas':
        scalar(Array.isArray(v), '[]v1.JSONSchemaProps');
        for (const x of v as unknown[]) checkJsonSchema(x, at);
        break;
      case 'schema-map':
        scalar(isPlainObject(v), 'map[string]v1.JSONSchemaProps');
        for (const x of Object.values(v as Record<string, unknown>)) checkJsonSchema(x, at);
        break;
      case 'schema-or-bool':
        if (typeof v !== 'boolean') checkJsonSchema(v, at);
        break;
      case 'schema-or-array':
        if (Array.isArray(v)) for (const x of v) checkJsonSchema(x, at);
        else checkJsonSchema(v, at);
        break;
      case '[]any':
        scalar(Array.isArray(v), '[]v1.JSON');
        break;
      case 'rules':
        scalar(Array.isArray(v), 'v1.ValidationRules');
        for (const r of v as unknown[]) {
          if (!isPlainObject(r)) mismatch(r, at, 'v1.ValidationRule');
          for (const f of ['rule', 'message', 'messageExpression', 'reason', 'fieldPath']) if (r[f] !== undefined && r[f] !== null && typeof r[f] !== 'string') mismatch(r[f], { struct: 'ValidationRule', path: { name: f, parent: at.path } }, 'string');
        }
        break;
      case 'docs':
        scalar(isPlainObject(v), 'v1.ExternalDocumentation');
        break;
      case 'any':
        break;
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

/** The same for an object's metadata alone: custom resources have no message but ObjectMeta's. */
export function metadataTypeError(obj: Record<string, unknown>, kind: string): string | undefined {
  const meta = obj['metadata'];
  if (meta === undefined || meta === null) return undefined;
  try {
    if (!isPlainObject(meta)) mismatch(meta, { struct: kind, path: { name: 'metadata', parent: undefined } }, 'v1.ObjectMeta');
    checkMessage(meta, protobufSchema().lookupType(`${META_V1_PACKAGE}.ObjectMeta`), { name: 'metadata', parent: undefined });
    return undefined;
  } catch (e) {
    if (e instanceof TypeMismatch) return e.message;
    throw e;
  }
}
