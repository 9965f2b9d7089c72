// What a `skiff up` directory holds: the storage its cluster lives on, recorded at the first up
// (cluster.json), so a later up with other storage is refused before anything starts — instead of
// servers on an empty etcd beside the SQLite database (a new cluster CA, agents whose credentials
// no longer verify) or the other way round. cluster.json also keeps the cluster's name, chosen at
// its first up (its kubeconfig context is skiff-<name>).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../util/write-file-atomic.js';

export interface ClusterLayout {
  storage: 'sqlite' | 'etcd';
  /** Members of the local etcd cluster (0 on SQLite): 1 for one server, 3 for several. */
  etcdMembers: number;
  /** Moved from a single server's SQLite store (`up --convert`): its first member is that server. */
  convertedFrom?: 'sqlite';
}

const FILE = 'cluster.json';

function readFile(dir: string): Record<string, unknown> {
  try {
    const v = JSON.parse(readFileSync(join(dir, FILE), 'utf8')) as unknown;
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function update(dir: string, fields: Record<string, unknown>): void {
  writeFileAtomic(join(dir, FILE), `${JSON.stringify({ ...readFile(dir), ...fields })}\n`, 0o644);
}

/** The name the cluster in `dir` was given at its first up, if any. */
export function readClusterName(dir: string): string | undefined {
  const name = readFile(dir).name;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

export function writeClusterName(dir: string, name: string): void {
  update(dir, { name });
}

/** Whether `dir` looks like a directory `skiff up` made (what `skiff down --delete` may remove). */
export function isClusterDir(dir: string): boolean {
  return existsSync(join(dir, FILE)) || existsSync(join(dir, 'up.lock')) || (existsSync(join(dir, 'token')) && existsSync(join(dir, 'kubeconfig')));
}

/** The layout recorded in `dir`, or read off what an older up left there; undefined for a new dir. */
export function readClusterLayout(dir: string): ClusterLayout | undefined {
  const v = readFile(dir);
  if ((v.storage === 'sqlite' || v.storage === 'etcd') && typeof v.etcdMembers === 'number') return { storage: v.storage, etcdMembers: v.etcdMembers, ...(v.convertedFrom === 'sqlite' ? { convertedFrom: 'sqlite' as const } : {}) };
  // not recorded: look at what is there
  if (existsSync(join(dir, 'server', 'db', 'state.db'))) return { storage: 'sqlite', etcdMembers: 0 };
  if (existsSync(join(dir, 'etcd'))) return { storage: 'etcd', etcdMembers: readdirSync(join(dir, 'etcd')).filter((n) => /^m\d+$/.test(n)).length || 1 };
  return undefined;
}

export function writeClusterLayout(dir: string, layout: ClusterLayout): void {
  update(dir, { storage: layout.storage, etcdMembers: layout.etcdMembers, convertedFrom: layout.convertedFrom });
}

/** Why `want` cannot run in `dir`, in one line, or undefined when it can. */
export function layoutConflict(dir: string, have: ClusterLayout | undefined, want: ClusterLayout): string | undefined {
  if (!have) return undefined;
  const elsewhere = `or use another --data-dir (or remove ${dir} to start over)`;
  if (have.storage !== want.storage) {
    const what = have.storage === 'sqlite' ? 'the embedded SQLite store' : `etcd (${have.etcdMembers} member${have.etcdMembers === 1 ? '' : 's'})`;
    const convert = have.storage === 'sqlite' ? `, move it to etcd with --servers 3 --storage etcd --convert,` : '';
    return `${dir} holds a cluster on ${what} from an earlier up: start it again with --storage ${have.storage}${convert} ${elsewhere}`;
  }
  if (have.storage === 'etcd' && have.etcdMembers !== want.etcdMembers) {
    const servers = have.etcdMembers === 1 ? '--servers 1' : '--servers 2 or more';
    return `${dir} holds an etcd cluster of ${have.etcdMembers} member${have.etcdMembers === 1 ? '' : 's'} from an earlier up: start it again with ${servers}, ${elsewhere}`;
  }
  return undefined;
}

/** Where `up` runs its etcd members: 127.0.0.1, .2, ... on etcd's usual ports, data in <dir>/etcd/m<i>. */
export function upEtcdMembers(dir: string, members: number): { name: string; host: string; clientPort: number; peerPort: number; dataDir: string }[] {
  return Array.from({ length: members }, (_, i) => ({ name: `m${i}`, host: `127.0.0.${i + 1}`, clientPort: 2379, peerPort: 2380, dataDir: join(dir, 'etcd', `m${i}`, 'data') }));
}

/** Where `up --runtime containerd` keeps the containerd of `node`: <dir>/containerd/<node>. */
export function upContainerdDir(dir: string, node: string): string {
  return join(dir, 'containerd', node);
}

/** The nodes of an `up` directory that have a containerd of their own, by name. */
export function upContainerdNodes(dir: string): string[] {
  try {
    return readdirSync(join(dir, 'containerd'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
  } catch {
    return [];
  }
}
