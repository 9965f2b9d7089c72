// The release before this one, built beside the checkout, for upgrade tests: the newest tag before
// HEAD if there is one, else the previous commit. Its source comes from git (archive), its
// dependencies from this checkout when the lockfile is the same (else npm ci), and only its src/
// is compiled, so it takes seconds.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { SKIFF_BIN } from './cluster.js';

export interface PreviousBuild {
  /** The tag or commit built. */
  rev: string;
  /** Its bin/skiff.js. */
  bin: string;
  dir: string;
}

const ROOT = dirname(dirname(SKIFF_BIN));

function git(args: string[]): string {
  return execFileSync('git', ['-C', ROOT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }).toString().trim();
}

/** The previous release, built; or why there is none here (a shallow clone, no git). */
export function buildPreviousRelease(): PreviousBuild | { unavailable: string } {
  let rev: string;
  try {
    git(['rev-parse', '--verify', 'HEAD~1']);
  } catch {
    return { unavailable: 'this checkout has no commit before HEAD (a shallow clone, or no git)' };
  }
  try {
    rev = git(['describe', '--tags', '--abbrev=0', 'HEAD~1']);
  } catch {
    rev = git(['rev-parse', '--short', 'HEAD~1']);
  }
  const dir = mkdtempSync(join(tmpdir(), `skiff-previous-${rev}-`));
  execFileSync('sh', ['-c', `git -C "${ROOT}" archive "${rev}" | tar -x -C "${dir}"`]);
  let sameDeps = true;
  try {
    git(['diff', '--quiet', rev, 'HEAD', '--', 'package-lock.json']);
  } catch {
    sameDeps = false;
  }
  if (sameDeps) symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  else execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: dir, stdio: 'pipe', timeout: 600_000 });
  if (!sameDeps) execFileSync('npm', ['rebuild', 'better-sqlite3'], { cwd: dir, stdio: 'pipe', timeout: 600_000 });
  writeFileSync(join(dir, 'tsconfig.previous.json'), JSON.stringify({ extends: './tsconfig.json', include: ['src/**/*.ts'] }));
  execFileSync(process.execPath, [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.previous.json')], { cwd: dir, stdio: 'pipe', timeout: 300_000 });
  return { rev, bin: join(dir, 'bin', 'skiff.js'), dir };
}
