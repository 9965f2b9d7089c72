// The kube-openapi schema validator as upstream runs it on custom resources, down to its message
// texts ("spec.replicas in body must be of type integer: \"string\""), and the conversion of its
// errors into field causes (apiextensions-apiserver pkg/apiserver/validation).
import type { StatusCause } from '../api/types.js';
import { field } from '../api/errors.js';
import { invalidRendered, notSupportedRendered } from '../api/validation.js';
import { formatValid, isSupportedFormat } from './formats.js';
import { goBadValue, goFloat, isGoInt } from './go-format.js';
import { compileGoRegExp } from './go-regexp.js';
import { additionalPropertiesSchema, isSchemaObject, itemsSchema, propertyEntries, type JSONSchemaProps } from './json-schema.js';

const IN = 'body';

/** One kube-openapi error. `name` is absent for plain errors (the composite anyOf/oneOf ones). */
export interface OpenAPIError {
  code: 'required' | 'enum' | 'tooLong' | 'maxItems' | 'maxProperties' | 'type' | 'other' | 'plain';
  message: string;
  name?: string;
  value?: unknown;
  values?: unknown[];
  max?: number;
  actual?: number;
}

interface Result {
  errors: OpenAPIError[];
  /** How much of the value was examined; anyOf/oneOf report the alternative that got furthest. */
  matchCount: number;
}

type Json = Record<string, unknown>;

function isMap(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function jsonType(v: unknown): { type: string; format: string } {
  if (typeof v === 'boolean') return { type: 'boolean', format: '' };
  if (typeof v === 'string') return { type: 'string', format: '' };
  if (typeof v === 'number') return isGoInt(v) ? { type: 'integer', format: 'int64' } : { type: 'number', format: 'float64' };
  if (Array.isArray(v)) return { type: 'array', format: '' };
  return { type: 'object', format: '' };
}

/** Schema types as the validator sees them: int-or-string becomes ["integer","string"]. */
function typesOf(s: JSONSchemaProps): string[] {
  if (s['x-kubernetes-int-or-string']) return ['integer', 'string'];
  return typeof s.type === 'string' && s.type !== '' ? [s.type] : [];
}

/** The format that survives upstream's stripping of formats it does not validate. */
function effectiveFormat(s: JSONSchemaProps): string {
  return isSupportedFormat(s.format) ? s.format : '';
}

function invalidType(name: string, typeName: string, value: unknown): OpenAPIError {
  const message = typeof value === 'string' ? `${name} in ${IN} must be of type ${typeName}: ${JSON.stringify(value)}` : `${name} in ${IN} must be of type ${typeName}`;
  return { code: 'type', name, value, message };
}

function other(name: string, value: unknown, message: string): OpenAPIError {
  return { code: 'other', name, value, message };
}

function plain(message: string): OpenAPIError {
  return { code: 'plain', message };
}

/** Validates a JSON value against a schema, the way kube-openapi's SchemaValidator does. */
export function openAPIValidate(data: unknown, s: JSONSchemaProps, name = ''): OpenAPIError[] {
  const seen = new Set<string>();
  // Upstream's results drop an error whose text was already reported.
  return run(data, s, name).errors.filter((e) => (seen.has(e.message) ? false : (seen.add(e.message), true)));
}

function run(data: unknown, s: JSONSchemaProps, name: string): Result {
  const r: Result = { errors: [], matchCount: 0 };
  const apply = (sub: Result | OpenAPIError[]) => {
    if (Array.isArray(sub)) r.errors.push(...sub);
    else {
      r.errors.push(...sub.errors);
      r.matchCount += sub.matchCount;
    }
    r.matchCount++;
  };
  if (data === null || data === undefined) {
    apply(checkType(null, s, name));
    apply(checkEnum(null, s, name));
    return r;
  }
  if (typesOf(s).length > 0 || effectiveFormat(s) !== '') apply(checkType(data, s, name));
  apply(checkJunctors(data, s, name));
  if (typeof data === 'string') {
    apply(checkString(data, s, name));
    if (isSupportedFormat(s.format)) apply(formatValid(s.format, data) ? [] : [invalidType(name, s.format, data)]);
  }
  if (typeof data === 'number') apply(checkNumber(data, s, name));
  if (Array.isArray(data)) apply(checkSlice(data, s, name));
  apply(checkEnum(data, s, name));
  if (isMap(data)) apply(checkObject(data, s, name));
  r.matchCount++;
  return r;
}

function checkType(data: unknown, s: JSONSchemaProps, name: string): OpenAPIError[] {
  const types = typesOf(s);
  if (data === null) return types.length > 0 && !types.includes('null') && s.nullable !== true ? [invalidType(name, types.join(','), 'null')] : [];
  const format = effectiveFormat(s);
  const { type, format: dataFormat } = jsonType(data);
  const isFloatInt = type === 'number' && Number.isInteger(data) && types.includes('integer');
  const isIntFloat = type === 'integer' && types.includes('number');
  const stringish = typeof data === 'string' || Array.isArray(data);
  if (!stringish && format !== '' && !(types.includes(type) || dataFormat === format || isFloatInt || isIntFloat)) return [invalidType(name, format, dataFormat)];
  if (!(types.includes('number') || types.includes('integer')) && format !== '' && stringish) return [];
  if (!(types.includes(type) || isFloatInt || isIntFloat)) return [invalidType(name, types.join(','), type)];
  return [];
}

function checkEnum(data: unknown, s: JSONSchemaProps, name: string): OpenAPIError[] {
  if (!Array.isArray(s.enum) || s.enum.length === 0) return [];
  if (data !== null && s.enum.some((e) => jsonEqual(e, data))) return [];
  const shown = s.enum.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))).join(' ');
  return [{ code: 'enum', name, value: data, values: s.enum, message: `${name} in ${IN} should be one of [${shown}]` }];
}

