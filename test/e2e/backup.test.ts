// `skiff backup` and `skiff restore`: an online backup of a running server (SQLite: the database
// as of one moment plus the cluster's keys; etcd: a snapshot), restored into a fresh data
// directory that serves the same objects under the same CA, resourceVersions continuing above
// anything seen before, and old watches told to relist.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SKIFF_BIN, TEST_JOIN_TOKEN, TestServer, eventually, runSkiff } from '../support/cluster.js';
import { startEtcd, type LocalEtcdCluster } from '../support/etcd.js';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import { ApiClient } from '../../src/client/rest.js';
import { freePorts } from '../../src/util/ports.js';
import { isStatusError } from '../../src/api/errors.js';
import type { KubeList, KubeObject } from '../../src/api/types.js';

const CM = '/api/v1/namespaces/default/configmaps';
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: name } });

describe('backup and restore on SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-backup-'));
  const original = new TestServer('backup-src');
  const restored = new TestServer('backup-dst', join(dir, 'restored'));
  after(async () => {
    await original.stop();
    await restored.stop();
    original.cleanup();
    restored.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('backs up a running server and restores it into a fresh data dir: same objects, same CA, resourceVersions above all seen', async () => {
    await original.start();
    const c = original.client();
    for (let i = 0; i < 20; i++) await c.create(CM, cm(`kept-${i}`));
    const file = join(dir, 'cluster.backup');
    // Writes go on while the backup is taken: it holds a moment, whole, whatever it is.
    let writing = true;
    let n = 0;
    const writer = (async () => {
      while (writing) await c.create(CM, cm(`during-${n++}`));
    })();
    const b = await runSkiff(['backup', file, '--data-dir', original.dataDir]);
    writing = false;
    await writer;
    assert.equal(b.code, 0, b.stderr);
    assert.equal(statSync(file).mode & 0o777, 0o600, 'the backup holds keys and Secrets: private');
    const backedUp = Number(/backup of revision (\d+)/.exec(b.stdout)?.[1]);
    assert.ok(backedUp > 0, b.stdout);
    const after = await c.create<KubeObject>(CM, cm('after-backup'));
    const seen = Number(after.metadata.resourceVersion);
    c.close();
    await original.stop();

    const r = await runSkiff(['restore', file, '--layout', 'server', '--data-dir', restored.dataDir]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(join(restored.dataDir, 'tls', 'ca.crt'), 'utf8'), readFileSync(join(original.dataDir, 'tls', 'ca.crt'), 'utf8'), 'the same cluster CA');
    // The history before the restore is gone for good: only the current value of each key is kept.
    const db = new Database(join(restored.dataDir, 'db', 'state.db'), { readonly: true });
    try {
      assert.equal(db.prepare('SELECT count(*) FROM log').pluck().get(), db.prepare('SELECT count(*) FROM current').pluck().get());
    } finally {
      db.close();
    }
    await restored.start();
    // The original admin credentials still work: the keys came back with the data.
    const old = ApiClient.fromKubeconfig(original.kubeconfig, { timeoutMs: 10_000, servers: [`https://127.0.0.1:${restored.port}`] });
    try {
      const list = await old.get<KubeList>(CM);
      const names = new Set(list.items.map((i) => i.metadata.name));
      for (let i = 0; i < 20; i++) assert.ok(names.has(`kept-${i}`), `kept-${i}`);
      assert.ok(!names.has('after-backup'), 'a write after the backup is not in it');
      // Objects written during the backup are there up to a point, and none after a missing one.
      const during = [...names].filter((x) => x?.startsWith('during-')).map((x) => Number(x!.slice(7))).sort((a, b) => a - b);
      assert.deepEqual(during, during.map((_, i) => i), 'the backup is one moment: no gaps');
      const fresh = await old.create<KubeObject>(CM, cm('after-restore'));
      assert.ok(Number(fresh.metadata.resourceVersion) > seen, `resourceVersion ${fresh.metadata.resourceVersion} is above every one seen before (${seen})`);
      await assert.rejects(
        (async () => {
          for await (const ev of old.watch(CM, { resourceVersion: String(seen) }, AbortSignal.timeout(5000))) void ev;
        })(),
        (e: unknown) => isStatusError(e) && e.code === 410,
        'a watch resumed from before the restore must relist',
      );
    } finally {
      old.close();
    }
    const again = await runSkiff(['restore', file, '--layout', 'server', '--data-dir', restored.dataDir]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /is in use by a running process \(pid \d+, lock .*server\.lock\).*restore into a fresh data directory/);
  });
});

