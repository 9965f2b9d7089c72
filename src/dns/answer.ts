// The answers of CoreDNS's `kubernetes` plugin, from a ClusterDnsIndex: names under the cluster
// domain are ours (answered authoritatively, NXDOMAIN and NODATA as CoreDNS tells them apart),
// reverse names of cluster addresses too, and anything else is for the node's resolvers. Pure: the
// server (./dns-server.ts) forwards, chases an ExternalName's target and fits answers to UDP.
//
// The names, under <zone> (cluster.local):
//   <svc>.<ns>.svc                 A/AAAA: a ClusterIP Service's cluster IPs, a headless one's ready endpoints;
//                                  CNAME: an ExternalName Service's external name
//   <host>.<svc>.<ns>.svc          an endpoint by hostname (a StatefulSet pod) or by dashed address
//   _<port>._<proto>.<svc>.<ns>.svc  SRV for a named port (or A/AAAA of the Service)
//   <a-b-c-d>.<ns>.pod             the address itself (CoreDNS `pods insecure`)
//   <ns>.svc, <ns>.pod, svc, pod, the zone itself: names that exist without records (NODATA)
import { isIP } from 'node:net';
import type { Answer, Question } from 'dns-packet';
import { endpointHostname, type ClusterDnsIndex } from './cluster-index.js';

export type Rcode = 'NOERROR' | 'NXDOMAIN' | 'SERVFAIL';

export interface DnsSettings {
  /** The cluster domain, without a trailing dot (cluster.local). */
  zone: string;
  /** Seconds every record is given (CoreDNS's kubernetes ttl, 5). */
  ttl: number;
  /** The address the cluster DNS is reached at (kube-dns's cluster IP): the zone's NS glue. */
  dnsIp?: string;
}

export type Resolution =
  | { kind: 'forward' }
  | {
      kind: 'answer';
      rcode: Rcode;
      answers: Answer[];
      authorities: Answer[];
      additionals: Answer[];
      /** An ExternalName's target, whose own records are to follow the CNAME (CoreDNS looks them up). */
      chase?: Question;
    };

/** One record CoreDNS's lookup finds (its msg.Service): an address or a name, a port, and the name an SRV points at. */
interface Found {
  host: string;
  port: number;
  target: string;
}

type Lookup = { error: 'nxdomain' } | { found: Found[] };

const NX: Lookup = { error: 'nxdomain' };
const NODATA: Lookup = { found: [] };
/** The version of the Kubernetes DNS schema, answered at dns-version.<zone> (TXT). */
const SCHEMA_VERSION = '1.1.0';

function lower(name: string): string {
  return name.replace(/\.$/, '').toLowerCase();
}

function under(name: string, zone: string): string | undefined {
  if (name === zone) return '';
  return name.endsWith(`.${zone}`) ? name.slice(0, -zone.length - 1) : undefined;
}

function strip(label: string): string {
  return label.startsWith('_') ? label.slice(1) : label;
}

function matches(want: string, have: string | undefined): boolean {
  return want === '' || want === (have ?? '').toLowerCase();
}

