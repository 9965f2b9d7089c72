// The admin kubeconfig the operator commands (token, node, haproxy-config, kubectl) use, and the
// client made from it.
import { userAgent } from '../version.js';
import { existsSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { ApiClient } from '../client/rest.js';

/** Where `skiff up` keeps a cluster unless told otherwise: the cluster "in the current directory". */
export const DEFAULT_CLUSTER_DIR = '.skiff';

export function addAdminFlags(cmd: Command): Command {
  return cmd
    .option('--kubeconfig <file>', `admin kubeconfig (default: <data-dir>/kubeconfig, else ${DEFAULT_CLUSTER_DIR}/kubeconfig of the current directory, else $KUBECONFIG)`)
    .option('--data-dir <dir>', 'the cluster data directory (its kubeconfig)');
}

/**
 * Which kubeconfig: --kubeconfig, else the one in --data-dir, else that of the cluster in the
 * current directory (.skiff/kubeconfig), else $SKIFF_KUBECONFIG or $KUBECONFIG. A cluster here
 * comes before the environment, as kind and compose tools find theirs: $KUBECONFIG may name
 * every cluster of the machine, and its current context need not be this one. Throws, naming the
 * way out, when there is none.
 */
export function adminKubeconfig(o: { kubeconfig?: string; dataDir?: string }): string {
  const fromEnv = (process.env.SKIFF_KUBECONFIG || process.env.KUBECONFIG || '').split(delimiter).find(Boolean);
  const here = resolve(DEFAULT_CLUSTER_DIR, 'kubeconfig');
  const path = resolve(o.kubeconfig ?? (o.dataDir ? join(o.dataDir, 'kubeconfig') : existsSync(here) ? here : (fromEnv ?? here)));
  if (!existsSync(path)) {
    throw new Error(`no kubeconfig at ${path}: start a cluster (skiff up) and run this in its directory, or name one with --data-dir DIR, --kubeconfig FILE or $KUBECONFIG`);
  }
  return path;
}

export function adminClient(o: { kubeconfig?: string; dataDir?: string }): ApiClient {
  return ApiClient.fromKubeconfig(adminKubeconfig(o), { timeoutMs: 15_000, userAgent: userAgent('skiff-cli') });
}
