// `skiff install server|agent` and `skiff uninstall`: systemd units, config and env files, data
// directories — and each unit's command run as systemd would run it (its ExecStart, with its
// EnvironmentFile), so the files are proven to start a real server and a real agent. The agent
// restarts in place on SIGUSR2 (an upgrade: pods and Node kept, exit 75) and leaves on SIGTERM.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import { ApiClient } from '../../src/client/rest.js';
import { TEST_JOIN_TOKEN, eventually, runSkiff } from '../support/cluster.js';
import { freePorts } from '../../src/util/ports.js';
import { startEtcd } from '../support/etcd.js';
import type { KubeList } from '../../src/api/types.js';

/** skiff without a token in its environment: the tests give it where they mean to. */
const skiffNoToken = (args: string[]) => runSkiff(args, { env: { SKIFF_TOKEN: '' } });

/** Starts a unit's ExecStart as systemd would: its EnvironmentFile read, its paths under `root`. */
function runUnit(root: string, role: string, log: string): ManagedProcess {
  const unit = readFileSync(join(root, 'etc/systemd/system', `skiff-${role}.service`), 'utf8');
  const exec = /^ExecStart=(.*)$/m.exec(unit)![1]!.split(' ');
  const envFile = /^EnvironmentFile=-?(.*)$/m.exec(unit)![1]!;
  const env: NodeJS.ProcessEnv = { ...process.env, SKIFF_TOKEN: '' };
  if (existsSync(join(root, envFile))) {
    for (const line of readFileSync(join(root, envFile), 'utf8').split('\n')) {
      const m = /^([A-Z_]+)=(.*)$/.exec(line);
      if (m) env[m[1]!] = m[2]!;
    }
  }
  const args = exec.slice(1).map((a) => (a.startsWith('/etc/skiff/') ? join(root, a) : a));
  return startProcess({ name: `unit-${role}`, command: exec[0]!, args, env, output: log });
}

