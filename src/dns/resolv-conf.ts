// What a pod's /etc/resolv.conf says, as the kubelet decides it from the pod's dnsPolicy and
// dnsConfig, the node's cluster DNS address and domain, and the host's own resolv.conf. The
// runtime writes it (containerd: the CRI sandbox's DNSConfig). Pure functions.
import type { Pod } from '../api/kinds/pod.js';

/** A resolv.conf read into its parts. */
export interface ResolvConf {
  nameservers: string[];
  searches: string[];
  options: string[];
}

/** What a pod's resolv.conf holds: the CRI DNSConfig. */
export interface PodDnsConfig {
  servers: string[];
  searches: string[];
  options: string[];
}

/** The node's side: the kubelet's --cluster-dns, --cluster-domain and the host resolv.conf it read (--resolv-conf). */
export interface NodeDnsSettings {
  clusterDns: string[];
  clusterDomain: string;
  host: ResolvConf;
}

/** The kubelet's limits (validation's MaxDNSNameservers, MaxDNSSearchPaths, MaxDNSSearchListChars). */
const MAX_NAMESERVERS = 3;
const MAX_SEARCHES = 32;
const MAX_SEARCH_CHARS = 2048;
/** The options a ClusterFirst pod gets (the kubelet's defaultDNSOptions). */
const CLUSTER_OPTIONS = ['ndots:5'];

/** Reads resolv.conf text: `nameserver` lines, the last `search` (or `domain`) line, `options` lines. */
export function parseResolvConf(text: string): ResolvConf {
  const out: ResolvConf = { nameservers: [], searches: [], options: [] };
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    if (!line) continue;
    const [key, ...fields] = line.split(/\s+/);
    if (key === 'nameserver' && fields[0]) out.nameservers.push(fields[0]);
    // As the resolver reads it, the last search or domain line wins; the kubelet drops a bare "." too.
    else if (key === 'search' || key === 'domain') out.searches = fields.map((s) => s.replace(/\.$/, '')).filter((s) => s !== '');
    else if (key === 'options') out.options.push(...fields);
  }
  return out;
}

/** resolv.conf text for a DNS config (what the runtime writes into the sandbox). */
export function formatResolvConf(c: PodDnsConfig): string {
  const lines = c.servers.map((s) => `nameserver ${s}`);
  if (c.searches.length > 0) lines.push(`search ${c.searches.join(' ')}`);
  if (c.options.length > 0) lines.push(`options ${c.options.join(' ')}`);
  return `${lines.join('\n')}\n`;
}

type DnsType = 'cluster' | 'host' | 'none';

/** The kubelet's getPodDNSType: which resolv.conf a pod starts from. */
function dnsType(pod: Pod, clusterDns: string[]): DnsType {
  const policy = pod.spec?.dnsPolicy ?? 'ClusterFirst';
  const hostNetwork = pod.spec?.hostNetwork === true;
  let type: DnsType;
  if (policy === 'None') type = 'none';
  else if (policy === 'ClusterFirstWithHostNet') type = 'cluster';
  else if (policy === 'ClusterFirst' && !hostNetwork) type = 'cluster';
  else type = 'host';
  // Without a cluster DNS address the kubelet falls back to the host's resolver.
  return type === 'cluster' && clusterDns.length === 0 ? 'host' : type;
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}

/** Options merged by name, the later one winning (the kubelet's mergeDNSOptions). */
function mergeOptions(base: string[], extra: { name?: string; value?: string }[]): string[] {
  const byName = new Map<string, string>();
  for (const o of base) byName.set(o.split(':')[0]!, o);
  for (const o of extra) {
    if (!o.name) continue;
    byName.set(o.name, o.value !== undefined && o.value !== null ? `${o.name}:${o.value}` : o.name);
  }
  return [...byName.values()];
}

/** Search paths within the resolver's limits, as the kubelet trims them. */
function fitSearches(searches: string[]): string[] {
  const out: string[] = [];
  let chars = 0;
  for (const s of searches.slice(0, MAX_SEARCHES)) {
    if (chars + s.length + (out.length > 0 ? 1 : 0) > MAX_SEARCH_CHARS) break;
    chars += s.length + (out.length > 0 ? 1 : 0);
    out.push(s);
  }
  return out;
}

/** The pod's resolv.conf: the kubelet's GetPodDNS. */
export function podDnsConfig(pod: Pod, node: NodeDnsSettings): PodDnsConfig {
  const type = dnsType(pod, node.clusterDns);
  let c: PodDnsConfig;
  if (type === 'cluster') {
    const ns = pod.metadata.namespace ?? 'default';
    const d = node.clusterDomain;
    const own = d ? [`${ns}.svc.${d}`, `svc.${d}`, d] : [];
    c = { servers: [...node.clusterDns], searches: unique([...own, ...node.host.searches]), options: [...CLUSTER_OPTIONS] };
  } else if (type === 'host') {
    c = { servers: [...node.host.nameservers], searches: [...node.host.searches], options: [...node.host.options] };
  } else {
    c = { servers: [], searches: [], options: [] };
  }
  const extra = pod.spec?.dnsConfig;
  if (extra) {
    c.servers = unique([...c.servers, ...(extra.nameservers ?? [])]);
    c.searches = unique([...c.searches, ...(extra.searches ?? [])]);
    c.options = mergeOptions(c.options, extra.options ?? []);
  }
  c.servers = c.servers.slice(0, MAX_NAMESERVERS);
  c.searches = fitSearches(c.searches);
  return c;
}
