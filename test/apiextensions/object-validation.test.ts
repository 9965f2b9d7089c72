import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StatusCause } from '../../src/api/types.js';
import type { JSONSchemaProps } from '../../src/apiextensions/json-schema.js';
import { validateAgainstSchema } from '../../src/apiextensions/object-validation.js';

function lines(causes: StatusCause[]): string[] {
  return causes.map((c) => `${c.field}: ${c.message}`);
}

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['image'],
      properties: {
        image: { type: 'string', minLength: 1, maxLength: 10, pattern: '^[a-z]+$' },
        replicas: { type: 'integer', format: 'int32', minimum: 1, maximum: 5 },
        ratio: { type: 'number', multipleOf: 0.5, exclusiveMaximum: true, maximum: 10 },
        mode: { type: 'string', enum: ['fast', 'safe'] },
        port: { 'x-kubernetes-int-or-string': true },
        labels: { type: 'object', maxProperties: 2, additionalProperties: { type: 'string' } },
        tags: { type: 'array', maxItems: 3, minItems: 1, items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        note: { type: 'string', nullable: true },
        when: { type: 'string', format: 'date-time' },
        id: { type: 'string', format: 'uuid' },
        anything: { type: 'string', format: 'not-a-known-format' },
        size: { type: 'integer', format: 'int32' },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } },
        },
      },
    },
  },
};

test('a valid object has no causes', () => {
  const obj = {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w', anything: 'is left to ObjectMeta validation' },
    spec: {
      image: 'nginx',
      replicas: 3,
      ratio: 2.5,
      mode: 'fast',
      port: 'http',
      labels: { a: 'b' },
      tags: ['x', 'y'],
      note: null,
      when: '2024-02-29T10:00:00Z',
      id: '3F2504E0-4F89-11D3-9A0C-0305E82C3301',
      anything: 'whatever',
      size: 2 ** 40,
      ports: [{ name: 'http', port: 80 }, { name: 'https', port: 443 }],
    },
  };
  assert.deepEqual(lines(validateAgainstSchema(obj, schema, '')), []);
});

test('type errors read as upstream', () => {
  assert.deepEqual(lines(validateAgainstSchema({ spec: { image: 'a', replicas: 'three', port: true, note: 5 } }, schema, '')), [
    'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
    'spec.note: Invalid value: "integer": spec.note in body must be of type string: "integer"',
  ]);
  const [cause] = validateAgainstSchema({ spec: { image: 'a', replicas: 'x' } }, schema, '');
  assert.deepEqual(cause, { reason: 'FieldValueTypeInvalid', field: 'spec.replicas', message: 'Invalid value: "string": spec.replicas in body must be of type integer: "string"' });
  // null is only fine where nullable
  assert.deepEqual(lines(validateAgainstSchema({ spec: { image: null } }, schema, '')), ['spec.image: Invalid value: "null": spec.image in body must be of type string: "null"']);
  // a float where an integer is due is both the wrong type and out of int64's range check
  assert.deepEqual(lines(validateAgainstSchema({ spec: { image: 'a', replicas: 1.5 } }, schema, '')), [
    'spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number"',
    '<nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.replicas',
  ]);
});

test('required, enum, string and number bounds', () => {
  assert.deepEqual(lines(validateAgainstSchema({ spec: { mode: 'slow', replicas: 9, ratio: 0.7 } }, schema, '')), [
    'spec.replicas: Invalid value: 9: spec.replicas in body should be less than or equal to 5',
    'spec.ratio: Invalid value: 0.7: spec.ratio in body should be a multiple of 0.5',
    'spec.mode: Unsupported value: "slow": supported values: "fast", "safe"',
    'spec.image: Required value',
  ]);
  assert.deepEqual(lines(validateAgainstSchema({ spec: { image: '', replicas: 0, ratio: 10.5 } }, schema, '')), [
    'spec.image: Invalid value: "": spec.image in body should be at least 1 chars long',
    'spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1',
    'spec.ratio: Invalid value: 10.5: spec.ratio in body should be less than 10',
  ]);
  // upstream quirk: an integral value is checked against the factor truncated to an integer
  assert.deepEqual(lines(validateAgainstSchema({ spec: { image: 'a', ratio: 2 } }, schema, '')), [
    'spec.ratio: Invalid value: 0: factor MultipleOf declared for spec.ratio must be positive: 0',
  ]);
  // only the first failing string check is reported
  assert.deepEqual(lines(validateAgainstSchema({ spec: { image: 'ABCDEFGHIJKL' } }, schema, '')), ['spec.image: Too long: may not be more than 10 bytes']);
  assert.deepEqual(lines(validateAgainstSchema({ spec: { image: 'Abc' } }, schema, '')), ["spec.image: Invalid value: \"Abc\": spec.image in body should match '^[a-z]+$'"]);
  assert.deepEqual(lines(validateAgainstSchema({ a: 1 }, { type: 'object', required: ['spec', 'a'] }, '')), ['spec: Required value']);
});

