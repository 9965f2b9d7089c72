// up's Restart=on-failure for API server members: which exits restart, after what delay, and when it gives up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RestartPolicy } from '../../src/cli/restart-policy.js';
import { EXIT_CONFIG } from '../../src/cli/exit-codes.js';

const killed = { code: null, signal: 'SIGKILL' };

test('a crash restarts after 1 s, doubling while it keeps failing quickly, back to 1 s after a healthy run', () => {
  let now = 0;
  const p = new RestartPolicy('on-failure', () => now);
  assert.deepEqual(p.next('server-1', killed, 5_000), { delayMs: 1_000 });
  now += 10_000;
  assert.deepEqual(p.next('server-1', { code: 1, signal: null }, 2_000), { delayMs: 2_000 });
  now += 10_000;
  assert.deepEqual(p.next('server-1', killed, 2_000), { delayMs: 4_000 });
  assert.deepEqual(p.next('server-2', killed, 2_000), { delayMs: 1_000 }, 'each member on its own');
  now += 10_000;
  assert.deepEqual(p.next('server-1', killed, 120_000), { delayMs: 1_000 });
});

test('not restarted: a clean exit, a refusal a restart cannot cure, --restart=no, a sixth failure within 5 minutes', () => {
  let now = 0;
  const p = new RestartPolicy('on-failure', () => now);
  assert.deepEqual(p.next('s', { code: 0, signal: null }, 1_000), { reason: 'it exited cleanly' });
  assert.deepEqual(p.next('s', { code: EXIT_CONFIG, signal: null }, 1_000), { reason: 'its refusal is not one a restart cures' });
  assert.deepEqual(new RestartPolicy('no').next('s', killed, 1_000), { reason: '--restart=no' });
  for (let i = 0; i < 5; i++, now += 1_000) assert.ok('delayMs' in p.next('s', killed, 1_000));
  assert.deepEqual(p.next('s', killed, 1_000), { reason: 'it was restarted 5 times within 5 minutes' });
  now += 5 * 60_000;
  assert.ok('delayMs' in p.next('s', killed, 1_000), 'the window moves on');
});
