// The behaviour every Store backend must show. A backend's test file calls storeContract() with a
// factory that opens a fresh, empty store (cleanup must also work after the test closed it);
// nothing here knows which backend runs.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isStoreError, type KeyValue, type Store, type StoreErrorCode, type StoreEvent } from '../../src/store/store.js';

export type OpenStore = () => Promise<{ store: Store; cleanup: () => Promise<void> }>;

/** How long a test waits for something that should happen promptly before failing. */
const WAIT_MS = 5_000;

export function storeContract(name: string, open: OpenStore): void {
  const withStore = async (fn: (store: Store) => Promise<void>) => {
    const { store, cleanup } = await open();
    try {
      await fn(store);
    } finally {
      await cleanup();
    }
  };

  describe(`${name} store contract`, () => {
    describe('create and get', () => {
      it('creates a key and reads it back', () =>
        withStore(async (store) => {
          const kv = await store.create('/registry/pods/default/a', '{"a":1}');
          assert.equal(kv.key, '/registry/pods/default/a');
          assert.equal(kv.value, '{"a":1}');
          assert.equal(kv.createRevision, kv.modRevision);
          assert.ok(kv.modRevision > 0);
          assert.deepEqual(await store.get('/registry/pods/default/a'), kv);
          assert.equal(await store.currentRevision(), kv.modRevision);
        }));

      it('fails with exists when the key is present', () =>
        withStore(async (store) => {
          const kv = await store.create('/k', 'v1');
          await assertStoreError(store.create('/k', 'v2'), 'exists');
          assert.deepEqual(await store.get('/k'), kv, 'the failed create changed nothing');
          assert.equal(await store.currentRevision(), kv.modRevision, 'a failed create uses no revision');
        }));

      it('returns undefined for a missing key', () =>
        withStore(async (store) => {
          assert.equal(await store.get('/missing'), undefined);
        }));

      it('keeps values byte for byte', () =>
        withStore(async (store) => {
          const value = JSON.stringify({ s: 'ünïcødé ✓ 𝄞', n: 1.5, nested: { a: [1, null, 'x'] }, q: '"\\' });
          await store.create('/k', value);
          assert.equal((await store.get('/k'))?.value, value);
        }));
    });

    describe('update', () => {
      it('succeeds when modRevision matches', () =>
        withStore(async (store) => {
          const a = await store.create('/k', 'v1');
          const b = await store.update('/k', 'v2', a.modRevision);
          assert.equal(b.value, 'v2');
          assert.equal(b.createRevision, a.createRevision);
          assert.ok(b.modRevision > a.modRevision);
          assert.deepEqual(await store.get('/k'), b);
        }));

      it('fails with conflict carrying the current value', () =>
        withStore(async (store) => {
          const a = await store.create('/k', 'v1');
          const b = await store.update('/k', 'v2', a.modRevision);
          const err = await assertStoreError(store.update('/k', 'v3', a.modRevision), 'conflict');
          assert.deepEqual(err.current, b);
          assert.deepEqual(await store.get('/k'), b);
        }));

      it('fails with not-found when the key is absent', () =>
        withStore(async (store) => {
          await assertStoreError(store.update('/missing', 'v', 1), 'not-found');
        }));
    });

    describe('delete', () => {
      it('deletes unconditionally and returns the last value at the delete revision', () =>
        withStore(async (store) => {
          const a = await store.create('/k', 'v1');
          const d = await store.delete('/k');
          assert.equal(d.key, '/k');
          assert.equal(d.value, 'v1');
          assert.equal(d.createRevision, a.createRevision);
          assert.ok(d.modRevision > a.modRevision, 'the delete has its own revision');
          assert.equal(await store.currentRevision(), d.modRevision);
          assert.equal(await store.get('/k'), undefined);
        }));

      it('deletes only when the expected revision matches', () =>
        withStore(async (store) => {
          const a = await store.create('/k', 'v1');
          const b = await store.update('/k', 'v2', a.modRevision);
          const err = await assertStoreError(store.delete('/k', a.modRevision), 'conflict');
          assert.deepEqual(err.current, b);
          assert.deepEqual(await store.get('/k'), b);
          const d = await store.delete('/k', b.modRevision);
          assert.equal(d.value, 'v2');
          assert.equal(await store.get('/k'), undefined);
        }));

      it('fails with not-found when the key is absent', () =>
        withStore(async (store) => {
          await assertStoreError(store.delete('/missing'), 'not-found');
          await assertStoreError(store.delete('/missing', 3), 'not-found');
        }));

      it('lets a deleted key be created again with a new createRevision', () =>
        withStore(async (store) => {
          const a = await store.create('/k', 'v1');
          await store.delete('/k');
          const c = await store.create('/k', 'v2');
          assert.ok(c.createRevision > a.createRevision);
          assert.equal(c.createRevision, c.modRevision);
        }));
    });

    describe('revisions', () => {
      it('are global, shared by all keys and strictly increasing', () =>
        withStore(async (store) => {
          const start = await store.currentRevision();
          const revs: number[] = [];
          const a = await store.create('/a', '1');
          revs.push(a.modRevision);
          const b = await store.create('/b', '1');
          revs.push(b.modRevision);
          revs.push((await store.update('/a', '2', a.modRevision)).modRevision);
          revs.push((await store.delete('/b')).modRevision);
          revs.push((await store.create('/c', '1')).modRevision);
          assert.ok(revs[0]! > start);
          for (let i = 1; i < revs.length; i++) assert.ok(revs[i]! > revs[i - 1]!, `revision ${i} increases`);
          assert.equal(await store.currentRevision(), revs[revs.length - 1]);
        }));
    });

    describe('list', () => {
      it('returns the keys under a prefix, ordered by key', () =>
        withStore(async (store) => {
          for (const k of ['/p/c', '/p/a', '/q/a', '/p/b/x', '/pa', '/p', '/p/b']) await store.create(k, k);
          const res = await store.list({ prefix: '/p/' });
          assert.deepEqual(
            res.items.map((i) => i.key),
            ['/p/a', '/p/b', '/p/b/x', '/p/c'],
          );
          assert.equal(res.more, false);
          assert.equal(res.revision, await store.currentRevision());
          for (const i of res.items) assert.equal(i.value, i.key);
          assert.equal((await store.list({ prefix: '' })).items.length, 7);
          assert.deepEqual((await store.list({ prefix: '/nothing/' })).items, []);
        }));

      it('pages with limit, after and more', () =>
        withStore(async (store) => {
          const keys = Array.from({ length: 10 }, (_, i) => `/p/${String(i).padStart(2, '0')}`);
          for (const k of keys) await store.create(k, 'v');
          await store.create('/q/00', 'v');
          const seen: string[] = [];
          let after: string | undefined;
          let pages = 0;
          for (;;) {
            const res = await store.list({ prefix: '/p/', limit: 3, after });
            pages++;
            seen.push(...res.items.map((i) => i.key));
            if (res.remaining !== undefined) assert.equal(res.remaining, keys.length - seen.length);
            if (!res.more) break;
            assert.equal(res.items.length, 3);
            after = res.items[res.items.length - 1]!.key;
          }
          assert.deepEqual(seen, keys);
          assert.equal(pages, 4);
          const exact = await store.list({ prefix: '/p/', limit: 10 });
          assert.equal(exact.items.length, 10);
          assert.equal(exact.more, false, 'a limit equal to the count leaves nothing more');
        }));

      it('reads at an older revision: old values, deleted keys present, later creates hidden', () =>
        withStore(async (store) => {
          const a = await store.create('/p/a', 'a1');
          const b = await store.create('/p/b', 'b1');
          const at = await store.currentRevision();
          await store.update('/p/a', 'a2', a.modRevision);
          await store.delete('/p/b');
          await store.create('/p/c', 'c1');
          await store.create('/p/b', 'b2');

          const old = await store.list({ prefix: '/p/', revision: at });
          assert.equal(old.revision, at);
          assert.deepEqual(old.items, [a, b]);

          const page1 = await store.list({ prefix: '/p/', revision: at, limit: 1 });
          assert.deepEqual(page1.items, [a]);
          assert.equal(page1.more, true);
          const page2 = await store.list({ prefix: '/p/', revision: at, limit: 1, after: '/p/a' });
          assert.deepEqual(page2.items, [b]);
          assert.equal(page2.more, false);

          const now = await store.list({ prefix: '/p/' });
          assert.deepEqual(
            now.items.map((i) => `${i.key}=${i.value}`),
            ['/p/a=a2', '/p/b=b2', '/p/c=c1'],
          );
        }));

      it('reads at an older revision through many later writes, paging across changed and unchanged keys', () =>
        withStore(async (store) => {
          const v: Record<string, KeyValue> = {};
          for (const k of ['a', 'b', 'c', 'd', 'e', 'g']) v[k] = await store.create(`/q/${k}`, `${k}1`);
          await store.delete('/q/g');
          const at = await store.currentRevision();
          // b: updated three times; d: deleted, created again and updated; f: created later, then updated;
          // g: deleted before, created again after; h: created and deleted after; a, c, e: untouched.
          let b = v.b!;
          for (const n of [2, 3, 4]) b = await store.update('/q/b', `b${n}`, b.modRevision);
          await store.delete('/q/d');
          const d2 = await store.create('/q/d', 'd2');
          await store.update('/q/d', 'd3', d2.modRevision);
          const f = await store.create('/q/f', 'f1');
          await store.update('/q/f', 'f2', f.modRevision);
          await store.create('/q/g', 'g2');
          await store.create('/q/h', 'h1');
          await store.delete('/q/h');

          const all = await store.list({ prefix: '/q/', revision: at });
          assert.deepEqual(all.items, ['a', 'b', 'c', 'd', 'e'].map((k) => v[k]));
          const seen: KeyValue[] = [];
          let after: string | undefined;
          for (;;) {
            const page = await store.list({ prefix: '/q/', revision: at, limit: 2, ...(after ? { after } : {}) });
            seen.push(...page.items);
            if (!page.more) break;
            after = page.items[page.items.length - 1]!.key;
          }
          assert.deepEqual(seen, all.items);
        }));

      it('fails with compacted below the compacted revision, and still reads at it', () =>
        withStore(async (store) => {
          const a = await store.create('/p/a', 'a1');
          const old = await store.currentRevision();
          await store.update('/p/a', 'a2', a.modRevision);
          await store.create('/p/b', 'b1');
          const at = await store.currentRevision();
          await store.update('/p/a', 'a3', (await store.get('/p/a'))!.modRevision);
          await store.compact(at);
          const compacted = await store.compactRevision();
          assert.ok(compacted >= at);
          const err = await assertStoreError(store.list({ prefix: '/p/', revision: old }), 'compacted');
          assert.equal(err.compactRevision, compacted);
          if (compacted === at) {
            const res = await store.list({ prefix: '/p/', revision: at });
            assert.deepEqual(
              res.items.map((i) => `${i.key}=${i.value}`),
              ['/p/a=a2', '/p/b=b1'],
            );
          }
        }));
    });

    describe('count', () => {
      it('counts live keys under a prefix', () =>
        withStore(async (store) => {
          for (const k of ['/p/a', '/p/b', '/p/c', '/q/a', '/pz']) await store.create(k, 'v');
          await store.delete('/p/b');
          assert.equal(await store.count('/p/'), 2);
          assert.equal(await store.count('/q/'), 1);
          assert.equal(await store.count('/none/'), 0);
          assert.equal(await store.count(''), 4);
        }));
    });

    describe('compact', () => {
      it('keeps the latest value of every live key', () =>
        withStore(async (store) => {
          let a = await store.create('/p/a', '0');
          for (let i = 1; i <= 5; i++) a = await store.update('/p/a', String(i), a.modRevision);
          await store.create('/p/gone', 'x');
          await store.delete('/p/gone');
          const b = await store.create('/p/b', 'b');
          await store.compact(await store.currentRevision());
          assert.deepEqual(await store.get('/p/a'), a);
          assert.deepEqual((await store.list({ prefix: '/p/' })).items, [a, b]);
          assert.equal(await store.count('/p/'), 2);
          const c = await store.update('/p/a', 'after', a.modRevision);
          assert.ok(c.modRevision > b.modRevision, 'revisions keep increasing after compaction');
        }));
    });

    describe('size', () => {
      it('tells how many bytes its data takes, more once there is more', () =>
        withStore(async (store) => {
          const before = await store.dbSize();
          assert.ok(before >= 0);
          for (let i = 0; i < 50; i++) await store.create(`/size/${i}`, 'x'.repeat(20_000));
          assert.ok((await store.dbSize()) > before, 'a megabyte written shows');
        }));
    });

    describe('ttl', () => {
      it('deletes a key its TTL after its last write (a watch sees the delete); a write without a TTL keeps it, one with a new TTL renews it', () =>
        withStore(async (store) => {
          const start = await store.currentRevision();
          const ac = new AbortController();
          const w = new EventReader(store.watch('/t/', start, ac.signal));
          try {
            const a = await store.create('/t/a', 'a', { ttlSeconds: 2 });
            const b = await store.create('/t/b', 'b', { ttlSeconds: 2 });
            const b2 = await store.update('/t/b', 'b2', b.modRevision);
            const c = await store.create('/t/c', 'c', { ttlSeconds: 2 });
            const c2 = await store.update('/t/c', 'c2', c.modRevision, { ttlSeconds: 60 });
            assert.deepEqual(await store.get('/t/a'), a, 'not before its time');
            assert.equal((await w.next(5)).length, 5);
            const [gone] = await w.next(1, 15_000);
            assert.equal(gone!.type, 'delete');
            assert.equal(gone!.kv.key, '/t/a');
            assert.ok(gone!.kv.modRevision > c2.modRevision);
            assert.equal(await store.get('/t/a'), undefined);
            assert.deepEqual(await store.get('/t/b'), b2, 'written again without a TTL: kept');
            assert.deepEqual(await store.get('/t/c'), c2, 'written again with a longer TTL: kept');
          } finally {
            ac.abort();
          }
        }));
    });

    describe('watch', () => {
      it('replays history after a revision, then streams live events with prev', () =>
        withStore(async (store) => {
          const a = await store.create('/p/a', 'a1');
          const a2 = await store.update('/p/a', 'a2', a.modRevision);
          const ac = new AbortController();
          const w = new EventReader(store.watch('/p/', 0, ac.signal));
          try {
            const replayed = await w.next(2);
            assert.deepEqual(replayed, [
              { type: 'create', kv: a },
              { type: 'update', kv: a2, prev: a },
            ]);
            const b = await store.create('/p/b', 'b1');
            const b2 = await store.update('/p/b', 'b2', b.modRevision);
            const d = await store.delete('/p/a', a2.modRevision);
            const live = await w.next(3);
            assert.deepEqual(live, [
              { type: 'create', kv: b },
              { type: 'update', kv: b2, prev: b },
              { type: 'delete', kv: d, prev: a2 },
            ]);
            assert.equal(d.value, 'a2');
          } finally {
            ac.abort();
          }
        }));

      it('starts strictly after the given revision', () =>
        withStore(async (store) => {
          const a = await store.create('/p/a', '1');
          const b = await store.create('/p/b', '1');
          const ac = new AbortController();
          const w = new EventReader(store.watch('/p/', a.modRevision, ac.signal));
          try {
            assert.deepEqual(await w.next(1), [{ type: 'create', kv: b }]);
            const c = await store.create('/p/c', '1');
            assert.deepEqual(await w.next(1), [{ type: 'create', kv: c }]);
          } finally {
            ac.abort();
          }
        }));

      it('only sees keys under its prefix', () =>
        withStore(async (store) => {
          const ac = new AbortController();
          const from = await store.currentRevision();
          const w = new EventReader(store.watch('/p/', from, ac.signal));
          try {
            await store.create('/q/a', 'x');
            await store.create('/pa', 'x');
            const mine = await store.create('/p/a', 'x');
            await store.create('/q/b', 'x');
            const mine2 = await store.create('/p/b', 'x');
            const events = await w.next(2);
            assert.deepEqual(
              events.map((e) => e.kv),
              [mine, mine2],
            );
          } finally {
            ac.abort();
          }
        }));

      it('continues a list at its revision with no gap', () =>
        withStore(async (store) => {
          await store.create('/p/a', '1');
          const listed = await store.list({ prefix: '/p/' });
          const ac = new AbortController();
          const w = new EventReader(store.watch('/p/', listed.revision, ac.signal));
          try {
            const b = await store.create('/p/b', '1');
            assert.deepEqual(await w.next(1), [{ type: 'create', kv: b }]);
          } finally {
            ac.abort();
          }
        }));

      it('fails with compacted when the start revision is compacted', () =>
        withStore(async (store) => {
          const a = await store.create('/p/a', '1');
          const a2 = await store.update('/p/a', '2', a.modRevision);
          await store.update('/p/a', '3', a2.modRevision);
          const at = await store.currentRevision();
          await store.compact(at);
          const ac = new AbortController();
          try {
            const it = store.watch('/p/', a.modRevision - 1, ac.signal)[Symbol.asyncIterator]();
            const err = await assertStoreError(it.next(), 'compacted');
            assert.equal(err.compactRevision, await store.compactRevision());
            // From the compacted revision itself, history is complete.
            const w = new EventReader(store.watch('/p/', await store.compactRevision(), ac.signal));
            const b = await store.create('/p/b', '1');
            assert.deepEqual(await w.next(1), [{ type: 'create', kv: b }]);
          } finally {
            ac.abort();
          }
        }));

      it('ends the iterator when the signal aborts', () =>
        withStore(async (store) => {
          const ac = new AbortController();
          const it = store.watch('/p/', await store.currentRevision(), ac.signal)[Symbol.asyncIterator]();
          const pending = it.next();
          ac.abort();
          const res = await withTimeout(pending, 'iterator to end after abort');
          assert.equal(res.done, true);
          const already = new AbortController();
          already.abort();
          const it2 = store.watch('/p/', 0, already.signal)[Symbol.asyncIterator]();
          assert.equal((await withTimeout(it2.next(), 'aborted watch to end')).done, true);
        }));

      it('hands off from replay to live with no gap and no duplicate under concurrent writes', () =>
        withStore(async (store) => {
          const writers = 8;
          const perWriter = 25;
          const ac = new AbortController();
          const written: number[] = [];
          const readers: { reader: EventReader; from: number }[] = [];
          const start = await store.currentRevision();
          const writing = Promise.all(
            Array.from({ length: writers }, async (_, w) => {
              for (let i = 0; i < perWriter; i++) {
                written.push((await store.create(`/p/${w}/${i}`, 'v')).modRevision);
                // Watches start at various points while other writes are committing.
                if (w === 0 && i % 8 === 4) readers.push({ reader: new EventReader(store.watch('/p/', start, ac.signal)), from: start });
                if (w === 1 && i % 8 === 2) {
                  const from = await store.currentRevision();
                  readers.push({ reader: new EventReader(store.watch('/p/', from, ac.signal)), from });
                }
              }
            }),
          );
          try {
            await writing;
            written.sort((a, b) => a - b);
            assert.ok(readers.length >= 4);
            for (const { reader, from } of readers) {
              const expected = written.filter((r) => r > from);
              const events = await reader.next(expected.length);
              assert.deepEqual(
                events.map((e) => e.kv.modRevision),
                expected,
                'every revision exactly once, in order',
              );
            }
          } finally {
            ac.abort();
          }
        }));
    });

    describe('concurrency', () => {
      it('200 concurrent creates all succeed with distinct revisions', () =>
        withStore(async (store) => {
          const results = await Promise.all(Array.from({ length: 200 }, (_, i) => store.create(`/c/${i}`, String(i))));
          const revs = new Set(results.map((r) => r.modRevision));
          assert.equal(revs.size, 200);
          assert.equal(await store.count('/c/'), 200);
          assert.equal(await store.currentRevision(), Math.max(...revs));
        }));

      it('exactly one of 50 concurrent updates from the same revision wins', () =>
        withStore(async (store) => {
          const a = await store.create('/k', 'start');
          const settled = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => store.update('/k', `w${i}`, a.modRevision)));
          const won = settled.filter((s): s is PromiseFulfilledResult<KeyValue> => s.status === 'fulfilled');
          const lost = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
          assert.equal(won.length, 1);
          assert.equal(lost.length, 49);
          for (const l of lost) {
            assert.ok(isStoreError(l.reason, 'conflict'));
            assert.deepEqual(l.reason.current, won[0]!.value);
          }
          assert.deepEqual(await store.get('/k'), won[0]!.value);
        }));

      it('checks each write on its own when they commit together', () =>
        withStore(async (store) => {
          const a = await store.create('/k', 'v');
          const settled = await Promise.allSettled([
            store.create('/new/1', 'x'),
            store.create('/k', 'dup'),
            store.update('/k', 'stale', a.modRevision - 1 || 999),
            store.create('/new/2', 'x'),
            store.update('/missing', 'x', 1),
            store.update('/k', 'ok', a.modRevision),
            store.create('/new/1', 'dup'),
          ]);
          assert.deepEqual(
            settled.map((s) => (s.status === 'fulfilled' ? 'ok' : (s.reason as { code: string }).code)),
            ['ok', 'exists', 'conflict', 'ok', 'not-found', 'ok', 'exists'],
          );
          assert.equal((await store.get('/k'))?.value, 'ok');
        }));
    });

    describe('lifecycle', () => {
      it('reports health and refuses work after close', async () => {
        const { store, cleanup } = await open();
        try {
          assert.equal((await store.health()).ok, true);
          const pending = Array.from({ length: 20 }, (_, i) => store.create(`/p/${i}`, 'v'));
          await store.close();
          await Promise.all(pending); // close waits for writes already accepted
          await assertStoreError(store.create('/after', 'v'), 'closed');
          assert.equal((await store.health()).ok, false);
        } finally {
          await cleanup();
        }
      });
    });
  });
}

