// `skiff dashboard`: the cluster at a glance in a browser, acting as the kubeconfig's user.
import { Command } from 'commander';
import { Dashboard } from '../dashboard/server.js';
import { systemClock } from '../util/clock.js';
import { createLogger, defaultLogFormat, type LogFormat } from '../util/log.js';
import { userAgent } from '../version.js';
import { ApiClient } from '../client/rest.js';
import { addAdminFlags, adminKubeconfig } from './admin-client.js';
import { hostPortArg, listenErrorMessage, logFormatOption } from './options.js';

export const DEFAULT_DASHBOARD_LISTEN = { host: '127.0.0.1', port: 8001 };

export function dashboardCommand(): Command {
  return addAdminFlags(new Command('dashboard'))
    .description("serve a live web view of the cluster (nodes, timeline, control plane, workloads) that acts with the kubeconfig's credentials")
    .option('--listen <host:port>', 'where to serve it (port 0: any free port)', hostPortArg, DEFAULT_DASHBOARD_LISTEN)
    .addOption(logFormatOption())
    .action(async (o: { kubeconfig?: string; dataDir?: string; listen: { host: string; port: number }; logFormat?: LogFormat }) => {
      const log = createLogger('skiff-dashboard', o.logFormat ?? defaultLogFormat());
      const client = ApiClient.fromKubeconfig(adminKubeconfig(o), { timeoutMs: 15_000, userAgent: userAgent('skiff-dashboard') });
      const dashboard = new Dashboard({ client, clock: systemClock, log, host: o.listen.host, port: o.listen.port });
      let url: string;
      try {
        url = await dashboard.start();
      } catch (e) {
        const why = listenErrorMessage(e, 'the dashboard', 'choose another with --listen HOST:PORT');
        if (why) throw new Error(why);
        throw e;
      }
      console.log(`dashboard: ${url}`);
      const stop = () => void dashboard.stop().then(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
