// Validation of a CRD version's schema.openAPIV3Schema as upstream's CRD validation runs it for
// apiextensions.k8s.io/v1: structural-schema rules and default values first, then the generic
// OpenAPI checks of ValidateCustomResourceDefinitionOpenAPISchema.
import type { StatusCause } from '../api/types.js';
import { field } from '../api/errors.js';
import { invalidRendered } from '../api/validation.js';
import { validateDefaults } from './default-validation.js';
import { hasDefault, isSchemaObject, itemsSchema, propertyEntries, propertyOf, type JSONSchemaProps } from './json-schema.js';
import { validateStructural } from './structural.js';

export interface CRDSchemaOptions {
  /** The version serves /status: then the root may only hold what survives splitting status off. */
  statusSubresource?: boolean;
}

const OPENAPI_V3_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);
const VALIDATION_REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];
// JSON names of the root fields allowed with the status subresource (upstream allowedFieldsAtRootSchema).
const ALLOWED_AT_ROOT_WITH_STATUS = new Set([
  'description',
  'type',
  'format',
  'title',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'required',
  'items',
  'properties',
  'externalDocs',
  'example',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-validations',
]);
const ALLOWED_AT_ROOT_NAMES =
  '[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations]';

const child = (p: string, n: string) => `${p}.${n}`;
const key = (p: string, k: string) => `${p}[${k}]`;
const index = (p: string, i: number) => `${p}[${i}]`;

/**
 * Causes for a version's openAPIV3Schema at `path` (e.g.
 * "spec.versions[0].schema.openAPIV3Schema"), in upstream's wording and order; [] when valid.
 * Covers structural-schema rules, default values, list/map extensions and the fields v1 refuses;
 * CEL rules are checked for shape only, not compiled.
 */
export function validateCRDSchema(schema: unknown, path: string, opts: CRDSchemaOptions = {}): StatusCause[] {
  if (schema === undefined || schema === null) return [field.required(path, 'schemas are required')];
  if (!isSchemaObject(schema)) return [field.typeInvalid(path, schema, 'must be an object')];
  const out: StatusCause[] = [];
  if (opts.statusSubresource) out.push(...rootWithStatus(schema, path));
  if (schema.nullable === true) out.push(field.forbidden(child(path, 'nullable'), 'nullable cannot be true at the root'));

  // Upstream first converts to a structural schema; when that fails its message is only shown if
  // nothing more specific was found, since the OpenAPI checks name the same fields better.
  const conversionError = structuralConversionError(schema);
  if (conversionError === undefined) {
    const structural = validateStructural(schema, path);
    out.push(...(structural.length > 0 ? structural : validateDefaults(schema, path)));
  }
  openAPIChecks(schema, path, { allowDefaults: true, disallowReason: '', insideResourceMeta: false }, true, out);
  if (out.length === 0 && conversionError !== undefined) out.push(field.invalid(path, '', conversionError));
  return out;
}

function rootWithStatus(s: JSONSchemaProps, path: string): StatusCause[] {
  for (const [k, v] of Object.entries(s)) {
    if (v === undefined || v === false || v === '' || v === 0) continue;
    if (k === 'type') {
      if (v !== 'object') return [field.invalid(`${path}.type`, v, 'only "object" is allowed as the type at the root of the schema if the status subresource is enabled')];
      continue;
    }
    if (!ALLOWED_AT_ROOT_WITH_STATUS.has(k)) {
      return [invalidRendered(path, 'apiextensions.JSONSchemaProps{...}', `only ${ALLOWED_AT_ROOT_NAMES} fields are allowed at the root of the schema if the status subresource is enabled`)];
    }
  }
  return [];
}

