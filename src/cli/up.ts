// `skiff up`: a whole local cluster in the foreground — a server and --nodes agents, each its own
// process (own process group), on the embedded store. Prints "cluster ready" once every node is
// Ready; Ctrl-C / SIGTERM stops the agents gracefully (they drain and remove their Nodes), then the server.
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { startProcess, type ManagedProcess } from '../util/processes.js';
import { addConfigFile, intArg } from './options.js';
import { waitForReady } from '../client/wait.js';
import { ApiClient } from '../client/rest.js';
import { parseKubeconfig } from '../pki/kubeconfig.js';
import type { KubeList } from '../api/types.js';
import type { Node } from '../api/kinds/node.js';
import { agentCommand } from './agent.js';
import { serverCommand } from './server.js';

const SKIFF_BIN = fileURLToPath(new URL('../../../bin/skiff.js', import.meta.url));
const TOKEN_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A bootstrap token, `<6>.<16>` lowercase letters and digits. */
export function randomToken(): string {
  const pick = (n: number) => [...randomBytes(n)].map((b) => TOKEN_CHARS[b % TOKEN_CHARS.length]).join('');
  return `${pick(6)}.${pick(16)}`;
}

/** Flags `skiff up` sets itself on the processes it starts; users cannot pass them through. */
const CONTROLLED = new Set(['--data-dir', '--listen', '--storage', '--token', '--server', '--ca-file', '--ca-cert-hash', '--kubeconfig', '--node-name', '--runtime', '--config', '--kubelet-port', '--insecure-skip-ca-verification']);

/**
 * Declares every other flag of `skiff server` and `skiff agent` on `cmd` as a hidden option (so
 * they parse in any order, mixed with up's own), and returns a function that gives back, after
 * parsing, the arguments to pass to the server and to the agents — each flag to whichever knows it.
 */
export function addPassthroughOptions(cmd: Command, server: readonly Option[], agent: readonly Option[]): () => { server: string[]; agent: string[] } {
  const own = new Set(cmd.options.map((o) => o.long));
  const entries = new Map<string, { takesValue: boolean; server: boolean; agent: boolean; attr: string }>();
  for (const [target, opts] of [['server', server], ['agent', agent]] as const) {
    for (const o of opts) {
      if (!o.long || own.has(o.long) || CONTROLLED.has(o.long) || o.long === '--help') continue;
      const e = entries.get(o.long) ?? { takesValue: o.required || o.optional, server: false, agent: false, attr: '' };
      e[target] = true;
      entries.set(o.long, e);
    }
  }
  for (const [long, e] of entries) {
    const opt = new Option(e.takesValue ? `${long} <value>` : long).hideHelp();
    if (e.takesValue) opt.argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]);
    cmd.addOption(opt);
    e.attr = opt.attributeName();
  }
  return () => {
    const out = { server: [] as string[], agent: [] as string[] };
    for (const [long, e] of entries) {
      const v = cmd.getOptionValue(e.attr) as string[] | boolean | undefined;
      if (v === undefined || v === false) continue;
      const args = Array.isArray(v) ? v.flatMap((x) => [long, x]) : [long];
      if (e.server) out.server.push(...args);
      if (e.agent) out.agent.push(...args);
    }
    return out;
  };
}

