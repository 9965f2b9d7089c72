// The folder check's own judgement, without kubectl or a server: what counts as an object, and
// what counts as read back changed. If these said yes to everything, the corpus check would pass
// whatever the server did.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changedPaths, parseManifests, unexpected, type BundleReport } from './manifest-folder.js';

test('manifests read as kubectl reads them: YAML 1.1, empty documents skipped, Lists opened', () => {
  const objs = parseManifests(
    [
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {flag: on}',
      '',
      'apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: b}}\n- {apiVersion: v1, kind: Secret, metadata: {name: c}}',
    ].join('\n---\n'),
  );
  assert.deepEqual(objs.map((o) => `${o.kind}/${o.metadata.name}`), ['ConfigMap/a', 'Secret/b', 'Secret/c']);
  assert.equal((objs[0]!.data as { flag: unknown }).flag, true);
  assert.throws(() => parseManifests('apiVersion: v1\nkind: ConfigMap\n', 'x.yaml'), /^Error: x\.yaml: a document without apiVersion, kind and metadata\.name$/);
});

test('read back changed: every field sent must come back the same; added fields, nulls and empty collections do not count', () => {
  const sent = { spec: { replicas: 2, template: { containers: [{ name: 'c', image: 'a:1' }] }, extra: null, labels: {}, ports: [] } };
  assert.deepEqual(changedPaths(sent, { spec: { replicas: 2, template: { containers: [{ name: 'c', image: 'a:1', imagePullPolicy: 'IfNotPresent' }] }, paused: false } }), []);
  assert.deepEqual(changedPaths(sent, { spec: { replicas: 3, template: { containers: [{ name: 'c', image: 'a:2' }] }, labels: {}, ports: [] } }), [
    'spec.replicas',
    'spec.template.containers[0].image',
  ]);
  assert.deepEqual(changedPaths(sent, { spec: { replicas: 2, template: { containers: [] } } }), ['spec.template.containers']);
  assert.deepEqual(changedPaths({ a: { b: 1 } }, { a: 'x' }), ['a']);
  assert.deepEqual(changedPaths({ a: 1 }, undefined), ['.']);
});

test('the check fails on a refusal not listed as expected and on any change', () => {
  const report: BundleReport = {
    bundle: 'b',
    objects: 3,
    modes: [
      {
        mode: 'server-side',
        accepted: 1,
        refusals: [
          { apiVersion: 'v1', kind: 'ResourceQuota', name: 'q', error: 'no matches', expected: 'quota' },
          { apiVersion: 'v1', kind: 'Pod', name: 'p', error: 'invalid' },
        ],
        mismatches: [{ kind: 'ConfigMap', name: 'c', paths: ['data.k'] }],
      },
    ],
  };
  assert.deepEqual(unexpected([report]), ['b server-side: Pod p refused: invalid', 'b server-side: ConfigMap c read back changed at data.k']);
});
