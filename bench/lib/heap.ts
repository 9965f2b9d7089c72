// A server's live heap, as opposed to its RSS: V8 keeps the pages it grew (and glibc the memory it
// was given) long after the objects in them died, so RSS says little about whether memory was
// released. A heap snapshot starts with a full garbage collection; asked for one (node's
// --heapsnapshot-signal), the server collects, and its /metrics then report what is still alive.
// SIGWINCH, because SIGUSR2 is `skiff server`'s restart in place and SIGUSR1 starts node's
// inspector; a daemon without a terminal ignores it otherwise.
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiClient } from '../../src/client/rest.js';
import { eventually } from '../../test/support/eventually.js';
import { sleep } from './util.js';

const SNAPSHOT_SIGNAL = 'SIGWINCH';

/** Node flags that let heapUsedAfterGc work: snapshots on SIGWINCH, written into `dir`. */
export function heapSnapshotFlags(dir: string): string[] {
  return [`--heapsnapshot-signal=${SNAPSHOT_SIGNAL}`, `--diagnostic-dir=${dir}`];
}

/** V8's heap in use from a server's /metrics (prom-client's nodejs_heap_size_used_bytes). */
export async function heapUsed(client: ApiClient): Promise<number> {
  const text = String(await client.get('/metrics'));
  const line = text.split('\n').find((l) => l.startsWith('nodejs_heap_size_used_bytes '));
  return line ? Number(line.split(' ')[1]) : NaN;
}

/** Makes the server collect its garbage (by a heap snapshot, then removed) and reads its heap in use. */
export async function heapUsedAfterGc(pid: number, client: ApiClient, dir: string): Promise<number> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, SNAPSHOT_SIGNAL);
  // The snapshot is written after the collection; once its size stops changing it is complete.
  let file = '';
  let size = -1;
  await eventually(async () => {
    file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f)) ?? '';
    if (!file) return false;
    const now = statSync(join(dir, file)).size;
    const stable = now > 0 && now === size;
    size = now;
    if (!stable) await sleep(500);
    return stable;
  }, 120_000, 'the heap snapshot', 100);
  rmSync(join(dir, file), { force: true });
  return heapUsed(client);
}
