// Real containers end to end: a real containerd (its own root, socket and CNI bridge, started for
// this test), a real `skiff server` and `skiff agent --runtime containerd`, images built here from
// Debian's busybox-static and loaded with `skiff image import` (nothing is downloaded), real kubectl.
// Skipped, saying why, where containerd, runc, the CNI plugins or root are missing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestAgent, TestServer, TEST_JOIN_TOKEN, eventually, SKIFF_BIN, kubectlBinary } from '../support/cluster.js';
import type { ApiClient } from '../../src/client/rest.js';
import type { Node } from '../../src/api/kinds/node.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import { ContainerdDaemon, containerdPrerequisites } from '../../src/cri/containerd-daemon.js';
import { CriClient } from '../../src/cri/client.js';
import { writeBusyboxImage } from '../../src/cri/oci-archive.js';

const missing = containerdPrerequisites();
// Debian's interpreter, where python3-kubernetes is installed.
const PYTHON = '/usr/bin/python3';
const PYTHON_DIR = fileURLToPath(new URL('../../../test/e2e/python', import.meta.url));
function pythonClient(): boolean {
  try {
    execFileSync(PYTHON, ['-c', 'import kubernetes']);
    return true;
  } catch {
    return false;
  }
}
const IMAGE = 'skiff.local/busybox:1.36';
const GREETER = 'skiff.local/greeter:1';

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { encoding: 'utf8' }, (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
}

