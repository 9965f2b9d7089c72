// Structural-schema rules (apiextensions-apiserver pkg/apiserver/schema: validation.go and
// complete.go). A structural schema says, outside of allOf/anyOf/oneOf/not, the type of every
// field and item it constrains; pruning and defaulting rely on that.
import type { StatusCause } from '../api/types.js';
import { field } from '../api/errors.js';
import { compileGoRegExp } from './go-regexp.js';
import { isSchemaObject, itemsSchema, propertyEntries, propertyOf, hasDefault, type JSONSchemaProps } from './json-schema.js';

type Level = 'root' | 'item' | 'field';

const child = (p: string, n: string) => `${p}.${n}`;
const key = (p: string, k: string) => `${p}[${k}]`;
const index = (p: string, i: number) => `${p}[${i}]`;

function list(v: unknown): JSONSchemaProps[] {
  return Array.isArray(v) ? v.filter(isSchemaObject) : [];
}

function nonEmptyString(v: unknown): boolean {
  return typeof v === 'string' && v !== '';
}

function nonEmptyArray(v: unknown): boolean {
  return Array.isArray(v) && v.length > 0;
}

/**
 * Upstream's ValidateStructural: the invariants and the completeness of value validations, sorted
 * by their "field: message" text as upstream sorts them.
 */
export function validateStructural(s: JSONSchemaProps, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  invariants(s, 'root', path, out);
  completeness(s, s, path, path, out);
  const text = (c: StatusCause) => `${c.field}: ${c.message}`;
  return out.sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
}

// The two int-or-string shapes allowed to repeat `type` inside anyOf.
function isIntOrStringAnyOf(anyOf: unknown): boolean {
  const alts = Array.isArray(anyOf) ? anyOf : [];
  const only = (s: unknown, type: string) => isSchemaObject(s) && s.type === type && Object.entries(s).every(([k, v]) => k === 'type' || v === undefined);
  return alts.length === 2 && only(alts[0], 'integer') && only(alts[1], 'string');
}

function isIntOrStringAllOf(s: JSONSchemaProps): boolean {
  const allOf = list(s.allOf);
  return allOf.length >= 1 && isIntOrStringAnyOf(allOf[0]!.anyOf);
}

