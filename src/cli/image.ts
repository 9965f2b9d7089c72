// `skiff image import FILE.tar`: loads image archives into a node's containerd (no registry needed).
import { Command } from 'commander';
import { DEFAULT_CRI_ENDPOINT } from '../agent/runtimes/containerd.js';
import { importImage } from '../cri/image-import.js';

export function imageCommand(): Command {
  const image = new Command('image').description("manage the images in a node's container runtime (containerd)");
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