/** Why upstream's NewStructural would fail on this schema, if it would. */
function structuralConversionError(s: JSONSchemaProps): string | undefined {
  if (typeof s.id === 'string' && s.id !== '') return "OpenAPIV3Schema 'id' is not supported";
  if (typeof s.$schema === 'string' && s.$schema !== '') return "OpenAPIV3Schema 'schema' is not supported";
  if (typeof s.$ref === 'string' && s.$ref !== '') return "OpenAPIV3Schema '$ref' is not supported";
  if (isSchemaObject(s.patternProperties) && Object.keys(s.patternProperties).length > 0) return "OpenAPIV3Schema 'patternProperties' is not supported";
  if (isSchemaObject(s.dependencies) && Object.keys(s.dependencies).length > 0) return "OpenAPIV3Schema 'dependencies' is not supported";
  if (s.additionalItems !== undefined) return "OpenAPIV3Schema 'additionalItems' is not supported";
  if (isSchemaObject(s.definitions) && Object.keys(s.definitions).length > 0) return "OpenAPIV3Schema 'definitions' is not supported";
  if (s['x-kubernetes-preserve-unknown-fields'] === false) return "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined";
  if (Array.isArray(s.items)) return 'items must be a schema object and not an array';
  const subs: JSONSchemaProps[] = [];
  const items = itemsSchema(s);
  if (items) subs.push(items);
  for (const [, p] of propertyEntries(s)) subs.push(p);
  if (isSchemaObject(s.additionalProperties)) subs.push(s.additionalProperties);
  for (const l of [s.allOf, s.anyOf, s.oneOf]) if (Array.isArray(l)) subs.push(...l.filter(isSchemaObject));
  if (isSchemaObject(s.not)) subs.push(s.not);
  for (const sub of subs) {
    const err = structuralConversionError(sub);
    if (err !== undefined) return err;
  }
  return undefined;
}

interface Ctx {
  allowDefaults: boolean;
  disallowReason: string;
  /** Validating TypeMeta or ObjectMeta, of the root or of an embedded resource. */
  insideResourceMeta: boolean;
}

const withForbiddenDefaults = (ctx: Ctx, reason: string): Ctx => ({ ...ctx, allowDefaults: false, disallowReason: reason });

