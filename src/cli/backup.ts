// `skiff backup FILE` and `skiff restore FILE`: a consistent online backup of a cluster (the SQLite
// database and the cluster's keys, or an etcd snapshot) and its restore into a fresh data
// directory, resourceVersions continuing above anything clients saw before.
import { errorText } from '../util/error-text.js';
import { existsSync, mkdirSync, openSync, readSync, closeSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { backupServerDir, databasePath, readBackupLayout, restoreServerDir, type BackupLayout } from '../server/backup.js';
import { bumpEtcdRevision, restoreEtcdMembers, snapshotEtcd } from '../store/etcd-backup.js';
import { LOCAL_ETCD_CLUSTER_TOKEN, startEtcd } from '../etcd/local-cluster.js';
import { findBinary } from '../util/find-binary.js';
import { intArg, listArg } from './options.js';
import { readClusterLayout, upEtcdMembers, writeClusterLayout } from './cluster-dir.js';
import { restoreTargetProblem } from './restore-target.js';

/** The server data dir inside `dir`: `dir` itself (skiff server), or <dir>/server (skiff up). */
function serverDirIn(dir: string): { serverDir: string; layout: BackupLayout } | undefined {
  if (existsSync(databasePath(dir))) return { serverDir: dir, layout: 'server' };
  if (existsSync(databasePath(join(dir, 'server')))) return { serverDir: join(dir, 'server'), layout: 'up' };
  return undefined;
}

function isSqliteFile(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(16);
    readSync(fd, head, 0, 16, 0);
    return head.toString('latin1') === 'SQLite format 3\0';
  } finally {
    closeSync(fd);
  }
}

function backupCommand(): Command {
  return new Command('backup')
    .description('write a consistent backup of a running (or stopped) cluster to FILE')
    .argument('<file>', 'where the backup goes')
    .option('--data-dir <dir>', 'the cluster data directory (skiff up) or a server data directory (skiff server)', '.skiff')
    .option('--etcd-endpoints <urls>', 'back up this etcd instead (comma-separated; the first that answers)', listArg, [])
    .action(async (file: string, o: { dataDir: string; etcdEndpoints: string[] }) => {
      const dataDir = resolve(o.dataDir);
      const layout = readClusterLayout(dataDir);
      const endpoints = o.etcdEndpoints.length > 0 ? o.etcdEndpoints : layout?.storage === 'etcd' ? upEtcdMembers(dataDir, layout.etcdMembers).map((m) => `http://${m.host}:${m.clientPort}`) : [];
      if (endpoints.length > 0) {
        let lastError: unknown;
        for (const endpoint of endpoints) {
          try {
            const { revision } = await snapshotEtcd(endpoint, file);
            console.log(`etcd snapshot of revision ${revision} written to ${file} (from ${endpoint}); restoring it needs the cluster's join token, which seals its CA`);
            return;
          } catch (e) {
            lastError = e;
          }
        }
        throw new Error(`no etcd member gave a snapshot: ${errorText(lastError)}`);
      }
      const from = serverDirIn(dataDir);
      if (!from) throw new Error(`${dataDir} holds no cluster (no SQLite database, no etcd): pass --data-dir, or --etcd-endpoints`);
      const { revision, files } = backupServerDir(from.serverDir, file, from.layout);
      const how = from.layout === 'up' ? 'a skiff up directory' : 'a skiff server directory';
      console.log(`backup of revision ${revision} written to ${file} (the SQLite database of ${from.serverDir} and ${files} key and certificate files; from ${how}, which restore lays out again)`);
    });
}

