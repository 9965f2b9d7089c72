import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContainerLogRotation } from '../../src/agent/container-log-rotation.js';
import { systemClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/log.js';

describe('container log rotation', () => {
  it("rotates only a container's newest log, once over the limit, keeping maxFiles in all", async () => {
    const root = mkdtempSync(join(tmpdir(), 'skiff-logrot-'));
    try {
      const podDir = (uid: string) => join(root, uid);
      const logs = join(podDir('u1'), 'logs', 'c');
      mkdirSync(logs, { recursive: true });
      writeFileSync(join(logs, '0.log'), 'old instance '.repeat(100));
      const current = join(logs, '1.log');
      const r = new ContainerLogRotation({ state: { podDir, podUids: () => ['u1', 'gone'] }, clock: systemClock, log: silentLogger(), maxBytes: 100, maxFiles: 3, intervalMs: 1000 });
      writeFileSync(current, 'a'.repeat(50));
      assert.equal(await r.rotateOnce(), 0, 'under the limit');
      for (const fill of ['b', 'c', 'd']) {
        appendFileSync(current, fill.repeat(200));
        assert.equal(await r.rotateOnce(), 1);
        assert.equal(readFileSync(current, 'utf8'), '', 'emptied in place');
      }
      assert.deepEqual(readdirSync(logs).sort(), ['0.log', '1.log', '1.log.1', '1.log.2']);
      assert.equal(readFileSync(`${current}.1`, 'utf8'), 'd'.repeat(200), 'the newest rotation first');
      assert.equal(readFileSync(`${current}.2`, 'utf8'), 'c'.repeat(200));
      assert.equal(readFileSync(join(logs, '0.log'), 'utf8').length, 1300, "an earlier instance's log (for --previous) is left alone");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