function openAPIChecks(s: JSONSchemaProps, path: string, ctx: Ctx, isRoot: boolean, out: StatusCause[]): void {
  forbiddenFields(s, path, ctx, out);
  if (s.uniqueItems === true) out.push(field.forbidden(child(path, 'uniqueItems'), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));

  // properties are for structs, additionalProperties for maps: both would contradict the
  // convention of ignoring unknown fields.
  if (s.additionalProperties !== undefined) {
    if (propertyEntries(s).length > 0 && (s.additionalProperties === false || isSchemaObject(s.additionalProperties))) {
      out.push(field.forbidden(child(path, 'additionalProperties'), 'additionalProperties and properties are mutual exclusive'));
    }
    if (isSchemaObject(s.additionalProperties)) {
      // Pruning without a value is ambiguous for maps in metadata, so no defaults there.
      const sub = ctx.insideResourceMeta ? withForbiddenDefaults(ctx, 'inside additionalProperties applying to object metadata') : ctx;
      openAPIChecks(s.additionalProperties, child(path, 'additionalProperties'), sub, false, out);
    }
  }
  for (const [k, p] of propertyEntries(s)) {
    let sub = ctx;
    if ((isRoot || s['x-kubernetes-embedded-resource'] === true) && META_FIELDS.has(k)) {
      sub = { ...sub, insideResourceMeta: true };
      if (isRoot) sub = withForbiddenDefaults(sub, `in top-level ${k}`);
    }
    openAPIChecks(p, key(child(path, 'properties'), k), sub, false, out);
  }
  if (isSchemaObject(s.not)) openAPIChecks(s.not, child(path, 'not'), ctx, false, out);
  for (const name of ['allOf', 'oneOf', 'anyOf'] as const) {
    const l = s[name];
    if (Array.isArray(l)) l.forEach((x, i) => isSchemaObject(x) && openAPIChecks(x, index(child(path, name), i), ctx, false, out));
  }
  if (isSchemaObject(s.definitions)) {
    for (const [k, d] of Object.entries(s.definitions)) if (isSchemaObject(d)) openAPIChecks(d, key(child(path, 'definitions'), k), ctx, false, out);
  }
  if (isSchemaObject(s.items)) openAPIChecks(s.items, child(path, 'items'), ctx, false, out);
  else if (Array.isArray(s.items)) s.items.forEach((x, i) => isSchemaObject(x) && openAPIChecks(x, index(child(path, 'items'), i), ctx, false, out));
  if (isSchemaObject(s.dependencies)) {
    for (const [k, d] of Object.entries(s.dependencies)) if (isSchemaObject(d)) openAPIChecks(d, key(child(path, 'dependencies'), k), ctx, false, out);
  }
  if (s['x-kubernetes-preserve-unknown-fields'] === false) out.push(field.invalid(child(path, 'x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'));
  mapAndListTypes(s, path, out);
  listKeysRequiredOrDefaulted(s, path, out);
  celRuleShapes(s, path, out);
}

function forbiddenFields(s: JSONSchemaProps, path: string, ctx: Ctx, out: StatusCause[]): void {
  const type = typeof s.type === 'string' ? s.type : '';
  if (type !== '' && !OPENAPI_V3_TYPES.includes(type)) out.push(field.notSupported(child(path, 'type'), type, OPENAPI_V3_TYPES));
  if (hasDefault(s) && !ctx.allowDefaults) out.push(field.forbidden(child(path, 'default'), ctx.disallowReason ? `must not be set ${ctx.disallowReason}` : 'must not be set'));
  if (typeof s.id === 'string' && s.id !== '') out.push(field.forbidden(child(path, 'id'), 'id is not supported'));
  if (s.additionalItems !== undefined) out.push(field.forbidden(child(path, 'additionalItems'), 'additionalItems is not supported'));
  if (isSchemaObject(s.patternProperties) && Object.keys(s.patternProperties).length > 0) out.push(field.forbidden(child(path, 'patternProperties'), 'patternProperties is not supported'));
  if (isSchemaObject(s.definitions) && Object.keys(s.definitions).length > 0) out.push(field.forbidden(child(path, 'definitions'), 'definitions is not supported'));
  if (s.dependencies !== undefined) out.push(field.forbidden(child(path, 'dependencies'), 'dependencies is not supported'));
  if (s.$ref !== undefined) out.push(field.forbidden(child(path, '$ref'), '$ref is not supported'));
  if (type === 'null') out.push(field.forbidden(child(path, 'type'), 'type cannot be set to null, use nullable as an alternative'));
  if (Array.isArray(s.items) && s.items.length > 0) out.push(field.forbidden(child(path, 'items'), 'items must be a schema object and not an array'));
  if (ctx.insideResourceMeta && s['x-kubernetes-embedded-resource'] === true) {
    out.push(field.forbidden(child(path, 'x-kubernetes-embedded-resource'), 'must not be used inside of resource meta'));
  }
}

const goStrings = (l: string[]) => `[]string{${l.map((x) => JSON.stringify(x)).join(', ')}}`;

function mapAndListTypes(s: JSONSchemaProps, path: string, out: StatusCause[]): void {
  const type = typeof s.type === 'string' ? s.type : '';
  const mapType = s['x-kubernetes-map-type'];
  const listType = s['x-kubernetes-list-type'];
  const keys = Array.isArray(s['x-kubernetes-list-map-keys']) ? s['x-kubernetes-list-map-keys'] : [];
  const items = itemsSchema(s);

  if (mapType !== undefined && type !== 'object') {
    const detail = 'must be object if x-kubernetes-map-type is specified';
    out.push(type === '' ? field.required(child(path, 'type'), detail) : field.invalid(child(path, 'type'), type, detail));
  }
  if (mapType !== undefined && mapType !== 'atomic' && mapType !== 'granular') out.push(field.notSupported(child(path, 'x-kubernetes-map-type'), mapType, ['atomic', 'granular']));

  if (listType !== undefined && type !== 'array') {
    const detail = 'must be array if x-kubernetes-list-type is specified';
    out.push(type === '' ? field.required(child(path, 'type'), detail) : field.invalid(child(path, 'type'), type, detail));
  } else if (listType === 'set' && items) {
    // Set elements are compared whole, so they must not be merged granularly.
    const detail = 'must be atomic as item of a list with x-kubernetes-list-type=set';
    const itemListType = items['x-kubernetes-list-type'];
    if (items.type === 'array' && itemListType !== undefined && itemListType !== 'atomic') {
      out.push(field.invalid(child(child(path, 'items'), 'x-kubernetes-list-type'), itemListType, detail));
    } else if (items.type === 'object' && items['x-kubernetes-map-type'] !== 'atomic') {
      // Upstream reports the items' list type here (usually unset, hence "null").
      out.push(invalidRendered(child(child(path, 'items'), 'x-kubernetes-map-type'), itemListType === undefined ? '"null"' : JSON.stringify(itemListType), detail));
    }
  }
  if (listType !== undefined && listType !== 'atomic' && listType !== 'set' && listType !== 'map') {
    out.push(field.notSupported(child(path, 'x-kubernetes-list-type'), listType, ['atomic', 'set', 'map']));
  }
  if (keys.length > 0) {
    const detail = 'must be map if x-kubernetes-list-map-keys is non-empty';
    if (listType === undefined) out.push(field.required(child(path, 'x-kubernetes-list-type'), detail));
    else if (listType !== 'map') out.push(field.invalid(child(path, 'x-kubernetes-list-type'), listType, detail));
  }
  if (listType !== 'map') return;
  if (keys.length === 0) out.push(field.required(child(path, 'x-kubernetes-list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'));
  if (s.items === undefined) out.push(field.required(child(path, 'items'), 'must have a schema if x-kubernetes-list-type is map'));
  if (Array.isArray(s.items)) out.push(invalidRendered(child(path, 'items'), '&apiextensions.JSONSchemaPropsOrArray{...}', 'must only have a single schema if x-kubernetes-list-type is map'));
  if (!items) return;
  if (items.type !== 'object') {
    out.push(field.invalid(child(child(path, 'items'), 'type'), items.type ?? '', "must be object if parent array's x-kubernetes-list-type is map"));
    return;
  }
  const seen = new Set<string>();
  for (const k of keys) {
    const p = propertyOf(items, k);
    if (p) {
      if (p.type === 'array' || p.type === 'object') {
        // Upstream puts the items' type ("object") in this message, not the key's.
        out.push(field.invalid(child(key(child(child(path, 'items'), 'properties'), k), 'type'), items.type, "must be a scalar type if parent array's x-kubernetes-list-type is map"));
      }
    } else {
      out.push(invalidRendered(child(path, 'x-kubernetes-list-map-keys'), goStrings(keys), 'entries must all be names of item properties'));
    }
    if (seen.has(k)) out.push(invalidRendered(child(path, 'x-kubernetes-list-map-keys'), goStrings(keys), 'must not contain duplicate entries'));
    seen.add(k);
  }
}

// Map keys identify list entries, so each entry must have them: set explicitly or by a default.
function listKeysRequiredOrDefaulted(s: JSONSchemaProps, path: string, out: StatusCause[]): void {
  const items = itemsSchema(s);
  const listType = s['x-kubernetes-list-type'];
  if (!items || (listType !== 'set' && listType !== 'map')) return;
  if (items.nullable === true) out.push(field.forbidden(child(child(path, 'items'), 'nullable'), `cannot be nullable when x-kubernetes-list-type is ${listType}`));
  if (listType !== 'map') return;
  const required = new Set(Array.isArray(items.required) ? items.required : []);
  for (const k of Array.isArray(s['x-kubernetes-list-map-keys']) ? s['x-kubernetes-list-map-keys'] : []) {
    const p = propertyOf(items, k);
    if (!p) continue;
    const at = key(child(child(path, 'items'), 'properties'), k);
    if (!required.has(k) && !hasDefault(p)) {
      out.push(field.required(child(at, 'default'), 'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property'));
    }
    if (p.nullable === true) out.push(field.forbidden(child(at, 'nullable'), 'this property is in x-kubernetes-list-map-keys, so it cannot be nullable'));
  }
}

const NEWLINES = /[\n\r]+/;

function celRuleShapes(s: JSONSchemaProps, path: string, out: StatusCause[]): void {
  const rules = Array.isArray(s['x-kubernetes-validations']) ? s['x-kubernetes-validations'] : [];
  rules.forEach((r, i) => {
    const at = index(child(path, 'x-kubernetes-validations'), i);
    const rule = typeof r?.rule === 'string' ? r.rule.trim() : '';
    const message = typeof r?.message === 'string' ? r.message : '';
    const trimmedMessage = message.trim();
    if (rule === '') out.push(field.required(child(at, 'rule'), 'rule is not specified'));
    else if (message !== '' && trimmedMessage === '') out.push(field.invalid(child(at, 'message'), message, 'message must be non-empty if specified'));
    else if (NEWLINES.test(trimmedMessage)) out.push(field.invalid(child(at, 'message'), message, 'message must not contain line breaks'));
    else if (NEWLINES.test(rule) && trimmedMessage === '') out.push(field.required(child(at, 'message'), 'message must be specified if rule contains line breaks'));
    if (typeof r?.messageExpression === 'string' && r.messageExpression !== '' && r.messageExpression.trim() === '') {
      out.push(field.required(child(at, 'messageExpression'), 'messageExpression must be non-empty if specified'));
    }
    if (r?.reason !== undefined && !VALIDATION_REASONS.includes(r.reason)) out.push(field.notSupported(child(at, 'reason'), r.reason, VALIDATION_REASONS));
    const fieldPath = typeof r?.fieldPath === 'string' ? r.fieldPath : '';
    if (fieldPath !== '' && fieldPath.trim() === '') out.push(field.invalid(child(at, 'fieldPath'), fieldPath, 'fieldPath must be non-empty if specified'));
    if (NEWLINES.test(fieldPath)) out.push(field.invalid(child(at, 'fieldPath'), fieldPath, 'fieldPath must not contain line breaks'));
  });
}
