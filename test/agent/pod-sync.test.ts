// The agent's pod sync against an in-memory API whose watch lags behind its writes, as a busy
// server's does: each status is written once, not again for every stale copy of the pod the
// watch still brings (the echo of its own earlier write included); a status someone else changed
// afterwards is written back.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/kinds/pod.js';
import { PodSync } from '../../src/agent/pod-sync.js';
import { SimulatedRuntime } from '../../src/agent/runtimes/simulated.js';
import { MemoryPodState } from '../../src/sim/memory-pod-state.js';
import { FakeClock } from '../../src/util/clock.js';
import { eventually } from '../support/eventually.js';
import { FakeApi, captureLogger, settle } from './fake-api.js';

const PATH = '/api/v1/namespaces/default/pods/web';

function statusWrites(api: FakeApi): { phase?: string }[] {
  return api.calls.filter((c) => c.method === 'PATCH' && c.path === `${PATH}/status`).map((c) => (c.body as { status: { phase?: string } }).status);
}

function createdPod(api: FakeApi): Pod {
  return api.put(PATH, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }] } }) as Pod;
}

/** A node's pod sync whose watch shows `seen()`, run until it has written the pod Running. */
async function startedPod(api: FakeApi, clock: FakeClock, seen: () => Pod): Promise<{ sync: PodSync; state: MemoryPodState; stop(): Promise<void> }> {
  const state = new MemoryPodState('/nonexistent');
  const sync = new PodSync({
    api,
    clock,
    log: captureLogger().log,
    nodeName: 'n1',
    nodeIP: '127.0.0.1',
    runtime: new SimulatedRuntime({ clock, startDelayMs: 0, stopDelayMs: 0 }),
    state,
    concurrency: 1,
  });
  sync.setDesired(seen, () => ['default/web']);
  const abort = new AbortController();
  const running = sync.run(abort.signal);
  const stop = async () => {
    abort.abort();
    await running;
  };
  try {
    sync.markSynced();
    await eventually(async () => {
      await clock.advance(100);
      await settle();
      return statusWrites(api).some((s) => s.phase === 'Running');
    }, 10_000, 'the pod written Running');
  } catch (e) {
    await stop();
    throw e;
  }
  return { sync, state, stop };
}

describe('pod sync status writes', () => {
  it('writes each status once while the watch lags, and again when someone else changed it', async () => {
    const clock = new FakeClock();
    const api = new FakeApi();
    // What the node's watch has delivered so far: the pod as created, until told otherwise.
    let seen = createdPod(api);
    const { sync, stop } = await startedPod(api, clock, () => seen);
    try {
      const writes = statusWrites(api).length;
      // The watch still brings the pod as created, several times (other fields changing): nothing new is written.
      for (let i = 0; i < 5; i++) {
        sync.podChanged(seen);
        await settle();
        await clock.advance(300);
      }
      assert.equal(statusWrites(api).length, writes, 'a stale copy of the pod made the agent write its status again');

      // The watch catches up with the agent's own write: still nothing to write.
      seen = (await api.get(PATH)) as Pod;
      sync.podChanged(seen);
      await settle();
      assert.equal(statusWrites(api).length, writes);

      // Someone else puts the pod back to Pending and the watch brings that: the agent writes
      // Running again at once (well within the 10 s it gives its own echo to arrive).
      const revertedByOthers = async (what: string) => {
        await api.patch(`${PATH}/status`, { status: { phase: 'Pending' } });
        const before = statusWrites(api).length;
        const since = clock.now();
        seen = (await api.get(PATH)) as Pod;
        sync.podChanged(seen);
        await eventually(async () => {
          await clock.advance(100);
          await settle();
          return statusWrites(api).length === before + 1;
        }, 10_000, what);
        assert.equal(statusWrites(api).at(-1)?.phase, 'Running');
        assert.ok(clock.now() - since < 5_000, `${what} ${clock.now() - since} ms later: the agent waited for an echo it had been shown past`);
      };
      await revertedByOthers('Running written again');
      // Once more, but the watch never brought the agent's last write (a watch may coalesce): the
      // pod moved past the one that write was computed from, which is enough.
      await revertedByOthers('Running written a third time');
    } finally {
      await stop();
    }
  });

  it('does not write a status again when the watch brings the echo of its own earlier write', async () => {
    const clock = new FakeClock();
    const api = new FakeApi();
    // Every pod the agent's status writes produced, as the watch will bring them, late.
    const written: Pod[] = [];
    const patch = api.patch.bind(api);
    api.patch = async <T>(path: string, body: unknown): Promise<T> => {
      const out = await patch<T>(path, body);
      written.push(structuredClone(out) as Pod);
      return out;
    };
    let seen = createdPod(api);
    const { sync, stop } = await startedPod(api, clock, () => seen);
    try {
      const writes = statusWrites(api).length;
      assert.ok(written.length >= 2 && written[0]!.status?.phase === 'Pending', 'a starting pod is written waiting, then running');
      // The watch catches up one write at a time: first the echo of the waiting status, which is
      // already out of date, then the running one. Neither is a reason to write.
      for (const echo of written.slice(0, -1)) {
        seen = echo;
        sync.podChanged(seen);
        await settle();
        await clock.advance(300);
        await settle();
      }
      assert.equal(statusWrites(api).length, writes, 'the echo of an earlier write made the agent write its status again');
      seen = written.at(-1)!;
      sync.podChanged(seen);
      await settle();
      assert.equal(statusWrites(api).length, writes);
    } finally {
      await stop();
    }
  });
});

describe('pod sync when the whole cluster stops (N6a)', () => {
  it('stops the containers without a word to the API, and keeps the pod for the next start', async () => {
    const clock = new FakeClock();
    const api = new FakeApi();
    const pod = createdPod(api);
    const { sync, state, stop } = await startedPod(api, clock, () => pod);
    const uid = pod.metadata.uid!;
    await stop();
    const writes = api.calls.length;
    await sync.powerOff();
    await settle();
    assert.equal(api.calls.length, writes, 'nothing written: the pod stays Running in the API for the next start');
    const kept = state.readPodState<{ terminated?: boolean; containers: Record<string, { current?: unknown }> }>(uid);
    assert.equal(kept?.terminated, undefined, 'not terminated: the next agent starts it again');
    assert.ok(kept?.containers.c?.current, 'the instance that ran is still recorded, so the next agent finds it gone');
  });
});
