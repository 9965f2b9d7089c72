// A directory whose files change all at once, as the kubelet writes configMap, secret, downwardAPI
// and projected volumes: the files live in a timestamped directory, `..data` is a symlink to it,
// and each visible name is a symlink through `..data`. An update writes a new timestamped
// directory and renames a new `..data` over the old one, so a reader in the container sees the
// old set or the new set, never a mix — and the bind mount of the directory shows the change in
// place, without restarting the container.
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface AtomicFile {
  data: Buffer;
  /** Permission bits (e.g. 0o644). */
  mode: number;
}

const DATA = '..data';
const DATA_TMP = '..data_tmp';

/** A relative path a volume item may use: no absolute path, no `..` element, no leading `..`. */
export function validItemPath(p: string): boolean {
  if (!p || p.startsWith('/')) return false;
  return p.split('/').every((part) => part !== '' && part !== '..') && !p.startsWith('..');
}

function same(dir: string, current: string, files: Map<string, AtomicFile>): boolean {
  const listed = new Set<string>();
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(current, rel))) {
      const r = rel ? `${rel}/${name}` : name;
      if (statSync(join(current, r)).isDirectory()) walk(r);
      else listed.add(r);
    }
  };
  walk('');
  if (listed.size !== files.size) return false;
  for (const [path, f] of files) {
    if (!listed.has(path)) return false;
    const full = join(current, path);
    if ((statSync(full).mode & 0o7777) !== f.mode || !readFileSync(full).equals(f.data)) return false;
  }
  return existsSync(join(dir, DATA));
}

/** Makes `dir` hold exactly `files` (relative paths); answers whether anything changed. */
export function writeAtomicDir(dir: string, files: Map<string, AtomicFile>, stamp: string): boolean {
  mkdirSync(dir, { recursive: true });
  const link = join(dir, DATA);
  const old = existsSync(link) ? readlinkSync(link) : undefined;
  if (old && same(dir, join(dir, old), files)) return false;
  const ts = `..${stamp}`;
  const tsDir = join(dir, ts);
  rmSync(tsDir, { recursive: true, force: true });
  mkdirSync(tsDir, { mode: 0o755 });
  for (const [path, f] of files) {
    const full = join(tsDir, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, f.data);
    chmodSync(full, f.mode);
  }
  rmSync(join(dir, DATA_TMP), { force: true });
  symlinkSync(ts, join(dir, DATA_TMP));
  renameSync(join(dir, DATA_TMP), link);
  const visible = new Set([...files.keys()].map((p) => p.split('/')[0]!));
  for (const name of visible) {
    const at = join(dir, name);
    if (!lstatSafe(at)) symlinkSync(join(DATA, name), at);
  }
  for (const name of readdirSync(dir)) {
    if (name.startsWith('..') || visible.has(name)) continue;
    rmSync(join(dir, name), { recursive: true, force: true });
  }
  if (old && old !== ts) rmSync(join(dir, old), { recursive: true, force: true });
  return true;
}

function lstatSafe(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}
