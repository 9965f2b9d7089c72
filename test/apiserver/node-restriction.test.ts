// NodeRestriction on a node's own Node: taints only at registration, labels only where a kubelet
// may, with upstream's messages; and skiff's re-registration may restore what an administrator had
// set on the deleted Node, but nothing the node invents.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changedLabels, labelsNodeMayNotSet, nodeMaySetLabel } from '../../src/api/node-labels.js';
import { parseLabels } from '../../src/agent/node-object.js';
import { startInProcessServer } from '../support/in-process.js';
import { StaticTokens } from '../../src/auth/static-tokens.js';
import { ApiClient } from '../../src/client/rest.js';
import { isStatusError } from '../../src/api/errors.js';
import type { Node } from '../../src/api/kinds/node.js';
import { nodeAffinityFor } from '../../src/api/kinds/volume-provisioning.js';

test('the labels a node may set on its own Node', () => {
  for (const ok of ['team', 'example.com/tier', 'kubernetes.io/hostname', 'topology.kubernetes.io/zone', 'node.kubernetes.io/instance-type', 'node.kubernetes.io/anything', 'kubelet.kubernetes.io/x', 'sub.kubelet.kubernetes.io/y', 'skiff.dev/runtime']) {
    assert.equal(nodeMaySetLabel(ok), true, ok);
  }
  for (const no of ['node-role.kubernetes.io/control-plane', 'kubernetes.io/role', 'node-restriction.kubernetes.io/trusted', 'x.node-restriction.kubernetes.io/y', 'example.k8s.io/z', 'k8s.io/a', 'Kubernetes.IO/b']) {
    assert.equal(nodeMaySetLabel(no), false, no);
  }
  assert.deepEqual(labelsNodeMayNotSet(['z.k8s.io/a', 'team', 'k8s.io/b']), ['k8s.io/b', 'z.k8s.io/a']);
  assert.deepEqual(changedLabels({ a: '1', b: '2' }, { a: '1', b: '3', c: '4' }).sort(), ['b', 'c']);
  assert.throws(() => parseLabels(['node-role.kubernetes.io/worker=']), /a node may not set these labels on its own Node: node-role.kubernetes.io\/worker/);
  assert.deepEqual(parseLabels(['tier=web']), { tier: 'web' });
});

const TOKENS = 'n1-token,system:node:n1,1,"system:nodes"\n';

function node(labels: Record<string, string>, taints: { key: string; effect: string }[] = [], machine = 'machine-1'): Node {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels, annotations: { 'skiff.dev/machine-id': machine } }, spec: taints.length ? { taints } as Node['spec'] : {} } as Node;
}

