// Real containers end to end: a real containerd (its own root, socket and CNI bridge, started for
// this test), a real `skiff server` and `skiff agent --runtime containerd`, images built here from
// Debian's busybox-static and loaded with `skiff image import` (nothing is downloaded), real kubectl.
// Skipped, saying why, where containerd, runc, the CNI plugins or root are missing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import { fileURLToPath } from 'node:url';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
import { removeServiceRules } from '../../src/agent/service-proxy/service-proxy.js';
import { freePorts } from '../../src/util/ports.js';

const missing = containerdPrerequisites();
// Debian's interpreter, where python3-kubernetes is installed.
const PYTHON = '/usr/bin/python3';
const PYTHON_DIR = fileURLToPath(new URL('../../../test/e2e/python', import.meta.url));
/** Debian's docker-registry (the CNCF distribution registry), for a registry of the test's own. */
function registryBinary(): string | undefined {
  return existsSync('/usr/bin/docker-registry') ? '/usr/bin/docker-registry' : undefined;
}
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
const BRIDGE = 'skiff-e2e';
const BRIDGE2 = 'skiff-e2e2';

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { encoding: 'utf8' }, (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
}

describe('containerd runtime end to end', { skip: missing.length > 0 ? `needs ${missing.join(', ')}` : false }, () => {
  const s = new TestServer('containerd-e2e');
  const work = mkdtempSync(join(tmpdir(), 'skiff-ctd-'));
  // No pod CIDR of its own: the control plane allocates one and the agent hands it to containerd.
  // A registry of the test's own, over plain HTTP, with a password (its address is known once a port is).
  const plainHttp: string[] = [];
  let registry: ManagedProcess | undefined;
  let registryAddress = '';
  const containerd = new ContainerdDaemon({ dir: join(work, 'containerd'), bridge: BRIDGE, network: BRIDGE, plainHttpRegistries: plainHttp });
  // A second node on the same machine, started by the test that needs it.
  const containerd2 = new ContainerdDaemon({ dir: join(work, 'containerd-2'), bridge: BRIDGE2, network: BRIDGE2 });
  let agent2: TestAgent | undefined;
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

  /** Applies a pod of one container on ctd-1 (the busybox image, never pulled), with these container, pod spec and metadata fields. */
  const applyPod = (name: string, container: Record<string, unknown>, spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) =>
    s.k(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, ...meta }, spec: { nodeName: 'ctd-1', ...spec, containers: [{ name: 'c', image: IMAGE, imagePullPolicy: 'Never', ...container }] } }) });

  before(async () => {
    // A bridge an aborted run left keeps its old address, which the CNI plugin refuses to change.
    for (const b of [BRIDGE, BRIDGE2]) await run('ip', ['link', 'del', b]);
    if (registryBinary()) {
      registryAddress = `127.0.0.1:${(await freePorts(1))[0]!}`;
      plainHttp.push(registryAddress);
    }
    await containerd.start();
    const archive = join(work, 'busybox.tar');
    // Like the Docker Hub busybox image: no entrypoint, sh as its cmd.
    writeBusyboxImage(IMAGE, archive, { Cmd: ['sh'] });
    // An image with an entrypoint, which a pod's args are given to.
    const greeter = join(work, 'greeter.tar');
    writeBusyboxImage(GREETER, greeter, { Entrypoint: ['/bin/sh', '-c'], Cmd: ['echo default greeting'] });
    const imported = await run(process.execPath, [SKIFF_BIN, 'image', 'import', '--container-runtime-endpoint', containerd.endpoint, archive, greeter]);
    assert.equal(imported.code, 0, imported.stderr);
    await s.start(['--token', TEST_JOIN_TOKEN, '--allocate-node-cidrs', 'true', '--cluster-cidr', '10.244.0.0/16']);
    client = s.client();
    agent = new TestAgent(s, 'ctd-1');
    await agent.start(agentArgs());
  });

  after(async () => {
    await registry?.stop(5_000);
    await Promise.all([agent?.stop(), agent2?.stop()]);
    client?.close();
    await s.stop();
    // Sandboxes go first, so no container (and no shim) outlives the test's containerd.
    for (const d of [containerd, containerd2]) {
      await d.removeSandboxes().catch(() => undefined);
      await d.stop();
    }
    // What the runtime mounted (container root filesystems) and the agent (tmpfs volumes of pods it stopped but kept).
    for (const dir of [work, s.dataDir]) await run('sh', ['-c', `grep ' ${dir}' /proc/mounts | cut -d' ' -f2 | sort -r | xargs -r -n1 umount -l`]);
    rmSync(work, { recursive: true, force: true });
    for (const b of [BRIDGE, BRIDGE2]) await run('ip', ['link', 'del', b]);
    // The agents' Service rules, had they no time to remove them themselves.
    for (const n of ['ctd-1', 'ctd-2']) await removeServiceRules(n).catch(() => undefined);
    s.cleanup();
  });

  it("reports containerd's version on the Node, which has a pod CIDR from the control plane", async () => {
    const node = await client.get<Node>('/api/v1/nodes/ctd-1');
    assert.match(node.status?.nodeInfo?.containerRuntimeVersion ?? '', /^containerd:\/\/\d/);
    assert.equal(node.spec?.podCIDR, '10.244.0.0/24');
    assert.deepEqual(node.spec?.podCIDRs, ['10.244.0.0/24']);
  });

  it("kubectl run with an image and only args runs the image's entrypoint with them; logs are read back exactly", async () => {
    // The image's entrypoint is `sh -c`: the one arg is its script.
    await s.k(['run', 'echoer', `--image=${GREETER}`, '--image-pull-policy=Never', '--restart=Never', '--overrides', JSON.stringify({ spec: { nodeName: 'ctd-1' } }), '--', 'echo "hello from $(hostname)"; echo to-stderr >&2; exit 3']);
    const p = await podWhere('echoer', (x) => x.status?.phase === 'Failed', 'echoer Failed (exit 3)');
    const term = p.status?.containerStatuses?.[0]?.state?.terminated;
    assert.equal(term?.exitCode, 3);
    assert.equal(term?.reason, 'Error');
    assert.match(p.status?.containerStatuses?.[0]?.containerID ?? '', /^containerd:\/\/[0-9a-f]{64}$/);
    assert.match(p.status?.podIP ?? '', /^10\.244\.0\.\d+$/, "an IP from the node's pod CIDR");
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

    // stdinOnce, as `kubectl run -i` sets it: the runtime closes the container's stdin when the
    // attached client's ends and keeps its output attached; without it the client is detached at EOF.
    it("kubectl attach -i joins a running container's own stdin and stdout", async () => {
      await applyPod('reader', { stdin: true, stdinOnce: true, command: ['sh', '-c', 'read line; echo "got $line"'] }, { restartPolicy: 'Never' });
      await podWhere('reader', (p) => p.status?.phase === 'Running', 'reader Running');
      const r = await s.kubectl(['attach', '-i', 'reader'], { input: 'hello\n' });
      assert.match(r.stdout, /got hello/, r.stderr);
      await podWhere('reader', (p) => p.status?.phase === 'Succeeded', 'reader done once it read its line');
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
      assert.equal((await client.get<Node>('/api/v1/nodes/ctd-1')).spec?.podCIDR, '10.244.0.0/24', 'the Node came back with the range its pods are from');
      assert.equal((await s.kubectl(['exec', 'web', '--', 'true'])).code, 0);
    });

    it('a container over its memory limit ends OOMKilled', async () => {
      // tail keeps the last lines of what it reads; /dev/zero has no line ends, so it keeps all of it.
      await applyPod('hog', { command: ['tail', '/dev/zero'], resources: { limits: { memory: '24Mi' } } }, { restartPolicy: 'Never' });
      const p = await podWhere('hog', (x) => x.status?.phase === 'Failed', 'hog Failed');
      const term = p.status?.containerStatuses?.[0]?.state?.terminated;
      assert.equal(term?.reason, 'OOMKilled');
      assert.equal(term?.exitCode, 137);
    });

    it('exec into a pod that has ended is refused with the reason', async () => {
      const r = await s.kubectl(['exec', 'echoer', '--', 'true']);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /cannot exec into a container in a completed pod; current phase is Failed/);
    });
  });

  it("three replicas of a fixed-port server run on one node with their own IPs, reached through their Service's cluster IP", async () => {
    // The image is tagged (IfNotPresent) and present: nothing is pulled. ctd-1 is the only node.
    await s.k(['create', 'deployment', 'hello', `--image=${IMAGE}`, '--replicas=3', '--port=8080', '--', 'sh', '-c', 'mkdir -p /www && echo "$(hostname)" > /www/index.html && exec httpd -f -p 8080 -h /www']);
    await s.k(['expose', 'deployment', 'hello', '--port=80', '--target-port=8080']);
    const pods = await eventually(async () => {
      const list = await client.get<{ items: Pod[] }>('/api/v1/namespaces/default/pods', { query: { labelSelector: 'app=hello' } });
      const running = list.items.filter((p) => p.status?.phase === 'Running' && p.status.podIP && p.spec?.nodeName === 'ctd-1' && !p.metadata.deletionTimestamp);
      return running.length === 3 && list.items.length === 3 ? running : undefined;
    }, 60_000, 'three hello pods Running');
    assert.equal(new Set(pods.map((p) => p.status!.podIP)).size, 3, 'distinct pod IPs');
    const clusterIP = JSON.parse(await s.k(['get', 'service', 'hello', '-o', 'json'])).spec.clusterIP as string;
    const names = new Set(pods.map((p) => p.metadata.name!));
    // Each connection goes to one of the three at random: all three answer within a few dozen.
    const seen = new Set<string>();
    let last = '';
    await eventually(async () => {
      const body = await httpGet(`http://${clusterIP}/`, { fresh: true }).catch((e: Error) => `(${e.message})`);
      last = body;
      if (names.has(body.trim())) seen.add(body.trim());
      return seen.size === 3;
    }, 60_000, `all three pods answering on ${clusterIP}:80`, 50).catch(async (e: Error) => {
      const dbg = await run('sh', ['-c', `curl -sv --max-time 3 http://${clusterIP}/ 2>&1; iptables -t nat -S | grep SKIFF; ip route; ip addr`]);
      throw new Error(`${e.message}; seen ${[...seen].join(', ')}; last answer ${last}\n${dbg.stdout}`);
    });
    // And from a pod: the Service's address from inside the pod network (busybox's nc; its static
    // wget can crash resolving even an address).
    const fromPod = await eventually(async () => {
      const r = await s.kubectl(['exec', pods[0]!.metadata.name!, '--', 'sh', '-c', `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${clusterIP} 80 | tail -n 1`]);
      return r.code === 0 && names.has(r.stdout.trim()) ? r.stdout.trim() : undefined;
    }, 30_000, 'a pod reaching the cluster IP');
    assert.ok(names.has(fromPod));
    await s.k(['delete', 'service', 'hello']);
    await s.k(['delete', 'deployment', 'hello']);
  });

  it('pulls from a registry that wants a password with the pod\'s imagePullSecrets, and says ErrImagePull without them', { skip: registryBinary() ? false : 'needs docker-registry (Debian)' }, async () => {
    const dir = join(work, 'registry');
    mkdirSync(dir, { recursive: true });
    const hash = execFileSync(PYTHON, ['-W', 'ignore', '-c', "import crypt; print(crypt.crypt('s3cret', crypt.mksalt(crypt.METHOD_BLOWFISH)))"]).toString().trim();
    writeFileSync(join(dir, 'htpasswd'), `puller:${hash}\n`);
    writeFileSync(join(dir, 'config.yml'), ['version: 0.1', 'log:', '  level: warn', 'storage:', '  filesystem:', `    rootdirectory: ${join(dir, 'data')}`, 'http:', `  addr: ${registryAddress}`, 'auth:', '  htpasswd:', '    realm: skiff-test', `    path: ${join(dir, 'htpasswd')}`, ''].join('\n'));
    registry = startProcess({ name: 'registry', command: registryBinary()!, args: ['serve', join(dir, 'config.yml')], output: join(dir, 'registry.log') });
    await eventually(async () => (await httpGet(`http://${registryAddress}/v2/`).catch((e: Error) => e.message)).startsWith('401'), 20_000, 'the registry asking for a password');
    // The image goes up with ctr, from a namespace of its own (not the node's).
    const ctr = (...args: string[]) => run('ctr', ['--address', containerd.socket, '--namespace', 'push', ...args]);
    const pushed = `${registryAddress}/team/busybox:1`;
    for (const step of [['images', 'import', join(work, 'busybox.tar')], ['images', 'tag', IMAGE, pushed], ['images', 'push', '--plain-http', '--user', 'puller:s3cret', pushed]]) {
      const r = await ctr(...step);
      assert.equal(r.code, 0, `ctr ${step.join(' ')}: ${r.stderr}`);
    }
    const pod = (name: string, secrets: { name: string }[]) => applyPod(name, { image: pushed, imagePullPolicy: 'Always', command: ['sleep', '3600'] }, { imagePullSecrets: secrets });
    await pod('no-cred', []);
    const refused = await podWhere('no-cred', (p) => ['ErrImagePull', 'ImagePullBackOff'].includes(p.status?.containerStatuses?.[0]?.state?.waiting?.reason ?? ''), 'no-cred refused by the registry');
    assert.match(refused.status!.containerStatuses![0]!.state!.waiting!.message ?? '', /401|unauthorized|authorization/i);
    await s.k(['create', 'secret', 'docker-registry', 'regcred', `--docker-server=${registryAddress}`, '--docker-username=puller', '--docker-password=s3cret']);
    await pod('with-cred', [{ name: 'regcred' }]);
    const p = await podWhere('with-cred', (x) => x.status?.phase === 'Running', 'with-cred Running');
    assert.match(p.status?.containerStatuses?.[0]?.imageID ?? '', /sha256:/);
    await s.k(['delete', 'pod', 'no-cred', 'with-cred', '--wait=false']);
  });

  it('probes run in and against the container: HTTP readiness to the pod IP, an exec liveness probe inside that restarts it', async () => {
    await applyPod(
      'probed',
      {
        command: ['sh', '-c', 'touch /tmp/alive; mkdir -p /www && echo ok > /www/index.html && exec httpd -f -p 8080 -h /www'],
        readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
        livenessProbe: { exec: { command: ['test', '-f', '/tmp/alive'] }, periodSeconds: 1, failureThreshold: 1 },
      },
      { terminationGracePeriodSeconds: 1 },
    );
    await podWhere('probed', (p) => p.status?.containerStatuses?.[0]?.ready === true, 'probed Ready through its HTTP probe');
    // The file is in the container's own filesystem: only an exec inside it sees it gone.
    await s.k(['exec', 'probed', '--', 'rm', '/tmp/alive']);
    const p = await podWhere('probed', (x) => (x.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1, 'probed restarted by its liveness probe');
    // Stopped as any container is: SIGTERM, SIGKILL after the grace period.
    assert.ok([137, 143].includes(p.status?.containerStatuses?.[0]?.lastState?.terminated?.exitCode ?? 0), JSON.stringify(p.status?.containerStatuses?.[0]?.lastState));
    await s.k(['delete', 'pod', 'probed', '--wait=false']);
  });

  it('pods on two nodes of one machine reach each other, directly and through a Service', async () => {
    await containerd2.start();
    const imported = await run(process.execPath, [SKIFF_BIN, 'image', 'import', '--container-runtime-endpoint', containerd2.endpoint, join(work, 'busybox.tar')]);
    assert.equal(imported.code, 0, imported.stderr);
    agent2 = new TestAgent(s, 'ctd-2');
    await agent2.start(['--runtime', 'containerd', '--container-runtime-endpoint', containerd2.endpoint]);
    const node2 = await client.get<Node>('/api/v1/nodes/ctd-2');
    assert.equal(node2.spec?.podCIDR, '10.244.1.0/24', 'the next range for the second node');
    for (const n of [1, 2]) {
      await s.k(['run', `peer${n}`, `--image=${IMAGE}`, '--overrides', JSON.stringify({ spec: { nodeName: `ctd-${n}` } }), '--', 'sh', '-c', `mkdir -p /w && echo peer${n} > /w/index.html && exec httpd -f -p 8080 -h /w`]);
    }
    const ip = async (n: number) => (await podWhere(`peer${n}`, (p) => p.status?.phase === 'Running' && p.status.podIP !== undefined, `peer${n} Running`)).status!.podIP!;
    const [ip1, ip2] = [await ip(1), await ip(2)];
    assert.match(ip2, /^10\.244\.1\.\d+$/);
    const get = (from: string, to: string, port: number) => s.kubectl(['exec', from, '--', 'sh', '-c', `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${to} ${port} | tail -n 1`]);
    await eventually(async () => (await get('peer1', ip2, 8080)).stdout.trim() === 'peer2', 20_000, 'peer1 on ctd-1 reaching peer2 on ctd-2');
    await eventually(async () => (await get('peer2', ip1, 8080)).stdout.trim() === 'peer1', 20_000, 'and back');
    await s.k(['expose', 'pod', 'peer2', '--port=80', '--target-port=8080']);
    const clusterIP = JSON.parse(await s.k(['get', 'service', 'peer2', '-o', 'json'])).spec.clusterIP as string;
    await eventually(async () => (await get('peer1', clusterIP, 80)).stdout.trim() === 'peer2', 20_000, "peer1 reaching peer2 through its Service's cluster IP");
    await s.k(['delete', 'service', 'peer2']);
    await s.k(['delete', 'pod', 'peer1', 'peer2', '--wait=false']);
  });

  describe('volumes', () => {
    const hostDir = join(work, 'host-dir');
    before(async () => {
      await s.k(['create', 'configmap', 'app-config', '--from-literal=greeting=hello']);
      await s.k(['create', 'secret', 'generic', 'app-secret', '--from-literal=password=s3cret']);
      await applyPod(
        'vols',
        {
          command: ['sh', '-c', 'echo from-the-pod > /host/written; exec sleep 3600'],
          volumeMounts: [
            { name: 'cfg', mountPath: '/etc/cfg' },
            { name: 'sec', mountPath: '/etc/sec' },
            { name: 'scratch', mountPath: '/scratch' },
            { name: 'shared', mountPath: '/shared' },
            { name: 'down', mountPath: '/etc/pod' },
            { name: 'host', mountPath: '/host' },
          ],
        },
        {
          volumes: [
            { name: 'cfg', configMap: { name: 'app-config' } },
            { name: 'sec', secret: { secretName: 'app-secret', defaultMode: 0o400 } },
            { name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '8Mi' } },
            { name: 'shared', emptyDir: {} },
            { name: 'down', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }, { path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } },
            { name: 'host', hostPath: { path: hostDir, type: 'DirectoryOrCreate' } },
          ],
        },
        { labels: { app: 'vols' } },
      );
      await podWhere('vols', (p) => p.status?.phase === 'Running', 'vols Running');
    });
    const inPod = (script: string) => s.k(['exec', 'vols', '--', 'sh', '-c', script]);

    it('mounts configMap, secret (with its mode), downwardAPI, emptyDir (tmpfs for medium: Memory) and hostPath volumes', async () => {
      assert.equal(await inPod('cat /etc/cfg/greeting'), 'hello');
      assert.equal(await inPod('cat /etc/sec/password'), 's3cret');
      assert.equal(await inPod('stat -L -c %a /etc/sec/password'), '400\n');
      assert.equal(await inPod('cat /etc/pod/labels; echo; cat /etc/pod/name'), 'app="vols"\nvols');
      assert.match(await inPod('grep " /scratch " /proc/mounts'), /^tmpfs \/scratch tmpfs /);
      assert.doesNotMatch(await inPod('grep " /shared " /proc/mounts || true'), /tmpfs/);
      await eventually(() => existsSync(join(hostDir, 'written')), 10_000, 'the pod writing into its hostPath');
      assert.equal(readFileSync(join(hostDir, 'written'), 'utf8'), 'from-the-pod\n');
      const r = await s.kubectl(['exec', 'vols', '--', 'sh', '-c', 'echo x > /etc/cfg/new']);
      assert.notEqual(r.code, 0, 'configMap volumes are read-only');
      assert.match(r.stderr, /Read-only file system/);
    });

    it('every container gets its service-account token, the cluster CA and its namespace', async () => {
      const pod = await getPod('vols');
      assert.ok(pod.spec!.volumes!.some((v) => v.name.startsWith('kube-api-access-')), 'ServiceAccount admission added the volume');
      assert.equal(await inPod('cat /var/run/secrets/kubernetes.io/serviceaccount/namespace'), 'default');
      assert.match(await inPod('cat /var/run/secrets/kubernetes.io/serviceaccount/ca.crt'), /^-----BEGIN CERTIFICATE-----/);
      const token = await inPod('cat /var/run/secrets/kubernetes.io/serviceaccount/token');
      const review = await client.create<{ status?: { authenticated?: boolean; user?: { username?: string } } }>('/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
      assert.equal(review.status?.user?.username, 'system:serviceaccount:default:default');
    });

    it('an in-cluster client (the Python client, from the host through hostPath) uses its projected token', { skip: pythonClient() ? false : 'needs python3-kubernetes (Debian)' }, async () => {
      await s.k(['create', 'rolebinding', 'default-view', '--clusterrole=view', '--serviceaccount=default:default']);
      // The test's API server listens on loopback: the pod shares the node's network to reach it.
      const script = ['from kubernetes import client, config', 'config.load_incluster_config()', "pods = client.CoreV1Api().list_namespaced_pod('default')", "print('sees', sorted(p.metadata.name for p in pods.items if p.metadata.name == 'in-cluster'))"].join('; ');
      const ro = (name: string, path: string) => ({ name, hostPath: { path, type: 'Directory' } });
      await applyPod(
        'in-cluster',
        { command: ['/usr/bin/python3', '-c', script], volumeMounts: ['usr', 'lib', 'lib64'].map((n) => ({ name: n, mountPath: `/${n}`, readOnly: true })) },
        { hostNetwork: true, restartPolicy: 'Never', volumes: [ro('usr', '/usr'), ro('lib', '/lib'), ro('lib64', '/lib64')] },
      );
      await podWhere('in-cluster', (p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed', 'the in-cluster client done');
      assert.equal(await s.k(['logs', 'in-cluster']), "sees ['in-cluster']\n");
    });

    it('configMap and secret changes reach the running container in place', async () => {
      await s.k(['create', 'configmap', 'app-config', '--from-literal=greeting=updated', '--dry-run=client', '-o', 'yaml'], {}).then((y) => s.k(['apply', '-f', '-'], { input: y }));
      await s.k(['create', 'secret', 'generic', 'app-secret', '--from-literal=password=rotated', '--dry-run=client', '-o', 'yaml']).then((y) => s.k(['apply', '-f', '-'], { input: y }));
      await eventually(async () => (await inPod('cat /etc/cfg/greeting')) === 'updated', 40_000, 'the new greeting in the volume');
      await eventually(async () => (await inPod('cat /etc/sec/password')) === 'rotated', 40_000, 'the new password in the volume');
      const p = await getPod('vols');
      assert.equal(p.status?.containerStatuses?.[0]?.restartCount, 0, 'without a restart');
    });
  });

});

/** The body of a GET; `fresh`: on a connection of its own (a Service picks an endpoint per connection). */
function httpGet(url: string, o: { fresh?: boolean } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: 10_000, ...(o.fresh ? { agent: false } : {}) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${res.statusCode} ${body.slice(0, 200)}`))));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
  });
}
