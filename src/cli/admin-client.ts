// The admin client the operator commands (token, node) use: --kubeconfig, or <data-dir>/kubeconfig.
import { join } from 'node:path';
import type { Command } from 'commander';
import { ApiClient } from '../client/rest.js';

export function addAdminFlags(cmd: Command): Command {
  return cmd
    .option('--kubeconfig <file>', 'admin kubeconfig (default: <data-dir>/kubeconfig, or $KUBECONFIG)')
    .option('--data-dir <dir>', 'the cluster data directory', '.skiff');
}

export function adminClient(o: { kubeconfig?: string; dataDir?: string }): ApiClient {
  const path = o.kubeconfig ?? process.env.KUBECONFIG ?? join(o.dataDir ?? '.skiff', 'kubeconfig');
  return ApiClient.fromKubeconfig(path, { timeoutMs: 15_000, userAgent: 'skiff-cli/0.1.0' });
}
