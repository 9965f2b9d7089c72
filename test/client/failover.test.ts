// The client's health checks and failover policy against small local HTTPS servers: a hung server
// (SIGSTOP-like: accepts, never answers), a dead one (connection refused), and fail-back; over
// HTTP/1.1 and over HTTP/2 (one connection, every request a stream), as the server speaks both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import net, { type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from '../../src/client/rest.js';
import { pickServer, type ServerState } from '../../src/client/server-health.js';
import { mergeServers, serversFromEndpoints } from '../../src/client/endpoint-discovery.js';
import { preferenceOrder } from '../../src/client/server-preference.js';
import { ensureClusterPki } from '../../src/pki/cluster-pki.js';

test('pickServer: stays, fails over to the first healthy, goes back after the fail-back delay', () => {
  const servers = ['a', 'b', 'c'];
  const st: Record<string, ServerState | undefined> = {};
  const state = (s: string) => st[s];
  // Unchecked servers count as fine for staying.
  assert.equal(pickServer(servers, 0, state, 1000, 500), 0);
  st.a = { healthy: false, since: 1000 };
  st.b = { healthy: false, since: 1000 };
  st.c = { healthy: true, since: 1000 };
  assert.equal(pickServer(servers, 0, state, 1100, 500), 2, 'the only healthy one');
  st.b = { healthy: true, since: 1200 };
  assert.equal(pickServer(servers, 0, state, 1250, 500), 1, 'first healthy in list order');
  // Current healthy: a preferred (earlier) one is returned to only after it has been healthy long enough.
  st.a = { healthy: true, since: 2000 };
  assert.equal(pickServer(servers, 1, state, 2100, 500), 1);
  assert.equal(pickServer(servers, 1, state, 2500, 500), 0);
  // Nobody healthy: stay.
  for (const k of servers) st[k] = { healthy: false, since: 3000 };
  assert.equal(pickServer(servers, 1, state, 3100, 500), 1);
});

test('serversFromEndpoints and mergeServers', () => {
  const ep = {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: 'kubernetes', namespace: 'default' },
    subsets: [{ addresses: [{ ip: '127.0.0.3' }, { ip: '127.0.0.1' }, { ip: '::1' }], ports: [{ name: 'https', port: 6443, protocol: 'TCP' }] }],
  };
  const found = serversFromEndpoints(ep);
  assert.deepEqual(found, ['https://127.0.0.1:6443', 'https://127.0.0.3:6443', 'https://[::1]:6443']);
  assert.deepEqual(mergeServers(['https://127.0.0.3:6443/'], found), ['https://127.0.0.3:6443', 'https://127.0.0.1:6443', 'https://[::1]:6443']);
});

interface FakeServer {
  url: string;
  name: string;
  hang: boolean;
  requests: number;
  /** TLS connections accepted so far, and the most requests it had in hand at once. */
  connections: number;
  maxInFlight: number;
  kill(): Promise<void>;
}

/** What the fake servers allow at once on one HTTP/2 connection. */
const MAX_STREAMS = 4;