function restoreCommand(): Command {
  return new Command('restore')
    .description('restore a backup into a fresh data directory')
    .argument('<file>', 'a file `skiff backup` wrote')
    .requiredOption('--data-dir <dir>', 'the fresh data directory to restore into')
    .addOption(new Option('--layout <kind>', 'up (the directory `skiff up --data-dir` runs) or server (`skiff server --data-dir`); default: the layout the backup came from (up for an etcd snapshot, or a backup older than the record)').choices(['up', 'server']))
    .option('--bump-revision <n>', 'raise the revision by this much, above anything clients saw (default 1000000 on SQLite; 10000 on etcd, where each is a write)', intArg)
    .option('--etcd-members <n>', 'etcd: members to make (1, or 3 for `up --servers 3`)', intArg, 1)
    .addOption(new Option('--token <token>', 'etcd: the join token of the cluster backed up (it seals the cluster CA)').env('SKIFF_TOKEN'))
    .action(async (file: string, o: { dataDir: string; layout?: BackupLayout; bumpRevision?: number; etcdMembers: number; token?: string }) => {
      if (!existsSync(file)) throw new Error(`${file} does not exist`);
      const dataDir = resolve(o.dataDir);
      // Before anything is written: a running server's directory, or one holding anything already.
      const problem = restoreTargetProblem(dataDir);
      if (problem) throw new Error(problem);
      if (isSqliteFile(file)) {
        const recorded = readBackupLayout(file);
        const layout = o.layout ?? recorded ?? 'up';
        const serverDir = layout === 'up' ? join(dataDir, 'server') : dataDir;
        const { revision, files } = restoreServerDir(file, serverDir, o.bumpRevision ?? 1_000_000);
        if (layout === 'up') writeClusterLayout(dataDir, { storage: 'sqlite', etcdMembers: 0 });
        const start = layout === 'up' ? `skiff up --data-dir ${dataDir}` : `skiff server --data-dir ${dataDir}`;
        const why = o.layout ? '--layout' : recorded ? 'the layout the backup came from' : 'the default for a backup that does not record its layout';
        console.log(`restored into ${serverDir}, a skiff ${layout} directory (${why}; ${files} key and certificate files); resourceVersions continue from ${revision}; start it with ${start}`);
        return;
      }
      // An etcd snapshot: member data directories for `skiff up --storage etcd`.
      if (o.layout === 'server') throw new Error('an etcd snapshot restores into a `skiff up` directory (--layout up); for etcd of your own, use etcdctl snapshot restore');
      if (!o.token) throw new Error("restoring an etcd snapshot needs --token: the cluster's join token, which seals its CA in etcd");
      if (o.etcdMembers !== 1 && o.etcdMembers !== 3) throw new Error('--etcd-members is 1 or 3, as skiff up runs them');
      const etcdctl = findBinary('etcdctl', 'SKIFF_ETCDCTL_BIN', ['/usr/bin/etcdctl']);
      if (!etcdctl) throw new Error("restoring an etcd snapshot needs etcdctl (Debian: apt-get install etcd-client)");
      const members = upEtcdMembers(dataDir, o.etcdMembers);
      mkdirSync(join(dataDir, 'etcd'), { recursive: true, mode: 0o700 });
      await restoreEtcdMembers(etcdctl, file, members.map((m) => ({ name: m.name, peerUrl: `http://${m.host}:${m.peerPort}`, dataDir: m.dataDir })), LOCAL_ETCD_CLUSTER_TOKEN);
      // The restored members, started once where up will run them, to raise and compact the revision.
      const etcd = await startEtcd({ members: o.etcdMembers, dir: join(dataDir, 'etcd'), addresses: members, startTimeoutMs: 30_000 });
      let revision: number;
      try {
        ({ revision } = await bumpEtcdRevision(etcd.endpoints, o.bumpRevision ?? 10_000));
      } finally {
        await etcd.stop();
      }
      writeFileSync(join(dataDir, 'token'), `${o.token}\n`, { mode: 0o600 });
      writeClusterLayout(dataDir, { storage: 'etcd', etcdMembers: o.etcdMembers });
      console.log(`restored ${o.etcdMembers} etcd member${o.etcdMembers === 1 ? '' : 's'} into ${join(dataDir, 'etcd')}; resourceVersions continue from ${revision}; start it with skiff up --storage etcd${o.etcdMembers === 3 ? ' --servers 3' : ''} --data-dir ${dataDir}`);
    });
}

export function backupCommands(): Command[] {
  return [backupCommand(), restoreCommand()];
}
