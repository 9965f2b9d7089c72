// Resource metrics of real containers: a containerd of the test's own (its own bridge, pod and
// service ranges), a busybox container burning CPU, the agent reading CRI ListContainerStats, and
// real kubectl top following the load up and, once the loop is told to stop, down again.
// Skipped, saying why, where containerd, runc, the CNI plugins or root are missing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestAgent, TestServer, TEST_JOIN_TOKEN, eventually, SKIFF_BIN } from '../support/cluster.js';
import { ContainerdDaemon, containerdPrerequisites } from '../../src/cri/containerd-daemon.js';
import { writeBusyboxImage } from '../../src/cri/oci-archive.js';
import { removeServiceRules } from '../../src/agent/service-proxy/service-proxy.js';

const missing = containerdPrerequisites();
const IMAGE = 'skiff.local/busybox:1.36';
const BRIDGE = 'skmet0';
const NODE = 'met-ctd';

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { encoding: 'utf8' }, (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
}

/** The CPU column of a `kubectl top` row, in millicores. */
function cpuMillis(out: string, name: string): number | undefined {
  const cell = out.split('\n').find((l) => l.split(/\s+/)[0] === name)?.split(/\s+/)[1];
  return cell === undefined ? undefined : Number(cell.replace(/m$/, ''));
}

describe('resource metrics of containerd containers', { skip: missing.length > 0 ? `needs ${missing.join(', ')}` : false }, () => {
  const s = new TestServer('metrics-ctd');
  const work = mkdtempSync(join(tmpdir(), 'skiff-met-'));
  const containerd = new ContainerdDaemon({ dir: join(work, 'containerd'), bridge: BRIDGE, network: BRIDGE });
  const agent = new TestAgent(s, NODE);

  before(async () => {
    await run('ip', ['link', 'del', BRIDGE]);
    await containerd.start();
    const archive = join(work, 'busybox.tar');
    writeBusyboxImage(IMAGE, archive, { Cmd: ['sh'] });
    const imported = await run(process.execPath, [SKIFF_BIN, 'image', 'import', '--container-runtime-endpoint', containerd.endpoint, archive]);
    assert.equal(imported.code, 0, imported.stderr);
    await s.start(['--token', TEST_JOIN_TOKEN, '--allocate-node-cidrs', 'true', '--cluster-cidr', '10.63.0.0/16', '--service-cluster-ip-range', '10.163.0.0/16', '--metric-resolution', '2s']);
    await agent.start(['--runtime', 'containerd', '--container-runtime-endpoint', containerd.endpoint]);
    const pod = (name: string, command: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { nodeName: NODE, terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: IMAGE, imagePullPolicy: 'Never', command: ['sh', '-c', command] }] },
    });
    await s.k(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [pod('burner', 'while [ ! -e /tmp/stop ]; do :; done; exec sleep 3600'), pod('idle', 'exec sleep 3600')] }) });
    await eventually(async () => (await s.k(['get', 'pods', '-o', 'jsonpath={.items[*].status.phase}'])) === 'Running Running', 60_000, 'pods Running');
  });

  after(async () => {
    await agent.stop();
    await s.stop();
    await containerd.removeSandboxes().catch(() => undefined);
    await containerd.stop();
    await run('sh', ['-c', `grep ' ${work}' /proc/mounts | cut -d' ' -f2 | sort -r | xargs -r -n1 umount -l`]);
    rmSync(work, { recursive: true, force: true });
    await run('ip', ['link', 'del', BRIDGE]);
    await removeServiceRules(NODE).catch(() => undefined);
    s.cleanup();
  });

  it("the summary API carries containerd's cgroup figures for each container", async () => {
    type Summary = { pods: { podRef: { name: string }; containers: { name: string; cpu: { usageCoreNanoSeconds: number }; memory: { workingSetBytes: number } }[] }[] };
    const summary = await eventually(async () => {
      const sum = JSON.parse(await s.k(['get', '--raw', `/api/v1/nodes/${NODE}/proxy/stats/summary`])) as Summary;
      return sum.pods.length === 2 ? sum : undefined;
    }, 15_000, 'both pods in the summary');
    const burner = summary.pods.find((p) => p.podRef.name === 'burner')!.containers[0]!;
    assert.equal(burner.name, 'c');
    assert.ok(burner.cpu.usageCoreNanoSeconds > 0 && burner.memory.workingSetBytes > 0, JSON.stringify(burner));
  });

  it('kubectl top follows a container that burns CPU, then stops', async () => {
    await eventually(async () => {
      const out = await s.k(['top', 'pods']);
      const burn = cpuMillis(out, 'burner');
      const idle = cpuMillis(out, 'idle');
      return burn !== undefined && idle !== undefined && burn >= 100 && idle <= 20 ? out : undefined;
    }, 30_000, 'kubectl top pods: burner busy, idle idle');
    assert.match(await s.k(['top', 'pod', 'burner', '--containers']), /^burner\s+c\s+\d+m\s+\d+Mi/m);
    assert.ok((cpuMillis(await s.k(['top', 'nodes']), NODE) ?? 0) >= 100, 'the node carries the loop');
    await s.k(['exec', 'burner', '--', 'touch', '/tmp/stop']);
    await eventually(async () => (cpuMillis(await s.k(['top', 'pods']), 'burner') ?? Infinity) <= 20, 30_000, 'kubectl top pods: burner idle again');
  });
});