test('a node credential: taints only when it registers, labels only its own, re-registration restores what an administrator set', async () => {
  const srv = await startInProcessServer({ tokenAuthenticators: [StaticTokens.parse(TOKENS)] });
  const n1 = new ApiClient({ servers: [srv.url], caPem: srv.adminTls.ca, token: 'n1-token', timeoutMs: 5_000 });
  try {
    const admin = srv.client();
    const refusedWith = (message: string) => (e: unknown) => isStatusError(e, 'Forbidden') && e.message === message;

    // Registering: its own taints are fine, labels a kubelet may not set are not.
    await assert.rejects(n1.create('/api/v1/nodes', node({ 'node-role.kubernetes.io/worker': '' })), refusedWith('nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: node-role.kubernetes.io/worker'));
    await n1.create('/api/v1/nodes', node({ 'kubernetes.io/hostname': 'n1', tier: 'web' }, [{ key: 'dedicated', effect: 'NoSchedule' }]));

    // Once registered: no taint changes, no restricted labels, its own labels as it likes.
    await assert.rejects(n1.patch('/api/v1/nodes/n1', { spec: { taints: [] } }, 'merge'), refusedWith('nodes "n1" is forbidden: node "n1" is not allowed to modify taints'));
    await assert.rejects(n1.patch('/api/v1/nodes/n1', { metadata: { labels: { 'node-restriction.kubernetes.io/trusted': 'yes', 'node-role.kubernetes.io/gpu': '' } } }, 'merge'), refusedWith('nodes "n1" is forbidden: node "n1" is not allowed to modify labels: node-restriction.kubernetes.io/trusted, node-role.kubernetes.io/gpu'));
    await n1.patch('/api/v1/nodes/n1', { metadata: { labels: { tier: 'db' } }, spec: { unschedulable: true } }, 'merge');

    // An administrator sets what the node may not; the node cannot take it away either.
    await admin.patch('/api/v1/nodes/n1', { metadata: { labels: { 'node-role.kubernetes.io/worker': '', 'node-restriction.kubernetes.io/trusted': 'yes' } }, spec: { taints: [{ key: 'dedicated', effect: 'NoSchedule' }, { key: 'gpu', effect: 'NoExecute' }] } }, 'merge');
    await assert.rejects(n1.patch('/api/v1/nodes/n1', { metadata: { labels: { 'node-restriction.kubernetes.io/trusted': null } } }, 'merge'), refusedWith('nodes "n1" is forbidden: node "n1" is not allowed to modify labels: node-restriction.kubernetes.io/trusted'));

    // Deleted: the node may re-create it with exactly what the administrator had set...
    const before = await admin.get<Node>('/api/v1/nodes/n1');
    await admin.delete('/api/v1/nodes/n1');
    const restored = { ...node(before.metadata.labels as Record<string, string>, before.spec!.taints as { key: string; effect: string }[]) };
    // ...but not from another machine (a bootstrap token lets anyone join under the name),
    await assert.rejects(n1.create('/api/v1/nodes', node(before.metadata.labels as Record<string, string>, [], 'machine-2')), refusedWith('nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: node-restriction.kubernetes.io/trusted, node-role.kubernetes.io/worker'));
    // ...nor a value of its own for one of them, nor one more.
    await assert.rejects(n1.create('/api/v1/nodes', node({ ...before.metadata.labels, 'node-restriction.kubernetes.io/trusted': 'very' })), refusedWith('nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: node-restriction.kubernetes.io/trusted'));
    await assert.rejects(n1.create('/api/v1/nodes', node({ ...before.metadata.labels, 'node-role.kubernetes.io/master': '' })), refusedWith('nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: node-role.kubernetes.io/master'));
    const back = await n1.create<Node>('/api/v1/nodes', restored);
    assert.equal(back.metadata.labels?.['node-restriction.kubernetes.io/trusted'], 'yes');
    assert.equal(back.metadata.labels?.['node-role.kubernetes.io/worker'], '');
    assert.deepEqual(back.spec?.taints?.map((t) => t.key), ['dedicated', 'gpu']);
  } finally {
    n1.close();
    await srv.stop();
  }
});

test('a node credential creates and deletes only local-path volumes whose node affinity names it', async () => {
  const srv = await startInProcessServer({ tokenAuthenticators: [StaticTokens.parse(TOKENS)] });
  const n1 = new ApiClient({ servers: [srv.url], caPem: srv.adminTls.ca, token: 'n1-token', timeoutMs: 5_000 });
  try {
    const admin = srv.client();
    const pv = (name: string, nodeName: string, provisionedBy = 'rancher.io/local-path') => ({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name, ...(provisionedBy ? { annotations: { 'pv.kubernetes.io/provisioned-by': provisionedBy } } : {}) },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/var/lib/skiff/storage/${name}` }, nodeAffinity: nodeAffinityFor(nodeName) },
    });
    const refused = (e: unknown) => isStatusError(e, 'Forbidden') && /node "n1" may only create and delete rancher.io\/local-path volumes whose node affinity names it/.test(e.message);
    await n1.create('/api/v1/persistentvolumes', pv('pvc-own', 'n1'));
    await assert.rejects(n1.create('/api/v1/persistentvolumes', pv('pvc-other', 'n2')), refused);
    await assert.rejects(n1.create('/api/v1/persistentvolumes', pv('pvc-foreign', 'n1', 'example.com/disks')), refused);
    await admin.create('/api/v1/persistentvolumes', pv('admins', 'n1', ''));
    await assert.rejects(n1.delete('/api/v1/persistentvolumes/admins'), refused);
    await n1.delete('/api/v1/persistentvolumes/pvc-own');
    // Reading claims and volumes is the provisioner's role, granted to every node.
    await n1.get('/api/v1/persistentvolumeclaims');
  } finally {
    n1.close();
    await srv.stop();
  }
});