function checkString(data: string, s: JSONSchemaProps, name: string): OpenAPIError[] {
  // Lengths count runes, and the first failing check is the only one reported.
  const runes = [...data].length;
  if (typeof s.maxLength === 'number' && runes > s.maxLength) {
    return [{ code: 'tooLong', name, value: data, max: s.maxLength, message: `${name} in ${IN} should be at most ${s.maxLength} chars long` }];
  }
  if (typeof s.minLength === 'number' && runes < s.minLength) return [other(name, data, `${name} in ${IN} should be at least ${s.minLength} chars long`)];
  if (typeof s.pattern === 'string' && s.pattern !== '') {
    const re = compileGoRegExp(s.pattern);
    if (re instanceof Error) return [other(name, data, `${name} in ${IN} should match '${s.pattern}, but pattern is invalid: ${re.message}'`)];
    if (!re.test(data)) return [other(name, data, `${name} in ${IN} should match '${s.pattern}'`)];
  }
  return [];
}

function checkNumber(data: number, s: JSONSchemaProps, name: string): OpenAPIError[] {
  const types = typesOf(s);
  // Only a lone integer type bounds the value to int64; formats are stripped before this point.
  const intTyped = types.length === 1 && types[0] === 'integer';
  const rangeError = (v: number, prefix: string): OpenAPIError[] => (intTyped && !isGoInt(v) ? [plain(`${prefix} value must be of type integer (default format) in ${name}`)] : []);
  const out: OpenAPIError[] = [...rangeError(data, 'Checked')];
  const intData = isGoInt(data);

  if (typeof s.multipleOf === 'number') {
    const gate = rangeError(s.multipleOf, 'MultipleOf');
    out.push(...gate);
    const f = s.multipleOf;
    if (gate.length === 0 && intData) {
      const factor = Math.trunc(f);
      if (factor <= 0) out.push(other(name, factor, `factor MultipleOf declared for ${name} must be positive: ${factor}`));
      else if (data % factor !== 0) out.push(other(name, data, `${name} in ${IN} should be a multiple of ${factor}`));
    } else if (f <= 0) out.push(other(name, f, `factor MultipleOf declared for ${name} must be positive: ${goFloat(f)}`));
    else if (!isJSONInteger(f < 1 ? (1 / f) * data : data / f)) out.push(other(name, data, `${name} in ${IN} should be a multiple of ${goFloat(f)}`));
  }

  const bound = (limit: number | undefined, exclusive: boolean, isMax: boolean): OpenAPIError[] => {
    if (typeof limit !== 'number') return [];
    const gate = rangeError(limit, isMax ? 'Maximum boundary' : 'Minimum boundary');
    const asInt = gate.length === 0 && intData;
    const l = asInt ? Math.trunc(limit) : limit;
    const fails = isMax ? (exclusive ? data >= l : data > l) : exclusive ? data <= l : data < l;
    if (!fails) return gate;
    const rel = isMax ? (exclusive ? 'less than' : 'less than or equal to') : exclusive ? 'greater than' : 'greater than or equal to';
    return [...gate, other(name, data, `${name} in ${IN} should be ${rel} ${asInt ? String(l) : goFloat(l)}`)];
  };
  // Upstream merges multipleOf, then minimum, then maximum.
  out.push(...bound(s.minimum, s.exclusiveMinimum === true, false));
  out.push(...bound(s.maximum, s.exclusiveMaximum === true, true));
  return out;
}

