import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isStatusError } from '../../src/api/errors.js';
import { escapeFieldValue, exactValue, parseFieldSelector } from '../../src/api/fields.js';
import type { KubeObject } from '../../src/api/types.js';
import { podResource } from '../../src/api/kinds/pod.js';
import { nodeResource } from '../../src/api/kinds/node.js';
import { eventResource } from '../../src/api/kinds/event.js';

const pod: KubeObject = {
  metadata: { name: 'web-1', namespace: 'default' },
  spec: { nodeName: 'node-a', restartPolicy: 'Always', schedulerName: 'default-scheduler', containers: [] },
  status: { phase: 'Running', podIPs: [{ ip: '10.0.0.5' }] },
};

function error(text: string, allowed = podResource.fieldSelectors): string {
  try {
    parseFieldSelector(text, allowed);
  } catch (e) {
    assert.ok(isStatusError(e, 'BadRequest'));
    return e.status.message ?? '';
  }
  assert.fail('expected an error');
}

test('pod field selectors', () => {
  const f = podResource.fieldSelectors;
  assert.equal(parseFieldSelector('spec.nodeName=node-a', f).matches(pod), true);
  assert.equal(parseFieldSelector('spec.nodeName==node-a', f).matches(pod), true);
  assert.equal(parseFieldSelector('spec.nodeName!=node-a', f).matches(pod), false);
  assert.equal(parseFieldSelector('status.phase=Running,metadata.namespace=default', f).matches(pod), true);
  assert.equal(parseFieldSelector('status.phase!=Succeeded,status.phase!=Failed', f).matches(pod), true);
  assert.equal(parseFieldSelector('metadata.name=web-1', f).matches(pod), true);
  assert.equal(parseFieldSelector('status.podIP=10.0.0.5', f).matches(pod), true);
  assert.equal(parseFieldSelector('spec.hostNetwork=false', f).matches(pod), true);
  assert.equal(parseFieldSelector('', f).matches(pod), true);
});

test('an empty value matches an empty or missing field', () => {
  const f = podResource.fieldSelectors;
  const unscheduled: KubeObject = { metadata: { name: 'p' } };
  assert.equal(parseFieldSelector('spec.nodeName=', f).matches(unscheduled), true);
  assert.equal(parseFieldSelector('spec.nodeName=', f).matches(pod), false);
  assert.equal(parseFieldSelector('spec.nodeName!=', f).matches(pod), true);
  assert.equal(parseFieldSelector('status.nominatedNodeName=', f).matches(pod), true);
});

test('exact values for indexing', () => {
  const f = podResource.fieldSelectors;
  assert.equal(exactValue(parseFieldSelector('status.phase=Running,spec.nodeName=node-a', f), 'spec.nodeName'), 'node-a');
  assert.equal(exactValue(parseFieldSelector('spec.nodeName!=node-a', f), 'spec.nodeName'), undefined);
  assert.equal(exactValue(parseFieldSelector('status.phase=Running', f), 'spec.nodeName'), undefined);
});

test('escaping and syntax errors', () => {
  const f = { 'x.y': (o: KubeObject) => String(o.metadata.annotations?.v ?? '') };
  const obj: KubeObject = { metadata: { name: 'n', annotations: { v: 'a,b=c\\d' } } };
  const text = `x.y=${escapeFieldValue('a,b=c\\d')}`;
  assert.equal(text, 'x.y=a\\,b\\=c\\\\d');
  const sel = parseFieldSelector(text, f);
  assert.equal(sel.matches(obj), true);
  assert.equal(sel.toString(), text);
  assert.equal(error('spec.nodeName'), "invalid selector: 'spec.nodeName'; can't understand 'spec.nodeName'");
  assert.equal(error('spec.nodeName=a\\b'), 'invalid field selector: invalid escape sequence: \\b');
  assert.equal(error('spec.nodeName=a=b'), 'invalid field selector: unescaped character in value: =');
});

test('unknown fields are rejected', () => {
  assert.equal(error('foo=bar'), 'field label not supported: foo');
  assert.equal(error('spec.unschedulable=true'), 'field label not supported: spec.unschedulable');
  assert.equal(parseFieldSelector('spec.unschedulable=true', nodeResource.fieldSelectors).matches({ metadata: { name: 'n' }, spec: { unschedulable: true } }), true);
});

test('event field selectors', () => {
  const ev: KubeObject = {
    metadata: { name: 'e', namespace: 'default' },
    involvedObject: { kind: 'Pod', name: 'web-1', namespace: 'default', uid: 'u1' },
    reason: 'Scheduled',
    type: 'Normal',
    reportingComponent: 'default-scheduler',
    source: {},
  };
  const f = eventResource.fieldSelectors;
  assert.equal(parseFieldSelector('involvedObject.kind=Pod,involvedObject.name=web-1,involvedObject.uid=u1', f).matches(ev), true);
  assert.equal(parseFieldSelector('source=default-scheduler,type=Normal,reason=Scheduled', f).matches(ev), true);
});
