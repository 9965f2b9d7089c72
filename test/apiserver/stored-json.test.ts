import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/api/types.js';
import { encodeStored, objectJson } from '../../src/apiserver/stored-json.js';

const cm = (): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'a', namespace: 'default', resourceVersion: '7', labels: { app: 'x' } },
  data: { k: 'v "quoted" \u2028' },
});

describe('stored JSON', () => {
  it('stores metadata first and without resourceVersion', () => {
    const text = encodeStored(cm());
    assert.ok(text.startsWith('{"metadata":{"name":"a"'), text);
    const back = JSON.parse(text) as KubeObject;
    assert.equal(back.metadata.resourceVersion, undefined);
    const { resourceVersion: _rv, ...meta } = cm().metadata;
    assert.deepEqual(back, { ...cm(), metadata: meta });
  });

  it('answers a written object with its stored text and its new resourceVersion', () => {
    const obj = cm();
    encodeStored(obj);
    obj.metadata.resourceVersion = '42';
    const json = objectJson(obj);
    assert.ok(json.startsWith('{"metadata":{"resourceVersion":"42",'), json);
    assert.deepEqual(JSON.parse(json), obj);
  });

  it('serializes objects it did not store, and stored ones without metadata fields, as JSON.stringify does', () => {
    const plain = cm();
    assert.equal(objectJson(plain), JSON.stringify(plain));
    const bare = { apiVersion: 'v1', kind: 'Namespace', metadata: {} } as KubeObject;
    encodeStored(bare);
    bare.metadata.resourceVersion = '3';
    assert.deepEqual(JSON.parse(objectJson(bare)), bare);
    const list = { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '9' }, items: [] };
    assert.equal(objectJson(list as unknown as KubeObject), JSON.stringify(list));
  });
});