function isJSONInteger(f: number): boolean {
  if (!Number.isFinite(f)) return false;
  if (Number.isInteger(f)) return true;
  const g = Math.trunc(f);
  const diff = Math.abs(f - g);
  if (g === 0) return false;
  return diff / Math.min(Math.abs(f) + Math.abs(g), Number.MAX_VALUE) < 1e-9;
}

function checkSlice(data: unknown[], s: JSONSchemaProps, name: string): Result {
  const r: Result = { errors: [], matchCount: 1 };
  const items = itemsSchema(s);
  if (items) {
    data.forEach((v, i) => {
      const sub = run(v, items, `${name}[${i}]`);
      r.errors.push(...sub.errors);
      r.matchCount += sub.matchCount;
    });
  }
  if (typeof s.minItems === 'number' && data.length < s.minItems) r.errors.push(other(name, data.length, `${name} in ${IN} should have at least ${s.minItems} items`));
  if (typeof s.maxItems === 'number' && data.length > s.maxItems) {
    r.errors.push({ code: 'maxItems', name, actual: data.length, max: s.maxItems, message: `${name} in ${IN} should have at most ${s.maxItems} items` });
  }
  if (s.uniqueItems === true && data.some((v, i) => data.slice(0, i).some((u) => jsonEqual(u, v)))) {
    r.errors.push(other(name, undefined, `${name} in ${IN} shouldn't contain duplicates`));
  }
  return r;
}

function checkObject(data: Json, s: JSONSchemaProps, name: string): Result {
  const r: Result = { errors: [], matchCount: 0 };
  const merge = (sub: Result) => {
    r.errors.push(...sub.errors);
    r.matchCount += sub.matchCount;
  };
  const keys = Object.keys(data);
  if (typeof s.minProperties === 'number' && keys.length < s.minProperties) r.errors.push(other(name, keys.length, `${name} in ${IN} should have at least ${s.minProperties} properties`));
  if (typeof s.maxProperties === 'number' && keys.length > s.maxProperties) {
    r.errors.push({ code: 'maxProperties', name, actual: keys.length, max: s.maxProperties, message: `${name} in ${IN} should have at most ${s.maxProperties} properties` });
  }
  const declared = new Map(propertyEntries(s));
  if (s.additionalProperties === false) {
    for (const k of keys) if (!declared.has(k)) r.errors.push(other(name, k, `${name}.${k} in ${IN} is a forbidden property`));
  } else {
    const additional = additionalPropertiesSchema(s);
    if (additional) for (const k of keys) if (!declared.has(k)) merge(run(data[k], additional, `${name}.${k}`));
  }
  for (const [k, prop] of declared) {
    if (Object.prototype.hasOwnProperty.call(data, k)) merge(run(data[k], prop, name ? `${name}.${k}` : k));
  }
  for (const k of Array.isArray(s.required) ? s.required : []) {
    if (!Object.prototype.hasOwnProperty.call(data, k)) r.errors.push({ code: 'required', name: `${name}.${k}`, message: `${name}.${k} in ${IN} is required` });
  }
  return r;
}

