// Real processes the suites measure against: a `skiff server` (this build's skiff, see
// skiffEntry()) and an etcd.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { ApiClient } from '../../src/client/rest.js';
import { waitForReady } from '../../src/client/wait.js';
import { SERVER_NODE_FLAGS } from '../../src/util/skiff-bin.js';
import { freePort, makeTempDir, progress, projectRoot, removeTempDir, skiffEntry, sleep, startChild, type ManagedChild } from './util.js';

export interface SkiffServer {
  pid: number;
  dataDir: string;
  kubeconfig: string;
  child: ManagedChild;
  /** A client with the admin kubeconfig (its agent allows 64 sockets). */
  client(timeoutMs?: number): ApiClient;
  /** Stops the server (SIGTERM, so --cpu-prof profiles are written) and removes its data dir. */
  stop(): Promise<void>;
}

export interface SkiffServerOptions {
  /** Extra node flags for the server process (e.g. --cpu-prof). */
  nodeArgs?: string[];
  /** Extra `skiff server` flags. */
  serverArgs?: string[];
  /** Keep the data dir on stop (e.g. to collect a profile written there). */
  keepDataDir?: boolean;
}

/** Creates namespace `name` on the server (the namespace a suite writes its objects into). */
export async function createNamespace(server: SkiffServer, name: string): Promise<void> {
  const admin = server.client();
  try {
    await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  } finally {
    admin.close();
  }
}

export async function startSkiffServer(opts: SkiffServerOptions = {}): Promise<SkiffServer> {
  const bin = skiffEntry();
  if (!existsSync(bin)) throw new Error(`${bin} is missing: build first (npx tsc -p ${projectRoot()})`);
  const dataDir = makeTempDir('skiff-bench-server-');
  const kubeconfig = join(dataDir, 'kubeconfig');
  const child = startChild(
    'skiff server',
    process.execPath,
    // The server as `skiff up` and a systemd unit start it.
    [...SERVER_NODE_FLAGS, ...(opts.nodeArgs ?? []), bin, 'server', '--listen', '127.0.0.1:0', '--data-dir', dataDir, ...(opts.serverArgs ?? [])],
    join(dataDir, 'server.log'),
  );
  const server: SkiffServer = {
    pid: child.pid,
    dataDir,
    kubeconfig,
    child,
    client: (timeoutMs = 30_000) => ApiClient.fromKubeconfig(kubeconfig, { timeoutMs }),
    async stop() {
      await child.stop(15_000);
      if (!opts.keepDataDir) removeTempDir(dataDir);
    },
  };
  try {
    const exited = child.exited.then(({ code, signal }) => {
      throw new Error(`skiff server exited early (code ${code}, signal ${signal}):\n${child.logTail()}`);
    });
    exited.catch(() => {});
    await Promise.race([waitForReady(kubeconfig, 60_000), exited]);
  } catch (e) {
    await server.stop();
    throw e;
  }
  progress(`skiff server ready (pid ${child.pid})`);
  return server;
}

export interface EtcdServer {
  pid: number;
  endpoint: string;
  client(): Etcd3;
  stop(): Promise<void>;
}

export const ETCD_BINARY = process.env.SKIFF_BENCH_ETCD ?? '/usr/bin/etcd';

export function etcdInstalled(): boolean {
  return existsSync(ETCD_BINARY);
}

/** A single-member etcd on 127.0.0.1 with free ports and a temp data dir; resolves once healthy. */
export async function startEtcd(): Promise<EtcdServer> {
  const dir = makeTempDir('skiff-bench-etcd-');
  const clientPort = await freePort();
  const peerPort = await freePort();
  const endpoint = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const child = startChild(
    'etcd',
    ETCD_BINARY,
    [
      '--name', 'bench',
      '--data-dir', join(dir, 'data'),
      '--listen-client-urls', endpoint,
      '--advertise-client-urls', endpoint,
      '--listen-peer-urls', peer,
      '--initial-advertise-peer-urls', peer,
      '--initial-cluster', `bench=${peer}`,
      '--initial-cluster-state', 'new',
      '--quota-backend-bytes', String(8 * 1024 * 1024 * 1024),
      '--log-level', 'warn',
      '--logger', 'zap',
    ],
    join(dir, 'etcd.log'),
  );
  const server: EtcdServer = {
    pid: child.pid,
    endpoint,
    client: () => new Etcd3({ hosts: endpoint }),
    async stop() {
      await child.stop(10_000);
      removeTempDir(dir);
    },
  };
  try {
    const deadline = Date.now() + 30_000;
    let last = '';
    for (;;) {
      if (!child.alive()) throw new Error(`etcd exited early:\n${child.logTail()}`);
      try {
        const res = await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(1000) });
        const body = (await res.json()) as { health?: string };
        if (body.health === 'true') break;
        last = JSON.stringify(body);
      } catch (e) {
        last = (e as Error).message;
      }
      if (Date.now() > deadline) throw new Error(`etcd not healthy after 30 s: ${last}\n${child.logTail()}`);
      await sleep(100);
    }
  } catch (e) {
    await server.stop();
    throw e;
  }
  progress(`etcd ready (pid ${child.pid}, ${endpoint})`);
  return server;
}