function invariants(s: JSONSchemaProps, lvl: Level, path: string, out: StatusCause[]): void {
  const items = itemsSchema(s);
  if (s.type === 'array' && !items) out.push(field.required(child(path, 'items'), 'must be specified'));
  if (items) invariants(items, 'item', child(path, 'items'), out);
  for (const [k, p] of propertyEntries(s)) invariants(p, 'field', key(child(path, 'properties'), k), out);
  if (s.additionalProperties !== undefined) {
    if (lvl === 'root') out.push(field.forbidden(child(path, 'additionalProperties'), 'must not be used at the root'));
    if (isSchemaObject(s.additionalProperties)) invariants(s.additionalProperties, 'field', child(path, 'additionalProperties'), out);
  }

  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (intOrString && preserve) out.push(field.invalid(child(path, 'x-kubernetes-preserve-unknown-fields'), true, 'must be false if x-kubernetes-int-or-string is true'));
  if (intOrString && embedded) out.push(field.invalid(child(path, 'x-kubernetes-embedded-resource'), true, 'must be false if x-kubernetes-int-or-string is true'));

  valueValidation(s, isIntOrStringAnyOf(s.anyOf), isIntOrStringAllOf(s), path, out);

  const type = typeof s.type === 'string' ? s.type : '';
  if (embedded && type !== 'object') {
    const detail = 'must be object if x-kubernetes-embedded-resource is true';
    out.push(type === '' ? field.required(child(path, 'type'), detail) : field.invalid(child(path, 'type'), type, detail));
  } else if (type === '' && !intOrString && !preserve) {
    const detail = { root: 'must not be empty at the root', item: 'must not be empty for specified array items', field: 'must not be empty for specified object fields' }[lvl];
    out.push(field.required(child(path, 'type'), detail));
  }
  if (embedded && s.additionalProperties !== undefined) out.push(field.forbidden(child(path, 'additionalProperties'), 'must not be used if x-kubernetes-embedded-resource is set'));
  if (lvl === 'root' && type !== '' && type !== 'object') out.push(field.invalid(child(path, 'type'), type, 'must be object at the root'));

  const checkMetadata = lvl === 'root' || embedded;
  for (const meta of ['kind', 'apiVersion']) {
    const p = propertyOf(s, meta);
    if (p && checkMetadata && p.type !== 'string') out.push(field.invalid(child(key(child(path, 'properties'), meta), 'type'), p.type ?? '', 'must be string'));
  }
  const metadata = propertyOf(s, 'metadata');
  if (metadata) metadataInvariants(metadata, checkMetadata, lvl, key(child(path, 'properties'), 'metadata'), out);

  if (embedded && !preserve && propertyEntries(s).length === 0) {
    out.push(field.required(child(path, 'properties'), 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
  }
}

function metadataInvariants(m: JSONSchemaProps, checkMetadata: boolean, lvl: Level, path: string, out: StatusCause[]): void {
  if (checkMetadata && m.type !== 'object') out.push(field.invalid(child(path, 'type'), m.type ?? '', 'must be object'));
  if (lvl === 'root' && restrictsMoreThanNames(m)) {
    out.push(field.forbidden(path, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
  }
}

// Root metadata may narrow name and generateName only: ObjectMeta validation owns the rest, and a
// schema there would silently contradict it. type and default are ignored (default is refused elsewhere).
function restrictsMoreThanNames(m: JSONSchemaProps): boolean {
  const props = propertyEntries(m).map(([k]) => k);
  if (props.some((k) => k !== 'name' && k !== 'generateName')) return true;
  return (
    m.items !== undefined ||
    m.additionalProperties !== undefined ||
    nonEmptyString(m.description) ||
    nonEmptyString(m.title) ||
    m.nullable === true ||
    m['x-kubernetes-preserve-unknown-fields'] === true ||
    m['x-kubernetes-embedded-resource'] === true ||
    m['x-kubernetes-int-or-string'] === true ||
    nonEmptyArray(m['x-kubernetes-list-map-keys']) ||
    m['x-kubernetes-list-type'] !== undefined ||
    m['x-kubernetes-map-type'] !== undefined ||
    nonEmptyArray(m['x-kubernetes-validations']) ||
    hasValueValidation(m)
  );
}

function hasValueValidation(s: JSONSchemaProps): boolean {
  return (
    nonEmptyString(s.format) ||
    s.maximum !== undefined ||
    s.exclusiveMaximum === true ||
    s.minimum !== undefined ||
    s.exclusiveMinimum === true ||
    s.maxLength !== undefined ||
    s.minLength !== undefined ||
    nonEmptyString(s.pattern) ||
    s.maxItems !== undefined ||
    s.minItems !== undefined ||
    s.uniqueItems === true ||
    s.multipleOf !== undefined ||
    nonEmptyArray(s.enum) ||
    s.maxProperties !== undefined ||
    s.minProperties !== undefined ||
    nonEmptyArray(s.required) ||
    nonEmptyArray(s.allOf) ||
    nonEmptyArray(s.oneOf) ||
    nonEmptyArray(s.anyOf) ||
    s.not !== undefined
  );
}

function valueValidation(v: JSONSchemaProps, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, path: string, out: StatusCause[]): void {
  if (!skipAnyOf) list(v.anyOf).forEach((x, i) => nested(x, false, index(child(path, 'anyOf'), i), out));
  list(v.allOf).forEach((x, i) => nested(x, skipFirstAllOfAnyOf && i === 0, index(child(path, 'allOf'), i), out));
  list(v.oneOf).forEach((x, i) => nested(x, false, index(child(path, 'oneOf'), i), out));
  if (isSchemaObject(v.not)) nested(v.not, false, child(path, 'not'), out);
  if (nonEmptyString(v.pattern)) {
    const re = compileGoRegExp(v.pattern as string);
    if (re instanceof Error) out.push(field.invalid(child(path, 'pattern'), v.pattern, `must be a valid regular expression, but isn't: error parsing regexp: ${re.message}`));
  }
}

// Inside allOf/anyOf/oneOf/not only value validations may appear: anything that shapes the data
// (types, defaults, nullability, extensions) must be stated by the structural part of the schema.
function nested(v: JSONSchemaProps, skipAnyOf: boolean, path: string, out: StatusCause[]): void {
  valueValidation(v, skipAnyOf, false, path, out);
  const items = itemsSchema(v);
  if (items) nested(items, false, child(path, 'items'), out);
  for (const [k, p] of propertyEntries(v)) nested(p, false, key(child(path, 'properties'), k), out);

  const forbid = (name: string, detail: string) => out.push(field.forbidden(child(path, name), detail));
  if (nonEmptyString(v.type)) forbid('type', 'must be empty to be structural');
  if (v.additionalProperties !== undefined) forbid('additionalProperties', 'must be undefined to be structural');
  if (hasDefault(v)) forbid('default', 'must be undefined to be structural');
  if (nonEmptyString(v.title)) forbid('title', 'must be empty to be structural');
  if (nonEmptyString(v.description)) forbid('description', 'must be empty to be structural');
  if (v.nullable === true) forbid('nullable', 'must be false to be structural');
  if (v.externalDocs !== undefined) forbid('externalDocs', 'must be undefined to be structural');
  if (v['x-kubernetes-preserve-unknown-fields'] === true) forbid('x-kubernetes-preserve-unknown-fields', 'must be false to be structural');
  if (v['x-kubernetes-embedded-resource'] === true) forbid('x-kubernetes-embedded-resource', 'must be false to be structural');
  if (v['x-kubernetes-int-or-string'] === true) forbid('x-kubernetes-int-or-string', 'must be false to be structural');
  if (nonEmptyArray(v['x-kubernetes-list-map-keys'])) forbid('x-kubernetes-list-map-keys', 'must be empty to be structural');
  if (v['x-kubernetes-list-type'] !== undefined) forbid('x-kubernetes-list-type', 'must be undefined to be structural');
  if (v['x-kubernetes-map-type'] !== undefined) forbid('x-kubernetes-map-type', 'must be undefined to be structural');
  if (nonEmptyArray(v['x-kubernetes-validations'])) forbid('x-kubernetes-validations', 'must be empty to be structural');
  // Reasoning about metadata in junctors could restrict it behind ObjectMeta validation's back.
  if (propertyOf(v, 'metadata')) out.push(field.forbidden(key(child(path, 'properties'), 'metadata'), 'must not be specified in a nested context'));
}

// Every field or item a value validation talks about must also be specified structurally.
function completeness(v: JSONSchemaProps, s: JSONSchemaProps | undefined, sPath: string, vPath: string, out: StatusCause[]): void {
  const junctors: [JSONSchemaProps, string][] = [];
  if (isSchemaObject(v.not)) junctors.push([v.not, child(vPath, 'not')]);
  list(v.allOf).forEach((x, i) => junctors.push([x, index(child(vPath, 'allOf'), i)]));
  list(v.anyOf).forEach((x, i) => junctors.push([x, index(child(vPath, 'anyOf'), i)]));
  list(v.oneOf).forEach((x, i) => junctors.push([x, index(child(vPath, 'oneOf'), i)]));
  if (junctors.length === 0) return;
  if (!s) {
    out.push(field.required(sPath, `because it is defined in ${vPath}`));
    return;
  }
  for (const [x, p] of junctors) nestedCompleteness(x, s, sPath, p, out);
}

function nestedCompleteness(v: JSONSchemaProps, s: JSONSchemaProps | undefined, sPath: string, vPath: string, out: StatusCause[]): void {
  if (!s) {
    out.push(field.required(sPath, `because it is defined in ${vPath}`));
    return;
  }
  completeness(v, s, sPath, vPath, out);
  const vItems = itemsSchema(v);
  if (vItems) nestedCompleteness(vItems, itemsSchema(s), child(sPath, 'items'), child(vPath, 'items'), out);
  for (const [k, p] of propertyEntries(v)) {
    const sp = key(child(sPath, 'properties'), k);
    const vp = key(child(vPath, 'properties'), k);
    const sub = propertyOf(s, k);
    if (!sub) out.push(field.required(sp, `because it is defined in ${vp}`));
    else nestedCompleteness(p, sub, sp, vp, out);
  }
}