describe('skiff install and uninstall', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-install-'));
  const serverRoot = join(dir, 'server-root');
  const agentRoot = join(dir, 'agent-root');
  const serverData = join(dir, 'server-data');
  const agentData = join(dir, 'agent-data');
  let server: ManagedProcess | undefined;
  let agent: ManagedProcess | undefined;
  let client: ApiClient;
  let port = 0;
  before(async () => {
    [port] = (await freePorts(1)) as [number];
  });
  after(async () => {
    client?.close();
    await agent?.stop(20_000);
    await server?.stop(10_000);
    if (!process.env.SKIFF_KEEP_TEST_DATA) rmSync(dir, { recursive: true, force: true });
  });

  it('--dry-run writes nothing and shows every file; a bad flag is refused before anything is written', async () => {
    const hash = `sha256:${'0'.repeat(64)}`;
    const dry = await skiffNoToken(['install', 'agent', '--dry-run', '--root', join(dir, 'dry'), '--server', 'https://10.0.0.1:6443', '--token', TEST_JOIN_TOKEN, '--ca-cert-hash', hash]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /--- .*dry\/etc\/systemd\/system\/skiff-agent\.service/);
    assert.match(dry.stdout, /^ExecStart=.* agent --config \/etc\/skiff\/agent\.yaml$/m);
    assert.match(dry.stdout, /SKIFF_TOKEN=<the token>/);
    assert.doesNotMatch(dry.stdout, new RegExp(TEST_JOIN_TOKEN.replace('.', '\\.')), 'the token is not shown');
    assert.equal(existsSync(join(dir, 'dry')), false);
    const bad = await skiffNoToken(['install', 'agent', '--root', join(dir, 'bad'), '--server', 'https://10.0.0.1:6443', '--node-lease-duration-seconds', 'soon']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^skiff install: .*--node-lease-duration-seconds/m);
    assert.equal(existsSync(join(dir, 'bad')), false);
    // What the agent would refuse at its first boot is refused at install.
    for (const [args, why] of [
      [['--server', '10.0.0.1', '--token', TEST_JOIN_TOKEN, '--ca-cert-hash', hash], /"10\.0\.0\.1" is not a URL: use https:\/\/HOST:PORT/],
      [['--server', 'https://10.0.0.1:6443', '--token', 'badtoken', '--ca-cert-hash', hash], /a bootstrap token looks like abcdef\.0123456789abcdef/],
      [['--server', 'https://10.0.0.1:6443', '--token', TEST_JOIN_TOKEN], /verifies the cluster CA when it joins: pass --ca-file FILE or --ca-cert-hash/],
      [['--server', 'https://10.0.0.1:6443', '--ca-cert-hash', hash], /an agent joins with --token/],
    ] as const) {
      const r = await skiffNoToken(['install', 'agent', '--root', join(dir, 'bad'), ...args]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, why);
      assert.equal(existsSync(join(dir, 'bad')), false);
    }
  });

  it('installs a server whose unit starts it', async () => {
    const r = await skiffNoToken(['install', 'server', '--root', serverRoot, '--listen', `127.0.0.1:${port}`, '--token', TEST_JOIN_TOKEN, '--data-dir', serverData]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /systemd is not running here: start it with systemctl daemon-reload && systemctl enable --now skiff-server/);
    const unit = readFileSync(join(serverRoot, 'etc/systemd/system/skiff-server.service'), 'utf8');
    for (const line of ['Restart=on-failure', 'RestartPreventExitStatus=78', 'KillMode=process', 'StandardError=journal', 'SyslogIdentifier=skiff-server', 'WantedBy=multi-user.target', 'EnvironmentFile=-/etc/skiff/skiff-server.env']) {
      assert.ok(unit.split('\n').includes(line), line);
    }
    assert.equal(statSync(join(serverRoot, 'etc/skiff/skiff-server.env')).mode & 0o777, 0o600, 'the token file is private');
    const flags = readFileSync(join(serverRoot, 'etc/skiff/server.yaml'), 'utf8');
    assert.doesNotMatch(flags, /abcdef/, 'no token in the flags file');
    assert.match(flags, /^log-format: text$/m, 'the journal gets text lines');
    try {
      execFileSync('systemd-analyze', ['verify', join(serverRoot, 'etc/systemd/system/skiff-server.service')], { stdio: 'pipe' });
    } catch (e) {
      const err = e as { code?: string; stderr?: Buffer };
      if (err.code !== 'ENOENT') assert.fail(`systemd-analyze verify: ${String(err.stderr)}`);
    }
    server = runUnit(serverRoot, 'server', join(dir, 'server.log'));
    await eventually(() => existsSync(join(serverData, 'kubeconfig')), 30_000, 'the server’s kubeconfig');
    client = ApiClient.fromKubeconfig(join(serverData, 'kubeconfig'), { timeoutMs: 5000 });
    await eventually(async () => String(await client.get('/readyz')).trim() === 'ok', 30_000, 'server ready');
  });

  it('installs an agent whose unit joins; SIGUSR2 restarts it in place, SIGTERM makes it leave', async () => {
    const r = await skiffNoToken([
      'install', 'agent', '--root', agentRoot, '--server', `https://127.0.0.1:${port}`, '--token', TEST_JOIN_TOKEN,
      '--ca-file', join(serverData, 'tls', 'ca.crt'), '--node-name', 'installed', '--data-dir', agentData, '--kubelet-port', '0',
      '--runtime', 'simulated', '--labels', 'via=install', '--labels', 'tier=test',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(existsSync(join(agentRoot, agentData)), 'the data directory');
    const ready = async () => {
      const n = await client.get<{ metadata: { uid: string; labels: Record<string, string> }; status?: { conditions?: { type: string; status: string }[] } }>('/api/v1/nodes/installed');
      return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? n : undefined;
    };
    agent = runUnit(agentRoot, 'agent', join(dir, 'agent.log'));
    const node = await eventually(ready, 30_000, 'the installed node Ready');
    assert.equal(node.metadata.labels.via, 'install');
    assert.equal(node.metadata.labels.tier, 'test', 'a repeated flag kept both values');
    // An upgrade: stop in place; the Node stays Ready, and the next agent takes over the same Node.
    agent.signal('SIGUSR2');
    assert.equal((await agent.exited).code, 75);
    const kept = await ready();
    assert.equal(kept?.metadata.uid, node.metadata.uid, 'the Node stayed');
    agent = runUnit(agentRoot, 'agent', join(dir, 'agent.log'));
    await eventually(async () => readFileSync(join(dir, 'agent.log'), 'utf8').split('agent started').length === 3, 30_000, 'the second agent started');
    assert.equal((await ready())?.metadata.uid, node.metadata.uid);
    agent.signal('SIGTERM');
    assert.equal((await agent.exited).code, 0);
    agent = undefined;
    await assert.rejects(client.get('/api/v1/nodes/installed'), (e: { code?: number }) => e.code === 404);
  });

  it('a server installed on SQLite, installed again with --storage etcd --convert, starts on etcd with every object', async () => {
    for (let i = 0; i < 5; i++) await client.create('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `kept-${i}` }, data: { i: String(i) } });
    const before = (await client.get<KubeList>('/api/v1/namespaces/default/configmaps')).items.map((c) => ({ name: c.metadata.name, uid: c.metadata.uid, rv: Number(c.metadata.resourceVersion) }));
    client.close();
    await server?.stop(10_000);
    server = undefined;
    const etcd = await startEtcd();
    try {
      const r = await skiffNoToken(['install', 'server', '--root', serverRoot, '--listen', `127.0.0.1:${port}`, '--token', TEST_JOIN_TOKEN, '--data-dir', serverData, '--storage', 'etcd', '--etcd-endpoints', etcd.endpoints.join(','), '--convert']);
      assert.equal(r.code, 0, r.stderr);
      const flags = readFileSync(join(serverRoot, 'etc/skiff/server.yaml'), 'utf8');
      assert.match(flags, /^storage: etcd$/m);
      assert.match(flags, /^convert: true$/m);
      const log = join(dir, 'server-etcd.log');
      server = runUnit(serverRoot, 'server', log);
      client = ApiClient.fromKubeconfig(join(serverData, 'kubeconfig'), { timeoutMs: 5000 });
      await eventually(async () => String(await client.get('/readyz')).trim() === 'ok', 60_000, 'server ready on etcd');
      const now = (await client.get<KubeList>('/api/v1/namespaces/default/configmaps')).items;
      for (const b of before) {
        const c = now.find((x) => x.metadata.name === b.name);
        assert.equal(c?.metadata.uid, b.uid, `${b.name} keeps its uid`);
        assert.ok(c && Number(c.metadata.resourceVersion) > b.rv, `${b.name}: resourceVersion above ${b.rv}`);
      }
      assert.match(readFileSync(log, 'utf8'), /--convert: the SQLite store is kept as .*state\.db\.pre-etcd/);
      assert.ok(existsSync(join(serverData, 'db', 'state.db.pre-etcd')) && !existsSync(join(serverData, 'db', 'state.db')));
      // Started again with the same unit: converted before, it just starts.
      await server.stop(10_000);
      server = runUnit(serverRoot, 'server', log);
      await eventually(async () => String(await client.get('/readyz')).trim() === 'ok', 60_000, 'server ready again');
      assert.match(readFileSync(log, 'utf8'), /--convert: the SQLite store was converted before/);
      assert.equal((await client.get<KubeList>('/api/v1/namespaces/default/configmaps')).items.filter((c) => c.metadata.name?.startsWith('kept-')).length, 5);
    } finally {
      client.close();
      await server?.stop(10_000);
      server = undefined;
      await etcd.destroy();
    }
  });

  it('uninstall removes the units and files, and the data only with --purge', async () => {
    const keep = await skiffNoToken(['uninstall', '--root', serverRoot]);
    assert.equal(keep.code, 0, keep.stderr);
    assert.match(keep.stdout, /removed .*skiff-server\.service/);
    assert.match(keep.stdout, /kept .*server-data \(--purge removes it\)/);
    assert.equal(existsSync(join(serverRoot, 'etc/skiff/server.yaml')), false);
    const purge = await skiffNoToken(['uninstall', '--root', agentRoot, '--purge']);
    assert.equal(purge.code, 0, purge.stderr);
    assert.equal(existsSync(join(agentRoot, 'etc/systemd/system/skiff-agent.service')), false);
    assert.equal(existsSync(join(agentRoot, agentData)), false);
    assert.match((await skiffNoToken(['uninstall', '--root', agentRoot])).stdout, /nothing installed under/);
  });
});
