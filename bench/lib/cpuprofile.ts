// Reads a V8 .cpuprofile (node --cpu-prof) and ranks functions by self time.
//
//   node .build/bench/bench/lib/cpuprofile.js <file.cpuprofile> [top]
import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Table } from './util.js';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface FunctionSelfTime {
  functionName: string;
  location: string;
  selfMs: number;
  /** Of the non-idle time. */
  selfPct: number;
}

export interface ProfileSummary {
  file: string;
  /** 'main thread' or 'worker thread' (guessed from the functions it ran). */
  thread: string;
  totalMs: number;
  idleMs: number;
  gcMs: number;
  programMs: number;
  /** The window the figures cover, in the profile's microsecond clock (CLOCK_MONOTONIC). */
  window?: { startUs: number; endUs: number };
  top: FunctionSelfTime[];
}

function shortUrl(url: string): string {
  if (!url) return '';
  let u = url.replace(/^file:\/\//, '');
  const nm = u.lastIndexOf('/node_modules/');
  if (nm >= 0) return u.slice(nm + 1);
  for (const marker of ['/dist/src/', '/dist/', '/src/']) {
    const i = u.indexOf(marker);
    if (i >= 0) {
      u = u.slice(i + 1);
      break;
    }
  }
  return u;
}

/**
 * Self time per function (grouped by name + script + line). With `window` (microseconds on the
 * same monotonic clock as process.hrtime), only samples taken inside it count.
 */
export function summarizeCpuProfile(path: string, topN = 10, window?: { startUs: number; endUs: number }): ProfileSummary {
  const prof = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  for (const n of prof.nodes) byId.set(n.id, n);
  const selfUs = new Map<number, number>();
  let t = prof.startTime;
  let total = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    t += prof.timeDeltas[i] ?? 0;
    // A sample's time is the gap to the next sample.
    const dt = prof.timeDeltas[i + 1] ?? 0;
    if (window && (t < window.startUs || t > window.endUs)) continue;
    const id = prof.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
    total += dt;
  }
  const grouped = new Map<string, { functionName: string; location: string; us: number }>();
  let idle = 0;
  let gc = 0;
  let sawWorkerCode = false;
  for (const [id, us] of selfUs) {
    const cf = byId.get(id)!.callFrame;
    const name = cf.functionName || '(anonymous)';
    if (name === '(idle)') idle += us;
    if (name === '(garbage collector)') gc += us;
    if (cf.url.includes('sqlite-worker')) sawWorkerCode = true;
    const location = cf.url ? `${shortUrl(cf.url)}:${cf.lineNumber + 1}` : '';
    const key = `${name}\u0000${location}`;
    const g = grouped.get(key) ?? { functionName: name, location, us: 0 };
    g.us += us;
    grouped.set(key, g);
  }
  const busy = total - idle;
  const top = [...grouped.values()]
    .filter((g) => g.functionName !== '(idle)')
    .sort((a, b) => b.us - a.us)
    .slice(0, topN)
    .map((g) => ({ functionName: g.functionName, location: g.location, selfMs: Math.round(g.us / 100) / 10, selfPct: busy > 0 ? (g.us / busy) * 100 : 0 }));
  return {
    file: basename(path),
    thread: sawWorkerCode ? 'sqlite writer thread' : 'main thread',
    totalMs: Math.round(total / 1000),
    idleMs: Math.round(idle / 1000),
    gcMs: Math.round(gc / 1000),
    programMs: Math.round(busy / 1000),
    ...(window ? { window } : {}),
    top,
  };
}

/** The .cpuprofile files in dir now. */
export function profilesIn(dir: string): Set<string> {
  return new Set(readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')));
}

/** Summaries of the profiles written to dir since `before`, restricted to window when it has samples. */
export function summarizeNewProfiles(dir: string, before: Set<string>, window: { startUs: number; endUs: number } | undefined, topN: number): ProfileSummary[] {
  const files = [...profilesIn(dir)].filter((f) => !before.has(f)).sort();
  if (files.length === 0) process.stderr.write(`no new .cpuprofile in ${dir} (did the server exit cleanly?)\n`);
  return files.map((f) => {
    const s = summarizeCpuProfile(join(dir, f), topN, window);
    // Clocks not comparable (no samples in the window): fall back to the whole profile.
    return s.totalMs > 0 ? s : summarizeCpuProfile(join(dir, f), topN);
  });
}

export function profileTable(p: ProfileSummary, what: string): Table {
  return {
    title: `${what}, ${p.thread}: top ${p.top.length} self time (${p.file})`,
    headers: ['function', 'self ms', 'self %', 'location'],
    rows: p.top.map((f) => [f.functionName, Math.round(f.selfMs).toLocaleString('en-US'), `${f.selfPct.toFixed(1)}%`, f.location]),
    notes: [
      `${p.window ? 'measuring window only' : 'whole server lifetime'}: sampled ${p.totalMs} ms, idle ${p.idleMs} ms, busy ${p.programMs} ms (GC ${p.gcMs} ms); self % is of busy time`,
    ],
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: cpuprofile.js <file.cpuprofile> [top]');
    process.exit(2);
  }
  const s = summarizeCpuProfile(file, Number(process.argv[3] ?? 20));
  console.log(`${s.file} (${s.thread}): ${s.totalMs} ms sampled, idle ${s.idleMs} ms, GC ${s.gcMs} ms`);
  for (const f of s.top) console.log(`${f.selfMs.toFixed(1).padStart(9)} ms ${f.selfPct.toFixed(1).padStart(5)}%  ${f.functionName}  ${f.location}`);
}
