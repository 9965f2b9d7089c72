import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VolumeManager } from '../../src/agent/volumes/volume-manager.js';
import type { AgentApi } from '../../src/agent/api.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import { notFound } from '../../src/api/errors.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/log.js';

const root = mkdtempSync(join(tmpdir(), 'skiff-volumes-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** An API of ConfigMaps only, counting the reads. */
function fakeApi(data: Map<string, Record<string, string>>) {
  const gets: string[] = [];
  const api = {
    get: async (path: string) => {
      gets.push(path);
      const d = data.get(path.split('/').slice(-3).join('/'));
      if (!d) throw notFound('configmaps', '', path);
      return { data: d };
    },
  } as unknown as AgentApi;
  return { api, gets };
}

const pod = (name: string): Pod => ({
  metadata: { name, namespace: 'shop', uid: `uid-${name}` },
  spec: { containers: [{ name: 'c', image: 'x', volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg' }] }], volumes: [{ name: 'cfg', configMap: { name: 'settings', defaultMode: 0o644 } }] },
});

describe('pod volumes (configMap)', () => {
  it('writes the files behind ..data, mounts them read-only, and on a change swaps them in place, each ConfigMap read once a pass for every pod', async () => {
    const data = new Map([['shop/configmaps/settings', { greeting: 'hello' }]]);
    const { api, gets } = fakeApi(data);
    const vm = new VolumeManager({ api, clock: new FakeClock(), log: silentLogger(), podDir: (uid) => join(root, uid), fieldRefs: () => ({ nodeName: 'n', nodeIP: '10.0.0.1', podIP: '10.1.0.2' }), allocatable: () => ({}) });
    const [a, b] = [pod('a'), pod('b')];
    await vm.setUp(a);
    await vm.setUp(b);
    const [mount] = vm.mounts(a, a.spec!.containers[0]!);
    assert.deepEqual(mount, { containerPath: '/etc/cfg', hostPath: join(root, 'uid-a', 'volumes', 'kubernetes.io~configmap', 'cfg'), readonly: true });
    assert.equal(readFileSync(join(mount!.hostPath, 'greeting'), 'utf8'), 'hello');
    assert.equal(readlinkSync(join(mount!.hostPath, 'greeting')), join('..data', 'greeting'));
    const before = readlinkSync(join(mount!.hostPath, '..data'));

    data.set('shop/configmaps/settings', { greeting: 'updated' });
    gets.length = 0;
    await vm.refresh([a, b]);
    assert.equal(gets.length, 1, 'one read for both pods');
    assert.equal(readFileSync(join(mount!.hostPath, 'greeting'), 'utf8'), 'updated');
    assert.notEqual(readlinkSync(join(mount!.hostPath, '..data')), before, 'a new directory swapped in');

    // Gone from the API: the last content stays (a failed refresh changes nothing).
    data.delete('shop/configmaps/settings');
    await vm.refresh([a]);
    assert.equal(readFileSync(join(mount!.hostPath, 'greeting'), 'utf8'), 'updated');
  });

  it('refuses to start a container whose ConfigMap does not exist, naming the volume', async () => {
    const { api } = fakeApi(new Map());
    const vm = new VolumeManager({ api, clock: new FakeClock(), log: silentLogger(), podDir: (uid) => join(root, uid), fieldRefs: () => ({ nodeName: 'n', nodeIP: '10.0.0.1', podIP: '10.1.0.2' }), allocatable: () => ({}) });
    await assert.rejects(vm.setUp(pod('c')), /MountVolume\.SetUp failed for volume "cfg": configmap "settings" not found/);
  });
});

describe('pod volumes (persistentVolumeClaim)', () => {
  const objects = new Map<string, unknown>();
  const api = {
    get: async (path: string) => {
      const o = objects.get(path);
      if (!o) throw notFound('persistentvolumeclaims', '', path.split('/').pop()!);
      return o;
    },
  } as unknown as AgentApi;
  const claimPath = (name: string) => `/api/v1/namespaces/shop/persistentvolumeclaims/${name}`;
  const claimPod = (name: string, claimName: string, readOnly = false): Pod => ({
    metadata: { name, namespace: 'shop', uid: `uid-${name}` },
    spec: {
      containers: [{ name: 'c', image: 'x', volumeMounts: [{ name: 'my-data', mountPath: '/data' }] }],
      volumes: [{ name: 'my-data', persistentVolumeClaim: { claimName, readOnly } }, { name: 'scratch', emptyDir: {} }],
    },
  });
  const manager = (claimsOnly: boolean) =>
    new VolumeManager({ api, clock: new FakeClock(), log: silentLogger(), podDir: (uid) => join(root, uid), fieldRefs: () => ({ nodeName: 'n', nodeIP: '10.0.0.1', podIP: '10.1.0.2' }), allocatable: () => ({}), claimsOnly });

  it("mounts the directory of the claim's volume, made if missing; an unbound or missing claim says so", async () => {
    const dir = join(root, 'storage', 'pvc-1_shop_data');
    objects.set(claimPath('data'), { spec: { volumeName: 'pvc-1' }, status: { phase: 'Bound' } });
    objects.set('/api/v1/persistentvolumes/pvc-1', { spec: { hostPath: { path: dir, type: 'DirectoryOrCreate' } } });
    objects.set(claimPath('waiting'), { spec: {}, status: { phase: 'Pending' } });
    const vm = manager(false);
    const p = claimPod('db', 'data', true);
    await vm.setUp(p);
    assert.deepEqual(vm.mounts(p, p.spec!.containers[0]!), [{ containerPath: '/data', hostPath: dir, readonly: true }]);
    assert.equal(statSync(dir).isDirectory(), true);
    await assert.rejects(vm.setUp(claimPod('w', 'waiting')), /persistentvolumeclaim "waiting" is not bound/);
    await assert.rejects(vm.setUp(claimPod('x', 'nope')), /persistentvolumeclaim "nope" not found/);
    // A volume of a source skiff cannot mount is named by its source, whatever other fields its spec lists first.
    objects.set(claimPath('remote'), { spec: { volumeName: 'pv-csi' }, status: { phase: 'Bound' } });
    objects.set('/api/v1/persistentvolumes/pv-csi', { spec: { volumeAttributesClassName: 'fast', csi: { driver: 'x.example.com', volumeHandle: 'v' } } });
    await assert.rejects(vm.setUp(claimPod('r', 'remote')), /persistentvolume "pv-csi": csi volumes are not supported by skiff/);
  });

  it('gives a host process its claim as a symlink at the mountPath under the pod directory and as SKIFF_VOLUME_<NAME>, and nothing else', async () => {
    const dir = join(root, 'storage', 'pvc-1_shop_data');
    const vm = manager(true);
    const p = claimPod('proc', 'data');
    await vm.setUp(p);
    assert.equal(readlinkSync(join(root, 'uid-proc', 'data')), dir);
    assert.deepEqual(vm.claimEnv(p, p.spec!.containers[0]!), { SKIFF_VOLUME_MY_DATA: dir });
    assert.equal(existsSync(join(root, 'uid-proc', 'volumes')), false, 'the emptyDir is not set up for a host process');
  });
});
