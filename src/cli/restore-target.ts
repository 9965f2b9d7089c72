// Where a restore may write: a fresh directory, never one a running process uses. A restore beside
// a live server's data would be invisible to it (it holds its database open) and overwritten or
// mixed with what it writes next, and a restore into a used directory leaves two clusters'
// files side by side; so both are refused before anything is written, in one line.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { lockHolder } from '../util/pid-lock.js';

/** Lock files of skiff's processes (server.lock, up.lock, agent.lock, …) in `dir` and one level down. */
function lockFiles(dir: string): string[] {
  const out: string[] = [];
  const scan = (d: string, depth: number): void => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.isFile() && e.name.endsWith('.lock')) out.push(join(d, e.name));
      else if (e.isDirectory() && depth > 0) scan(join(d, e.name), depth - 1);
    }
  };
  scan(dir, 1);
  return out;
}

/** Why `dir` cannot take a restore, in one line; undefined when it is fresh (absent or empty). */
export function restoreTargetProblem(dir: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  for (const lock of lockFiles(dir)) {
    const pid = lockHolder(lock);
    if (pid !== undefined) {
      return `${dir} is in use by a running process (pid ${pid}, lock ${lock}): a restore there would be lost under it; stop it (skiff down, or stop that server), then restore into a fresh data directory`;
    }
  }
  const entries = readdirSync(dir);
  if (entries.length > 0) {
    const shown = entries.slice(0, 4).join(', ') + (entries.length > 4 ? `, … (${entries.length} entries)` : '');
    return `${dir} is not empty (it holds ${shown}): restore into a fresh data directory (a new or empty one)`;
  }
  return undefined;
}
