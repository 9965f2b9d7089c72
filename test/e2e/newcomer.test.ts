// What a newcomer meets when a data directory or a port is not what skiff expects: one clear line
// that names the way out (a flag, a directory), never a loop of TLS errors or a timeout; and logs
// that read as text on a terminal and as JSON in a file.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_JOIN_TOKEN, TestAgent, TestServer, eventually, runSkiff } from '../support/cluster.js';
import { freePorts } from '../../src/util/ports.js';

describe('an agent whose data dir holds another cluster’s credential', () => {
  const first = new TestServer('newcomer-a');
  const second = new TestServer('newcomer-b');
  const dataDir = mkdtempSync(join(tmpdir(), 'newcomer-agent-'));
  before(async () => {
    await first.start(['--token', TEST_JOIN_TOKEN]);
  });
  after(async () => {
    await first.stop();
    await second.stop();
    first.cleanup();
    second.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('rejoins the new cluster with the token, and without one stops with one line naming the way out', async () => {
    const a = new TestAgent(first, 'reused', dataDir);
    await a.start();
    await a.stop();
    await first.stop();
    // The cluster is made anew (another data dir: another CA), the agent's data dir is kept.
    await second.start(['--token', TEST_JOIN_TOKEN]);
    const ca = join(second.dataDir, 'tls', 'ca.crt');
    const url = new TestAgent(second, 'reused').serverUrl;
    const refused = await runSkiff(['agent', '--server', url, '--ca-file', ca, '--data-dir', dataDir, '--node-name', 'reused', '--kubelet-port', '0'], { env: { SKIFF_TOKEN: '' } });
    assert.equal(refused.code, 78);
    assert.match(refused.stderr, /^skiff agent: the node credential in the data dir was issued by another cluster's CA than .*ca\.crt's .*: pass --token to join this cluster/m);
    assert.equal(refused.stderr.trim().split('\n').filter((l) => l.startsWith('skiff agent:')).length, 1);
    const b = new TestAgent(second, 'reused', dataDir);
    await b.start();
    assert.equal(b.logLines("the node credential in the data dir was issued by another cluster's CA than " + ca + "'s (the cluster was made anew?); joining this cluster with the token").length, 1);
    await b.stop();
  });
});

describe('skiff up and skiff server on a directory or port that is taken', () => {
  const dir = mkdtempSync(join(tmpdir(), 'newcomer-up-'));
  const blockers: Server[] = [];
  after(() => {
    for (const b of blockers) b.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function block(host: string, port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(port, host, () => resolve());
      blockers.push(s);
    });
  }

  it('up refuses a directory made with other storage, naming the flag', async () => {
    const sqliteDir = join(dir, 'was-sqlite');
    mkdirSync(join(sqliteDir, 'server', 'db'), { recursive: true });
    writeFileSync(join(sqliteDir, 'server', 'db', 'state.db'), '');
    const r = await runSkiff(['up', '--data-dir', sqliteDir, '--storage', 'etcd']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^skiff up: .*was-sqlite holds a cluster on the embedded SQLite store from an earlier up: start it again with --storage sqlite, move it to etcd with --servers 3 --storage etcd --convert, or use another --data-dir/m);
    const etcdDir = join(dir, 'was-etcd');
    mkdirSync(etcdDir);
    writeFileSync(join(etcdDir, 'cluster.json'), JSON.stringify({ storage: 'etcd', etcdMembers: 3 }));
    const e = await runSkiff(['up', '--data-dir', etcdDir]);
    assert.equal(e.code, 2);
    assert.match(e.stderr, /holds a cluster on etcd \(3 members\) from an earlier up: start it again with --storage etcd/);
    const one = await runSkiff(['up', '--data-dir', etcdDir, '--storage', 'etcd']);
    assert.match(one.stderr, /holds an etcd cluster of 3 members from an earlier up: start it again with --servers 2 or more/);
  });

  it('a port in use is one line naming the port and the flag that changes it', async () => {
    const [port] = await freePorts(1);
    await block('127.0.0.1', port!);
    const up = await runSkiff(['up', '--data-dir', join(dir, 'up'), '--port', String(port)]);
    assert.equal(up.code, 2);
    assert.equal(up.stderr.trim(), `skiff up: 127.0.0.1:${port} (the API server) is already in use by another process; choose another with --port N`);
    assert.doesNotMatch(up.stdout, /agents drain/);
    const server = await runSkiff(['server', '--data-dir', join(dir, 'server'), '--listen', `127.0.0.1:${port}`]);
    assert.equal(server.code, 1);
    assert.match(server.stderr, new RegExp(`^skiff server: 127\\.0\\.0\\.1:${port} \\(the API server\\) is already in use by another process; choose another with --listen HOST:PORT$`, 'm'));
  });
});

describe('log formats', () => {
  const s = new TestServer('logformat');
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  it('are JSON lines in a file by default, and text lines with --log-format text', async () => {
    await s.start();
    const json = s.logs().split('\n').find((l) => l.includes('API server listening'))!;
    assert.equal((JSON.parse(json) as { msg: string }).msg, 'API server listening');
    await s.stop();
    rmSync(s.logFile, { force: true });
    await s.start(['--log-format', 'text']);
    await eventually(() => s.logs().includes('API server listening'), 5000, 'the listening line');
    const text = s.logs().split('\n').find((l) => l.includes('API server listening'))!;
    assert.match(text, /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] INFO \(skiff-server\): API server listening \{"host":"127\.0\.0\.1","port":\d+\}$/);
  });
});
