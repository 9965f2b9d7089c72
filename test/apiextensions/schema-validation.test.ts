import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StatusCause } from '../../src/api/types.js';
import type { JSONSchemaProps } from '../../src/apiextensions/json-schema.js';
import { validateCRDSchema } from '../../src/apiextensions/schema-validation.js';

const P = 'spec.versions[0].schema.openAPIV3Schema';

function lines(causes: StatusCause[]): string[] {
  return causes.map((c) => `${c.field}: ${c.message}`);
}

function check(schema: unknown, opts = {}): string[] {
  return lines(validateCRDSchema(schema, P, opts));
}

const widget: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['image'],
      properties: {
        image: { type: 'string', minLength: 1 },
        replicas: { type: 'integer', format: 'int32', minimum: 0, default: 1 },
        mode: { type: 'string', enum: ['fast', 'safe'], default: 'safe' },
        port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
        },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        config: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
    status: { type: 'object', properties: { ready: { type: 'boolean' } } },
  },
};

test('a typical structural schema is valid', () => {
  assert.deepEqual(check(widget), []);
  assert.deepEqual(check(widget, { statusSubresource: true }), []);
  // metadata may narrow name and generateName
  assert.deepEqual(check({ type: 'object', properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 20 } } } } }), []);
});

test('a missing schema is required', () => {
  assert.deepEqual(check(undefined), [`${P}: Required value: schemas are required`]);
});

test('types are required at every level', () => {
  assert.deepEqual(check({ properties: { spec: { properties: { a: {}, list: { type: 'array', items: {} } } } } }), [
    `${P}.properties[spec].properties[a].type: Required value: must not be empty for specified object fields`,
    `${P}.properties[spec].properties[list].items.type: Required value: must not be empty for specified array items`,
    `${P}.properties[spec].type: Required value: must not be empty for specified object fields`,
    `${P}.type: Required value: must not be empty at the root`,
  ]);
  assert.deepEqual(check({ type: 'string' }), [`${P}.type: Invalid value: "string": must be object at the root`]);
  assert.deepEqual(check({ type: 'object', properties: { list: { type: 'array' } } }), [`${P}.properties[list].items: Required value: must be specified`]);
  // int-or-string and preserve-unknown-fields stand in for a type
  assert.deepEqual(check({ type: 'object', properties: { a: { 'x-kubernetes-int-or-string': true }, b: { 'x-kubernetes-preserve-unknown-fields': true } } }), []);
});

test('unknown and null types are refused', () => {
  assert.deepEqual(check({ type: 'object', properties: { a: { type: 'float' }, b: { type: 'null' } } }), [
    `${P}.properties[a].type: Unsupported value: "float": supported values: "array", "boolean", "integer", "number", "object", "string"`,
    `${P}.properties[b].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string"`,
    `${P}.properties[b].type: Forbidden: type cannot be set to null, use nullable as an alternative`,
  ]);
});

test('fields v1 does not support are forbidden', () => {
  const schema = {
    type: 'object',
    properties: {
      a: { type: 'string', $ref: '#/definitions/x' },
      b: { type: 'array', items: { type: 'string' }, uniqueItems: true },
      c: { type: 'object', patternProperties: { '^x': { type: 'string' } } },
      d: { type: 'array', items: [{ type: 'string' }] },
      e: { type: 'string', id: 'e' },
    },
    definitions: { x: { type: 'string' } },
  };
  assert.deepEqual(check(schema), [
    `${P}.definitions: Forbidden: definitions is not supported`,
    `${P}.properties[a].$ref: Forbidden: $ref is not supported`,
    `${P}.properties[b].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
    `${P}.properties[c].patternProperties: Forbidden: patternProperties is not supported`,
    `${P}.properties[d].items: Forbidden: items must be a schema object and not an array`,
    `${P}.properties[e].id: Forbidden: id is not supported`,
  ]);
  // $schema only fails the structural conversion, whose message shows when nothing else does
  assert.deepEqual(check({ type: 'object', $schema: 'http://json-schema.org/draft-04/schema#' }), [
    `${P}: Invalid value: "": OpenAPIV3Schema 'schema' is not supported`,
  ]);
});

test('additionalProperties and properties are mutually exclusive', () => {
  assert.deepEqual(check({ type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } } } }), [
    `${P}.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
  ]);
  // additionalProperties: true alongside properties is tolerated
  assert.deepEqual(check({ type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: true } } }), []);
  assert.deepEqual(check({ type: 'object', additionalProperties: { type: 'string' } }), [`${P}.additionalProperties: Forbidden: must not be used at the root`]);
});

