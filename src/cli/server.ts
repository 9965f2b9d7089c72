// `skiff server`: API server (and, later, controllers and scheduler) in one process.
import { Command } from 'commander';
import { createLogger } from '../util/log.js';
import { runServer } from '../server/run-server.js';
import { addConfigFile, durationArg, hostPortArg, intArg, listArg } from './options.js';

export function serverCommand(): Command {
  const cmd = new Command('server')
    .description('run an API server on an embedded SQLite store (or etcd)')
    .option('--data-dir <dir>', 'where the database, certificates and kubeconfig live', '.skiff')
    .option('--listen <host:port>', 'address to serve HTTPS on', hostPortArg, { host: '127.0.0.1', port: 6443 })
    .option('--advertise-address <ip>', 'address clients and agents reach this server at')
    .option('--storage <kind>', 'sqlite or etcd', 'sqlite')
    .option('--etcd-endpoints <urls>', 'etcd client URLs, comma-separated', listArg, [])
    .option('--control-plane-endpoint <host:port>', 'shared endpoint (load balancer) put into certificates and kubeconfigs')
    .option('--token <token>', 'a bootstrap token (abcdef.0123456789abcdef) agents may join with')
    .option('--compact-interval <duration>', 'how often old store history is compacted', durationArg, 300_000)
    .option('--compact-min-retain <revisions>', 'revisions of history always kept', intArg, 1000)
    .option('--default-not-ready-toleration-seconds <n>', 'toleration added to pods for the not-ready taint', intArg, 300)
    .option('--default-unreachable-toleration-seconds <n>', 'toleration added to pods for the unreachable taint', intArg, 300)
    .option('--watch-cache-size <events>', 'events each resource keeps for resuming watches', intArg, 10_000)
    .option('--min-request-timeout <seconds>', 'watches without timeoutSeconds last between this and twice this', intArg, 1800);
  addConfigFile(cmd);
  cmd.action(async (o: Record<string, unknown>) => {
    const log = createLogger('skiff-server');
    const listen = o.listen as { host: string; port: number };
    const running = await runServer(
      {
        dataDir: o.dataDir as string,
        listenHost: listen.host,
        port: listen.port,
        ...(o.advertiseAddress ? { advertiseAddress: o.advertiseAddress as string } : {}),
        ...(o.controlPlaneEndpoint ? { controlPlaneEndpoint: o.controlPlaneEndpoint as string } : {}),
        storage: o.storage === 'etcd' ? 'etcd' : 'sqlite',
        etcdEndpoints: o.etcdEndpoints as string[],
        compactIntervalMs: o.compactInterval as number,
        compactMinRetain: o.compactMinRetain as number,
        defaultNotReadyTolerationSeconds: o.defaultNotReadyTolerationSeconds as number,
        defaultUnreachableTolerationSeconds: o.defaultUnreachableTolerationSeconds as number,
        watchCacheSize: o.watchCacheSize as number,
        minRequestTimeoutSeconds: o.minRequestTimeoutSeconds as number,
        ...(o.token ? { token: o.token as string } : {}),
      },
      log,
    );
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'shutting down');
      void running.stop().then(
        () => process.exit(0),
        (e: unknown) => {
          log.error({ err: String(e) }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });
  return cmd;
}
