// What the crash campaign (bench/lib/crash.ts) kills: one server on SQLite, or an HA control
// plane on a 3-member etcd cluster — one API server or one etcd member at a time, and every
// eighth round the whole cluster at once.
import { join } from 'node:path';
import { ApiClient } from '../../src/client/rest.js';
import { TestServer } from '../../test/support/cluster.js';
import { HaCluster, type HaMember } from '../../test/support/ha.js';
import type { EtcdMember } from '../../src/etcd/local-cluster.js';
import type { CrashTarget } from './crash.js';

export interface OwnedTarget extends CrashTarget {
  destroy(): Promise<void>;
}

export async function sqliteTarget(): Promise<OwnedTarget> {
  const server = new TestServer('skiff-crash');
  await server.start();
  const clients: ApiClient[] = [];
  return {
    backend: 'sqlite',
    client() {
      const c = ApiClient.fromKubeconfig(server.kubeconfig, { timeoutMs: 10_000 });
      clients.push(c);
      return c;
    },
    async kill() {
      const proc = server.proc!;
      proc.signal('SIGKILL');
      await proc.exited;
      return 'server on SQLite';
    },
    recover: () => server.start(),
    storeArgs: () => ['--sqlite', join(server.dataDir, 'crash-store.db')],
    async destroy() {
      for (const c of clients) c.close();
      await server.stop();
      server.cleanup();
    },
  };
}

/** By default, every this many rounds the etcd target kills every member and every server at once. */
export const WHOLE_CLUSTER_EVERY = 8;

export async function etcdTarget(o: { wholeClusterEvery?: number } = {}): Promise<OwnedTarget> {
  const wholeClusterEvery = o.wholeClusterEvery ?? WHOLE_CLUSTER_EVERY;
  const cluster = await HaCluster.start({ servers: 2 });
  let downServers: HaMember[] = [];
  let downEtcd: EtcdMember[] = [];
  return {
    backend: 'etcd',
    client: () => cluster.client(),
    async kill(pick, round) {
      if (round % wholeClusterEvery === 0) {
        downServers = [...cluster.members];
        downEtcd = [...cluster.etcd.members];
        await Promise.all([...downServers.map((m) => m.killAndWait()), ...downEtcd.map((m) => m.kill())]);
        return 'whole cluster (every etcd member and API server)';
      }
      if (pick() < 0.4) {
        const m = cluster.members[Math.floor(pick() * cluster.members.length)]!;
        downServers = [m];
        await m.killAndWait();
        return 'one API server';
      }
      const e = cluster.etcd.members[Math.floor(pick() * cluster.etcd.members.length)]!;
      downEtcd = [e];
      await e.kill();
      return 'one etcd member';
    },
    async recover() {
      for (const e of downEtcd) e.start();
      if (downEtcd.length > 0) await cluster.etcd.waitHealthy(60_000);
      for (const m of downServers) m.start();
      await Promise.all(downServers.map((m) => m.waitReady(cluster.caPem, 60_000)));
      downServers = [];
      downEtcd = [];
    },
    storeArgs: () => ['--etcd', cluster.etcd.endpoints.join(',')],
    destroy: () => cluster.destroy(),
  };
}
