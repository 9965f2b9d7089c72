// `skiff sim`: many simulated nodes in one process, each an agent on the wire (src/sim/fleet.ts).
import { Command, Option } from 'commander';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ApiClient } from '../client/rest.js';
import { CallStats } from '../sim/call-stats.js';
import { Fleet } from '../sim/fleet.js';
import { assertMayActAsNodes } from '../sim/acting-as.js';
import { systemClock } from '../util/clock.js';
import { createLogger, defaultLogFormat, type LogFormat } from '../util/log.js';
import { PidLock } from '../util/pid-lock.js';
import { userAgent } from '../version.js';
import { adminKubeconfig } from './admin-client.js';
import { serverArg } from './agent.js';
import { nodeConfigFrom, nodeOptions } from './node-options.js';
import { intArg, logFormatOption } from './options.js';
import { CLUSTER_STOP_SIGNAL, LEAVE_SIGNALS } from '../util/stop-signals.js';

/** Agent flags that name one machine: a fleet names its nodes itself and serves no kubelet port. */
const NOT_FOR_A_FLEET = new Set(['--node-name', '--node-ip', '--runtime', '--provider-id', '--cloud-provider', '--kubelet-port']);

const NAME_PREFIX = /^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$/;

export function simCommand(): Command {
  const cmd = new Command('sim')
    .description('run many simulated nodes in one process: each registers and restores its Node, renews its Lease, reports status and runs its pods (simulated runtime) as an agent does')
    .option('--server <url>', 'API server URL (repeatable; default: the kubeconfig\'s server and the members it lists)', serverArg, [])
    .option('--kubeconfig <file>', 'credential the fleet acts with; it must be allowed to impersonate nodes (the admin kubeconfig is; default as for skiff kubectl)')
    .addOption(new Option('--token <token>', 'a bearer token instead (a --token-auth-file user allowed to impersonate nodes), with --ca-file').env('SKIFF_TOKEN'))
    .option('--ca-file <path>', 'cluster CA certificate (with --token)')
    .option('--nodes <n>', 'how many nodes', intArg, 100)
    .option('--name-prefix <prefix>', 'nodes are named <prefix>-1 … <prefix>-N and labelled skiff.dev/simulated-by=<prefix>', 'sim')
    .option('--data-dir <dir>', 'each node\'s machine id and last observed Node (pods are kept in memory)', '.skiff/sim')
    .option('--register-concurrency <n>', 'nodes registering at once', intArg, 32)
    .option('--no-http2', 'send over up to 64 keep-alive HTTP/1.1 connections instead of one HTTP/2 connection per server')
    .option('--stats-file <file>', 'write the fleet\'s API call latencies by kind of call (p50, p99, max, errors) here every 10 s and on exit; SIGUSR2 starts them afresh')
    .addOption(new Option('--node-log-level <level>', 'log level of each node\'s own lines (its transitions; at warn, every node says so when the API is unreachable); the fleet logs its own').choices(['debug', 'info', 'warn', 'error']).default('error'))
    .addOption(logFormatOption());
  for (const opt of nodeOptions()) if (!NOT_FOR_A_FLEET.has(opt.long!)) cmd.addOption(opt);
  cmd.action(async (o: Record<string, unknown>) => {
    const prefix = o.namePrefix as string;
    if (!NAME_PREFIX.test(prefix)) throw new Error(`--name-prefix ${JSON.stringify(prefix)}: use lowercase letters, digits and dashes (a DNS label of at most 42 characters)`);
    const count = o.nodes as number;
    if (count < 1 || count > 100_000) throw new Error('--nodes must be from 1 to 100000');
    const format = (o.logFormat as LogFormat | undefined) ?? defaultLogFormat();
    const log = createLogger('skiff-sim', format);
    const nodeLog = createLogger('skiff-sim', format, o.nodeLogLevel as string);
    const dataDir = resolve(o.dataDir as string);
    mkdirSync(dataDir, { recursive: true });
    const lock = PidLock.acquire(join(dataDir, 'sim.lock'), `the simulated fleet's data dir ${dataDir}`);
    const stats = o.statsFile ? new CallStats() : undefined;
    const client = fleetClient(o, stats);
    try {
      await assertMayActAsNodes(client, Fleet.names(prefix, 1)[0]!);
    } catch (e) {
      client.close();
      lock.release();
      throw e;
    }
    // Lease renewals and node status reports on a connection of their own, as the kubelet's
    // heartbeat client: a fleet's burst of pod status writes and events cannot starve them.
    const heartbeats = fleetClient(o, stats);
    // The fleet's connections to the API: their failovers are the fleet's to log, once each.
    client.onFailover((server, reason) => log.warn({ server, reason }, 'API server failover'));
    heartbeats.onFailover((server, reason) => log.warn({ server, reason, client: 'heartbeats' }, 'API server failover'));
    if (stats) {
      const file = resolve(o.statsFile as string);
      setInterval(() => stats.write(file), 10_000).unref();
      process.on('SIGUSR2', () => stats.reset());
      process.on('exit', () => stats.write(file));
    }
    const fleet = new Fleet({
      client,
      heartbeatClient: heartbeats,
      clock: systemClock,
      log,
      nodeLog,
      dataDir,
      namePrefix: prefix,
      count,
      registerConcurrency: o.registerConcurrency as number,
      // The fleet's nodes take the agent's node flags, read as `skiff agent` reads them.
      node: nodeConfigFrom({ ...o, nodeIp: '127.0.0.1', runtime: 'simulated', kubeletPort: 0 }),
      progress: progressLine(log, count),
    });
    let stopping = false;
    const exit = (): never => {
      client.close();
      heartbeats.close();
      lock.release();
      process.exit(0);
    };
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal, nodes: fleet.size }, 'stopping: every simulated node leaves (Lease and Node removed)');
      // A hung API cannot hold the fleet: past the shutdown timeout and a margin, it exits as it is.
      setTimeout(() => {
        log.warn({ timeoutMs: o.shutdownTimeout }, 'the simulated nodes did not all leave in time; exiting');
        exit();
      }, (o.shutdownTimeout as number) + 15_000).unref();
      void fleet.stop(o.shutdownTimeout as number).finally(exit);
    };
    for (const sig of LEAVE_SIGNALS) process.on(sig, () => stop(sig));
    // The whole cluster stops (N6a): its simulated machines go off with it, their Nodes and pods
    // kept for the next start. Nothing of the fleet runs outside this process.
    process.on(CLUSTER_STOP_SIGNAL, () => {
      if (stopping) return;
      stopping = true;
      log.info({ nodes: fleet.size }, 'stopping with the whole cluster: the simulated nodes and their pods are kept');
      exit();
    });
    await fleet.start();
  });
  return cmd;
}

