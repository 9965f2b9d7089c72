import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JSONSchemaProps } from '../../src/apiextensions/json-schema.js';
import { prune } from '../../src/apiextensions/pruning.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        image: { type: 'string' },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        containers: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
        config: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'object', properties: { a: { type: 'string' } } } } },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', properties: { x: { type: 'string' } } } } },
        raw: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        port: { 'x-kubernetes-int-or-string': true },
      },
    },
  },
};

test('unknown fields are removed and reported, known ones kept', () => {
  const obj = {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w', unknownMeta: 'left for the API server' },
    spec: {
      image: 'nginx',
      foo: 1,
      labels: { anything: 'goes', nested: { dropped: true } },
      containers: [{ name: 'a', extra: 'x' }, { name: 'b' }],
      port: 8080,
    },
    status: { ready: true },
  };
  const removed = prune(obj, schema, true);
  assert.deepEqual(removed, ['spec.foo', 'spec.labels.nested.dropped', 'spec.containers[0].extra', 'status']);
  assert.deepEqual(obj, {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w', unknownMeta: 'left for the API server' },
    spec: { image: 'nginx', labels: { anything: 'goes', nested: {} }, containers: [{ name: 'a' }, { name: 'b' }], port: 8080 },
  });
});

test('preserve-unknown-fields keeps unknown keys but still prunes specified subtrees', () => {
  const obj = { spec: { config: { free: { form: 1 }, known: { a: 'x', b: 'y' } } } };
  assert.deepEqual(prune(obj, schema, true), ['spec.config.known.b']);
  assert.deepEqual(obj, { spec: { config: { free: { form: 1 }, known: { a: 'x' } } } });
});

test('embedded resources keep type meta and ObjectMeta fields only', () => {
  const obj = {
    spec: {
      template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { a: 'b' }, bogus: 1, creationTimestamp: null }, spec: { x: 'y', z: 1 }, other: 1 },
      raw: { apiVersion: 'v1', kind: 'ConfigMap', data: { k: 'v' }, metadata: { weird: true } },
    },
  };
  assert.deepEqual(prune(obj, schema, true), ['spec.template.spec.z', 'spec.template.other', 'spec.template.metadata.bogus', 'spec.raw.metadata.weird']);
  assert.deepEqual(obj.spec.template, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { a: 'b' } }, spec: { x: 'y' } });
  assert.deepEqual(obj.spec.raw, { apiVersion: 'v1', kind: 'ConfigMap', data: { k: 'v' }, metadata: {} });
});

test('without isResourceRoot, root type meta is pruned silently', () => {
  const obj = { apiVersion: 'v1', kind: 'X', spec: { image: 'a' }, extra: 1 };
  assert.deepEqual(prune(obj, schema, false), ['extra']);
  assert.deepEqual(obj, { spec: { image: 'a' } });
});

test('scalars and type mismatches are left alone', () => {
  const obj = { spec: 'not an object' };
  assert.deepEqual(prune(obj, schema, true), []);
  assert.deepEqual(obj, { spec: 'not an object' });
});
