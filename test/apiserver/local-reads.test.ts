// The server's own controllers list and watch its caches directly (LocalReads). What they see must
// be what the same requests over HTTP see: the same events, filters, bookmarks and 410s, and
// objects of their own that they cannot corrupt the cache through.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject, WatchEvent } from '../../src/api/types.js';
import { isStatusError } from '../../src/api/errors.js';
import { Informer, type ListWatchSource } from '../../src/client/informer.js';
import type { ApiClient } from '../../src/client/rest.js';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';
import { eventually } from '../support/eventually.js';
import { collectEvents } from '../support/watch-events.js';

const CM = '/api/v1/namespaces/default/configmaps';

const collect = (source: ListWatchSource, query: Record<string, string>, until: (evs: WatchEvent<KubeObject>[]) => boolean) => collectEvents(source, CM, query, until);

const summary = (evs: WatchEvent<KubeObject>[]) => evs.map((e) => `${e.type}:${e.object.metadata.name ?? ''}:${e.object.metadata.resourceVersion}`);

describe('local reads (controllers in the server process)', () => {
  let srv: InProcessServer;
  let c: ApiClient;
  let local: ListWatchSource;
  before(async () => {
    srv = await startInProcessServer({ watchBookmarkIntervalMs: 100, watchCacheSize: 20 });
    c = srv.client();
    local = srv.api.localReads;
  });
  after(async () => srv.stop());

  it('lists what HTTP lists, with selectors', async () => {
    await c.create(CM, { metadata: { name: 'a', labels: { team: 'x' } }, data: { k: '1' } });
    await c.create(CM, { metadata: { name: 'b', labels: { team: 'y' } } });
    for (const query of [{}, { labelSelector: 'team=x' }, { fieldSelector: 'metadata.name=b' }, { resourceVersion: '0' }] as Record<string, string>[]) {
      const overHttp = await c.list(CM, query);
      const direct = await local.list(CM, query, new AbortController().signal);
      // The server writes in the background (flow schema status at start): the revision the
      // second read answers at may be later, never earlier.
      assert.deepEqual({ ...direct, metadata: {} }, { ...overHttp, metadata: {} }, JSON.stringify(query));
      assert.ok(Number(direct.metadata.resourceVersion) >= Number(overHttp.metadata.resourceVersion), JSON.stringify(query));
    }
  });

  it('watches what HTTP watches: resumes, retypes objects leaving a selector, deletes', async () => {
    const from = (await c.list(CM, {})).metadata.resourceVersion!;
    const b = await c.get<KubeObject>(`${CM}/b`);
    await c.replace(`${CM}/b`, { ...b, metadata: { ...b.metadata, labels: { team: 'x' } } });
    await c.create(CM, { metadata: { name: 'c', labels: { team: 'x' } } });
    const a = await c.get<KubeObject>(`${CM}/a`);
    await c.replace(`${CM}/a`, { ...a, metadata: { ...a.metadata, labels: { team: 'z' } } });
    await c.delete(`${CM}/c`);
    for (const query of [{ resourceVersion: from }, { resourceVersion: from, labelSelector: 'team=x' }] as Record<string, string>[]) {
      const done = (evs: WatchEvent<KubeObject>[]) => evs.some((e) => e.type === 'DELETED' && e.object.metadata.name === 'c');
      const overHttp = await collect(c, query, done);
      const direct = await collect(local, query, done);
      assert.deepEqual(summary(direct), summary(overHttp), JSON.stringify(query));
    }
    const filtered = await collect(local, { resourceVersion: from, labelSelector: 'team=x' }, (evs) => evs.length >= 4);
    assert.deepEqual(
      filtered.map((e) => `${e.type}:${e.object.metadata.name}`),
      ['ADDED:b', 'ADDED:c', 'DELETED:a', 'DELETED:c'],
    );
  });

  it('sends bookmarks and the initial-events-end bookmark when asked', async () => {
    const initial = await collect(local, { sendInitialEvents: 'true', allowWatchBookmarks: 'true', resourceVersionMatch: 'NotOlderThan', resourceVersion: '' }, (evs) =>
      evs.some((e) => e.type === 'BOOKMARK'),
    );
    const end = initial[initial.length - 1]!;
    assert.equal(end.type, 'BOOKMARK');
    assert.equal(end.object.metadata.annotations?.['k8s.io/initial-events-end'], 'true');
    assert.deepEqual(initial.slice(0, -1).map((e) => `${e.type}:${e.object.metadata.name}`), ['ADDED:a', 'ADDED:b']);
    const rv = (await c.list(CM, {})).metadata.resourceVersion!;
    const ticks = await collect(local, { resourceVersion: rv, allowWatchBookmarks: 'true' }, (evs) => evs.filter((e) => e.type === 'BOOKMARK').length >= 2);
    for (const t of ticks) assert.equal(t.object.kind, 'ConfigMap');
  });

  it('answers a resourceVersion older than the window with 410 Expired, as HTTP does', async () => {
    const old = (await c.list(CM, {})).metadata.resourceVersion!;
    for (let i = 0; i < 25; i++) await c.create(CM, { metadata: { name: `fill-${i}` } });
    for (const source of [c, local]) {
      await assert.rejects(
        collect(source, { resourceVersion: old }, () => false),
        (e: unknown) => isStatusError(e) && e.code === 410 && e.reason === 'Expired',
      );
    }
  });

  it('leaves no watcher behind: after a break, an abort, a timeout or a 410', async () => {
    const cache = srv.api.storeByResource('', 'configmaps').cache;
    const start = cache.watcherCount;
    const rv = (await c.list(CM, {})).metadata.resourceVersion!;
    await collect(local, { resourceVersion: '0' }, (evs) => evs.length >= 1);
    assert.equal(cache.watcherCount, start, 'after the consumer broke off');
    const stop = new AbortController();
    const waiting = (async () => {
      for await (const _ of local.watch(CM, { resourceVersion: rv }, stop.signal)) void _;
    })();
    await eventually(() => cache.watcherCount === start + 1, 5000, 'the watch to register');
    stop.abort();
    await waiting;
    assert.equal(cache.watcherCount, start, 'after an abort while waiting');
    const timedOut = await collect(local, { resourceVersion: rv, timeoutSeconds: '1', allowWatchBookmarks: 'true' }, () => false);
    assert.equal(timedOut[timedOut.length - 1]!.type, 'BOOKMARK', 'a timed-out watch ends with a bookmark');
    assert.ok(Number(timedOut[timedOut.length - 1]!.object.metadata.resourceVersion) >= Number(rv));
    assert.equal(cache.watcherCount, start, 'after the timeout');
    await assert.rejects(collect(local, { resourceVersion: '1' }, () => false), (e: unknown) => isStatusError(e) && e.code === 410);
    assert.equal(cache.watcherCount, start, 'after a 410');
  });

  it('refuses what is not a collection with 404', async () => {
    for (const path of ['/api/v1/namespaces/default/configmaps/a', '/api/v1/nothings', '/healthz', '/api/v1/namespaces/default/pods/x/log']) {
      await assert.rejects(local.list(path, {}, new AbortController().signal), (e: unknown) => isStatusError(e) && e.code === 404, path);
    }
  });

  it('hands out copies: changing a listed or watched object changes nothing in the server', async () => {
    const listed = await local.list<KubeObject>(CM, { fieldSelector: 'metadata.name=a' }, new AbortController().signal);
    listed.items[0]!.metadata.labels = { hacked: 'yes' };
    const rv = (await c.list(CM, {})).metadata.resourceVersion!;
    const a = await c.get<KubeObject>(`${CM}/a`);
    await c.replace(`${CM}/a`, { ...a, data: { k: '2' } });
    const [ev] = await collect(local, { resourceVersion: rv }, (evs) => evs.length >= 1);
    (ev!.object as unknown as { data: Record<string, string> }).data.k = 'changed';
    const overHttp = await collect(c, { resourceVersion: rv }, (evs) => evs.length >= 1);
    assert.equal((overHttp[0]!.object as unknown as { data: Record<string, string> }).data.k, '2');
    const again = await local.list<KubeObject>(CM, { fieldSelector: 'metadata.name=a' }, new AbortController().signal);
    assert.deepEqual(again.items[0]!.metadata.labels, { team: 'z' });
    assert.equal((again.items[0] as { data?: Record<string, string> }).data?.k, '2');
  });

  it('shares its own objects with read-only readers: the same content, frozen under test', async () => {
    const signal = new AbortController().signal;
    const copied = await local.list<KubeObject>(CM, {}, signal);
    const sharedList = await local.list<KubeObject>(CM, {}, signal, { readOnly: true });
    assert.deepEqual(sharedList, copied);
    const rv = copied.metadata.resourceVersion!;
    await c.create(CM, { metadata: { name: 'shared-one', labels: { x: 'y' } } });
    const read = async (readOnly: boolean) => {
      const stop = new AbortController();
      try {
        for await (const ev of local.watch<KubeObject>(CM, { resourceVersion: rv }, stop.signal, { readOnly })) return ev;
      } finally {
        stop.abort();
      }
      return undefined;
    };
    const [a, b] = [await read(false), await read(true)];
    assert.deepEqual(b, a);
    if (process.env.SKIFF_FREEZE_SHARED === '1') {
      assert.ok(Object.isFrozen(b!.object.metadata.labels));
      assert.throws(() => ((b!.object.metadata.labels as Record<string, string>).x = 'changed'), TypeError);
      assert.throws(() => ((sharedList.items[0]!.metadata as Record<string, unknown>).name = 'changed'), TypeError);
      assert.ok(!Object.isFrozen(a!.object.metadata.labels));
    }
  });

  it('feeds an informer that stays in step with the API', async () => {
    const stop = new AbortController();
    const inf = new Informer(local, { path: CM });
    void inf.run(stop.signal);
    try {
      await inf.waitForSync();
      await c.create(CM, { metadata: { name: 'late' } });
      await c.delete(`${CM}/a`);
      await eventually(() => inf.get('default/late') !== undefined && inf.get('default/a') === undefined, 5000, 'the informer to see the create and the delete');
      const names = (await c.list(CM, {})).items.map((o) => o.metadata.name).sort();
      assert.deepEqual(inf.list().map((o) => o.metadata.name).sort(), names);
    } finally {
      stop.abort();
    }
  });
});
