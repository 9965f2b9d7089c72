import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DirectoryInUseError, PidLock } from '../../src/util/pid-lock.js';

describe('PidLock', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pid-lock-'));
  const path = join(dir, 'x.lock');

  it('is refused while a live process holds it, naming that process', () => {
    writeFileSync(path, JSON.stringify({ pid: process.ppid }));
    assert.throws(() => PidLock.acquire(path, 'the dir'), (e: unknown) => e instanceof DirectoryInUseError && e.holderPid === process.ppid && /the dir is in use by process \d+/.test(e.message));
  });

  it('takes over a lock left by a process that is gone, or by one whose pid now belongs to another program', () => {
    writeFileSync(path, JSON.stringify({ pid: 2 ** 22 - 3 }));
    const a = PidLock.acquire(path, 'the dir');
    assert.equal((JSON.parse(readFileSync(path, 'utf8')) as { pid: number }).pid, process.pid);
    a.release();
    assert.equal(existsSync(path), false);
    writeFileSync(path, JSON.stringify({ pid: process.ppid, start: '1' }));
    PidLock.acquire(path, 'the dir').release();
    writeFileSync(path, 'half-written');
    PidLock.acquire(path, 'the dir').release();
    // pid 0 or -1 would "signal" a whole group: garbage, not a holder.
    writeFileSync(path, JSON.stringify({ pid: 0 }));
    PidLock.acquire(path, 'the dir').release();
    // A takeover guard left by a process that died mid-takeover does not block for long.
    writeFileSync(path, JSON.stringify({ pid: 2 ** 22 - 3 }));
    writeFileSync(`${path}.takeover`, '');
    assert.throws(() => PidLock.acquire(path, 'the dir'), /the dir is being taken over by another process starting now/);
    utimesSync(`${path}.takeover`, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    PidLock.acquire(path, 'the dir').release();
    rmSync(dir, { recursive: true, force: true });
  });
});
