import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/api/types.js';
import { encodeStored, listItemJson, objectJson, rememberStoredText, typedListJson } from '../../src/apiserver/stored-json.js';

const cm = (): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'a', namespace: 'default', resourceVersion: '7', labels: { app: 'x' } },
  data: { k: 'v "quoted" \u2028' },
});

describe('stored JSON', () => {
  it('stores kind, apiVersion and metadata first, without resourceVersion', () => {
    const text = encodeStored(cm());
    assert.ok(text.startsWith('{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"'), text);
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
    assert.ok(json.startsWith('{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"42",'), json);
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

  it('lists items from their stored text, without kind and apiVersion, as upstream lists them', () => {
    const a = cm();
    encodeStored(a);
    a.metadata.resourceVersion = '10';
    const b = { ...cm(), metadata: { name: 'b', namespace: 'default', resourceVersion: '11' } } as KubeObject;
    const list = { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '12', continue: 'x' }, items: [a, b] };
    const json = typedListJson(list);
    const strip = ({ kind: _k, apiVersion: _a, ...rest }: KubeObject) => rest;
    assert.deepEqual(JSON.parse(json), { ...list, items: [strip(a), strip(b)] });
    assert.ok(listItemJson(a).startsWith('{"metadata":{"resourceVersion":"10","name":"a"'), 'spliced, not serialized');
    // A custom resource's list keeps each item's kind and apiVersion, as upstream's unstructured lists do.
    assert.deepEqual(JSON.parse(typedListJson(list, true)).items, [a, b]);
  });

  it('answers objects read from text stored by earlier versions (metadata first)', () => {
    const old = '{"metadata":{"name":"a","namespace":"default"},"apiVersion":"v1","kind":"ConfigMap","data":{"k":"v"}}';
    const obj = JSON.parse(old) as KubeObject;
    obj.metadata.resourceVersion = '5';
    rememberStoredText(obj, old);
    assert.deepEqual(JSON.parse(objectJson(obj)), obj);
    const { kind: _k, apiVersion: _a, ...item } = obj;
    assert.deepEqual(JSON.parse(listItemJson(obj)), item);
  });
});