/** CoreDNS's findServices and findPods for the labels left of the zone. */
function lookup(base: string, index: ClusterDnsIndex, zone: string): Lookup {
  if (base === '' || base === 'svc' || base === 'pod') return NODATA;
  const segs = base.split('.');
  let last = segs.length - 1;
  const podOrSvc = segs[last]!;
  if (podOrSvc !== 'svc' && podOrSvc !== 'pod') return NX;
  const namespace = segs[--last] ?? '';
  const service = last > 0 ? segs[--last]! : '';
  let endpoint = '';
  let port = '';
  let protocol = '';
  last--;
  if (last === 0) endpoint = segs[0]!;
  else if (last === 1) {
    protocol = strip(segs[1]!);
    port = strip(segs[0]!);
  } else if (last > 1) return NX;
  if (!index.namespaceExists(namespace)) return NX;
  if (service === '') return NODATA;
  if (podOrSvc === 'pod') {
    const ip = service.split('-').length === 4 && !service.includes('--') ? service.replaceAll('-', '.') : service.replaceAll('-', ':');
    return isIP(ip) ? { found: [{ host: ip, port: 0, target: `${service}.${namespace}.pod.${zone}` }] } : NX;
  }
  const svc = index.service(namespace, service);
  if (!svc) return NX;
  const name = `${svc.name}.${svc.namespace}.svc.${zone}`;
  if (svc.externalName !== undefined) {
    // An endpoint of an ExternalName Service is nothing; an external name that is an address is no CNAME.
    if (endpoint !== '' || isIP(svc.externalName)) return NX;
    return { found: [{ host: svc.externalName.replace(/\.$/, ''), port: 0, target: name }] };
  }
  const found: Found[] = [];
  let any = false;
  if (svc.headless || endpoint !== '') {
    for (const e of index.endpointsOf(svc.namespace, svc.name)) {
      if (endpoint !== '' && e.hostname.toLowerCase() !== endpoint) continue;
      // An endpoint without ports still has an address (CoreDNS's port -1 sentinel): no SRV for it.
      const ports = e.ports.length > 0 ? e.ports : [{ name: '', protocol: undefined, port: -1 }];
      for (const p of ports) {
        if (!(matches(port, p.name) && matches(protocol, p.port === -1 ? '' : (p.protocol ?? 'TCP')))) continue;
        any = true;
        found.push({ host: e.ip, port: p.port ?? -1, target: `${endpointHostname(e.ip, e.hostname)}.${name}` });
      }
    }
    return any ? { found } : NX;
  }
  for (const p of svc.ports) {
    if (!(matches(port, p.name) && matches(protocol, p.protocol ?? 'TCP'))) continue;
    any = true;
    for (const ip of svc.clusterIPs) found.push({ host: ip, port: p.port, target: name });
  }
  return any ? { found } : NX;
}

/** The owner name of a PTR query as an address, or undefined. */
function reverseAddress(name: string): string | undefined {
  if (name.endsWith('.in-addr.arpa')) {
    const parts = name.slice(0, -'.in-addr.arpa'.length).split('.');
    if (parts.length !== 4) return undefined;
    const ip = parts.reverse().join('.');
    return isIP(ip) === 4 ? ip : undefined;
  }
  if (name.endsWith('.ip6.arpa')) {
    const nibbles = name.slice(0, -'.ip6.arpa'.length).split('.');
    if (nibbles.length !== 32 || nibbles.some((n) => !/^[0-9a-f]$/.test(n))) return undefined;
    const hex = nibbles.reverse().join('');
    return hex.match(/.{4}/g)!.join(':');
  }
  return undefined;
}

function sameAddress(a: string, b: string): boolean {
  if (a === b) return true;
  if (isIP(a) !== 6 || isIP(b) !== 6) return false;
  // Compare IPv6 by value: expand both to 8 groups.
  const expand = (x: string) => {
    const [head, tail] = x.split('::');
    const h = head ? head.split(':') : [];
    const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
    const mid = x.includes('::') ? Array(8 - h.length - t.length).fill('0') : [];
    return [...h, ...mid, ...t].map((g) => parseInt(g, 16)).join(':');
  };
  return expand(a) === expand(b);
}

/** The cluster names of an address: its Services' names for a cluster IP, its endpoints' names otherwise (CoreDNS's serviceRecordForIP). */
function namesOfAddress(ip: string, index: ClusterDnsIndex, zone: string): string[] {
  const out: string[] = [];
  for (const svc of index.allServices()) {
    if (svc.clusterIPs.some((c) => sameAddress(c, ip))) out.push(`${svc.name}.${svc.namespace}.svc.${zone}`);
  }
  if (out.length > 0) return out;
  for (const svc of index.allServices()) {
    for (const e of index.endpointsOf(svc.namespace, svc.name)) {
      if (sameAddress(e.ip, ip)) out.push(`${e.hostname}.${svc.name}.${svc.namespace}.svc.${zone}`);
    }
  }
  return [...new Set(out)];
}

function soa(s: DnsSettings, serial: number): Answer {
  return {
    type: 'SOA',
    name: s.zone,
    ttl: s.ttl,
    class: 'IN',
    data: { mname: `ns.dns.${s.zone}`, rname: `hostmaster.${s.zone}`, serial: serial >>> 0, refresh: 7200, retry: 1800, expire: 86400, minimum: s.ttl },
  };
}

function addressType(host: string): 'A' | 'AAAA' | 'CNAME' {
  const family = isIP(host);
  return family === 4 ? 'A' : family === 6 ? 'AAAA' : 'CNAME';
}

