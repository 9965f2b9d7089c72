// The etcd store against real etcd: the shared contract on a fresh single member per test, then
// what only etcd has: failover, quorum loss, restarts, watches resuming across them.
// Without an etcd binary every test here fails with a message saying how to install it.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openEtcdStore, progressRequestsAreOrdered, type EtcdStore, type EtcdStoreOptions } from '../../src/store/etcd.js';
import { classifyFailure, EtcdRpcError } from '../../src/store/etcd-client.js';
import { isStoreError, type StoreEvent } from '../../src/store/store.js';
import { ETCD_MISSING_MESSAGE, findEtcdBinary, freePorts, startEtcd, waitFor, type EtcdTestCluster } from '../support/etcd.js';
import { assertStoreError, EventReader, storeContract, withTimeout } from './contract.js';

const haveEtcd = findEtcdBinary() !== undefined;

if (!haveEtcd) {
  it('etcd store tests need an etcd binary', () => {
    assert.fail(ETCD_MISSING_MESSAGE);
  });
} else {
  // A fresh etcd per test (the contract wants an empty store with empty history); the next one
  // starts while the current test runs, so the ~0.2 s start-up is mostly hidden.
  let spare: Promise<EtcdTestCluster> | undefined;
  const freshEtcd = (): Promise<EtcdTestCluster> => {
    const next = spare ?? startEtcd();
    spare = startEtcd();
    spare.catch(() => undefined);
    return next;
  };
  after(async () => {
    const s = await spare?.catch(() => undefined);
    await s?.destroy();
  });

  storeContract('etcd', async () => {
    const etcd = await freshEtcd();
    const store = await openEtcdStore({ endpoints: etcd.endpoints, compactIntervalMs: 0 });
    return {
      store,
      cleanup: async () => {
        await store.close();
        await etcd.destroy();
      },
    };
  });

  describe('etcd store', () => {
    it('says when WatchProgressRequests can be trusted', () => {
      assert.equal(progressRequestsAreOrdered('3.4.23'), false);
      assert.equal(progressRequestsAreOrdered('3.4.31'), true);
      assert.equal(progressRequestsAreOrdered('3.5.12'), false);
      assert.equal(progressRequestsAreOrdered('3.5.13'), true);
      assert.equal(progressRequestsAreOrdered('3.6.0'), true);
      assert.equal(progressRequestsAreOrdered(''), false);
    });

    it('fails to open with a clear error, and quickly, when no etcd answers', async () => {
      const [port] = await freePorts(1);
      const started = Date.now();
      const err = await assertStoreError(openEtcdStore({ endpoints: [`127.0.0.1:${port}`], dialTimeoutMs: 1_000 }), 'unavailable');
      assert.match(err.message, /cannot use etcd at http:\/\/127\.0\.0\.1:\d+: etcd: connect failed after \d+ ms: connection refused/);
      assert.ok(Date.now() - started < 3_000, `open gave up after ${Date.now() - started} ms`);
    });

    it('reports progress to a watch on a quiet prefix, so a cache can serve consistent reads', async () => {
      const etcd = await freshEtcd();
      const store = await openEtcdStore({ endpoints: etcd.endpoints, compactIntervalMs: 0 });
      const ac = new AbortController();
      try {
        let progress = 0;
        const reader = new EventReader(store.watch('/quiet/', 0, ac.signal, (r) => (progress = Math.max(progress, r))));
        await store.create('/busy/a', '1');
        const b = await store.create('/busy/b', '1');
        const target = await store.currentRevision();
        assert.equal(target, b.modRevision);
        // etcd's periodic notification (1 s in tests) or an answered progress request.
        await waitFor(() => progress >= target, `progress to reach ${target}`, 5_000);
        const q = await store.create('/quiet/x', '1');
        assert.deepEqual(await reader.next(1), [{ type: 'create', kv: q }]);
        assert.equal(store.stats().watchers, 1);
      } finally {
        ac.abort();
        await store.close();
        await etcd.destroy();
      }
    });

    it('fails fast while etcd is down, says why, and recovers with its watch when etcd returns', async () => {
      const etcd = await freshEtcd();
      const store = await openEtcdStore({ endpoints: etcd.endpoints, compactIntervalMs: 0, requestTimeoutMs: 1_000, healthTimeoutMs: 800 });
      const ac = new AbortController();
      try {
        const a = await store.create('/w/a', '1');
        const reader = new EventReader(store.watch('/w/', 0, ac.signal));
        assert.deepEqual(await reader.next(1), [{ type: 'create', kv: a }]);

        await etcd.member(0).kill();
        let started = Date.now();
        const err = await assertStoreError(store.create('/w/b', '1'), 'unavailable');
        assert.ok(Date.now() - started < 2_000, `the write failed after ${Date.now() - started} ms`);
        assert.match(err.message, /^etcd: create failed.*127\.0\.0\.1/);
        started = Date.now();
        const health = await store.health();
        assert.equal(health.ok, false);
        assert.match(health.reason ?? '', /^etcd: /);
        assert.ok(Date.now() - started < 2_000, `health answered after ${Date.now() - started} ms`);
        await assertStoreError(store.get('/w/a'), 'unavailable');
        await assertStoreError(store.list({ prefix: '/w/' }), 'unavailable');

        etcd.member(0).start();
        await etcd.waitHealthy();
        let c: Awaited<ReturnType<EtcdStore['create']>> | undefined;
        await waitFor(async () => {
          c = await store.create('/w/c', '1');
          return true;
        }, 'a write to succeed after etcd is back', 10_000);
        assert.deepEqual(await store.get('/w/a'), a, 'the acknowledged write survived the crash');
        assert.deepEqual(await store.health(), { ok: true });
        // The watch reconnected by itself and continues right after what it had delivered.
        assert.deepEqual(await reader.next(1, 10_000), [{ type: 'create', kv: c! }]);
      } finally {
        ac.abort();
        await store.close();
        await etcd.destroy();
      }
    });

    it('asks lagging watches for progress when told the etcd version answers in order', async () => {
      // No periodic notifications within the test: any progress comes from a WatchProgressRequest.
      const etcd = await startEtcd({ progressNotifyIntervalMs: 600_000 });
      const store = await openEtcdStore({ endpoints: etcd.endpoints, compactIntervalMs: 0, progressRequests: true });
      const ac = new AbortController();
      try {
        assert.equal(store.stats().progressRequests, true);
        let progress = 0;
        const reader = new EventReader(store.watch('/quiet/', await store.currentRevision(), ac.signal, (r) => (progress = Math.max(progress, r))));
        await store.create('/busy/a', '1');
        let target = 0;
        await waitFor(async () => {
          target = await store.currentRevision(); // each call asks the lagging watch again
          return progress >= target;
        }, 'progress after a progress request', 5_000, 100);
        const q = await store.create('/quiet/x', '1');
        assert.deepEqual(await reader.next(1), [{ type: 'create', kv: q }]);
      } finally {
        ac.abort();
        await store.close();
        await etcd.destroy();
      }
    });

    it('tells failures that prove a request was not executed from those with an unknown outcome', () => {
      const f = (code: number, details: string) => classifyFailure(new EtcdRpcError(code, details, 'http://e'));
      assert.equal(f(14, 'etcdserver: no leader'), 'not-executed');
      assert.equal(f(14, 'No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:1'), 'not-executed');
      assert.equal(f(8, 'etcdserver: too many requests'), 'not-executed');
      assert.equal(f(14, 'Connection dropped'), 'unknown-outcome');
      assert.equal(f(14, 'etcdserver: request timed out'), 'unknown-outcome');
      assert.equal(f(4, 'Deadline exceeded after 2.001s,name resolution: 0.000s,LB pick: 0.000s,remote_addr=127.0.0.1:2379'), 'unknown-outcome');
      assert.equal(f(11, 'etcdserver: mvcc: required revision has been compacted'), 'final');
      assert.equal(f(3, 'etcdserver: request is too large'), 'final');
    });

    it('ends watches with closed when the store closes, and refuses new ones', async () => {
      const etcd = await freshEtcd();
      const store = await openEtcdStore({ endpoints: etcd.endpoints, compactIntervalMs: 0 });
      try {
        const it = store.watch('/p/', 0, new AbortController().signal)[Symbol.asyncIterator]();
        const pending = it.next();
        await waitFor(() => store.stats().watchers === 1, 'the watch to register');
        await store.close();
        await assertStoreError(pending, 'closed');
        await assertStoreError(store.watch('/p/', 0, new AbortController().signal)[Symbol.asyncIterator]().next(), 'closed');
        await assertStoreError(store.get('/p/a'), 'closed');
      } finally {
        await store.close();
        await etcd.destroy();
      }
    });
  });

  describe('etcd store on a 3-member cluster', () => {
    let etcd: EtcdTestCluster;
    let store: EtcdStore;
    const storeOpts = (): EtcdStoreOptions => ({ endpoints: etcd.endpoints, compactIntervalMs: 0, requestTimeoutMs: 2_000, healthTimeoutMs: 1_500 });

    before(async () => {
      etcd = await startEtcd({ members: 3 });
      store = await openEtcdStore(storeOpts());
    });
    after(async () => {
      await store?.close();
      await etcd?.destroy();
    });

    /** Every member running and healthy again, and the store writing. */
    const allBack = async () => {
      for (const m of etcd.members) if (!m.running) m.start();
      await etcd.waitHealthy(20_000);
      await waitFor(async () => (await store.health()).ok, 'the store to be healthy', 10_000);
    };

    it('keeps writing with a follower SIGKILLed, and again soon after the leader is killed', async () => {
      const ac = new AbortController();
      const from = await store.currentRevision();
      const reader = new EventReader(store.watch('/ha1/', from, ac.signal));
      const acked: number[] = [];
      let n = 0;
      const write = async () => acked.push((await store.create(`/ha1/${n++}`, 'v')).modRevision);
      try {
        for (let i = 0; i < 10; i++) await write();
        const leader = await etcd.leader();
        const follower = (leader + 1) % 3;
        await etcd.member(follower).kill();
        // A lost follower does not cost the quorum: writes go on, failing over if needed. Only a
        // write already sent on the dead member's connection may fail, its outcome unknown (never
        // retried: it may have reached the leader); the store then leaves that member.
        let unknown = 0;
        for (let i = 0; i < 20; i++) {
          await write().catch((e: unknown) => {
            if (!isStoreError(e, 'unavailable') || !e.outcomeUnknown || !/may or may not have been applied/.test(e.message) || ++unknown > 1) throw e;
          });
        }
        etcd.member(follower).start();
        await etcd.waitHealthy(20_000);

        await etcd.member(leader).kill();
        // Writes in the election window may fail (unavailable); they work again within seconds.
        const killedAt = Date.now();
        await waitFor(async () => {
          await write();
          return true;
        }, 'writes to work again after the leader was killed', 15_000, 100);
        const recoveredMs = Date.now() - killedAt;
        for (let i = 0; i < 10; i++) await write();

        const listed = await store.list({ prefix: '/ha1/' });
        const listedRevs = new Set(listed.items.map((kv) => kv.modRevision));
        for (const r of acked) assert.ok(listedRevs.has(r), `acknowledged write at ${r} is present`);
        const seen = (await reader.next(listed.items.length, 15_000)).map((e) => e.kv.modRevision);
        assert.deepEqual(seen, [...listedRevs].sort((a, b) => a - b), 'the watch saw every committed write once, in order');
        assert.ok(recoveredMs < 15_000);
      } finally {
        ac.abort();
        await allBack();
      }
    });

    it('fails fast without quorum, says why in health, and loses no acknowledged write', async () => {
      const ac = new AbortController();
      const from = await store.currentRevision();
      const reader = new EventReader(store.watch('/ha2/', from, ac.signal));
      try {
        const before = await Promise.all(Array.from({ length: 20 }, (_, i) => store.create(`/ha2/before/${i}`, String(i))));
        const survivor = await etcd.leader();
        const others = [0, 1, 2].filter((i) => i !== survivor);
        await etcd.member(others[0]!).kill();
        await etcd.member(others[1]!).stop();

        // No quorum: every call fails within its deadline with a reason, none hangs.
        let started = Date.now();
        const err = await assertStoreError(store.create('/ha2/during', 'x'), 'unavailable');
        const writeMs = Date.now() - started;
        assert.ok(writeMs < 3_000, `the write failed after ${writeMs} ms`);
        assert.match(err.message, /^etcd: create /);
        await waitFor(async () => {
          const t = Date.now();
          const h = await store.health();
          assert.ok(Date.now() - t < 2_500, `health answered after ${Date.now() - t} ms`);
          return !h.ok && /^etcd: .*(no leader|lost quorum|cannot connect|no answer|timed out)/.test(h.reason ?? '');
        }, 'health to say etcd has no quorum', 10_000);
        const h = await store.health();
        assert.equal(h.ok, false);
        started = Date.now();
        await assertStoreError(store.list({ prefix: '/ha2/' }), 'unavailable');
        assert.ok(Date.now() - started < 3_000);

        for (const i of others) etcd.member(i).start();
        await etcd.waitHealthy(20_000);
        let after: Awaited<ReturnType<EtcdStore['create']>> | undefined;
        await waitFor(async () => {
          after = await store.create('/ha2/after', 'y');
          return true;
        }, 'writes to work again with the quorum back', 15_000, 100);
        assert.deepEqual(await store.health(), { ok: true });

        const listed = await store.list({ prefix: '/ha2/before/' });
        assert.deepEqual(listed.items, [...before].sort((a, b) => (a.key < b.key ? -1 : 1)), 'every acknowledged write survived');
        // The watch neither lost nor repeated anything across the outage.
        const all = (await store.list({ prefix: '/ha2/' })).items;
        const events = await reader.next(all.length, 15_000);
        assert.deepEqual(
          events.map((e) => e.kv.modRevision),
          all.map((kv) => kv.modRevision).sort((a, b) => a - b),
        );
        assert.ok(events.some((e) => e.kv.modRevision === after!.modRevision));
      } finally {
        ac.abort();
        await allBack();
      }
    });

    it('keeps a watch without gaps or duplicates through a rolling restart of every member', async () => {
      const ac = new AbortController();
      const from = await store.currentRevision();
      const events: StoreEvent[] = [];
      const consuming = (async () => {
        for await (const batch of store.watch('/ha3/', from, ac.signal)) events.push(...batch);
      })();
      const acked: number[] = [];
      let writing = true;
      let attempts = 0;
      const writer = (async () => {
        while (writing) {
          try {
            acked.push((await store.create(`/ha3/${attempts++}`, 'v')).modRevision);
          } catch (e) {
            if (!isStoreError(e, 'unavailable')) throw e;
            await new Promise((r) => setTimeout(r, 20)); // pace retries while the cluster recovers
          }
        }
      })();
      try {
        for (const m of etcd.members) {
          const before = acked.length;
          await waitFor(() => acked.length >= before + 5, 'some writes before the restart', 15_000);
          await m.restart();
          await etcd.waitHealthy(20_000);
        }
        const count = acked.length;
        await waitFor(() => acked.length >= count + 5, 'writes after the last restart', 15_000);
        writing = false;
        await writer;
        const committed = (await store.list({ prefix: '/ha3/' })).items.map((kv) => kv.modRevision).sort((a, b) => a - b);
        const committedSet = new Set(committed);
        for (const r of acked) assert.ok(committedSet.has(r), `acknowledged write at ${r} is present`);
        await waitFor(() => events.length >= committed.length, `${committed.length} watch events (have ${events.length})`, 15_000);
        assert.deepEqual(
          events.map((e) => e.kv.modRevision),
          committed,
          'every committed write exactly once, in order',
        );
        assert.ok(store.stats().watchReconnects >= 1, 'the watch stream was actually interrupted');
      } finally {
        writing = false;
        ac.abort();
        await writer.catch(() => undefined);
        await consuming.catch(() => undefined);
        await allBack();
      }
    });

    it('moves on from a hung (SIGSTOPped) member within the deadline', async () => {
      const hung = (await etcd.leader() + 1) % 3;
      // A store that asks the hung member first.
      const order = [hung, (hung + 1) % 3, (hung + 2) % 3].map((i) => etcd.member(i).clientUrl);
      const store = await openEtcdStore({ ...storeOpts(), endpoints: order, randomizeEndpoints: false });
      etcd.member(hung).pause();
      try {
        let failures = 0;
        for (let i = 0; i < 10; i++) {
          const started = Date.now();
          try {
            await store.create(`/ha5/${i}`, 'v');
          } catch (e) {
            // A write that went to the hung member: unknown outcome, reported at the deadline.
            if (!isStoreError(e, 'unavailable')) throw e;
            failures++;
          }
          assert.ok(Date.now() - started < 3_000, `write ${i} took ${Date.now() - started} ms`);
          // Reads fail over by themselves, within the deadline.
          const t = Date.now();
          assert.ok((await store.count('/ha5/')) >= i + 1 - failures);
          assert.ok(Date.now() - t < 3_000, `read took ${Date.now() - t} ms`);
        }
        assert.equal(failures, 1, 'only the first write met the hung member');
      } finally {
        etcd.member(hung).resume();
        await store.close();
        await allBack();
      }
    });

    it('ends a watch with compacted when its history was compacted while it was disconnected', async () => {
      // The watch talks only to a follower; writes and compaction go to the other two members.
      const cut = (await etcd.leader() + 1) % 3;
      const rest = [0, 1, 2].filter((i) => i !== cut).map((i) => etcd.member(i).clientUrl);
      const watcher = await openEtcdStore({ ...storeOpts(), endpoints: [etcd.member(cut).clientUrl] });
      const writer = await openEtcdStore({ ...storeOpts(), endpoints: rest });
      const ac = new AbortController();
      try {
        const a = await writer.create('/ha4/a', '1');
        const it = watcher.watch('/ha4/', a.modRevision - 1, ac.signal)[Symbol.asyncIterator]();
        assert.deepEqual((await withTimeout(it.next(), 'the first event')).value, [{ type: 'create', kv: a }]);
        await etcd.member(cut).kill();
        let kv = a;
        for (let i = 0; i < 5; i++) kv = await writer.update('/ha4/a', String(i), kv.modRevision);
        await writer.compact(kv.modRevision);
        etcd.member(cut).start();
        // The watch re-creates itself on the restarted member. Almost always that member has
        // applied the compaction by then and etcd says 'compacted'. If the watch lands in the few
        // milliseconds between the member learning its leader and applying the missing entries,
        // etcd legitimately streams the updates instead (the watch is then ahead of the compaction).
        try {
          const next = await withTimeout(it.next(), 'the watch to resume', 20_000);
          const events: StoreEvent[] = [...(next.value ?? [])];
          while (events.length < 5) events.push(...((await withTimeout(it.next(), 'more events')).value ?? []));
          assert.deepEqual(
            events.map((e) => e.kv.value),
            ['0', '1', '2', '3', '4'],
            'without the compacted error, every update arrives',
          );
        } catch (e) {
          if (!isStoreError(e, 'compacted')) throw e;
          assert.equal(e.compactRevision, kv.modRevision);
          assert.equal(await watcher.compactRevision(), kv.modRevision);
        }
      } finally {
        ac.abort();
        await watcher.close();
        await writer.close();
        await allBack();
      }
    });
  });
}
