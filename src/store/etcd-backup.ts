// Backups of an etcd store: a snapshot streamed from a member (etcd's own consistent backup), and
// member data directories made from one with etcdctl, as etcd's disaster-recovery guide does.
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { Etcd3 } from 'etcd3';

/** Streams a snapshot of `endpoint`'s keyspace into `dest`; resolves with the revision it holds. */
export async function snapshotEtcd(endpoint: string, dest: string): Promise<{ revision: number }> {
  const client = new Etcd3({ hosts: [endpoint], dialTimeout: 5000 });
  const tmp = `${dest}.tmp-${process.pid}`;
  try {
    const out = createWriteStream(tmp, { mode: 0o600 });
    const stream = await client.maintenance.snapshot();
    let revision = 0;
    await new Promise<void>((resolve, reject) => {
      stream.on('data', (chunk) => {
        if (!revision && chunk.header?.revision) revision = Number(chunk.header.revision);
        out.write(chunk.blob);
      });
      stream.on('error', reject);
      stream.on('end', () => out.end(resolve));
    });
    renameSync(tmp, dest);
    return { revision };
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  } finally {
    client.close();
  }
}

export interface RestoredMember {
  name: string;
  peerUrl: string;
  dataDir: string;
}

/** Makes each member's data directory from the snapshot (etcdctl snapshot restore), one cluster of them. */
export async function restoreEtcdMembers(etcdctl: string, snapshot: string, members: RestoredMember[], clusterToken: string): Promise<void> {
  const initialCluster = members.map((m) => `${m.name}=${m.peerUrl}`).join(',');
  for (const m of members) {
    await new Promise<void>((resolve, reject) =>
      execFile(
        etcdctl,
        ['snapshot', 'restore', snapshot, '--name', m.name, '--data-dir', m.dataDir, '--initial-cluster', initialCluster, '--initial-cluster-token', clusterToken, '--initial-advertise-peer-urls', m.peerUrl],
        { env: { ...process.env, ETCDCTL_API: '3' } },
        (err, _out, stderr) => (err ? reject(new Error(`etcdctl snapshot restore: ${stderr.trim() || err.message}`)) : resolve()),
      ),
    );
  }
}

/**
 * Raises a restored etcd's revision by `by` writes (etcd 3.4's etcdctl cannot bump it as 3.5's
 * etcdutl --bump-revision does) and compacts at the new revision, so resourceVersions after the
 * restore are above those clients saw before it, and their old watches are told to relist.
 */
export async function bumpEtcdRevision(endpoints: string[], by: number): Promise<{ revision: number }> {
  const client = new Etcd3({ hosts: endpoints, dialTimeout: 5000 });
  const key = '/skiff/restore-revision-bump';
  try {
    let left = by;
    const writer = async () => {
      while (left-- > 0) await client.put(key).value('');
    };
    await Promise.all(Array.from({ length: 64 }, writer));
    await client.delete().key(key);
    const revision = Number((await client.get(key).exec()).header.revision);
    await client.kv.compact({ revision, physical: true });
    return { revision };
  } finally {
    client.close();
  }
}
