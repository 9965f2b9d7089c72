// The disk under the server fails: full, then read-only. Writes are answered with a clear 503
// Status while reads go on, the log says so once (not once per request), nothing acknowledged is
// lost or corrupted, and the server takes writes again by itself once space returns. A server
// started on a read-only data directory says what is wrong and exits; made writable, it starts
// with everything there. The data directory is a small tmpfs mounted for the test (needs root,
// as CI has; skipped with the reason otherwise).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SKIFF_BIN, TestServer, eventually } from '../support/cluster.js';
import { isStatusError } from '../../src/api/errors.js';
import type { KubeList } from '../../src/api/types.js';

const root = mkdtempSync(join(tmpdir(), 'skiff-storage-faults-'));
const mountPoint = join(root, 'disk');
const mountable = (() => {
  mkdirSync(mountPoint, { recursive: true });
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=48m', 'tmpfs', mountPoint]);
  return r.status === 0 ? undefined : `cannot mount a tmpfs here (${String(r.stderr).trim() || `exit ${r.status}`}): needs root`;
})();

describe('storage faults', { skip: mountable }, () => {
  const dataDir = join(mountPoint, 'data');
  const s = new TestServer('storage-faults', dataDir, join(root, 'server.log'));
  const filler = join(mountPoint, 'filler');
  before(async () => {
    mkdirSync(dataDir, { recursive: true });
    await s.start();
  });
  after(async () => {
    await s.stop();
    spawnSync('umount', ['-l', mountPoint]);
    rmSync(root, { recursive: true, force: true });
  });

  const cm = (name: string, payload: string) => ({ metadata: { name }, data: { payload } });
  const CMS = '/api/v1/namespaces/default/configmaps';

  it('answers writes on a full disk with a 503 Status, keeps serving reads, loses nothing, and takes writes again once space returns', async () => {
    const c = s.client();
    try {
      const acked = new Map<string, string>();
      for (let i = 0; i < 20; i++) {
        const payload = `before-${i}-${'x'.repeat(10_000)}`;
        await c.create(CMS, cm(`before-${i}`, payload));
        acked.set(`before-${i}`, payload);
      }
      // Fill the file system: dd stops at the first ENOSPC.
      spawnSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1M', 'count=100']);
      const refusals: string[] = [];
      for (let i = 0; i < 40; i++) {
        const payload = `during-${i}-${'y'.repeat(100_000)}`;
        try {
          await c.create(CMS, cm(`during-${i}`, payload));
          acked.set(`during-${i}`, payload);
        } catch (e) {
          assert.ok(isStatusError(e), `a Status, not ${String(e)}`);
          refusals.push(`${e.status.code} ${e.status.reason}: ${e.status.message}`);
        }
      }
      assert.ok(refusals.length > 0, 'some write met the full disk');
      for (const r of refusals) assert.match(r, /^503 ServiceUnavailable: storage unavailable: .*(full|space)/i);
      // Reads go on.
      const during = await c.get<KubeList>(CMS);
      assert.ok(during.items.length >= 20);
      assert.match(String(await c.get('/readyz')), /ok/);

      rmSync(filler);
      const after1 = await c.create(CMS, cm('after-space', 'z'));
      assert.ok(after1.metadata.uid);
      acked.set('after-space', 'z');
      const stored = new Map((await c.get<KubeList>(CMS)).items.map((i) => [i.metadata.name!, (i as { data?: { payload?: string } }).data?.payload]));
      for (const [name, payload] of acked) assert.equal(stored.get(name), payload, `${name} as acknowledged`);
      // The server's log reaches its file through a pipe: the recovery line may land a moment after the answer.
      await eventually(() => /storage available again/.test(readFileSync(s.logFile, 'utf8')), 5_000, 'the recovery logged');
      const log = readFileSync(s.logFile, 'utf8');
      assert.equal(log.match(/requests failing: storage unavailable/g)?.length, 1, 'one line when storage failed, not one per request');
    } finally {
      c.close();
    }
  });

  it('refuses to start on a read-only data directory with the reason, and starts with everything once it is writable', async () => {
    const before1 = s.client();
    const count = (await before1.get<KubeList>(CMS)).items.length;
    before1.close();
    await s.stop();
    execFileSync('mount', ['-o', 'remount,ro', mountPoint]);
    try {
      const r = spawnSync(process.execPath, [SKIFF_BIN, 'server', '--data-dir', dataDir, '--listen', '127.0.0.1:0'], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 1);
      assert.match(r.stderr, /skiff server: the data directory .* is on a read-only file system .*make it writable again/);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    } finally {
      execFileSync('mount', ['-o', 'remount,rw', mountPoint]);
    }
    await s.start();
    const c = s.client();
    try {
      assert.equal((await c.get<KubeList>(CMS)).items.length, count);
      await c.create(CMS, cm('after-rw', 'w'));
    } finally {
      c.close();
    }
  });
});