function checkJunctors(data: unknown, s: JSONSchemaProps, name: string): Result {
  const r: Result = { errors: [], matchCount: 0 };
  const alternatives = (list: unknown) => (Array.isArray(list) ? list.filter(isSchemaObject) : []);
  const best = (results: Result[]) => results.reduce<Result | undefined>((b, x) => (b === undefined || x.matchCount > b.matchCount ? x : b), undefined);

  const anyOf = alternatives(s.anyOf);
  if (anyOf.length > 0) {
    const results: Result[] = [];
    let ok = false;
    for (const alt of anyOf) {
      const res = run(data, alt, name);
      if (res.errors.length === 0) {
        ok = true;
        break;
      }
      results.push(res);
    }
    if (!ok) {
      r.errors.push(plain(`${JSON.stringify(name)} must validate at least one schema (anyOf)`));
      r.errors.push(...(best(results)?.errors ?? []));
    }
  }

  const oneOf = alternatives(s.oneOf);
  if (oneOf.length > 0) {
    const failures: Result[] = [];
    let valid = 0;
    for (const alt of oneOf) {
      const res = run(data, alt, name);
      if (res.errors.length === 0) valid++;
      else if (valid === 0) failures.push(res);
    }
    if (valid !== 1) {
      r.errors.push(plain(`${JSON.stringify(name)} must validate one and only one schema (oneOf). ${valid === 0 ? 'Found none valid' : `Found ${valid} valid alternatives`}`));
      if (valid === 0) r.errors.push(...(best(failures)?.errors ?? []));
    }
  }

  const allOf = alternatives(s.allOf);
  if (allOf.length > 0) {
    let valid = 0;
    for (const alt of allOf) {
      const res = run(data, alt, name);
      if (res.errors.length === 0) valid++;
      r.errors.push(...res.errors);
      r.matchCount += res.matchCount;
    }
    if (valid !== allOf.length) r.errors.push(plain(`${JSON.stringify(name)} must validate all the schemas (allOf)${valid === 0 ? '. None validated' : ''}`));
  }

  if (isSchemaObject(s.not) && run(data, s.not, name).errors.length === 0) r.errors.push(plain(`${JSON.stringify(name)} must not validate the schema (not)`));
  return r;
}

export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  }
  if (isMap(a) && isMap(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

function tooMany(path: string, actual: number, max: number): StatusCause {
  return { reason: 'FieldValueTooMany', field: path, message: `Too many: ${actual}: must have at most ${max} ${max === 1 ? 'item' : 'items'}` };
}

function tooLong(path: string, max: number): StatusCause {
  return { reason: 'FieldValueTooLong', field: path, message: `Too long: may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}` };
}

/**
 * Field causes for kube-openapi errors, below `prefix` ("" for a whole object). An error without a
 * usable name lands on the prefix itself, which upstream prints as "<nil>" when there is none.
 */
export function openAPIErrorsToCauses(prefix: string, errors: OpenAPIError[]): StatusCause[] {
  const root = prefix || '<nil>';
  return errors.map((e): StatusCause => {
    if (e.code === 'plain' || e.name === undefined) return invalidRendered(root, '""', e.message);
    const rel = e.name.startsWith('.') ? e.name.slice(1) : e.name;
    const path = e.name !== '' && e.name !== '.' ? (prefix ? `${prefix}.${rel}` : rel) : root;
    const value = e.value === undefined ? '' : e.value;
    switch (e.code) {
      case 'required':
        return field.required(path);
      case 'enum':
        return notSupportedRendered(
          path,
          goBadValue(e.value),
          (e.values ?? []).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))),
        );
      case 'tooLong':
        return tooLong(path, e.max ?? -1);
      case 'maxItems':
      case 'maxProperties':
        return tooMany(path, e.actual ?? -1, e.max ?? -1);
      case 'type':
        return { reason: 'FieldValueTypeInvalid', field: path, message: `Invalid value: ${goBadValue(value)}: ${e.message}` };
      default:
        return invalidRendered(path, goBadValue(value), e.message);
    }
  });
}
