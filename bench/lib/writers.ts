// Closed-loop write load: N writers, each awaiting its previous write, for a fixed time. Used by
// the store benches (SQLite, etcd) and the HA bench, so their figures are computed one way.
import { performance } from 'node:perf_hooks';
import { round } from './util.js';

export interface WriteLoadResult {
  writesPerSec: number;
  writes: number;
  p50Ms: number;
  p99Ms: number;
}

/** A pod-sized object, so store figures include realistic value sizes. */
export function samplePodValue(n: number): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `bench-${n}`, namespace: 'default', labels: { app: 'bench' }, uid: `00000000-0000-0000-0000-${String(n).padStart(12, '0')}` },
    spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'registry.example/app:1.0', resources: { requests: { cpu: '100m', memory: '64Mi' } } }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  });
}

/**
 * Runs `concurrency` writers for durationMs; write(writer, seq) gets the writer's index and a
 * sequence number unique across writers (for distinct keys).
 */
export async function measureWriters(concurrency: number, durationMs: number, write: (writer: number, seq: number) => Promise<unknown>): Promise<WriteLoadResult> {
  const latencies: number[] = [];
  const start = performance.now();
  const end = start + durationMs;
  let seq = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      while (performance.now() < end) {
        const t = performance.now();
        await write(w, seq++);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const elapsed = performance.now() - start;
  latencies.sort((a, b) => a - b);
  return {
    writesPerSec: Math.round((latencies.length / elapsed) * 1000),
    writes: latencies.length,
    p50Ms: round(latencies[Math.floor(latencies.length * 0.5)] ?? 0),
    p99Ms: round(latencies[Math.floor(latencies.length * 0.99)] ?? 0),
  };
}
