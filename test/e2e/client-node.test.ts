// @kubernetes/client-node 1.4 as a second client: CRUD, patch, custom resources, and an informer that survives 410 Gone.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { TestServer, eventually } from '../support/cluster.js';

describe('@kubernetes/client-node against skiff server', () => {
  // Short watch lifetimes and a small event window make the informer's resume hit 410 quickly.
  const s = new TestServer('clientnode');
  let kc: k8s.KubeConfig;
  before(async () => {
    await s.start(['--min-request-timeout', '1', '--watch-cache-size', '20']);
    kc = new k8s.KubeConfig();
    kc.loadFromFile(s.kubeconfig);
  });
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  it('lists, creates, patches and deletes', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const ns = await core.listNamespace();
    assert.ok(ns.items.some((n) => n.metadata?.name === 'kube-system'));
    // client-node leaves kind/apiVersion out when the caller does; the server defaults them.
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'cn' }, data: { a: '1' } } });
    await core.patchNamespacedConfigMap(
      { namespace: 'default', name: 'cn', body: [{ op: 'add', path: '/data/b', value: '2' }] },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
    );
    await core.patchNamespacedConfigMap({ namespace: 'default', name: 'cn', body: { data: { c: '3' } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    const cm = await core.readNamespacedConfigMap({ namespace: 'default', name: 'cn' });
    assert.deepEqual(cm.data, { a: '1', b: '2', c: '3' });
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: {
        metadata: { name: 'cn-web' },
        spec: { selector: { matchLabels: { app: 'w' } }, template: { metadata: { labels: { app: 'w' } }, spec: { containers: [{ name: 'w', image: 'nginx' }] } } },
      },
    });
    const dep = await apps.readNamespacedDeployment({ namespace: 'default', name: 'cn-web' });
    assert.equal(dep.spec?.replicas, 1);
    await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'cn' });
    await assert.rejects(core.readNamespacedConfigMap({ namespace: 'default', name: 'cn' }), (e: { code?: number }) => e.code === 404);
  });

  it('defines a custom resource and works with it through ApiextensionsV1Api and CustomObjectsApi', async () => {
    const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: 'widgets.cn.example.com' },
        spec: {
          group: 'cn.example.com',
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              subresources: { status: {}, scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.size' } },
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: {
                    spec: { type: 'object', properties: { size: { type: 'integer', minimum: 0 }, color: { type: 'string', _enum: ['red', 'blue'], _default: 'red' } } },
                    status: { type: 'object', properties: { size: { type: 'integer' } } },
                  },
                },
              },
            },
          ],
        },
      },
    });
    await eventually(async () => (await ext.readCustomResourceDefinition({ name: 'widgets.cn.example.com' })).status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'), 10_000, 'Established');
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const at = { group: 'cn.example.com', version: 'v1', namespace: 'default', plural: 'widgets' };
    await eventually(async () => custom.listNamespacedCustomObject(at).then(() => true), 10_000, 'served');
    await custom.createNamespacedCustomObject({ ...at, body: { apiVersion: 'cn.example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 2 } } });
    const w1 = (await custom.getNamespacedCustomObject({ ...at, name: 'w1' })) as { spec: { size: number; color: string } };
    assert.deepEqual(w1.spec, { size: 2, color: 'red' });
    await assert.rejects(
      custom.createNamespacedCustomObject({ ...at, body: { apiVersion: 'cn.example.com/v1', kind: 'Widget', metadata: { name: 'w2' }, spec: { color: 'green' } } }),
      (e: { code?: number; body?: string }) => e.code === 422 && /spec\.color: Unsupported value: "green": supported values: "red", "blue"/.test((JSON.parse(String(e.body)) as { message: string }).message),
    );
    await custom.patchNamespacedCustomObject({ ...at, name: 'w1', body: { spec: { color: 'blue' } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    await custom.patchNamespacedCustomObjectStatus({ ...at, name: 'w1', body: { status: { size: 2 } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    await custom.replaceNamespacedCustomObjectScale({ ...at, name: 'w1', body: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'w1', namespace: 'default' }, spec: { replicas: 5 } } });
    const scale = (await custom.getNamespacedCustomObjectScale({ ...at, name: 'w1' })) as { spec: { replicas: number }; status: { replicas: number } };
    assert.deepEqual([scale.spec.replicas, scale.status.replicas], [5, 2]);
    const list = (await custom.listNamespacedCustomObject(at)) as { items: { metadata: { name: string }; spec: { color: string; size: number } }[] };
    assert.deepEqual(list.items.map((i) => [i.metadata.name, i.spec.color, i.spec.size]), [['w1', 'blue', 5]]);
    await custom.deleteNamespacedCustomObject({ ...at, name: 'w1' });
    await assert.rejects(custom.getNamespacedCustomObject({ ...at, name: 'w1' }), (e: { code?: number }) => e.code === 404);
    await ext.deleteCustomResourceDefinition({ name: 'widgets.cn.example.com' });
  });

  it('keeps an informer in sync across 410 Gone', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'inf' } } });
    await core.createNamespace({ body: { metadata: { name: 'noise' } } });
    const informer = k8s.makeInformer(kc, '/api/v1/namespaces/inf/configmaps', () => core.listNamespacedConfigMap({ namespace: 'inf' }));
    const seen = new Set<string>();
    let errors = 0;
    informer.on('add', (o) => seen.add(o.metadata!.name!));
    informer.on('delete', (o) => seen.delete(o.metadata!.name!));
    // client-node 1.4 stops on transport errors; applications restart it, as here (but not after
    // our own stop(), which 1.4 also reports as an error).
    let stopped = false;
    informer.on('error', () => {
      errors++;
      if (!stopped) setTimeout(() => void (stopped || informer.start().catch(() => {})), 200);
    });
    await informer.start();
    try {
      await core.createNamespacedConfigMap({ namespace: 'inf', body: { metadata: { name: 'first' } } });
      await eventually(() => seen.has('first'), 10_000, 'first add');
      // Writes elsewhere push the event window past the informer's resourceVersion.
      for (let i = 0; i < 60; i++) await core.createNamespacedConfigMap({ namespace: 'noise', body: { metadata: { name: `n${i}` } } });
      // The informer's watch ends within ~2 s (min-request-timeout 1); resuming gets 410; it relists.
      const before = Date.now();
      await eventually(() => Date.now() - before > 2500, 5000, 'watch rollover');
      await core.createNamespacedConfigMap({ namespace: 'inf', body: { metadata: { name: 'second' } } });
      await core.deleteNamespacedConfigMap({ namespace: 'inf', name: 'first' });
      await eventually(() => seen.has('second') && !seen.has('first'), 15_000, 'informer caught up after 410');
      void errors;
    } finally {
      stopped = true;
      await informer.stop();
    }
  });
});
