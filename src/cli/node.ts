// `skiff node retire NAME`: deliberate removal of a node (N5). Marks the Node with
// skiff.dev/retire=true; its agent cordons, evicts its pods, deletes its Node and Lease and stays out.
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { ApiClient } from '../client/rest.js';
import { isStatusError } from '../api/errors.js';
import { RETIRE_ANNOTATION, nodePath } from '../agent/api.js';

export function nodeCommand(): Command {
  const cmd = new Command('node').description('node operations');
  cmd
    .command('retire')
    .description('retire a node: its agent drains it (honouring PodDisruptionBudgets), removes its Node and Lease, and does not re-register')
    .argument('<name>', 'the node to retire')
    .option('--kubeconfig <file>', 'admin kubeconfig (default: <data-dir>/kubeconfig)')
    .option('--data-dir <dir>', 'the cluster data directory', '.skiff')
    .action(async (name: string, o: { kubeconfig?: string; dataDir: string }) => {
      const kubeconfig = o.kubeconfig ?? process.env.SKIFF_KUBECONFIG ?? resolve(join(o.dataDir, 'kubeconfig'));
      let client: ApiClient;
      try {
        client = ApiClient.fromKubeconfig(kubeconfig, { timeoutMs: 10_000 });
      } catch (e) {
        console.error(`skiff node retire: cannot read ${kubeconfig}: ${(e as Error).message}`);
        process.exit(1);
      }
      try {
        await client.patch(nodePath(name), { metadata: { annotations: { [RETIRE_ANNOTATION]: 'true' } } }, 'merge');
        console.log(`node/${name} marked for retirement; its agent will drain it and remove it`);
      } catch (e) {
        const msg = isStatusError(e) && e.code === 404 ? `Error from server (NotFound): nodes "${name}" not found` : (e as Error).message;
        console.error(msg);
        process.exitCode = 1;
      } finally {
        client.close();
      }
    });
  return cmd;
}
