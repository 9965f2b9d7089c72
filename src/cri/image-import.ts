// Loading an OCI or Docker image archive into containerd, for machines without a registry. CRI has
// no call for this, so it goes through containerd's own client, ctr, into the namespace
// containerd's CRI plugin serves pods from (k8s.io).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { findBinary } from '../util/find-binary.js';

/** The namespace containerd's CRI plugin keeps Kubernetes' images and containers in. */
export const CRI_NAMESPACE = 'k8s.io';

/** A socket path from a CRI endpoint URL. */
export function socketPath(endpoint: string): string {
  return endpoint.replace(/^unix:\/\//, '');
}

/** Imports an archive with ctr; throws with ctr's own message when it fails. Answers what ctr printed. */
export function importImage(file: string, endpoint: string): string {
  const ctr = findBinary('ctr', 'SKIFF_CTR_BIN', ['/usr/bin/ctr']);
  if (!ctr) throw new Error("ctr (containerd's client, in the containerd package) is not installed");
  if (!existsSync(file)) throw new Error(`${file}: no such file`);
  const r = spawnSync(ctr, ['--address', socketPath(endpoint), '--namespace', CRI_NAMESPACE, 'images', 'import', resolve(file)], { encoding: 'utf8' });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error((r.stderr || r.stdout || `ctr exited with ${r.status}`).trim().replace(/^ctr: /, ''));
  return r.stdout.trim();
}