test('value validations must not carry structure', () => {
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: { a: { type: 'string' } },
        anyOf: [{ type: 'object', description: 'x', properties: { a: { default: 'x', nullable: true } } }, { required: ['a'] }],
      },
    },
    // upstream checks completeness from the root's value validations down
    not: { properties: { spec: { properties: { b: { minLength: 1 } } } } },
  };
  assert.deepEqual(check(schema), [
    `${P}.properties[spec].anyOf[0].description: Forbidden: must be empty to be structural`,
    `${P}.properties[spec].anyOf[0].properties[a].default: Forbidden: must be undefined to be structural`,
    `${P}.properties[spec].anyOf[0].properties[a].nullable: Forbidden: must be false to be structural`,
    `${P}.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural`,
    `${P}.properties[spec].properties[b]: Required value: because it is defined in ${P}.not.properties[spec].properties[b]`,
  ]);
  // the int-or-string anyOf is the one place a type may repeat
  assert.deepEqual(check({ type: 'object', properties: { p: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string', pattern: '^[0-9]+%$' }] } } }), [
    `${P}.properties[p].anyOf[0].type: Forbidden: must be empty to be structural`,
    `${P}.properties[p].anyOf[1].type: Forbidden: must be empty to be structural`,
  ]);
});

test('metadata at the root may only restrict name and generateName', () => {
  assert.deepEqual(check({ type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } }), [
    `${P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
  ]);
  assert.deepEqual(check({ type: 'object', properties: { metadata: { type: 'string' }, kind: { type: 'integer' } } }), [
    `${P}.properties[kind].type: Invalid value: "integer": must be string`,
    `${P}.properties[metadata].type: Invalid value: "string": must be object`,
  ]);
  assert.deepEqual(check({ type: 'object', properties: { metadata: { type: 'object', default: { name: 'x' } } } }), [
    `${P}.properties[metadata].default: Forbidden: must not be set in top-level metadata`,
  ]);
  assert.deepEqual(check({ type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } }, allOf: [{ properties: { spec: { properties: { metadata: {} } } } }] }), [
    `${P}.allOf[0].properties[spec].properties[metadata]: Forbidden: must not be specified in a nested context`,
    `${P}.properties[spec].properties[metadata]: Required value: because it is defined in ${P}.allOf[0].properties[spec].properties[metadata]`,
  ]);
});

test('extension rules', () => {
  assert.deepEqual(check({ type: 'object', properties: { a: { type: 'string', 'x-kubernetes-int-or-string': true, 'x-kubernetes-preserve-unknown-fields': true } } }), [
    `${P}.properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true`,
  ]);
  assert.deepEqual(check({ type: 'object', properties: { a: { type: 'object', 'x-kubernetes-preserve-unknown-fields': false } } }), [
    `${P}.properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`,
  ]);
  assert.deepEqual(check({ type: 'object', properties: { t: { type: 'string', 'x-kubernetes-embedded-resource': true } } }), [
    `${P}.properties[t].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`,
    `${P}.properties[t].type: Invalid value: "string": must be object if x-kubernetes-embedded-resource is true`,
  ]);
  assert.deepEqual(check({ type: 'object', properties: { m: { type: 'string', 'x-kubernetes-map-type': 'merge' } } }), [
    `${P}.properties[m].type: Invalid value: "string": must be object if x-kubernetes-map-type is specified`,
    `${P}.properties[m].x-kubernetes-map-type: Unsupported value: "merge": supported values: "atomic", "granular"`,
  ]);
});

test('list types', () => {
  const list = (over: JSONSchemaProps) => ({ type: 'object', properties: { l: { type: 'array', ...over } } });
  assert.deepEqual(check(list({ 'x-kubernetes-list-type': 'bag', items: { type: 'string' } })), [
    `${P}.properties[l].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"`,
  ]);
  assert.deepEqual(check(list({ 'x-kubernetes-list-map-keys': ['name'], items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } })), [
    `${P}.properties[l].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty`,
  ]);
  assert.deepEqual(check(list({ 'x-kubernetes-list-type': 'map', items: { type: 'string' } })), [
    `${P}.properties[l].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`,
    `${P}.properties[l].items.type: Invalid value: "string": must be object if parent array's x-kubernetes-list-type is map`,
  ]);
  assert.deepEqual(
    check(
      list({
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name', 'proto', 'nope'],
        items: { type: 'object', properties: { name: { type: 'string' }, proto: { type: 'object', nullable: true } } },
      }),
    ),
    [
      `${P}.properties[l].items.properties[proto].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map`,
      `${P}.properties[l].x-kubernetes-list-map-keys: Invalid value: []string{"name", "proto", "nope"}: entries must all be names of item properties`,
      `${P}.properties[l].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
      `${P}.properties[l].items.properties[proto].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
      `${P}.properties[l].items.properties[proto].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable`,
    ],
  );
  assert.deepEqual(check(list({ 'x-kubernetes-list-type': 'set', items: { type: 'object', properties: { a: { type: 'string' } } } })), [
    `${P}.properties[l].items.x-kubernetes-map-type: Invalid value: "null": must be atomic as item of a list with x-kubernetes-list-type=set`,
  ]);
  assert.deepEqual(check({ type: 'object', properties: { s: { type: 'string', 'x-kubernetes-list-type': 'set' } } }), [
    `${P}.properties[s].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified`,
  ]);
});

