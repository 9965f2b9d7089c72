// A `skiff cloud serve` for end-to-end tests, joined to a TestServer, and the clean-up its
// instances need: they are detached agent processes that outlive the cloud on purpose.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SKIFF_BIN, type TestServer } from './cluster.js';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';

/** Starts the cloud on `port` with its state under `dir`/cloud; instances join `server` with `token` and short agent timings. */
export function startTestCloud(dir: string, port: number, server: TestServer, token: string): ManagedProcess {
  return startProcess({
    name: 'cloud',
    command: process.execPath,
    args: [
      SKIFF_BIN, 'cloud', 'serve', '--data-dir', join(dir, 'cloud'), '--listen', `127.0.0.1:${port}`,
      '--server', `https://127.0.0.1:${server.port!}`, '--ca-file', join(server.dataDir, 'tls', 'ca.crt'), '--termination-grace', '5s',
      '--agent-flag=--node-status-update-frequency=1s', '--agent-flag=--node-lease-duration-seconds=4',
    ],
    env: { ...process.env, SKIFF_TOKEN: token },
    output: join(dir, 'cloud.log'),
  });
}

/** SIGKILLs every instance machine the cloud under `dir` recorded, whatever the test left running. */
export function killInstanceMachines(dir: string): void {
  const state = join(dir, 'cloud', 'cloud.json');
  if (!existsSync(state)) return;
  for (const i of (JSON.parse(readFileSync(state, 'utf8')) as { instances: { machine?: { pid: number } }[] }).instances) {
    try {
      if (i.machine) process.kill(i.machine.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}
