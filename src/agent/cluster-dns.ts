// Cluster DNS on each node (the agent's, as NodeLocal DNSCache puts a resolver on every node): a
// DNS server answering from this agent's own watch of Namespaces, Services and EndpointSlices, on
// an ephemeral port of the node, which the node's service rules send the cluster DNS address (port
// 53, UDP and TCP) to. No pod to schedule, nothing to reach across nodes: a pod's lookups stay on
// its node and keep working while the API is away (answers from the last view).
import { readFileSync } from 'node:fs';
import type { EndpointSlice } from '../api/kinds/endpointslice.js';
import type { Namespace } from '../api/kinds/namespace.js';
import type { Service } from '../api/kinds/service.js';
import type { Informer } from '../client/informer.js';
import { ClusterDnsIndex } from '../dns/cluster-index.js';
import { ClusterDnsServer } from '../dns/dns-server.js';
import { upstreamOf, type Upstream } from '../dns/forwarder.js';
import { parseResolvConf, type NodeDnsSettings, type ResolvConf } from '../dns/resolv-conf.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import type { DnsRedirect } from './service-proxy/iptables-rules.js';
import { errorText } from '../util/error-text.js';

/** Where kube-dns lives, as upstream's addon and k3s's CoreDNS manifest put it. */
export const KUBE_DNS_NAMESPACE = 'kube-system';
export const KUBE_DNS_NAME = 'kube-dns';
export const DEFAULT_CLUSTER_DOMAIN = 'cluster.local';
/** CoreDNS's kubernetes plugin TTL. */
const TTL_SECONDS = 5;

export interface ClusterDnsOptions {
  clock: Clock;
  log: Logger;
  services: Informer<Service>;
  slices: Informer<EndpointSlice>;
  namespaces: Informer<Namespace>;
  /** --cluster-dns: the addresses pods are told to ask; default the kube-dns Service's cluster IP. */
  clusterDns: string[];
  clusterDomain: string;
  /** kube-dns's address as read before the watch had it. */
  fallbackClusterDns(): string[];
  /** --resolv-conf: the host's resolver settings: where other names go, and what Default pods get. */
  resolvConf: string;
  /** This node's pod CIDRs (spec.podCIDRs), once the control plane gave them. */
  podCidrs(): string[];
  /** Whether an address is one of this node's pods (loopback always may ask). */
  isPodAddress(ip: string): boolean;
  /** --cluster-dns-port: 0 for any free port. */
  port?: number;
}

/** Reads the host's resolv.conf; a missing one is no resolver (the kubelet, too, goes on without). */
export function readHostResolvConf(path: string, log: Logger): ResolvConf {
  try {
    return parseResolvConf(readFileSync(path, 'utf8'));
  } catch (e) {
    log.warn({ path, err: errorText(e) }, 'cannot read the resolv.conf: pods with dnsPolicy Default get no nameserver, and names outside the cluster are not forwarded');
    return { nameservers: [], searches: [], options: [] };
  }
}

export class ClusterDns {
  readonly index = new ClusterDnsIndex();
  private readonly host: ResolvConf;
  private server?: ClusterDnsServer;
  private port?: number;

  constructor(private readonly o: ClusterDnsOptions) {
    this.host = readHostResolvConf(o.resolvConf, o.log);
    o.services.addHandlers({ add: (s) => this.index.setService(s), update: (_o, s) => this.index.setService(s), delete: (s) => this.index.setService(s, false) });
    o.slices.addHandlers({ add: (s) => this.index.setSlice(s), update: (_o, s) => this.index.setSlice(s), delete: (s) => this.index.setSlice(s, false) });
    const ns = (n: Namespace, present: boolean) => this.index.setNamespace(n.metadata.name ?? '', present);
    o.namespaces.addHandlers({ add: (n) => ns(n, true), update: (_o, n) => ns(n, true), delete: (n) => ns(n, false) });
    void Promise.all([o.services.waitForSync(), o.slices.waitForSync(), o.namespaces.waitForSync()]).then(() => this.index.markSynced());
  }

  /** The addresses pods ask: --cluster-dns, else kube-dns's cluster IP once it is known. */
  clusterDnsAddresses(): string[] {
    if (this.o.clusterDns.length > 0) return this.o.clusterDns;
    return this.index.service(KUBE_DNS_NAMESPACE, KUBE_DNS_NAME)?.clusterIPs.slice(0, 1) ?? this.o.fallbackClusterDns();
  }

  /** What the runtime needs for a pod's resolv.conf. */
  podSettings(): NodeDnsSettings {
    return { clusterDns: this.clusterDnsAddresses(), clusterDomain: this.o.clusterDomain, host: this.host };
  }

  /** Where the node's rules send the cluster DNS address to: this server's port, once listening. */
  redirect(): DnsRedirect | undefined {
    const ips = this.clusterDnsAddresses();
    return this.port !== undefined && ips.length > 0 ? { ips, port: this.port, podCidrs: this.o.podCidrs() } : undefined;
  }

  private upstreams(): Upstream[] {
    const own = new Set(this.clusterDnsAddresses());
    return this.host.nameservers.filter((s) => !own.has(s)).map(upstreamOf).filter((u): u is Upstream => u !== undefined);
  }

  async start(): Promise<number> {
    this.server = new ClusterDnsServer({
      index: this.index,
      settings: () => ({ zone: this.o.clusterDomain, ttl: TTL_SECONDS, ...(this.clusterDnsAddresses()[0] ? { dnsIp: this.clusterDnsAddresses()[0] } : {}) }),
      upstreams: () => this.upstreams(),
      clock: this.o.clock,
      log: this.o.log,
      allowed: (ip) => this.o.isPodAddress(ip.replace(/^::ffff:/, '')),
    });
    // Every address of the node: a pod's query arrives on its bridge's address, the node's own on loopback.
    try {
      this.port = await this.server.listen({ host: '0.0.0.0', port: this.o.port ?? 0 });
    } catch (e) {
      throw new Error(`cluster DNS cannot listen on port ${this.o.port ?? 0} (--cluster-dns-port): ${errorText(e)}`);
    }
    this.o.log.info({ port: this.port, domain: this.o.clusterDomain, upstreams: this.upstreams().map((u) => `${u.host}:${u.port}`) }, 'cluster DNS listening');
    return this.port;
  }

  async stop(): Promise<void> {
    await this.server?.close();
  }
}
