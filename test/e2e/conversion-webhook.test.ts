// A CustomResourceDefinition whose two versions differ in shape, converted through a webhook written
// here (behind a Service and its Endpoints, trusted through caBundle): an object written in one
// version reads in the other (kubectl 1.27 and 1.33, client-node get, list and watch), it is stored
// in the version the CRD names, and with the webhook down only reads that need conversion fail.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { TestServer, eventually } from '../support/cluster.js';
import { TestWebhookServer } from '../support/webhook-server.js';

const GROUP = 'conv.skiff.test';
const NS = 'conversion-system';

interface Widget {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec: Record<string, unknown>;
}

/** v1 says `host: "name:port"`; v2 splits it into host and port. */
function convert(o: Widget, to: string): Widget {
  if (o.apiVersion === to) return o;
  if (to.endsWith('/v2')) {
    const [host, port] = String(o.spec.host ?? '').split(':');
    return { ...o, apiVersion: to, spec: { host: host ?? '', port: Number(port ?? 0) } };
  }
  return { ...o, apiVersion: to, spec: { host: `${String(o.spec.host)}:${String(o.spec.port)}` } };
}

function crd(caBundle: string): string {
  return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.${GROUP}}
spec:
  group: ${GROUP}
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig:
        service: {namespace: ${NS}, name: converter, path: /convert}
        caBundle: ${caBundle}
  versions:
  - name: v1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {host: {type: string}}}
  - name: v2
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {host: {type: string}, port: {type: integer}}}
`;
}

describe('CRD conversion webhooks', () => {
  const s = new TestServer('conversion');
  const hooks = new TestWebhookServer();
  let up = true;

  before(async () => {
    await hooks.start([`converter.${NS}.svc`]);
    hooks.handlers.set('/convert', (review) => {
      if (!up) return 'close';
      const req = review.request as { uid: string; desiredAPIVersion: string; objects: Widget[] };
      return { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid: req.uid, result: { status: 'Success' }, convertedObjects: req.objects.map((o) => convert(o, req.desiredAPIVersion)) } };
    });
    await s.start();
    await s.k(['create', 'namespace', NS]);
    await s.k(['apply', '-f', '-'], { input: hooks.serviceYaml(NS, 'converter') });
    await s.k(['apply', '-f', '-'], { input: crd(hooks.caBundle) });
    await eventually(async () => (await s.kubectl(['get', `widgets.v1.${GROUP}`])).code === 0, 15_000, 'widgets served');
  });
  after(async () => {
    await s.stop();
    await hooks.stop();
    s.cleanup();
  });

  it('refuses a Webhook strategy without a client config, with upstream messages', async () => {
    const bad = await s.kubectl(['apply', '-f', '-'], {
      input: crd(hooks.caBundle).replace(`widgets.${GROUP}`, `gadgets.${GROUP}`).replace('plural: widgets, singular: widget, kind: Widget', 'plural: gadgets, singular: gadget, kind: Gadget').replace(/      clientConfig:\n.*\n.*\n/, '').replace('conversionReviewVersions: [v1]', 'conversionReviewVersions: [v3]'),
    });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /spec\.conversion\.webhookClientConfig: Required value: required when strategy is set to Webhook/);
    assert.match(bad.stderr, /spec\.conversion\.conversionReviewVersions: Invalid value: \[\]string\{"v3"\}: must include at least one of v1, v1beta1|must include at least one of v1, v1beta1/);
  });

  it('an object written in one version reads in the other, stored in the storage version', async () => {
    const before = hooks.callsTo('/convert').length;
    await s.k(['apply', '-f', '-'], { version: '1.33', input: `apiVersion: ${GROUP}/v1\nkind: Widget\nmetadata: {name: one, namespace: default, labels: {app: w}}\nspec: {host: "alpha:8080"}\n` });
    // The write went to the webhook on its way to storage: to v2, the storage version.
    const reviews = hooks.callsTo('/convert').slice(before).map((r) => (r.request as { desiredAPIVersion: string }).desiredAPIVersion);
    assert.equal(reviews[0], `${GROUP}/v2`);
    const v2 = JSON.parse(await s.k(['get', `widgets.v2.${GROUP}`, 'one', '-o', 'json'], { version: '1.27' })) as Widget;
    assert.deepEqual(v2.spec, { host: 'alpha', port: 8080 });
    assert.equal(v2.apiVersion, `${GROUP}/v2`);
    await s.k(['apply', '-f', '-'], { version: '1.27', input: `apiVersion: ${GROUP}/v2\nkind: Widget\nmetadata: {name: two, namespace: default}\nspec: {host: beta, port: 9090}\n` });
    const v1 = JSON.parse(await s.k(['get', `widgets.v1.${GROUP}`, 'two', '-o', 'json'], { version: '1.33' })) as Widget;
    assert.deepEqual(v1.spec, { host: 'beta:9090' });
    // A list in v1 converts every object (one review).
    const list = JSON.parse(await s.k(['get', `widgets.v1.${GROUP}`, '-o', 'json'])) as { items: Widget[] };
    assert.deepEqual(list.items.map((i) => [i.metadata.name, i.spec.host]), [['one', 'alpha:8080'], ['two', 'beta:9090']]);
    // An update through v1 keeps the object in v2.
    await s.k(['patch', `widgets.v1.${GROUP}`, 'one', '--type=merge', '-p', '{"spec":{"host":"alpha:8081"}}']);
    const patched = JSON.parse(await s.k(['get', `widgets.v2.${GROUP}`, 'one', '-o', 'json'])) as Widget;
    assert.deepEqual(patched.spec, { host: 'alpha', port: 8081 });
  });

  it('client-node reads and watches in the other version', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(s.kubeconfig);
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const got = (await custom.getNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'widgets', name: 'two' })) as Widget;
    assert.deepEqual(got.spec, { host: 'beta:9090' });
    const seen: Widget[] = [];
    const watch = new k8s.Watch(kc);
    const ctl = await watch.watch(`/apis/${GROUP}/v1/namespaces/default/widgets`, {}, (type, obj: Widget) => {
      if (type === 'ADDED') seen.push(obj);
    }, () => {});
    try {
      await custom.createNamespacedCustomObject({ group: GROUP, version: 'v2', namespace: 'default', plural: 'widgets', body: { apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name: 'three' }, spec: { host: 'gamma', port: 1 } } });
      const three = await eventually(() => seen.find((w) => w.metadata.name === 'three'), 10_000, 'the watch in v1 to see three');
      assert.equal(three.apiVersion, `${GROUP}/v1`);
      assert.deepEqual(three.spec, { host: 'gamma:1' });
    } finally {
      ctl.abort();
    }
  });

  it('with the webhook down, only reads that need conversion fail, with a clear Status', async () => {
    up = false;
    try {
      // Stored in v2: reading v2 needs no webhook.
      const v2 = JSON.parse(await s.k(['get', `widgets.v2.${GROUP}`, 'one', '-o', 'json'])) as Widget;
      assert.deepEqual(v2.spec, { host: 'alpha', port: 8081 });
      await s.k(['get', `widgets.v2.${GROUP}`]);
      const v1 = await s.kubectl(['get', `widgets.v1.${GROUP}`, 'one'], { version: '1.27' });
      assert.notEqual(v1.code, 0);
      assert.match(v1.stderr, /Error from server: conversion webhook for conv\.skiff\.test\/v2, Kind=Widget failed: Post "https:\/\/converter\.conversion-system\.svc:443\/convert\?timeout=30s": EOF/);
      const list = await s.kubectl(['get', `widgets.v1.${GROUP}`]);
      assert.match(list.stderr, /conversion webhook for conv\.skiff\.test\/v2, Kind=Widget failed/);
      // A write in the storage version needs no webhook either.
      await s.k(['apply', '-f', '-'], { input: `apiVersion: ${GROUP}/v2\nkind: Widget\nmetadata: {name: four, namespace: default}\nspec: {host: delta, port: 4}\n` });
      // The server is fine: other requests are answered.
      await s.k(['get', 'namespaces']);
    } finally {
      up = true;
    }
    const back = JSON.parse(await s.k(['get', `widgets.v1.${GROUP}`, 'four', '-o', 'json'])) as Widget;
    assert.deepEqual(back.spec, { host: 'delta:4' });
  });
});
