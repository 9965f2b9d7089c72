// The `kube-system/kube-dns` Service, made by the server on start as k3s's CoreDNS manifest makes
// it: labels `k8s-app: kube-dns`, ports dns/53 UDP and dns-tcp/53 TCP, and the tenth address of the
// service range, which every node's agent answers on its own (src/agent/cluster-dns.ts). No
// selector: no pod serves it, so the endpoints controllers leave it alone.
import { isStatusError } from '../api/errors.js';
import type { ServiceRange } from '../api/service-range.js';
import type { ApiClient } from '../client/rest.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { errorText } from '../util/error-text.js';

const PATH = '/api/v1/namespaces/kube-system/services';
export const KUBE_DNS_OFFSET = 10n;

/** The address kube-dns gets: the tenth of the range (10.43.0.10 for 10.43.0.0/16), if the range has one. */
export function kubeDnsIp(range: ServiceRange): string | undefined {
  return range.usable >= KUBE_DNS_OFFSET ? range.at(KUBE_DNS_OFFSET) : undefined;
}

export function kubeDnsService(ip: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'kube-dns', namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns', 'kubernetes.io/cluster-service': 'true', 'kubernetes.io/name': 'CoreDNS' } },
    spec: {
      type: 'ClusterIP',
      clusterIP: ip,
      ports: [
        { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
        { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
      ],
    },
  };
}

/** Creates kube-dns when it is missing; retries (the API may still be starting) until it exists or the signal ends. */
export async function ensureKubeDnsService(o: { client: ApiClient; range: ServiceRange; clock: Clock; log: Logger; signal: AbortSignal }): Promise<void> {
  const ip = kubeDnsIp(o.range);
  if (!ip) {
    o.log.warn({ range: o.range.cidr }, 'the service range has no tenth address: no kube-dns Service, pods get the host resolver');
    return;
  }
  let warned = false;
  while (!o.signal.aborted) {
    try {
      await o.client.get(`${PATH}/kube-dns`);
      return;
    } catch (e) {
      if (isStatusError(e, 'NotFound')) {
        try {
          await o.client.create(PATH, kubeDnsService(ip));
          o.log.info({ clusterIP: ip }, 'kube-system/kube-dns Service created');
          return;
        } catch (err) {
          if (isStatusError(err, 'AlreadyExists')) return;
          // Another Service holds the address (made before this server version): said once, tried again later.
          if (!warned) o.log.warn({ clusterIP: ip, err: errorText(err) }, 'could not create the kube-dns Service; retrying');
          warned = true;
        }
      } else if (!warned) {
        o.log.warn({ err: errorText(e) }, 'could not read the kube-dns Service; retrying');
        warned = true;
      }
    }
    await o.clock.sleep(2000, o.signal).catch(() => undefined);
  }
}