test('defaults must validate and be pruned', () => {
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          replicas: { type: 'integer', default: 'three' },
          mode: { type: 'string', enum: ['a', 'b'], default: 'c' },
          opts: { type: 'object', properties: { a: { type: 'string' } }, default: { a: 'x', b: 'y' } },
          when: { type: 'string', format: 'date-time', default: 'yesterday' },
        },
      },
    },
  };
  assert.deepEqual(check(schema), [
    `${P}.properties[spec].properties[replicas].default: Invalid value: "string":  in body must be of type integer: "string"`,
    `${P}.properties[spec].properties[mode].default: Unsupported value: "c": supported values: "a", "b"`,
    `${P}.properties[spec].properties[opts].default: Invalid value: map[string]interface {}{"a":"x", "b":"y"}: must not have unknown fields`,
    `${P}.properties[spec].properties[when].default: Invalid value: "yesterday":  in body must be of type date-time: "yesterday"`,
  ]);
  // a valid nested default inside an object default is fine
  assert.deepEqual(check({ type: 'object', properties: { spec: { type: 'object', default: { a: 'x' }, properties: { a: { type: 'string', default: 'y' } } } } }), []);
});

test('nullable root and status subresource root restrictions', () => {
  assert.deepEqual(check({ type: 'object', nullable: true }), [`${P}.nullable: Forbidden: nullable cannot be true at the root`]);
  const causes = check({ type: 'object', anyOf: [{ required: ['spec'] }], properties: { spec: { type: 'object' } } }, { statusSubresource: true });
  assert.equal(causes.length, 1);
  assert.match(causes[0]!, /^spec\.versions\[0\]\.schema\.openAPIV3Schema: Invalid value: .*: only \[Description Type Format .*\] fields are allowed at the root of the schema if the status subresource is enabled$/);
});

test('x-kubernetes-validations rule shapes', () => {
  assert.deepEqual(
    check({
      type: 'object',
      'x-kubernetes-validations': [{ rule: ' ' }, { rule: 'self.a\n== 1' }, { rule: 'true', message: 'a\nb' }, { rule: 'true', reason: 'Nope' }],
      properties: { a: { type: 'integer' } },
    }),
    [
      `${P}.x-kubernetes-validations[0].rule: Required value: rule is not specified`,
      `${P}.x-kubernetes-validations[1].message: Required value: message must be specified if rule contains line breaks`,
      `${P}.x-kubernetes-validations[2].message: Invalid value: "a\\nb": message must not contain line breaks`,
      `${P}.x-kubernetes-validations[3].reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
    ],
  );
});

test('patterns must compile; Go syntax that JavaScript lacks is bridged', () => {
  assert.deepEqual(check({ type: 'object', properties: { a: { type: 'string', pattern: '(?i)^[[:alpha:]]+\\-x$' } } }), []);
  const causes = check({ type: 'object', properties: { a: { type: 'string', pattern: '(abc' } } });
  assert.equal(causes.length, 1);
  assert.match(causes[0]!, /^spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[a\]\.pattern: Invalid value: "\(abc": must be a valid regular expression, but isn't: /);
});