test('formats: known ones are checked, unknown and numeric ones ignored', () => {
  assert.deepEqual(lines(validateAgainstSchema({ spec: { image: 'a', when: 'yesterday', id: 'nope', anything: '???', size: 2 ** 40 } }, schema, '')), [
    'spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"',
    'spec.id: Invalid value: "nope": spec.id in body must be of type uuid: "nope"',
  ]);
});

test('arrays, maps and list types', () => {
  assert.deepEqual(
    lines(
      validateAgainstSchema(
        { spec: { image: 'a', tags: ['a', 'b', 'a', 'a'], labels: { a: 'x', b: 1, c: 'z' }, ports: [{ name: 'http', port: 80 }, { name: 'http', port: 8080 }, { port: 1 }] } },
        schema,
        '',
      ),
    ),
    [
      'spec.labels: Too many: 3: must have at most 2 items',
      'spec.labels.b: Invalid value: "integer": spec.labels.b in body must be of type string: "integer"',
      'spec.tags: Too many: 4: must have at most 3 items',
      'spec.tags[2]: Duplicate value: "a"',
      'spec.ports[1]: Duplicate value: map[string]interface {}{"name":"http"}',
    ],
  );
  assert.deepEqual(lines(validateAgainstSchema({ spec: { image: 'a', tags: [], ports: [{ name: 'x', port: 'a' }] } }, schema, '')), [
    'spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items',
    'spec.ports[0].port: Invalid value: "string": spec.ports[0].port in body must be of type integer: "string"',
  ]);
});

test('additionalProperties false, allOf/anyOf/oneOf/not', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: {
      closed: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
      either: { type: 'string', anyOf: [{ pattern: '^a' }, { pattern: '^b' }] },
      one: { type: 'integer', oneOf: [{ minimum: 0 }, { maximum: 10 }] },
      all: { type: 'integer', allOf: [{ minimum: 0 }, { maximum: 10 }] },
      never: { type: 'string', not: { enum: ['x'] } },
    },
  };
  assert.deepEqual(lines(validateAgainstSchema({ closed: { a: 'x', b: 'y' }, either: 'c', one: 5, all: 11, never: 'x' }, s, '')), [
    'closed: Invalid value: "b": closed.b in body is a forbidden property',
    '<nil>: Invalid value: "": "either" must validate at least one schema (anyOf)',
    "either: Invalid value: \"c\": either in body should match '^a'",
    '<nil>: Invalid value: "": "one" must validate one and only one schema (oneOf). Found 2 valid alternatives',
    'all: Invalid value: 11: all in body should be less than or equal to 10',
    '<nil>: Invalid value: "": "all" must validate all the schemas (allOf)',
    '<nil>: Invalid value: "": "never" must not validate the schema (not)',
  ]);
});

test('embedded resources need apiVersion and kind and valid metadata', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
          objects: { type: 'array', items: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } },
        },
      },
    },
  };
  assert.deepEqual(lines(validateAgainstSchema({ spec: { template: { metadata: { name: 'a/b', labels: { 'bad key': 'v' } } } } }, s, '')), [
    'spec.template.apiVersion: Required value',
    'spec.template.kind: Required value',
    "spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/'",
    "spec.template.metadata.labels: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
  ]);
  assert.deepEqual(lines(validateAgainstSchema({ spec: { objects: [{ apiVersion: 'a/b/c', kind: 'Bad_Kind' }, { apiVersion: 'v1', kind: 'Pod' }] } }, s, '')), [
    'spec.objects[0].apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
    "spec.objects[0].kind: Invalid value: \"Bad_Kind\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
  ]);
});

test('metadata at the root is only checked as far as the schema says', () => {
  const s: JSONSchemaProps = { type: 'object', properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 5 } } } } };
  assert.deepEqual(lines(validateAgainstSchema({ metadata: { name: 'short', labels: { 'bad key': 'x' } } }, s, '')), []);
  assert.deepEqual(lines(validateAgainstSchema({ metadata: { name: 'too-long' } }, s, '')), ['metadata.name: Too long: may not be more than 5 bytes']);
});

test('a path prefix places causes under it', () => {
  assert.deepEqual(lines(validateAgainstSchema('x', { type: 'integer' }, 'spec.default')), [
    'spec.default: Invalid value: "string":  in body must be of type integer: "string"',
  ]);
});
