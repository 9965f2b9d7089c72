import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../src/util/clock.js';
import { openSqliteStore, type SqliteStore, type SqliteStoreOptions } from '../../src/store/sqlite.js';
import { isStoreError } from '../../src/store/store.js';
import { EventReader, storeContract, withTimeout } from './contract.js';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'skiff-sqlite-'));
}

async function openTemp(opts: Partial<SqliteStoreOptions> = {}): Promise<{ store: SqliteStore; dir: string; path: string; cleanup: () => Promise<void> }> {
  const dir = tempDir();
  const path = join(dir, 'db', 'state.db');
  const store = await openSqliteStore({ path, maintenanceIntervalMs: 0, ...opts });
  return {
    store,
    dir,
    path,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls until check() holds, failing after a bounded wait instead of sleeping blindly. */
async function eventually(check: () => Promise<boolean>, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

storeContract('sqlite', () => openTemp());

describe('sqlite store', () => {
  it('keeps data and continues revisions across close and reopen', async () => {
    const dir = tempDir();
    const path = join(dir, 'state.db');
    try {
      let store = await openSqliteStore({ path, maintenanceIntervalMs: 0 });
      const a = await store.create('/p/a', 'a1');
      const a2 = await store.update('/p/a', 'a2', a.modRevision);
      await store.create('/p/b', 'b1');
      const d = await store.delete('/p/b');
      await store.compact(a2.modRevision);
      await store.close();

      store = await openSqliteStore({ path, maintenanceIntervalMs: 0 });
      try {
        assert.equal(await store.currentRevision(), d.modRevision, 'a trailing delete still counts');
        assert.equal(await store.compactRevision(), a2.modRevision);
        assert.deepEqual(await store.get('/p/a'), a2);
        assert.equal(await store.get('/p/b'), undefined);
        const c = await store.create('/p/c', 'c1');
        assert.equal(c.modRevision, d.modRevision + 1);
        // History written before the restart is still watchable.
        const ac = new AbortController();
        const w = new EventReader(store.watch('/p/', a2.modRevision, ac.signal));
        const events = await w.next(3);
        ac.abort();
        assert.deepEqual(
          events.map((e) => `${e.type} ${e.kv.key} ${e.kv.modRevision}`),
          [`create /p/b ${d.modRevision - 1}`, `delete /p/b ${d.modRevision}`, `create /p/c ${c.modRevision}`],
        );
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('does not let compaction move the revision backwards', async () => {
    const { store, path, cleanup } = await openTemp();
    try {
      await store.create('/k', 'v');
      const d = await store.delete('/k');
      await store.compact(d.modRevision); // removes every row, the tombstone included
      assert.equal(await store.currentRevision(), d.modRevision);
      await store.close();
      const again = await openSqliteStore({ path, maintenanceIntervalMs: 0 });
      try {
        assert.equal((await again.create('/k', 'v')).modRevision, d.modRevision + 1);
      } finally {
        await again.close();
      }
    } finally {
      await cleanup();
    }
  });

  it('commits concurrent writes in shared transactions (group commit)', async () => {
    const { store, cleanup } = await openTemp();
    try {
      const before = store.stats().transactions;
      await Promise.all(Array.from({ length: 100 }, (_, i) => store.create(`/g/${i}`, 'v')));
      const used = store.stats().transactions - before;
      assert.ok(used >= 1 && used <= 10, `100 concurrent writes used ${used} transactions`);
      // Writes that arrive while a commit is in flight form the next batch.
      const before2 = store.stats().transactions;
      const waves: Promise<unknown>[] = [];
      for (let wave = 0; wave < 5; wave++) {
        waves.push(...Array.from({ length: 40 }, (_, i) => store.create(`/g2/${wave}/${i}`, 'v')));
        await new Promise((r) => setImmediate(r));
      }
      await Promise.all(waves);
      const used2 = store.stats().transactions - before2;
      assert.ok(used2 <= 5, `200 writes in 5 waves used ${used2} transactions`);
      assert.equal(await store.count('/g'), 300);
    } finally {
      await cleanup();
    }
  });

  it('does not duplicate a write that is committed but not yet acknowledged when a watch starts', async () => {
    const { store, cleanup } = await openTemp();
    try {
      const a = await store.create('/r/a', '1');
      const creating = store.create('/r/b', '1');
      await new Promise((r) => setImmediate(r)); // the write is sent to the writer
      // Spin on microtasks only: the writer thread commits, but this thread cannot process its
      // acknowledgement yet, so the log is ahead of what watchers have been told.
      const deadline = Date.now() + 5_000;
      while ((await store.currentRevision()) === a.modRevision) {
        if (Date.now() > deadline) assert.fail('the writer did not commit');
      }
      const ac = new AbortController();
      const w = new EventReader(store.watch('/r/', 0, ac.signal));
      const b = await creating;
      const c = await store.create('/r/c', '1');
      const events = await w.next(3);
      assert.deepEqual(
        events.map((e) => e.kv.modRevision),
        [a.modRevision, b.modRevision, c.modRevision],
      );
      ac.abort();
    } finally {
      await cleanup();
    }
  });

  it('stays bounded for a slow watcher and still delivers every event once', async () => {
    const { store, cleanup } = await openTemp({ watchBufferSize: 10, watchReplayPageSize: 7 });
    try {
      const ac = new AbortController();
      const w = new EventReader(store.watch('/s/', 0, ac.signal));
      const first = await store.create('/s/first', 'v');
      assert.deepEqual((await w.next(1)).map((e) => e.kv), [first]);
      // Nobody reads while 120 events arrive (in many commits): the buffer must overflow.
      for (let i = 0; i < 12; i++) await Promise.all(Array.from({ length: 10 }, (_, j) => store.create(`/s/${i}/${j}`, 'v')));
      assert.ok(store.stats().watchOverflows > 0, 'the watcher overflowed');
      const events = await w.next(120);
      const revs = events.map((e) => e.kv.modRevision);
      assert.deepEqual(
        revs,
        Array.from({ length: 120 }, (_, i) => first.modRevision + 1 + i),
      );
      const late = await store.create('/s/late', 'v');
      assert.deepEqual((await w.next(1)).map((e) => e.kv), [late]);
      ac.abort();
    } finally {
      await cleanup();
    }
  });

  it('fails a replaying watcher with compacted when compaction overtakes it', async () => {
    const { store, cleanup } = await openTemp({ watchReplayPageSize: 5 });
    try {
      for (let i = 0; i < 20; i++) await store.create(`/c/${i}`, 'v');
      const ac = new AbortController();
      const it = store.watch('/c/', 0, ac.signal)[Symbol.asyncIterator]();
      const first = await withTimeout(it.next(), 'first replay page');
      assert.equal(first.value?.length, 5);
      await store.compact(await store.currentRevision());
      await assert.rejects(withTimeout(it.next(), 'second replay page'), (e: unknown) => isStoreError(e, 'compacted'));
      ac.abort();
    } finally {
      await cleanup();
    }
  });

  it('reports progress for revisions with no events under the prefix', async () => {
    const { store, cleanup } = await openTemp();
    try {
      await store.create('/p/a', 'v');
      const progress: number[] = [];
      const ac = new AbortController();
      const w = new EventReader(store.watch('/p/', 0, ac.signal, (r) => progress.push(r)));
      await w.next(1);
      const other = await store.create('/q/a', 'v');
      await eventually(async () => progress.includes(other.modRevision), 'progress at the unrelated write');
      ac.abort();
    } finally {
      await cleanup();
    }
  });

  it('runs compaction and WAL checkpoints on the maintenance timer', async () => {
    const clock = new FakeClock();
    const { store, path, cleanup } = await openTemp({ clock, maintenanceIntervalMs: 60_000, compactMinRetain: 5, compactBatchSize: 3 });
    try {
      let kv = await store.create('/m', '0');
      for (let i = 1; i < 20; i++) kv = await store.update('/m', String(i), kv.modRevision);
      assert.ok(statSync(`${path}-wal`).size > 0);
      assert.equal(await store.compactRevision(), 0);
      await clock.advance(60_000);
      await eventually(async () => (await store.compactRevision()) === kv.modRevision - 5, 'automatic compaction');
      await eventually(async () => statSync(`${path}-wal`).size === 0, 'WAL truncated by the checkpoint');
      assert.deepEqual(await store.get('/m'), kv);
      const old = await store.list({ prefix: '/m', revision: kv.modRevision - 5 });
      assert.equal(old.items[0]?.value, '14');
    } finally {
      await cleanup();
    }
  });

  it('checkpoints the WAL on demand', async () => {
    const { store, path, cleanup } = await openTemp();
    try {
      await Promise.all(Array.from({ length: 50 }, (_, i) => store.create(`/w/${i}`, 'x'.repeat(1000))));
      assert.ok(statSync(`${path}-wal`).size > 0);
      const res = await store.checkpoint('TRUNCATE');
      assert.equal(res.busy, false);
      assert.equal(statSync(`${path}-wal`).size, 0);
      assert.equal(await store.count('/w/'), 50);
    } finally {
      await cleanup();
    }
  });

  it('runs checkpoints and compaction under sustained writes', async () => {
    const { store, cleanup } = await openTemp({ compactBatchSize: 10 });
    try {
      let stop = false;
      const writers = Array.from({ length: 8 }, async (_, w) => {
        let kv = await store.create(`/busy/${w}`, '0');
        while (!stop) kv = await store.update(`/busy/${w}`, String(kv.modRevision), kv.modRevision);
        return kv;
      });
      await eventually(async () => (await store.currentRevision()) > 200, 'writes to pile up');
      const target = (await store.currentRevision()) - 50;
      await withTimeout(store.compact(target), 'compaction while writes continue');
      assert.ok((await store.compactRevision()) >= target);
      const cp = await withTimeout(store.checkpoint('PASSIVE'), 'checkpoint while writes continue');
      assert.ok(cp.walFrames >= cp.checkpointedFrames);
      stop = true;
      const last = await Promise.all(writers);
      for (const kv of last) assert.deepEqual(await store.get(kv.key), kv);
    } finally {
      await cleanup();
    }
  });

  it('keeps every acknowledged write when the process is SIGKILLed mid-stream', async () => {
    const dir = tempDir();
    const path = join(dir, 'state.db');
    const child = join(dir, 'writer.mjs');
    const storeModule = new URL('../../src/store/sqlite.js', import.meta.url).href;
    writeFileSync(
      child,
      `import { openSqliteStore } from ${JSON.stringify(storeModule)};
const store = await openSqliteStore({ path: ${JSON.stringify(path)}, maintenanceIntervalMs: 0 });
let n = 0;
const writer = async (w) => {
  for (;;) {
    const key = '/crash/' + w + '/' + n++;
    await store.create(key, JSON.stringify({ w, pad: 'x'.repeat(200) }));
    process.stdout.write(key + '\\n');
  }
};
for (let w = 0; w < 16; w++) writer(w);
`,
    );
    try {
      const proc = spawn(process.execPath, [child], { stdio: ['ignore', 'pipe', 'inherit'] });
      const acked: string[] = [];
      let partial = '';
      const closed = new Promise<void>((resolve) => proc.on('close', () => resolve()));
      const enough = new Promise<void>((resolve) => {
        proc.stdout.setEncoding('utf8');
        proc.stdout.on('data', (chunk: string) => {
          const lines = (partial + chunk).split('\n');
          partial = lines.pop() ?? '';
          acked.push(...lines);
          if (acked.length >= 400) resolve();
        });
      });
      try {
        await withTimeout(enough, '400 acknowledged writes from the child', 10_000);
      } finally {
        proc.kill('SIGKILL');
      }
      await withTimeout(closed, 'the killed child to exit');
      assert.equal(proc.signalCode, 'SIGKILL');

      const store = await openSqliteStore({ path, maintenanceIntervalMs: 0 });
      try {
        const missing = [];
        for (const key of acked) if (!(await store.get(key))) missing.push(key);
        assert.deepEqual(missing, [], `${missing.length} of ${acked.length} acknowledged writes lost`);
        assert.ok((await store.count('/crash/')) >= acked.length);
        // The reopened store keeps going from where the killed one stopped.
        const rev = await store.currentRevision();
        assert.equal((await store.create('/after-crash', 'v')).modRevision, rev + 1);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
