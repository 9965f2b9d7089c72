// `skiff up --servers 3 --storage etcd --convert` over a running single-server SQLite cluster (real
// processes: up, server, simulated-runtime agents, 3 etcd members from Debian, HAProxy): every
// object kept with its uid and a resourceVersion above the old, a watch from before answered
// 410, no node NotReady at any 0.5 s sample, pods keeping their uids; then SIGKILL of the original
// server: nodes keep renewing their Leases and kubectl through the new endpoint works. And a
// conversion whose `skiff up` is SIGKILLed midway: the cluster starts again on SQLite with nothing lost.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import { ApiClient } from '../../src/client/rest.js';
import { isStatusError } from '../../src/api/errors.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';
import { SKIFF_BIN, processesMentioning, runSkiff } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';
import { freePorts, requireEtcdBinary } from '../support/etcd.js';
import type { KubeList, KubeObject } from '../../src/api/types.js';

const root = mkdtempSync(join(tmpdir(), 'skiff-ha-convert-'));
const ups: ManagedProcess[] = [];
after(async () => {
  await Promise.all(ups.map((u) => u.stop(30_000)));
  for (const d of ['live', 'killed']) await runSkiff(['down', '--data-dir', join(root, d)]);
  if (!process.env.SKIFF_KEEP_TEST_DATA) rmSync(root, { recursive: true, force: true });
});

/** `skiff up` of a single server on SQLite with simulated agents, ready. */
async function startSqliteCluster(dir: string, port: number, nodes: number, run = 1): Promise<{ up: ManagedProcess; out: string }> {
  const out = join(root, `${dir.split('/').pop()}-up-${run}.out`);
  const up = startProcess({
    name: 'up',
    command: process.execPath,
    args: [SKIFF_BIN, 'up', '--data-dir', dir, '--nodes', String(nodes), '--port', String(port), '--runtime', 'simulated', '--dashboard', 'false', '--kubeconfig-update', 'false', '--node-status-update-frequency=1s'],
    output: out,
  });
  ups.push(up);
  await eventually(() => readFileSync(out, 'utf8').includes('cluster ready'), 90_000, `"cluster ready" in ${out}`);
  return { up, out };
}

function adminClient(dir: string, servers?: string[]): ApiClient {
  const kc = parseKubeconfig(readFileSync(join(dir, 'kubeconfig'), 'utf8'), (p) => readFileSync(p, 'utf8'));
  return new ApiClient({ servers: servers ?? [kc.server], caPem: kc.caPem!, clientCertPem: kc.clientCertPem!, clientKeyPem: kc.clientKeyPem!, timeoutMs: 3000 });
}

const KINDS = [
  '/api/v1/namespaces',
  '/api/v1/nodes',
  '/api/v1/pods',
  '/api/v1/configmaps',
  '/api/v1/secrets',
  '/api/v1/services',
  '/api/v1/serviceaccounts',
  '/apis/apps/v1/deployments',
  '/apis/apps/v1/replicasets',
  '/apis/rbac.authorization.k8s.io/v1/clusterroles',
];

/** Every object of KINDS: "path name" → uid and resourceVersion. */
async function inventory(client: ApiClient): Promise<Map<string, { uid: string; rv: number }>> {
  const out = new Map<string, { uid: string; rv: number }>();
  for (const path of KINDS) {
    const list = await client.get<KubeList>(path);
    for (const o of list.items) out.set(`${path} ${o.metadata.namespace ?? ''}/${o.metadata.name}`, { uid: o.metadata.uid!, rv: Number(o.metadata.resourceVersion) });
  }
  return out;
}

