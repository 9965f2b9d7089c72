// The apiextensions.k8s.io/v1 JSONSchemaProps shape, as a CRD's spec.versions[*].schema.openAPIV3Schema
// arrives in JSON. Fields v1 refuses ($ref, definitions, ...) are kept representable so that
// validation can name them in its errors instead of silently dropping them.

export interface ExternalDocumentation {
  description?: string;
  url?: string;
}

export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

export interface JSONSchemaProps {
  id?: string;
  $schema?: string;
  $ref?: string;
  description?: string;
  type?: string;
  format?: string;
  title?: string;
  default?: unknown;
  maximum?: number;
  exclusiveMaximum?: boolean;
  minimum?: number;
  exclusiveMinimum?: boolean;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  multipleOf?: number;
  enum?: unknown[];
  maxProperties?: number;
  minProperties?: number;
  required?: string[];
  /** A schema; an array of schemas is representable only so that it can be refused. */
  items?: JSONSchemaProps | JSONSchemaProps[];
  allOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: boolean | JSONSchemaProps;
  patternProperties?: Record<string, JSONSchemaProps>;
  dependencies?: Record<string, JSONSchemaProps | string[]>;
  additionalItems?: boolean | JSONSchemaProps;
  definitions?: Record<string, JSONSchemaProps>;
  externalDocs?: ExternalDocumentation;
  example?: unknown;
  nullable?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-validations'?: ValidationRule[];
}

export function isSchemaObject(v: unknown): v is JSONSchemaProps {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The single items schema, or undefined when absent or given as a (forbidden) array. */
export function itemsSchema(s: JSONSchemaProps): JSONSchemaProps | undefined {
  return isSchemaObject(s.items) ? s.items : undefined;
}

/** The additionalProperties schema, or undefined for `true`, `false` or absent. */
export function additionalPropertiesSchema(s: JSONSchemaProps): JSONSchemaProps | undefined {
  return isSchemaObject(s.additionalProperties) ? s.additionalProperties : undefined;
}

/** Properties in declaration order; JSON objects keep insertion order, which keeps errors stable. */
export function propertyEntries(s: JSONSchemaProps): [string, JSONSchemaProps][] {
  return isSchemaObject(s.properties) ? Object.entries(s.properties).filter((e): e is [string, JSONSchemaProps] => isSchemaObject(e[1])) : [];
}

export function propertyOf(s: JSONSchemaProps | undefined, name: string): JSONSchemaProps | undefined {
  if (!s || !isSchemaObject(s.properties) || !Object.prototype.hasOwnProperty.call(s.properties, name)) return undefined;
  const p = s.properties[name];
  return isSchemaObject(p) ? p : undefined;
}

/** Upstream reads a `default: null` as no default at all (the JSON wrapper holds a nil object). */
export function hasDefault(s: JSONSchemaProps | undefined): boolean {
  return s !== undefined && s.default !== undefined && s.default !== null;
}

export { deepClone as deepCopyJSON } from '../api/kinds/json.js';
