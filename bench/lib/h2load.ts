// HTTP/2 load from nghttp2's h2load (Debian: nghttp2-client): many concurrent streams over few TLS
// connections, the way client-go and kubectl talk to an API server and the way the etcd3 client
// talks to etcd (one gRPC channel). h2load is C: at ten thousand requests a second it costs the
// shared machine a small fraction of what any Node HTTP/2 client would.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpuSecondsOf, percentile, round } from './util.js';

export const H2LOAD = process.env.SKIFF_BENCH_H2LOAD ?? 'h2load';

export function h2loadInstalled(): boolean {
  try {
    execFileSync(H2LOAD, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface H2LoadRun {
  /** https://host:port/path */
  url: string;
  /** Sent as `Authorization: Bearer` (h2load cannot present a client certificate). */
  token: string;
  /** The same JSON body for every request (use metadata.generateName for distinct objects). */
  body: string;
  connections: number;
  /** Concurrent streams per connection. */
  streams: number;
  warmUpMs: number;
  durationMs: number;
  /** Where the body and the per-request log go. */
  workDir: string;
}

/** What a load run measured: completed requests and their latency. */
export interface LoadFigures {
  opsPerSec: number;
  ops: number;
  errors: number;
  firstError?: string;
  p50Ms: number;
  p99Ms: number;
}

export interface H2LoadResult extends LoadFigures {
  /** CPU of h2load itself over the whole run, % of one core. */
  loadGenCpuPct?: number;
}

/** Runs h2load POSTing `body` to `url` and reads its summary and per-request log. */
export async function h2loadPosts(r: H2LoadRun): Promise<H2LoadResult> {
  const bodyFile = join(r.workDir, 'h2load-body.json');
  const logFile = join(r.workDir, 'h2load-requests.log');
  writeFileSync(bodyFile, r.body);
  writeFileSync(logFile, '');
  const args = [
    '-c', String(r.connections),
    '-m', String(r.streams),
    '-D', `${Math.max(1, Math.round(r.durationMs / 1000))}`,
    '--warm-up-time', `${Math.max(1, Math.round(r.warmUpMs / 1000))}`,
    '-d', bodyFile,
    '-H', 'content-type: application/json',
    '-H', 'accept: application/json',
    '-H', `authorization: Bearer ${r.token}`,
    '--log-file', logFile,
    r.url,
  ];
  const started = performance.now();
  const child = spawn(H2LOAD, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  // h2load's CPU: sampled while it runs, since it is gone (and its /proc entry with it) at the end.
  let loadGenCpu = 0;
  const sample = setInterval(() => (loadGenCpu = cpuSecondsOf(child.pid!) ?? loadGenCpu), 200);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  }).finally(() => clearInterval(sample));
  const wallS = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`h2load exited with ${code}: ${out.trim().split('\n').slice(-5).join(' | ')}`);

  const finished = /finished in ([\d.]+)s, ([\d.]+) req\/s/.exec(out);
  const requests = /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(out);
  const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
  if (!finished || !requests || !codes) throw new Error(`unexpected h2load output: ${out.slice(0, 500)}`);
  // One line per request: start (µs since epoch), status, duration (µs). Only the measured part of
  // the run is logged.
  const latencies: number[] = [];
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    const f = line.split('\t');
    if (f.length >= 3 && f[1]!.startsWith('2')) latencies.push(Number(f[2]) / 1000);
  }
  latencies.sort((a, b) => a - b);
  const errors = Number(requests[5]) + Number(requests[6]) + Number(codes[3]) + Number(codes[4]);
  return {
    opsPerSec: Math.round(Number(finished[2])),
    ops: Number(codes[1]),
    errors,
    ...(errors ? { firstError: `${codes[3]} 4xx, ${codes[4]} 5xx, ${requests[5]} failed, ${requests[6]} errored` } : {}),
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    loadGenCpuPct: Math.round((loadGenCpu / wallS) * 100),
  };
}
