// The crash campaign's writer over the store (bench/lib/crash.ts): a process that writes through
// skiff's own store layer — no API server in between — and prints one line per acknowledged
// write, so that the campaign can SIGKILL it (or the etcd members under it) at any moment and
// check afterwards that every acknowledged write is there.
//
//   node crash-store-writer.js (--sqlite FILE | --etcd URL,URL,...) --prefix /crash-store/ --first N
//
// Writes, in turn: a new key `<prefix>k<N>` (create), and the counter key `<prefix>counter`
// (compare-and-swap to one more than it holds). Lines on stdout:
//   create <key> <revision> <value>
//   counter <n> <revision>
import { openSqliteStore } from '../../src/store/sqlite.js';
import { openEtcdStore } from '../../src/store/etcd.js';
import { isStoreError, type Store } from '../../src/store/store.js';
import { silentLogger } from '../../src/util/log.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function open(): Promise<Store> {
  const sqlite = arg('--sqlite');
  if (sqlite) return openSqliteStore({ path: sqlite, maintenanceIntervalMs: 0 });
  const etcd = arg('--etcd');
  if (!etcd) throw new Error('--sqlite FILE or --etcd URLS is required');
  return openEtcdStore({ endpoints: etcd.split(','), requestTimeoutMs: 3_000, dialTimeoutMs: 30_000, compactIntervalMs: 0, log: silentLogger() });
}

/** While the store cannot answer (members down), try again soon rather than spin. */
function pause(): Promise<void> {
  return new Promise((r) => setTimeout(r, 100));
}

async function main(): Promise<void> {
  const prefix = arg('--prefix') ?? '/crash-store/';
  let n = Number(arg('--first') ?? 0);
  const store = await open();
  const counterKey = `${prefix}counter`;
  for (;;) {
    const key = `${prefix}k${n}`;
    const value = `v${n}-${Math.random().toString(36).slice(2)}`;
    try {
      const kv = await store.create(key, value);
      process.stdout.write(`create ${key} ${kv.modRevision} ${value}\n`);
    } catch {
      // Unacknowledged: it may or may not be there; the campaign checks only what was acknowledged.
      await pause();
    }
    n++;
    try {
      const cur = await store.get(counterKey);
      const next = cur ? Number(cur.value) + 1 : 1;
      const kv = cur ? await store.update(counterKey, String(next), cur.modRevision) : await store.create(counterKey, String(next));
      process.stdout.write(`counter ${next} ${kv.modRevision}\n`);
    } catch (e) {
      if (!isStoreError(e, 'conflict') && !isStoreError(e, 'exists')) await pause();
    }
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`crash-store-writer: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
