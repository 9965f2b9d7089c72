// Networking as k3s ships it, end to end on machines simulated as network namespaces on this host:
// each "machine" (sknet-a, sknet-b) has its own network stack, joined to the others by a veth pair
// into one bridge (sknet0) in this namespace, and runs its own containerd and `skiff agent`; the
// server runs here, reached over the bridge. Every address is on that bridge or inside those
// namespaces (the node link 10.64.255.0/24, pods 10.64.0.0/17, Services 10.164.0.0/16), or on
// loopback (the local cloud's load balancer addresses). Real containerd, real kubectl, images made
// from Debian's busybox-static. Skipped, saying why, where containerd, runc, the CNI plugins or
// root are missing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestAgent, TestServer, TEST_JOIN_TOKEN, eventually, SKIFF_BIN } from '../support/cluster.js';
import type { ApiClient } from '../../src/client/rest.js';
import type { Node } from '../../src/api/kinds/node.js';
import type { Service } from '../../src/api/kinds/service.js';
import { ContainerdDaemon, containerdPrerequisites } from '../../src/cri/containerd-daemon.js';
import { writeBusyboxImage } from '../../src/cri/oci-archive.js';
import { freePorts } from '../../src/util/ports.js';
import type { ManagedProcess } from '../../src/util/processes.js';
import { startTestCloud } from '../support/cloud.js';
import { httpGet, makeMachines, removeMachines, run } from '../support/netns-machines.js';

const missing = containerdPrerequisites();
const IMAGE = 'skiff.local/busybox:1.36';
const LINK = 'sknet0';
const POD_BRIDGE = 'sknet1';
const SERVER_IP = '10.64.255.1';
const MACHINES = [
  { name: 'net-a', netns: 'sknet-a', ip: '10.64.255.11' },
  { name: 'net-b', netns: 'sknet-b', ip: '10.64.255.12' },
] as const;

