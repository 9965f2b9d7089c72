// Stopping a whole cluster (N6a): what `skiff down` does, and what `skiff up` does for the
// processes a user started beside it. The supervisor, when it runs, stops what it started in its
// order (nodes, then servers, then etcd); whatever still runs after it — a process started beside
// the cluster, or everything, when the supervisor was killed outright — is stopped here in the
// same order: each node told that the cluster stops (its Node and pods kept), then the rest.
import { processAlive } from '../util/proc.js';
import { waitFor } from '../util/wait-for.js';
import { describeProcesses, liveClusterProcesses, type RunProcess } from './cluster-run.js';
import { CLUSTER_STOP_SIGNAL } from '../util/stop-signals.js';

export interface StopOptions {
  /** One line per step, for the user. */
  say: (line: string) => void;
  /** How long each step may take before what is left is killed. */
  graceMs?: number;
  /** Processes not to touch (the caller itself). */
  except?: readonly number[];
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* already gone */
  }
}

/** Whether `done` came to hold within `ms`. */
function until(done: () => boolean, ms: number): Promise<boolean> {
  return waitFor(done, 'the processes to stop', ms, 100).then(
    () => true,
    () => false,
  );
}

/** Signals every process, waits for all to end, and kills what is left after graceMs. */
async function stopAll(ps: readonly RunProcess[], sig: NodeJS.Signals, graceMs: number, say: (line: string) => void): Promise<void> {
  if (ps.length === 0) return;
  for (const p of ps) signal(p.pid, sig);
  const gone = () => ps.every((p) => !processAlive(p.pid, p.start));
  if (await until(gone, graceMs)) return;
  const left = ps.filter((p) => processAlive(p.pid, p.start));
  say(`${describeProcesses(left)} did not stop within ${Math.round(graceMs / 1000)} s; killing`);
  for (const p of left) signal(p.pid, 'SIGKILL');
  await until(gone, 5_000);
}

/** Stops every process of the cluster in `dir`; resolves once none is left. */
export async function stopCluster(dir: string, o: StopOptions): Promise<void> {
  const graceMs = o.graceMs ?? 90_000;
  const except = new Set(o.except ?? []);
  const live = () => liveClusterProcesses(dir).filter((p) => !except.has(p.pid));
  const supervisor = live().find((p) => p.role === 'up');
  if (supervisor) {
    // `skiff up` stops what it started, in its order, as on Ctrl-C.
    o.say(`stopping the cluster in ${dir} (skiff up, pid ${supervisor.pid}); its nodes and pods are kept for the next start`);
    await stopAll([supervisor], 'SIGTERM', graceMs, o.say);
  }
  const rest = live().filter((p) => p.role !== 'up');
  if (rest.length === 0) return;
  if (!supervisor) o.say(`stopping what runs of the cluster in ${dir} without its skiff up: ${describeProcesses(rest)}`);
  // Nodes first (they need nothing of the servers to switch off), then servers (each its own node
  // too), then what the servers stand on.
  await stopAll(rest.filter((p) => p.role === 'agent' || p.role === 'sim'), CLUSTER_STOP_SIGNAL, graceMs, o.say);
  await stopAll(rest.filter((p) => p.role === 'server'), CLUSTER_STOP_SIGNAL, graceMs, o.say);
  await stopAll(rest.filter((p) => p.role === 'cloud' || p.role === 'haproxy' || p.role === 'etcd'), 'SIGTERM', graceMs, o.say);
}
