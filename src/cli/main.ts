// The `skiff` command line.
import { errorText } from '../util/error-text.js';
import { SKIFF_VERSION } from '../version.js';
import { Command } from 'commander';
import { StatusError } from '../api/errors.js';

/**
 * A command that fails says why in one line (server unreachable, refused, data dir in use),
 * as kubectl does; SKIFF_DEBUG=1 adds the stack for bug reports.
 */
function fail(e: unknown, command: string | undefined): never {
  const message = e instanceof StatusError ? e.status.message : errorText(e);
  console.error(`skiff${command && !command.startsWith('-') ? ` ${command}` : ''}: ${message}`);
  if (process.env.SKIFF_DEBUG && e instanceof Error) console.error(e.stack);
  process.exit(1);
}

export async function main(argv: string[]): Promise<void> {
  try {
    await run(argv);
  } catch (e) {
    fail(e, argv[2]);
  }
}

function rootCommand(): Command {
  return new Command('skiff')
    .description('A small Kubernetes-API-compatible cluster: API server, controllers, scheduler and self-healing node agents')
    .version(SKIFF_VERSION);
}

/** Every command, as `skiff` runs them: what --help prints and what the command reference is made from. */
export async function skiffProgram(): Promise<Command> {
  const program = rootCommand();
  await addCommands(program);
  return program;
}

async function addCommands(program: Command): Promise<void> {
  const [{ upCommand }, { serverCommand }, { kubectlCommand }, { tokenCommand }, { agentCommand }, { nodeCommand }, { haproxyConfigCommand }, { installCommands }, { backupCommands }, { cloudCommand }, { scenarioCommand }, { simCommand }, { imageCommand }, { dashboardCommand }, { downCommand }, { statusCommand }, { restartCommand }] = await Promise.all([
    import('./up.js'),
    import('./server.js'),
    import('./kubectl.js'),
    import('./token.js'),
    import('./agent.js'),
    import('./node.js'),
    import('./haproxy-config.js'),
    import('./install.js'),
    import('./backup.js'),
    import('./cloud.js'),
    import('./scenario.js'),
    import('./sim.js'),
    import('./image.js'),
    import('./dashboard.js'),
    import('./down.js'),
    import('./status.js'),
    import('./restart.js'),
  ]);
  program.addCommand(upCommand());
  program.addCommand(downCommand());
  program.addCommand(restartCommand());
  program.addCommand(statusCommand());
  program.addCommand(serverCommand());
  program.addCommand(kubectlCommand());
  program.addCommand(tokenCommand());
  program.addCommand(agentCommand());
  program.addCommand(nodeCommand());
  program.addCommand(haproxyConfigCommand());
  program.addCommand(cloudCommand());
  program.addCommand(scenarioCommand());
  program.addCommand(simCommand());
  program.addCommand(imageCommand());
  program.addCommand(dashboardCommand());
  for (const c of [...installCommands(), ...backupCommands()]) program.addCommand(c);
}

async function run(argv: string[]): Promise<void> {
  const program = rootCommand();
  // `skiff agent` runs on every node, where memory counts: it loads only its own code, not the API
  // server's (SQLite, protobuf, …). Every other command line loads every command.
  if (argv[2] === 'server' || argv[2] === 'sim') {
    // V8 sizes the old generation to keep garbage collection near 3 % of the time, which let a
    // server's heap grow to about three times what was alive. Capped at 1.4 times, measured on
    // 1,000 simulated nodes and 10,000 pods: RSS 878 → 644 MiB, server CPU a pod start about 5 %
    // more (5.73 → 6.01 ms; its main thread no more: marking runs beside it). A fleet of simulated
    // nodes holds thousands of nodes' state in one heap the same way. Read by V8 at each
    // collection, so it holds however the process was started.
    (await import('node:v8')).setFlagsFromString('--heap-growing-percent=40');
  }
  if (argv[2] === 'agent') {
    // The agent's JavaScript is never hot (it waits on the API and its pods), so V8's optimizing
    // compiler buys it nothing, while its code pages and output cost ~4 MiB of RSS (53 vs 57 MiB with
    // 50 process pods). Baseline (Sparkplug) compilation stays on. The young generation stays at its
    // first size: a burst (50 pods at once) otherwise grows it by a few MiB that are never given back.
    const v8 = await import('node:v8');
    v8.setFlagsFromString('--no-opt');
    v8.setFlagsFromString('--semi-space-growth-factor=1');
    program.addCommand((await import('./agent.js')).agentCommand());
    await program.parseAsync(argv);
    return;
  }
  await addCommands(program);
  await program.parseAsync(argv);
}
