// kube-proxy's iptables mode, as rules. nat: each Service cluster IP and port jumps to a chain that
// picks one ready endpoint at random (equal odds, through `statistic --mode random`; with
// sessionAffinity ClientIP a client's earlier pick first, remembered by the `recent` module), which
// DNATs to the pod's address and target port. A NodePort is the same from any of the node's own
// addresses (the NODEPORTS chain, reached for destinations of type LOCAL). Every connection so
// redirected is marked and masqueraded (as kube-proxy's --masquerade-all), so that the reply comes
// back through this node where the translation is undone — except through a NodePort of a Service
// with `externalTrafficPolicy: Local`, which goes only to this node's own endpoints and keeps the
// client's address. filter: a port of a Service without a ready endpoint is rejected at once
// (icmp-port-unreachable, as kube-proxy, which a TCP client sees as "connection refused"); a
// Local NodePort on a node without a local endpoint drops. Pure: the chain names carry a hash of
// the node's name, so several agents on one machine keep their own chains.
import { createHash } from 'node:crypto';
import type { EndpointSlice } from '../../api/kinds/endpointslice.js';
import type { Service } from '../../api/kinds/service.js';

/** The mark kube-proxy uses for connections to masquerade. */
export const MASQ_MARK = '0x4000/0x4000';
const PREFIX = 'SKIFF-';
/** sessionAffinityConfig.clientIP.timeoutSeconds when unset (upstream's default: 3 hours). */
const DEFAULT_AFFINITY_SECONDS = 10800;

export interface ProxyChains {
  /** nat: jumped to from PREROUTING and OUTPUT. */
  services: string;
  /** nat: NodePorts, jumped to from `services` for the node's own addresses. */
  nodePorts: string;
  /** nat: jumped to from POSTROUTING. */
  postrouting: string;
  /** filter: jumped to from INPUT, FORWARD and OUTPUT for new connections (rejects and drops). */
  filter: string;
  prefix: string;
}

function hash(text: string, n: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, n).toUpperCase();
}

export function proxyChains(nodeName: string): ProxyChains {
  const prefix = `${PREFIX}${hash(nodeName, 6)}-`;
  return { services: `${prefix}SERVICES`, nodePorts: `${prefix}NODEPORTS`, postrouting: `${prefix}POSTRTG`, filter: `${prefix}FILTER`, prefix };
}

interface Backend {
  ip: string;
  port: number;
  /** On this node (the endpoint's nodeName). */
  local: boolean;
}

