// `skiff up --servers 3 --storage etcd`: a real 3-member etcd on 127.0.0.1-3:2379/2380, 3 servers
// on 127.0.0.1-3 with one port, each its own control-plane node, a real HAProxy in front of them
// that every kubeconfig names, agents spread over the members; kubectl and haproxy-config working
// after a member is SIGKILLed, and that member started again by up (Restart=on-failure); a
// graceful stop that leaves nothing behind; and `--servers 3` on SQLite refused with a clear error.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import { ApiClient } from '../../src/client/rest.js';
import { SKIFF_BIN, eventually, processesMentioning, runSkiff } from '../support/cluster.js';
import { freePorts, requireEtcdBinary } from '../support/etcd.js';
import type { KubeList, KubeObject } from '../../src/api/types.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';
import { preferenceOrder } from '../../src/client/server-preference.js';

const dataDir = mkdtempSync(join(tmpdir(), 'skiff-ha-up-'));

describe('skiff up --servers 3 --storage etcd', () => {
  let up: ManagedProcess | undefined;
  after(async () => {
    await up?.stop(30_000);
    if (!process.env.SKIFF_KEEP_TEST_DATA) rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses several servers on SQLite', () => {
    let err: { status?: number; stderr?: Buffer } | undefined;
    try {
      execFileSync(process.execPath, [SKIFF_BIN, 'up', '--servers', '3', '--data-dir', join(dataDir, 'sqlite')], { stdio: 'pipe' });
    } catch (e) {
      err = e as { status?: number; stderr?: Buffer };
    }
    assert.equal(err?.status, 2);
    assert.match(String(err?.stderr), /needs --storage etcd/);
  });

  it('refuses a control-plane endpoint it cannot run without HAProxy, saying how to get it', async () => {
    const r = await runSkiff(['up', '--servers', '3', '--storage', 'etcd', '--control-plane-endpoint', '127.0.0.1:7443', '--data-dir', join(dataDir, 'no-haproxy')], { env: { SKIFF_HAPROXY_BIN: '/nonexistent/haproxy' } });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^skiff up: --control-plane-endpoint runs HAProxy there, and HAProxy is not installed \(Debian: apt-get install haproxy/m);
  });

  it('starts etcd, 3 servers behind HAProxy and 3 agents; kubectl survives the loss of any member; stops everything', async () => {
    requireEtcdBinary();
    const [port] = await freePorts(1);
    const out = join(dataDir, 'up.out');
    up = startProcess({
      name: 'up',
      command: process.execPath,
      args: [SKIFF_BIN, 'up', '--servers', '3', '--storage', 'etcd', '--data-dir', dataDir, '--nodes', '3', '--port', String(port), '--runtime', 'simulated', '--node-status-update-frequency=1s'],
      output: out,
    });
    await eventually(() => readFileSync(out, 'utf8').includes('cluster ready'), 90_000, '"cluster ready"');
    const endpointUrl = `https://127.0.0.1:${port! + 1}`;
    assert.match(readFileSync(out, 'utf8'), new RegExp(`control-plane endpoint: ${endpointUrl} \\(HAProxy\\)`));
    const kubeconfig = join(dataDir, 'kubeconfig');
    const members = [1, 2, 3].map((i) => `127.0.0.${i}`);
    const memberUrls = members.map((h) => `https://${h}:${port}`);
    // Every kubeconfig handed out names the shared endpoint; the admin one lists the members too.
    const kc = parseKubeconfig(readFileSync(kubeconfig, 'utf8'), (p) => readFileSync(p, 'utf8'));
    assert.equal(kc.server, endpointUrl);
    assert.deepEqual(kc.members, memberUrls);
    for (const i of [1, 2, 3]) assert.equal(parseKubeconfig(readFileSync(join(dataDir, `server-${i}`, 'kubeconfig'), 'utf8'), (p) => readFileSync(p, 'utf8')).server, endpointUrl);
    const client = new ApiClient({ servers: memberUrls, caPem: kc.caPem!, clientCertPem: kc.clientCertPem!, clientKeyPem: kc.clientKeyPem!, timeoutMs: 5000 });
    try {
      await eventually(async () => {
        const ep = await client.get<KubeObject>('/api/v1/namespaces/default/endpoints/kubernetes');
        const ips = ((ep.subsets ?? []) as { addresses?: { ip: string }[] }[]).flatMap((s) => (s.addresses ?? []).map((a) => a.ip)).sort();
        return JSON.stringify(ips) === JSON.stringify(members);
      }, 20_000, 'all 3 members in default/kubernetes');
      // ...and in its EndpointSlice, as upstream's servers keep both.
      await eventually(async () => {
        const slice = await client.get<KubeObject>('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes');
        const ips = ((slice.endpoints ?? []) as { addresses: string[] }[]).flatMap((e) => e.addresses).sort();
        return JSON.stringify(ips) === JSON.stringify(members) && slice.metadata.labels?.['kubernetes.io/service-name'] === 'kubernetes';
      }, 20_000, 'all 3 members in the kubernetes EndpointSlice');
      // Each member is a control-plane node; kubectl shows their role.
      const table = await kubectl(kubeconfig, ['get', 'nodes']);
      for (const i of [1, 2, 3]) assert.match(table, new RegExp(`^control-plane-${i}\\s+Ready\\s+control-plane\\s`, 'm'));
      for (const i of [1, 2, 3]) assert.match(table, new RegExp(`^node-${i}\\s+Ready\\s+<none>\\s`, 'm'));
      // Agents spread over the members by their names instead of all preferring the first: each
      // renews its Lease (PUT) through the member it prefers, as its own metrics tell.
      for (const n of ['node-1', 'node-2', 'node-3']) {
        await eventually(() => persistedServers(n).length === 3, 15_000, `${n} knows every member`);
        const preferred = new URL(preferenceOrder(memberUrls, n)[0]!).host;
        assert.equal(new URL(persistedServers(n)[0]!).host, preferred);
        const metrics = await kubectl(kubeconfig, ['get', '--raw', `/api/v1/nodes/${n}/proxy/metrics`]);
        const puts = [...metrics.matchAll(/^rest_client_requests_total\{code="200",method="PUT",host="([^"]+)"\} (\d+)$/gm)].map((m) => ({ host: m[1]!, n: Number(m[2]) }));
        const busiest = puts.sort((a, b) => b.n - a.n)[0];
        assert.equal(busiest?.host, preferred, `${n} renews through ${preferred}: ${JSON.stringify(puts)}`);
      }

      // SIGKILL member 1, the one a single-address kubeconfig would have named.
      const [victim] = processesMentioning(`${join(dataDir, 'server-1')}\0`);
      assert.ok(victim, 'server-1 runs');
      process.kill(victim, 'SIGKILL');
      await eventually(() => processesMentioning(`${join(dataDir, 'server-1')}\0`).length === 0, 10_000, 'server-1 gone');
      assert.match(await kubectl(kubeconfig, ['get', 'nodes']), /^node-1\s+Ready/m);
      await kubectl(kubeconfig, ['create', 'configmap', 'after-member-1-died', '--from-literal=a=1']);
      // haproxy-config still answers, and still names the dead member (it will be back).
      const cfg = await skiff(['haproxy-config', '--data-dir', dataDir, '--control-plane-endpoint', '127.0.0.1:7443']);
      for (const h of members) assert.match(cfg, new RegExp(`server member-\\d ${h.replace(/\./g, '\\.')}:${port}$`, 'm'));
      // Without the endpoint too: a kubeconfig naming the dead member still reaches the others it lists.
      const viaDead = join(dataDir, 'kubeconfig-dead-first');
      writeFileSync(viaDead, readFileSync(kubeconfig, 'utf8').replace(`server: ${endpointUrl}`, `server: ${memberUrls[0]}`));
      assert.equal(parseKubeconfig(readFileSync(viaDead, 'utf8'), (p) => readFileSync(p, 'utf8')).server, memberUrls[0]);
      assert.match(await skiff(['haproxy-config', '--kubeconfig', viaDead, '--control-plane-endpoint', '127.0.0.1:7443']), /server member-3 127\.0\.0\.3:/);
      // And kubectl users have a context per member.
      assert.match(await kubectl(kubeconfig, ['config', 'get-contexts', '-o', 'name']), /^admin@skiff-server-2$/m);
      assert.match(await kubectl(kubeconfig, ['--context', 'admin@skiff-server-2', 'get', 'nodes']), /^node-1\s+Ready/m);
      const nodes = await client.get<KubeList>('/api/v1/nodes');
      for (const n of ['node-1', 'node-2', 'node-3']) {
        const node = nodes.items.find((x) => x.metadata.name === n);
        assert.ok(((node?.status ?? {}) as { conditions?: { type: string; status: string }[] }).conditions?.some((c) => c.type === 'Ready' && c.status === 'True'), `${n} stays Ready`);
      }
      // As systemd's Restart=on-failure would, up starts the killed member again in place: it
      // serves, and is back in default/kubernetes.
      assert.match(readFileSync(out, 'utf8'), /^server-1 exited \(code null, signal SIGKILL\).*; starting it again in 1 s \(--restart=no leaves it down\)$/m);
      await eventually(() => processesMentioning(`${join(dataDir, 'server-1')}\0`).length === 1, 15_000, 'server-1 started again');
      await eventually(async () => {
        const ep = await client.get<KubeObject>('/api/v1/namespaces/default/endpoints/kubernetes');
        return ((ep.subsets ?? []) as { addresses?: { ip: string }[] }[]).flatMap((s) => (s.addresses ?? []).map((a) => a.ip)).includes(members[0]!);
      }, 60_000, 'server-1 back in default/kubernetes');

      // `skiff restart NAME` restarts one member in place, by name, through its up: a new process
      // that serves, with every node still Ready; a name that is no member is refused in one line.
      const [before] = processesMentioning(`${join(dataDir, 'server-2')}\0`);
      const restarted = await runSkiff(['restart', 'server-2', '--data-dir', dataDir]);
      assert.equal(restarted.code, 0, restarted.stderr);
      assert.match(restarted.stdout, new RegExp(`^restarting server-2 \\(pid ${before}\\) in place$`, 'm'));
      assert.match(restarted.stdout, /^server-2 serves again \(pid \d+, https:\/\/127\.0\.0\.2:\d+\) after [\d.]+ s$/m);
      const [after] = processesMentioning(`${join(dataDir, 'server-2')}\0`);
      assert.ok(after !== undefined && after !== before, `a new server-2 process (${before} -> ${after})`);
      assert.match(readFileSync(out, 'utf8'), /^restarting server-2 in place, as skiff restart asked$/m);
      assert.match(await kubectl(kubeconfig, ['get', 'nodes']), /^node-2\s+Ready/m);
      const unknown = await runSkiff(['restart', 'server-9', '--data-dir', dataDir]);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /^skiff restart: the cluster in \S+ has no API server member server-9; its members: server-1, server-2, server-3$/m);
    } finally {
      client.close();
    }
    up.signal('SIGTERM');
    const exit = await up.exited;
    up = undefined;
    assert.equal(exit.code, 0);
    assert.match(readFileSync(out, 'utf8'), /cluster stopped/);
    assert.deepEqual(processesMentioning(dataDir), [], 'no etcd, HAProxy, server or agent process left');
  });
});

function persistedServers(node: string): string[] {
  try {
    return (JSON.parse(readFileSync(join(dataDir, 'agents', node, 'servers.json'), 'utf8')) as { servers: string[] }).servers;
  } catch {
    return [];
  }
}

function kubectl(kubeconfig: string, args: string[]): Promise<string> {
  return run('kubectl', ['--kubeconfig', kubeconfig, ...args]);
}

function skiff(args: string[]): Promise<string> {
  return run(process.execPath, [SKIFF_BIN, ...args]);
}

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(cmd, args, { timeout: 20_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stderr}`)) : resolve(stdout))),
  );
}
