// The floor under an API throughput figure: an HTTPS server that shares a skiff server's TLS
// material (so the same kubeconfig and load generator work) and answers a POST with nothing but
// JSON.parse, JSON.stringify and one create in the same Store skiff uses. No authorization,
// validation, managedFields, watch cache or controllers. What it reaches in a run is the ceiling
// an API figure from the same run is to be read against: a target near or above it is out of
// reach for any server that does the work an API server must do.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { progress } from './util.js';

export type FloorStore = { kind: 'sqlite'; path: string } | { kind: 'etcd'; endpoints: string[] };

export interface FloorServerOptions {
  /** A skiff data dir's tls/ folder: server.crt, server.key and ca.crt (client certificates are required). */
  tlsDir: string;
  store: FloorStore;
}

export interface FloorServer {
  pid: number;
  /** https://127.0.0.1:<port> */
  url: string;
  stop(): Promise<void>;
}

/** What the child process receives in its environment. */
export interface FloorConfig extends FloorServerOptions {
  kind: 'skiff-floor-server';
}

/** How long stop() waits after SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 5_000;

export async function startFloorServer(opts: FloorServerOptions): Promise<FloorServer> {
  const config: FloorConfig = { kind: 'skiff-floor-server', ...opts };
  const entry = fileURLToPath(new URL('./floor-server-main.js', import.meta.url));
  // The child exits when this process goes, however it goes (it watches the IPC channel).
  const child: ChildProcess = fork(entry, [], {
    env: { ...process.env, SKIFF_FLOOR_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(killer);
  };
  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('message', (m: unknown) => {
        const port = (m as { port?: unknown }).port;
        if (typeof port === 'number') resolve(port);
        else reject(new Error(`floor server failed: ${(m as { error?: string }).error ?? JSON.stringify(m)}`));
      });
      child.once('exit', (code, signal) => reject(new Error(`floor server exited early (code ${code}, signal ${signal})`)));
    });
  } catch (e) {
    await stop();
    throw e;
  }
  child.on('error', () => {}); // after start, stop() and the exit event tell what happened
  progress(`floor server (${opts.store.kind}) ready on port ${port}`);
  return { pid: child.pid!, url: `https://127.0.0.1:${port}`, stop };
}
