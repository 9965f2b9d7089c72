// Persistent volumes in real containers: a real containerd (its own root, socket and bridge), a
// real server and `skiff agent --runtime containerd`, an image built here from Debian's
// busybox-static. A StatefulSet's pod writes to its claim (a local-path directory bind-mounted at
// its mountPath), is deleted, and its successor reads the data; reclaim Delete removes the
// directory, Retain keeps it. Skipped, saying why, where containerd, runc, the CNI plugins or root
// are missing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestAgent, TestServer, TEST_JOIN_TOKEN, eventually, SKIFF_BIN } from '../support/cluster.js';
import type { ApiClient } from '../../src/client/rest.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { KubeObject } from '../../src/api/types.js';
import { isStatusError } from '../../src/api/errors.js';
import { ContainerdDaemon, containerdPrerequisites } from '../../src/cri/containerd-daemon.js';
import { writeBusyboxImage } from '../../src/cri/oci-archive.js';
import { removeServiceRules } from '../../src/agent/service-proxy/service-proxy.js';

const missing = containerdPrerequisites();
const IMAGE = 'skiff.local/busybox:1.36';
// This file's own bridge and ranges: other containerd tests may run beside it.
const BRIDGE = 'skvol0';
const CLUSTER_CIDR = '10.62.0.0/16';
const SERVICE_RANGE = '10.162.0.0/16';

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { encoding: 'utf8' }, (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
}

const statefulSet = (reclaim: string) => `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db-${reclaim.toLowerCase()}}
spec:
  selector: {matchLabels: {app: db-${reclaim.toLowerCase()}}}
  serviceName: db
  replicas: 1
  template:
    metadata: {labels: {app: db-${reclaim.toLowerCase()}}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: c
        image: ${IMAGE}
        imagePullPolicy: Never
        command: [sh, -c, 'cat /data/greeting 2>/dev/null || echo "written by $(hostname)" > /data/greeting; exec sleep 3600']
        volumeMounts: [{name: data, mountPath: /data}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      storageClassName: ${reclaim === 'Delete' ? 'local-path' : 'kept'}
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 16Mi}}
`;

const KEPT_CLASS = `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: kept}
provisioner: rancher.io/local-path
reclaimPolicy: Retain
volumeBindingMode: WaitForFirstConsumer
`;

describe('containerd: persistent volumes', { skip: missing.length > 0 ? `needs ${missing.join(', ')}` : false }, () => {
  const s = new TestServer('containerd-volumes-e2e');
  const work = mkdtempSync(join(tmpdir(), 'skiff-ctd-vol-'));
  const containerd = new ContainerdDaemon({ dir: join(work, 'containerd'), bridge: BRIDGE, network: BRIDGE });
  let agent: TestAgent;
  let client: ApiClient;
  const running = (name: string, notUid?: string) =>
    eventually(async () => {
      const p = await client.get<Pod>(`/api/v1/namespaces/default/pods/${name}`).catch(() => undefined);
      return p?.status?.phase === 'Running' && p.metadata.uid !== notUid ? p : undefined;
    }, 60_000, `pod ${name} Running`).catch((e: Error) => {
      throw new Error(`${e.message}\nagent log:\n${agent.logs().slice(-4000)}`);
    });
  const gone = async (path: string) => {
    try {
      await client.get(path);
      return false;
    } catch (e) {
      if (isStatusError(e, 'NotFound')) return true;
      throw e;
    }
  };
  /** Runs the StatefulSet's pod, deletes it, and checks that its successor read what it wrote; answers the volume's name and directory. */
  const writeThenRead = async (reclaim: string) => {
    const name = `db-${reclaim.toLowerCase()}`;
    await s.k(['apply', '-f', '-'], { input: statefulSet(reclaim) });
    const first = await running(`${name}-0`);
    const claim = await client.get<KubeObject>(`/api/v1/namespaces/default/persistentvolumeclaims/data-${name}-0`);
    const pvName = (claim.spec as { volumeName: string }).volumeName;
    const pv = await client.get<KubeObject>(`/api/v1/persistentvolumes/${pvName}`);
    const dir = (pv.spec as { hostPath: { path: string } }).hostPath.path;
    assert.equal(dir, join(agent.dataDir, 'storage', `${pvName}_default_data-${name}-0`));
    await eventually(() => existsSync(join(dir, 'greeting')), 20_000, 'the container wrote to its claim');
    assert.equal(readFileSync(join(dir, 'greeting'), 'utf8'), `written by ${name}-0\n`);
    await s.k(['delete', 'pod', `${name}-0`, '--wait=false']);
    await running(`${name}-0`, first.metadata.uid);
    await eventually(async () => (await s.k(['logs', `${name}-0`]).catch(() => '')).includes(`written by ${name}-0`), 20_000, 'the successor read the data');
    await s.k(['delete', 'statefulset', name]);
    await eventually(() => gone(`/api/v1/namespaces/default/pods/${name}-0`), 30_000, `${name}-0 gone`);
    await s.k(['delete', 'pvc', `data-${name}-0`]);
    return { pvName, dir };
  };

  before(async () => {
    // A bridge an aborted run left keeps its old address, which the CNI plugin refuses to change.
    await run('ip', ['link', 'del', BRIDGE]);
    await containerd.start();
    const archive = join(work, 'busybox.tar');
    writeBusyboxImage(IMAGE, archive, { Cmd: ['sh'] });
    const imported = await run(process.execPath, [SKIFF_BIN, 'image', 'import', '--container-runtime-endpoint', containerd.endpoint, archive]);
    assert.equal(imported.code, 0, imported.stderr);
    await s.start(['--token', TEST_JOIN_TOKEN, '--allocate-node-cidrs', 'true', '--cluster-cidr', CLUSTER_CIDR, '--service-cluster-ip-range', SERVICE_RANGE]);
    client = s.client();
    agent = new TestAgent(s, 'ctd-vol-1');
    await agent.start(['--runtime', 'containerd', '--container-runtime-endpoint', containerd.endpoint]);
  });

  after(async () => {
    await agent?.stop();
    client?.close();
    await s.stop();
    await containerd.removeSandboxes().catch(() => undefined);
    await containerd.stop();
    for (const dir of [work, s.dataDir]) await run('sh', ['-c', `grep ' ${dir}' /proc/mounts | cut -d' ' -f2 | sort -r | xargs -r -n1 umount -l`]);
    rmSync(work, { recursive: true, force: true });
    await run('ip', ['link', 'del', BRIDGE]);
    await removeServiceRules('ctd-vol-1').catch(() => undefined);
    s.cleanup();
  });

  it("keeps a StatefulSet pod's data for its successor; reclaim Delete then removes the volume and its directory", async () => {
    const { pvName, dir } = await writeThenRead('Delete');
    await eventually(() => gone(`/api/v1/persistentvolumes/${pvName}`), 30_000, 'volume deleted');
    assert.equal(existsSync(dir), false, 'the directory is removed');
  });

  it('keeps the volume (Released) and its data under reclaim Retain', async () => {
    await s.k(['apply', '-f', '-'], { input: KEPT_CLASS });
    const { pvName, dir } = await writeThenRead('Retain');
    await eventually(async () => ((await client.get<KubeObject>(`/api/v1/persistentvolumes/${pvName}`)).status as { phase?: string }).phase === 'Released', 30_000, 'volume Released');
    assert.equal(readFileSync(join(dir, 'greeting'), 'utf8'), 'written by db-retain-0\n');
  });
});
