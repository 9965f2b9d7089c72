// Write throughput of the etcd store against raw etcd3 puts on the same etcd, with 1/16/128
// concurrent writers. Our writes are transactions (compare + put) with per-key ordering and
// failover; raw puts are the etcd3 client's plain put, so the ratio is the cost of the Store
// semantics over the cheapest etcd write.
//
//   node dist/bench/etcd-store.js [durationMs] [endpoint,...]
//
// Without endpoints it starts a single etcd member (the test helper) with its data on disk, in
// the temp dir, so every write is fsynced as in production.

import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Etcd3 } from 'etcd3';
import { openEtcdStore } from '../src/store/etcd.js';
import { startEtcd } from '../src/etcd/local-cluster.js';
import { measureWriters, samplePodValue, type WriteLoadResult } from './lib/writers.js';

/** Kept under its old name for the suites that import it. */
export type EtcdBenchResult = WriteLoadResult;

export interface EtcdBenchRow {
  writers: number;
  raw: EtcdBenchResult;
  store: EtcdBenchResult;
}

/** Raw etcd3 puts (no transaction, no compare) with the client's default settings. */
export async function benchRawEtcd(endpoints: string[], concurrency: number, durationMs: number, prefix = '/bench-raw'): Promise<EtcdBenchResult> {
  const client = new Etcd3({ hosts: endpoints });
  try {
    const value = samplePodValue(0);
    return await measureWriters(concurrency, durationMs, (w, n) => client.put(`${prefix}/${concurrency}/registry/pods/w${w}/${n}`).value(value).exec());
  } finally {
    client.close();
  }
}

/** EtcdStore.create of distinct keys. */
export async function benchEtcdStore(endpoints: string[], concurrency: number, durationMs: number, prefix = '/bench-store'): Promise<EtcdBenchResult> {
  const store = await openEtcdStore({ endpoints, compactIntervalMs: 0 });
  try {
    const value = samplePodValue(0);
    return await measureWriters(concurrency, durationMs, (w, n) => store.create(`${prefix}/${concurrency}/registry/pods/w${w}/${n}`, value));
  } finally {
    await store.close();
  }
}

/** Raw puts and store creates at each concurrency, alternating so both see the same machine. */
export async function benchEtcd(endpoints: string[], durationMs: number, writers: number[] = [1, 16, 128]): Promise<EtcdBenchRow[]> {
  const rows: EtcdBenchRow[] = [];
  for (const w of writers) {
    const raw = await benchRawEtcd(endpoints, w, durationMs);
    const store = await benchEtcdStore(endpoints, w, durationMs);
    rows.push({ writers: w, raw, store });
  }
  return rows;
}

async function main(): Promise<void> {
  const durationMs = Number(process.argv[2] ?? 3000);
  const given = process.argv[3]?.split(',').filter(Boolean);
  const etcd = given ? undefined : await startEtcd({ dataRoot: tmpdir(), heartbeatMs: 100, electionTimeoutMs: 1000 });
  const endpoints = given ?? etcd!.endpoints;
  try {
    for (const row of await benchEtcd(endpoints, durationMs)) {
      const { writers, raw, store } = row;
      console.log(
        `${String(writers).padStart(3)} writers: raw put ${raw.writesPerSec}/s (p50 ${raw.p50Ms} ms, p99 ${raw.p99Ms} ms), ` +
          `store create ${store.writesPerSec}/s (p50 ${store.p50Ms} ms, p99 ${store.p99Ms} ms), store/raw ${(store.writesPerSec / Math.max(1, raw.writesPerSec)).toFixed(2)}x`,
      );
    }
  } finally {
    await etcd?.destroy();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