async function fakeServers(names: string[]): Promise<{ servers: FakeServer[]; caPem: string; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-failover-'));
  const pki = await ensureClusterPki(dir, ['127.0.0.1', 'localhost']);
  const all: { srv: http2.Http2SecureServer; sockets: Set<Socket> }[] = [];
  const servers = await Promise.all(
    names.map(async (name) => {
      const sockets = new Set<Socket>();
      const fake: FakeServer = { url: '', name, hang: false, requests: 0, connections: 0, maxInFlight: 0, kill: async () => {} };
      let inFlight = 0;
      const opts = { cert: pki.server.certPem, key: pki.server.keyPem, allowHTTP1: true, settings: { maxConcurrentStreams: MAX_STREAMS } };
      const srv = http2.createSecureServer(opts, (req, res) => {
        fake.requests++;
        if (fake.hang) return; // accepted, never answered: a SIGSTOPped process
        if (req.url?.startsWith('/slow')) return; // this one request is slow; the server is fine
        if (req.url?.startsWith('/busy')) {
          fake.maxInFlight = Math.max(fake.maxInFlight, ++inFlight);
          setTimeout(() => {
            inFlight--;
            res.writeHead(200, { 'Content-Type': 'application/json' });
            res.end(JSON.stringify({ server: name }));
          }, 50);
          return;
        }
        if (req.url?.startsWith('/readyz')) return void res.end('ok');
        if (req.url?.includes('watch=true')) {
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.write(JSON.stringify({ type: 'ADDED', object: { metadata: { name } } }) + '\n');
          return; // stays open
        }
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ server: name }));
      });
      srv.on('secureConnection', (s) => {
        fake.connections++;
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
      });
      await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
      fake.url = `https://127.0.0.1:${(srv.address() as AddressInfo).port}`;
      fake.kill = async () => {
        // SIGKILL-like: the port refuses connections and open ones are reset.
        await new Promise<void>((r) => {
          srv.close(() => r());
          for (const s of sockets) s.destroy();
        });
      };
      all.push({ srv, sockets });
      return fake;
    }),
  );
  return {
    servers,
    caPem: pki.ca.certPem,
    async close() {
      for (const { srv, sockets } of all) {
        for (const s of sockets) s.destroy();
        srv.close();
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitUntil(fn: () => boolean, timeoutMs: number, what: string): Promise<number> {
  const start = Date.now();
  while (!fn()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - start;
}

/** Servers a and b, and a client preferring a that health-checks both (fast timings) and records its switches. */
async function twoCheckedServers(useHttp2: boolean) {
  const { servers, caPem, close } = await fakeServers(['a', 'b']);
  const [a, b] = servers as [FakeServer, FakeServer];
  const client = new ApiClient({ servers: [a.url, b.url], caPem, timeoutMs: 5000, http2: useHttp2, healthCheck: { intervalMs: 100, timeoutMs: 200, failbackAfterMs: 600 } });
  const switches: string[] = [];
  client.onFailover((s) => switches.push(s));
  return { a, b, client, switches, close };
}

for (const [transport, useHttp2] of [['HTTP/1.1', false], ['HTTP/2', true]] as const) {
  test(`${transport}: a hung server is abandoned within interval + timeout; its watch stream is cut; fail-back after the delay`, async () => {
    const { a, b, client, switches, close } = await twoCheckedServers(useHttp2);
    try {
      assert.deepEqual(await client.get('/x'), { server: 'a' });
      const ac = new AbortController();
      const watch = client.watch('/w', {}, ac.signal);
      const first = await watch.next();
      assert.equal((first.value as { object: { metadata: { name: string } } }).object.metadata.name, 'a');
      const ended = watch.next().then(
        () => 'ended',
        (e: Error) => `error: ${e.message}`,
      );

      a.hang = true;
      const took = await waitUntil(() => client.server === b.url, 2000, 'switch to b');
      assert.ok(took < 1000, `switched after ${took} ms`);
      assert.match(await ended, /error|ended/, 'the watch on the hung server was cut');
      assert.deepEqual(await client.get('/x'), { server: 'b' });
      assert.equal(client.serverState(a.url)?.healthy, false);

      // a answers again: the client goes back only after a has been healthy for failbackAfterMs.
      a.hang = false;
      await waitUntil(() => client.serverState(a.url)?.healthy === true, 2000, 'a healthy');
      const healthyAt = Date.now();
      await waitUntil(() => client.server === a.url, 3000, 'fail-back to a');
      assert.ok(Date.now() - healthyAt >= 450, `went back after ${Date.now() - healthyAt} ms`);
      assert.deepEqual(switches, [b.url, a.url]);
      ac.abort();
    } finally {
      client.close();
      await close();
    }
  });

  test(`${transport}: one request timing out neither marks its server down nor cuts the other requests and watches on it`, async () => {
    const { a, b, client, switches, close } = await twoCheckedServers(useHttp2);
    try {
      await waitUntil(() => client.serverState(a.url)?.healthy === true, 2000, 'a checked healthy');
      const ac = new AbortController();
      const watch = client.watch('/w', {}, ac.signal);
      assert.equal(((await watch.next()).value as { object: { metadata: { name: string } } }).object.metadata.name, 'a');
      let watchDone = false;
      void watch.next().then(
        () => (watchDone = true),
        () => (watchDone = true),
      );
      await assert.rejects(client.get('/slow', { timeoutMs: 300 }), /timed out after 300 ms/);
      assert.equal(client.server, a.url, 'still on a');
      assert.equal(client.serverState(a.url)?.healthy, true);
      assert.deepEqual(await client.get('/x'), { server: 'a' });
      assert.equal(watchDone, false, 'the watch on a is still open');
      assert.deepEqual(switches, []);
      assert.equal(b.requests > 0, true, 'b is health-checked in the background');
      ac.abort();
    } finally {
      client.close();
      await close();
    }
  });

  test(`${transport}: a dead server (connection refused) fails over at once, for requests and for health checks`, async () => {
    const { servers, caPem, close } = await fakeServers(['a', 'b', 'c']);
    const [a, b, c] = servers as [FakeServer, FakeServer, FakeServer];
    const client = new ApiClient({ servers: [a.url, b.url, c.url], caPem, timeoutMs: 5000, http2: useHttp2, healthCheck: { intervalMs: 200, timeoutMs: 300, failbackAfterMs: 60_000 } });
    try {
      assert.deepEqual(await client.get('/x'), { server: 'a' });
      await a.kill();
      const started = Date.now();
      assert.deepEqual(await client.get('/x'), { server: 'b' }, 'the request itself moves on');
      assert.ok(Date.now() - started < 1000);
      // Without fail-back yet, b stays current even when c is healthy too.
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(client.server, b.url);
      // The list is replaceable: dropping b moves to the best remaining server.
      client.setServers([a.url, c.url]);
      assert.equal(client.server, c.url);
    } finally {
      client.close();
      await close();
    }
  });
}

test('over HTTP/2 every request is a stream on one connection, and streams past the server\'s limit wait their turn, their wait not counted against their timeout', async () => {
  const { servers, caPem, close } = await fakeServers(['a']);
  const [a] = servers as [FakeServer];
  // 25 requests of 50 ms, 4 at a time, take 350 ms: longer than each one's timeout, as it should be.
  const client = new ApiClient({ servers: [a.url], caPem, timeoutMs: 300, http2: true });
  try {
    const answers = await Promise.all(Array.from({ length: 25 }, () => client.get('/busy')));
    assert.deepEqual(new Set(answers.map((x) => JSON.stringify(x))), new Set([JSON.stringify({ server: 'a' })]));
    assert.equal(a.connections, 1, 'one connection for all of them');
    assert.ok(a.maxInFlight <= MAX_STREAMS, `the server had ${a.maxInFlight} in hand at once; it allows ${MAX_STREAMS}`);
    assert.ok(a.maxInFlight > 1, 'requests went in parallel');
    // A DELETE carries its DeleteOptions (Node would end a DELETE's stream before the body).
    assert.deepEqual(await client.delete('/busy', { preconditions: { uid: 'u' } }), { server: 'a' });
    // A watch is one more stream on it.
    const ac = new AbortController();
    const watch = client.watch('/w', {}, ac.signal);
    assert.equal(((await watch.next()).value as { object: { metadata: { name: string } } }).object.metadata.name, 'a');
    assert.equal(a.connections, 1);
    ac.abort();
    await watch.return(undefined);
  } finally {
    client.close();
    await close();
  }
});

test('over HTTP/2 a server that accepts the connection and never sets it up fails the request within its timeout', async () => {
  // A stopped process: the kernel accepts TCP, nobody answers TLS.
  const silent = net.createServer(() => {});
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
  const { caPem, close } = await fakeServers([]);
  const client = new ApiClient({ servers: [`https://127.0.0.1:${(silent.address() as AddressInfo).port}`], caPem, timeoutMs: 300, http2: true });
  try {
    const started = Date.now();
    await assert.rejects(client.get('/x'), /no connection to .* within 300 ms/);
    assert.ok(Date.now() - started < 3000, `failed after ${Date.now() - started} ms`);
  } finally {
    client.close();
    silent.close();
    await close();
  }
});

test('without health checks the client keeps the old behaviour (no background requests)', async () => {
  const { servers, caPem, close } = await fakeServers(['a']);
  const [a] = servers as [FakeServer];
  const client = new ApiClient({ servers: [a.url], caPem });
  try {
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(a.requests, 0);
    assert.deepEqual(await client.get('/x'), { server: 'a' });
  } finally {
    client.close();
    await close();
  }
});

test('preferenceOrder spreads agents over the members and moves few when one joins', () => {
  const three = ['https://127.0.0.1:6443', 'https://127.0.0.2:6443', 'https://127.0.0.3:6443'];
  const nodes = Array.from({ length: 300 }, (_, i) => `node-${i + 1}`);
  const first = (servers: string[], n: string) => preferenceOrder(servers, n)[0]!;
  const counts = new Map<string, number>();
  for (const n of nodes) counts.set(first(three, n), (counts.get(first(three, n)) ?? 0) + 1);
  assert.deepEqual([...counts.keys()].sort(), three);
  for (const c of counts.values()) assert.ok(c > 70 && c < 130, `even spread: ${[...counts.values()].join(', ')}`);
  // Every member is in each order, the same one each time for the same node.
  assert.deepEqual([...preferenceOrder(three, 'node-7')].sort(), three);
  assert.deepEqual(preferenceOrder(three, 'node-7'), preferenceOrder([...three].reverse(), 'node-7'));
  // A fourth member takes over about a quarter of the agents; the rest keep their preference.
  const four = [...three, 'https://127.0.0.4:6443'];
  const moved = nodes.filter((n) => first(three, n) !== first(four, n));
  assert.ok(moved.every((n) => first(four, n) === four[3]), 'only moves to the new member');
  assert.ok(moved.length > 40 && moved.length < 110, `${moved.length} of 300 moved`);
});