describe('backup and restore on etcd', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-backup-etcd-'));
  let etcd: LocalEtcdCluster | undefined;
  const source = new TestServer('backup-etcd-src');
  let up: ManagedProcess | undefined;
  after(async () => {
    await up?.stop(30_000);
    await source.stop();
    await etcd?.destroy();
    source.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('snapshots etcd and restores it as the etcd of a skiff up directory', async () => {
    etcd = await startEtcd({ members: 1 });
    await source.start(['--storage', 'etcd', '--etcd-endpoints', etcd.endpoints.join(','), '--token', TEST_JOIN_TOKEN]);
    const c = source.client();
    for (let i = 0; i < 5; i++) await c.create(CM, cm(`etcd-kept-${i}`));
    c.close();
    const file = join(dir, 'etcd.snapshot');
    const b = await runSkiff(['backup', file, '--etcd-endpoints', etcd.endpoints.join(',')]);
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stdout, /etcd snapshot of revision \d+ written/);
    const c2 = source.client();
    let seen = 0;
    for (let i = 0; i < 5; i++) seen = Number((await c2.create<KubeObject>(CM, cm(`etcd-after-${i}`))).metadata.resourceVersion);
    c2.close();
    await source.stop();
    await etcd.destroy();
    etcd = undefined;

    const target = join(dir, 'up');
    const noToken = await runSkiff(['restore', file, '--data-dir', target]);
    assert.equal(noToken.code, 1);
    assert.match(noToken.stderr, /needs --token/);
    const r = await runSkiff(['restore', file, '--data-dir', target, '--token', TEST_JOIN_TOKEN]);
    assert.equal(r.code, 0, r.stderr);
    const [port] = await freePorts(1);
    const out = join(dir, 'up.out');
    up = startProcess({ name: 'up', command: process.execPath, args: [SKIFF_BIN, 'up', '--storage', 'etcd', '--data-dir', target, '--nodes', '0', '--port', String(port), '--runtime', 'simulated'], output: out });
    await eventually(() => readFileSync(out, 'utf8').includes('cluster ready'), 90_000, '"cluster ready"');
    const restoredClient = ApiClient.fromKubeconfig(join(target, 'kubeconfig'), { timeoutMs: 10_000 });
    try {
      const names = (await restoredClient.get<KubeList>(CM)).items.map((i) => i.metadata.name);
      for (let i = 0; i < 5; i++) assert.ok(names.includes(`etcd-kept-${i}`), `etcd-kept-${i}`);
      assert.ok(!names.includes('etcd-after-0'), 'a write after the snapshot is not in it');
      const fresh = await restoredClient.create<KubeObject>(CM, cm('etcd-after-restore'));
      assert.ok(Number(fresh.metadata.resourceVersion) > seen, `resourceVersion ${fresh.metadata.resourceVersion} is above every one seen before (${seen})`);
      await assert.rejects(
        (async () => {
          for await (const ev of restoredClient.watch(CM, { resourceVersion: String(seen) }, AbortSignal.timeout(5000))) void ev;
        })(),
        (e: unknown) => isStatusError(e) && e.code === 410,
        'a watch resumed from before the restore must relist',
      );
    } finally {
      restoredClient.close();
    }
    up.signal('SIGTERM');
    assert.equal((await up.exited).code, 0);
    up = undefined;
  });
});
