// Persistent volumes on the process runtime, end to end: a real server, two real agents, real
// kubectl. The default local-path class, a StatefulSet's claim provisioned on its pod's node and
// given to the host process (a symlink at its mountPath, SKIFF_VOLUME_<NAME>), its successor held to
// the volume's node and reading the data there, reclaim Delete and Retain, and the scheduler's words for a missing claim.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestAgent, TestServer, TEST_JOIN_TOKEN, eventually } from '../support/cluster.js';
import type { ApiClient } from '../../src/client/rest.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { KubeObject } from '../../src/api/types.js';
import { isStatusError } from '../../src/api/errors.js';

const STATEFULSET = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  serviceName: web
  replicas: 1
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: c
        image: busybox
        command: [sh, -c, 'cat data/greeting 2>/dev/null || echo "written by $HOSTNAME" > data/greeting; echo "dir $SKIFF_VOLUME_DATA"; exec sleep 3600']
        volumeMounts: [{name: data, mountPath: /data}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 64Mi}}
`;

const RETAINED = `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: kept}
provisioner: rancher.io/local-path
reclaimPolicy: Retain
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: notes}
spec:
  storageClassName: kept
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: writer}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox
    command: [sh, -c, 'echo kept > data/note; exec sleep 3600']
    volumeMounts: [{name: data, mountPath: /data}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: notes}}]
