import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyDefaults } from '../../src/apiextensions/defaulting.js';
import type { JSONSchemaProps } from '../../src/apiextensions/json-schema.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      default: {},
      properties: {
        replicas: { type: 'integer', default: 1 },
        mode: { type: 'string', default: 'safe' },
        strategy: { type: 'object', default: { type: 'Rolling' }, properties: { type: { type: 'string' }, maxSurge: { type: 'integer', default: 25 } } },
        ports: { type: 'array', items: { type: 'object', properties: { protocol: { type: 'string', default: 'TCP' }, port: { type: 'integer' } } } },
        limits: { type: 'object', additionalProperties: { type: 'object', properties: { max: { type: 'integer', default: 10 } } } },
        note: { type: 'string', nullable: true, default: 'n' },
        plain: { type: 'string' },
        tags: { type: 'array', items: { type: 'string', default: 'x' } },
      },
    },
  },
};

test('missing properties get defaults, recursively and inside defaults', () => {
  const obj: Record<string, unknown> = { apiVersion: 'v1', kind: 'X' };
  applyDefaults(obj, schema);
  assert.deepEqual(obj, {
    apiVersion: 'v1',
    kind: 'X',
    spec: { replicas: 1, mode: 'safe', strategy: { type: 'Rolling', maxSurge: 25 }, note: 'n' },
  });
});

test('set values win, and defaults go into items and additionalProperties', () => {
  const obj = { spec: { replicas: 3, ports: [{ port: 80 }, { port: 53, protocol: 'UDP' }], limits: { cpu: {}, mem: { max: 2 } } } };
  applyDefaults(obj, schema);
  assert.deepEqual(obj.spec, {
    replicas: 3,
    mode: 'safe',
    strategy: { type: 'Rolling', maxSurge: 25 },
    ports: [{ port: 80, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }],
    limits: { cpu: { max: 10 }, mem: { max: 2 } },
    note: 'n',
  });
});

test('nulls: replaced by the default when not nullable, dropped when there is none, kept when nullable', () => {
  const obj = { spec: { replicas: null, plain: null, note: null, tags: [null, 'a'] } };
  applyDefaults(obj, schema);
  assert.deepEqual(obj.spec, { replicas: 1, note: null, tags: ['x', 'a'], mode: 'safe', strategy: { type: 'Rolling', maxSurge: 25 } });
});

test('defaults are deep copies', () => {
  const a: Record<string, unknown> = {};
  const b: Record<string, unknown> = {};
  applyDefaults(a, schema);
  applyDefaults(b, schema);
  ((a.spec as Record<string, unknown>).strategy as Record<string, unknown>).type = 'changed';
  assert.equal(((b.spec as Record<string, unknown>).strategy as Record<string, unknown>).type, 'Rolling');
  assert.deepEqual((schema.properties!.spec!.properties!.strategy!.default as Record<string, unknown>), { type: 'Rolling' });
});

test('type mismatches are left alone', () => {
  const obj = { spec: 'oops' };
  applyDefaults(obj, schema);
  assert.deepEqual(obj, { spec: 'oops' });
});
