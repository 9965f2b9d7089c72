// How long the fleet's API calls take, by kind of call (a Lease renewal, a node status update, a
// pod status update, …), as the nodes see them: the figures a scale benchmark reports. Every
// sample since the last reset is kept (a few MB for ten minutes of a 10,000-node fleet), so the
// percentiles are exact, not bucketed.
import { writeFileAtomic } from '../util/write-file-atomic.js';

export interface CallFigures {
  count: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** What a call is, from its method and path: `PUT lease`, `PATCH node status`, `PATCH pod status`, … */
export function callKind(method: string, path: string): string {
  const p = path.split('?')[0]!;
  if (p.includes('/leases/') || p.endsWith('/leases')) return `${method} lease`;
  if (/\/nodes\/[^/]+\/status$/.test(p)) return `${method} node status`;
  if (/\/pods\/[^/]+\/status$/.test(p)) return `${method} pod status`;
  if (p.includes('/events')) return `${method} event`;
  if (/\/nodes(\/|$)/.test(p)) return `${method} node`;
  if (/\/pods(\/|$)/.test(p)) return `${method} pod`;
  return `${method} other`;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export class CallStats {
  private samples = new Map<string, number[]>();
  private errors = new Map<string, number>();
  private since = Date.now();

  /** The ApiClient's metrics hook. */
  request(method: string, url: URL, code: number | undefined, seconds: number): void {
    const kind = callKind(method, url.pathname);
    if (code === undefined || code >= 500 || code === 429) this.errors.set(kind, (this.errors.get(kind) ?? 0) + 1);
    let list = this.samples.get(kind);
    if (!list) this.samples.set(kind, (list = []));
    list.push(seconds * 1000);
  }

  reset(): void {
    this.samples = new Map();
    this.errors = new Map();
    this.since = Date.now();
  }

  figures(): { since: string; calls: Record<string, CallFigures> } {
    const calls: Record<string, CallFigures> = {};
    for (const [kind, list] of this.samples) {
      const sorted = [...list].sort((a, b) => a - b);
      calls[kind] = { count: sorted.length, errors: this.errors.get(kind) ?? 0, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), maxMs: sorted[sorted.length - 1] ?? 0 };
    }
    return { since: new Date(this.since).toISOString(), calls };
  }

  write(file: string): void {
    writeFileAtomic(file, `${JSON.stringify(this.figures(), null, 2)}\n`);
  }
}
