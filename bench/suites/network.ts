// Suite `network`: new TCP connections (HTTP/1.0 GET, one request each) to a pod, through the
// ways into it that skiff's networking gives, in the same run: straight to the pod's address (the
// floor, the peer figure), a ClusterIP, a NodePort and a LoadBalancer of the local cloud. The node
// is a machine simulated as a network namespace (its own containerd and agent, one veth to a
// bridge here); this process is a client beside it on the link, with routes to the pod and service
// ranges through the node, as a router would have. Each path: CONCURRENCY clients in a loop for the
// cell's time, connections/s and the latency of each (connect to last byte), p50 and p99.
import { mkdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { eventually } from '../../test/support/eventually.js';
import { makeMachines, removeMachines, run } from '../../test/support/netns-machines.js';
import { ContainerdDaemon, containerdPrerequisites } from '../../src/cri/containerd-daemon.js';
import { writeBusyboxImage } from '../../src/cri/oci-archive.js';
import { importImage } from '../../src/cri/image-import.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';
import { freePorts } from '../../src/util/ports.js';
import type { Node } from '../../src/api/kinds/node.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { Service } from '../../src/api/kinds/service.js';
import { startSkiffServer, type SkiffServer } from '../lib/servers.js';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { makeTempDir, percentile, progress, removeTempDir, round, skiffEntry, startChild, type ManagedChild, type Table } from '../lib/util.js';

const TOKEN = 'bench0.network000000000';
const NODE = 'bench-net';
const IMAGE = 'skiff.local/busybox:1.36';
const LINK = 'sknet1';
const HOST_IP = '10.64.254.1';
const MACHINE = { netns: 'sknet-bench', ip: '10.64.254.11' };
const CLUSTER_CIDR = '10.64.128.0/17';
const SERVICE_RANGE = '10.164.128.0/17';
/** Half of the loopback range: the e2e test's cloud takes its first address from the other half. */
const LB_RANGE = '127.0.100.128/25';
const CONCURRENCY = 8;

/** One HTTP/1.0 GET on a new connection: its time from connect to the end of the answer. */
function oneConnection(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const sock = net.connect({ host, port });
    let got = 0;
    sock.setTimeout(5000, () => sock.destroy(new Error('timeout')));
    sock.on('connect', () => sock.write('GET / HTTP/1.0\r\n\r\n'));
    sock.on('data', (d) => (got += d.length));
    sock.on('end', () => {
      sock.destroy();
      if (got === 0) reject(new Error('empty answer'));
      else resolve(performance.now() - t);
    });
    sock.on('error', reject);
  });
}

async function measure(host: string, port: number, ms: number): Promise<{ perSecond: number; p50: number; p99: number; errors: number }> {
  const lat: number[] = [];
  let errors = 0;
  const end = performance.now() + ms;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) await oneConnection(host, port).then((l) => lat.push(l), () => errors++);
    }),
  );
  const secs = (performance.now() - start) / 1000;
  lat.sort((a, b) => a - b);
  return { perSecond: lat.length / secs, p50: percentile(lat, 50), p99: percentile(lat, 99), errors };
}

