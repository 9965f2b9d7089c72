// Finding the real programs skiff starts (etcd, HAProxy): an explicit $SKIFF_<NAME>_BIN is the only
// candidate when set (a wrong path must not fall back silently); else the Debian package's path,
// else the name on PATH.
import { accessSync, constants } from 'node:fs';
import { execFileSync } from 'node:child_process';

export function findBinary(name: string, envVar: string, packagePaths: string[]): string | undefined {
  const explicit = process.env[envVar];
  for (const c of explicit ? [explicit] : packagePaths) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // next
    }
  }
  if (explicit) return undefined;
  try {
    const onPath = execFileSync('sh', ['-c', `command -v ${name}`], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
    return onPath || undefined;
  } catch {
    return undefined;
  }
}