/** Answers one question; `forward` when it is not the cluster's to answer. */
export function resolve(q: Question, index: ClusterDnsIndex, s: DnsSettings): Resolution {
  const name = lower(q.name);
  const zone = lower(s.zone);
  if (q.class !== undefined && q.class !== 'IN') return { kind: 'forward' };
  if (q.type === 'PTR' && (name.endsWith('.in-addr.arpa') || name.endsWith('.ip6.arpa'))) {
    const ip = reverseAddress(name);
    const names = ip ? namesOfAddress(ip, index, zone) : [];
    // Addresses that are not the cluster's go on to the node's resolvers (CoreDNS's fallthrough).
    if (names.length === 0) return { kind: 'forward' };
    return { kind: 'answer', rcode: 'NOERROR', answers: names.map((n) => ({ type: 'PTR', name: q.name, ttl: s.ttl, class: 'IN', data: n })), authorities: [], additionals: [] };
  }
  const base = under(name, zone);
  if (base === undefined) return { kind: 'forward' };
  const empty = (rcode: Rcode): Resolution => ({ kind: 'answer', rcode, answers: [], authorities: [soa(s, index.serial)], additionals: [] });
  const reply = (answers: Answer[], additionals: Answer[] = [], chase?: Question): Resolution => {
    if (answers.length === 0) return empty('NOERROR');
    return { kind: 'answer', rcode: 'NOERROR', answers, authorities: [], additionals, ...(chase ? { chase } : {}) };
  };

  if (base === '') {
    if (q.type === 'SOA') return reply([soa(s, index.serial)]);
    if (q.type === 'NS') {
      const ns = `ns.dns.${s.zone}`;
      return reply([{ type: 'NS', name: q.name, ttl: s.ttl, class: 'IN', data: ns }], s.dnsIp ? [{ type: isIP(s.dnsIp) === 6 ? 'AAAA' : 'A', name: ns, ttl: s.ttl, class: 'IN', data: s.dnsIp }] : []);
    }
  }
  if (q.type === 'TXT' && base === 'dns-version') return reply([{ type: 'TXT', name: q.name, ttl: s.ttl, class: 'IN', data: SCHEMA_VERSION }]);

  const found = lookup(base, index, zone);
  if ('error' in found) return empty(index.hasSynced ? 'NXDOMAIN' : 'SERVFAIL');
  const records = found.found;
  switch (q.type) {
    case 'A':
    case 'AAAA': {
      const answers: Answer[] = [];
      const seen = new Set<string>();
      for (const r of records) {
        const t = addressType(r.host);
        if (t === 'CNAME') {
          // One CNAME, then the target's own records (CoreDNS follows it).
          return reply([{ type: 'CNAME', name: q.name, ttl: s.ttl, class: 'IN', data: r.host }], [], { name: r.host, type: q.type });
        }
        if (t !== q.type || seen.has(r.host)) continue;
        seen.add(r.host);
        answers.push({ type: q.type, name: q.name, ttl: s.ttl, class: 'IN', data: r.host });
      }
      return reply(answers);
    }
    case 'CNAME':
      return reply(records.filter((r) => addressType(r.host) === 'CNAME').map((r) => ({ type: 'CNAME', name: q.name, ttl: s.ttl, class: 'IN', data: r.host })));
    case 'SRV': {
      const usable = records.filter((r) => r.port >= 0);
      const keyOf = (r: Found) => `${addressType(r.host) === 'CNAME' ? r.host : r.target}:${r.port}`;
      const unique = usable.filter((r, i) => usable.findIndex((x) => keyOf(x) === keyOf(r)) === i);
      // Equal priority: the weights share 100 (CoreDNS's floor(100 / count)).
      const weight = unique.length > 0 ? Math.floor(100 / unique.length) : 0;
      const answers: Answer[] = [];
      const additionals: Answer[] = [];
      const glued = new Set<string>();
      for (const r of unique) {
        const t = addressType(r.host);
        const target = t === 'CNAME' ? r.host : r.target;
        answers.push({ type: 'SRV', name: q.name, ttl: s.ttl, class: 'IN', data: { priority: 0, weight, port: r.port, target } });
        if (t !== 'CNAME' && !glued.has(`${target}/${r.host}`)) {
          glued.add(`${target}/${r.host}`);
          additionals.push({ type: t === 'A' ? 'A' : 'AAAA', name: target, ttl: s.ttl, class: 'IN', data: r.host });
        }
      }
      return reply(answers, additionals);
    }
    default:
      // Any other type: the name exists (NODATA) or not (NXDOMAIN), as an A lookup says.
      return empty('NOERROR');
  }
}
