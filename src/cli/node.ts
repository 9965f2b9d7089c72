// `skiff node retire NAME`: deliberate removal of a node (N5). Marks the Node with
// skiff.dev/retire=true; its agent cordons, evicts its pods, deletes its Node and Lease and stays out.
import { Command } from 'commander';
import { isStatusError } from '../api/errors.js';
import { RETIRE_ANNOTATION, nodePath } from '../agent/api.js';
import { addAdminFlags, adminClient } from './admin-client.js';

export function nodeCommand(): Command {
  const cmd = new Command('node').description('node operations');
  cmd.addCommand(
    addAdminFlags(new Command('retire'))
      .description('retire a node: its agent drains it (honouring PodDisruptionBudgets), removes its Node and Lease, and does not re-register')
      .argument('<name>', 'the node to retire')
      .action(async (name: string, o: { kubeconfig?: string; dataDir?: string }) => {
        const client = adminClient(o);
        try {
          await client.patch(nodePath(name), { metadata: { annotations: { [RETIRE_ANNOTATION]: 'true' } } }, 'merge');
          console.log(`node/${name} marked for retirement; its agent will drain it and remove it`);
        } catch (e) {
          if (isStatusError(e) && e.code === 404) throw new Error(`Error from server (NotFound): nodes "${name}" not found`);
          throw e;
        } finally {
          client.close();
        }
      }),
  );
  return cmd;
}
