// The volume binding controller against a real in-process API server: what its header promises
// (the smallest fitting volume, WaitForFirstConsumer, a claim kept while a pod uses it, Retain and
// Delete on release), each seen through the API as a user sees it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/api/types.js';
import { isStatusError } from '../../src/api/errors.js';
import { VolumeBindingController } from '../../src/controllers/volume-binding.js';
import { throughout } from '../support/eventually.js';
import { eventually, nsPath, startControllers, startHarness, type Harness } from './workload-harness.js';

describe('volume binding controller', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  const claimPath = (ns: string, name?: string) => nsPath(ns, 'persistentvolumeclaims', name, 'v1');
  const volumePath = (name?: string) => `/api/v1/persistentvolumes${name ? `/${name}` : ''}`;
  const phase = (o: KubeObject | undefined) => (o?.status as { phase?: string } | undefined)?.phase;
  const volumeNameOf = (o: KubeObject) => (o.spec as { volumeName?: string }).volumeName;
  async function tryGet(path: string): Promise<KubeObject | undefined> {
    try {
      return await h.client.get<KubeObject>(path);
    } catch (e) {
      if (isStatusError(e, 'NotFound')) return undefined;
      throw e;
    }
  }
  async function volume(name: string, size: string, storageClassName: string, policy = 'Retain'): Promise<void> {
    await h.client.create(volumePath(), {
      apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name },
      spec: { capacity: { storage: size }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: policy, storageClassName, hostPath: { path: `/tmp/${name}` } },
    });
  }
  async function claim(ns: string, name: string, size: string, storageClassName: string): Promise<void> {
    await h.client.create(claimPath(ns), {
      apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName, resources: { requests: { storage: size } } },
    });
  }
  async function podUsing(ns: string, name: string, claimName: string): Promise<void> {
    await h.client.create(nsPath(ns, 'pods', undefined, 'v1'), {
      apiVersion: 'v1', kind: 'Pod', metadata: { name },
      spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'x' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }] },
    });
  }
  const boundTo = (ns: string, name: string) =>
    eventually(async () => {
      const c = await h.client.get<KubeObject>(claimPath(ns, name));
      return phase(c) === 'Bound' && volumeNameOf(c);
    }, 10_000, `claim ${name} Bound`);

  it('binds a claim to the smallest volume that fits, and protects both with their finalizers', async () => {
    const ns = await h.namespace('bind');
    const running = startControllers(h.client, [new VolumeBindingController()]);
    try {
      const cls = `${ns}-static`;
      await volume(`${ns}-big`, '10Gi', cls);
      await volume(`${ns}-small`, '2Gi', cls);
      await volume(`${ns}-tiny`, '500Mi', cls);
      await claim(ns, 'data', '1Gi', cls);
      assert.equal(await boundTo(ns, 'data'), `${ns}-small`);
      const c = await h.client.get<KubeObject>(claimPath(ns, 'data'));
      assert.deepEqual(c.metadata.finalizers, ['kubernetes.io/pvc-protection']);
      const v = await h.client.get<KubeObject>(volumePath(`${ns}-small`));
      assert.deepEqual([phase(v), v.metadata.finalizers], ['Bound', ['kubernetes.io/pv-protection']]);
    } finally {
      running.stop();
    }
  });

  it('binds a WaitForFirstConsumer claim only once a pod on a node uses it, and keeps the claim until no pod does', async () => {
    const ns = await h.namespace('wffc');
    const running = startControllers(h.client, [new VolumeBindingController()]);
    try {
      const lazy = `${ns}-lazy`;
      const eager = `${ns}-eager`;
      await h.client.create('/apis/storage.k8s.io/v1/storageclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: lazy }, provisioner: 'kubernetes.io/no-provisioner', volumeBindingMode: 'WaitForFirstConsumer' });
      await volume(`${ns}-a`, '1Gi', lazy);
      await volume(`${ns}-b`, '1Gi', eager);
      await claim(ns, 'waits', '1Gi', lazy);
      // Claims sync in order: once the later claim of an Immediate class is bound, the first was seen.
      await claim(ns, 'now', '1Gi', eager);
      await boundTo(ns, 'now');
      await throughout(async () => phase(await h.client.get<KubeObject>(claimPath(ns, 'waits'))) === 'Pending', 500, 'claim waits Pending');

      await podUsing(ns, 'user', 'waits');
      assert.equal(await boundTo(ns, 'waits'), `${ns}-a`);

      // Deleted while the pod uses it: the claim stays (Terminating) until the pod goes.
      await h.client.delete(claimPath(ns, 'waits'));
      await eventually(async () => (await h.client.get<KubeObject>(claimPath(ns, 'waits'))).metadata.deletionTimestamp, 5_000, 'claim terminating');
      await throughout(async () => (await tryGet(claimPath(ns, 'waits'))) !== undefined, 500, 'claim kept while in use');
      await h.client.delete(nsPath(ns, 'pods', 'user', 'v1'), { gracePeriodSeconds: 0 });
      await eventually(async () => (await tryGet(claimPath(ns, 'waits'))) === undefined, 10_000, 'claim gone once unused');
    } finally {
      running.stop();
    }
  });

  it('keeps a released Retain volume (from a new claim of the same name too) and deletes a released Delete volume', async () => {
    const ns = await h.namespace('reclaim');
    const running = startControllers(h.client, [new VolumeBindingController()]);
    try {
      const cls = `${ns}-static`;
      await volume(`${ns}-kept`, '1Gi', cls, 'Retain');
      await claim(ns, 'first', '1Gi', cls);
      assert.equal(await boundTo(ns, 'first'), `${ns}-kept`);
      await h.client.delete(claimPath(ns, 'first'));
      await eventually(async () => phase(await tryGet(volumePath(`${ns}-kept`))) === 'Released', 10_000, 'Retain volume Released');

      await volume(`${ns}-gone`, '1Gi', cls, 'Delete');
      await claim(ns, 'second', '1Gi', cls);
      assert.equal(await boundTo(ns, 'second'), `${ns}-gone`);
      await h.client.delete(claimPath(ns, 'second'));
      await eventually(async () => (await tryGet(volumePath(`${ns}-gone`))) === undefined, 10_000, 'Delete volume deleted');
      // The Retain volume was released first and went through the same steps: it is still there.
      const kept = await h.client.get<KubeObject>(volumePath(`${ns}-kept`));
      const claimRefOf = (v: KubeObject) => (v.spec as { claimRef?: { name?: string; uid?: string } }).claimRef;
      assert.deepEqual([phase(kept), claimRefOf(kept)?.name], ['Released', 'first']);

      // A new claim under the released one's name is another claim: it does not take the kept volume.
      await claim(ns, 'first', '1Gi', cls);
      await volume(`${ns}-later`, '1Gi', cls);
      assert.equal(await boundTo(ns, 'first'), `${ns}-later`);
      const still = await h.client.get<KubeObject>(volumePath(`${ns}-kept`));
      assert.deepEqual([phase(still), claimRefOf(still)?.uid], ['Released', claimRefOf(kept)?.uid]);
    } finally {
      running.stop();
    }
  });
  it("hands a claim selected to a node to its class's provisioner, binds what the provisioner makes, and leaves the provisioner's volume to it on release", async () => {
    const ns = await h.namespace('provision');
    const running = startControllers(h.client, [new VolumeBindingController()]);
    try {
      const cls = `${ns}-dynamic`;
      await h.client.create('/apis/storage.k8s.io/v1/storageclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: cls }, provisioner: 'example.com/disks', volumeBindingMode: 'WaitForFirstConsumer' });
      await claim(ns, 'data', '1Gi', cls);
      await throughout(async () => (await h.client.get<KubeObject>(claimPath(ns, 'data'))).metadata.annotations?.['volume.kubernetes.io/storage-provisioner'] === undefined, 300, 'not handed on before a node is selected');
      await h.client.patch(claimPath(ns, 'data'), { metadata: { annotations: { 'volume.kubernetes.io/selected-node': 'node-a' } } }, 'merge');
      const handed = await eventually(async () => {
        const c = await h.client.get<KubeObject>(claimPath(ns, 'data'));
        return c.metadata.annotations?.['volume.kubernetes.io/storage-provisioner'] ? c : undefined;
      }, 5_000, 'claim handed to the provisioner');
      assert.equal(handed.metadata.annotations?.['volume.beta.kubernetes.io/storage-provisioner'], 'example.com/disks');
      const events = await h.client.get<{ items: KubeObject[] }>(nsPath(ns, 'events', undefined, 'v1'));
      assert.ok(events.items.some((e) => (e as { reason?: string }).reason === 'ExternalProvisioning'), 'an ExternalProvisioning event');

      // What the provisioner makes: pre-bound to the claim, Delete, marked as its own.
      await h.client.create(volumePath(), {
        apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: `${ns}-made`, annotations: { 'pv.kubernetes.io/provisioned-by': 'example.com/disks' } },
        spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Delete', storageClassName: cls, hostPath: { path: '/tmp/made' }, claimRef: { namespace: ns, name: 'data', uid: handed.metadata.uid } },
      });
      assert.equal(await boundTo(ns, 'data'), `${ns}-made`);
      await h.client.delete(claimPath(ns, 'data'));
      await eventually(async () => phase(await tryGet(volumePath(`${ns}-made`))) === 'Released', 10_000, 'volume Released');
      await throughout(async () => (await tryGet(volumePath(`${ns}-made`))) !== undefined, 500, "the provisioner's volume is left to it");
    } finally {
      running.stop();
    }
  });
});
