// `skiff kubectl ARGS...`: kubectl with the local cluster's admin kubeconfig.
import { spawn } from 'node:child_process';
import { Command } from 'commander';
import { adminKubeconfig } from './admin-client.js';

export function kubectlCommand(): Command {
  return new Command('kubectl')
    .description('run kubectl against the local cluster (<data-dir>/kubeconfig, else .skiff/kubeconfig of the current directory, else $KUBECONFIG)')
    .option('--data-dir <dir>', 'the cluster data directory')
    .allowUnknownOption(true)
    .helpOption(false)
    .argument('[args...]', 'kubectl arguments')
    .action((args: string[], o: { dataDir?: string }) => {
      const child = spawn('kubectl', args, {
        stdio: 'inherit',
        env: { ...process.env, KUBECONFIG: adminKubeconfig(o) },
      });
      child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
      child.on('error', (e) => {
        console.error(`skiff kubectl: cannot run kubectl: ${e.message}`);
        process.exit(127);
      });
    });
}
