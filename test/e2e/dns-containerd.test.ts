// Cluster DNS end to end with real containers: a real containerd (its own bridge and CIDRs), real
// `skiff server` and `skiff agent --runtime containerd`, pods from busybox-static asking with
// nslookup and fetching with wget, a dnsmasq of the test's own on loopback as the node's resolver
// (the machine's own resolver is never asked). Skipped, saying why, without containerd or dnsmasq.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as dnsPacket from 'dns-packet';
import { TestAgent, TestServer, TEST_JOIN_TOKEN, eventually, SKIFF_BIN } from '../support/cluster.js';
import type { ApiClient } from '../../src/client/rest.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { Service } from '../../src/api/kinds/service.js';
import { ContainerdDaemon, containerdPrerequisites } from '../../src/cri/containerd-daemon.js';
import { writeBusyboxImage } from '../../src/cri/oci-archive.js';
import { removeServiceRules } from '../../src/agent/service-proxy/service-proxy.js';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import { freePorts } from '../../src/util/ports.js';

const DNSMASQ = '/usr/sbin/dnsmasq';
const missing = [...containerdPrerequisites(), ...(existsSync(DNSMASQ) ? [] : ['dnsmasq (Debian: dnsmasq-base)'])];
const IMAGE = 'skiff.local/busybox:1.36';
const BRIDGE = 'skdns0';
/** The test's own resolver: a loopback address of its own, on port 53 as a resolv.conf can only say. */
const RESOLVER = '127.0.61.53';
const NODE = 'dns-1';

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => execFile(cmd, args, { encoding: 'utf8' }, (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr })));
}

/** One A query over UDP to the node's DNS server on loopback: the addresses, or the RCODE's name. */
function ask(port: number, name: string): Promise<string[] | string> {
  return new Promise((resolve) => {
    const s = dgram.createSocket('udp4');
    const t = setTimeout(() => (s.close(), resolve('timeout')), 1000);
    s.on('message', (m) => {
      clearTimeout(t);
      s.close();
      const p = dnsPacket.decode(m);
      const rcode = (p.flags ?? 0) & 15;
      resolve(rcode !== 0 ? `rcode ${rcode}` : (p.answers ?? []).flatMap((a) => (a.type === 'A' ? [a.data] : [])));
    });
    s.send(dnsPacket.encode({ type: 'query', id: 7, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name, class: 'IN' }] }), port, '127.0.0.1');
  });
}