/** Awaits a rejection with the given StoreError code and returns the error. */
export async function assertStoreError(p: Promise<unknown>, code: StoreErrorCode) {
  try {
    await withTimeout(p, `StoreError ${code}`);
  } catch (e) {
    if (isStoreError(e, code)) return e;
    assert.fail(`expected StoreError ${code}, got ${e instanceof Error ? `${e.constructor.name} ${(e as { code?: string }).code ?? ''}: ${e.message}` : String(e)}`);
  }
  assert.fail(`expected StoreError ${code}, but it succeeded`);
}

/** Fails instead of hanging when something that should happen promptly does not. */
export async function withTimeout<T>(p: Promise<T>, what: string, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Reads a watch event by event, whatever the batching. Wait (e.g. await next()) before aborting it. */
export class EventReader {
  private readonly it: AsyncIterator<StoreEvent[]>;
  private buffered: StoreEvent[] = [];
  private pending?: Promise<IteratorResult<StoreEvent[]>>;

  constructor(watch: AsyncIterable<StoreEvent[]>) {
    this.it = watch[Symbol.asyncIterator]();
    // Start the watch now (a generator-based watch does nothing until the first next()), so
    // writes made after this line race with its replay, as they do in a real server.
    this.pending = this.it.next();
    this.pending.catch(() => undefined);
  }

  /** The next n events; fails if they do not arrive within the bounded wait. */
  async next(n: number, ms = WAIT_MS): Promise<StoreEvent[]> {
    const deadline = Date.now() + ms;
    while (this.buffered.length < n) {
      this.pending ??= this.it.next();
      const res = await withTimeout(this.pending, `${n} watch events (have ${this.buffered.length})`, Math.max(1, deadline - Date.now()));
      this.pending = undefined;
      if (res.done) assert.fail(`watch ended after ${this.buffered.length} of ${n} events`);
      assert.ok(res.value.length > 0, 'a watch batch is never empty');
      this.buffered.push(...res.value);
    }
    return this.buffered.splice(0, n);
  }
}
