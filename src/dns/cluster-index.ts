// What cluster DNS answers from: the Namespaces, Services and EndpointSlices of the cluster, kept
// by name for lookups in O(1). Fed by informers' events in the agent, and directly by unit tests
// and benchmarks (the same code either way). Only the fields DNS reads are kept.
import type { EndpointSlice, SlicePort } from '../api/kinds/endpointslice.js';
import type { Service, ServicePort } from '../api/kinds/service.js';

const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** A ready endpoint of a Service: its address, the hostname DNS names it by, and its slice's ports. */
export interface DnsEndpoint {
  ip: string;
  /** The endpoint's hostname (a pod with hostname and subdomain), else its address with dashes. */
  hostname: string;
  ports: SlicePort[];
}

export interface DnsService {
  namespace: string;
  name: string;
  /** 'None' for a headless Service. */
  clusterIPs: string[];
  headless: boolean;
  externalName?: string;
  ports: ServicePort[];
}

function key(namespace: string, name: string): string {
  return `${namespace}/${name}`.toLowerCase();
}

/** The name CoreDNS gives an endpoint: its hostname, else its address with dots (or colons) as dashes. */
export function endpointHostname(ip: string, hostname: string | undefined): string {
  if (hostname) return hostname;
  return ip.includes('.') ? ip.replaceAll('.', '-') : ip.replaceAll(':', '-');
}

export class ClusterDnsIndex {
  private readonly namespaces = new Set<string>();
  private readonly services = new Map<string, DnsService>();
  /** Service key → slice name → that slice's ready endpoints. */
  private readonly endpoints = new Map<string, Map<string, DnsEndpoint[]>>();
  /** Which Service each slice was filed under (a slice's label could change). */
  private readonly sliceOwner = new Map<string, string>();
  private synced = false;
  /** Bumped on every change: the SOA serial. */
  serial = 1;

  /** Whether the first full list arrived; until then a name not found is SERVFAIL, not NXDOMAIN (as CoreDNS says). */
  get hasSynced(): boolean {
    return this.synced;
  }

  markSynced(): void {
    this.synced = true;
  }

  // Each setter bumps the serial (which empties the servers' answer caches) only when what the
  // answers read changed: Services, slices and namespaces see many status and label writes.
  setNamespace(name: string, present: boolean): void {
    const n = name.toLowerCase();
    if (present === this.namespaces.has(n)) return;
    if (present) this.namespaces.add(n);
    else this.namespaces.delete(n);
    this.serial++;
  }

  namespaceExists(name: string): boolean {
    return this.namespaces.has(name.toLowerCase());
  }

  setService(svc: Service, present = true): void {
    const ns = svc.metadata.namespace ?? 'default';
    const name = svc.metadata.name ?? '';
    const k = key(ns, name);
    if (!present) {
      if (this.services.delete(k)) this.serial++;
      return;
    }
    const spec = svc.spec ?? {};
    const ips = spec.clusterIPs && spec.clusterIPs.length > 0 ? spec.clusterIPs : spec.clusterIP ? [spec.clusterIP] : [];
    const headless = spec.clusterIP === 'None';
    const entry: DnsService = {
      namespace: ns,
      name,
      clusterIPs: headless ? [] : ips.filter((ip) => ip !== 'None'),
      headless,
      ...(spec.type === 'ExternalName' && spec.externalName ? { externalName: spec.externalName } : {}),
      ports: spec.ports ?? [],
    };
    const before = this.services.get(k);
    if (before && JSON.stringify(before) === JSON.stringify(entry)) return;
    this.services.set(k, entry);
    this.serial++;
  }

  service(namespace: string, name: string): DnsService | undefined {
    return this.services.get(key(namespace, name));
  }

  allServices(): Iterable<DnsService> {
    return this.services.values();
  }

  setSlice(slice: EndpointSlice, present = true): void {
    const ns = slice.metadata.namespace ?? 'default';
    const sliceKey = key(ns, slice.metadata.name ?? '');
    const previous = this.sliceOwner.get(sliceKey);
    const svc = slice.metadata.labels?.[SERVICE_NAME_LABEL];
    const owner = present && svc && slice.addressType !== 'FQDN' ? key(ns, svc) : undefined;
    // CoreDNS lists an endpoint whose readiness is unknown, and leaves out one known not ready.
    const ready: DnsEndpoint[] = [];
    for (const e of owner ? (slice.endpoints ?? []) : []) {
      if (e.conditions?.ready === false) continue;
      for (const ip of e.addresses ?? []) ready.push({ ip, hostname: endpointHostname(ip, e.hostname), ports: slice.ports ?? [] });
    }
    if (previous === owner && (!owner || JSON.stringify(this.endpoints.get(owner)?.get(sliceKey)) === JSON.stringify(ready))) return;
    this.serial++;
    if (previous) {
      const m = this.endpoints.get(previous);
      m?.delete(sliceKey);
      if (m?.size === 0) this.endpoints.delete(previous);
      this.sliceOwner.delete(sliceKey);
    }
    if (!owner) return;
    let m = this.endpoints.get(owner);
    if (!m) this.endpoints.set(owner, (m = new Map()));
    m.set(sliceKey, ready);
    this.sliceOwner.set(sliceKey, owner);
  }

  /** A Service's ready endpoints, over all its slices. */
  endpointsOf(namespace: string, name: string): DnsEndpoint[] {
    const m = this.endpoints.get(key(namespace, name));
    if (!m) return [];
    return [...m.values()].flat();
  }
}