describe('networking: NodePort, LoadBalancer and one pod network across machines', { skip: missing.length > 0 ? `needs ${missing.join(', ')}` : false }, () => {
  const s = new TestServer('net-e2e');
  const work = mkdtempSync(join(tmpdir(), 'skiff-net-'));
  const daemons = MACHINES.map((m) => new ContainerdDaemon({ dir: join(work, m.netns), bridge: POD_BRIDGE, network: `${POD_BRIDGE}-${m.netns}`, netns: m.netns }));
  const agents: TestAgent[] = [];
  let client: ApiClient;
  let cloud: ManagedProcess | undefined;

  /** A pod on `node` serving its own name over HTTP on 8080. */
  const serve = (name: string, node: string, labels: Record<string, string>) =>
    s.k(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, labels },
        spec: {
          nodeName: node,
          terminationGracePeriodSeconds: 0,
          containers: [{ name: 'c', image: IMAGE, imagePullPolicy: 'Never', command: ['sh', '-c', `mkdir -p /www && echo ${name} > /www/index.html && exec httpd -f -p 8080 -h /www`] }],
        },
      }),
    });
  const service = (name: string, spec: Record<string, unknown>) =>
    s.k(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }], ...spec } }) });
  const getService = (name: string) => client.get<Service>(`/api/v1/namespaces/default/services/${name}`);
  const podIP = async (name: string) => {
    let last: unknown;
    try {
      return await eventually(async () => {
        const p = await client.get<{ status?: { podIP?: string; phase?: string } }>(`/api/v1/namespaces/default/pods/${name}`);
        last = p.status;
        return p.status?.phase === 'Running' && p.status.podIP ? p.status.podIP : undefined;
      }, 60_000, `pod ${name} running with an address`);
    } catch (e) {
      throw new Error(`${(e as Error).message}\npod status: ${JSON.stringify(last)}\nagent logs:\n${agents.map((a) => a.logs().slice(-3000)).join('\n')}`);
    }
  };
  /** A GET from inside a pod (busybox's nc: its static wget can crash resolving even an address): the body's last line, or what nc said. */
  const fromPod = async (pod: string, ip: string, port: number) => {
    const r = await s.kubectl(['exec', pod, '--', 'sh', '-c', `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${ip} ${port} 2>&1 | tail -n 1`]);
    return r.stdout.trim();
  };
  /** Polls until a GET through host:port answers `want` (the serving pod's name). */
  const answers = (host: string, port: number, want: string | RegExp, what: string) =>
    eventually(async () => {
      const got = await httpGet(host, port);
      return (typeof want === 'string' ? got === want : want.test(got)) ? got : undefined;
    }, 30_000, what);

  before(async () => {
    await makeMachines(LINK, SERVER_IP, 24, MACHINES);
    for (const d of daemons) await d.start();
    const archive = join(work, 'busybox.tar');
    writeBusyboxImage(IMAGE, archive, { Cmd: ['sh'] });
    for (const d of daemons) {
      const imported = await run(process.execPath, [SKIFF_BIN, 'image', 'import', '--container-runtime-endpoint', d.endpoint, archive]);
      assert.equal(imported.code, 0, imported.stderr);
    }
    const [port, cloudPort] = await freePorts(2);
    // The local cloud, whose load balancers take addresses from 127.0.100.0/24 (its default).
    s.port = port;
    cloud = startTestCloud(work, cloudPort!, s, TEST_JOIN_TOKEN);
    await eventually(async () => (await fetch(`http://127.0.0.1:${cloudPort}/healthz`).catch(() => undefined))?.ok, 20_000, 'the cloud API answering');
    await s.start([
      '--cloud-provider', 'local', '--cloud-endpoint', `http://127.0.0.1:${cloudPort}`,
      '--listen', `${SERVER_IP}:${port}`, '--advertise-address', SERVER_IP,
      '--token', TEST_JOIN_TOKEN,
      '--allocate-node-cidrs', 'true', '--cluster-cidr', '10.64.0.0/17', '--service-cluster-ip-range', '10.164.0.0/16',
    ]);
    client = s.client();
    for (const [i, m] of MACHINES.entries()) {
      const a = new TestAgent(s, m.name);
      a.netns = m.netns;
      agents.push(a);
      await a.start(['--runtime', 'containerd', '--container-runtime-endpoint', daemons[i]!.endpoint, '--node-ip', m.ip]);
    }
  });

  after(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    client?.close();
    await s.stop();
    await cloud?.stop(5_000);
    for (const d of daemons) {
      await d.removeSandboxes().catch(() => undefined);
      await d.stop();
    }
    await removeMachines(LINK, MACHINES);
    rmSync(work, { recursive: true, force: true });
    s.cleanup();
  });

  it('gives each machine a pod CIDR and routes the other machine\'s pods to its address', async () => {
    for (const m of MACHINES) {
      const other = MACHINES.find((x) => x !== m)!;
      const cidr = await eventually(async () => (await client.get<Node>(`/api/v1/nodes/${other.name}`)).spec?.podCIDR, 20_000, `${other.name} has a pod CIDR`);
      await eventually(async () => (await run('ip', ['-n', m.netns, 'route', 'show', cidr])).stdout.includes(`via ${other.ip}`), 20_000, `${m.name} routes ${cidr} via ${other.ip}`);
    }
  });

  it('answers a NodePort on every node\'s address, also for a pod on the other node', async () => {
    await serve('web-a', 'net-a', { app: 'web' });
    await podIP('web-a');
    await service('web', { type: 'NodePort', selector: { app: 'web' } });
    const nodePort = (await getService('web')).spec!.ports![0]!.nodePort!;
    assert.ok(nodePort >= 30000 && nodePort <= 32767);
    for (const m of MACHINES) await answers(m.ip, nodePort, 'web-a', `NodePort ${nodePort} on ${m.name} (${m.ip}) answers from web-a`);
  });

  it('with externalTrafficPolicy Local answers only on the node where an endpoint runs', async () => {
    await service('web-local', { type: 'NodePort', externalTrafficPolicy: 'Local', selector: { app: 'web' } });
    const nodePort = (await getService('web-local')).spec!.ports![0]!.nodePort!;
    await answers(MACHINES[0].ip, nodePort, 'web-a', 'the Local NodePort answers where its endpoint runs');
    await eventually(async () => (await httpGet(MACHINES[1].ip, nodePort, 1500)) === 'timeout', 20_000, 'the Local NodePort drops on the node without an endpoint');
  });

  it('refuses connections at once to a Service without a ready endpoint', async () => {
    await service('nobody', { type: 'NodePort', selector: { app: 'nobody' } });
    const nodePort = (await getService('nobody')).spec!.ports![0]!.nodePort!;
    for (const m of MACHINES) {
      await eventually(async () => (await httpGet(m.ip, nodePort)) === 'refused', 20_000, `NodePort ${nodePort} refused on ${m.name}`);
      const t0 = Date.now();
      assert.equal(await httpGet(m.ip, nodePort), 'refused');
      assert.ok(Date.now() - t0 < 1000, `refused within a second (took ${Date.now() - t0} ms)`);
    }
    // And inside the cluster: a pod asking its cluster IP is refused, not left waiting.
    const clusterIP = (await getService('nobody')).spec!.clusterIP!;
    assert.match(await fromPod('web-a', clusterIP, 80), /refused/i);
  });

  it('gives a LoadBalancer Service an address from the local cloud that answers, and takes it back when the Service is deleted', async () => {
    await service('web-lb', { type: 'LoadBalancer', selector: { app: 'web' } });
    const ip = await eventually(async () => (await getService('web-lb')).status?.loadBalancer?.ingress?.[0]?.ip, 30_000, 'an ingress address');
    assert.match(ip, /^127\.0\.100\.\d+$/);
    const svc = await getService('web-lb');
    assert.ok(svc.metadata.finalizers?.includes('service.kubernetes.io/load-balancer-cleanup'));
    const table = await s.k(['get', 'service', 'web-lb']);
    assert.match(table, new RegExp(`web-lb\\s+LoadBalancer\\s+10\\.164\\.\\d+\\.\\d+\\s+${ip.replace(/\./g, '\\.')}\\s+80:${svc.spec!.ports![0]!.nodePort}/TCP`));
    // Several connections: the cloud sends them to both nodes in turn, each node on to web-a.
    for (let i = 0; i < 4; i++) await answers(ip, 80, 'web-a', `the load balancer ${ip}:80 answering`);
    const events = await s.k(['get', 'events', '--field-selector', 'involvedObject.name=web-lb', '-o', 'jsonpath={.items[*].reason}']);
    assert.match(events, /EnsuringLoadBalancer/);
    assert.match(events, /EnsuredLoadBalancer/);
    await s.k(['delete', 'service', 'web-lb', '--wait=true']);
    await eventually(async () => (await httpGet(ip, 80, 1000)) === 'refused', 20_000, `${ip}:80 no longer answering`);
  });

  it('keeps a client on one endpoint with sessionAffinity ClientIP, where without it both answer', async () => {
    await serve('web-b1', 'net-b', { app: 'web' });
    await podIP('web-b1');
    await service('sticky', { type: 'NodePort', sessionAffinity: 'ClientIP', selector: { app: 'web' } });
    const sticky = (await getService('sticky')).spec!.ports![0]!.nodePort!;
    assert.equal((await getService('sticky')).spec!.sessionAffinityConfig?.clientIP?.timeoutSeconds, 10800);
    const plain = (await getService('web')).spec!.ports![0]!.nodePort!;
    // Without affinity both pods answer, in time.
    const seen = new Set<string>();
    await eventually(async () => {
      seen.add(await httpGet(MACHINES[0].ip, plain));
      return seen.has('web-a') && seen.has('web-b1');
    }, 30_000, 'both pods answering the plain NodePort');
    const first = await answers(MACHINES[0].ip, sticky, /^web-(a|b1)$/, 'the sticky NodePort answering');
    for (let i = 0; i < 10; i++) assert.equal(await httpGet(MACHINES[0].ip, sticky), first, 'the same pod every time');
  });

  it('lets a pod on one machine reach a pod on the other by pod IP and through a Service; the route goes when that Node is deleted for good', async () => {
    await serve('web-b', 'net-b', { app: 'only-b' });
    const ipB = await podIP('web-b');
    assert.equal(await fromPod('web-a', ipB, 8080), 'web-b');
    await service('only-b', { selector: { app: 'only-b' } });
    const clusterIP = (await getService('only-b')).spec!.clusterIP!;
    await eventually(async () => (await fromPod('web-a', clusterIP, 80)) === 'web-b', 30_000, 'web-a reaches web-b through the Service');
    const cidrB = (await client.get<Node>('/api/v1/nodes/net-b')).spec!.podCIDR!;
    // The machine is gone for good: its agent killed outright, its Node deleted.
    agents[1]!.proc?.child.kill('SIGKILL');
    await agents[1]!.proc?.exited;
    await s.k(['delete', 'node', 'net-b']);
    await eventually(async () => (await run('ip', ['-n', MACHINES[0].netns, 'route', 'show', cidrB])).stdout.trim() === '', 20_000, `net-a no longer routes ${cidrB}`);
  });
});
