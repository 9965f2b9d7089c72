// `skiff up --detach`: the same `skiff up`, started again in a session of its own (no terminal to
// lose), its output in <data-dir>/logs/up.log. This process shows that output as it comes, and
// returns once the cluster is ready — or with the supervisor's own exit status when it stops first
// (a port taken, a directory in use), its one-line reason already shown.
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { SKIFF_BIN } from '../util/skiff-bin.js';
import { readClusterRun } from './cluster-run.js';

/** Set in the detached supervisor's environment: it runs in the background, and says how to stop it. */
export const DETACHED_ENV = 'SKIFF_UP_DETACHED';

export function isDetachedSupervisor(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[DETACHED_ENV] === '1';
}

/** Starts `skiff up ARGS` (without --detach) in the background and follows it until it is ready; its exit status. */
export async function upDetached(args: readonly string[], dataDir: string, timeoutMs: number): Promise<number> {
  const logDir = join(dataDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const log = join(logDir, 'up.log');
  const fd = openSync(log, 'a');
  let offset = fstatSync(fd).size;
  const child = spawn(process.execPath, [SKIFF_BIN, 'up', ...args], { detached: true, stdio: ['ignore', fd, fd], env: { ...process.env, [DETACHED_ENV]: '1' } });
  closeSync(fd);
  let exited: number | undefined;
  child.on('exit', (code, signal) => (exited = code ?? (signal ? 1 : 0)));
  child.on('error', () => (exited = 127));
  const reader = openSync(log, 'r');
  const show = () => {
    const buf = Buffer.alloc(64 * 1024);
    for (let n; (n = readSync(reader, buf, 0, buf.length, offset)) > 0; offset += n) process.stdout.write(buf.subarray(0, n));
  };
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      show();
      const run = readClusterRun(dataDir);
      if (run?.state === 'ready' && run.supervisor.pid === child.pid) {
        console.log(`the cluster runs in the background (skiff up, pid ${child.pid}; its log: ${log}): skiff status shows it, skiff down --data-dir ${dataDir} stops it`);
        return 0;
      }
      if (exited !== undefined) {
        // Its last words may still be on their way to the file.
        await new Promise((r) => setTimeout(r, 100));
        show();
        return exited === 0 ? 1 : exited;
      }
      if (Date.now() > deadline) {
        console.error(`skiff up: the cluster was not ready within ${Math.round(timeoutMs / 1000)} s; it goes on starting in the background (pid ${child.pid}, log ${log}); skiff down --data-dir ${dataDir} stops it`);
        return 1;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    closeSync(reader);
    // The supervisor outlives this process: nothing here waits for it any more.
    child.unref();
  }
}
