// `skiff restore` lays a backup out as the directory it came from (a `skiff server` directory, or
// a `skiff up` one), so the command that ran the cluster finds its data again; and it refuses a
// directory a running server uses, or one that is not fresh, before writing anything.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestServer, runSkiff } from '../support/cluster.js';
import type { KubeList } from '../../src/api/types.js';

const CM = '/api/v1/namespaces/default/configmaps';

describe('restore: the layout a backup came from, and never into a used directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-restore-layout-'));
  const original = new TestServer('restore-src');
  const restored = new TestServer('restore-dst', join(dir, 'as-server'));
  after(async () => {
    await original.stop();
    await restored.stop();
    original.cleanup();
    restored.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses the directory of a running server and one that is not fresh, writing nothing', async () => {
    await original.start();
    const c = original.client();
    await c.create(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept' }, data: { v: '1' } });
    c.close();
    const file = join(dir, 'server.backup');
    const b = await runSkiff(['backup', file, '--data-dir', original.dataDir]);
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stdout, /from a skiff server directory/);

    const before = readdirSync(original.dataDir).sort();
    const live = await runSkiff(['restore', file, '--data-dir', original.dataDir]);
    assert.equal(live.code, 1);
    assert.equal(live.stderr.trim().split('\n').length, 1, live.stderr);
    assert.match(live.stderr, new RegExp(`^skiff restore: ${original.dataDir} is in use by a running process \\(pid ${original.proc!.child.pid}, lock \\S+server\\.lock\\): .*stop it .*then restore into a fresh data directory$`, 'm'));
    assert.deepEqual(readdirSync(original.dataDir).sort(), before, 'nothing written beside the live server');

    const used = join(dir, 'used');
    mkdirSync(used);
    writeFileSync(join(used, 'notes.txt'), 'mine\n');
    const notFresh = await runSkiff(['restore', file, '--data-dir', used]);
    assert.equal(notFresh.code, 1);
    assert.match(notFresh.stderr, /^skiff restore: \S+\/used is not empty \(it holds notes\.txt\): restore into a fresh data directory \(a new or empty one\)$/m);
    assert.deepEqual(readdirSync(used), ['notes.txt']);
  });

  it('restores a skiff server backup as a skiff server directory without being told, and the server there has the data', async () => {
    await original.stop();
    const file = join(dir, 'server.backup');
    const r = await runSkiff(['restore', file, '--data-dir', restored.dataDir]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /a skiff server directory \(the layout the backup came from;.*start it with skiff server --data-dir/);
    assert.ok(existsSync(join(restored.dataDir, 'db', 'state.db')), 'the database where skiff server looks');
    assert.ok(!existsSync(join(restored.dataDir, 'server')), 'not an up layout');
    await restored.start();
    const c = restored.client();
    try {
      const names = (await c.get<KubeList>(CM)).items.map((i) => i.metadata.name);
      assert.ok(names.includes('kept'), names.join(', '));
    } finally {
      c.close();
    }
  });

  it('restores a skiff up backup as a skiff up directory; --layout still chooses', async () => {
    // An up directory made by a restore (cheaper than running up), then backed up as such.
    const upDir = join(dir, 'up-a');
    const made = await runSkiff(['restore', join(dir, 'server.backup'), '--layout', 'up', '--data-dir', upDir]);
    assert.equal(made.code, 0, made.stderr);
    const upBackup = join(dir, 'up.backup');
    const b = await runSkiff(['backup', upBackup, '--data-dir', upDir]);
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stdout, /from a skiff up directory/);
    const again = join(dir, 'up-b');
    const r = await runSkiff(['restore', upBackup, '--data-dir', again]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /a skiff up directory \(the layout the backup came from;.*start it with skiff up --data-dir/);
    assert.ok(existsSync(join(again, 'server', 'db', 'state.db')));
    assert.ok(existsSync(join(again, 'cluster.json')));
    const asServer = join(dir, 'up-as-server');
    const chosen = await runSkiff(['restore', upBackup, '--layout', 'server', '--data-dir', asServer]);
    assert.equal(chosen.code, 0, chosen.stderr);
    assert.match(chosen.stdout, /a skiff server directory \(--layout;/);
    assert.ok(existsSync(join(asServer, 'db', 'state.db')));
  });
});
