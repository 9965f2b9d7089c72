// `skiff haproxy-config`: prints an HAProxy configuration for the cluster's API servers, read from
// default/kubernetes Endpoints (or given with --member).
import { Command } from 'commander';
import type { KubeObject } from '../api/types.js';
import { renderHaproxyConfig } from '../server/haproxy.js';
import { addAdminFlags, adminClient } from './admin-client.js';
import { hostPortArg } from './options.js';

export function haproxyConfigCommand(): Command {
  return addAdminFlags(new Command('haproxy-config'))
    .description('print an HAProxy configuration that load-balances the API servers')
    .requiredOption('--control-plane-endpoint <host:port>', 'address HAProxy listens on', hostPortArg)
    .option('--member <host:port>', 'an API server (repeatable); default: read from default/kubernetes Endpoints', (v: string, prev: { host: string; port: number }[] = []) => [...prev, hostPortArg(v)])
    .action(async (o: { controlPlaneEndpoint: { host: string; port: number }; member?: { host: string; port: number }[]; kubeconfig?: string; dataDir?: string }) => {
      let members = o.member ?? [];
      if (members.length === 0) {
        const client = adminClient(o);
        try {
          const ep = await client.get<KubeObject>('/api/v1/namespaces/default/endpoints/kubernetes');
          const subsets = (ep.subsets ?? []) as { addresses?: { ip: string }[]; ports?: { port: number }[] }[];
          members = subsets.flatMap((s) => (s.addresses ?? []).flatMap((a) => (s.ports ?? []).map((p) => ({ host: a.ip, port: p.port }))));
        } catch (e) {
          // The kubeconfig's server may be the member that is down: the members can still be named.
          throw new Error(`${e instanceof Error ? e.message : String(e)}; to list the API servers without asking one, pass --member HOST:PORT for each`);
        } finally {
          client.close();
        }
      }
      if (members.length === 0) throw new Error('no API servers found; pass --member HOST:PORT');
      process.stdout.write(renderHaproxyConfig({ bindHost: o.controlPlaneEndpoint.host, bindPort: o.controlPlaneEndpoint.port, members }));
    });
}