`;

describe('local-path volumes (process runtime)', () => {
  const s = new TestServer('local-path-e2e');
  let client: ApiClient;
  const agents = [new TestAgent(s, 'vol-a'), new TestAgent(s, 'vol-b')];
  const claim = (name: string) => client.get<KubeObject>(`/api/v1/namespaces/default/persistentvolumeclaims/${name}`);
  const volume = (name: string) => client.get<KubeObject>(`/api/v1/persistentvolumes/${name}`);
  const gone = async (get: () => Promise<unknown>) => {
    try {
      await get();
      return false;
    } catch (e) {
      if (isStatusError(e, 'NotFound')) return true;
      throw e;
    }
  };
  const running = (name: string, uid?: string) =>
    eventually(async () => {
      const p = await client.get<Pod>(`/api/v1/namespaces/default/pods/${name}`).catch(() => undefined);
      return p?.status?.phase === 'Running' && p.metadata.uid !== uid ? p : undefined;
    }, 20_000, `pod ${name} Running`);
  const logs = (name: string, want: RegExp) => eventually(async () => {
    const out = await s.k(['logs', name]).catch(() => '');
    return want.test(out) ? out : undefined;
  }, 10_000, `logs of ${name} matching ${want}`);

  before(async () => {
    await s.start(['--token', TEST_JOIN_TOKEN]);
    client = s.client();
    await Promise.all(agents.map((a) => a.start()));
  });
  after(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    client?.close();
    await s.stop();
    s.cleanup();
  });

  it('ships local-path as the default class', async () => {
    const out = await s.k(['get', 'storageclass']);
    assert.match(out, /^local-path \(default\)\s+rancher\.io\/local-path\s+Delete\s+WaitForFirstConsumer\s+false\s+/m);
  });

  it("provisions a StatefulSet's claim on its pod's node; the successor reads the data; Delete reclaim removes the directory", async () => {
    await s.k(['apply', '-f', '-'], { input: STATEFULSET });
    const first = await running('web-0');
    const node = first.spec!.nodeName!;
    const agent = agents.find((a) => a.nodeName === node)!;
    const c = await eventually(async () => {
      const got = await claim('data-web-0');
      return (got.status as { phase?: string }).phase === 'Bound' ? got : undefined;
    }, 10_000, 'claim Bound');
    // The default class was given by admission; the scheduler chose the node; the controller handed it on.
    assert.equal((c.spec as { storageClassName?: string }).storageClassName, 'local-path');
    assert.equal(c.metadata.annotations?.['volume.kubernetes.io/selected-node'], node);
    assert.equal(c.metadata.annotations?.['volume.kubernetes.io/storage-provisioner'], 'rancher.io/local-path');
    const pvName = (c.spec as { volumeName: string }).volumeName;
    assert.equal(pvName, `pvc-${c.metadata.uid}`);
    const pv = await volume(pvName);
    const spec = pv.spec as { capacity: { storage: string }; hostPath: { path: string }; persistentVolumeReclaimPolicy: string; nodeAffinity: unknown };
    assert.equal(spec.capacity.storage, '64Mi');
    assert.equal(spec.persistentVolumeReclaimPolicy, 'Delete');
    assert.equal(pv.metadata.annotations?.['pv.kubernetes.io/provisioned-by'], 'rancher.io/local-path');
    assert.deepEqual(spec.nodeAffinity, { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] } });
    const dir = spec.hostPath.path;
    assert.equal(dir, join(agent.dataDir, 'storage', `${pvName}_default_data-web-0`));
    assert.match(await s.k(['get', 'pv', pvName]), new RegExp(`${pvName}\\s+64Mi\\s+RWO\\s+Delete\\s+Bound\\s+default/data-web-0\\s+local-path`));
    // The process got the directory both ways.
    await logs('web-0', new RegExp(`dir ${dir}$`, 'm'));
    await eventually(() => existsSync(join(dir, 'greeting')), 10_000, 'greeting written');
    assert.equal(readFileSync(join(dir, 'greeting'), 'utf8'), 'written by web-0\n');

    const events = await s.k(['get', 'events', '--field-selector', 'involvedObject.name=data-web-0', '-o', 'custom-columns=REASON:.reason', '--no-headers']);
    for (const reason of ['WaitForFirstConsumer', 'ExternalProvisioning', 'Provisioning', 'ProvisioningSucceeded']) assert.match(events, new RegExp(`^${reason}$`, 'm'));

    // With its node cordoned, the successor has nowhere to go: the other node cannot reach its volume.
    await s.k(['cordon', node]);
    await s.k(['delete', 'pod', 'web-0', '--wait=false']);
    const waiting = await eventually(async () => {
      const p = await client.get<Pod>('/api/v1/namespaces/default/pods/web-0').catch(() => undefined);
      return p && p.metadata.uid !== first.metadata.uid ? p.status?.conditions?.find((x) => x.type === 'PodScheduled' && x.status === 'False')?.message : undefined;
    }, 20_000, 'the successor unschedulable');
    assert.equal(waiting, '0/2 nodes are available: 1 node(s) had volume node affinity conflict, 1 node(s) were unschedulable. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.');
    await s.k(['uncordon', node]);
    const second = await running('web-0', first.metadata.uid);
    assert.equal(second.spec!.nodeName, node, 'the successor follows its volume');
    await logs('web-0', /^written by web-0$/m);

    // Claims outlive their StatefulSet; deleting the claim reclaims the volume and its directory.
    await s.k(['delete', 'statefulset', 'web']);
    await eventually(async () => gone(() => client.get(`/api/v1/namespaces/default/pods/web-0`)), 20_000, 'web-0 gone');
    await s.k(['delete', 'pvc', 'data-web-0']);
    await eventually(async () => gone(() => volume(pvName)), 20_000, 'volume deleted');
    assert.equal(existsSync(dir), false, 'the directory is removed');
  });

  it('keeps a Retain volume and its directory once its claim is gone (Released)', async () => {
    await s.k(['apply', '-f', '-'], { input: RETAINED });
    await running('writer');
    const c = await eventually(async () => {
      const got = await claim('notes');
      return (got.spec as { volumeName?: string }).volumeName ? got : undefined;
    }, 10_000, 'claim bound');
    const pvName = (c.spec as { volumeName: string }).volumeName;
    const dir = ((await volume(pvName)).spec as { hostPath: { path: string } }).hostPath.path;
    await eventually(() => existsSync(join(dir, 'note')), 10_000, 'note written');
    await s.k(['delete', 'pod', 'writer']);
    await s.k(['delete', 'pvc', 'notes']);
    await eventually(async () => ((await volume(pvName)).status as { phase?: string }).phase === 'Released', 20_000, 'volume Released');
    assert.equal(readFileSync(join(dir, 'note'), 'utf8'), 'kept\n');
  });

  it("says why a pod whose claim does not exist waits, in the scheduler's words", async () => {
    await s.k(['run', 'lost', '--image=busybox', '--overrides', JSON.stringify({ spec: { volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'nope' } }] } }), '--command', '--', 'sleep', '60']);
    const message = await eventually(async () => {
      const p = await client.get<Pod>('/api/v1/namespaces/default/pods/lost');
      return p.status?.conditions?.find((x) => x.type === 'PodScheduled' && x.status === 'False')?.message;
    }, 10_000, 'PodScheduled=False');
    assert.equal(message, '0/2 nodes are available: persistentvolumeclaim "nope" not found. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.');
  });
});
