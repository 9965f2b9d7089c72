// kube-proxy's iptables mode, as rules: each Service cluster IP and port jumps to a chain that picks
// one ready endpoint at random (equal odds, through `statistic --mode random`), which DNATs to the
// pod's address and target port. Every connection so redirected is marked and masqueraded (as
// kube-proxy's --masquerade-all): a pod that reaches a peer on its own bridge through the Service
// then gets the reply back through the node, where the translation is undone. Pure: the chain
// names carry a hash of the node's name, so several agents on one machine keep their own chains.
import { createHash } from 'node:crypto';
import type { EndpointSlice } from '../../api/kinds/endpointslice.js';
import type { Service } from '../../api/kinds/service.js';

/** The mark kube-proxy uses for connections to masquerade. */
export const MASQ_MARK = '0x4000/0x4000';
const PREFIX = 'SKIFF-';

export interface ProxyChains {
  /** Jumped to from nat PREROUTING and OUTPUT. */
  services: string;
  /** Jumped to from nat POSTROUTING. */
  postrouting: string;
  prefix: string;
}

function hash(text: string, n: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, n).toUpperCase();
}

export function proxyChains(nodeName: string): ProxyChains {
  const prefix = `${PREFIX}${hash(nodeName, 6)}-`;
  return { services: `${prefix}SERVICES`, postrouting: `${prefix}POSTRTG`, prefix };
}

interface Backend {
  ip: string;
  port: number;
}

/** The ready endpoints of a Service's port (by name), from its EndpointSlices. */
function backends(slices: EndpointSlice[], portName: string, protocol: string): Backend[] {
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
        out.push({ ip, port: p.port });
      }
    }
  }
  return out.sort((a, b) => (a.ip === b.ip ? a.port - b.port : a.ip < b.ip ? -1 : 1));
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

/** The input for `iptables-restore --noflush`: every chain of this node, in full, and the chains it no longer needs deleted. */
export function natRules(chains: ProxyChains, services: Service[], slicesOf: (svc: Service) => EndpointSlice[], stale: Iterable<string>, dns?: DnsRedirect): { text: string; chains: Set<string> } {
  const declared = new Set<string>([chains.services, chains.postrouting]);
  const rules: string[] = [`-A ${chains.postrouting} -m mark --mark ${MASQ_MARK} -j MASQUERADE`];
  // Before any Service: the cluster DNS address answers from this node's own server. REDIRECT
  // sends a pod's query to the address of the interface it came in on (its bridge's), the node's
  // own to loopback; the reply goes back from the cluster DNS address.
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
    for (const sp of svc.spec?.ports ?? []) {
      const protocol = sp.protocol ?? 'TCP';
      if (protocol === 'SCTP') continue;
      const proto = protocol.toLowerCase();
      const id = `${svc.metadata.namespace}/${svc.metadata.name}:${sp.name ?? ''}`;
      const ends = backends(slices, sp.name ?? '', protocol);
      // No ready endpoint: nothing to send it to (kube-proxy rejects; here it finds no listener).
      if (ends.length === 0) continue;
      const svcChain = `${chains.prefix}S${hash(`${id}/${protocol}`, 12)}`;
      declared.add(svcChain);
      rules.push(`-A ${chains.services} -d ${ip}/32 -p ${proto} -m ${proto} --dport ${sp.port} -m comment --comment "${id} cluster IP" -j ${svcChain}`);
      ends.forEach((b, i) => {
        const epChain = `${chains.prefix}E${hash(`${id}/${protocol}/${b.ip}:${b.port}`, 12)}`;
        declared.add(epChain);
        const left = ends.length - i;
        const pick = left > 1 ? `-m statistic --mode random --probability ${(1 / left).toFixed(10)} ` : '';
        rules.push(`-A ${svcChain} ${pick}-m comment --comment "${id} -> ${b.ip}:${b.port}" -j ${epChain}`);
        rules.push(`-A ${epChain} -j MARK --set-xmark ${MASQ_MARK}`);
        rules.push(`-A ${epChain} -p ${proto} -m ${proto} -j DNAT --to-destination ${b.ip}:${b.port}`);
      });
    }
  }
  // Chains of Services or endpoints that are gone: flushed with the others (a chain must be empty
  // and unreferenced to go), then deleted, all in one atomic restore.
  const gone = [...stale].filter((c) => !declared.has(c));
  const lines = ['*nat', ...[...declared, ...gone].map((c) => `:${c} - [0:0]`), ...rules, ...gone.map((c) => `-X ${c}`)];
  lines.push('COMMIT', '');
  return { text: lines.join('\n'), chains: declared };
}
