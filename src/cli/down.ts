// `skiff down [--data-dir .skiff] [--delete]`: stops a cluster `skiff up` started, in the foreground
// or detached, and leaves no process of it behind. Stopping is the whole cluster stopping (N6a):
// Nodes and pods are kept, and the next `skiff up` on the directory brings them back. --delete
// then removes the directory, the cluster's entry in the registry and its kubeconfig context.
import { existsSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command } from 'commander';
import { isClusterDir, readClusterName } from './cluster-dir.js';
import { unregisterCluster } from './cluster-registry.js';
import { describeProcesses, liveClusterProcesses } from './cluster-run.js';
import { stopCluster } from './cluster-stop.js';
import { removeClusterContext, userKubeconfigPath, contextName } from './user-kubeconfig.js';

export function downCommand(): Command {
  return new Command('down')
    .description('stop a cluster `skiff up` started (its nodes and pods are kept for the next up); --delete removes it too')
    .option('--data-dir <dir>', 'the cluster data directory', '.skiff')
    .option('--delete', "remove the cluster's data directory and its context in the user's kubeconfig as well", false)
    .action(async (o: { dataDir: string; delete: boolean }) => {
      const dir = resolve(o.dataDir);
      if (!existsSync(dir)) {
        console.log(`no cluster in ${dir}: nothing to stop`);
        return;
      }
      // --delete removes a directory: only one skiff up made.
      if (!isClusterDir(dir)) throw new Error(`${dir} is not a cluster directory skiff up made (no cluster.json): nothing stopped or removed`);
      if (liveClusterProcesses(dir).length === 0) console.log(`the cluster in ${dir} is not running`);
      else {
        await stopCluster(dir, { say: (l) => console.log(l) });
        const left = liveClusterProcesses(dir);
        if (left.length > 0) throw new Error(`processes of the cluster in ${dir} still run: ${describeProcesses(left)}`);
        console.log(`cluster in ${dir} stopped${o.delete ? '' : `; skiff up --data-dir ${dir} starts it again`}`);
      }
      if (!o.delete) return;
      const name = readClusterName(dir);
      if (name) {
        const config = userKubeconfigPath();
        try {
          if (removeClusterContext(config, name)) console.log(`removed the context ${contextName(name)} from ${config}`);
        } catch (e) {
          console.error(`could not remove the context ${contextName(name)} from ${config}: ${(e as Error).message}`);
        }
      }
      unregisterCluster(dir);
      rmSync(dir, { recursive: true, force: true });
      console.log(`deleted ${dir}`);
    });
}
