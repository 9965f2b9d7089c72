// The admin kubeconfig the operator commands (token, node, haproxy-config, kubectl) use, and the
// client made from it.
import { userAgent } from '../version.js';
import { existsSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { ApiClient } from '../client/rest.js';

export function addAdminFlags(cmd: Command): Command {
  return cmd
    .option('--kubeconfig <file>', 'admin kubeconfig (default: <data-dir>/kubeconfig, else $KUBECONFIG, else .skiff/kubeconfig)')
    .option('--data-dir <dir>', 'the cluster data directory (its kubeconfig)');
}

/**
 * Which kubeconfig: --kubeconfig, else the one in --data-dir, else $SKIFF_KUBECONFIG or
 * $KUBECONFIG (what `skiff up` tells users to export), else .skiff/kubeconfig. Throws, naming the
 * way out, when there is none.
 */
export function adminKubeconfig(o: { kubeconfig?: string; dataDir?: string }): string {
  const fromEnv = (process.env.SKIFF_KUBECONFIG || process.env.KUBECONFIG || '').split(delimiter).find(Boolean);
  const path = resolve(o.kubeconfig ?? (o.dataDir ? join(o.dataDir, 'kubeconfig') : (fromEnv ?? join('.skiff', 'kubeconfig'))));
  if (!existsSync(path)) {
    throw new Error(`no kubeconfig at ${path}: start a cluster (npm run up), or name one with --data-dir DIR, --kubeconfig FILE or $KUBECONFIG`);
  }
  return path;
}

export function adminClient(o: { kubeconfig?: string; dataDir?: string }): ApiClient {
  return ApiClient.fromKubeconfig(adminKubeconfig(o), { timeoutMs: 15_000, userAgent: userAgent('skiff-cli') });
}
