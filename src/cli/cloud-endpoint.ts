// Where the local cloud of a cluster answers. `skiff cloud serve` records its URL in its data
// directory while it listens (an `up --cloud local` cluster's cloud lives in <data-dir>/cloud, on a
// port chosen at each start), so the cloud commands run inside a cluster's directory find it
// without being told, as `skiff node retire` finds the cluster's kubeconfig.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { errorText } from '../util/error-text.js';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import { DEFAULT_CLUSTER_DIR } from './admin-client.js';
import { isClusterDir } from './cluster-dir.js';

/** The file in a cloud's data directory naming the URL it serves on, while it serves. */
const ENDPOINT_FILE = 'endpoint';

/** What `skiff cloud serve --listen` answers on when not told otherwise. */
export const DEFAULT_CLOUD_ENDPOINT = 'http://127.0.0.1:8765';

export function recordCloudEndpoint(cloudDir: string, url: string): () => void {
  const file = join(cloudDir, ENDPOINT_FILE);
  writeFileAtomic(file, `${url}\n`, 0o644);
  return () => rmSync(file, { force: true });
}

export interface CloudTarget {
  endpoint: string;
  /** How it was found, for an error that names where it looked. */
  from: string;
}

/**
 * --cloud-endpoint; else the cloud recorded in --data-dir (an `up` directory, whose cloud is in
 * cloud/, or a `cloud serve` directory), by default the cluster in the current directory; else a
 * `skiff cloud serve` on its default address.
 */
export function findCloud(o: { cloudEndpoint?: string; dataDir?: string }): CloudTarget {
  if (o.cloudEndpoint) return { endpoint: o.cloudEndpoint, from: '--cloud-endpoint' };
  const dir = resolve(o.dataDir ?? DEFAULT_CLUSTER_DIR);
  for (const d of [join(dir, 'cloud'), dir]) {
    const file = join(d, ENDPOINT_FILE);
    if (existsSync(file)) return { endpoint: readFileSync(file, 'utf8').trim(), from: file };
  }
  if (o.dataDir || isClusterDir(dir)) {
    throw new Error(`the cluster in ${dir} has no local cloud running: start it with skiff up --cloud local --node-group MIN:MAX:GROUP, or pass --cloud-endpoint URL`);
  }
  return { endpoint: DEFAULT_CLOUD_ENDPOINT, from: 'the default address' };
}

/** A cloud that does not answer, said in one line with the way to one that does. */
export function cloudUnreachable(target: CloudTarget, e: unknown): Error {
  const cause = (e as { cause?: { code?: string } }).cause?.code ?? errorText(e);
  return new Error(
    `no local cloud answers at ${target.endpoint} (${target.from}; ${cause}): start a cluster with one (skiff up --cloud local --node-group MIN:MAX:GROUP) and run this in its directory or with --data-dir DIR, or pass --cloud-endpoint URL`,
  );
}
