// `skiff cloud serve|instances|fault`: the local cloud whose instances are `skiff agent`
// processes, a look at its instances beside the Nodes they run, and the faults a machine can suffer.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Argument, Command, Option } from 'commander';
import type { Node } from '../api/kinds/node.js';
import type { KubeList } from '../api/types.js';
import { CloudApiError, CloudClient } from '../cloud/client.js';
import { INSTANCE_FAULTS, type InstanceFault } from '../cloud/api.js';
import { DEFAULT_LOAD_BALANCER_RANGE } from '../cloud/load-balancers.js';
import { LocalCloud } from '../cloud/local-cloud.js';
import { humanDuration } from '../api/kinds/printing.js';
import { systemClock } from '../util/clock.js';
import { createLogger, defaultLogFormat, type LogFormat } from '../util/log.js';
import { PidLock } from '../util/pid-lock.js';
import { addAdminFlags, adminClient } from './admin-client.js';
import { durationOption, hostPortArg, listenErrorMessage, logFormatOption } from './options.js';
import { SKIFF_BIN } from '../util/skiff-bin.js';
import { cloudUnreachable, findCloud, recordCloudEndpoint, type CloudTarget } from './cloud-endpoint.js';

/** A call to the cloud; one that cannot reach it says where it looked and how to start one. */
async function callCloud<T>(target: CloudTarget, call: (c: CloudClient) => Promise<T>): Promise<T> {
  try {
    return await call(new CloudClient(target.endpoint));
  } catch (e) {
    if (e instanceof CloudApiError) throw e;
    throw cloudUnreachable(target, e);
  }
}

const CLOUD_FLAGS_HELP = 'the cloud API (default: the cloud of the cluster in --data-dir or the current directory, else a skiff cloud serve on 127.0.0.1:8765)';