function isReady(n: Node): boolean {
  return (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

export function upCommand(): Command {
  const cmd = new Command('up')
    .description('start a local cluster: a server and node agents as separate processes; Ctrl-C stops it gracefully')
    .option('--data-dir <dir>', 'cluster data directory', '.skiff')
    .option('--nodes <n>', 'node agents to start', intArg, 2)
    .option('--servers <n>', 'API servers to start', intArg, 1)
    .option('--storage <kind>', 'sqlite or etcd', 'sqlite')
    .option('--port <port>', 'API server port', intArg, 6443)
    .option('--runtime <runtime>', 'process or simulated', 'process')
    .option('--ready-timeout <seconds>', 'how long to wait for every node to be Ready', intArg, 120)
    .addHelpText('after', '\nAny other flag of `skiff server` or `skiff agent` (e.g. timing flags such as --node-monitor-grace-period or\n--node-lease-duration-seconds) is passed through to the processes that know it.');
  const passthrough = addPassthroughOptions(cmd, serverCommand().options, agentCommand().options);
  addConfigFile(cmd);
  cmd.action(async (o: { dataDir: string; nodes: number; servers: number; storage: string; port: number; runtime: string; readyTimeout: number }) => {
    const dataDir = resolve(o.dataDir);
    const logDir = join(dataDir, 'logs');
    mkdirSync(logDir, { recursive: true });
    const pass = passthrough();
    if (o.servers !== 1) console.log(`note: this build starts one API server (asked for ${o.servers})`);
    const server = { proc: undefined as ManagedProcess | undefined };
    const agents = new Map<string, ManagedProcess>();
    let stopping = false;
    const stopAll = async (code: number) => {
      if (stopping) return;
      stopping = true;
      console.log('stopping cluster: agents drain and remove their nodes...');
      // Agents first (they need the API server to cordon and remove their Nodes), all at once.
      await Promise.all([...agents.values()].map((p) => p.stop(60_000)));
      await server.proc?.stop(15_000);
      console.log('cluster stopped');
      process.exit(code);
    };
    process.on('SIGINT', () => void stopAll(0));
    process.on('SIGTERM', () => void stopAll(0));

    const token = randomToken();
    const serverDir = join(dataDir, 'server');
    server.proc = startProcess({
      name: 'server',
      command: process.execPath,
      args: [SKIFF_BIN, 'server', '--data-dir', serverDir, '--listen', `127.0.0.1:${o.port}`, '--storage', o.storage, '--token', token, ...pass.server],
      output: join(logDir, 'server.log'),
    });
    void server.proc.exited.then(({ code, signal }) => {
      if (!stopping) {
        console.error(`server exited (code ${code}, signal ${signal}); see ${join(logDir, 'server.log')}`);
        void stopAll(1);
      }
    });
    console.log(`starting server on https://127.0.0.1:${o.port} (logs: ${join(logDir, 'server.log')})`);
    const kubeconfig = join(serverDir, 'kubeconfig');
    try {
      await waitForReady(kubeconfig, 60_000, (msg) => console.log(msg));
    } catch (e) {
      console.error(`skiff up: ${(e as Error).message}`);
      return stopAll(1);
    }
    // The admin kubeconfig is also kept at <data-dir>/kubeconfig, where `skiff kubectl` looks.
    copyFileSync(kubeconfig, join(dataDir, 'kubeconfig'));
    const serverUrl = parseKubeconfig(readFileSync(kubeconfig, 'utf8'), (p) => readFileSync(p, 'utf8')).server;

    const names = Array.from({ length: o.nodes }, (_, i) => `node-${i + 1}`);
    for (const name of names) {
      const log = join(logDir, `${name}.log`);
      const p = startProcess({
        name,
        command: process.execPath,
        args: [
          SKIFF_BIN, 'agent',
          '--server', serverUrl,
          '--token', token,
          '--ca-file', join(serverDir, 'tls', 'ca.crt'),
          '--data-dir', join(dataDir, 'agents', name),
          '--node-name', name,
          '--runtime', o.runtime,
          '--kubelet-port', '0',
          ...pass.agent,
        ],
        output: log,
      });
      agents.set(name, p);
      void p.exited.then(({ code, signal }) => {
        if (stopping) return;
        agents.delete(name);
        if (code === 0) console.log(`agent ${name} exited (retired or stopped); see ${log}`);
        else console.error(`agent ${name} exited (code ${code}, signal ${signal}); see ${log}`);
      });
    }
    if (names.length > 0) console.log(`starting ${names.length} node agent${names.length > 1 ? 's' : ''} (${o.runtime} runtime; logs: ${join(logDir, 'node-*.log')})`);

    const client = ApiClient.fromKubeconfig(kubeconfig, { timeoutMs: 5000 });
    const deadline = Date.now() + o.readyTimeout * 1000;
    let ready = 0;
    while (!stopping) {
      try {
        const list = await client.get<KubeList<Node>>('/api/v1/nodes');
        ready = list.items.filter((n) => names.includes(n.metadata.name ?? '') && isReady(n)).length;
        if (ready === names.length) break;
      } catch {
        /* not yet */
      }
      if (Date.now() > deadline) {
        console.error(`skiff up: only ${ready} of ${names.length} nodes became Ready within ${o.readyTimeout}s; see ${logDir}`);
        client.close();
        return stopAll(1);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    client.close();
    console.log(`cluster ready: ${names.length} node${names.length === 1 ? '' : 's'} Ready; export KUBECONFIG=${join(dataDir, 'kubeconfig')} (Ctrl-C stops the cluster)`);
  });
  return cmd;
}