export const networkSuite: Suite = {
  name: 'network',
  description: 'connections/s and p99 to a pod: direct, ClusterIP, NodePort and LoadBalancer (local cloud), one netns machine',
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    const missing = containerdPrerequisites();
    if (missing.length > 0) {
      progress(`network: skipped, needs ${missing.join(', ')}`);
      return { tables: [{ title: 'network: skipped', headers: ['needs'], rows: missing.map((m) => [m]) }], data: { skipped: missing } };
    }
    const cellMs = Math.max(2000, ctx.durationMs);
    const work = makeTempDir('skiff-bench-net-');
    const containerd = new ContainerdDaemon({ dir: join(work, 'containerd'), bridge: 'sknet2', network: 'sknet-bench', netns: MACHINE.netns });
    let server: SkiffServer | undefined;
    let agent: ManagedChild | undefined;
    let cloud: ManagedChild | undefined;
    try {
      await makeMachines(LINK, HOST_IP, 24, [MACHINE]);
      await containerd.start();
      const archive = join(work, 'busybox.tar');
      writeBusyboxImage(IMAGE, archive, { Cmd: ['sh'] });
      importImage(archive, containerd.endpoint);
      const [cloudPort] = await freePorts(1);
      const cloudDir = join(work, 'cloud');
      mkdirSync(cloudDir, { recursive: true });
      cloud = startChild('skiff cloud', process.execPath, [skiffEntry(), 'cloud', 'serve', '--data-dir', cloudDir, '--listen', `127.0.0.1:${cloudPort}`, '--server', `https://${HOST_IP}:6443`, '--ca-file', join(work, 'unused-ca.crt'), '--token', TOKEN, '--load-balancer-range', LB_RANGE], join(work, 'cloud.log'));
      await eventually(async () => (await fetch(`http://127.0.0.1:${cloudPort}/healthz`).catch(() => undefined))?.ok, 20_000, 'the cloud API', 100);
      server = await startSkiffServer({
        serverArgs: ['--listen', `${HOST_IP}:0`, '--advertise-address', HOST_IP, '--token', TOKEN, '--allocate-node-cidrs', 'true', '--cluster-cidr', CLUSTER_CIDR, '--service-cluster-ip-range', SERVICE_RANGE, '--cloud-provider', 'local', '--cloud-endpoint', `http://127.0.0.1:${cloudPort}`],
      });
      const client = server.client(30_000);
      const serverUrl = parseKubeconfig(readFileSync(server.kubeconfig, 'utf8'), () => '').server;
      agent = startChild(
        'skiff agent',
        'nsenter',
        [`--net=/run/netns/${MACHINE.netns}`, process.execPath, skiffEntry(), 'agent', '--server', serverUrl, '--token', TOKEN, '--ca-file', join(server.dataDir, 'tls', 'ca.crt'), '--data-dir', join(work, 'agent'), '--node-name', NODE, '--node-ip', MACHINE.ip, '--kubelet-port', '0', '--runtime', 'containerd', '--container-runtime-endpoint', containerd.endpoint],
        join(work, 'agent.log'),
      );
      const node = await eventually(async () => {
        const n = await client.get<Node>(`/api/v1/nodes/${NODE}`);
        return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && n.spec?.podCIDR ? n : undefined;
      }, 60_000, 'agent Ready', 100);
      // This host as a router beside the node would be: pods and Services through the node.
      await run('ip', ['route', 'replace', node.spec!.podCIDR!, 'via', MACHINE.ip]);
      await run('ip', ['route', 'replace', SERVICE_RANGE, 'via', MACHINE.ip]);
      await client.create('/api/v1/namespaces/default/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web', labels: { app: 'web' } },
        spec: { nodeName: NODE, terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: IMAGE, imagePullPolicy: 'Never', command: ['sh', '-c', 'mkdir -p /www && echo web > /www/index.html && exec httpd -f -p 8080 -h /www'] }] },
      });
      const podIP = await eventually(async () => {
        const p = await client.get<Pod>('/api/v1/namespaces/default/pods/web');
        return p.status?.phase === 'Running' ? p.status.podIP : undefined;
      }, 60_000, 'the pod Running', 100);
      for (const [name, type] of [['web-cip', 'ClusterIP'], ['web-np', 'NodePort'], ['web-lb', 'LoadBalancer']] as const) {
        await client.create('/api/v1/namespaces/default/services', { metadata: { name }, spec: { type, selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } });
      }
      const svc = (name: string) => client.get<Service>(`/api/v1/namespaces/default/services/${name}`);
      const clusterIP = (await svc('web-cip')).spec!.clusterIP!;
      const nodePort = (await svc('web-np')).spec!.ports![0]!.nodePort!;
      const lbIP = await eventually(async () => (await svc('web-lb')).status?.loadBalancer?.ingress?.[0]?.ip, 30_000, 'a load balancer address', 100);
      const paths: [string, string, number][] = [
        ['direct to the pod (peer: no Service in the way)', podIP!, 8080],
        ['ClusterIP (the node\'s nat rules)', clusterIP, 80],
        ['NodePort on the node\'s address', MACHINE.ip, nodePort],
        [`LoadBalancer ${lbIP} (the local cloud's forwarder, then the NodePort)`, lbIP, 80],
      ];
      for (const [, host, port] of paths) await eventually(async () => oneConnection(host, port).then(() => true, () => false), 30_000, `${host}:${port} answering`, 100);
      const results: Record<string, Awaited<ReturnType<typeof measure>>> = {};
      const rows: string[][] = [];
      for (const [what, host, port] of paths) {
        progress(`network: ${what}, ${CONCURRENCY} clients for ${cellMs} ms`);
        const r = await measure(host, port, cellMs);
        results[what] = r;
        rows.push([what, `${round(r.perSecond, 0)}`, `${round(r.p50, 2)} ms`, `${round(r.p99, 2)} ms`, `${r.errors}`]);
      }
      client.close();
      const table: Table = {
        title: `network: new connections to one pod (busybox httpd), ${CONCURRENCY} clients`,
        headers: ['path', 'connections/s', 'p50', 'p99', 'errors'],
        rows,
        notes: ['each connection: connect, GET, read to the end; the pod forks a handler per connection, so the direct row is the ceiling', 'the client is on the node link (a network namespace machine), routed to pods and Services through the node'],
      };
      return { tables: [table], data: { concurrency: CONCURRENCY, cellMs, results } };
    } finally {
      await agent?.stop(30_000);
      await server?.stop();
      await cloud?.stop(5_000);
      await containerd.removeSandboxes().catch(() => undefined);
      await containerd.stop();
      await run('ip', ['route', 'del', SERVICE_RANGE]);
      await removeMachines(LINK, [MACHINE]);
      removeTempDir(work);
    }
  },
};
