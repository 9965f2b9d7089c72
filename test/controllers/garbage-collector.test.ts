import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject, OwnerReference } from '../../src/api/types.js';
import type { ApiClient } from '../../src/client/rest.js';
import { GarbageCollectorController } from '../../src/controllers/garbage-collector.js';
import { systemClock } from '../../src/util/clock.js';
import { addNode, addPod, getPod, harness, until, type Harness } from './node-lifecycle-harness.js';

const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const REPLICASETS = '/apis/apps/v1/namespaces/default/replicasets';

function ref(o: KubeObject, kind: string, apiVersion: string, block = true): OwnerReference {
  return { apiVersion, kind, name: o.metadata.name!, uid: o.metadata.uid!, controller: true, blockOwnerDeletion: block };
}

const template = { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };

/** Deployment → ReplicaSet → 2 Pods, owned the way the controllers own them. Nothing runs them. */
async function chain(client: ApiClient, name: string, o: { podFinalizer?: boolean } = {}): Promise<{ deploy: KubeObject; rs: KubeObject; pods: string[] }> {
  const deploy = await client.create<KubeObject>(DEPLOYMENTS, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name }, spec: { replicas: 0, selector: { matchLabels: { app: 'x' } }, template } });
  const rs = await client.create<KubeObject>(REPLICASETS, {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: `${name}-rs`, ownerReferences: [ref(deploy, 'Deployment', 'apps/v1')] },
    spec: { replicas: 0, selector: { matchLabels: { app: 'x' } }, template },
  });
  const pods = [`${name}-p1`, `${name}-p2`];
  for (const [i, p] of pods.entries()) {
    await addPod(client, 'default', p, {}, { ownerReferences: [ref(rs, 'ReplicaSet', 'apps/v1')], ...(o.podFinalizer && i === 0 ? { finalizers: ['example.com/hold'] } : {}) });
  }
  return { deploy, rs, pods };
}

async function exists(client: ApiClient, path: string): Promise<KubeObject | undefined> {
  try {
    return await client.get<KubeObject>(path);
  } catch {
    return undefined;
  }
}

function del(client: ApiClient, path: string, propagationPolicy?: 'Background' | 'Foreground' | 'Orphan'): Promise<KubeObject> {
  return client.delete<KubeObject>(path, { apiVersion: 'v1', kind: 'DeleteOptions', ...(propagationPolicy ? { propagationPolicy } : {}) });
}

describe('garbage collector', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  async function setup(): Promise<Harness> {
    // As in `skiff server`: the collector's read-only informers share the server cache's objects
    // (frozen under test, so a write to one would fail here).
    h = await harness({ clock: systemClock, localReads: true });
    return h;
  }

  it('cascades in the background: Deployment → ReplicaSet → Pods', async () => {
    const hh = await setup();
    hh.start(new GarbageCollectorController());
    const { pods } = await chain(hh.client, 'bg');
    await del(hh.client, `${DEPLOYMENTS}/bg`, 'Background');
    await until(async () => !(await exists(hh.client, `${REPLICASETS}/bg-rs`)), 'ReplicaSet deleted');
    for (const p of pods) await until(async () => !(await getPod(hh.client, 'default', p)), `${p} deleted`);
  });

  it('cascades in the foreground: the owner goes last', async () => {
    const hh = await setup();
    hh.start(new GarbageCollectorController());
    const { pods } = await chain(hh.client, 'fg', { podFinalizer: true });
    const deleting = await del(hh.client, `${DEPLOYMENTS}/fg`, 'Foreground');
    assert.deepEqual(deleting.metadata.finalizers, ['foregroundDeletion']);
    // The ReplicaSet is deleted in foreground too; the pod held by a finalizer keeps both waiting.
    await until(async () => (await exists(hh.client, `${REPLICASETS}/fg-rs`))?.metadata.finalizers?.includes('foregroundDeletion'), 'ReplicaSet deleting in foreground');
    await until(async () => !(await getPod(hh.client, 'default', pods[1]!)), 'free pod deleted');
    const held = await getPod(hh.client, 'default', pods[0]!);
    assert.ok(held?.metadata.deletionTimestamp);
    assert.ok(await exists(hh.client, `${DEPLOYMENTS}/fg`), 'Deployment waits for its dependents');
    await hh.client.patch(`/api/v1/namespaces/default/pods/${pods[0]}`, { metadata: { finalizers: null } }, 'merge');
    await until(async () => !(await exists(hh.client, `${REPLICASETS}/fg-rs`)), 'ReplicaSet gone');
    await until(async () => !(await exists(hh.client, `${DEPLOYMENTS}/fg`)), 'Deployment gone');
  });

  it('orphans: the owner goes, its dependents stay without the reference', async () => {
    const hh = await setup();
    hh.start(new GarbageCollectorController());
    const { rs, pods } = await chain(hh.client, 'or');
    await del(hh.client, `${DEPLOYMENTS}/or`, 'Orphan');
    await until(async () => !(await exists(hh.client, `${DEPLOYMENTS}/or`)), 'Deployment gone');
    const left = await exists(hh.client, `${REPLICASETS}/or-rs`);
    assert.equal(left?.metadata.uid, rs.metadata.uid);
    assert.equal(left?.metadata.ownerReferences, undefined);
    for (const p of pods) assert.equal((await getPod(hh.client, 'default', p))?.metadata.ownerReferences?.[0]?.uid, rs.metadata.uid);
  });

  it('keeps a dependent while another owner remains, dropping the reference to the gone one', async () => {
    const hh = await setup();
    hh.start(new GarbageCollectorController());
    const cm = async (name: string) => hh.client.create<KubeObject>('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
    const one = await cm('one');
    const two = await cm('two');
    await addPod(hh.client, 'default', 'shared', {}, { ownerReferences: [ref(one, 'ConfigMap', 'v1', false), ref(two, 'ConfigMap', 'v1', false)].map((r) => ({ ...r, controller: false })) });
    await del(hh.client, '/api/v1/namespaces/default/configmaps/one');
    await until(async () => (await getPod(hh.client, 'default', 'shared'))?.metadata.ownerReferences?.length === 1, 'reference to the gone owner dropped');
    assert.equal((await getPod(hh.client, 'default', 'shared'))?.metadata.ownerReferences?.[0]?.uid, two.metadata.uid);
    await del(hh.client, '/api/v1/namespaces/default/configmaps/two');
    await until(async () => !(await getPod(hh.client, 'default', 'shared')), 'pod deleted with its last owner');
  });

  it('on start, deletes objects whose owners are gone (confirmed live) and never guesses about unknown kinds', async () => {
    const hh = await setup();
    const missingOwner = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'never-was', uid: '00000000-0000-0000-0000-000000000001' };
    const unknownKind = { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: '00000000-0000-0000-0000-000000000002' };
    await addPod(hh.client, 'default', 'dangling', {}, { ownerReferences: [missingOwner] });
    await addPod(hh.client, 'default', 'foreign', {}, { ownerReferences: [unknownKind] });
    // A Node's Lease goes with the Node.
    await addNode(hh.client, hh.clock, 'n1');
    hh.start(new GarbageCollectorController());
    await until(async () => !(await getPod(hh.client, 'default', 'dangling')), 'dangling pod deleted');
    await del(hh.client, '/api/v1/nodes/n1');
    await until(async () => !(await exists(hh.client, '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1')), 'Lease deleted with its Node');
    assert.ok(await getPod(hh.client, 'default', 'foreign'));
  });
});
