// The machines behind the local cloud's instances: one `skiff agent` process each, started detached
// so it outlives the cloud process (as a VM outlives its cloud's API server), found again after a
// restart by pid and start time.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../util/clock.js';
import { processAlive, processStartTime } from '../util/proc.js';

export interface MachineSpec {
  /** The agent's data dir; its log goes to agent.log inside. */
  dir: string;
  nodeName: string;
  providerID: string;
  cpu: string;
  memory: string;
  pods: number;
  /** Upstream kubelet behaviour: never re-create a deleted Node, one server address. */
  classic: boolean;
}

export interface MachineOptions {
  /** The skiff entry point (bin/skiff.js). */
  skiffBin: string;
  servers: string[];
  caFile: string;
  token: string;
  runtime: 'process' | 'simulated';
  /** Extra agent flags for every machine (timings). */
  agentArgs: string[];
}

/** Where an instance's machine keeps its agent's data, under the cloud's data dir. */
export function instanceDir(cloudDataDir: string, instanceId: string): string {
  return join(cloudDataDir, 'instances', instanceId);
}

/** The agent log of a machine whose data dir is `dir`. */
export function machineLog(dir: string): string {
  return join(dir, 'agent.log');
}

export interface MachineHandle {
  pid: number;
  start?: string;
}

export function startMachine(spec: MachineSpec, opts: MachineOptions): MachineHandle {
  mkdirSync(spec.dir, { recursive: true });
  const args = [
    opts.skiffBin,
    'agent',
    ...(spec.classic ? [`--server=${opts.servers[0]!}`, '--endpoint-discovery=false', '--reregister=false'] : opts.servers.map((s) => `--server=${s}`)),
    '--ca-file',
    opts.caFile,
    '--data-dir',
    spec.dir,
    '--node-name',
    spec.nodeName,
    '--provider-id',
    spec.providerID,
    '--cloud-provider',
    'external',
    '--runtime',
    opts.runtime,
    '--cpu',
    spec.cpu,
    '--memory',
    spec.memory,
    '--max-pods',
    String(spec.pods),
    '--kubelet-port',
    '0',
    ...opts.agentArgs,
  ];
  const log = openSync(machineLog(spec.dir), 'a');
  try {
    const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', log, log], env: { ...process.env, SKIFF_TOKEN: opts.token } });
    child.unref();
    const pid = child.pid;
    if (pid === undefined) throw new Error(`could not start the agent of ${spec.nodeName}`);
    const start = processStartTime(pid);
    return start ? { pid, start } : { pid };
  } finally {
    closeSync(log);
  }
}

function machineRuns(h: MachineHandle | undefined): boolean {
  return h !== undefined && processAlive(h.pid, h.start);
}

/**
 * Stops a machine: `signal` (SIGTERM: its agent leaves gracefully; the cluster-stop signal: it
 * keeps its Node and pods), SIGKILL after `graceMs`; 0 = power off at once.
 */
export async function stopMachine(h: MachineHandle, graceMs: number, clock: Clock, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!machineRuns(h)) return;
  try {
    process.kill(h.pid, graceMs > 0 ? signal : 'SIGKILL');
  } catch {
    return;
  }
  const deadline = clock.now() + graceMs;
  while (machineRuns(h) && clock.now() < deadline) await clock.sleep(100);
  if (machineRuns(h)) {
    try {
      process.kill(h.pid, 'SIGKILL');
    } catch {
      /* gone meanwhile */
    }
    for (let i = 0; i < 50 && machineRuns(h); i++) await clock.sleep(100);
  }
}