describe('containerd runtime end to end', { skip: missing.length > 0 ? `needs ${missing.join(', ')}` : false }, () => {
  const s = new TestServer('containerd-e2e');
  const work = mkdtempSync(join(tmpdir(), 'skiff-ctd-'));
  const containerd = new ContainerdDaemon({ dir: join(work, 'containerd'), podCIDR: '10.244.7.0/24', bridge: 'skiff-e2e7', network: 'skiff-e2e7' });
  let agent: TestAgent;
  const agentArgs = () => ['--runtime', 'containerd', '--container-runtime-endpoint', containerd.endpoint];
  /** What containerd runs for a pod: its containers by state, and its ready sandboxes. */
  const inRuntime = async (podUid: string) => {
    const cri = new CriClient({ endpoint: containerd.endpoint, timeoutMs: 10_000 });
    try {
      const labels = { 'io.kubernetes.pod.uid': podUid };
      const containers = await cri.listContainers({ labels });
      const sandboxes = await cri.listPodSandbox({ labels, state: 'SANDBOX_READY' });
      return { running: containers.filter((c) => c.state === 'CONTAINER_RUNNING').map((c) => c.id), sandboxes: sandboxes.map((x) => x.id) };
    } finally {
      cri.close();
    }
  };
  let client: ApiClient;
  const getPod = (name: string) => client.get<Pod>(`/api/v1/namespaces/default/pods/${name}`);
  const podWhere = async (name: string, ok: (p: Pod) => boolean, what: string, ms = 60_000) => {
    let last: Pod | undefined;
    try {
      return await eventually(async () => {
        last = await getPod(name);
        return ok(last) ? last : undefined;
      }, ms, what);
    } catch (e) {
      // Say where it stood: the pod's status and what the agent said last.
      throw new Error(`${(e as Error).message}\npod status: ${JSON.stringify(last?.status)}\nagent log:\n${agent.logs().slice(-4000)}`);
    }
  };

  before(async () => {
    await containerd.start();
    const archive = join(work, 'busybox.tar');
    // Like the Docker Hub busybox image: no entrypoint, sh as its cmd.
    writeBusyboxImage(IMAGE, archive, { Cmd: ['sh'] });
    // An image with an entrypoint, which a pod's args are given to.
    const greeter = join(work, 'greeter.tar');
    writeBusyboxImage(GREETER, greeter, { Entrypoint: ['/bin/sh', '-c'], Cmd: ['echo default greeting'] });
    const imported = await run(process.execPath, [SKIFF_BIN, 'image', 'import', '--container-runtime-endpoint', containerd.endpoint, archive, greeter]);
    assert.equal(imported.code, 0, imported.stderr);
    await s.start(['--token', TEST_JOIN_TOKEN]);
    client = s.client();
    agent = new TestAgent(s, 'ctd-1');
    await agent.start(agentArgs());
  });

  after(async () => {
    await agent?.stop();
    client?.close();
    await s.stop();
    // Sandboxes go first, so no container (and no shim) outlives the test's containerd.
    const cri = new CriClient({ endpoint: containerd.endpoint, timeoutMs: 20_000 });
    try {
      for (const sb of await cri.listPodSandbox()) {
        await cri.stopPodSandbox(sb.id).catch(() => undefined);
        await cri.removePodSandbox(sb.id).catch(() => undefined);
      }
    } catch {
      /* containerd never started */
    } finally {
      cri.close();
    }
    await containerd.stop();
    await run('sh', ['-c', `grep ' ${work}' /proc/mounts | cut -d' ' -f2 | sort -r | xargs -r -n1 umount -l`]);
    rmSync(work, { recursive: true, force: true });
    s.cleanup();
  });

  it("reports containerd's version on the Node", async () => {
    const node = await client.get<Node>('/api/v1/nodes/ctd-1');
    assert.match(node.status?.nodeInfo?.containerRuntimeVersion ?? '', /^containerd:\/\/\d/);
  });

  it("kubectl run with an image and only args runs the image's entrypoint with them; logs are read back exactly", async () => {
    // The image's entrypoint is `sh -c`: the one arg is its script.
    await s.k(['run', 'echoer', `--image=${GREETER}`, '--image-pull-policy=Never', '--restart=Never', '--overrides', JSON.stringify({ spec: { nodeName: 'ctd-1' } }), '--', 'echo "hello from $(hostname)"; echo to-stderr >&2; exit 3']);
    const p = await podWhere('echoer', (x) => x.status?.phase === 'Failed', 'echoer Failed (exit 3)');
    const term = p.status?.containerStatuses?.[0]?.state?.terminated;
    assert.equal(term?.exitCode, 3);
    assert.equal(term?.reason, 'Error');
    assert.match(p.status?.containerStatuses?.[0]?.containerID ?? '', /^containerd:\/\/[0-9a-f]{64}$/);
    assert.match(p.status?.podIP ?? '', /^10\.244\.7\.\d+$/, 'an IP from the node pod range');
    // Both streams land in one file; the runtime copies them concurrently, so only each one's order is kept.
    const logs = await s.k(['logs', 'echoer']);
    assert.deepEqual(logs.split('\n').sort(), ['', 'hello from echoer', 'to-stderr']);
    const stamped = await s.k(['logs', 'echoer', '--timestamps']);
    assert.match(stamped, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z hello from echoer$/m);
  });

  describe('a serving pod', () => {
    // busybox's httpd serves a page naming the pod: what port-forward and the pod IP must reach.
    before(async () => {
      await s.k(['run', 'web', `--image=${IMAGE}`, '--image-pull-policy=Never', '--restart=Never', '--overrides', JSON.stringify({ spec: { nodeName: 'ctd-1' } }), '--', 'sh', '-c', 'mkdir -p /www && echo "served by $(hostname)" > /www/index.html && exec httpd -f -p 8080 -h /www']);
      await podWhere('web', (p) => p.status?.phase === 'Running' && p.status.podIP !== undefined, 'web Running with a pod IP');
    });

    for (const version of ['1.27', '1.33']) {
      // kubectl 1.30 and later offer WebSocket v5.channel.k8s.io first; containerd's streaming
      // server answers v4 at most, so they fall back to SPDY as they do against older servers.
      const kubectl = version === '1.27' ? 'kubectl 1.27 (SPDY)' : `kubectl ${version} (WebSocket offered, SPDY taken)`;
      it(`kubectl exec runs in the container and returns its exit code and both streams: ${kubectl}`, async () => {
        const r = await s.kubectl(['exec', 'web', '--', 'sh', '-c', 'echo "in $(hostname) at $(pwd)"; echo oops >&2; exit 7'], version ? { version } : {});
        assert.equal(r.code, 7, r.stderr);
        assert.equal(r.stdout, 'in web at /\n');
        assert.match(r.stderr, /^oops$/m);
        const ok = await s.kubectl(['exec', 'web', '--', 'cat', '/www/index.html'], version ? { version } : {});
        assert.equal(ok.code, 0, ok.stderr);
        assert.equal(ok.stdout, 'served by web\n');
      });

      it(`kubectl exec -i passes stdin through and ends when it ends: ${kubectl}`, async () => {
        const r = await s.kubectl(['exec', '-i', 'web', '--', 'tr', 'a-z', 'A-Z'], { input: 'hello\nworld\n', ...(version ? { version } : {}) });
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout, 'HELLO\nWORLD\n');
      });
    }

    it('kubectl exec -it gives the command a terminal', async () => {
      // script(1) gives kubectl a terminal of its own, as a person's shell would.
      const cmd = `${kubectlBinary()} --kubeconfig ${s.kubeconfig} exec -it web -- sh -c 'test -t 0 && echo has-a-tty; stty size'`;
      const r = await run('script', ['-qec', cmd, '/dev/null']);
      assert.equal(r.code, 0, r.stderr + r.stdout);
      assert.match(r.stdout, /has-a-tty/);
    });

    it('kubectl cp copies into the container and out of it', async () => {
      const local = join(work, 'to-pod.txt');
      writeFileSync(local, 'copied in\n');
      await s.k(['cp', local, 'web:/tmp/in.txt']);
      assert.equal(await s.k(['exec', 'web', '--', 'cat', '/tmp/in.txt']), 'copied in\n');
      const back = join(work, 'from-pod.html');
      await s.k(['cp', 'web:/www/index.html', back]);
      assert.equal(readFileSync(back, 'utf8'), 'served by web\n');
    });

    it('kubectl port-forward serves a request from the pod, and the pod IP answers from the node', async () => {
      const child = spawn(kubectlBinary(), ['--kubeconfig', s.kubeconfig, 'port-forward', 'pod/web', ':8080'], { stdio: ['ignore', 'pipe', 'pipe'] });
      try {
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (out += d.toString()));
        const port = await eventually(() => /Forwarding from 127\.0\.0\.1:(\d+) -> 8080/.exec(out)?.[1], 20_000, `port-forward listening (${out})`);
        assert.equal(await httpGet(`http://127.0.0.1:${port}/`), 'served by web\n');
        assert.equal(await httpGet(`http://127.0.0.1:${port}/`), 'served by web\n', 'a second connection over the same forward');
      } finally {
        child.kill();
      }
      const ip = (await getPod('web')).status!.podIP!;
      assert.equal(await httpGet(`http://${ip}:8080/`), 'served by web\n');
    });

    it('the Python client execs over WebSocket (v4.channel.k8s.io), with output and exit code', { skip: pythonClient() ? false : 'needs python3-kubernetes (Debian)' }, async () => {
      const r = await run(PYTHON, [join(PYTHON_DIR, 'exec_checks.py'), s.kubeconfig, 'web']);
      assert.equal(r.code, 0, r.stderr + r.stdout);
      assert.match(r.stdout, /ok: exec exit code/);
    });

    it('SIGKILL the agent and start it again: the same container runs on, adopted, none duplicated or orphaned', async () => {
      const before = await getPod('web');
      const id = before.status!.containerStatuses![0]!.containerID!;
      const was = await inRuntime(before.metadata.uid!);
      assert.deepEqual(was.running, [id.replace('containerd://', '')]);
      agent.kill('SIGKILL');
      await agent.proc!.exited;
      await agent.start(agentArgs());
      await eventually(() => agent.logLines('agent started').length === 2, 20_000, 'the second agent started');
      const p = await podWhere('web', (x) => x.status?.containerStatuses?.[0]?.ready === true, 'web Ready under the new agent');
      assert.equal(p.status!.containerStatuses![0]!.containerID, id, 'the same container');
      assert.equal(p.status!.containerStatuses![0]!.restartCount, 0);
      assert.equal(p.status!.podIP, before.status!.podIP);
      assert.deepEqual(await inRuntime(before.metadata.uid!), was, 'the same container and sandbox, nothing new beside them');
      assert.equal(await httpGet(`http://${p.status!.podIP}:8080/`), 'served by web\n');
    });

    it('kubectl delete node: the agent restores its Node and leaves the containers running', async () => {
      const before = await getPod('web');
      const oldUid = (await client.get<Node>('/api/v1/nodes/ctd-1')).metadata.uid;
      const was = await inRuntime(before.metadata.uid!);
      await s.k(['delete', 'node', 'ctd-1', '--wait=false']);
      await eventually(async () => {
        const n = await client.get<Node>('/api/v1/nodes/ctd-1').catch(() => undefined);
        return n !== undefined && n.metadata.uid !== oldUid && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      }, 30_000, 'ctd-1 registered again and Ready');
      const p = await getPod('web');
      assert.equal(p.metadata.uid, before.metadata.uid, 'the same pod');
      assert.equal(p.status?.phase, 'Running');
      assert.deepEqual(await inRuntime(before.metadata.uid!), was, 'its container untouched');
      assert.equal((await s.kubectl(['exec', 'web', '--', 'true'])).code, 0);
    });

    it('exec into a pod that has ended is refused with the reason', async () => {
      const r = await s.kubectl(['exec', 'echoer', '--', 'true']);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /cannot exec into a container in a completed pod; current phase is Failed/);
    });
  });
});

function httpGet(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve(body));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
  });
}
