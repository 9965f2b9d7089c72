import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RuntimeHealth } from '../../src/agent/runtime-health.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/log.js';

describe('runtime health', () => {
  it('makes the node NotReady with the runtime’s words while it cannot run pods, ready again when it can; reports each change once', async () => {
    const clock = new FakeClock();
    let answer: string | Error | undefined = 'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized';
    let changes = 0;
    const h = new RuntimeHealth({
      clock,
      log: silentLogger(),
      check: async () => {
        if (answer instanceof Error) throw answer;
        return answer;
      },
      changed: () => changes++,
    });
    const stop = new AbortController();
    const running = h.run(stop.signal);
    await clock.advance(0);
    assert.deepEqual(h.readiness, { ready: false, reason: 'KubeletNotReady', message: answer });
    await clock.advance(15_000);
    assert.equal(changes, 1, 'the same answer is no change');
    answer = undefined;
    await clock.advance(5_000);
    assert.equal(h.readiness, undefined);
    answer = new Error('connect ENOENT /run/containerd/containerd.sock');
    await clock.advance(5_000);
    const now = h.readiness as { message: string } | undefined;
    assert.match(now?.message ?? '', /^container runtime is down: connect ENOENT/);
    assert.equal(changes, 3);
    stop.abort();
    await running;
  });
});
