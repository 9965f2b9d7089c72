// `skiff up --runtime containerd`: a containerd per node, started and stopped with the cluster.
// Every Node gets a pod CIDR from the control plane and reports containerd; a pod runs in its
// node's range; Ctrl-C leaves no containerd, shim, pod bridge or Service rule behind.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import { ApiClient } from '../../src/client/rest.js';
import { containerdPrerequisites } from '../../src/cri/containerd-daemon.js';
import { writeBusyboxImage } from '../../src/cri/oci-archive.js';
import { proxyChains } from '../../src/agent/service-proxy/iptables-rules.js';
import type { KubeList } from '../../src/api/types.js';
import type { Node } from '../../src/api/kinds/node.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import { SKIFF_BIN, eventually, kubectlBinary, processesMentioning, runSkiff } from '../support/cluster.js';
import { freePorts } from '../../src/util/ports.js';

const missing = containerdPrerequisites();
const dataDir = mkdtempSync(join(tmpdir(), 'skiff-up-ctd-'));
const NODES = ['control-plane', 'node-1'];

describe('skiff up --runtime containerd', { skip: missing.length > 0 ? `needs ${missing.join(', ')}` : false }, () => {
  let up: ManagedProcess | undefined;
  after(async () => {
    await up?.stop(60_000);
    if (!process.env.SKIFF_KEEP_TEST_DATA) rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts a containerd per node, gives every Node a pod CIDR, runs a pod in its range, and leaves nothing behind on Ctrl-C', async () => {
    const [port] = await freePorts(1);
    const out = join(dataDir, 'up.out');
    const dir = join(dataDir, 'cluster');
    up = startProcess({ name: 'up', command: process.execPath, args: [SKIFF_BIN, 'up', '--runtime', 'containerd', '--nodes', '1', '--data-dir', dir, '--port', String(port)], output: out });
    await eventually(() => readFileSync(out, 'utf8').includes('cluster ready'), 120_000, `"cluster ready" (${out})`);
    const text = readFileSync(out, 'utf8');
    assert.match(text, /starting 2 containerds, one per node/);
    assert.ok(text.includes(`skiff image load FILE.tar --data-dir ${dir}`), 'the output says how to load an image into every node');

    const client = ApiClient.fromKubeconfig(join(dir, 'kubeconfig'), { timeoutMs: 10_000 });
    try {
      const nodes = (await client.get<KubeList<Node>>('/api/v1/nodes')).items;
      assert.deepEqual(nodes.map((n) => n.metadata.name).sort(), NODES);
      for (const n of nodes) {
        assert.match(n.status?.nodeInfo?.containerRuntimeVersion ?? '', /^containerd:\/\//, n.metadata.name);
        assert.match(n.spec?.podCIDR ?? '', /^10\.42\.\d+\.0\/24$/, `${n.metadata.name} has a range of the cluster CIDR`);
      }
      assert.equal(new Set(nodes.map((n) => n.spec?.podCIDR)).size, 2, 'distinct ranges');

      // An image without a registry, loaded into every node's containerd as the output says.
      const archive = join(dataDir, 'busybox.tar');
      writeBusyboxImage('skiff.local/busybox:1.36', archive, { Cmd: ['sh'] });
      const loaded = await runSkiff(['image', 'load', archive, '--data-dir', dir]);
      assert.equal(loaded.code, 0, loaded.stderr);
      execFileSync(kubectlBinary(), ['--kubeconfig', join(dir, 'kubeconfig'), 'run', 'one', '--image=skiff.local/busybox:1.36', '--', 'sleep', '3600']);
      const range = nodes.find((n) => n.metadata.name === 'node-1')!.spec!.podCIDR!.replace(/0\/24$/, '');
      const pod = await eventually(async () => {
        const p = await client.get<Pod>('/api/v1/namespaces/default/pods/one');
        return p.status?.phase === 'Running' ? p : undefined;
      }, 60_000, 'the pod Running');
      assert.equal(pod.spec?.nodeName, 'node-1', 'the control-plane node keeps its NoSchedule taint');
      assert.ok(pod.status?.podIP?.startsWith(range), `${pod.status?.podIP} in node-1's ${range}0/24`);
    } finally {
      client.close();
    }

    up.signal('SIGINT');
    await eventually(() => readFileSync(out, 'utf8').includes('cluster stopped'), 90_000, '"cluster stopped"');
    await up.exited;
    // A shim goes a moment after the last task it served.
    await eventually(() => processesMentioning(join(dir, 'containerd')).length === 0, 15_000, 'no containerd (or shim) of the cluster left');
    const links = execFileSync('ip', ['-o', 'link']).toString();
    assert.ok(!/ skiff[01]: /.test(links), `no pod bridge left:\n${links}`);
    const nat = execFileSync('iptables-save', ['-t', 'nat']).toString();
    for (const n of NODES) assert.ok(!nat.includes(proxyChains(n).prefix), `no Service rules of ${n} left`);
  });
});