describe('cluster DNS with containerd', { skip: missing.length > 0 ? `needs ${missing.join(', ')}` : false }, () => {
  const s = new TestServer('dns-e2e');
  const work = mkdtempSync(join(tmpdir(), 'skiff-dns-'));
  const containerd = new ContainerdDaemon({ dir: join(work, 'containerd'), bridge: BRIDGE, network: BRIDGE });
  let agent: TestAgent;
  let dnsmasq: ManagedProcess | undefined;
  let client: ApiClient;
  let dnsPort = 0;

  const k = (args: string[], input?: unknown) => s.k(args, input === undefined ? {} : { input: JSON.stringify(input) });
  const exec = (pod: string, script: string) => s.kubectl(['exec', pod, '--', 'sh', '-c', script]);
  const podWhere = (name: string, ok: (p: Pod) => boolean, what: string) =>
    eventually(async () => {
      const p = await client.get<Pod>(`/api/v1/namespaces/default/pods/${name}`).catch(() => undefined);
      return p && ok(p) ? p : undefined;
    }, 60_000, what).catch((e: Error) => {
      throw new Error(`${e.message}\nagent log:\n${agent.logs().slice(-3000)}`);
    });
  const running = (p: Pod) => p.status?.phase === 'Running' && p.status.podIP !== undefined && p.status.containerStatuses?.every((c) => c.ready) === true;

  before(async () => {
    await run('ip', ['link', 'del', BRIDGE]);
    const resolvConf = join(work, 'resolv.conf');
    writeFileSync(resolvConf, `nameserver ${RESOLVER}\nsearch corp.test\n`);
    dnsmasq = startProcess({
      name: 'dnsmasq',
      command: DNSMASQ,
      args: ['--keep-in-foreground', '--conf-file=/dev/null', '--no-resolv', '--no-hosts', '--bind-interfaces', `--listen-address=${RESOLVER}`, '--port=53', `--pid-file=${join(work, 'dnsmasq.pid')}`, '--user=root', '--address=/outside.test/192.0.2.80'],
      output: join(work, 'dnsmasq.log'),
    });
    await containerd.start();
    const archive = join(work, 'busybox.tar');
    writeBusyboxImage(IMAGE, archive, { Cmd: ['sh'] });
    const imported = await run(process.execPath, [SKIFF_BIN, 'image', 'import', '--container-runtime-endpoint', containerd.endpoint, archive]);
    assert.equal(imported.code, 0, imported.stderr);
    await s.start(['--token', TEST_JOIN_TOKEN, '--allocate-node-cidrs', 'true', '--cluster-cidr', '10.61.0.0/16', '--service-cluster-ip-range', '10.161.0.0/16']);
    client = s.client();
    dnsPort = (await freePorts(1))[0]!;
    agent = new TestAgent(s, NODE);
    await agent.start(['--runtime', 'containerd', '--container-runtime-endpoint', containerd.endpoint, '--resolv-conf', resolvConf, '--cluster-dns-port', String(dnsPort)]);
    // A web server behind a Service, and a client pod to ask from.
    await k(['create', 'deployment', 'web', `--image=${IMAGE}`, '--port=8080', '--', 'sh', '-c', 'mkdir -p /www && echo "served by $(hostname)" > /www/index.html && exec httpd -f -p 8080 -h /www']);
    await k(['apply', '-f', '-'], { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } });
    await k(['run', 'client', `--image=${IMAGE}`, '--image-pull-policy=Never', '--restart=Never', '--', 'sleep', '3600']);
    await podWhere('client', running, 'the client pod Running');
  });

  after(async () => {
    await agent?.stop();
    client?.close();
    await s.stop();
    await containerd.removeSandboxes().catch(() => undefined);
    await containerd.stop();
    await dnsmasq?.stop(5_000);
    for (const dir of [work, s.dataDir]) await run('sh', ['-c', `grep ' ${dir}' /proc/mounts | cut -d' ' -f2 | sort -r | xargs -r -n1 umount -l`]);
    rmSync(work, { recursive: true, force: true });
    await run('ip', ['link', 'del', BRIDGE]);
    await removeServiceRules(NODE).catch(() => undefined);
    s.cleanup();
  });

  it('the server made kube-system/kube-dns at the tenth address of the service range, and a pod gets the kubelet\'s resolv.conf', async () => {
    const svc = await client.get<Service>('/api/v1/namespaces/kube-system/services/kube-dns');
    assert.equal(svc.spec?.clusterIP, '10.161.0.10');
    assert.equal(svc.metadata.labels?.['k8s-app'], 'kube-dns');
    assert.deepEqual(svc.spec?.ports?.map((p) => `${p.name}/${p.port}/${p.protocol}`), ['dns/53/UDP', 'dns-tcp/53/TCP']);
    const r = await exec('client', 'cat /etc/resolv.conf');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^nameserver 10\.161\.0\.10$/m);
    assert.match(r.stdout, /^search default\.svc\.cluster\.local svc\.cluster\.local cluster\.local corp\.test$/m);
    assert.match(r.stdout, /^options ndots:5$/m);
  });

  it('dnsPolicy None takes only dnsConfig; Default takes the node\'s resolv.conf', async () => {
    const pod = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: IMAGE, imagePullPolicy: 'Never', command: ['sleep', '3600'] }], ...spec } });
    await k(['apply', '-f', '-'], { apiVersion: 'v1', kind: 'List', items: [
      pod('dns-none', { dnsPolicy: 'None', dnsConfig: { nameservers: ['10.161.0.10'], searches: ['my.example'], options: [{ name: 'ndots', value: '2' }] } }),
      pod('dns-default', { dnsPolicy: 'Default' }),
    ] });
    await Promise.all(['dns-none', 'dns-default'].map((n) => podWhere(n, running, `${n} Running`)));
    assert.equal((await exec('dns-none', 'cat /etc/resolv.conf')).stdout.trim().split('\n').sort().join('\n'), ['nameserver 10.161.0.10', 'options ndots:2', 'search my.example'].join('\n'));
    const host = (await exec('dns-default', 'cat /etc/resolv.conf')).stdout;
    assert.match(host, new RegExp(`^nameserver ${RESOLVER.replaceAll('.', '\\.')}$`, 'm'));
    assert.match(host, /^search corp\.test$/m);
    await k(['delete', 'pod', 'dns-none', 'dns-default', '--wait=false']);
  });

  it('a pod resolves web.default.svc.cluster.local to the cluster IP and fetches from it by name', async () => {
    const ip = (await client.get<Service>('/api/v1/namespaces/default/services/web')).spec!.clusterIP!;
    await podWhere('client', running, 'client Running');
    const looked = await eventually(async () => {
      const r = await exec('client', 'nslookup web.default.svc.cluster.local');
      return r.code === 0 && r.stdout.includes(ip) ? r.stdout : undefined;
    }, 30_000, `nslookup answering ${ip}`);
    assert.match(looked, /Name:\s+web\.default\.svc\.cluster\.local/);
    // busybox-static's wget cannot resolve (a static glibc has no resolver of its own to load), so
    // the pod fetches from what its nslookup answered, as a script in such an image would.
    const fetchByName = `ip=$(nslookup web.default.svc.cluster.local | sed -n 's/^Address: \\([0-9.]*\\)$/\\1/p' | head -n 1); printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 "$ip" 80 | tail -n 1`;
    const body = await eventually(async () => {
      const r = await exec('client', fetchByName);
      return r.code === 0 && r.stdout.startsWith('served by web-') ? r.stdout : undefined;
    }, 30_000, 'a fetch from the address web.default.svc.cluster.local resolved to');
    assert.match(body, /^served by web-/);
    // The short name, through the search path (ndots:5): default.svc.cluster.local first.
    const short = await exec('client', 'nslookup web');
    assert.match(short.stdout, new RegExp(`Name:\\s+web\\.default\\.svc\\.cluster\\.local\\nAddress: ${ip.replaceAll('.', '\\.')}`), short.stdout + short.stderr);
  });

  it('a headless Service resolves to each ready pod, and a StatefulSet pod by its hostname', async () => {
    await k(['apply', '-f', '-'], {
      apiVersion: 'v1', kind: 'List', items: [
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'db' }, spec: { clusterIP: 'None', selector: { app: 'db' }, ports: [{ name: 'pg', port: 5432 }] } },
        { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db' }, spec: { serviceName: 'db', replicas: 2, selector: { matchLabels: { app: 'db' } }, template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'c', image: IMAGE, imagePullPolicy: 'Never', command: ['sleep', '3600'] }] } } } },
      ],
    });
    const ips = await Promise.all(['db-0', 'db-1'].map(async (n) => (await podWhere(n, running, `${n} Running`)).status!.podIP!));
    const all = await eventually(async () => {
      const r = await exec('client', 'nslookup db.default.svc.cluster.local');
      return ips.every((ip) => r.stdout.includes(ip)) ? r.stdout : undefined;
    }, 30_000, `db resolving to ${ips.join(' and ')}`);
    assert.ok(all);
    const one = await exec('client', 'nslookup db-1.db.default.svc.cluster.local');
    assert.ok(one.stdout.includes(ips[1]!) && !one.stdout.includes(`Address: ${ips[0]}\n`), one.stdout);
  });

  it('SRV for a named port', async () => {
    const r = await eventually(async () => {
      const x = await exec('client', 'nslookup -type=SRV _http._tcp.web.default.svc.cluster.local');
      return x.code === 0 && x.stdout.includes('web.default.svc.cluster.local') ? x.stdout : undefined;
    }, 20_000, 'an SRV answer');
    assert.match(r, /_http\._tcp\.web\.default\.svc\.cluster\.local\s+service = 0 100 80 web\.default\.svc\.cluster\.local/);
  });

  it('a name outside the cluster is forwarded to the node\'s resolver (the test\'s dnsmasq); a missing cluster name is NXDOMAIN', async () => {
    const r = await exec('client', 'nslookup outside.test');
    assert.match(r.stdout, /Address: 192\.0\.2\.80/, r.stdout + r.stderr);
    // An ExternalName Service: its CNAME, then the target's address, which the node's resolver had.
    await k(['create', 'service', 'externalname', 'ext', '--external-name', 'outside.test']);
    const ext = await eventually(async () => {
      const x = await exec('client', 'nslookup ext.default.svc.cluster.local');
      return x.stdout.includes('192.0.2.80') ? x.stdout : undefined;
    }, 20_000, 'the ExternalName Service resolving through its target');
    assert.match(ext, /ext\.default\.svc\.cluster\.local\s+canonical name = outside\.test/);
    const nx = await exec('client', 'nslookup nothing.default.svc.cluster.local');
    assert.notEqual(nx.code, 0);
    assert.match(nx.stdout + nx.stderr, /NXDOMAIN/);
  });

  it('a new Service resolves within a second of its creation', async () => {
    const before = await ask(dnsPort, 'fresh.default.svc.cluster.local');
    assert.equal(before, 'rcode 3', 'NXDOMAIN before');
    const created = Date.now();
    const svc = await client.create<Service>('/api/v1/namespaces/default/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'fresh' }, spec: { ports: [{ port: 80 }] } });
    const ip = svc.spec!.clusterIP!;
    await eventually(async () => {
      const a = await ask(dnsPort, 'fresh.default.svc.cluster.local');
      return Array.isArray(a) && a.includes(ip);
    }, 5_000, 'fresh resolving', 20);
    const took = Date.now() - created;
    assert.ok(took < 1000, `resolved ${took} ms after the create`);
  });
});
