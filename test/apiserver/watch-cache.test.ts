import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Store, StoreEvent } from '../../src/store/store.js';
import { ExpiredError, WatchCache, type CacheEventType, type CacheWatcher, type WatchFilter } from '../../src/apiserver/watch-cache.js';
import type { KubeObject } from '../../src/api/types.js';
import { silentLogger } from '../../src/util/log.js';
import { eventually } from '../support/cluster.js';

const pod = (name: string, nodeName: string | undefined, labels: Record<string, string> = {}) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels }, spec: nodeName ? { nodeName } : {} });

function recorder(filter: WatchFilter) {
  const events: { type: CacheEventType; name: string; rv: number }[] = [];
  let ended = '';
  const w: CacheWatcher = {
    filter,
    send: (type, ev) => events.push({ type, name: ev.object.metadata.name!, rv: ev.rv }),
    end: (reason) => (ended = reason),
  };
  return { w, events, ended: () => ended };
}

const nodeName = (o: KubeObject) => ((o.spec ?? {}) as { nodeName?: string }).nodeName || undefined;

describe('watch cache', () => {
  let dir: string;
  let store: Store;
  let cache: WatchCache;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wc-'));
    store = await openSqliteStore({ path: join(dir, 'db'), maintenanceIntervalMs: 0 });
    cache = new WatchCache({ store, prefix: '/registry/pods/', capacity: 50, indexedFields: { 'spec.nodeName': nodeName }, log: silentLogger() });
    cache.start();
    await cache.whenReady();
  });
  after(async () => {
    cache.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists current objects and catches up with the store revision', async () => {
    await store.create('/registry/pods/default/a', pod('a', 'n1'));
    const rev = await store.currentRevision();
    assert.ok(await cache.waitForRevision(rev, 2000));
    const { items } = cache.list({ matches: () => true }, '/registry/pods/');
    assert.deepEqual(items.map((o) => o.metadata.name), ['a']);
    assert.equal(items[0]!.metadata.resourceVersion, String(rev));
  });

  it('reports progress past commits to other keys that arrived while its own events were queued', async () => {
    const stop = new AbortController();
    let progress = 0;
    const start = await store.currentRevision();
    const iter = store.watch('/registry/secrets/', start, stop.signal, (r) => (progress = r))[Symbol.asyncIterator]();
    const first = iter.next();
    await store.create('/registry/secrets/default/s1', '{"metadata":{}}');
    await first; // the consumer holds batch 1 ...
    await store.create('/registry/secrets/default/s2', '{"metadata":{}}'); // ... so this one queues
    const other = await store.create('/registry/configmaps/default/while-queued', '{"metadata":{}}');
    assert.equal(((await iter.next()).value as { kv: { key: string } }[])[0]!.kv.key, '/registry/secrets/default/s2');
    const idle = iter.next(); // done with s2: nothing left but the other key's commit
    await eventually(() => progress >= other.modRevision, 1000, 'progress past the other commit');
    stop.abort();
    await idle;
  });

  it('replays from a resourceVersion, then streams live, without gaps or duplicates', async () => {
    const from = await store.currentRevision();
    await store.create('/registry/pods/default/b', pod('b', 'n1'));
    await store.create('/registry/pods/default/c', pod('c', 'n2'));
    await cache.waitForRevision(await store.currentRevision(), 2000);
    const r = recorder({ matches: () => true });
    cache.watch(r.w, from, '/registry/pods/');
    const kv = await store.create('/registry/pods/default/d', pod('d', 'n1'));
    await store.delete('/registry/pods/default/b');
    await eventually(() => r.events.length === 4, 2000, 'four events');
    assert.deepEqual(r.events.map((e) => `${e.type}:${e.name}`), ['ADDED:b', 'ADDED:c', 'ADDED:d', 'DELETED:b']);
    assert.ok(r.events.every((e, i) => i === 0 || e.rv > r.events[i - 1]!.rv));
    assert.equal(r.events[2]!.rv, kv.modRevision);
    cache.removeWatcher(r.w);
  });

  it('turns objects entering or leaving a filter into ADDED and DELETED', async () => {
    const key = '/registry/pods/default/mover';
    const created = await store.create(key, pod('mover', 'n1', { tier: 'web' }));
    await cache.waitForRevision(created.modRevision, 2000);
    const r = recorder({ matches: (o) => o.metadata.labels?.tier === 'db' });
    cache.watch(r.w, created.modRevision, '/registry/pods/');
    const u1 = await store.update(key, pod('mover', 'n1', { tier: 'db' }), created.modRevision);
    const u2 = await store.update(key, pod('mover', 'n1', { tier: 'db', x: 'y' }), u1.modRevision);
    await store.update(key, pod('mover', 'n1', { tier: 'web' }), u2.modRevision);
    await eventually(() => r.events.length === 3, 2000, 'three events');
    assert.deepEqual(r.events.map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED']);
    cache.removeWatcher(r.w);
  });

  it('sends an indexed watcher only the events of its value', async () => {
    const r = recorder({ matches: (o) => nodeName(o) === 'n9', indexed: { field: 'spec.nodeName', value: 'n9' } });
    cache.watch(r.w, await store.currentRevision(), '/registry/pods/');
    await store.create('/registry/pods/default/other', pod('other', 'n8'));
    const mine = await store.create('/registry/pods/default/mine', pod('mine', 'n9'));
    await eventually(() => r.events.length === 1, 2000, 'one event');
    assert.equal(r.events[0]!.name, 'mine');
    // Moving away from the node reaches the watcher as DELETED (found through the old value).
    await store.update('/registry/pods/default/mine', pod('mine', 'n7'), mine.modRevision);
    await eventually(() => r.events.length === 2, 2000, 'moved away');
    assert.equal(r.events[1]!.type, 'DELETED');
    assert.deepEqual(cache.list({ matches: () => true, indexed: { field: 'spec.nodeName', value: 'n9' } }, '/registry/pods/').items, []);
    cache.removeWatcher(r.w);
  });

  it('answers a resourceVersion older than its window with Expired', async () => {
    const old = await store.currentRevision();
    for (let i = 0; i < 60; i++) await store.create(`/registry/pods/default/f${i}`, pod(`f${i}`, 'n1'));
    await cache.waitForRevision(await store.currentRevision(), 2000);
    const r = recorder({ matches: () => true });
    assert.throws(() => cache.watch(r.w, old, '/registry/pods/'), ExpiredError);
  });

  it('lets a watcher end itself during its opening burst without leaking it', async () => {
    const before = cache.watcherCount;
    let sent = 0;
    const w: CacheWatcher = {
      filter: { matches: () => true },
      send: () => {
        sent++;
        // What watch-stream does when a consumer falls too far behind.
        if (sent === 2) cache.removeWatcher(w);
      },
      end: () => {},
    };
    cache.watch(w, undefined, '/registry/pods/');
    assert.ok(sent >= 2);
    assert.equal(cache.watcherCount, before);
  });

  it('starts with the current state when no resourceVersion is given', async () => {
    const r = recorder({ matches: (o) => o.metadata.name === 'a' });
    cache.watch(r.w, undefined, '/registry/pods/');
    assert.deepEqual(r.events.map((e) => `${e.type}:${e.name}`), ['ADDED:a']);
    cache.removeWatcher(r.w);
  });

  it('keeps two writes of the same text apart: neither the cached object nor either answer carries the other revision', async () => {
    const key = '/registry/pods/default/twin';
    const base = await store.create(key, pod('twin', undefined));
    const text = pod('twin', 'n9');
    const objectA = JSON.parse(text) as KubeObject;
    const objectB = JSON.parse(text) as KubeObject;
    // Two writers computed the same object; the second registers before the first's echo arrives.
    cache.expectWrite(key, text, objectA);
    const a = await store.update(key, text, base.modRevision);
    cache.expectWrite(key, text, objectB);
    const b = await store.update(key, text, a.modRevision);
    assert.ok(await cache.waitForRevision(b.modRevision, 2000));
    // The first echo took B's object: it is the cache's now, and readers may hold it frozen.
    Object.freeze(objectB.metadata);
    const answeredB = cache.settleWrite(key, objectB, b.modRevision);
    const answeredA = cache.settleWrite(key, objectA, a.modRevision);
    assert.equal(answeredA.metadata.resourceVersion, String(a.modRevision));
    assert.equal(answeredB.metadata.resourceVersion, String(b.modRevision));
    assert.equal(cache.get(key)!.metadata.resourceVersion, String(b.modRevision));
    const r = recorder({ matches: (o) => o.metadata.name === 'twin' });
    cache.watch(r.w, base.modRevision, '/registry/pods/');
    assert.deepEqual(r.events.map((e) => e.rv), [a.modRevision, b.modRevision], 'each event keeps its own revision');
    cache.removeWatcher(r.w);
  });
});