function fleetClient(o: Record<string, unknown>, stats: CallStats | undefined): ApiClient {
  const servers = o.server as string[];
  // One connection per server with every node's requests and the fleet's watches as streams on
  // it, as one client-go process would hold: the server pays for one TLS session, not 64.
  const common = { timeoutMs: o.requestTimeout as number, userAgent: userAgent('skiff-sim'), http2: o.http2 !== false, ...(stats ? { metrics: stats } : {}) };
  if (o.token) {
    if (!o.caFile) throw new Error('--token needs --ca-file (the cluster CA the fleet trusts)');
    if (servers.length === 0) throw new Error('--token needs --server URL');
    return new ApiClient({ servers, caPem: readFileSync(o.caFile as string, 'utf8'), token: o.token as string, ...common });
  }
  const path = adminKubeconfig({ ...(o.kubeconfig ? { kubeconfig: o.kubeconfig as string } : {}) });
  return ApiClient.fromKubeconfig(path, { ...common, ...(servers.length > 0 ? { servers } : {}) });
}

/** A progress line every tenth of the fleet (and at the end), not one per node. */
function progressLine(log: ReturnType<typeof createLogger>, total: number): (done: number) => void {
  const step = Math.max(1, Math.ceil(total / 10));
  return (done) => {
    if (done % step === 0 || done === total) log.info({ registered: done, of: total }, 'registering simulated nodes');
  };
}
