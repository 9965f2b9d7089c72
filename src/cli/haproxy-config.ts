// `skiff haproxy-config`: prints an HAProxy configuration for the cluster's API servers, read from
// the cluster (or given with --member).
import { errorText } from '../util/error-text.js';
import { Command } from 'commander';
import type { KubeList, KubeObject } from '../api/types.js';
import { renderHaproxyConfig } from '../server/haproxy.js';
import { addAdminFlags, adminClient } from './admin-client.js';
import { hostPortArg } from './options.js';
import type { ApiClient } from '../client/rest.js';
import { APISERVER_LEASE_LABEL, APISERVER_LEASES_PATH, leaseMember, type Member } from '../server/endpoint-reconciler.js';
import { KUBERNETES_ENDPOINTS_PATH, serversFromEndpoints } from '../client/endpoint-discovery.js';

/**
 * Every member: those in default/kubernetes (alive now), and those whose endpoint Lease is still
 * there though expired — a member that crashed or is stopped for maintenance must stay in the
 * load balancer's list, or it gets no traffic when it is back. (A member that exits gracefully
 * removes its Lease: it has left.)
 */
async function knownMembers(client: ApiClient): Promise<Member[]> {
  const out = new Map<string, Member>();
  const ep = await client.get<KubeObject>(KUBERNETES_ENDPOINTS_PATH);
  for (const url of serversFromEndpoints(ep)) {
    const u = new URL(url);
    out.set(u.host, { host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) });
  }
  const leases = await client.get<KubeList>(APISERVER_LEASES_PATH, { query: { labelSelector: `${APISERVER_LEASE_LABEL}=true` } });
  for (const m of leases.items.map(leaseMember)) if (m) out.set(`${m.host.includes(':') ? `[${m.host}]` : m.host}:${m.port}`, m);
  return [...out.values()].sort((a, b) => `${a.host}:${a.port}`.localeCompare(`${b.host}:${b.port}`, 'en', { numeric: true }));
}

export function haproxyConfigCommand(): Command {
  return addAdminFlags(new Command('haproxy-config'))
    .description('print an HAProxy configuration that load-balances the API servers')
    .requiredOption('--control-plane-endpoint <host:port>', 'address HAProxy listens on', hostPortArg)
    .option('--member <host:port>', 'an API server (repeatable); default: read from default/kubernetes Endpoints', (v: string, prev: { host: string; port: number }[] = []) => [...prev, hostPortArg(v)])
    .action(async (o: { controlPlaneEndpoint: { host: string; port: number }; member?: { host: string; port: number }[]; kubeconfig?: string; dataDir?: string }) => {
      let members = o.member ?? [];
      if (members.length === 0) {
        // Through the kubeconfig's server, or any other member it lists: this works while one is down.
        const client = adminClient(o);
        try {
          members = await knownMembers(client);
        } catch (e) {
          throw new Error(`${errorText(e)}; to list the API servers without asking one, pass --member HOST:PORT for each`);
        } finally {
          client.close();
        }
      }
      if (members.length === 0) throw new Error('no API servers found; pass --member HOST:PORT');
      process.stdout.write(renderHaproxyConfig({ bindHost: o.controlPlaneEndpoint.host, bindPort: o.controlPlaneEndpoint.port, members }));
    });
}
