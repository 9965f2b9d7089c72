// The `skiff` command line.
import { Command } from 'commander';
import { serverCommand } from './server.js';
import { kubectlCommand } from './kubectl.js';
import { upCommand } from './up.js';
import { tokenCommand } from './token.js';

export async function main(argv: string[]): Promise<void> {
  const program = new Command('skiff')
    .description('A small Kubernetes-API-compatible cluster: API server, controllers, scheduler and self-healing node agents')
    .version('0.1.0');
  program.addCommand(upCommand());
  program.addCommand(serverCommand());
  program.addCommand(kubectlCommand());
  program.addCommand(tokenCommand());
  await program.parseAsync(argv);
}