/** The ready endpoints of a Service's port (by name), from its EndpointSlices. */
function backends(slices: EndpointSlice[], portName: string, protocol: string, nodeName: string): Backend[] {
  const out: Backend[] = [];
  const seen = new Set<string>();
  for (const s of slices) {
    if (s.addressType !== undefined && s.addressType !== 'IPv4') continue;
    const p = (s.ports ?? []).find((x) => (x.name ?? '') === portName && (x.protocol ?? 'TCP') === protocol);
    if (!p?.port) continue;
    for (const e of s.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      for (const ip of e.addresses ?? []) {
        const key = `${ip}:${p.port}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push({ ip, port: p.port, local: e.nodeName === nodeName });
      }
    }
  }
  return out.sort((a, b) => (a.ip === b.ip ? a.port - b.port : a.ip < b.ip ? -1 : 1));
}

function hasNodePorts(svc: Service): boolean {
  return svc.spec?.type === 'NodePort' || svc.spec?.type === 'LoadBalancer';
}

/** The cluster DNS address (port 53) and the node's own DNS server's port it is sent to. */
export interface DnsRedirect {
  ips: string[];
  port: number;
  /**
   * This node's pod CIDRs: only its own pods' queries are sent to its server (nodes sharing a
   * machine each answer their own); the node's own processes' always are. Empty: every query.
   */
  podCidrs: string[];
}

/**
 * The input for `iptables-restore --noflush`: every chain of this node, in full (nat and filter),
 * and the nat chains it no longer needs deleted. `stale` is what the last run declared.
 */
export function serviceRules(
  chains: ProxyChains,
  nodeName: string,
  services: Service[],
  slicesOf: (svc: Service) => EndpointSlice[],
  stale: Iterable<string>,
  dns?: DnsRedirect,
): { text: string; chains: Set<string> } {
  const declared = new Set<string>([chains.services, chains.nodePorts, chains.postrouting]);
  const rules: string[] = [`-A ${chains.postrouting} -m mark --mark ${MASQ_MARK} -j MASQUERADE`];
  const nodePortRules: string[] = [];
  const filter: string[] = [];
  // Before any Service: the cluster DNS address answers from this node's own server. REDIRECT
  // sends a pod's query to the address of the interface it came in on (its bridge's), the node's
  // own to loopback; the reply goes back from the cluster DNS address. (nat comes before filter:
  // a redirected query never meets the kube-dns Service's reject.)
  const from = dns ? (dns.podCidrs.filter((c) => c.includes('.')).length > 0 ? [...dns.podCidrs.filter((c) => c.includes('.')).map((c) => `-s ${c} `), '-m addrtype --src-type LOCAL '] : ['']) : [];
  for (const ip of dns?.ips ?? []) {
    if (!ip.includes('.')) continue;
    for (const src of from) {
      for (const proto of ['udp', 'tcp']) rules.push(`-A ${chains.services} ${src}-d ${ip}/32 -p ${proto} -m ${proto} --dport 53 -m comment --comment "cluster DNS" -j REDIRECT --to-ports ${dns!.port}`);
    }
  }
  const sorted = [...services].sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
  for (const svc of sorted) {
    const ip = svc.spec?.clusterIP;
    if (!ip || ip === 'None' || svc.spec?.type === 'ExternalName') continue;
    const slices = slicesOf(svc);
    const affinity = svc.spec?.sessionAffinity === 'ClientIP' ? (svc.spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_AFFINITY_SECONDS) : undefined;
    const local = svc.spec?.externalTrafficPolicy === 'Local';
    for (const sp of svc.spec?.ports ?? []) {
      const protocol = sp.protocol ?? 'TCP';
      if (protocol === 'SCTP') continue;
      const proto = protocol.toLowerCase();
      const id = `${svc.metadata.namespace}/${svc.metadata.name}:${sp.name ?? ''}`;
      const ends = backends(slices, sp.name ?? '', protocol, nodeName);
      const nodePort = hasNodePorts(svc) && sp.nodePort ? sp.nodePort : undefined;
      const match = `-p ${proto} -m ${proto}`;
      if (ends.length === 0) {
        filter.push(`-A ${chains.filter} -d ${ip}/32 ${match} --dport ${sp.port} -m comment --comment "${id} has no endpoints" -j REJECT --reject-with icmp-port-unreachable`);
        if (nodePort) filter.push(`-A ${chains.filter} -m addrtype --dst-type LOCAL ${match} --dport ${nodePort} -m comment --comment "${id} has no endpoints" -j REJECT --reject-with icmp-port-unreachable`);
        continue;
      }
      const svcKey = `${id}/${protocol}`;
      const endpointChain = (b: Backend) => `${chains.prefix}E${hash(`${svcKey}/${b.ip}:${b.port}`, 12)}`;
      /** A chain that picks one of `list` (a client's earlier pick first, with affinity). */
      const picker = (name: string, list: Backend[], first: string[]) => {
        declared.add(name);
        rules.push(...first.map((r) => `-A ${name} ${r}`));
        if (affinity !== undefined) {
          for (const b of list) rules.push(`-A ${name} -m recent --name ${endpointChain(b)} --mask 255.255.255.255 --rsource --rcheck --seconds ${affinity} --reap -j ${endpointChain(b)}`);
        }
        list.forEach((b, i) => {
          const left = list.length - i;
          const pick = left > 1 ? `-m statistic --mode random --probability ${(1 / left).toFixed(10)} ` : '';
          rules.push(`-A ${name} ${pick}-m comment --comment "${id} -> ${b.ip}:${b.port}" -j ${endpointChain(b)}`);
        });
      };
      const svcChain = `${chains.prefix}S${hash(svcKey, 12)}`;
      picker(svcChain, ends, [`-j MARK --set-xmark ${MASQ_MARK}`]);
      rules.push(`-A ${chains.services} -d ${ip}/32 ${match} --dport ${sp.port} -m comment --comment "${id} cluster IP" -j ${svcChain}`);
      for (const b of ends) {
        const epChain = endpointChain(b);
        declared.add(epChain);
        if (affinity !== undefined) rules.push(`-A ${epChain} -m recent --name ${epChain} --mask 255.255.255.255 --rsource --set`);
        rules.push(`-A ${epChain} ${match} -j DNAT --to-destination ${b.ip}:${b.port}`);
      }
      if (!nodePort) continue;
      if (!local) {
        nodePortRules.push(`-A ${chains.nodePorts} ${match} --dport ${nodePort} -m comment --comment "${id} node port" -j ${svcChain}`);
        continue;
      }
      const mine = ends.filter((b) => b.local);
      if (mine.length === 0) {
        filter.push(`-A ${chains.filter} -m addrtype --dst-type LOCAL ${match} --dport ${nodePort} -m comment --comment "${id} has no local endpoints" -j DROP`);
        continue;
      }
      const localChain = `${chains.prefix}L${hash(svcKey, 12)}`;
      picker(localChain, mine, []);
      nodePortRules.push(`-A ${chains.nodePorts} ${match} --dport ${nodePort} -m comment --comment "${id} node port, local endpoints" -j ${localChain}`);
    }
  }
  // Last, so that a cluster IP never falls through to it: any other address of this node.
  rules.push(...nodePortRules, `-A ${chains.services} -m addrtype --dst-type LOCAL -m comment --comment "node ports" -j ${chains.nodePorts}`);
  // Chains of Services or endpoints that are gone: flushed with the others (a chain must be empty
  // and unreferenced to go), then deleted, all in one atomic restore.
  const gone = [...stale].filter((c) => !declared.has(c));
  const lines = ['*nat', ...[...declared, ...gone].map((c) => `:${c} - [0:0]`), ...rules, ...gone.map((c) => `-X ${c}`), 'COMMIT'];
  lines.push('*filter', `:${chains.filter} - [0:0]`, ...filter, 'COMMIT', '');
  return { text: lines.join('\n'), chains: declared };
}
