// `skiff dashboard` in tests: started as its own process, and its live stream read as the page
// reads it (a snapshot, then patches), for tests that need no browser.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import type { NodeTile, Patch, Snapshot, ViewMessage } from '../../src/dashboard/view.js';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import { SKIFF_BIN, eventually } from './cluster.js';

/** Starts `skiff dashboard` (by default on a free port); resolves with the process and the URL it printed in `logFile`, a new file. */
export async function startDashboard(kubeconfig: string, logFile: string, listen = '127.0.0.1:0'): Promise<{ proc: ManagedProcess; url: string }> {
  const proc = startProcess({ name: 'dashboard', command: process.execPath, args: [SKIFF_BIN, 'dashboard', '--kubeconfig', kubeconfig, '--listen', listen, '--log-format', 'json'], output: logFile });
  let url = '';
  await eventually(() => {
    const m = existsSync(logFile) ? /dashboard: (http:\/\/\S+)/.exec(readFileSync(logFile, 'utf8')) : null;
    if (m) url = m[1]!;
    return Boolean(m) || proc.child.exitCode !== null;
  }, 20_000, 'the dashboard printing its URL');
  assert.ok(url, `the dashboard did not start:\n${readFileSync(logFile, 'utf8')}`);
  return { proc, url };
}

/** The dashboard's view as a page would hold it, kept up to date from its stream. */
export class DashboardStream {
  readonly nodes = new Map<string, NodeTile>();
  snapshot?: Snapshot;
  readonly patches: Patch[] = [];
  private readonly ac = new AbortController();

  constructor(url: string) {
    const req = request(new URL('stream', url), { signal: this.ac.signal }, (res) => {
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let end: number;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const data = frame.split('\n').find((l) => l.startsWith('data: '));
          if (data) this.apply(JSON.parse(data.slice(6)) as ViewMessage);
        }
      });
      res.on('error', () => {});
    });
    req.on('error', () => {});
    req.end();
  }

  private apply(m: ViewMessage): void {
    if (m.type === 'snapshot') {
      this.snapshot = m;
      this.nodes.clear();
      for (const n of m.nodes) this.nodes.set(n.name, n);
      return;
    }
    this.patches.push(m);
    for (const n of m.nodes ?? []) this.nodes.set(n.name, n);
    for (const name of m.removed ?? []) this.nodes.delete(name);
  }

  close(): void {
    this.ac.abort();
  }
}
