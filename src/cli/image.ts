// `skiff image load FILE.tar...`: image archives into every node of the `up` cluster in a directory
// (as `kind load image-archive`), and `skiff image import FILE.tar`: into one containerd, by its
// socket (a node installed apart).
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command } from 'commander';
import { DEFAULT_CRI_ENDPOINT } from '../agent/runtimes/containerd.js';
import { ContainerdDaemon } from '../cri/containerd-daemon.js';
import { importImage, socketPath } from '../cri/image-import.js';
import { DEFAULT_CLUSTER_DIR } from './admin-client.js';
import { isClusterDir, upContainerdDir, upContainerdNodes } from './cluster-dir.js';

function loadCommand(): Command {
  return new Command('load')
    .description('load image archives into the containerd of every node (or of --node) of the cluster `skiff up --runtime containerd` runs in --data-dir, by default the current directory\'s')
    .argument('<file...>', 'image archives (.tar: docker save, ctr export, skopeo copy)')
    .option('--node <name>', 'only this node (repeatable)', (v: string, p: string[]) => [...p, v], [] as string[])
    .option('--data-dir <dir>', 'the cluster data directory', DEFAULT_CLUSTER_DIR)
    .action((files: string[], o: { node: string[]; dataDir: string }) => {
      const dir = resolve(o.dataDir);
      if (!isClusterDir(dir)) throw new Error(`${dir} holds no cluster: run this in the directory of a skiff up, or pass --data-dir DIR`);
      const all = upContainerdNodes(dir);
      if (all.length === 0) {
        throw new Error(`the cluster in ${dir} runs no containerd: images are for nodes on --runtime containerd (the process runtime runs each container's command on the host, the simulated one nothing)`);
      }
      const unknown = o.node.filter((n) => !all.includes(n));
      if (unknown.length > 0) throw new Error(`no node ${unknown.join(', ')} with a containerd in ${dir}; its nodes: ${all.join(', ')}`);
      const nodes = o.node.length > 0 ? o.node : all;
      for (const node of nodes) {
        const endpoint = ContainerdDaemon.endpointIn(upContainerdDir(dir, node));
        // A node whose containerd is not running (the cluster is stopped) cannot take an image now.
        if (!existsSync(socketPath(endpoint))) throw new Error(`the containerd of node ${node} is not running (no ${socketPath(endpoint)}): start the cluster (skiff up --runtime containerd --data-dir ${dir}) first`);
        for (const f of files) {
          importImage(f, endpoint);
          console.log(`loaded ${f} into node ${node}`);
        }
      }
    });
}

export function imageCommand(): Command {
  const image = new Command('image').description("manage the images in the nodes' container runtime (containerd)");
  image.addCommand(loadCommand());
  image
    .command('import')
    .description("load OCI or Docker image archives (docker save, ctr export, skopeo copy) into a node's containerd")
    .argument('<file...>', 'image archives (.tar)')
    .option('--container-runtime-endpoint <url>', "the node's containerd socket", DEFAULT_CRI_ENDPOINT)
    .action((files: string[], o: { containerRuntimeEndpoint: string }) => {
      for (const f of files) console.log(importImage(f, o.containerRuntimeEndpoint) || `imported ${f}`);
    });
  return image;
}
