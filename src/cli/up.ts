// `skiff up`: a whole local cluster in the foreground, each server and agent its own process.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { startProcess, type ManagedProcess } from '../util/processes.js';
import { addConfigFile, intArg } from './options.js';
import { waitForReady } from '../client/wait.js';

const SKIFF_BIN = fileURLToPath(new URL('../../../bin/skiff.js', import.meta.url));

export function upCommand(): Command {
  const cmd = new Command('up')
    .description('start a local cluster: servers and node agents as separate processes; Ctrl-C stops it')
    .option('--data-dir <dir>', 'cluster data directory', '.skiff')
    .option('--nodes <n>', 'node agents to start', intArg, 2)
    .option('--servers <n>', 'API servers to start', intArg, 1)
    .option('--storage <kind>', 'sqlite or etcd', 'sqlite')
    .option('--port <port>', 'API server port', intArg, 6443)
    .option('--runtime <runtime>', 'process or simulated', 'process')
    .allowUnknownOption(true);
  addConfigFile(cmd);
  cmd.action(async (o: { dataDir: string; nodes: number; servers: number; storage: string; port: number; runtime: string }, command: Command) => {
    const dataDir = resolve(o.dataDir);
    const logDir = join(dataDir, 'logs');
    mkdirSync(logDir, { recursive: true });
    // Flags skiff up does not know itself (timings) pass through to the processes it starts.
    const passthrough = command.args;
    const procs: ManagedProcess[] = [];
    let stopping = false;
    const stopAll = async (code: number) => {
      if (stopping) return;
      stopping = true;
      console.log('stopping cluster...');
      for (const p of [...procs].reverse()) await p.stop(15_000);
      console.log('cluster stopped');
      process.exit(code);
    };
    process.on('SIGINT', () => void stopAll(0));
    process.on('SIGTERM', () => void stopAll(0));

    const serverDir = join(dataDir, 'server');
    const server = startProcess({
      name: 'server',
      command: process.execPath,
      args: [SKIFF_BIN, 'server', '--data-dir', serverDir, '--listen', `127.0.0.1:${o.port}`, '--storage', o.storage, ...passthrough],
      output: join(logDir, 'server.log'),
    });
    procs.push(server);
    void server.exited.then(({ code, signal }) => {
      if (!stopping) {
        console.error(`server exited (code ${code}, signal ${signal}); see ${join(logDir, 'server.log')}`);
        void stopAll(1);
      }
    });
    console.log(`starting server on https://127.0.0.1:${o.port} (logs: ${join(logDir, 'server.log')})`);
    const kubeconfig = join(serverDir, 'kubeconfig');
    await waitForReady(kubeconfig, 60_000, (msg) => console.log(msg));
    // The admin kubeconfig is also kept at <data-dir>/kubeconfig, where `skiff kubectl` looks.
    const { copyFileSync } = await import('node:fs');
    copyFileSync(kubeconfig, join(dataDir, 'kubeconfig'));
    if (o.nodes > 0) console.log(`node agents are not part of this build yet; started 0 of ${o.nodes}`);
    console.log(`cluster ready: export KUBECONFIG=${join(dataDir, 'kubeconfig')}`);
  });
  return cmd;
}
