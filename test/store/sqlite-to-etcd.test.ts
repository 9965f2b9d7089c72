// Copying a SQLite store into a real etcd: every key with its value, resourceVersions above the
// SQLite ones, old revisions compacted (410 for watches from before), TTLs kept as leases, the
// SQLite file untouched; and a non-empty etcd refused.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { FakeClock } from '../../src/util/clock.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { openEtcdStore } from '../../src/store/etcd.js';
import { copySqliteToEtcd, readSqliteSnapshot, sqliteRevision, PAD_KEY_PREFIX } from '../../src/store/sqlite-to-etcd.js';
import { startEtcd } from '../support/etcd.js';
import { assertStoreError } from './contract.js';

const dir = mkdtempSync(join(tmpdir(), 'skiff-convert-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('SQLite to etcd', () => {
  it('copies every live key above the old revisions, keeps TTLs as leases, compacts the old history and leaves the SQLite file as it was', async () => {
    const path = join(dir, 'state.db');
    const clock = new FakeClock(Date.now());
    const sqlite = await openSqliteStore({ path, maintenanceIntervalMs: 0, expiryIntervalMs: 3_600_000, clock });
    const pods: string[] = [];
    for (let i = 0; i < 40; i++) {
      const key = `/registry/pods/default/p${i}`;
      pods.push(key);
      const kv = await sqlite.create(key, JSON.stringify({ metadata: { name: `p${i}`, uid: `uid-${i}` }, v: 0 }));
      // History the copy leaves behind: updates, and a delete every fourth key.
      const up = await sqlite.update(key, JSON.stringify({ metadata: { name: `p${i}`, uid: `uid-${i}` }, v: 1 }), kv.modRevision);
      if (i % 4 === 3) await sqlite.delete(key, up.modRevision);
    }
    await sqlite.create('/registry/events/default/long', '{"reason":"Kept"}', { ttlSeconds: 3600 });
    await sqlite.create('/registry/events/default/short', '{"reason":"Gone"}', { ttlSeconds: 1 });
    await sqlite.close();
    const before = createHash('sha256').update(readFileSync(path)).digest('hex');
    const oldRevision = sqliteRevision(path);
    assert.equal(oldRevision, 92, "40 creates, 40 updates, 10 deletes, 2 Events");

    const snapshot = readSqliteSnapshot(path);
    assert.equal(snapshot.revision, oldRevision);
    assert.equal(snapshot.items.length, 32);
    const etcd = await startEtcd();
    const store = await openEtcdStore({ endpoints: etcd.endpoints, compactIntervalMs: 0 });
    const raw = new Etcd3({ hosts: etcd.endpoints });
    try {
      const lines: string[] = [];
      // Two seconds later: the 1 s Event is gone, the hour-long one has ~3598 s left.
      await clock.advance(2_000);
      const result = await copySqliteToEtcd(snapshot, store, { say: (l) => lines.push(l), clock, extra: [{ key: '/skiff/pki/ca', value: 'sealed' }], concurrency: 8 });
      assert.equal(result.copied, 32);
      assert.equal(result.expired, 1);
      assert.equal(result.withLease, 1);
      assert.match(lines[0]!, /^raising etcd's revision from 1 to \d+, above every resourceVersion the SQLite store gave out \(\d+ writes\)$/);
      assert.match(lines.join('\n'), /^copying 31 keys into etcd \(1 with a TTL, kept as etcd leases; 1 whose TTL ran out are left behind\)$/m);

      const all = await store.list({ prefix: '' });
      assert.deepEqual(all.items.map((kv) => kv.key).sort(), [...snapshot.items.filter((i) => !i.key.endsWith('short')).map((i) => i.key), '/skiff/pki/ca'].sort());
      for (const item of snapshot.items.filter((i) => !i.key.endsWith('short'))) {
        const kv = all.items.find((x) => x.key === item.key)!;
        assert.equal(kv.value, item.value, item.key);
        assert.ok(kv.modRevision > oldRevision, `${item.key}: resourceVersion ${kv.modRevision} above ${oldRevision}`);
      }
      assert.equal((await store.list({ prefix: PAD_KEY_PREFIX })).items.length, 0, 'no scratch key left');
      // A watch or a list from a SQLite-era resourceVersion: compacted (the API server's 410 Gone).
      await assertStoreError(store.list({ prefix: '/registry/pods/', revision: oldRevision }), 'compacted');
      assert.equal(await store.compactRevision(), result.etcdRevision);
      // The Event's lease has what its TTL had left (rounded up to the minute), not a fresh hour.
      const leased = await raw.get('/registry/events/default/long').exec();
      const lease = leased.kvs[0]!.lease;
      assert.notEqual(String(lease), '0');
      const info = await raw.leaseClient.leaseTimeToLive({ ID: lease });
      assert.ok(Number(info.grantedTTL) >= 3540 && Number(info.grantedTTL) <= 3600 + 60, `granted ${info.grantedTTL}`);

      // The SQLite file is as it was, and opens.
      assert.equal(createHash('sha256').update(readFileSync(path)).digest('hex'), before);
      const again = await openSqliteStore({ path, maintenanceIntervalMs: 0 });
      assert.equal(await again.currentRevision(), oldRevision);
      await again.close();

      // A second copy into the same etcd is refused.
      await assert.rejects(copySqliteToEtcd(snapshot, store), /etcd already holds 32 keys; the conversion needs an empty etcd/);
    } finally {
      raw.close();
      await store.close();
      await etcd.destroy();
    }
  });
});
