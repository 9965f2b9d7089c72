// Watch over HTTP: bookmarks, resume from a resourceVersion, label-filtered streams; plus health and metrics.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject, WatchEvent } from '../../src/api/types.js';
import type { ApiClient } from '../../src/client/rest.js';
import { connect } from 'node:tls';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';
import { collectEvents } from '../support/watch-events.js';

describe('watch over HTTP', () => {
  let srv: InProcessServer;
  let c: ApiClient;
  const CM = '/api/v1/namespaces/default/configmaps';
  before(async () => {
    srv = await startInProcessServer({ watchBookmarkIntervalMs: 100 });
    c = srv.client();
  });
  after(async () => srv.stop());

  const collect = (query: Record<string, string>, until: (evs: WatchEvent<KubeObject>[]) => boolean) => collectEvents(c, CM, query, until);

  it('resumes from a resourceVersion and sends bookmarks when asked', async () => {
    const first = await c.create(CM, { metadata: { name: 'one', labels: { w: 'x' } } });
    await c.create(CM, { metadata: { name: 'two', labels: { w: 'y' } } });
    const events = await collect({ resourceVersion: first.metadata.resourceVersion!, allowWatchBookmarks: 'true' }, (evs) => evs.some((e) => e.type === 'BOOKMARK'));
    assert.equal(events[0]!.type, 'ADDED');
    assert.equal(events[0]!.object.metadata.name, 'two');
    const bookmark = events.find((e) => e.type === 'BOOKMARK')!;
    assert.ok(Number(bookmark.object.metadata.resourceVersion) >= Number(events[0]!.object.metadata.resourceVersion));
  });

  it('filters by label and sends the current state for resourceVersion 0', async () => {
    const events = await collect({ resourceVersion: '0', labelSelector: 'w=x' }, (evs) => evs.length >= 1);
    assert.deepEqual(events.map((e) => `${e.type}:${e.object.metadata.name}`), ['ADDED:one']);
  });

  it('ends the initial events of a WatchList with an annotated bookmark', async () => {
    const events = await collect({ sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: 'true' }, (evs) => evs.some((e) => e.type === 'BOOKMARK'));
    const names = events.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata.name).sort();
    assert.deepEqual(names, ['one', 'two']);
    assert.equal(events.at(-1)!.object.metadata.annotations?.['k8s.io/initial-events-end'], 'true');
  });

  it('answers a HEAD watch without a body, and the connection stays usable', async () => {
    const port = Number(new URL(srv.url).port);
    const socket = connect({ host: '127.0.0.1', port, ...srv.adminTls });
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    try {
      await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
      const until = async (re: RegExp) => {
        for (let i = 0; i < 300 && !re.test(text); i++) await new Promise((r) => setTimeout(r, 10));
        assert.match(text, re);
      };
      socket.write(`HEAD ${CM}?watch=true&timeoutSeconds=1 HTTP/1.1\r\nHost: x\r\n\r\n`);
      await until(/^HTTP\/1\.1 200 OK\r\n[\s\S]*?\r\n\r\n/);
      await c.create(CM, { metadata: { name: 'during-head' } });
      // After the watch times out, the next request on the same connection gets a clean answer.
      socket.write('GET /version HTTP/1.1\r\nHost: x\r\n\r\n');
      await until(/\r\n\r\nHTTP\/1\.1 200 OK\r\n[\s\S]*"gitVersion"/);
      assert.doesNotMatch(text, /during-head/, 'no event in the HEAD response');
      assert.doesNotMatch(text, /Transfer-Encoding: chunked/i);
    } finally {
      socket.destroy();
      await c.delete(`${CM}/during-head`).catch(() => {});
    }
  });

  it('serves health and Prometheus metrics', async () => {
    assert.equal(String(await c.get('/readyz')).trim(), 'ok');
    assert.match(String(await c.get('/readyz', { query: { verbose: 'true' } })), /\[\+\]etcd ok/);
    const metrics = String(await c.get('/metrics', { accept: 'text/plain' }));
    assert.match(metrics, /apiserver_request_total\{verb="POST",dry_run="",group="",version="v1",resource="configmaps",subresource="",scope="resource",component="apiserver",code="201"\} \d+/);
    // The two made here, and kube-system/extension-apiserver-authentication, which the server publishes.
    assert.match(metrics, /apiserver_storage_objects\{resource="configmaps"\} 3/);
  });
});

describe('watch stream decoding', () => {
  it('keeps multi-byte characters intact across chunk boundaries', async () => {
    const srv = await startInProcessServer();
    const c = srv.client();
    try {
      // Long enough that the event spans several TCP chunks; every character is multi-byte.
      const text = 'ünïcødé—✓'.repeat(20_000);
      const stop = new AbortController();
      const seen: string[] = [];
      const done = (async () => {
        for await (const ev of c.watch<KubeObject & { data?: Record<string, string> }>('/api/v1/namespaces/default/configmaps', { resourceVersion: '0' }, stop.signal)) {
          seen.push(ev.object.data?.t ?? '');
          break;
        }
      })();
      await c.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'utf8' }, data: { t: text } });
      await done;
      stop.abort();
      assert.equal(seen[0], text);
    } finally {
      await srv.stop();
    }
  });
});