describe('skiff up --convert', () => {
  it('refuses what it cannot convert, in one line naming the way', async () => {
    const noEtcd = await runSkiff(['up', '--convert', '--data-dir', join(root, 'none')]);
    assert.equal(noEtcd.code, 2);
    assert.match(noEtcd.stderr, /^skiff up: --convert moves a SQLite cluster into etcd: it needs --storage etcd/m);
    const empty = await runSkiff(['up', '--servers', '3', '--storage', 'etcd', '--convert', '--data-dir', join(root, 'none')]);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /^skiff up: .*none holds no cluster to convert \(a directory of a single-server skiff up on SQLite\)$/m);
  });

  it('moves a running SQLite cluster into 3 etcd members with every object, no node NotReady, and survives the loss of the original server', async () => {
    requireEtcdBinary();
    const dir = join(root, 'live');
    const [port] = await freePorts(1);
    const { up, out } = await startSqliteCluster(dir, port!, 2);
    const members = [1, 2, 3].map((i) => `https://127.0.0.${i}:${port}`);
    const client = adminClient(dir);
    const kubectl = (args: string[]) => run('kubectl', ['--kubeconfig', join(dir, 'kubeconfig'), ...args]);
    await kubectl(['create', 'namespace', 'shop']);
    await kubectl(['-n', 'shop', 'create', 'deployment', 'web', '--image=busybox', '--replicas=3']);
    await kubectl(['-n', 'shop', 'create', 'configmap', 'settings', '--from-literal=color=blue']);
    await kubectl(['-n', 'shop', 'create', 'secret', 'generic', 'token', '--from-literal=t=s3cret']);
    await kubectl(['-n', 'shop', 'create', 'service', 'clusterip', 'web', '--tcp=80:8080']);
    await kubectl(['-n', 'shop', 'create', 'serviceaccount', 'robot']);
    await kubectl(['create', 'clusterrole', 'reader', '--verb=get', '--resource=pods']);
    await eventually(async () => (await client.get<KubeList>('/api/v1/namespaces/shop/pods')).items.filter((p) => (p.status as { phase?: string })?.phase === 'Running').length === 3, 60_000, '3 web pods Running');
    const before = await inventory(client);
    const pods = (await client.get<KubeList>('/api/v1/namespaces/shop/pods')).items.map((p) => `${p.metadata.name} ${p.metadata.uid}`).sort();
    const listRv = (await client.get<KubeList>('/api/v1/namespaces/shop/configmaps')).metadata.resourceVersion!;
    // A watch open across the conversion: whatever it sees must be true; resumed, it must relist.
    const seen: string[] = [];
    let lastRv = listRv;
    const watching = (async () => {
      try {
        for await (const ev of client.watch('/api/v1/namespaces/shop/configmaps', { resourceVersion: listRv }, AbortSignal.timeout(120_000))) {
          seen.push(`${ev.type} ${(ev.object as KubeObject).metadata?.name}`);
          if ((ev.object as KubeObject).metadata?.resourceVersion) lastRv = (ev.object as KubeObject).metadata.resourceVersion!;
        }
      } catch {
        /* the stream breaks when the server stops: expected */
      }
    })();

    // Every node, every 0.5 s, through whichever member answers.
    const sampler = adminClient(dir, members);
    const notReady: string[] = [];
    let samples = 0;
    let unanswered = 0;
    let sampling = true;
    const sampling$ = (async () => {
      while (sampling) {
        const t = Date.now();
        try {
          const nodes = await sampler.get<KubeList>('/api/v1/nodes');
          samples++;
          for (const n of nodes.items) {
            const ready = ((n.status as { conditions?: { type: string; status: string }[] })?.conditions ?? []).find((c) => c.type === 'Ready');
            if (ready?.status !== 'True') notReady.push(`${new Date().toISOString()} ${n.metadata.name} ${ready?.status}`);
          }
        } catch {
          unanswered++;
        }
        await new Promise((r) => setTimeout(r, Math.max(0, 500 - (Date.now() - t))));
      }
    })();

    try {
      const started = Date.now();
      const r = await runSkiff(['up', '--data-dir', dir, '--servers', '3', '--storage', 'etcd', '--convert', '--port', String(port)], { timeoutMs: 180_000 });
      const took = Date.now() - started;
      assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
      assert.match(r.stdout, /^asking the skiff up that runs the cluster \(pid \d+\) to convert it to etcd with 3 API servers; its nodes keep running$/m);
      assert.match(r.stdout, /^raising etcd's revision from \d+ to \d+, above every resourceVersion the SQLite store gave out \(\d+ writes\)$/m);
      assert.match(r.stdout, /^copying \d+ keys into etcd \(\d+ with a TTL, kept as etcd leases/m);
      const paused = /^server serves again, on etcd, ([\d.]+) s after it stopped on SQLite$/m.exec(r.stdout);
      assert.ok(paused, r.stdout);
      assert.match(r.stdout, /^adding server-2 on https:\/\/127\.0\.0\.2:\d+$/m);
      assert.match(r.stdout, /^adding server-3 on https:\/\/127\.0\.0\.3:\d+$/m);
      assert.match(r.stdout, new RegExp(`^the cluster runs on etcd with 3 API servers .*; control-plane endpoint: https://127\\.0\\.0\\.1:${port! + 1} \\(HAProxy\\); its SQLite file is kept as .*state\\.db\\.pre-etcd`, 'm'));
      assert.ok(existsSync(join(dir, 'server', 'db', 'state.db.pre-etcd')) && !existsSync(join(dir, 'server', 'db', 'state.db')), 'the SQLite file is put aside');
      const layout = JSON.parse(readFileSync(join(dir, 'cluster.json'), 'utf8')) as Record<string, unknown>;
      assert.deepEqual([layout.storage, layout.etcdMembers, layout.convertedFrom], ['etcd', 3, 'sqlite']);
      console.log(`conversion took ${took} ms, the server paused ${paused[1]} s; ${samples} node samples, ${unanswered} unanswered`);

      // Every object, with its uid, above its old resourceVersion.
      const endpointClient = adminClient(dir);
      assert.equal(parseKubeconfig(readFileSync(join(dir, 'kubeconfig'), 'utf8'), (p) => readFileSync(p, 'utf8')).server, `https://127.0.0.1:${port! + 1}`);
      const afterConversion = await inventory(endpointClient);
      for (const [k, v] of before) {
        const now = afterConversion.get(k);
        // Nodes of the control plane come and go with their members; the workers' and everything else stay.
        assert.ok(now, `${k} is still there`);
        assert.equal(now.uid, v.uid, `${k} keeps its uid`);
        assert.ok(now.rv > v.rv, `${k}: resourceVersion ${now.rv} above ${v.rv}`);
      }
      await eventually(async () => (await endpointClient.get<KubeList>('/api/v1/nodes')).items.some((n) => n.metadata.name === 'control-plane-3'), 30_000, 'the new members are nodes too');
      const podsAfter = (await endpointClient.get<KubeList>('/api/v1/namespaces/shop/pods')).items.map((p) => `${p.metadata.name} ${p.metadata.uid}`).sort();
      assert.deepEqual(podsAfter, pods, 'the pods keep their names and uids');
      // A watch from before the conversion: 410, never events under numbers of another store.
      await watching;
      for (const rv of new Set([listRv, lastRv])) {
        await assert.rejects(
          (async () => {
            for await (const ev of endpointClient.watch('/api/v1/namespaces/shop/configmaps', { resourceVersion: rv }, AbortSignal.timeout(5000))) void ev;
          })(),
          (e: unknown) => isStatusError(e) && e.code === 410,
          `a watch from resourceVersion ${rv} (before the conversion) is answered 410 Gone`,
        );
      }
      assert.ok(seen.every((s) => s === 'ADDED settings' || s.startsWith('BOOKMARK')), `what the open watch saw: ${seen.join(', ')}`);

      // The agents learned the new members as they do any (from default/kubernetes).
      for (const n of ['node-1', 'node-2']) {
        await eventually(() => {
          try {
            const known = (JSON.parse(readFileSync(join(dir, 'agents', n, 'servers.json'), 'utf8')) as { servers: string[] }).servers;
            return members.every((m) => known.includes(m));
          } catch {
            return false;
          }
        }, 30_000, `${n} knowing every member`);
      }

      // The original server SIGKILLed: agents renew through the others, kubectl through HAProxy works.
      const leases = async () => Object.fromEntries((await endpointClient.get<KubeList>('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases')).items.map((l) => [l.metadata.name, (l.spec as { renewTime?: string }).renewTime]));
      const [victim] = processesMentioning(`${join(dir, 'server')}\0`);
      assert.ok(victim, 'the original server runs');
      process.kill(victim, 'SIGKILL');
      const killedAt = new Date().toISOString();
      await eventually(async () => {
        const l = await leases();
        return ['node-1', 'node-2'].every((n) => (l[n] ?? '') > killedAt);
      }, 20_000, 'node-1 and node-2 renewing their Leases after the original server was killed');
      const table = await kubectl(['get', 'nodes']);
      assert.match(table, /^node-1\s+Ready\s/m);
      assert.match(table, /^node-2\s+Ready\s/m);
      await kubectl(['-n', 'shop', 'create', 'configmap', 'after-the-kill', '--from-literal=a=1']);
      endpointClient.close();
    } finally {
      sampling = false;
      await sampling$;
      sampler.close();
      client.close();
    }
    assert.ok(samples > 10, `${samples} samples`);
    assert.deepEqual(notReady, [], 'no node NotReady at any sample');
    up.signal('SIGTERM');
    assert.equal((await up.exited).code, 0);
    assert.match(readFileSync(out, 'utf8'), /cluster stopped/);
    assert.deepEqual(processesMentioning(dir), [], 'nothing of the cluster left running');

    // Started again later as what it is now: 3 members on etcd, the first still in server/.
    const out2 = join(root, 'live-up-again.out');
    const again = startProcess({
      name: 'up',
      command: process.execPath,
      args: [SKIFF_BIN, 'up', '--servers', '3', '--storage', 'etcd', '--data-dir', dir, '--nodes', '2', '--port', String(port), '--runtime', 'simulated', '--dashboard', 'false', '--kubeconfig-update', 'false'],
      output: out2,
    });
    ups.push(again);
    await eventually(() => readFileSync(out2, 'utf8').includes('cluster ready'), 120_000, `"cluster ready" in ${out2}`);
    assert.match(readFileSync(out2, 'utf8'), new RegExp(`^starting server on https://127\\.0\\.0\\.1:${port} `, 'm'));
    assert.match(await kubectl(['-n', 'shop', 'get', 'configmap', 'after-the-kill', '-o', 'name']), /configmap\/after-the-kill/);
    again.signal('SIGTERM');
    assert.equal((await again.exited).code, 0);
  });

  it('an interrupted conversion (skiff up SIGKILLed midway) leaves a cluster that starts again on SQLite with nothing lost', async () => {
    requireEtcdBinary();
    const dir = join(root, 'killed');
    const [port] = await freePorts(1);
    const { up } = await startSqliteCluster(dir, port!, 1);
    const client = adminClient(dir);
    for (let i = 0; i < 50; i++) await client.create('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { i: String(i) } });
    const before = await inventory(client);
    client.close();
    const log = join(dir, 'logs', 'conversion.log');
    const converting = runSkiff(['up', '--data-dir', dir, '--servers', '3', '--storage', 'etcd', '--convert', '--port', String(port)], { timeoutMs: 120_000 });
    // The moment the server has been stopped for the copy.
    await eventually(() => existsSync(log) && /stopping server \(SQLite\) for the copy/.test(readFileSync(log, 'utf8')), 60_000, 'the server stopping for the copy');
    up.signal('SIGKILL');
    await up.exited;
    const r = await converting;
    assert.equal(r.code, 1);
    assert.match(r.stderr, /exited before it was done; the SQLite store is as it was: skiff up --data-dir .* starts the cluster on it again/);
    // What the killed up left running goes with skiff down; then the cluster starts on SQLite.
    const down = await runSkiff(['down', '--data-dir', dir], { timeoutMs: 120_000 });
    assert.equal(down.code, 0, down.stderr);
    const { up: again, out } = await startSqliteCluster(dir, port!, 1, 2);
    assert.match(readFileSync(out, 'utf8'), /^a conversion to etcd started .* did not finish: the cluster starts on its SQLite store, which the conversion only read; its partial etcd copy is removed$/m);
    assert.ok(!existsSync(join(dir, 'etcd')), 'the partial etcd copy is gone');
    const c = adminClient(dir);
    try {
      const now = await inventory(c);
      for (const [k, v] of before) {
        if (k.startsWith('/api/v1/nodes ')) continue;
        assert.equal(now.get(k)?.uid, v.uid, `${k} is there with its uid`);
      }
      assert.equal([...now.keys()].filter((k) => k.includes('/cm-')).length, 50);
    } finally {
      c.close();
    }
    again.signal('SIGTERM');
    assert.equal((await again.exited).code, 0);
  });
});

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(cmd, args, { timeout: 20_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stderr}`)) : resolve(stdout))),
  );
}