function serveCommand(): Command {
  return new Command('serve')
    .description('serve the local cloud: node groups and instances, each instance a `skiff agent` process')
    .option('--data-dir <dir>', 'the cloud state (cloud.json) and each instance\'s agent data', '.skiff/cloud')
    .option('--listen <host:port>', 'address of the cloud API (HTTP JSON)', hostPortArg, { host: '127.0.0.1', port: 8765 })
    .option('--server <url>', 'API server URL instances join (repeatable)', (v: string, p: string[]) => [...p, v], [])
    .option('--ca-file <path>', 'cluster CA certificate the instances trust')
    .addOption(new Option('--token <token>', 'bootstrap token the instances join with').env('SKIFF_TOKEN'))
    .addOption(new Option('--runtime <runtime>', 'runtime of the instances\' agents').choices(['simulated', 'process']).default('simulated'))
    .option('--agent-flag <flag>', 'a flag passed to every instance\'s agent, such as --node-status-update-frequency=1s (repeatable)', (v: string, p: string[]) => [...p, v], [])
    .addOption(durationOption('--termination-grace <duration>', 'how long a deleted instance\'s agent may take to leave before it is killed', 30_000))
    .option('--load-balancer-range <cidr>', 'where load balancers get their addresses (keep it on loopback: nothing outside this machine is then ever a target)', DEFAULT_LOAD_BALANCER_RANGE)
    .addOption(logFormatOption())
    .action(async (o: { dataDir: string; listen: { host: string; port: number }; server: string[]; caFile?: string; token?: string; runtime: 'simulated' | 'process'; agentFlag: string[]; terminationGrace: number; loadBalancerRange: string; logFormat?: LogFormat }) => {
      if (o.server.length === 0) throw new Error('--server URL is required: the API server the instances join');
      if (!o.caFile) throw new Error('--ca-file is required: the cluster CA the instances trust');
      if (!o.token) throw new Error('a bootstrap token is required (--token or $SKIFF_TOKEN): the instances join with it');
      const log = createLogger('skiff-cloud', o.logFormat ?? defaultLogFormat());
      const dataDir = resolve(o.dataDir);
      mkdirSync(dataDir, { recursive: true });
      const lock = PidLock.acquire(join(dataDir, 'cloud.lock'), `the cloud data dir ${dataDir}`);
      const cloud = new LocalCloud({
        dataDir,
        clock: systemClock,
        log,
        terminationGraceMs: o.terminationGrace,
        loadBalancerRange: o.loadBalancerRange,
        machines: { skiffBin: SKIFF_BIN, servers: o.server, caFile: resolve(o.caFile), token: o.token, runtime: o.runtime, agentArgs: o.agentFlag },
      });
      let port: number;
      try {
        port = await cloud.listen(o.listen.host, o.listen.port);
      } catch (e) {
        lock.release();
        throw new Error(listenErrorMessage(e, 'the cloud API', 'choose another with --listen HOST:PORT') ?? String(e));
      }
      const endpoint = `http://${o.listen.host}:${port}`;
      const forget = recordCloudEndpoint(dataDir, endpoint);
      process.once('exit', forget);
      log.info({ endpoint, dataDir }, 'cloud API listening');
      // Instances are machines of their own: stopping the cloud leaves them running.
      const stop = (): void => {
        void cloud.close().finally(() => {
          lock.release();
          process.exit(0);
        });
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
    });
}

function instancesCommand(): Command {
  return addAdminFlags(new Command('instances'))
    .description('list the cloud\'s instances beside the Node each one runs')
    .option('--cloud-endpoint <url>', CLOUD_FLAGS_HELP)
    .action(async (o: { cloudEndpoint?: string; kubeconfig?: string; dataDir?: string }) => {
      const target = findCloud(o);
      const instances = await callCloud(target, (c) => c.instances());
      const client = adminClient(o);
      try {
        const nodes = await client.get<KubeList<Node>>('/api/v1/nodes');
        const byProvider = new Map(nodes.items.map((n) => [n.spec?.providerID ?? '', n]));
        const rows = [['INSTANCE', 'GROUP', 'STATE', 'ZONE', 'NODE', 'NODE STATUS', 'FAULTS', 'AGE']];
        const now = Date.now();
        for (const i of instances) {
          const node = byProvider.get(i.providerID);
          const ready = node?.status?.conditions?.find((c) => c.type === 'Ready')?.status;
          rows.push([i.id, i.group, i.state, i.zone, node ? node.metadata.name! : '<none>', node ? (ready === 'True' ? 'Ready' : 'NotReady') : '-', i.faults.join(',') || '-', humanDuration(now - Date.parse(i.createdAt))]);
        }
        // Nodes a cloud group should run but no instance backs: what no machine should be left as.
        for (const n of nodes.items) {
          const pid = n.spec?.providerID;
          if (pid?.startsWith('skiff://') && !instances.some((i) => i.providerID === pid)) rows.push(['<none>', pid.split('/')[2] ?? '', '-', '-', n.metadata.name!, 'no instance', '-', '-']);
        }
        const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
        for (const r of rows) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join('   ').trimEnd());
      } finally {
        client.close();
      }
    });
}

function faultCommand(): Command {
  return new Command('fault')
    .description('make an instance suffer a fault: no-boot (restarts and never registers), lost (gone with its disk, no goodbye), shutdown (powered off, kept), classic (restarts as upstream\'s kubelet would run)')
    .argument('<instance>', 'the instance (skiff cloud instances lists them)')
    .addArgument(new Argument('<fault>', 'what happens to it').choices(INSTANCE_FAULTS))
    .option('--cloud-endpoint <url>', CLOUD_FLAGS_HELP)
    .option('--data-dir <dir>', 'the cluster data directory (skiff up --cloud local) or the cloud\'s own')
    .action(async (id: string, fault: InstanceFault, o: { cloudEndpoint?: string; dataDir?: string }) => {
      const target = findCloud(o);
      const inst = await callCloud(target, (c) => c.applyFault(id, fault));
      // A lost instance is no longer the cloud's to describe.
      console.log(`instance ${inst.id} (node ${inst.nodeName}): ${fault} applied; ${fault === 'lost' ? 'it is gone from the cloud' : `now ${inst.state}`}`);
    });
}

export function cloudCommand(): Command {
  return new Command('cloud')
    .description('a local cloud of `skiff agent` instances, for the cloud controllers and the autoscaler')
    .addCommand(serveCommand())
    .addCommand(instancesCommand())
    .addCommand(faultCommand());
}
