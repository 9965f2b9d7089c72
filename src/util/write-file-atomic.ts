// Writing a file so a crash at any moment leaves the old version or the new one, never half:
// a temp file beside it, then a rename. The new file gets `mode` whatever the old one had.
import { renameSync, writeFileSync } from 'node:fs';

let tmpSeq = 0;

export function writeFileAtomic(path: string, data: string, mode = 0o600): void {
  const tmp = `${path}.tmp-${process.pid}-${++tmpSeq}`;
  writeFileSync(tmp, data, { mode });
  renameSync(tmp, path);
}
