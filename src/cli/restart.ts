// `skiff restart NAME`: one API server member of a `skiff up` cluster started again in place, by
// name, as `systemctl restart` does for an installed one. The member's `skiff up` does the work,
// so the member stays under its supervision: the command leaves a request in the cluster's
// directory and signals the supervisor (as supervisor-request.ts does for bigger changes), which restarts the member in place (its node and pods
// kept) if it runs, or starts it if it stayed down (--restart=no, or it kept failing).
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { waitForReady } from '../client/wait.js';
import { errorText } from '../util/error-text.js';
import { processAlive } from '../util/proc.js';
import { isClusterDir } from './cluster-dir.js';
import { liveClusterProcesses, readClusterRun } from './cluster-run.js';
import { SUPERVISOR_REQUEST_SIGNAL } from './supervisor-request.js';


const requestsDir = (dir: string) => join(dir, 'restart-requests');

/** The members asked to restart since the last call; each request is taken once. */
export function takeRestartRequests(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(requestsDir(dir));
  } catch {
    return [];
  }
  for (const n of names) rmSync(join(requestsDir(dir), n), { force: true });
  return names;
}

/** The API server members of the cluster in `dir`: `server` alone, or server-1..N. */
function memberNames(dir: string): string[] {
  return readdirSync(dir)
    .filter((e) => /^server(-\d+)?$/.test(e))
    .sort((a, b) => Number(a.slice(7) || 0) - Number(b.slice(7) || 0));
}

const memberPid = (dir: string, name: string) => liveClusterProcesses(dir).find((p) => p.role === 'server' && p.name === name)?.pid;

export function restartCommand(): Command {
  return new Command('restart')
    .description('start one API server member of a `skiff up` cluster again in place (its node and pods kept), by name: server-2')
    .argument('<member>', 'the member: server-1, server-2, ... (server for a single-server cluster); skiff status lists them')
    .option('--data-dir <dir>', 'the cluster data directory', '.skiff')
    .option('--timeout <seconds>', 'how long to wait for the member to serve again', (v: string) => Number(v), 60)
    .action(async (name: string, o: { dataDir: string; timeout: number }) => {
      const dir = resolve(o.dataDir);
      if (!existsSync(dir) || !isClusterDir(dir)) throw new Error(`no cluster in ${dir} (no cluster.json): pass --data-dir, or run it where skiff up ran`);
      const members = memberNames(dir);
      if (!members.includes(name)) throw new Error(`the cluster in ${dir} has no API server member ${name}; its members: ${members.join(', ') || 'none'}`);
      const run = readClusterRun(dir);
      if (!run || !processAlive(run.supervisor.pid, run.supervisor.start)) throw new Error(`the cluster in ${dir} is not running under skiff up: skiff up --data-dir ${dir} starts it, members and all`);
      const before = memberPid(dir, name);
      mkdirSync(requestsDir(dir), { recursive: true });
      writeFileSync(join(requestsDir(dir), name), '');
      process.kill(run.supervisor.pid, SUPERVISOR_REQUEST_SIGNAL);
      console.log(before ? `restarting ${name} (pid ${before}) in place` : `starting ${name}, which is down`);
      const t0 = Date.now();
      const deadline = t0 + o.timeout * 1000;
      for (;;) {
        const now = memberPid(dir, name);
        if (now !== undefined && now !== before) break;
        if (Date.now() > deadline) throw new Error(`${name} did not start again within ${o.timeout} s; see ${join(dir, 'logs', `${name}.log`)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const url = run.apiServers[Math.max(0, members.indexOf(name))];
      try {
        await waitForReady(join(dir, name, 'kubeconfig'), Math.max(1000, deadline - Date.now()), undefined, url);
      } catch (e) {
        throw new Error(`${name} started again (pid ${memberPid(dir, name) ?? '?'}) but does not serve yet: ${errorText(e)}; see ${join(dir, 'logs', `${name}.log`)}`);
      }
      console.log(`${name} serves again (pid ${memberPid(dir, name) ?? '?'}${url ? `, ${url}` : ''}) after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    });
}
