// The clusters of this machine's user: a small registry, one file per cluster under
// $XDG_STATE_HOME/skiff/clusters (default ~/.local/state/skiff/clusters), written by `skiff up` and
// removed by `skiff down --delete`. A cluster directory can be anywhere (`--data-dir`), so scanning
// "known places" would miss most of them; what the registry lists is only where to look — whether
// a cluster runs, and how well, is read from its directory each time (locks, run record), so the
// registry cannot go stale in any way that matters: an entry whose directory is gone is dropped.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import { readClusterName, writeClusterName } from './cluster-dir.js';

export interface RegisteredCluster {
  name: string;
  dataDir: string;
}

/** Where skiff keeps per-user state (XDG Base Directory: $XDG_STATE_HOME, else ~/.local/state). */
export function userStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith('/') ? env.XDG_STATE_HOME : join(env.HOME || homedir(), '.local', 'state');
  return join(base, 'skiff');
}

function registryDir(): string {
  return join(userStateDir(), 'clusters');
}

function readEntry(path: string): RegisteredCluster | undefined {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as Partial<RegisteredCluster>;
    return typeof v.name === 'string' && typeof v.dataDir === 'string' ? { name: v.name, dataDir: v.dataDir } : undefined;
  } catch {
    return undefined;
  }
}

/** Every registered cluster whose directory still exists, by name. */
export function registeredClusters(): RegisteredCluster[] {
  const dir = registryDir();
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
  const out: RegisteredCluster[] = [];
  for (const f of files) {
    const e = readEntry(join(dir, f));
    // Removed by hand (rm -rf) instead of `skiff down --delete`: forget it.
    if (!e || !existsSync(e.dataDir)) rmSync(join(dir, f), { force: true });
    else out.push(e);
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * A name a user reads in `kubectl config get-contexts`: the directory's own name, or its parent's
 * for the default `.skiff` (a project's cluster is named after the project).
 */
export function nameFor(dataDir: string): string {
  const base = basename(dataDir) === '.skiff' ? basename(dirname(dataDir)) : basename(dataDir);
  const name = base.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);
  return name || 'cluster';
}

/**
 * Registers the cluster in `dataDir` and returns its name: the one it was given at its first up,
 * else one made from the directory, made distinct from every other registered cluster's (two
 * clusters must never share a kubeconfig context, cluster or user).
 */
export function registerCluster(dataDir: string): string {
  const dir = resolve(dataDir);
  const others = registeredClusters().filter((c) => c.dataDir !== dir);
  const taken = new Set(others.map((c) => c.name));
  let name = readClusterName(dir);
  if (!name || taken.has(name)) {
    const base = nameFor(dir);
    name = base;
    for (let i = 2; taken.has(name); i++) name = `${base}-${i}`;
    writeClusterName(dir, name);
  }
  mkdirSync(registryDir(), { recursive: true, mode: 0o700 });
  writeFileAtomic(join(registryDir(), `${name}.json`), `${JSON.stringify({ name, dataDir: dir })}\n`, 0o600);
  return name;
}

export function unregisterCluster(dataDir: string): void {
  const dir = resolve(dataDir);
  for (const c of registeredClusters()) if (c.dataDir === dir) rmSync(join(registryDir(), `${c.name}.json`), { force: true });
}