describe('watch cache revision', () => {
  it('never reports a revision whose events it has not applied, even when the store reports progress past a pending batch', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wc-progress-'));
    const real = await openSqliteStore({ path: join(dir, 'db'), maintenanceIntervalMs: 0 });
    // The store reports progress beyond each batch on the next turn of the event loop (as a later
    // commit would): before the cache, which first lets the writers be answered, has applied it.
    async function* early(it: AsyncIterable<StoreEvent[]>, onProgress?: (rv: number) => void) {
      for await (const batch of it) {
        const last = batch[batch.length - 1]!.kv.modRevision;
        setImmediate(() => onProgress?.(last + 1000));
        yield batch;
      }
    }
    const store = new Proxy(real, {
      get(target, prop, receiver) {
        if (prop === 'watch') {
          return (prefix: string, rv: number, signal: AbortSignal, onProgress?: (rv: number) => void) => early(target.watch(prefix, rv, signal, onProgress), onProgress);
        }
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const cache = new WatchCache({ store, prefix: '/registry/pods/', log: silentLogger() });
    cache.start();
    try {
      await cache.whenReady();
      const kv = await real.create('/registry/pods/default/early', pod('early', undefined));
      assert.ok(await cache.waitForRevision(kv.modRevision, 5_000));
      const all: WatchFilter = { matches: () => true };
      assert.deepEqual(cache.list(all, '/registry/pods/').items.map((o) => o.metadata.name), ['early']);
    } finally {
      cache.stop();
      await real.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('watch cache window', () => {
  let dir: string;
  let store: Store;
  let now = 1_000_000;
  let cache: WatchCache;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wcw-'));
    store = await openSqliteStore({ path: join(dir, 'db'), maintenanceIntervalMs: 0 });
    // Room for about 150 of the 1 KB objects below, and for 5 minutes of them.
    cache = new WatchCache({ store, prefix: '/registry/configmaps/', capacity: 10_000, maxBytes: 150 * 1100, maxAgeMs: 5 * 60_000, now: () => now, log: silentLogger() });
    cache.start();
    await cache.whenReady();
  });
  after(async () => {
    cache.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const cm = (i: number) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}`, namespace: 'default' }, data: { v: 'x'.repeat(1000) } });
  const resumable = (rv: number): boolean => {
    const r = recorder({ matches: () => true });
    try {
      cache.watch(r.w, rv, '/registry/configmaps/');
      cache.removeWatcher(r.w);
      return true;
    } catch (e) {
      if (e instanceof ExpiredError) return false;
      throw e;
    }
  };

  it('keeps as many events as its byte budget holds, then lets the oldest go', async () => {
    const revs: number[] = [];
    for (let i = 0; i < 300; i++) revs.push((await store.create(`/registry/configmaps/default/c${i}`, cm(i))).modRevision);
    assert.ok(await cache.waitForRevision(revs.at(-1)!, 5000));
    assert.equal(resumable(revs[250]!), true, 'a recent revision must be resumable');
    assert.equal(resumable(revs[100]!), false, 'the window kept more than its byte budget');
    assert.equal(resumable(revs[160]!), true, 'the window kept less than its byte budget');
  });

  it('lets events older than its age limit go, but always keeps the last hundred', async () => {
    const first = (await store.create('/registry/configmaps/default/old', cm(1000))).modRevision;
    assert.ok(await cache.waitForRevision(first, 5000));
    now += 6 * 60_000;
    let last = 0;
    for (let i = 0; i < 120; i++) last = (await store.create(`/registry/configmaps/default/n${i}`, cm(2000 + i))).modRevision;
    assert.ok(await cache.waitForRevision(last, 5000));
    // Resuming from just before it needs that event itself.
    assert.equal(resumable(first - 1), false, 'an event older than the age limit was kept');
    assert.equal(resumable(last - 99), true, 'the last hundred events must stay');
  });
});
